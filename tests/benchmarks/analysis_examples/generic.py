"""Generic-suite example runs: hand-made questions in three splits."""

from __future__ import annotations

from benchmarks.kit.protocol import Evaluator, Item
from benchmarks.suites import generic
from tests.benchmarks.analysis_examples import Example, answered, context_for

SPLITS = ("arithmetic", "geography", "history")


def answer_run() -> Example:
    evaluator = Evaluator(generic)
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
    return Example(evaluator, ctx, records)


def tool_calls_run() -> Example:
    evaluator = Evaluator(generic)
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
    return Example(evaluator, ctx, records)


EXAMPLES = {"answer": answer_run, "tool_calls": tool_calls_run}
