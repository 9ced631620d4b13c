"""A transcript read step by step (the suite's `trace` capability): the sample is the trace.

One step per assistant message (kit.traces.message_steps): the user's messages before it, the
assistant's text, its calls (arguments read from their JSON text) and each call's result,
matched by tool_call_id. A tool message answering no call of the transcript is a step of its
own ("step N: tool result without a call"), its result shown, with no call.

auto_error: "format" on a step where the protocol breaks, a call that no tool message answers
or a tool result that answers no call (OpenAI's API refuses either in a request; in a log they
mean a cut conversation, a crashed tool or a mixed-up id); None on every other step: a
transcript carries no gold, so the suite has no verdict on a step. auto_verdict None. The
final answer is the text of the last assistant message that makes no call ("" when the
transcript ends on a call). Schemas: the transcript's own tools (name -> parameters).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from benchmarks.kit.context import JudgedOutput
from benchmarks.kit.protocol import Item
from benchmarks.kit.traces import NotATrace, Trace, message_steps

__all__ = ["trace"]


def _schemas(tools: Any) -> dict[str, Any]:
    schemas: dict[str, Any] = {}
    for tool in tools if isinstance(tools, list) else ():
        if not isinstance(tool, Mapping):
            continue
        function = tool.get("function")
        spec = function if isinstance(function, Mapping) else tool
        if isinstance(spec.get("name"), str):
            parameters = spec.get("parameters")
            schemas.setdefault(spec["name"].strip(), parameters if parameters is not None else {})
    return schemas


def trace(item: Item, output: JudgedOutput | None) -> Trace:
    """The transcript a sample holds (see the module docstring)."""
    if output is not None:
        raise NotATrace("a transcript is reviewed as it was imported: its sample is the trace")
    given = item.input if isinstance(item.input, Mapping) else {}
    messages = given.get("messages")
    if not isinstance(messages, list):
        raise NotATrace("the sample holds no messages")
    read = message_steps(messages)
    if not read.steps:
        raise NotATrace("the transcript has no assistant message")
    steps = tuple(
        replace(step, auto_error="format" if unmatched else None)
        for step, unmatched in zip(read.steps, read.unmatched, strict=True)
    )
    last = steps[-1]
    final = last.text if not last.calls and not last.results else ""
    return Trace(steps=steps, final=final, schemas=_schemas(given.get("tools")))
