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

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from benchmarks.kit.context import JudgedOutput, ShownCall
from benchmarks.kit.protocol import Item

__all__ = [
    "COMMON_STEP_ERRORS",
    "NotATrace",
    "StepError",
    "Trace",
    "TraceHook",
    "TraceStep",
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
    of each tool the trace offers or calls (name -> parameters schema), and the suite's own
    verdict on the whole trace (True right, False wrong, None none)."""

    steps: tuple[TraceStep, ...]
    final: str = ""
    schemas: Mapping[str, Any] = field(default_factory=dict)
    auto_verdict: bool | None = None


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
        except ValueError:
            return value
    return value


def with_schemas(trace: Trace, known: Mapping[str, Any]) -> Trace:
    """The trace with the schema of each tool it calls that its hook could not give, taken
    from `known` (name -> parameters schema: the sample's tools as the platform stores them);
    the hook's own schemas win. A hook reads one sample and one output, never the benchmark's
    tools, so a suite whose samples name their tools by key (StableToolBench's candidate
    tools) leaves those schemas to whoever holds the tools."""
    called = [call.name for step in trace.steps for call in step.calls]
    schemas = dict(trace.schemas)
    for name in called:
        if name not in schemas and name in known:
            schemas[name] = known[name]
    return replace(trace, schemas=schemas)
