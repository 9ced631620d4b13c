"""MTU-Bench's outputs read step by step (the suite's `trace` capability), for step-level review.

An MTU-Bench sample is one turn of a dialogue: the dialogue so far (input["turns"], the
benchmark's own, with its calls and observations) and the user's last message, which the model
answers with the turn's calls. Its trace is the dialogue turn by turn, one step per user turn
(kit.traces.message_steps with per_turn: the user's message, the calls the assistant made, their
observations where the data holds them, its reply): the turns the benchmark gives, labelled
"turn N (given)", are the trace's history (shown, never reviewed: they are not the model's),
and its one step is the model's turn ("turn N"): the current user message, the calls the
suite's parser read from the answer (evaluate._predicted_calls: a tool called twice keeps its
first place and its last arguments, as MTU-Eval reads them), no result (MTU-Bench executes no
tool), the answer's text. A sample alone (no output) reads the same way with the gold calls as
its step: the benchmark's own dialogue, for a review of the data.

auto_error: None on the given turns (the benchmark's, not the model's; the suite has no verdict
on them). On the model's turn, the suite's own verdict: "" when MTU-Eval counts the turn right
(analyses.wrong_turn: PS for a single-tool turn, TN and TO both 1 for a multi-tool one, from the
stored scores, else scored again with the reference variant), else its first error as the error
types analysis finds it (analyses.error_type, appendix E's order), mapped:
    format             -> "format"
    action: missed     -> "missed_call"       (fewer tools than the gold)
    action: excessive  -> "unnecessary_call"  (tools beyond the gold, or a call where none was due)
    action: incorrect  -> "wrong_tool"        (other tools, or the gold's in another order)
    parameter          -> "wrong_argument"
The order mistake has no type of its own: MTU-Eval's analysis files it under incorrect actions.
In the reference variant, tools called beyond the gold ones do not make a multi-tool turn wrong
(util.py leaves them out of P), so such a turn is "" though a reviewer may call it unnecessary.
auto_verdict: the model's turn right or wrong by the same reading; None for a sample alone.

Schemas: the sample's own tool list (input["tools"]), which the question shows the model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchmarks.kit.context import JudgedOutput, ShownCall
from benchmarks.kit.protocol import Context, Item, Outcome, Scored
from benchmarks.kit.traces import (
    NotATrace,
    Trace,
    TraceStep,
    message_steps,
    outcome_of,
)
from benchmarks.suites.mtubench.analyses import (
    EXCESSIVE,
    FORMAT,
    INCORRECT,
    MISSED,
    PARAMETER,
    error_type,
    wrong_turn,
)
from benchmarks.suites.mtubench.evaluate import (
    TASKS,
    _gold_calls,
    _multi_tool,
    _predicted_calls,
    score,
)

__all__ = ["STEP_ERRORS", "trace"]

# The error types analysis's groups -> the step error types every suite shares.
STEP_ERRORS = {
    FORMAT: "format",
    MISSED: "missed_call",
    EXCESSIVE: "unnecessary_call",
    INCORRECT: "wrong_tool",
    PARAMETER: "wrong_argument",
}
# What the stored scores must hold to say whether the turn is right (else it is scored again).
_VERDICT_SCORES = ("correct", "PS", "TN")


def _schemas(item: Item) -> dict[str, Any]:
    tools = item.input.get("tools") if isinstance(item.input, Mapping) else None
    schemas: dict[str, Any] = {}
    for tool in tools if isinstance(tools, list) else ():
        if isinstance(tool, Mapping) and isinstance(tool.get("name"), str):
            schemas.setdefault(tool["name"], tool.get("parameters") or {})
    return schemas


def _calls(found: Mapping[str, Any], label: str) -> tuple[ShownCall, ...]:
    return tuple(
        ShownCall(name=name, arguments=arguments, label=label)
        for name, arguments in found.items()
        if name
    )


def _record(item: Item, outcome: Outcome, output: JudgedOutput) -> Scored:
    """The turn as the suite's analyses read it: its outcome and its scores (as stored when
    they say whether it is right, else the reference variant's)."""
    scores = dict(output.scores)
    if not any(isinstance(scores.get(name), int | float) for name in _VERDICT_SCORES):
        task = TASKS.get(item.split)
        if task is None:
            raise NotATrace(f"MTU-Bench has no split {item.split!r}")
        scores = dict(score(outcome, item, Context(task=task), {}))
    return Scored(item=item, outcome=outcome, scores=scores)


def trace(item: Item, output: JudgedOutput | None) -> Trace:
    """The turn's dialogue and the model's answer to it (see the module docstring)."""
    given = item.input if isinstance(item.input, Mapping) else {}
    turns = given.get("turns")
    read = message_steps(turns if isinstance(turns, list) else [], per_turn=True)
    history = tuple(
        TraceStep(
            label=f"{step.label} (given)",
            calls=tuple(
                ShownCall(c.name, c.arguments, f"{step.label} (given)") for c in step.calls
            ),
            results=step.results,
            user=step.user,
            text=step.text,
        )
        for step in read.steps
    )
    label = f"turn {len(history) + 1}"
    query = given.get("query")
    user = read.pending_user or (query if isinstance(query, str) else "")
    try:
        multi = _multi_tool(item)
    except ValueError as error:
        raise NotATrace(str(error)) from None
    if output is None:
        gold = TraceStep(label=label, calls=_calls(_gold_calls(item), label), user=user)
        return Trace(steps=(gold,), schemas=_schemas(item), history=history)
    outcome = outcome_of(output)
    record = _record(item, outcome, output)
    wrong = wrong_turn(record)
    turn = TraceStep(
        label=label,
        calls=_calls(_predicted_calls(outcome, multi), label),
        user=user,
        text=output.text,
        auto_error=STEP_ERRORS.get(error_type(record)) if wrong else "",
    )
    return Trace(steps=(turn,), schemas=_schemas(item), auto_verdict=not wrong, history=history)
