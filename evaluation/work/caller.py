"""Calling an OpenAI-compatible endpoint the way a long evaluation needs: through the response
cache, under the endpoint's shared concurrency and rate limits, retrying what is transient.

No Django here: the engine hands in the endpoint's settings, the cache and the limits.

Retried, with exponential backoff and jitter (at most `max_attempts` attempts per call):
429 (waiting at least what Retry-After / retry-after-ms says), 408, 409, 5xx, timeouts,
connection errors, and answers that are not usable (a body cut off mid-JSON, no choices).
Not retried: other 4xx (a bad request or key stays bad). A call that exhausts its attempts
raises CallFailed with the last reason, which the item keeps as its error.
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import inspect
import json
import random
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, Protocol

from benchmarks.kit.protocol import CallFailed, Prompt, Style
from evaluation.work.addresses import normalised_base_url
from evaluation.work.limits import Lane, RateLimit, Slots
from evaluation.work.native_responses import chat_tool_calls, responses_native_fields

if TYPE_CHECKING:
    # Imported where used: the client library is seconds of start-up for every process that
    # sets Django up (admin pages import this module), most of which never call an endpoint.
    import openai

BACKOFF_BASE = 0.5
BACKOFF_CAP = 30.0
RETRY_AFTER_CAP = 120.0
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})

# Where Caller._send posts each style's body, with the endpoint's key alone (as the client's
# create() sends it: no other key the client finds in the environment).
API_PATHS = {"chat": "/chat/completions", "completion": "/completions"}
BEARER_ONLY: Any = {"security": {"bearer_auth": True}}


@dataclass(frozen=True)
class Origin:
    """Who gives an answer: the server (its base URL, normalised), the model and the API style.
    Part of every response cache key, so that an answer is only ever reused for the server
    that gave it: two endpoints with one model name and one request share nothing."""

    base_url: str
    model: str
    style: str

    @classmethod
    def of(cls, base_url: str, model: str, style: str) -> Origin:
        return cls(normalised_base_url(base_url), model, style)


@dataclass(frozen=True)
class EndpointConfig:
    id: int
    base_url: str
    model: str
    # Never in a repr (a log line, a traceback's locals): the key is the endpoint owner's.
    api_key: str = field(repr=False)
    style: Style
    params: Mapping[str, Any]
    timeout: float
    max_attempts: int
    max_concurrency: int
    requests_per_minute: int | None

    @cached_property
    def origin(self) -> Origin:
        # Once per config: every call's cache key names it.
        return Origin.of(self.base_url, self.model, self.style)


@dataclass
class Reply:
    text: str
    usage: dict[str, int] = field(default_factory=dict)
    finish_reason: str | None = None
    cached: bool = False
    attempts: int = 0  # HTTP attempts made (0 for a cache hit)
    # The message's tool_calls as the server sent them (native tool calling), [] when none.
    tool_calls: list[dict[str, Any]] = field(default_factory=list)


class Cache(Protocol):
    async def get(self, key: str) -> dict[str, Any] | None: ...

    def put(
        self, key: str, origin: Origin, request: dict[str, Any], reply: dict[str, Any]
    ) -> None: ...


class Unusable(Exception):
    """A 200 whose body cannot be used (no choices, no text)."""


def request_body(prompt: Prompt, style: Style, model: str, params: Mapping[str, Any]) -> dict:
    """The exact body sent: the prompt's fields, then the parameters (the prompt's own
    stop/max_tokens win over the run's, since the suite knows its answer format)."""
    body = {"model": model, **params}
    body.update(prompt_fields(prompt, style))
    if style == "responses":
        # The run's max_tokens, in the Responses API's word (the prompt's own wins).
        for name in ("max_tokens", "max_completion_tokens"):
            if name in body:
                body.setdefault("max_output_tokens", body.pop(name))
    return body


