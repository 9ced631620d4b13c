"""WTU-Eval's runs with the tool pool (R2, R4) read step by step (the suite's `trace`
capability), for step-level review: the ReAct loop's trace (evaluate.react), the native loop's
(native_messages.native_solve) and a published transcript's (parse_published_transcript), which
all hold one record per step {"thought", "action", "input", "arguments", "observation", "ok",
"error", ...}.

One TraceStep per record: the call (none for a reply without an action) with its observation as
the result, the thought as the text; the final answer is a "Finish" call on the last step (label
"step N (final answer)"). R1/R3 answer once without tools: no trace (NotATrace).

The suite's own error types (the paper's Table 4, evaluate.ERROR_TYPES) that no common type
covers are its own step errors: null_content, no_reasoning, invalid_tool_repeated,
endless_retry, and wrong_answer (a wrong final answer, which the paper files under its first
type, incorrect invocation, with unnecessary tool use). The evaluator's unnecessary_tool is the
common "unnecessary_call"; an invalid action once is the common "wrong_tool".

auto_error, per step, from what the loop recorded on it and the evaluator's item-level type
(evaluate.error_type, read from the stored errors[<type>] score, else scored again with the
region's default options):
  - "null_content": a step the loop ended as null content (an empty or unreadable reply);
  - "wrong_tool": an action naming no tool of the pool; "invalid_tool_repeated" on the one
    that ends the attempt (the second after the reminder);
  - "no_reasoning" / "invalid_tool_repeated": an identical call asked once too often, after a
    call that worked / failed (the loop records which);
  - "format": arguments that are not JSON (native), a call written in the text (leaked_call);
  - "unnecessary_call": every tool call of an item the evaluator found wrong for calling a
    tool on a general dataset (R4, unless the run's general_tool_call is "ignore");
  - the final answer: "" when the item is right, "wrong_answer" when the evaluator's type is
    a wrong answer, None when the answer could not be interpreted or the item is wrong for
    another reason (its error is on another step);
  - the last step of an attempt that ended without an answer: the evaluator's type
    ("endless_retry" at the step limit, or after calls without a final answer; "null_content"),
    when no step error above is already there;
  - None for every other call: whether the tool and the input were the right ones the suite
    cannot tell (it has no gold calls); a tool that answered with an error is not flagged.
auto_verdict: the item's accuracy (right / wrong; None when unparsed and skipped).

Schemas: the pool's tools the suite defines (the local Calculator, the served search tools of
served_tools.json); a toolbox tool of another name has none here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchmarks.kit.context import JudgedOutput, ShownCall
from benchmarks.kit.protocol import Context, Item, Outcome
from benchmarks.kit.traces import NotATrace, StepError, Trace, TraceStep, outcome_of, result_value
from benchmarks.suites.wtueval.evaluate import (
    ERROR_TYPES,
    FINISH,
    STOP_INVALID,
    TASKS,
    calculator_toolset,
    make_score,
)
from benchmarks.suites.wtueval.served import _served

__all__ = ["OWN_STEP_ERRORS", "trace"]

OWN_STEP_ERRORS = (
    StepError("wrong_answer", "Wrong final answer", "The final answer is wrong."),
    StepError(
        "null_content",
        "Null content",
        "The reply is empty or says nothing usable (no action, no answer).",
    ),
    StepError(
        "no_reasoning",
        "No reasoning over the result",
        "The right tool was called, but its result was not used: the call is repeated or "
        "the answer ignores it.",
    ),
    StepError(
        "invalid_tool_repeated",
        "Invalid tool called repeatedly",
        "A tool that does not exist, or a call that failed, is tried again after a reminder.",
    ),
    StepError(
        "endless_retry",
        "Endless retry",
        "The agent keeps calling tools and never gives a final answer.",
    ),
)
# The evaluator's item-level types -> step error keys (the common one where there is one).
_ITEM_ERRORS = {code: code for code in ERROR_TYPES} | {
    "unnecessary_tool": "unnecessary_call",
    "no_output": None,
}
# What the native loop records on a call it could not read.
_FORMAT_ERRORS = ("malformed_arguments", "leaked_call")


def _schemas() -> dict[str, Any]:
    schemas: dict[str, Any] = {spec.name: spec.parameters for spec in calculator_toolset().tools}
    for name, api in _served().items():
        schemas[name] = api.spec.parameters
    return schemas


def _scores(output: JudgedOutput, outcome: Outcome, item: Item) -> Mapping[str, Any]:
    """The stored scores, else the item scored again by its run's task (with the pool) at its
    default options; a task unknown here is read as the first with the pool."""
    if "accuracy" in output.scores:
        return output.scores
    spec = TASKS.get(output.task)
    if spec is None or not spec.agent:
        spec = next(task for task in TASKS.values() if task.agent)
    return make_score(agent=True)(outcome, item, Context(task=spec), {})


def _item_error(scores: Mapping[str, Any]) -> str | None:
    for code in ERROR_TYPES:
        if scores.get(f"errors[{code}]"):
            return code
    return None


def _step_error(record: Mapping[str, Any], last: bool, unnecessary: bool) -> str | None:
    error = record.get("error")
    action = record.get("action")
    calls = isinstance(action, str) and bool(action) and action != FINISH
    if error == "null_content":
        return "null_content"
    if error in _FORMAT_ERRORS:
        return "format"
    if error == "invalid_tool":
        ended = last and record.get("stop") == STOP_INVALID
        return "invalid_tool_repeated" if ended else "wrong_tool"
    if error == "repeated_call":
        return "invalid_tool_repeated" if record.get("repeats_failed_call") else "no_reasoning"
    if calls and unnecessary:
        return "unnecessary_call"
    return None


def trace(item: Item, output: JudgedOutput | None) -> Trace:
    """One R2/R4 output's trace (see the module docstring)."""
    if output is None:
        raise NotATrace("a WTU-Eval sample is a question, not a trace: review a run's output")
    records = [step for step in output.trace if isinstance(step, Mapping)]
    if not records:
        spec = TASKS.get(output.task)
        without_tools = spec is not None and not spec.agent
        raise NotATrace(
            f"the output holds no steps ({output.task} answers once, without tools)"
            if without_tools
            else "the output holds no steps"
        )
    outcome = outcome_of(output)
    scores = _scores(output, outcome, item)
    accuracy = scores.get("accuracy")
    item_error = _ITEM_ERRORS.get(_item_error(scores) or "")
    unnecessary = item_error == "unnecessary_call"
    steps: list[TraceStep] = []
    for number, record in enumerate(records, start=1):
        last = number == len(records)
        label = f"step {number}"
        action = record.get("action")
        calls: tuple[ShownCall, ...] = ()
        results: tuple[Any, ...] = ()
        auto_error = _step_error(record, last, unnecessary)
        if action == FINISH:
            label += " (final answer)"
            arguments = record.get("arguments")
            calls = (ShownCall(FINISH, arguments, label),)
            if auto_error is None:
                if accuracy == 1.0:
                    auto_error = ""
                elif accuracy == 0.0 and item_error == "wrong_answer":
                    auto_error = "wrong_answer"
        elif isinstance(action, str) and action:
            arguments = record.get("arguments")
            if not arguments and record.get("input") not in (None, ""):
                arguments = record.get("input")
            calls = (ShownCall(action, arguments, label),)
            results = (result_value(record.get("observation")),)
        if last and action != FINISH and auto_error is None and accuracy == 0.0:
            auto_error = item_error if item_error != "wrong_answer" else None
        thought = record.get("thought")
        steps.append(
            TraceStep(
                label=label,
                calls=calls,
                results=results,
                text=thought if isinstance(thought, str) else "",
                auto_error=auto_error,
            )
        )
    final = output.answer if isinstance(output.answer, str) else ""
    verdict = None if accuracy is None else accuracy == 1.0
    return Trace(steps=tuple(steps), final=final, schemas=_schemas(), auto_verdict=verdict)
