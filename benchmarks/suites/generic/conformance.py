"""What the generic suite promises, on its own cases (benchmarks/kit/conformance.py).

Metric cases: the demo questions, answered with their gold, nothing, text that is no answer,
and not at all. Analysis examples: hand-made questions in three splits."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from benchmarks.kit.conformance import (
    AnalysisExample,
    Conformance,
    Files,
    MetricCase,
    answered,
    context_for,
    gold_answered_cases,
)
from benchmarks.kit.protocol import Item
from benchmarks.suites import generic

# A perfect model's output, per task: its gold as the task's prompt asks for it.
GOLD_OUTPUT = {"answer": generic.gold_answer_output, "tool_calls": generic.gold_calls_output}


def reference_output(item: Item, task: str) -> str:
    return GOLD_OUTPUT[task](item)


def metric_cases(task: str, files: Files) -> Iterator[MetricCase]:
    questions = [files.demo / "generic" / "questions.jsonl"]
    yield from gold_answered_cases("generic", task, questions, reference_output)


SPLITS = ("arithmetic", "geography", "history")


def answer_run(files: Files) -> AnalysisExample:
    evaluator = generic.SUITE.evaluator
    ctx = context_for(evaluator, "answer")
    records = []
    for index in range(18):
        item = Item(
            split=SPLITS[index % 3],
            external_id=str(index),
            input={"query": f"Question {index}?"},
            reference={"answer": str(index)},
        )
        # right on every other item, wrong otherwise, and no answer on every sixth
        text = None if index % 6 == 5 else (str(index) if index % 2 == 0 else "something else")
        records.append(answered(evaluator, ctx, item, text))
    return AnalysisExample(evaluator, ctx, records)


def tool_calls_run(files: Files) -> AnalysisExample:
    evaluator = generic.SUITE.evaluator
    ctx = context_for(evaluator, "tool_calls")
    records = []
    for index in range(12):
        gold = [{"name": "lookup", "arguments": {"q": str(index)}}] if index % 4 else []
        item = Item(
            split=SPLITS[index % 3],
            external_id=str(index),
            input={"query": f"Look {index} up."},
            reference={"tool_calls": gold},
            candidate_tools=("lookup",),
        )
        right = (
            '{"tool_calls": '
            + (f'[{{"name": "lookup", "arguments": {{"q": "{index}"}}}}]' if gold else "[]")
            + "}"
        )
        text = right if index % 3 else '{"tool_calls": [{"name": "other", "arguments": {}}]}'
        records.append(answered(evaluator, ctx, item, text))
    return AnalysisExample(evaluator, ctx, records)


EXAMPLES = {"answer": answer_run, "tool_calls": tool_calls_run}


def round_trip(files: Files) -> list[Path]:
    return [files.demo / "generic" / "questions.jsonl"]


CONFORMANCE = Conformance(
    metric_cases=metric_cases, analysis_examples=EXAMPLES, round_trip=round_trip
)
