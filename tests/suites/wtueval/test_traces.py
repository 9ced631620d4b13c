"""WTU-Eval's R2/R4 outputs read step by step (benchmarks/suites/wtueval/traces.py).

Pure: the traces come from the suite's own ReAct loop with a scripted endpoint (the helpers of
test_evaluate.py), scored by the suite as a run stores them.
"""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.kit.context import JudgedOutput, ShownCall
from benchmarks.kit.protocol import Context, Item, Outcome
from benchmarks.kit.registry import get_suite
from benchmarks.kit.traces import NotATrace, Trace, TraceStep
from benchmarks.suites.wtueval.traces import trace
from tests.suites.wtueval.test_evaluate import BOOLQ, EVALUATOR, MATH, ctx_for, run, search_tool


def judged(outcome: Outcome, item: Item, ctx: Context, *, stored: bool = True) -> JudgedOutput:
    scores = EVALUATOR.score(outcome, item, ctx, {}) if stored else {}
    return JudgedOutput(
        task=ctx.task.name,
        text=outcome.output,
        answer=outcome.answer,
        parsed=outcome.parsed,
        trace=outcome.trace,
        note=outcome.note,
        scores=scores,
    )


def test_an_invalid_action_then_a_call_then_the_right_answer() -> None:
    # given
    ctx = ctx_for("R2")
    outcome, _ = run(
        MATH,
        ctx,
        [
            "Thought: Translate first.\nAction: Translate the question\nAction Input: apples",
            "Thought: Right, the calculator.\nAction: Calculator\nAction Input: 3*48-5",
            "Action: Finish\nAction Input: 139",
        ],
    )

    # when
    got = trace(MATH, judged(outcome, MATH, ctx))

    # then
    assert got.steps == (
        TraceStep(
            label="step 1",
            calls=(ShownCall("Translate the question", {"input": "apples"}, "step 1"),),
            results=(outcome.trace[0]["observation"],),
            text="Translate first.",
            auto_error="wrong_tool",
        ),
        TraceStep(
            label="step 2",
            calls=(ShownCall("Calculator", {"expression": "3*48-5"}, "step 2"),),
            results=("139",),
            text="Right, the calculator.",
            auto_error=None,
        ),
        TraceStep(
            label="step 3 (final answer)",
            calls=(ShownCall("Finish", {"answer": "139"}, "step 3 (final answer)"),),
            text="",
            auto_error="",
        ),
    )
    assert (got.final, got.auto_verdict) == ("139", True)
    assert got.schemas["Calculator"]["required"] == ["expression"]
    assert "WikiSearch" in got.schemas


REPEAT = "Thought: I need the weight.\nAction: Calculator\nAction Input: 2 + 11 + 5"
BAD = "Thought: divide.\nAction: Calculator\nAction Input: 143 ice cream sandwiches / 11"


@pytest.mark.parametrize(
    ("replies", "options", "errors"),
    [
        # the same call again after it worked: no reasoning over its result
        ([REPEAT] * 3, {}, [None, None, "no_reasoning"]),
        # the same call again after it failed: an invalid call repeated
        ([BAD] * 3, {}, [None, None, "invalid_tool_repeated"]),
        # an unknown tool twice: the reminder, then the end of the attempt
        (["Action: Translator\nAction Input: x"] * 2, {}, ["wrong_tool", "invalid_tool_repeated"]),
        # an empty action
        (["Thought: I should add.\nAction:"], {}, ["null_content"]),
        # calls until the step limit: the last step carries the evaluator's endless retry
        (
            [f"Action: Calculator\nAction Input: {n} + 1" for n in range(3)],
            {"max_steps": 3},
            [None, None, "endless_retry"],
        ),
        # a wrong final answer
        (["Action: Finish\nAction Input: 140"], {}, ["wrong_answer"]),
    ],
)
def test_the_evaluators_error_types_on_their_steps(
    replies: list[str], options: dict[str, Any], errors: list[str | None]
) -> None:
    ctx = ctx_for("R2", **options)
    outcome, _ = run(MATH, ctx, replies)
    for stored in (True, False):  # the stored scores, or scored again
        got = trace(MATH, judged(outcome, MATH, ctx, stored=stored))
        assert [s.auto_error for s in got.steps] == errors
        assert got.auto_verdict is False


def test_a_tool_call_on_a_general_dataset_is_unnecessary() -> None:
    wiki, _ = search_tool()
    replies = [
        "Thought: Let me check.\nAction: WikiSearch\nAction Input: Tomato",
        "Thought: It is a fruit.\nAction: Finish\nAction Input: true",
    ]
    ctx = ctx_for("R4", toolbox={"WikiSearch": wiki})
    outcome, _ = run(BOOLQ, ctx, replies)
    got = trace(BOOLQ, judged(outcome, BOOLQ, ctx))
    assert [s.auto_error for s in got.steps] == ["unnecessary_call", None]
    assert got.steps[0].results == ("Botanically, a tomato is a fruit.",)
    # A run that ignores such calls scores the answer alone: right, nothing flagged.
    lenient = ctx_for("R4", toolbox={"WikiSearch": wiki}, general_tool_call="ignore")
    kept = trace(BOOLQ, judged(outcome, BOOLQ, lenient))
    assert [s.auto_error for s in kept.steps] == [None, ""]
    assert kept.auto_verdict is True


def test_runs_without_tools_and_samples_are_not_traces() -> None:
    ctx = ctx_for("R1")
    with pytest.raises(NotATrace, match="R1 answers once"):
        trace(MATH, JudgedOutput(task="R1", text="139", answer="139"))
    with pytest.raises(NotATrace):
        trace(MATH, None)
    assert ctx.task.name == "R1"


@pytest.mark.parametrize(
    "steps",
    [
        [{"action": 5, "observation": ["x"]}],
        [{"action": "Finish", "arguments": "oops", "error": ["x"]}, "junk"],
        [{"action": "Calculator", "input": "{bad", "stop": "step_limit"}],
    ],
)
def test_hostile_steps_still_read(steps: list[Any]) -> None:
    got = trace(MATH, JudgedOutput(task="R2", text="", trace=steps))
    assert isinstance(got, Trace)


def test_the_suite_declares_its_trace_and_own_errors() -> None:
    suite = get_suite("wtueval")
    assert suite.trace is trace
    assert [e.key for e in suite.own_step_errors] == [
        "wrong_answer",
        "null_content",
        "no_reasoning",
        "invalid_tool_repeated",
        "endless_retry",
    ]
