"""The generic suite's tool_calls task in native tool mode: the request and the answer. Pure
Python.

The request (`native_prompt`): a system message saying what to do (call the tools the request
needs, or answer in text), then the sample's conversation (protocol.native_history): an
assistant turn's calls as `tool_calls`, a tool turn as the `tool` message answering them; the
sample's tools declared as function tools (their JSON Schemas; a tool the benchmark has no
definition of is declared by its name alone). The text prompt's examples are not shown: a
native model is told the call format by the API, not by examples (a native run is zero-shot).

The answer (`native_outcome`): the calls of the message's tool_calls, in order, as
parse_tool_calls() gives them ([{"name", "arguments"}]; [] for none); a message without
tool_calls is read by the text rule, and a call written in its text is a leaked call
(protocol.read_native_reply), its tool names (the API names the model was shown) read back as
the benchmark's.
"""

from __future__ import annotations

from typing import Any

from benchmarks.kit.native import ToolNames, sanitize_name
from benchmarks.kit.protocol import (
    Context,
    Item,
    NativePrompt,
    NativeReply,
    Outcome,
    Prompt,
    ToolSpec,
    default_declare_tools,
    native_history,
    read_native_reply,
)
from benchmarks.suites.generic.evaluate import parse_tool_calls

__all__ = ["NATIVE_INSTRUCTIONS", "native_answer", "native_outcome", "native_prompt"]

NATIVE_INSTRUCTIONS = (
    "You can call the tools you are given. Decide the assistant's next move: call one or more "
    "of them, in the order they should run, or none when the request needs no tool (then "
    "answer in text)."
)


def _specs(item: Item, ctx: Context) -> list[ToolSpec]:
    return [ctx.tools.get(name) or ToolSpec(name) for name in dict.fromkeys(item.candidate_tools)]


def _api_name(name: str, names: ToolNames) -> str:
    return names.to_api(name) if name in names else sanitize_name(name)


def _turns(item: Item) -> list[Any]:
    turns = item.input.get("turns")
    if isinstance(turns, list) and turns:
        return turns
    return [{"role": "user", "content": str(item.input.get("query", ""))}]


def native_prompt(item: Item, ctx: Context, context: dict[str, Any]) -> NativePrompt:
    declared = default_declare_tools(_specs(item, ctx))
    history = native_history(_turns(item), lambda name: _api_name(name, declared.names))
    messages = [{"role": "system", "content": NATIVE_INSTRUCTIONS}, *history]
    return NativePrompt(Prompt(messages=messages, tools=declared.tools), declared.names)


def native_answer(
    calls: list[dict[str, Any]], item: Item, ctx: Context, context: dict[str, Any]
) -> list[dict[str, Any]]:
    return [{"name": call["name"], "arguments": call.get("arguments") or {}} for call in calls]


def native_outcome(
    reply: NativeReply, item: Item, ctx: Context, context: dict[str, Any]
) -> Outcome:
    outcome = read_native_reply(
        reply,
        lambda calls: native_answer(calls, item, ctx, context),
        lambda text: parse_tool_calls(text, item, ctx, context),
        lambda answer: isinstance(answer, list) and bool(answer),
    )
    if outcome.leaked and isinstance(outcome.answer, list):
        # The text rule reads the names the model wrote: the API names it was shown.
        for call in outcome.answer:
            call["name"] = reply.names.from_api(call["name"]) or call["name"]
    return outcome
