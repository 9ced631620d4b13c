"""What an API style is: how a prompt becomes the body sent, where and how it is sent, and how the
answer is read into the platform's Reply. Pure Python, no Django (the caller runs it)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from benchmarks.kit.protocol import Prompt, Style

if TYPE_CHECKING:
    import openai

# How a style posts its body, with the endpoint's key alone (as the client's create() sends it:
# no other key the client finds in the environment).
BEARER_ONLY: Any = {"security": {"bearer_auth": True}}

TOKEN_FIELDS = ("prompt_tokens", "completion_tokens", "cached_tokens")


@dataclass
class Reply:
    text: str
    usage: dict[str, int] = field(default_factory=dict)
    finish_reason: str | None = None
    cached: bool = False
    attempts: int = 0  # HTTP attempts made (0 for a cache hit)
    # The message's tool_calls as the server sent them (native tool calling), [] when none.
    tool_calls: list[dict[str, Any]] = field(default_factory=list)


class Unusable(Exception):
    """A 200 whose body cannot be used (no choices, no text): retried as transient."""


def token_counts(usage: Mapping[str, Any] | None) -> dict[str, int]:
    """The tokens of one call as the server reported them, in one shape whatever the API:
    prompt, completion and cached (prompt tokens served from the provider's prompt cache, a
    part of the prompt tokens). Chat and completions say prompt_tokens, completion_tokens and
    prompt_tokens_details.cached_tokens; the Responses API input_tokens, output_tokens and
    input_tokens_details.cached_tokens. {} when the server reported nothing."""
    if not usage:
        return {}

    def count(*path: str) -> int:
        value: Any = usage
        for name in path:
            value = value.get(name) if isinstance(value, Mapping) else None
        return value if isinstance(value, int) and value > 0 else 0

    if "input_tokens" in usage or "output_tokens" in usage:
        prompt, completion = count("input_tokens"), count("output_tokens")
        cached = count("input_tokens_details", "cached_tokens")
    else:
        prompt, completion = count("prompt_tokens"), count("completion_tokens")
        cached = count("prompt_tokens_details", "cached_tokens")
    return {"prompt_tokens": prompt, "completion_tokens": completion, "cached_tokens": cached}


def without_none(value: Any) -> Any:
    """A JSON value without the members that are null (as the client's model_dump(
    exclude_none=True) gave a tool call)."""
    if isinstance(value, dict):
        return {k: without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_none(v) for v in value]
    return value


class ApiStyle(ABC):
    """One way of asking an OpenAI-compatible server. A subclass sets the class attributes and
    implements `fields` and `send`; `body` has a default. One instance per style, registered by
    `name` (evaluation.work.styles); everything the platform does differently per style asks it.

    - `prompt_form`: the form of a Prompt the style sends and the suites write for
      (Context.style, Prompt.request): "completion" (one text, base models) or "chat";
    - `native_tools`: whether its requests can declare tools (tool_mode=native runs).
    """

    name: ClassVar[str]
    label: ClassVar[str]
    prompt_form: ClassVar[Style] = "chat"
    native_tools: ClassVar[bool] = False

    @abstractmethod
    def fields(self, prompt: Prompt) -> dict[str, Any]:
        """The body fields a prompt gives in this style (what a prediction shows as its
        request; model and parameters come from the run)."""

    def body(self, prompt: Prompt, model: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """The exact body sent, which the response cache key hashes: the model, the run's
        parameters, then the prompt's fields (the prompt's own stop/max_tokens win over the
        run's, since the suite knows its answer format)."""
        body = {"model": model, **params}
        body.update(self.fields(prompt))
        return body

    @abstractmethod
    async def send(self, client: openai.AsyncOpenAI, body: dict[str, Any]) -> Reply:
        """One HTTP attempt with `body` (the caller retries, caches and limits around it).
        Raises the client's errors, or Unusable for an answer that cannot be read."""

    def __repr__(self) -> str:
        return f"<API style {self.name}>"


class PostedStyle(ApiStyle):
    """A style whose body is posted as it is to `path` and answered with `choices` (chat and
    completions): through the client (its auth, timeout and errors) but not its typed
    create(), which checks every parameter's name (a server's own, like top_k, was a
    TypeError) and rebuilds the body and the answer through its types, costing more CPU than
    the rest of the call."""

    path: ClassVar[str]

    @abstractmethod
    def read_choice(self, choice: dict[str, Any]) -> tuple[Any, list[dict[str, Any]]]:
        """The first choice's text (None for none) and tool calls; Unusable when it has
        neither in the style's shape."""

    async def send(self, client: openai.AsyncOpenAI, body: dict[str, Any]) -> Reply:
        answer = await client.post(self.path, body=body, cast_to=object, options=BEARER_ONLY)
        if not isinstance(answer, dict):
            raise Unusable("the answer was not a JSON object")
        choices = answer.get("choices")
        if not choices or not isinstance(choices, list):
            raise Unusable("the answer had no choices")
        choice = choices[0]
        if not isinstance(choice, dict):
            raise Unusable("the answer's first choice was not an object")
        text, tool_calls = self.read_choice(choice)
        if text is not None and not isinstance(text, str):
            raise Unusable("the answer's text was not a string")
        finish = choice.get("finish_reason")
        usage = answer.get("usage")
        return Reply(
            text=text or "",
            usage=token_counts(usage if isinstance(usage, dict) else None),
            finish_reason=finish if isinstance(finish, str) else None,
            tool_calls=tool_calls,
        )
