"""The completions API (POST /completions), for base models: the prompt's text form (the suite's
own, or its messages rendered), never tools; the answer is the first choice's text."""

from __future__ import annotations

from typing import Any

from benchmarks.kit.protocol import Prompt
from evaluation.work.styles.base import PostedStyle


class Completion(PostedStyle):
    name = "completion"
    label = "Completion (text prompt; base models)"
    prompt_form = "completion"
    native_tools = False
    path = "/completions"

    def fields(self, prompt: Prompt) -> dict[str, Any]:
        return prompt.request("completion")

    def read_choice(self, choice: dict[str, Any]) -> tuple[Any, list[dict[str, Any]]]:
        return choice.get("text"), []


STYLE = Completion()
