"""An API style that exists only in the test tree: "single-turn", for chat servers whose template
takes one user turn. It posts to the chat path with the whole conversation as one user message
(each earlier turn as "<role>: <text>" lines) and reads the first choice's message content. It
declares no tools and writes for chat prompts; registered by tests/evaluation/test_toy_style.py
through the registry alone."""

from __future__ import annotations

from typing import Any

from benchmarks.kit.protocol import Prompt
from evaluation.work.styles import PostedStyle, Unusable


class SingleTurn(PostedStyle):
    name = "single-turn"
    label = "Single turn (the conversation as one user message)"
    prompt_form = "chat"
    native_tools = False
    path = "/chat/completions"

    def fields(self, prompt: Prompt) -> dict[str, Any]:
        chat = prompt.request("chat")
        lines = [f"{m['role']}: {m.get('content') or ''}" for m in chat.pop("messages")]
        return {"messages": [{"role": "user", "content": "\n".join(lines)}], **chat}

    def read_choice(self, choice: dict[str, Any]) -> tuple[Any, list[dict[str, Any]]]:
        message = choice.get("message")
        if not isinstance(message, dict):
            raise Unusable("the answer's first choice had no message")
        return message.get("content"), []


STYLE = SingleTurn()
