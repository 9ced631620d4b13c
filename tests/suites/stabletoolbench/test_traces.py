"""StableToolBench's outputs read step by step (benchmarks/suites/stabletoolbench/traces.py).

Pure: the traces come from the suite's own agents (text and native) run on a seed query with a
scripted model and a faked virtual API server, and from a published answer object read by the
suite's parser, as a run or an import stores them.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from benchmarks.kit.context import JudgedOutput, ShownCall
from benchmarks.kit.protocol import Item, Outcome, Prompt, ToolSpec
from benchmarks.kit.registry import get_suite
from benchmarks.kit.traces import NotATrace, Trace, TraceStep, with_schemas
from benchmarks.suites import stabletoolbench
from benchmarks.suites.stabletoolbench import native_agent
from benchmarks.suites.stabletoolbench.native import finish_tool
from benchmarks.suites.stabletoolbench.traces import trace
from tests.suites.stabletoolbench.test_agent import (
    DETAILS_KEY,
    GIVE_UP,
    SEARCH,
    SEARCH_KEY,
    Script,
    Server,
    answer,
    make_ctx,
    run,
    step,
)
from tests.suites.stabletoolbench.test_agent import bundle as agent_bundle
from tests.suites.stabletoolbench.test_agent import item as agent_item
from tests.suites.stabletoolbench.test_agent import specs as agent_specs

# The agent tests' fixtures: the Messi query of the seed file and its tools.
bundle, item, specs = agent_bundle, agent_item, agent_specs

FINISH_SCHEMA = {"Finish": finish_tool().parameters}


def judged(outcome: Outcome, task: str = "pass_rate") -> JudgedOutput:
    """The outcome as a prediction stores it and the studio hands it to the suite."""
    return JudgedOutput(
        task=task,
        text=outcome.output,
        answer=outcome.answer,
        parsed=outcome.parsed,
        trace=list(outcome.trace),
    )


def test_a_text_run_reads_as_its_calls_and_the_final_answer(
    item: Item, specs: dict[str, ToolSpec]
) -> None:
    # given: a search, an unknown tool, unreadable arguments, a server error, then Finish
    server = Server(response=[{"name": "Lionel Messi"}])
    ctx = make_ctx(item, specs, server)
    script = Script(
        step(SEARCH, {"name": "messi"}, "I should search for Messi."),
        step("weather_for_nowhere", {"city": "Rosario"}, "Maybe the weather?"),
        step(SEARCH, "{name: messi", "Again, differently."),
        answer("Messi plays for Inter Miami."),
    )
    outcome = run(item, ctx, script)

    # when
    got = trace(item, judged(outcome))

    # then
    observation = json.dumps({"error": "", "response": [{"name": "Lionel Messi"}]})
    assert outcome.trace[0]["observation"] == observation
    assert got == Trace(
        steps=(
            TraceStep(
                label="step 1",
                calls=(ShownCall(SEARCH_KEY, {"name": "messi"}, "step 1"),),
                results=({"error": "", "response": [{"name": "Lionel Messi"}]},),
                text="I should search for Messi.",
                auto_error=None,
            ),
            TraceStep(
                label="step 2",
                calls=(ShownCall("weather_for_nowhere", {}, "step 2"),),
                results=(outcome.trace[1]["observation"],),
                text="Maybe the weather?",
                auto_error="wrong_tool",
            ),
            TraceStep(
                label="step 3",
                calls=(ShownCall(SEARCH_KEY, {}, "step 3"),),
                results=(outcome.trace[2]["observation"],),
                text="Again, differently.",
                auto_error="format",
            ),
            TraceStep(
                label="step 4 (final answer)",
                calls=(
                    ShownCall(
                        "Finish",
                        {
                            "return_type": "give_answer",
                            "final_answer": "Messi plays for Inter Miami.",
                        },
                        "step 4",
                    ),
                ),
                results=(),
                text="I can answer.",
                auto_error=None,
            ),
        ),
        final="Messi plays for Inter Miami.",
        schemas=FINISH_SCHEMA,
        auto_verdict=None,
    )
    assert outcome.trace[1]["observation"].startswith('"weather_for_nowhere" is not one')


def test_server_errors_repeats_and_give_up(item: Item, specs: dict[str, ToolSpec]) -> None:
    # given: the server answers with an error; the same call is asked three times; a give-up
    server = Server(response="", error="Rate limit exceeded")
    ctx = make_ctx(item, specs, server, max_same_call=2)
    script = Script(
        step(SEARCH, {"name": "messi"}),
        step(SEARCH, {"name": "messi"}),
        step(SEARCH, {"name": "messi"}),
    )
    outcome = run(item, ctx, script)
    gave_up = run(item, make_ctx(item, specs, Server()), Script(GIVE_UP))

    # when
    repeated = trace(item, judged(outcome))
    given_up = trace(item, judged(gave_up))

    # then
    assert [s.auto_error for s in repeated.steps] == ["api_error", "api_error", "unnecessary_call"]
    assert repeated.steps[0].results == ({"error": "Rate limit exceeded", "response": ""},)
    assert repeated.final == ""
    assert repeated.auto_verdict is False  # no Finish: Unsolved without a judge
    assert [s.label for s in given_up.steps] == ["step 1 (gives up)"]
    assert given_up.steps[0].auto_error is None
    assert given_up.auto_verdict is False


def test_a_reply_without_an_action_and_an_incomplete_finish_are_format_errors(
    item: Item, specs: dict[str, ToolSpec]
) -> None:
    # given
    ctx = make_ctx(item, specs, Server())
    script = Script(
        "Thought: I am not sure what to do.",
        step("Finish", {"return_type": "give_answer"}, "Done?"),
        answer("Nothing found."),
    )
    outcome = run(item, ctx, script)

    # when
    got = trace(item, judged(outcome))

    # then
    assert [(s.label, s.calls[:1] and s.calls[0].name, s.auto_error) for s in got.steps] == [
        ("step 1", (), "format"),
        ("step 2 (final answer)", "Finish", "format"),
        ("step 3 (final answer)", "Finish", None),
    ]
    assert got.steps[1].results == (outcome.trace[1]["observation"],)


@dataclass
class Turn:
    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)


def call(number: int, name: str, arguments: str) -> dict[str, Any]:
    return {
        "id": f"call_{number}",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def test_a_native_run_reads_like_a_text_run(item: Item, specs: dict[str, ToolSpec]) -> None:
    # given: two calls in one reply (one with arguments that are not JSON), then Finish
    server = Server(response={"club": "Inter Miami"})
    ctx = make_ctx(item, specs, server)
    replies = [
        Turn(
            "Let me look.",
            [
                call(1, SEARCH, '{"name": "messi"}'),
                call(2, "transfermarkt_details_for_theclique", "{not json"),
            ],
        ),
        Turn(
            "",
            [
                call(
                    3,
                    "Finish",
                    json.dumps({"return_type": "give_answer", "final_answer": "Inter Miami."}),
                )
            ],
        ),
    ]

    async def ask(prompt: Prompt) -> Turn:
        return replies.pop(0)

    outcome = asyncio.run(native_agent.native_solve(item, ctx, {}, ask))

    # when
    got = trace(item, judged(outcome))

    # then
    assert [(s.label, [c.name for c in s.calls], s.auto_error) for s in got.steps] == [
        ("step 1", [SEARCH_KEY], None),
        ("step 2", [DETAILS_KEY], "format"),
        ("step 3 (final answer)", ["Finish"], None),
    ]
    assert got.steps[0].text == "Let me look."
    assert got.steps[0].results == ({"error": "", "response": {"club": "Inter Miami"}},)
    assert got.final == "Inter Miami."
    assert got.auto_verdict is None


def test_a_published_answer_reads_through_the_suites_parser(item: Item) -> None:
    # given: a published answer object (CoT) as an import stores it (parse's trace)
    record_final = json.dumps({"return_type": "give_answer", "final_answer": "Messi."})
    record = {
        "method": "CoT@1",
        "total_steps": 5,
        "final_answer": json.dumps({"return_type": "give_answer", "final_answer": "Messi."}),
        "answer_details": [
            {
                "role": "assistant",
                "message": "Search first.",
                "next": [
                    {
                        "role": "tool",
                        "message": {
                            "name": SEARCH,
                            "arguments": '{"name": "messi"}',
                            "response": '{"error": "", "response": "Messi"}',
                        },
                        "next": [
                            {
                                "role": "tool",
                                "message": {
                                    "name": "Finish",
                                    "arguments": record_final,
                                    "response": "",
                                },
                                "next": [],
                            }
                        ],
                    }
                ],
            }
        ],
    }
    text = json.dumps(record)
    outcome = stabletoolbench.parse(text, item, None, {})  # type: ignore[arg-type]

    # when
    stored = trace(item, judged(outcome))
    rebuilt = trace(item, JudgedOutput(text=text, answer=outcome.answer, parsed=True))

    # then: the trace as stored, and rebuilt from the answer object when none is stored
    assert stored == rebuilt
    assert [(s.label, s.calls[0].name, s.auto_error) for s in stored.steps] == [
        ("step 1", SEARCH_KEY, None),
        ("step 2 (final answer)", "Finish", None),
    ]
    assert stored.steps[0].text == "Search first."
    assert stored.final == "Messi."


def test_schemas_of_the_called_tools_come_from_the_stored_tools(
    item: Item, specs: dict[str, ToolSpec]
) -> None:
    # given
    outcome = run(
        item,
        make_ctx(item, specs, Server()),
        Script(step(SEARCH, {"name": "messi"}), answer("Messi.")),
    )
    known = {name: spec.parameters for name, spec in specs.items()}

    # when
    got = with_schemas(trace(item, judged(outcome)), known)

    # then
    assert got.schemas == {**known, **FINISH_SCHEMA}


@pytest.mark.parametrize(
    "output",
    [
        JudgedOutput(),
        JudgedOutput(text="not json", parsed=False),
        JudgedOutput(trace=["a step", 3, None]),
        JudgedOutput(text="{}", trace=[]),
        JudgedOutput(text="[" * 100_000, trace=[]),
    ],
)
def test_outputs_without_steps_are_not_traces(item: Item, output: JudgedOutput) -> None:
    with pytest.raises(NotATrace):
        trace(item, output)


def test_a_sample_alone_is_not_a_trace(item: Item) -> None:
    with pytest.raises(NotATrace, match="query"):
        trace(item, None)


@pytest.mark.parametrize(
    "steps",
    [
        [{"action": 3, "arguments": "x", "observation": {"a": 1}}],
        [{"action": SEARCH, "arguments": "{bad", "thought": ["not", "text"]}],
        [{"action": "Finish", "arguments": None}, "junk", {"tools": "none"}],
        [{"action": SEARCH, "tool": 5, "observation": "[1, 2"}],
    ],
)
def test_hostile_steps_still_read(item: Item, steps: list[Any]) -> None:
    got = trace(item, JudgedOutput(text="x", trace=steps))
    assert isinstance(got, Trace)
    assert all(isinstance(s, TraceStep) for s in got.steps)


def test_the_suite_declares_its_trace_and_own_error() -> None:
    suite = get_suite("stabletoolbench")
    assert suite.trace is trace
    assert [e.key for e in suite.step_errors][-1] == "api_error"
