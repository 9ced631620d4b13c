"""Every suite's trace hook, given outputs and samples of every odd shape a stored prediction
could hold, answers with a Trace or refuses with NotATrace, never another exception (the review
kind builds its items from whatever the runs stored). Pure."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.kit.context import JudgedOutput
from benchmarks.kit.protocol import Item
from benchmarks.kit.registry import Suite, all_suites
from benchmarks.kit.traces import NotATrace, Trace

HOOKED = [suite for suite in all_suites() if suite.trace is not None]

ODD_VALUES: list[Any] = [
    None,
    "",
    "[" * 50_000,
    '{"turns": "x"}',
    7,
    [None, "x", 3, {"action": 5}],
    {"calls": "x", "turns": [["junk"]], "verdicts": [None, {"turn": "0"}]},
    {"action": {"nested": ["x"]}, "observation": ["y"], "arguments": "{bad"},
]


def outputs() -> list[JudgedOutput]:
    found = [
        JudgedOutput(),
        JudgedOutput(parsed=False, text="not an answer"),
        JudgedOutput(text="[" * 50_000, parsed=True),
    ]
    for value in ODD_VALUES:
        trace = value if isinstance(value, list) else [value]
        found.append(
            JudgedOutput(
                task="?",
                text=value if isinstance(value, str) else "",
                answer=value,
                trace=trace,
                scores={"accuracy": value, "correct": value} if value is not None else {},
                tool_calls=value,
            )
        )
    return found


def items(suite: Suite) -> list[Item]:
    splits = [*suite.splits, "no-such-split"]
    inputs: list[Any] = [
        {},
        {"messages": "x", "query": 3},
        {"turns": [None, {"role": 5}]},
        {"messages": [{"role": "user", "content": 3}, {"role": "assistant", "tool_calls": [5]}]},
    ]
    return [
        Item(split=split, external_id="x", input=given, reference=given, metadata={})
        for split in splits
        for given in inputs
    ]


@pytest.mark.parametrize("suite", HOOKED, ids=lambda s: s.name)
def test_odd_outputs_give_a_trace_or_not_a_trace(suite: Suite) -> None:
    assert suite.trace is not None
    read = 0
    for item in items(suite):
        for output in [None, *outputs()]:
            try:
                got = suite.trace(item, output)
            except NotATrace:
                continue
            assert isinstance(got, Trace), (suite.name, item.split, output)
            read += 1
    # Not every odd shape is refused: the hook reads what it can.
    assert read, suite.name
