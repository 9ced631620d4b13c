"""What a suite promises beyond its protocol, shown on cases it brings: one conformance test
(tests/benchmarks/test_conformance.py) walks the registry and holds every suite to it.

A suite names the module of its promises (`Suite.conformance`, a dotted path: its cases read
data files and run the suite end to end, so they are loaded by the tests alone), which exposes
`CONFORMANCE`, a `Conformance`:

    metric_cases       task -> runs of it (items answered right, wrong, unreadably, failed):
                       every metric a task's score() or aggregate() returns is declared on it,
                       and every declaration is returned by some answer
    analysis_examples  task -> an example run for the analyses the suite declares for it: every
                       declared analysis keeps the framework's promises on it (analyses.py)
    round_trip         the files an import of which its exporter writes back identical (a suite
                       with an exporter), but for
    not_carried        the metadata keys an import of the written files records anew (said in
                       the exporter's cannot_carry), or
    no_exporter        why it has none (a suite without one: only the platform's JSONL)

The suite's judges (`Suite.judges`) are checked as declared. Pure: no Django, no pytest; the
helpers below build items and runs as the platform does.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.kit import registry
from benchmarks.kit.base import ImportBundle, SampleRecord, merge_tools
from benchmarks.kit.protocol import Context, Evaluator, Item, Outcome, Scored, ToolSpec


@dataclass(frozen=True)
class Files:
    """Where a suite's cases read their data: the benchmarks' published files beside the
    checkout (`seeddata/<suite>/`), the project's demo data (`benchmarks/demo/<suite>/`) and the
    tests' fixtures (`tests/benchmarks/fixtures/<suite>/`). The tests give it."""

    seeddata: Path
    demo: Path
    fixtures: Path


Triple = tuple[Item, Outcome | None, dict[str, Any]]


@dataclass
class MetricCase:
    """One run of a task: its options and its (item, outcome or None for a failed call,
    context) triples."""

    items: list[Triple]
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class AnalysisExample:
    """An example run of a task, its records parsed and scored by the suite's own functions."""

    evaluator: Evaluator
    ctx: Context
    records: list[Scored]
    # what the platform would hand the analyses beside the records (AnalysisInput.inputs)
    inputs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Conformance:
    """What a suite promises, shown on its own cases (the module docstring)."""

    metric_cases: Callable[[str, Files], Iterable[MetricCase]]
    analysis_examples: Mapping[str, Callable[[Files], AnalysisExample]] = field(
        default_factory=dict
    )
    round_trip: Callable[[Files], list[Path]] | None = None
    not_carried: tuple[str, ...] = ()
    no_exporter: str = ""


def conformance_of(suite: registry.Suite) -> Conformance | None:
    """The suite's declared conformance (None: it declares none)."""
    if not suite.conformance:
        return None
    declared = getattr(importlib.import_module(suite.conformance), "CONFORMANCE", None)
    if not isinstance(declared, Conformance):
        raise TypeError(f"{suite.conformance} has no CONFORMANCE of type Conformance")
    return declared


# --- building items and runs as the platform does ----------------------------------------------


def item_of(record: SampleRecord) -> Item:
    return Item(
        split=record.split,
        external_id=record.external_id,
        input=record.input,
        reference=record.reference,
        kind=record.kind,
        candidate_tools=tuple(record.candidate_tools),
        metadata=record.metadata,
    )


def tools_of(bundle: ImportBundle) -> dict[str, ToolSpec]:
    return {
        tool.name: ToolSpec(
            tool.name, tool.description, tool.parameters, tool.returns, tool.category, tool.raw
        )
        for tool in bundle.tools
    }


def imported(
    import_files: Callable[[Sequence[Path]], ImportBundle], files: list[Path]
) -> tuple[list[Item], dict[str, ToolSpec]]:
    """The items and (merged) tools an import of `files` stores."""
    bundle = import_files(files)
    tools = {
        t.name: ToolSpec(t.name, t.description, t.parameters, t.returns, t.category, t.raw)
        for t in merge_tools(bundle.tools)
    }
    return [item_of(s) for s in bundle.samples], tools


def parsed(
    evaluator: Evaluator,
    ctx: Context,
    item: Item,
    text: str | None,
    context: dict[str, Any] | None = None,
) -> Triple:
    """The item with the suite's reading of `text` (None: the call failed)."""
    context = context or {}
    outcome = None if text is None else evaluator.parse(text, item, ctx, context)
    return item, outcome, context


def answered(
    evaluator: Evaluator,
    ctx: Context,
    item: Item,
    text: str | None,
    context: dict[str, Any] | None = None,
) -> Scored:
    """An item answered with `text` (None: the endpoint failed), parsed and scored by the
    suite, as the platform stores it."""
    context = context or {}
    outcome = None if text is None else evaluator.parse(text, item, ctx, context)
    return Scored(
        item=item,
        outcome=outcome,
        scores=evaluator.score(outcome, item, ctx, context),
        context=context,
        group=evaluator.cluster(item, ctx),
    )


def context_for(evaluator: Evaluator, task: str, **options: Any) -> Context:
    spec = evaluator.task(task)
    return Context(task=spec, options={**spec.defaults, **options})


def gold_answered_cases(
    name: str, task: str, files: list[Path], reference_output: Callable[[Item, str], str]
) -> Iterator[MetricCase]:
    """Runs of `task` over the items an import of `files` stores, without and with unread
    answers left out, each item answered with its gold (`reference_output`), nothing, text
    that is no answer, and not at all (a failed call)."""
    suite = registry.get_suite(name).evaluator
    items, tools = imported(registry.get_suite(name).import_files, files)
    for options in ({}, {"unparsed": "exclude"}):
        ctx = Context(task=suite.task(task), options=options, tools=tools)
        chosen = suite.select(items, ctx)
        assert chosen, f"{name} demo has no item for {task}"
        triples = []
        for item in chosen:
            for text in (reference_output(item, task), "", "}{ not an answer", None):
                triples.append(parsed(suite, ctx, item, text))
        yield MetricCase(triples, options)