def prompt_fields(prompt: Prompt, style: Style) -> dict[str, Any]:
    """The body fields a prompt gives in this style (see `responses_fields`)."""
    if style != "responses":
        return prompt.request(style)
    if prompt.tools:
        # A native request: its calls, results and tools in the Responses API's words.
        return responses_native_fields(prompt.request("chat"))
    return responses_fields(prompt.request("chat"))


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
        from openai.resources.responses import AsyncResponses

        names = inspect.signature(AsyncResponses.create).parameters
        _RESPONSES_ARGUMENTS = frozenset(n for n in names if n != "self")
    return _RESPONSES_ARGUMENTS


def with_seed(params: Mapping[str, Any], seed: int | None) -> Mapping[str, Any]:
    """The generation parameters with `seed` in place of theirs (unchanged for None)."""
    return params if seed is None else {**params, "seed": seed}


def cache_key(origin: Origin, body: Mapping[str, Any], salt: str = "") -> str:
    """sha256 of who answers (`origin`: the normalised base URL, the model and the style) and
    the whole body (model, messages or prompt, parameters), and a salt that tells apart
    requests meant to be asked again (a judge's repeats). The one key of the response cache:
    every reader and writer of it (runs, judge jobs, rewriting, embeddings) comes here."""
    key: dict[str, Any] = {
        "origin": [origin.base_url, origin.model, origin.style],
        "body": body,
    }
    if salt:
        key["salt"] = salt
    canonical = json.dumps(key, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    # surrogatepass: a lone surrogate (a model may write one) is hashed as it is; any other
    # text encodes as in plain UTF-8, so no key changes
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


_SURROGATE = re.compile("[\ud800-\udfff]")


def sendable(value: Any) -> Any:
    """`value` with every lone surrogate in its strings (and keys) replaced by U+FFFD, the
    replacement character: what UTF-8, and so an HTTP body, can carry."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, Mapping):
        return {sendable(key): sendable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [sendable(item) for item in value]
    return value


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """Seconds a server asked us to wait: retry-after-ms, or Retry-After as seconds or an
    HTTP date. None when it said nothing usable."""
    if not headers:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def backoff_seconds(attempt: int, rng: random.Random) -> float:
    """Exponential backoff with equal jitter: half fixed, half random, so that many lanes
    failing together do not come back together."""
    # The exponent is capped first: 2 ** 1025 is no float.
    ceiling = min(BACKOFF_CAP, BACKOFF_BASE * (2 ** min(attempt - 1, 32)))
    return ceiling / 2 + rng.uniform(0, ceiling / 2)


def classify(exc: BaseException) -> tuple[bool, str, float | None]:
    """(retryable, reason, server-requested wait) for an exception from one attempt."""
    import openai

    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        if 300 <= status < 400:
            # Never followed (endpoint_client): the whole prompt would go wherever it points.
            return False, f"HTTP {status}: {_redirect_text(exc)}", None
        detail = _error_text(exc)
        reason = f"HTTP {status}: {detail}" if detail else f"HTTP {status}"
        wait = retry_after_seconds(exc.response.headers) if exc.response is not None else None
        return (status >= 500 or status in RETRYABLE_STATUS), reason, wait
    if isinstance(exc, openai.APITimeoutError):
        return True, "timed out", None
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return True, f"connection error: {type(cause).__name__}: {cause}"[:300], None
    if isinstance(exc, (json.JSONDecodeError, openai.APIResponseValidationError)):
        return True, f"malformed response: {exc}"[:300], None
    if isinstance(exc, Unusable):
        return True, str(exc), None
    return False, f"{type(exc).__name__}: {exc}"[:500], None


def failure_summary(exc: BaseException) -> str:
    """A failed request in a few words of our own (status, timeout, connection), with nothing
    the server sent: for pages that show the failure to whoever configured the endpoint."""
    import openai

    if isinstance(exc, openai.APIStatusError):
        try:
            phrase = HTTPStatus(exc.status_code).phrase
        except ValueError:
            phrase = "unknown status"
        summary = f"the server answered HTTP {exc.status_code} ({phrase})"
        if 300 <= exc.status_code < 400:
            summary += f": {_redirect_text(exc)}"
        return summary
    if isinstance(exc, openai.APITimeoutError):
        return "the server did not answer in time"
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return f"could not connect ({type(cause).__name__})"
    return f"the request failed ({type(exc).__name__})"


def _redirect_text(exc: openai.APIStatusError) -> str:
    """Where a 3xx pointed (its Location, cut short and printable), and that it was not
    followed."""
    headers = exc.response.headers if exc.response is not None else {}
    location = "".join(ch for ch in str(headers.get("location") or "") if ch.isprintable())
    where = f"a redirect to {location[:200]}" if location else "a redirect with no Location"
    return f"{where}; redirects are not followed (give the endpoint's final address)"


def _error_text(exc: openai.APIStatusError) -> str:
    """The API's own error message ({"error": {"message": ...}}, as OpenAI-compatible servers
    send), cut short; nothing of a body in any other shape (an HTML page, a stack trace)."""
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"][:300]
    return ""


TOKEN_FIELDS = ("prompt_tokens", "completion_tokens", "cached_tokens")


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


def _without_none(value: Any) -> Any:
    """A JSON value without the members that are null (as the client's model_dump(
    exclude_none=True) gave a tool call)."""
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_none(v) for v in value]
    return value


Sleep = Callable[[float], Awaitable[None]]


def endpoint_client(config: EndpointConfig) -> openai.AsyncOpenAI:
    """The one way a client of an endpoint is made (runs, judge jobs, rewriting, the simulator):
    its base URL, key and timeout, no retries of its own (the Caller retries what is
    transient), and no redirect followed: a 3xx is the answer, an error that says where it
    pointed (classify). Following one would post the whole prompt wherever a server says."""
    import openai

    return openai.AsyncOpenAI(
        base_url=config.base_url,
        api_key=config.api_key,
        timeout=config.timeout,
        max_retries=0,
        http_client=openai.DefaultAsyncHttpxClient(follow_redirects=False, timeout=config.timeout),
    )


def endpoint_sync_client(config: EndpointConfig, *, retries: int = 0) -> openai.OpenAI:
    """`endpoint_client` for code that calls without a Caller (embeddings, the admin's
    connection check): the same rules, and the client's own `retries` of what is transient."""
    import openai

    return openai.OpenAI(
        base_url=config.base_url,
        api_key=config.api_key,
        timeout=config.timeout,
        max_retries=retries,
        http_client=openai.DefaultHttpxClient(follow_redirects=False, timeout=config.timeout),
    )


