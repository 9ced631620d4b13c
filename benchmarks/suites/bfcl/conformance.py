"""What the BFCL suite promises, on its own cases (benchmarks/kit/conformance.py).

Metric cases: the demo entries (benchmarks/demo/bfcl/, ours, in BFCL's format) of each task's
category, in text mode and in native mode, answered with their gold (evaluate.gold_text and
gold_tool_calls), with a wrong call, with text that decodes to nothing, with nothing, and not at
all (a failed call). Analysis examples: per task, its demo entries answered wrongly in several
ways (and one failed call). No exporter (see `no_exporter`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

from benchmarks.kit.conformance import (
    AnalysisExample,
    Conformance,
    Files,
    MetricCase,
    Triple,
    answered,
    context_for,
    imported,
    parsed,
)
from benchmarks.kit.native import read_tool_calls
from benchmarks.kit.protocol import Context, NativeReply
from benchmarks.suites import bfcl


def _demo_files(files: Files) -> list[Path]:
    folder = files.demo / "bfcl"
    return sorted(folder.glob("BFCL_v4_*.json"))


WRONG_TEXT = '[no_such_function(x="wrong")]'
WRONG_CALL = [
    {
        "id": "call_1",
        "type": "function",
        "function": {"name": "no_such_function", "arguments": '{"x": "wrong"}'},
    }
]


def metric_cases(task: str, files: Files) -> Iterator[MetricCase]:
    evaluator = bfcl.SUITE.evaluator
    items, tools = imported(bfcl.SUITE.import_files, _demo_files(files))
    chosen = [item for item in items if item.split == task]
    assert chosen, f"the BFCL demo has no entry of {task}"
    for mode in ("text", "native"):
        ctx = Context(task=evaluator.task(task), options={"tool_mode": mode}, tools=tools)
        triples: list[Triple] = []
        for item in chosen:
            if mode == "text":
                for text in (bfcl.gold_text(item), WRONG_TEXT, "}{ not calls", "", None):
                    triples.append(parsed(evaluator, ctx, item, text))
                continue
            native = evaluator.native_prompt(item, ctx, {})
            for tool_calls, text in (
                (bfcl.gold_tool_calls(item), ""),
                (WRONG_CALL, ""),
                ([], "I would rather answer in words."),
                ([], ""),
            ):
                reply = NativeReply(
                    text, tool_calls, read_tool_calls(tool_calls, native.names), native.names
                )
                triples.append((item, evaluator.native_outcome(reply, item, ctx, {}), {}))
            triples.append((item, None, {}))
        yield MetricCase(triples, {"tool_mode": mode})


def _example(task: str, files: Files) -> AnalysisExample:
    evaluator = bfcl.SUITE.evaluator
    ctx = context_for(evaluator, task)
    items, _ = imported(bfcl.SUITE.import_files, _demo_files(files))
    records = []
    for item in (item for item in items if item.split == task):
        for text in (bfcl.gold_text(item), WRONG_TEXT, "}{ not calls", "", None):
            records.append(answered(evaluator, ctx, item, text))
    return AnalysisExample(evaluator, ctx, records)


def _examples() -> dict[str, Callable[[Files], AnalysisExample]]:
    return {task: partial(_example, task) for task in bfcl.AST_CATEGORIES}


CONFORMANCE = Conformance(
    metric_cases=metric_cases,
    analysis_examples=_examples(),
    no_exporter=(
        "not written yet: BFCL's files would be written back from the stored samples (entries "
        "and possible answers as JSON Lines), which the importer's records allow; until then "
        "only the platform's JSONL export"
    ),
)
