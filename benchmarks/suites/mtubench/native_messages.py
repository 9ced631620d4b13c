"""MTU-Bench in native tool mode: the request and the answer. Pure Python.

The request (`native_prompt`): a system message with the sample's date line, then the dialogue
the importer read out of the published question (input["turns"]) as chat messages
(protocol.native_history): user turns as they are; an assistant turn that called tools as an
assistant message whose content is its Thought and whose `tool_calls` are those calls, each
answered by a `tool` message with the observation the data holds (M-M's `Action: {...}` lines
record none: the tool message says so, since the API wants every call answered); an M-S
function block without a call is its Thought as an assistant message; replies are assistant
messages. The sample's own API list (input["tools"], the definitions its question shows) is
declared with `declare_tools`. In the multi-tool settings (S-M, M-M, OOD multi-tool records) a
gold argument may name an earlier call's output as "ToolName.field", so there every parameter
also accepts a string and its description says so.

The answer (`native_outcome`): the calls of the message's tool_calls, in order, as parse() gives
them ({"calls": [{"name", "arguments"}]}; a tool called twice keeps its first position and its
last arguments, as the text parser keys calls by name), with a "Tool.field" value written with
a tool's API name turned back into the benchmark's name. No tool_calls: the text is read by the
text rule (protocol.read_native_reply).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
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
    native_history,
    read_native_reply,
)
from benchmarks.suites.mtubench.evaluate import _multi_tool, parse, setting_of
from benchmarks.suites.mtubench.native import declare_tools

__all__ = ["NATIVE_SYSTEM", "native_answer", "native_outcome", "native_prompt"]

NATIVE_SYSTEM = (
    "You are a helpful assistant. Call the tools you are given when the user's request needs "
    "them, with the arguments the conversation supports; when it needs no tool, answer in text."
)
TODAY = "Today is {today}."
REFERENCE_NOTE = 'The value may also be an earlier call\'s result, written as "ToolName.field".'


def _specs(item: Item) -> list[ToolSpec]:
    tools = item.input.get("tools") if isinstance(item.input, dict) else None
    specs: list[ToolSpec] = []
    for tool in tools or []:
        if not isinstance(tool, Mapping) or not isinstance(tool.get("name"), str):
            continue
        parameters = tool.get("parameters")
        returns = tool.get("returns")
        specs.append(
            ToolSpec(
                name=tool["name"],
                description=str(tool.get("description") or ""),
                parameters=dict(parameters) if isinstance(parameters, Mapping) else {},
                returns=dict(returns) if isinstance(returns, Mapping) else {},
            )
        )
    return specs


def _accept_references(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each parameter also takes a string (an earlier call's "ToolName.field")."""
    widened = copy.deepcopy(tools)
    for tool in widened:
        properties = tool["function"]["parameters"].get("properties", {})
        for schema in properties.values():
            kind = schema.get("type")
            if kind is not None:
                kinds = kind if isinstance(kind, list) else [kind]
                if "string" not in kinds:
                    schema["type"] = [*kinds, "string"]
            text = schema.get("description", "")
            schema["description"] = f"{text} {REFERENCE_NOTE}".strip()
    return widened


def _api_name(name: str, names: ToolNames) -> str:
    return names.to_api(name) if name in names else sanitize_name(name)


def native_prompt(item: Item, ctx: Context, context: dict[str, Any]) -> NativePrompt:
    """The dialogue as chat messages with tool calls, and the sample's APIs declared."""
    declared = declare_tools(_specs(item))
    tools = _accept_references(declared.tools) if _multi_tool(item) else declared.tools
    system = NATIVE_SYSTEM
    today = item.metadata.get("today") if isinstance(item.metadata, dict) else None
    if today:
        system = f"{system}\n{TODAY.format(today=today)}"
    turns = item.input.get("turns") if isinstance(item.input, dict) else None
    history = native_history(turns or [], lambda name: _api_name(name, declared.names))
    if not any(m["role"] == "user" for m in history):
        query = item.input.get("query") or item.input.get("prompt") or ""
        history.append({"role": "user", "content": str(query)})
    setting_of(item)  # an unknown split is refused here as in text mode
    prompt = Prompt(messages=[{"role": "system", "content": system}, *history], tools=tools)
    return NativePrompt(prompt, declared.names)


def _references_back(value: Any, names: ToolNames) -> Any:
    """ "ApiName.field" -> "ToolName.field" for a tool whose API name differs."""
    if not isinstance(value, str) or "." not in value:
        return value
    head, _, tail = value.partition(".")
    original = names.from_api(head)
    return f"{original}.{tail}" if original is not None and original != head else value


def native_answer(
    calls: list[dict[str, Any]], item: Item, ctx: Context, context: dict[str, Any]
) -> dict[str, Any]:
    """Calls as parse() answers: {"calls": [...]}, one per tool name (first position, last
    arguments) as MTU-Eval's parsers key them; a single-tool turn keeps its first call."""
    keyed: dict[str, dict[str, Any]] = {}
    for call in calls:
        keyed[str(call["name"])] = dict(call.get("arguments") or {})
    ordered = list(keyed.items())
    if not _multi_tool(item):
        first = str(calls[0]["name"]) if calls else None
        ordered = [(first, keyed[first])] if first is not None else []
    return {"calls": [{"name": name, "arguments": args} for name, args in ordered]}


def native_outcome(
    reply: NativeReply, item: Item, ctx: Context, context: dict[str, Any]
) -> Outcome:
    names = declare_tools(_specs(item)).names
    for call in reply.calls:
        if call.arguments:
            for key, value in call.arguments.items():
                call.arguments[key] = _references_back(value, names)
    return read_native_reply(
        reply,
        lambda calls: native_answer(calls, item, ctx, context),
        lambda text: parse(text, item, ctx, context),
        lambda answer: bool(answer.get("calls")) if isinstance(answer, dict) else False,
    )