def without_key(text: str, key: str) -> str:
    """`text` with the endpoint's key replaced: a server that echoes the key it was sent in an
    error must not have it shown on the pages that show the item's error."""
    if len(key) < 8:  # "unused", or nothing that could be told from other text
        return text
    return text.replace(key, "[the endpoint's key]")


class Caller:
    """One endpoint, as seen by one chunk execution."""

    def __init__(
        self,
        config: EndpointConfig,
        *,
        client: openai.AsyncOpenAI,
        cache: Cache,
        slots: Slots | None,
        rate: RateLimit | None,
        rng: random.Random | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.config = config
        self.client = client
        self.cache = cache
        self.slots = slots
        self.rate = rate
        self.rng = rng or random.Random()
        self.sleep = sleep
        self.http_calls = 0

    async def call(
        self, prompt: Prompt, lane: Lane | None = None, salt: str = "", seed: int | None = None
    ) -> Reply:
        """The endpoint's answer to `prompt`, from the cache when this exact request was answered
        before. `seed` (a run's trial) is sent as the request's seed, so it is in the cache key
        too: trials of one item are distinct entries, and a trial asked again finds its own."""
        config = self.config
        body = request_body(prompt, config.style, config.model, with_seed(config.params, seed))
        key = cache_key(config.origin, body, salt)
        hit = await self.cache.get(key)
        if hit is not None:
            return Reply(
                text=hit["text"],
                usage=hit.get("usage") or {},
                finish_reason=hit.get("finish_reason"),
                cached=True,
                tool_calls=hit.get("tool_calls") or [],
            )
        reason = "no attempt made"
        for attempt in range(1, config.max_attempts + 1):
            wait: float | None = None
            try:
                reply = await self._attempt(body, lane)
            except Exception as exc:  # classify() decides what is transient
                retryable, reason, wait = classify(exc)
                reason = without_key(reason, config.api_key)
                if not retryable:
                    raise CallFailed(reason) from None
            else:
                reply.attempts = attempt
                self.cache.put(
                    key,
                    config.origin,
                    body,
                    {
                        "text": reply.text,
                        "usage": reply.usage,
                        "finish_reason": reply.finish_reason,
                        **({"tool_calls": reply.tool_calls} if reply.tool_calls else {}),
                    },
                )
                return reply
            if attempt < config.max_attempts:
                delay = backoff_seconds(attempt, self.rng)
                if wait is not None:
                    # Honour the server, with a little jitter so waiters do not stampede.
                    delay = min(RETRY_AFTER_CAP, wait) + self.rng.uniform(0, 0.1)
                await self.sleep(delay)
        raise CallFailed(f"gave up after {config.max_attempts} attempts; last: {reason}")

    async def _attempt(self, body: dict[str, Any], lane: Lane | None) -> Reply:
        if self.rate is not None:
            await self.rate.wait()
        if lane is not None:
            await lane.ensure()
            return await self._send(body)
        if self.slots is None:
            return await self._send(body)
        async with self.slots.hold():
            return await self._send(body)

    async def _send(self, body: dict[str, Any]) -> Reply:
        try:
            return await self._post(body)
        except UnicodeEncodeError:
            # A lone surrogate (a model wrote one, and it is in this prompt again: an agent's
            # next step, the simulator's request) cannot go out as UTF-8: it goes as U+FFFD.
            # The cache key is the body's as it was (cache_key hashes it as it is).
            return await self._post(sendable(body))

    async def _post(self, body: dict[str, Any]) -> Reply:
        """One attempt. Chat and completion bodies are posted as they are, through the
        client (its auth, timeout and errors) but not its typed create(): that one checks every
        parameter's name (a server's own, like top_k, was a TypeError) and rebuilds the body
        and the answer through its types, which cost more CPU than the rest of the call."""
        self.http_calls += 1
        style = self.config.style
        if style == "responses":
            return await self._send_responses(dict(body))
        answer = await self.client.post(
            API_PATHS[style], body=body, cast_to=object, options=BEARER_ONLY
        )
        if not isinstance(answer, dict):
            raise Unusable("the answer was not a JSON object")
        choices = answer.get("choices")
        if not choices or not isinstance(choices, list):
            raise Unusable("the answer had no choices")
        choice = choices[0]
        if not isinstance(choice, dict):
            raise Unusable("the answer's first choice was not an object")
        tool_calls: list[dict[str, Any]] = []
        if style == "completion":
            text = choice.get("text")
        else:
            message = choice.get("message")
            if not isinstance(message, dict):
                raise Unusable("the answer's first choice had no message")
            text = message.get("content")
            calls = message.get("tool_calls") or []
            if not isinstance(calls, list) or not all(isinstance(c, dict) for c in calls):
                raise Unusable("the answer's tool_calls were not a list of objects")
            tool_calls = [_without_none(call) for call in calls]
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

    async def _send_responses(self, fields: dict[str, Any]) -> Reply:
        """One call of the Responses API: the text of its `message` output items, and its
        `function_call` items as chat tool_calls (native runs)."""
        stop = fields.pop("stop", None)
        known = responses_arguments()
        extra = {name: fields.pop(name) for name in list(fields) if name not in known}
        response = await self.client.responses.create(**fields, extra_body=extra or None)
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
