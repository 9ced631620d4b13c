"""A suite, only in the test tree, whose outputs are agent traces (a suite's `trace`
capability): the generic suite with a trace hook and one error type of its own. An output's
trace is a list of steps {"name", "arguments", "result", "text", "auto_error", "before",
"after"}; a sample whose input holds "messages" is itself a trace (a transcript), read with
no output. Registered under SUITE_MODULES by the tests that use it."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from benchmarks.kit.context import JudgedOutput, ShownCall
from benchmarks.kit.protocol import Item
from benchmarks.kit.traces import NotATrace, StepError, Trace, TraceStep
from benchmarks.suites import generic

SCHEMAS = {
    "weather": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The city"},
            "days": {"type": "integer"},
            "unit": {"type": "string", "enum": ["C", "F"]},
        },
        "required": ["city"],
    },
    "news": {"type": "object", "properties": {"topic": {"type": "string"}}, "required": ["topic"]},
}
LOOP = StepError("loop", "Loop", "The same call again with nothing new.")


def _step(index: int, entry: dict[str, Any]) -> TraceStep:
    calls = ()
    results: tuple[Any, ...] = ()
    if entry.get("name"):
        calls = (ShownCall(entry["name"], entry.get("arguments") or {}, f"step {index + 1}"),)
        results = (entry.get("result"),)
    return TraceStep(
        label=entry.get("label") or f"step {index + 1}",
        calls=calls,
        results=results,
        user=entry.get("user", ""),
        text=entry.get("text", ""),
        state_before=entry.get("before"),
        state_after=entry.get("after"),
        auto_error=entry.get("auto_error"),
    )


def trace(item: Item, output: JudgedOutput | None) -> Trace:
    if output is None:
        messages = item.input.get("messages")
        if not isinstance(messages, list):
            raise NotATrace("its samples are questions; their traces are a run's outputs")
        entries = messages
    else:
        if not output.trace:
            raise NotATrace("the output made no step (it failed before its first call)")
        entries = list(output.trace)
    steps = tuple(_step(i, dict(entry)) for i, entry in enumerate(entries))
    return Trace(steps=steps, final=output.text if output else "", schemas=SCHEMAS)


SUITE = replace(generic.SUITE, name="trace_toy", trace=trace, own_step_errors=(LOOP,))
