"""BFCL's multi-turn entries read step by step (the suite's `trace` capability), for step-level
review.

One TraceStep per turn of the entry, not per call: BFCL's checker judges a turn (the classes'
state after it against the ground truth's, and the ground truth's results among the model's), and
the state is taken around a turn, so a turn is the unit whose verdict and state a reviewer can
check; each call of the turn is one of its calls, labelled with its step ("turn 2, step 1").
A step holds the turn's user message (a turn at which held-out functions come back says which),
every call the model made in it with its result as executed, the model's texts (the step
answers and the answer that ended the turn), and the state before and after the turn.

State: the scoring executes the model's calls again on fresh instances (multi_turn.run_entry,
in the run's worker) and records each turn's state before and after (stateful.Session.record);
the prediction's trace keeps them with each turn's verdict row (conversation._with_verdicts),
each attribute's value longer than STATE_VALUE_CHARS characters of JSON clipped
(stateful.bounded_snapshot), and they are read from there (stored_states). An answer scored
before its verdict rows kept them has its states recomputed the same way (turn_states: the
suite's own worker, multi_turn.run_isolated, one subprocess per trace under the worker's
limits, about 1 to 1.5 s per trace on the demo entries: the worker's start and the classes'
load dominate). Without the wheel, or when the worker fails, the states are None (the rest of
the trace reads the same).

auto_error, from the stored per-turn verdict (conversation.py, stateful.check_turn):
    passed, no_gold_calls        -> "" (the turn passed)
    no_calls                     -> "missed_call" (the ground truth calls, the model did not)
    state                        -> "wrong_state" (the suite's own: the classes' state after
                                    the turn differs from the ground truth's; which call was
                                    wrong, missing or extra the checker cannot tell)
    results                      -> "missing_result" (the suite's own: a result of the ground
                                    truth's calls is not among the model's: a lookup not made,
                                    or made otherwise)
    a failed turn with calls the worker could not read (refused) -> "format"
    missing_turn (never reached: the model was forced to quit or stopped) -> None
wrong_tool, wrong_argument and unnecessary_call it cannot tell apart (they show as a state or
a results difference). auto_verdict: the entry passed (BFCL's binary score).

Only the multi-turn categories have traces; a sample alone is an entry to answer, not a trace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.kit.context import JudgedOutput, ShownCall
from benchmarks.kit.protocol import Item
from benchmarks.kit.traces import NotATrace, StepError, Trace, TraceStep, result_value
from benchmarks.suites.bfcl import conversation, multi_turn
from benchmarks.suites.bfcl.gold import functions_of

__all__ = ["OWN_STEP_ERRORS", "STATE_VALUE_CHARS", "stored_states", "trace", "turn_states"]

STATE_VALUE_CHARS = conversation.STATE_VALUE_CHARS

OWN_STEP_ERRORS = (
    StepError(
        "wrong_state",
        "Wrong state after the turn",
        "The tools' state after the turn is not the ground truth's: a call was wrong, "
        "missing or one too many.",
    ),
    StepError(
        "missing_result",
        "Result not obtained",
        "A result the turn needed (one the ground truth's calls return) was never obtained.",
    ),
)
_KINDS = {
    "passed": "",
    "no_gold_calls": "",
    "no_calls": "missed_call",
    "state": "wrong_state",
    "results": "missing_result",
    "missing_turn": None,
}


def turn_states(item: Item, turns: Sequence[Any]) -> list[tuple[Any, Any]] | None:
    """(state before, state after) of each turn the model's stored calls (answer["turns"])
    reach, executed again by the suite's worker; None without the wheel or when the worker
    fails (see the module docstring). Only for an answer scored before its verdict rows kept
    the states (stored_states)."""
    try:
        source = conversation.wheel_source()
    except ValueError:
        return None
    result = multi_turn.run_isolated(source, multi_turn.entry_of(item), list(turns))
    return conversation.turn_states_of(result)


def stored_states(rows: Sequence[Mapping[str, Any]], reached: int) -> list[tuple[Any, Any]] | None:
    """The states the scoring kept with each turn's verdict row (conversation._with_verdicts),
    for the `reached` turns; None unless every one of them has its own."""
    kept = {
        row["turn"]: (row.get("state_before"), row.get("state_after"))
        for row in rows
        if "verdict" in row and "state_after" in row and isinstance(row.get("turn"), int)
    }
    if not all(turn in kept for turn in range(reached)):
        return None
    return [kept[turn] for turn in range(reached)]


def _user(item: Item, index: int, messages: Sequence[Mapping[str, Any]]) -> str:
    said = "\n".join(m["content"] for m in messages if m.get("role") == "user" and m["content"])
    held = conversation._held_at(item, index)
    if held:
        names = ", ".join(str(doc.get("name", "")) for doc in held)
        said = (said + "\n" if said else "") + f"(functions added at this turn: {names})"
    return said


def _auto_error(verdict: Mapping[str, Any] | None) -> str | None:
    if verdict is None:
        return None
    if not verdict.get("passed") and verdict.get("refused") and verdict.get("kind") != "no_calls":
        return "format"
    kind = verdict.get("kind")
    return _KINDS.get(kind) if isinstance(kind, str) else None


def trace(item: Item, output: JudgedOutput | None) -> Trace:
    """One multi-turn output's trace (see the module docstring)."""
    if item.split not in conversation.MULTI_TURN_CATEGORIES:
        raise NotATrace(f"only BFCL's multi-turn entries are traces; {item.split} is not one")
    if output is None:
        raise NotATrace("a BFCL entry is a conversation to answer, not a trace: review a run's")
    answer = output.answer
    if not isinstance(answer, Mapping) or not isinstance(answer.get("turns"), list):
        raise NotATrace("the output holds no conversation (a lone text answers no entry)")
    verdicts = {v.get("turn"): v for v in answer.get("verdicts") or () if isinstance(v, Mapping)}
    rows = [row for row in output.trace if isinstance(row, Mapping)]
    reached = len(answer["turns"])
    states = stored_states(rows, reached) if reached else None
    if states is None and reached:
        states = turn_states(item, answer["turns"])
    steps = []
    for index, messages in enumerate(conversation._turns(item)):
        label = f"turn {index + 1}"
        mine = [row for row in rows if row.get("turn") == index and "verdict" not in row]
        calls = []
        results = []
        texts = []
        for row in mine:
            output_text = row.get("output")
            if isinstance(output_text, str) and output_text.strip():
                texts.append(output_text)
            action = row.get("action")
            if isinstance(action, str) and action:
                step = row.get("step")
                where = f"{label}, step {step + 1}" if isinstance(step, int) else label
                calls.append(ShownCall(action, row.get("arguments"), where))
                results.append(result_value(row.get("observation")))
        reached = index < len(answer["turns"])
        before, after = (
            states[index] if states is not None and index < len(states) else (None, None)
        )
        steps.append(
            TraceStep(
                label=label if reached else f"{label} (not reached)",
                calls=tuple(calls),
                results=tuple(results),
                user=_user(item, index, messages),
                text="\n".join(texts),
                state_before=before,
                state_after=after,
                auto_error=_auto_error(verdicts.get(index)) if reached else None,
            )
        )
    accuracy = output.scores.get("accuracy")
    passed = (
        accuracy == 100.0
        if isinstance(accuracy, int | float)
        else (answer.get("passed") is True and not answer.get("force_quit"))
    )
    return Trace(
        steps=tuple(steps),
        final=output.text if isinstance(output.text, str) else "",
        schemas=functions_of(item.input if isinstance(item.input, Mapping) else {}),
        auto_verdict=passed,
    )
