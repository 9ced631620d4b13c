"""An agent's trace as a human reviews it step by step (a suite's `trace` capability).

A suite hands the step-level review (the `step_review` campaign kind) one output, or one sample
whose input is itself a trace (an imported transcript), as a `Trace`: its steps in order, each a
call and its result or a turn of a dialogue, with what the reviewer needs beside it (the tool's
schema, the state before and after where the suite executes tools, the suite's own automatic
verdict on the step). The suite also declares the error types a wrong step may have
(`StepError`): the common ones below, and any of its own.

Everything here is data: the studio escapes every string of it. Pure Python, no Django.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from benchmarks.kit.context import JudgedOutput, ShownCall
from benchmarks.kit.protocol import Item, Outcome

__all__ = [
    "COMMON_STEP_ERRORS",
    "MessageSteps",
    "NotATrace",
    "StepError",
    "Trace",
    "TraceHook",
    "TraceStep",
    "message_call",
    "message_steps",
    "message_text",
    "outcome_of",
    "result_value",
    "step_errors",
    "with_schemas",
]


@dataclass(frozen=True, slots=True)
class StepError:
    """One type of error a wrong step may have: its key (stored in labels), a short label and
    what it means to an annotator."""

    key: str
    label: str
    description: str = ""


# The error types every suite's steps may have; a suite adds its own (Suite.step_errors).
COMMON_STEP_ERRORS: tuple[StepError, ...] = (
    StepError("wrong_tool", "Wrong tool", "A tool was called, but not the one the step needed."),
    StepError(
        "wrong_argument",
        "Wrong or missing argument",
        "The right tool, with an argument wrong, missing or invented.",
    ),
    StepError(
        "hallucinated_result",
        "Hallucinated result",
        "The step states or uses a result no tool returned.",
    ),
    StepError("unnecessary_call", "Unnecessary call", "The call was not needed at this point."),
    StepError("missed_call", "Missed call", "A call the step needed was not made."),
    StepError("format", "Format", "The call or answer is malformed (syntax, schema, protocol)."),
)


def step_errors(extra: Sequence[StepError] = ()) -> tuple[StepError, ...]:
    """The common error types followed by a suite's own (a key of its own replaces none)."""
    keys = {error.key for error in COMMON_STEP_ERRORS}
    clash = [error.key for error in extra if error.key in keys]
    if clash:
        raise ValueError(f"error types already common to every suite: {', '.join(clash)}")
    return (*COMMON_STEP_ERRORS, *extra)


@dataclass(frozen=True, slots=True)
class TraceStep:
    """One step of a trace: a call and its result, or a turn (a user message, the calls it led
    to and their results, the assistant's reply).

    label: where it sits, as the reviewer reads it ("step 3", "turn 2").
    calls: the calls made at this step (none: a step that only answers or talks).
    results: what each call returned, in the calls' order (a tool's text or JSON value).
    user: the user's message that opened the step (a dialogue's turn), "" when none.
    text: what the assistant wrote at this step (its thought, reply or final answer).
    state_before / state_after: the tools' state around the step where the suite executes
      tools (BFCL's classes), None where it does not.
    auto_error: the suite's own verdict on the step from its scorer or analyses: "" when it
      found the step right, an error type's key when it found it wrong, None when it has none.
    """

    label: str
    calls: tuple[ShownCall, ...] = ()
    results: tuple[Any, ...] = ()
    user: str = ""
    text: str = ""
    state_before: Any = None
    state_after: Any = None
    auto_error: str | None = None


@dataclass(frozen=True, slots=True)
class Trace:
    """A trace to review: its steps in order, the final answer ("" when none), the JSON schema
    of each tool the trace offers or calls (name -> parameters schema), the suite's own
    verdict on the whole trace (True right, False wrong, None none), and what came before the
    steps that the output did not make (`history`: a dialogue's turns the benchmark gives),
    shown to the reviewer and never reviewed."""

    steps: tuple[TraceStep, ...]
    final: str = ""
    schemas: Mapping[str, Any] = field(default_factory=dict)
    auto_verdict: bool | None = None
    history: tuple[TraceStep, ...] = ()


class NotATrace(ValueError):
    """What a trace hook raises for an output (or a sample) that holds no trace to review; its
    message says why, for the researcher building the items."""


# (item, output) -> its trace; output None: the item's sample is itself the trace (an imported
# transcript). NotATrace when there is none (a suite whose samples are questions, given None).
TraceHook = Callable[[Item, JudgedOutput | None], Trace]


# --- helpers for the suites' trace hooks ----------------------------------------------------------


def result_value(value: Any) -> Any:
    """A tool's result as a reviewer reads it: a text holding a JSON object or list is read as
    that value; anything else (plain text, a cut JSON text) stays as it is."""
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value


def outcome_of(output: JudgedOutput) -> Outcome:
    """A judged output as the suite's scorer and analyses read an outcome (its text, answer,
    trace, note and native tool_calls, as the prediction stores them)."""
    trace = [step for step in output.trace if isinstance(step, dict)]
    tool_calls = output.tool_calls if isinstance(output.tool_calls, list) else None
    return Outcome(
        output=output.text,
        answer=output.answer,
        parsed=output.parsed is not False,
        trace=trace,
        note=output.note,
        tool_calls=tool_calls,
    )


