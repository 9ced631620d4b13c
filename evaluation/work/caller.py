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
import json
import random
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, Literal, Protocol, overload

from benchmarks.kit.protocol import CallFailed, Prompt
from evaluation.work.addresses import normalised_base_url
from evaluation.work.limits import Lane, RateLimit, Slots
from evaluation.work.styles import TOKEN_FIELDS as TOKEN_FIELDS
from evaluation.work.styles import ApiStyle, Reply, Unusable, style_named
from evaluation.work.styles import token_counts as token_counts
from evaluation.work.styles.responses import cut_at_stop as cut_at_stop

if TYPE_CHECKING:
    # Imported where used: the client library is seconds of start-up for every process that
    # sets Django up (admin pages import this module), most of which never call an endpoint.
    import openai

BACKOFF_BASE = 0.5
BACKOFF_CAP = 30.0
RETRY_AFTER_CAP = 120.0
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})


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
    style: str  # a registered API style's name (evaluation.work.styles)
    params: Mapping[str, Any]
    timeout: float
    max_attempts: int
    max_concurrency: int
    requests_per_minute: int | None

    @cached_property
    def origin(self) -> Origin:
        # Once per config: every call's cache key names it.
        return Origin.of(self.base_url, self.model, self.style)

    @cached_property
    def api(self) -> ApiStyle:
        # Once per config, so that a call asks its style without a lookup.
        return style_named(self.style)


class Cache(Protocol):
    async def get(self, key: str) -> dict[str, Any] | None: ...

    def put(
        self, key: str, origin: Origin, request: dict[str, Any], reply: dict[str, Any]
    ) -> None: ...


def request_body(prompt: Prompt, style: str, model: str, params: Mapping[str, Any]) -> dict:
    """The exact body sent in `style` (a registered style's name): see ApiStyle.body."""
    return style_named(style).body(prompt, model, params)


def prompt_fields(prompt: Prompt, style: str) -> dict[str, Any]:
    """The body fields a prompt gives in `style`: see ApiStyle.fields."""
    return style_named(style).fields(prompt)


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
    # Here, not at the top: the client library's start-up is paid only by callers (above).
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
    # Here, not at the top: the client library's start-up is paid only by callers (above).
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


Sleep = Callable[[float], Awaitable[None]]


@overload
def endpoint_client(
    config: EndpointConfig, *, blocking: Literal[False] = False, retries: int = 0
) -> openai.AsyncOpenAI: ...


@overload
def endpoint_client(
    config: EndpointConfig, *, blocking: Literal[True], retries: int = 0
) -> openai.OpenAI: ...


def endpoint_client(
    config: EndpointConfig, *, blocking: bool = False, retries: int = 0
) -> openai.AsyncOpenAI | openai.OpenAI:
    """The one way a client of an endpoint is made (runs, judge jobs, rewriting, the simulator,
    embeddings, the connection check): its base URL, the key `config` holds (opened by
    engine.endpoint_config, the one place a key is read) and its timeout; no redirect followed:
    a 3xx is the answer, an error that says where it pointed (classify). Following one would
    post the whole prompt wherever a server says. `retries`: the client's own retries of what
    is transient, 0 under a Caller (it retries itself). `blocking`: a synchronous client, for
    code that calls without a Caller (embeddings, the connection check)."""
    # Here, not at the top: the client library's start-up is paid only by callers (above).
    import openai

    if blocking:
        return openai.OpenAI(
            base_url=config.base_url,
            api_key=config.api_key,
            timeout=config.timeout,
            max_retries=retries,
            http_client=openai.DefaultHttpxClient(follow_redirects=False, timeout=config.timeout),
        )
    return openai.AsyncOpenAI(
        base_url=config.base_url,
        api_key=config.api_key,
        timeout=config.timeout,
        max_retries=retries,
        http_client=openai.DefaultAsyncHttpxClient(follow_redirects=False, timeout=config.timeout),
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
        body = config.api.body(prompt, config.model, with_seed(config.params, seed))
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
        """One attempt, as the endpoint's style sends and reads it."""
        self.http_calls += 1
        return await self.config.api.send(self.client, body)
