"""The Responses API (POST /responses), asked with the chat form of a prompt: system and
developer messages become the instructions, the others the input; a native run's calls, results
and tools in the Responses API's words (evaluation.work.native_responses). The answer is the text
of its `message` output items and its `function_call` items as chat tool_calls."""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from benchmarks.kit.protocol import Prompt
from evaluation.work.native_responses import chat_tool_calls, responses_native_fields
from evaluation.work.styles.base import ApiStyle, Reply, Unusable, token_counts

if TYPE_CHECKING:
    import openai


def responses_fields(chat: Mapping[str, Any]) -> dict[str, Any]:
    """A chat request's fields for the Responses API: system (and developer) messages become
    the instructions, the others the input (as role/content messages), max_tokens
    max_output_tokens. The Responses API has no stop sequences: `stop` stays in the body we
    keep (and in the cache key) but is not sent; the answer is cut at the first one instead."""
    messages = list(chat.get("messages") or [])
    instructions = [
        str(m.get("content") or "") for m in messages if m.get("role") in ("system", "developer")
    ]
    # Input messages are user or assistant; a text prompt's other turns (an observation
    # written as a tool message) are what the model is told, so they go as user turns.
    fields: dict[str, Any] = {
        "input": [
            {
                "role": m.get("role") if m.get("role") == "assistant" else "user",
                "content": m.get("content"),
            }
            for m in messages
            if m.get("role") not in ("system", "developer")
        ]
    }
    if instructions:
        fields["instructions"] = "\n\n".join(instructions)
    if chat.get("max_tokens") is not None:
        fields["max_output_tokens"] = chat["max_tokens"]
    if chat.get("stop"):
        fields["stop"] = list(chat["stop"])
    return fields


def cut_at_stop(text: str, stop: Sequence[str] | None) -> tuple[str, bool]:
    """The text up to the first stop sequence, and whether one was found."""
    ends = [text.find(s) for s in stop or () if s and s in text]
    return (text[: min(ends)], True) if ends else (text, False)


_RESPONSES_ARGUMENTS: frozenset[str] | None = None


def responses_arguments() -> frozenset[str]:
    """The parameters the openai client's responses.create takes by name; the others a run
    sets (e.g. seed) go in extra_body, for the server to accept or refuse."""
    global _RESPONSES_ARGUMENTS
    if _RESPONSES_ARGUMENTS is None:
        # Here, not at the top: the client library loads only in processes that call.
        from openai.resources.responses import AsyncResponses

        names = inspect.signature(AsyncResponses.create).parameters
        _RESPONSES_ARGUMENTS = frozenset(n for n in names if n != "self")
    return _RESPONSES_ARGUMENTS


class Responses(ApiStyle):
    name = "responses"
    label = "Responses API (OpenAI /v1/responses)"
    # Suites write chat prompts for it; this style turns them into instructions and input.
    prompt_form = "chat"
    native_tools = True

    def fields(self, prompt: Prompt) -> dict[str, Any]:
        if prompt.tools:
            # A native request: its calls, results and tools in the Responses API's words.
            return responses_native_fields(prompt.request("chat"))
        return responses_fields(prompt.request("chat"))

    def body(self, prompt: Prompt, model: str, params: Mapping[str, Any]) -> dict[str, Any]:
        body = super().body(prompt, model, params)
        # The run's max_tokens, in the Responses API's word (the prompt's own wins).
        for name in ("max_tokens", "max_completion_tokens"):
            if name in body:
                body.setdefault("max_output_tokens", body.pop(name))
        return body

    async def send(self, client: openai.AsyncOpenAI, body: dict[str, Any]) -> Reply:
        # Through the typed create(): its fields are the Responses API's own, and the others
        # go in extra_body. The body is the cache key's, so it is taken apart in a copy.
        fields = dict(body)
        stop = fields.pop("stop", None)
        known = responses_arguments()
        extra = {name: fields.pop(name) for name in list(fields) if name not in known}
        response = await client.responses.create(**fields, extra_body=extra or None)
        texts = [
            part.text
            for item in response.output or []
            if item.type == "message"
            for part in item.content
            if part.type == "output_text"
        ]
        tool_calls = chat_tool_calls(response.output)
        if not texts and not tool_calls and response.status == "failed":
            raise Unusable("the response failed")
        text, stopped = cut_at_stop("".join(texts), stop)
        details = response.incomplete_details
        finish = "stop"
        if response.status == "incomplete" and not stopped:
            reason = details.reason if details is not None else None
            finish = "length" if reason == "max_output_tokens" else str(reason or "incomplete")
        usage = token_counts(response.usage.model_dump() if response.usage is not None else None)
        return Reply(text=text, usage=usage, finish_reason=finish, tool_calls=tool_calls)


STYLE = Responses()
