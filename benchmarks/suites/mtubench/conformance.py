"""What MTU-Bench promises, on its own cases (benchmarks/kit/conformance.py).

Metric cases: per setting, hand-made turns answered with the gold calls or not at all.
Analysis examples: each split of the seed data, answered turn by turn by six rules."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from benchmarks.kit.conformance import (
    AnalysisExample,
    Conformance,
    Files,
    MetricCase,
    answered,
    context_for,
    item_of,
    parsed,
)
from benchmarks.kit.protocol import Context, Item
from benchmarks.kit.registry import get_suite
from benchmarks.suites import mtubench

# --- metric cases -------------------------------------------------------------------------------

SINGLE_RULES = "Action: The name of the API to be called.\nThe following is a list of APIs\n"
MULTI_RULES = "Action: The name of the APIs.\nThe following is a list of APIs\n"


def mtu_item(split: str, external_id: str, rules: str, calls: dict[str, dict[str, Any]]) -> Item:
    return Item(
        split=split,
        external_id=external_id,
        input={"prompt": rules + "User: what is the weather?"},
        reference={"calls": [{"name": n, "arguments": a} for n, a in calls.items()]},
    )


def mtu_text(calls: dict[str, dict[str, Any]]) -> str:
    return "\n".join(
        f"Action: {name}\nAction Input: {json.dumps(args)}" for name, args in calls.items()
    )


def metric_cases(task: str, files: Files) -> Iterator[MetricCase]:
    suite = get_suite("mtubench").evaluator
    ctx = Context(task=suite.task(task))
    single = {"get_weather": {"city": "ghent"}}
    multi = {"get_weather": {"city": "ghent"}, "set_alarm": {"time": "7"}}
    kinds = {
        "S-S": [(SINGLE_RULES, single)],
        "S-M": [(MULTI_RULES, multi)],
        "M-S": [(SINGLE_RULES, single)],
        "M-M": [(MULTI_RULES, multi)],
        "OOD": [(SINGLE_RULES, single), (MULTI_RULES, multi)],
    }[task]
    triples = []
    for k, (rules, calls) in enumerate(kinds):
        for turn in range(2):
            item = mtu_item(task, f"{task}_{k}_{turn}", rules, calls)
            triples.append(parsed(suite, ctx, item, mtu_text(calls) if turn == 0 else None))
    yield MetricCase(triples)


# --- analysis examples --------------------------------------------------------------------------


def call(name: str, arguments: dict[str, Any]) -> str:
    return f"Action: {name}\nAction Input: {json.dumps(arguments)}\n"


def output(index: int, item: Item) -> str | None:
    """Rule index % 6: the gold, other tools, the gold tools with wrong arguments, an Action
    without its input, words only, no answer."""
    calls = [(c["name"], c["arguments"]) for c in item.reference["calls"]]
    if mtubench.setting_of(item) in ("S-S", "M-S"):
        calls = calls[:1]
    rule = index % 6
    if rule == 5:
        return None
    if rule == 4 or not calls:
        return "Thought: no tool is needed.\nHere you are." if rule != 1 else call("Other", {})
    if rule == 0:
        chosen = calls
    elif rule == 1:
        chosen = [(f"Other{k}", args) for k, (_, args) in enumerate(calls)]
    elif rule == 2:
        chosen = [(name, {"wrong": "value"}) for name, _ in calls]
    else:
        return f"Thought: I call it.\nAction: {calls[0][0]}\n"
    return "Thought: calls.\n" + "".join(call(name, args) for name, args in chosen)


def example(task: str) -> Callable[[Files], AnalysisExample]:
    def build(files: Files) -> AnalysisExample:
        bundle = mtubench.import_files([files.seeddata / "mtubench" / f"{task}_eval.jsonl"])
        evaluator = mtubench.SUITE.evaluator
        ctx = context_for(evaluator, task)
        items = [item_of(record) for record in bundle.samples if record.split == task]
        records = [answered(evaluator, ctx, item, output(i, item)) for i, item in enumerate(items)]
        return AnalysisExample(evaluator, ctx, records)

    return build


EXAMPLES = {task: example(task) for task in mtubench.TASKS}


def round_trip(files: Files) -> list[Path]:
    return [files.seeddata / "mtubench"]


CONFORMANCE = Conformance(
    metric_cases=metric_cases, analysis_examples=EXAMPLES, round_trip=round_trip
)