def with_schemas(trace: Trace, known: Mapping[str, Any]) -> Trace:
    """The trace with the schemas of `known` (name -> parameters schema: the tools the sample
    offers, as the platform stores them) beside its hook's own, which win. A hook reads one
    sample and one output, never the benchmark's stored tools, so a suite whose samples name
    their tools by key only (StableToolBench's candidate tools) leaves those schemas to
    whoever holds the tools."""
    return replace(trace, schemas={**known, **trace.schemas})


# --- chat messages as steps ----------------------------------------------------------------------


def message_text(content: Any) -> str:
    """A chat message's content as text: a string as it is, a list of content parts as their
    texts (each part's "text", or the part as JSON), anything else as JSON ("" for none)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            else:
                parts.append(part if isinstance(part, str) else json.dumps(part, default=str))
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False, default=str)


def message_call(entry: Any) -> tuple[str, ShownCall]:
    """One entry of an assistant message's tool_calls, as OpenAI writes it ({"id", "type",
    "function": {"name", "arguments": a JSON text}}) or plainly ({"name", "arguments"}): its id
    ("" without one) and the call, its arguments read when they are a JSON text (kept as the
    text when they are not)."""
    if not isinstance(entry, Mapping):
        return "", ShownCall(name="", arguments=entry)
    function = entry.get("function")
    body = function if isinstance(function, Mapping) else entry
    name = body.get("name")
    arguments = body.get("arguments")
    if isinstance(arguments, str):
        with contextlib.suppress(ValueError, RecursionError):
            arguments = json.loads(arguments)
    ident = entry.get("id")
    return (
        ident if isinstance(ident, str) else "",
        ShownCall(name=name if isinstance(name, str) else "", arguments=arguments),
    )


@dataclass(slots=True)
class _Open:
    user: list[str] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    calls: list[ShownCall] = field(default_factory=list)
    results: list[Any] = field(default_factory=list)
    answered: list[bool] = field(default_factory=list)
    orphan: bool = False


@dataclass(frozen=True, slots=True)
class MessageSteps:
    """A message list read as steps: the steps in order, the user's text that no assistant
    message followed (the turn still to answer), and, per step, whether a call went unanswered
    or a tool result answered no call (`unmatched`, in the steps' order)."""

    steps: tuple[TraceStep, ...]
    pending_user: str
    unmatched: tuple[bool, ...]


def message_steps(messages: Sequence[Any], *, per_turn: bool = False) -> MessageSteps:
    """Chat messages (OpenAI's shape: system / user / assistant with `tool_calls` / tool with
    `tool_call_id`) as steps: one per assistant message ("step N"), or with per_turn one per
    user turn ("turn N": the assistant messages after a user message together). A step holds
    the user's text before it, the assistant's text, its calls and each call's result, matched
    by tool_call_id, else (a tool message without one) to the earliest unanswered call of the
    step; an unanswered call's result is None. A tool result that answers no call is a step of
    its own ("tool result without a call": no call, the result alone). System and developer
    messages, and entries that are not messages, are left out; a message of another role
    counts as the user's. Nothing is refused: a transcript's importer checks the messages
    first."""
    opened: list[_Open] = []
    current: _Open | None = None
    pending: list[str] = []
    by_id: dict[str, tuple[_Open, int]] = {}

    def start(**given: Any) -> _Open:
        nonlocal pending
        step = _Open(user=pending, **given)
        opened.append(step)
        pending = []
        return step

    for message in messages:
        if not isinstance(message, Mapping):
            continue
        role = message.get("role")
        if role in ("system", "developer"):
            continue
        if role == "assistant":
            if current is None or not per_turn or current.orphan:
                current = start()
            text = message_text(message.get("content"))
            if text:
                current.text.append(text)
            calls = message.get("tool_calls")
            for entry in calls if isinstance(calls, list) else ():
                ident, call = message_call(entry)
                if ident:
                    by_id[ident] = (current, len(current.calls))
                current.calls.append(call)
                current.results.append(None)
                current.answered.append(False)
        elif role in ("tool", "function"):
            result = result_value(message_text(message.get("content")))
            answers = message.get("tool_call_id")
            target = by_id.pop(answers, None) if isinstance(answers, str) and answers else None
            if target is None and current is not None and not answers:
                free = [i for i, done in enumerate(current.answered) if not done]
                target = (current, free[0]) if free else None
            if target is None:
                start(results=[result], orphan=True)
                current = None
                continue
            step, index = target
            step.results[index] = result
            step.answered[index] = True
        else:
            current = None
            text = message_text(message.get("content"))
            if text:
                pending.append(text)
    steps = []
    for number, step in enumerate(opened, start=1):
        label = f"turn {number}" if per_turn else f"step {number}"
        if step.orphan:
            label += ": tool result without a call"
        steps.append(
            TraceStep(
                label=label,
                calls=tuple(replace(c, label=c.label or label) for c in step.calls),
                results=tuple(step.results),
                user="\n".join(step.user),
                text="\n".join(step.text),
            )
        )
    unmatched = [step.orphan or not all(step.answered) for step in opened]
    return MessageSteps(
        steps=tuple(steps), pending_user="\n".join(pending), unmatched=tuple(unmatched)
    )
