"""A toy benchmark that exists only in the test tree: "is N even?", one JSON object per line
({"id", "n"}), one task (parity) scored by accuracy. It is one folder and, once a test puts it
in the registry (SUITE_MODULES), a suite like any other: nothing outside this folder knows it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.kit.base import (
    ImportBundle,
    ImportFormatError,
    Progress,
    SampleRecord,
    iter_jsonl,
)
from benchmarks.kit.protocol import (
    Context,
    Item,
    MetricSpec,
    Outcome,
    Prompt,
    Scored,
    Scores,
    Task,
    TaskSpec,
    mean,
    metric_specs,
)
from benchmarks.kit.registry import Suite

name = "toy"
default_benchmark = "Toy parity"

TASKS: dict[str, TaskSpec] = {
    "parity": TaskSpec(
        name="parity",
        title="Is N even?",
        splits=("test",),
        metrics=("accuracy", "n"),
        percent=frozenset({"accuracy"}),
        item_metrics=metric_specs(MetricSpec.score("accuracy")),
        run_metrics=metric_specs(
            MetricSpec.score("accuracy", description="% of right answers"),
            MetricSpec.count("n", description="items"),
        ),
    )
}


def import_files(paths: Sequence[Path], progress: Progress | None = None) -> ImportBundle:
    bundle = ImportBundle()
    for path in paths:
        for line, record in iter_jsonl(path):
            if not isinstance(record, dict) or not isinstance(record.get("n"), int):
                raise ImportFormatError("expected {id, n}", file=path, line=line)
            bundle.samples.append(
                SampleRecord(
                    split="test",
                    external_id=str(record["id"]),
                    input={"query": f"Is {record['n']} even?"},
                    reference={"even": record["n"] % 2 == 0},
                    source=f"{path}, line {line}",
                )
            )
    return bundle


def build_prompt(item: Item, ctx: Context, context: dict[str, Any]) -> Prompt:
    return Prompt(messages=[{"role": "user", "content": f"{item.input['query']} yes or no."}])


def parse(text: str, item: Item, ctx: Context, context: dict[str, Any]) -> Outcome:
    found = re.search(r"\b(yes|no)\b", text.lower())
    if found is None:
        return Outcome(output=text, parsed=False, note="neither yes nor no")
    return Outcome(output=text, answer=found.group(1) == "yes")


def score(outcome: Outcome | None, item: Item, ctx: Context, context: dict[str, Any]) -> Scores:
    right = outcome is not None and outcome.parsed and outcome.answer == item.reference["even"]
    return {"accuracy": 100.0 if right else 0.0}


def aggregate(scored: Sequence[Scored], ctx: Context) -> Scores:
    return {"accuracy": mean([s.scores.get("accuracy") for s in scored]), "n": float(len(scored))}


SUITE = Suite(
    name=name,
    default_benchmark=default_benchmark,
    import_files=import_files,
    evaluation=tuple(
        Task(spec, prompt=build_prompt, parse=parse, score=score, aggregate=aggregate)
        for spec in TASKS.values()
    ),
    conformance=f"{__name__}.conformance",
)
