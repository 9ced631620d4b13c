"""The chat completions API (POST /chat/completions): the prompt's messages, and its tools in a
native run; the answer is the first choice's message, its content and tool_calls."""

from __future__ import annotations

from typing import Any

from benchmarks.kit.protocol import Prompt
from evaluation.work.styles.base import PostedStyle, Unusable, without_none


class Chat(PostedStyle):
    name = "chat"
    label = "Chat (messages)"
    prompt_form = "chat"
    native_tools = True
    path = "/chat/completions"

    def fields(self, prompt: Prompt) -> dict[str, Any]:
        return prompt.request("chat")

    def read_choice(self, choice: dict[str, Any]) -> tuple[Any, list[dict[str, Any]]]:
        message = choice.get("message")
        if not isinstance(message, dict):
            raise Unusable("the answer's first choice had no message")
        calls = message.get("tool_calls") or []
        if not isinstance(calls, list) or not all(isinstance(c, dict) for c in calls):
            raise Unusable("the answer's tool_calls were not a list of objects")
        return message.get("content"), [without_none(call) for call in calls]


STYLE = Chat()
