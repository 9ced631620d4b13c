"""A native (tools declared) chat request in the Responses API's words, and a response's
function calls in the chat API's, so that native runs can go through the `responses` endpoint
style with the same suites, cache and readers. Pure Python, no Django.

Request (`responses_native_fields`, from the chat body a Prompt gives): system and developer
messages become `instructions`; user and assistant texts stay role/content messages; an
assistant message's `tool_calls` become `function_call` items (call_id, name, arguments) after
its text; a `tool` message becomes the `function_call_output` item of its call_id; `tools` are
the same functions with name, description and parameters beside "type"; a `tool_choice` naming
a function ({"type": "function", "function": {"name"}}) becomes {"type": "function", "name"};
max_tokens is max_output_tokens.

Answer (`chat_tool_calls`): the response's `function_call` output items, in order, as chat
`tool_calls` entries ({"id", "type": "function", "function": {"name", "arguments"}}), so a
prediction stores one shape and benchmarks.kit.native.read_tool_calls reads it.

The responses style (evaluation/work/styles/responses.py) uses both for a prompt that declares
tools.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["chat_tool_calls", "responses_native_fields"]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return "" if content is None else str(content)


def _input(messages: Iterable[Any]) -> tuple[list[str], list[dict[str, Any]]]:
    instructions: list[str] = []
    items: list[dict[str, Any]] = []
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        role = message.get("role")
        if role in ("system", "developer"):
            instructions.append(_text(message.get("content")))
        elif role == "tool":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": str(message.get("tool_call_id") or ""),
                    "output": _text(message.get("content")),
                }
            )
        else:
            text = _text(message.get("content"))
            calls = message.get("tool_calls") or []
            if text or not calls:
                items.append({"role": role, "content": text})
            for call in calls:
                function = call.get("function") or {}
                items.append(
                    {
                        "type": "function_call",
                        "call_id": str(call.get("id") or ""),
                        "name": str(function.get("name") or ""),
                        "arguments": str(function.get("arguments") or "{}"),
                    }
                )
    return instructions, items


def _tool_choice(choice: Any) -> Any:
    if isinstance(choice, Mapping) and isinstance(choice.get("function"), Mapping):
        return {"type": "function", "name": choice["function"].get("name")}
    return choice


def responses_native_fields(chat: Mapping[str, Any]) -> dict[str, Any]:
    """The Responses API fields of a chat request's body (see the module docstring); the
    fields this module does not know (temperature, stop, parallel_tool_calls ...) are kept."""
    instructions, items = _input(chat.get("messages") or [])
    fields: dict[str, Any] = {
        key: value
        for key, value in chat.items()
        if key not in ("messages", "tools", "tool_choice", "max_tokens")
    }
    fields["input"] = items
    if instructions:
        fields["instructions"] = "\n\n".join(instructions)
    if chat.get("tools"):
        fields["tools"] = [
            {"type": "function", **tool["function"]}
            for tool in chat["tools"]
            if isinstance(tool, Mapping) and isinstance(tool.get("function"), Mapping)
        ]
    if "tool_choice" in chat:
        fields["tool_choice"] = _tool_choice(chat["tool_choice"])
    if chat.get("max_tokens") is not None:
        fields["max_output_tokens"] = chat["max_tokens"]
    return fields


def _field(value: Any, key: str) -> Any:
    if isinstance(value, Mapping):
        return value.get(key)
    return getattr(value, key, None)  # an openai client object


def chat_tool_calls(output: Iterable[Any] | None) -> list[dict[str, Any]]:
    """A response's function_call items as chat tool_calls, in order ([] when none)."""
    calls: list[dict[str, Any]] = []
    for item in output or []:
        if _field(item, "type") != "function_call":
            continue
        calls.append(
            {
                "id": str(_field(item, "call_id") or _field(item, "id") or ""),
                "type": "function",
                "function": {
                    "name": str(_field(item, "name") or ""),
                    "arguments": _field(item, "arguments") or "",
                },
            }
        )
    return calls
