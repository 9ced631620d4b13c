"""The kit's helpers for the suites' trace hooks (benchmarks/kit/traces.py): chat messages read
as steps (imported transcripts, MTU-Bench's dialogues), results read as JSON where they are,
and the stored tools' schemas added beside a hook's own. Pure, hand-made cases."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.kit.context import JudgedOutput, ShownCall
from benchmarks.kit.traces import (
    Trace,
    TraceStep,
    message_call,
    message_steps,
    message_text,
    outcome_of,
    result_value,
    with_schemas,
)


def openai_call(ident: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": arguments}}


MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Rome and Oslo?"},
    {
        "role": "assistant",
        "content": [{"type": "text", "text": "Two lookups."}],
        "tool_calls": [
            openai_call("b", "weather", '{"city": "Rome"}'),
            openai_call("c", "weather", '{"city": "Oslo"}'),
        ],
    },
    # answered out of order, by id
    {"role": "tool", "tool_call_id": "c", "content": '{"t": 4}'},
    {"role": "tool", "tool_call_id": "b", "content": '{"t": 18}'},
    {"role": "assistant", "content": "Rome 18, Oslo 4."},
    {"role": "user", "content": "And Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [openai_call("d", "weather", "{bad")]},
]


def test_one_step_per_assistant_message_results_matched_by_id() -> None:
    read = message_steps(MESSAGES)
    assert read.steps == (
        TraceStep(
            label="step 1",
            calls=(
                ShownCall("weather", {"city": "Rome"}, "step 1"),
                ShownCall("weather", {"city": "Oslo"}, "step 1"),
            ),
            results=({"t": 18}, {"t": 4}),
            user="Weather in Rome and Oslo?",
            text="Two lookups.",
        ),
        TraceStep(label="step 2", text="Rome 18, Oslo 4."),
        # arguments that are not JSON are kept as the text; the call is never answered
        TraceStep(
            label="step 3",
            calls=(ShownCall("weather", "{bad", "step 3"),),
            results=(None,),
            user="And Paris?",
        ),
    )
    assert read.unmatched == (False, False, True)
    assert read.pending_user == ""


def test_per_turn_joins_a_turns_assistant_messages_and_matches_results_in_order() -> None:
    # MTU-Bench's dialogues: calls without ids, tool messages answering them in order
    turns = [
        {"role": "user", "content": "Play music"},
        {
            "role": "assistant",
            "content": "Looking.",
            "tool_calls": [{"name": "Find", "arguments": {}}],
        },
        {"role": "tool", "name": "Find", "content": "{'song': 'x'}"},
        {"role": "assistant", "content": "Found x."},
        {"role": "user", "content": "Play it"},
    ]
    read = message_steps(turns, per_turn=True)
    assert read.steps == (
        TraceStep(
            label="turn 1",
            calls=(ShownCall("Find", {}, "turn 1"),),
            results=("{'song': 'x'}",),
            user="Play music",
            text="Looking.\nFound x.",
        ),
    )
    assert read.pending_user == "Play it"
    assert read.unmatched == (False,)


@pytest.mark.parametrize(
    ("messages", "labels", "unmatched"),
    [
        ([], [], []),
        (["junk", 3, None, {"role": "system", "content": "s"}], [], []),
        # a result before any call, and one whose id no call has
        (
            [
                {"role": "tool", "tool_call_id": "x", "content": "r"},
                {"role": "assistant", "tool_calls": "not a list"},
                {"role": "tool", "content": "r2"},
            ],
            ["step 1: tool result without a call", "step 2", "step 3: tool result without a call"],
            [True, False, True],
        ),
        # a second result for one call
        (
            [
                {"role": "assistant", "tool_calls": [openai_call("a", "f", "{}")]},
                {"role": "tool", "tool_call_id": "a", "content": "1"},
                {"role": "tool", "tool_call_id": "a", "content": "2"},
            ],
            ["step 1", "step 2: tool result without a call"],
            [False, True],
        ),
        # hostile shapes inside messages
        (
            [{"role": "assistant", "content": {"x": 1}, "tool_calls": [5, {"function": 3}]}],
            ["step 1"],
            [True],
        ),
    ],
)
def test_degenerate_messages_read_without_raising(
    messages: list[Any], labels: list[str], unmatched: list[bool]
) -> None:
    read = message_steps(messages)
    assert [s.label for s in read.steps] == labels
    assert list(read.unmatched) == unmatched


def test_message_parts() -> None:
    assert message_text(None) == ""
    assert message_text([{"type": "text", "text": "a"}, "b", {"type": "image"}]) == (
        'a\nb\n{"type": "image"}'
    )
    assert message_call({"name": "f", "arguments": "[1]"}) == ("", ShownCall("f", [1]))
    assert message_call("x") == ("", ShownCall("", "x"))


def test_results_read_as_json_only_where_they_are_objects_or_lists() -> None:
    assert result_value('{"a": 1}') == {"a": 1}
    assert result_value(" [1, 2]") == [1, 2]
    assert result_value("{cut") == "{cut"
    assert result_value("42") == "42"
    assert result_value(None) is None
    deep = "[" * 100_000
    assert result_value(deep) == deep


def test_the_stored_tools_schemas_join_the_hooks_own() -> None:
    trace = Trace(steps=(), schemas={"Finish": {"type": "object"}})
    got = with_schemas(trace, {"a": {"type": "object", "x": 1}, "Finish": {"other": True}})
    assert got.schemas == {"a": {"type": "object", "x": 1}, "Finish": {"type": "object"}}


def test_a_judged_output_as_the_scorer_reads_it() -> None:
    output = JudgedOutput(
        text="t",
        answer={"a": 1},
        parsed=False,
        trace=[{"x": 1}, "junk"],
        note="n",
        tool_calls="not a list",
    )
    outcome = outcome_of(output)
    assert (outcome.output, outcome.answer, outcome.parsed) == ("t", {"a": 1}, False)
    assert outcome.trace == [{"x": 1}] and outcome.note == "n" and outcome.tool_calls is None
    assert outcome_of(JudgedOutput(parsed=None)).parsed is True
