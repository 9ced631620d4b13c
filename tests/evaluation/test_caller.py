"""The Caller and its pure helpers (evaluation/work/caller.py): no database, no Redis. The
exceptions classified are the real ones the openai client raises against the fault-injecting
fake server."""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import openai
import pytest

from benchmarks.kit.protocol import CallFailed, Prompt
from evaluation.work.caller import (
    BACKOFF_CAP,
    RETRY_AFTER_CAP,
    Caller,
    EndpointConfig,
    Origin,
    Reply,
    Unusable,
    backoff_seconds,
    cache_key,
    classify,
    endpoint_client,
    request_body,
    retry_after_seconds,
)
from tests.fake_openai import FakeOpenAI

MODEL = "fake-model"


# --- retry_after_seconds ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "2"}, 2.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after": "0"}, 0.0),
        ({"retry-after-ms": "250"}, 0.25),
        # milliseconds win over seconds when a server sends both
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        # unreadable milliseconds fall back to the seconds header
        ({"retry-after-ms": "soon", "retry-after": "3"}, 3.0),
        ({"retry-after": "-5"}, 0.0),
        ({"retry-after-ms": "-100"}, 0.0),
    ],
)
def test_retry_after_reads_seconds_and_milliseconds(
    headers: dict[str, str], expected: float
) -> None:
    assert retry_after_seconds(headers) == expected


@pytest.mark.parametrize(
    "headers",
    [None, {}, {"retry-after": ""}, {"retry-after": "soon"}, {"retry-after": "12 parsecs"}],
)
def test_retry_after_without_a_usable_value_is_none(headers: dict[str, str] | None) -> None:
    assert retry_after_seconds(headers) is None


def test_retry_after_as_an_http_date_is_the_time_until_then() -> None:
    in_30s = email.utils.formatdate(time.time() + 30, usegmt=True)
    # HTTP dates have whole seconds: the value is 30 s less up to one second
    assert 28.9 <= retry_after_seconds({"retry-after": in_30s}) <= 30.0
    a_past_date = email.utils.formatdate(time.time() - 3600, usegmt=True)
    assert retry_after_seconds({"retry-after": a_past_date}) == 0.0


def test_retry_after_reads_real_response_headers_whatever_their_case() -> None:
    assert retry_after_seconds(httpx2.Headers({"Retry-After": "3"})) == 3.0
    assert retry_after_seconds(httpx2.Headers({"Retry-After-Ms": "40"})) == 0.04


# --- backoff_seconds --------------------------------------------------------------------------


def test_backoff_stays_between_half_the_ceiling_and_the_ceiling() -> None:
    rng = random.Random(1)
    for attempt in range(1, 15):
        ceiling = min(BACKOFF_CAP, 0.5 * 2 ** (attempt - 1))
        for _ in range(50):
            assert ceiling / 2 <= backoff_seconds(attempt, rng) <= ceiling


def test_backoff_grows_with_each_attempt_then_is_capped() -> None:
    rng = random.Random(2)
    delays = [backoff_seconds(attempt, rng) for attempt in range(1, 12)]
    # below the cap each attempt's floor is the previous one's ceiling, so any draws grow
    assert delays[:6] == sorted(delays[:6])
    assert delays[0] <= 0.5
    assert delays[3] >= 2.0  # attempt 4: between 2 and 4
    # from attempt 7 on (0.5 * 2**6 = 32 > 30) the ceiling is the cap
    assert all(BACKOFF_CAP / 2 <= d <= BACKOFF_CAP for d in delays[6:])


def test_backoff_jitter_is_seeded_and_spread() -> None:
    def draws(seed: int) -> list[float]:
        rng = random.Random(seed)
        return [backoff_seconds(5, rng) for _ in range(200)]

    assert draws(7) == draws(7)
    assert draws(7) != draws(8)
    values = draws(7)
    # attempt 5: ceiling 8 s, so draws fall in [4, 8], spread over the range
    assert min(values) < 4.5 and max(values) > 7.5
    assert len(set(values)) == len(values)


def test_backoff_of_a_very_late_attempt_is_the_cap() -> None:
    assert BACKOFF_CAP / 2 <= backoff_seconds(1100, random.Random(0)) <= BACKOFF_CAP


# --- classify ---------------------------------------------------------------------------------


def raised_by(server: FakeOpenAI, content: str, *, timeout: float = 5.0) -> BaseException:
    """The exception the openai client raises (no retries of its own) for one chat request."""

    async def request() -> BaseException:
        client = openai.AsyncOpenAI(
            base_url=server.base_url, api_key="k", max_retries=0, timeout=timeout
        )
        try:
            await client.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": content}]
            )
        except Exception as exc:
            return exc
        finally:
            await client.close()
        raise AssertionError(f"{content!r} raised nothing")

    return asyncio.run(request())


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(responder="fixed:Answer: 42", retry_after=2, timeout_s=2) as srv:
        yield srv


def test_a_429_is_retried_after_the_wait_the_server_asked(server: FakeOpenAI) -> None:
    exc = raised_by(server, "[[fault:429]]")
    assert isinstance(exc, openai.RateLimitError)
    retryable, reason, wait = classify(exc)
    assert retryable
    assert reason.startswith("HTTP 429: Rate limit reached")
    assert wait == 2.0


def test_a_429_with_an_http_date_gives_the_seconds_until_then() -> None:
    with FakeOpenAI(retry_after=5, retry_after_http_date=True) as srv:
        exc = raised_by(srv, "[[fault:429]]")
    retryable, _, wait = classify(exc)
    assert retryable
    assert wait is not None and 3.5 <= wait <= 5.0


@pytest.mark.parametrize("status", ["500", "502", "503"])
def test_server_errors_are_retried(server: FakeOpenAI, status: str) -> None:
    exc = raised_by(server, f"[[fault:{status}]]")
    assert isinstance(exc, openai.InternalServerError)
    retryable, reason, wait = classify(exc)
    assert (retryable, wait) == (True, None)
    # the message comes from the error body, not the whole JSON text
    assert reason == (
        f"HTTP {status}: The server had an error while processing your request. Sorry about that!"
    )


@pytest.mark.parametrize(
    ("status", "exception", "retryable"),
    [
        ("408", openai.APIStatusError, True),
        ("409", openai.ConflictError, True),
        ("425", openai.APIStatusError, True),
        ("400", openai.BadRequestError, False),
        ("401", openai.AuthenticationError, False),
        ("403", openai.PermissionDeniedError, False),
        ("404", openai.NotFoundError, False),
        ("422", openai.UnprocessableEntityError, False),
    ],
)
def test_client_errors_are_final_except_timeouts_and_conflicts(
    server: FakeOpenAI, status: str, exception: type[Exception], retryable: bool
) -> None:
    exc = raised_by(server, f"[[fault:{status}]]")
    assert isinstance(exc, exception)
    found, reason, wait = classify(exc)
    assert (found, wait) == (retryable, None)
    assert reason == f"HTTP {status}: Injected {status} error (fake server)."


def test_a_timeout_is_retried(server: FakeOpenAI) -> None:
    exc = raised_by(server, "[[fault:timeout]]", timeout=0.3)
    assert isinstance(exc, openai.APITimeoutError)
    assert classify(exc) == (True, "timed out", None)


def test_a_dropped_connection_is_retried(server: FakeOpenAI) -> None:
    exc = raised_by(server, "[[fault:disconnect]]")
    assert isinstance(exc, openai.APIConnectionError)
    assert not isinstance(exc, openai.APITimeoutError)
    retryable, reason, wait = classify(exc)
    assert (retryable, wait) == (True, None)
    assert reason.startswith("connection error: ")
    assert len(reason) <= 300


def test_a_body_cut_in_half_is_retried(server: FakeOpenAI) -> None:
    exc = raised_by(server, "[[fault:truncated]]")
    assert isinstance(exc, json.JSONDecodeError)
    retryable, reason, wait = classify(exc)
    assert (retryable, wait) == (True, None)
    assert reason.startswith("malformed response: ")


def test_unusable_answers_are_retried_and_anything_else_is_not() -> None:
    assert classify(Unusable("the answer had no choices")) == (
        True,
        "the answer had no choices",
        None,
    )
    retryable, reason, wait = classify(KeyError("choices"))
    assert (retryable, reason, wait) == (False, "KeyError: 'choices'", None)


# --- cache_key and request_body -------------------------------------------------------------


CHAT = Origin.of("http://127.0.0.1:8001/v1", MODEL, "chat")


def test_the_cache_key_ignores_key_order() -> None:
    body = {
        "model": MODEL,
        "temperature": 0,
        "messages": [{"role": "user", "content": "hi"}],
        "max_tokens": 16,
    }
    reordered = {
        "max_tokens": 16,
        "messages": [{"content": "hi", "role": "user"}],
        "model": MODEL,
        "temperature": 0,
    }
    assert cache_key(CHAT, body) == cache_key(CHAT, reordered)
    assert len(cache_key(CHAT, body)) == 64


@pytest.mark.parametrize(
    "change",
    [
        {"temperature": 0.7},
        {"max_tokens": 17},
        {"model": "other-model"},
        {"messages": [{"role": "user", "content": "hi!"}]},
        {"seed": 1},
    ],
)
def test_the_cache_key_changes_with_any_part_of_the_request(change: dict[str, Any]) -> None:
    body = {
        "model": MODEL,
        "temperature": 0,
        "messages": [{"role": "user", "content": "hi"}],
        "max_tokens": 16,
    }
    assert cache_key(CHAT, body) != cache_key(CHAT, {**body, **change})


@pytest.mark.parametrize(
    "other",
    [
        Origin.of("http://127.0.0.1:8002/v1", MODEL, "chat"),  # another server
        Origin.of("http://127.0.0.1:8001/v2", MODEL, "chat"),  # another path on it
        Origin.of("https://127.0.0.1:8001/v1", MODEL, "chat"),  # another scheme
        Origin.of("http://127.0.0.1:8001/v1", "other-model", "chat"),
        Origin.of("http://127.0.0.1:8001/v1", MODEL, "completion"),
    ],
)
def test_the_cache_key_names_who_answers(other: Origin) -> None:
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}
    assert cache_key(CHAT, body) != cache_key(other, body)


@pytest.mark.parametrize(
    "spelling",
    [
        "http://127.0.0.1:8001/v1/",
        "HTTP://127.0.0.1:8001/v1",
        "http://127.0.0.1:8001/v1 ",
    ],
)
def test_one_address_spelt_two_ways_is_one_server(spelling: str) -> None:
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}
    assert cache_key(Origin.of(spelling, MODEL, "chat"), body) == cache_key(CHAT, body)
    assert Origin.of("https://Api.Example:443/v1/", MODEL, "chat").base_url == (
        "https://api.example/v1"
    )
    assert Origin.of("http://api.example:8080", MODEL, "chat").base_url == (
        "http://api.example:8080"
    )


def test_a_salt_makes_another_key_and_no_salt_keeps_the_plain_one() -> None:
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}
    plain = cache_key(CHAT, body)
    assert cache_key(CHAT, body, "") == plain
    assert len({plain, cache_key(CHAT, body, "1"), cache_key(CHAT, body, "2")}) == 3


def test_the_prompts_own_stop_and_max_tokens_win_over_the_run_parameters() -> None:
    prompt = Prompt(messages=[{"role": "user", "content": "q"}], stop=("\n",), max_tokens=8)
    params = {"temperature": 0, "max_tokens": 256, "stop": ["###"], "model": "sneaky"}
    body = request_body(prompt, "chat", MODEL, params)
    assert body["max_tokens"] == 8
    assert body["stop"] == ["\n"]
    assert body["temperature"] == 0
    assert body["messages"] == [{"role": "user", "content": "q"}]
    completion = request_body(prompt, "completion", MODEL, {})
    assert completion["prompt"] == "User: q\nAssistant:"
    assert "messages" not in completion


# --- Caller.call ----------------------------------------------------------------------------


class MemoryCache:
    """The Cache protocol in memory: what was put, and how many lookups were made."""

    def __init__(self, entries: dict[str, dict[str, Any]] | None = None) -> None:
        self.entries = dict(entries or {})
        self.puts: list[tuple[str, Origin, dict[str, Any], dict[str, Any]]] = []
        self.gets = 0

    async def get(self, key: str) -> dict[str, Any] | None:
        self.gets += 1
        return self.entries.get(key)

    def put(self, key: str, origin: Origin, request: dict[str, Any], reply: dict[str, Any]) -> None:
        self.puts.append((key, origin, request, reply))
        self.entries[key] = reply


class Sleeps:
    """A sleep that records the delays asked for and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def endpoint_config(base_url: str, **fields: Any) -> EndpointConfig:
    values: dict[str, Any] = {
        "id": 1,
        "base_url": base_url,
        "model": MODEL,
        "api_key": "k",
        "style": "chat",
        "params": {"temperature": 0},
        "timeout": 5.0,
        "max_attempts": 4,
        "max_concurrency": 4,
        "requests_per_minute": None,
        **fields,
    }
    return EndpointConfig(**values)


def ask(content: str) -> Prompt:
    return Prompt(messages=[{"role": "user", "content": content}])


def call(
    server: FakeOpenAI,
    content: str,
    *,
    cache: MemoryCache | None = None,
    sleeps: Sleeps | None = None,
    salt: str = "",
    **fields: Any,
) -> Reply:
    """One Caller.call against the server, with no slots and no rate limit."""
    config = endpoint_config(server.base_url, **fields)

    async def run() -> Reply:
        client = endpoint_client(config)
        caller = Caller(
            config,
            client=client,
            cache=cache if cache is not None else MemoryCache(),
            slots=None,
            rate=None,
            rng=random.Random(0),
            sleep=sleeps if sleeps is not None else Sleeps(),
        )
        try:
            return await caller.call(ask(content), salt=salt)
        finally:
            await client.close()

    return asyncio.run(run())


def test_a_clean_answer_is_returned_and_cached(server: FakeOpenAI) -> None:
    cache = MemoryCache()
    reply = call(server, "What is six times seven?", cache=cache)
    assert reply.text == "Answer: 42"
    assert (reply.cached, reply.attempts, reply.finish_reason) == (False, 1, "stop")
    assert reply.usage["completion_tokens"] > 0 and reply.usage["prompt_tokens"] > 0
    [(key, origin, request, stored)] = cache.puts
    assert origin == Origin.of(server.base_url, MODEL, "chat")
    assert request == {
        "model": MODEL,
        "temperature": 0,
        "messages": [{"role": "user", "content": "What is six times seven?"}],
    }
    assert key == cache_key(origin, request)
    assert stored == {"text": "Answer: 42", "usage": reply.usage, "finish_reason": "stop"}


def test_a_cache_hit_makes_no_request(server: FakeOpenAI) -> None:
    # given the cache already holds the answer to this exact request
    body = request_body(ask("cached question"), "chat", MODEL, {"temperature": 0})
    cached = {"text": "Answer: from the cache", "usage": {"prompt_tokens": 3}, "finish_reason": "x"}
    cache = MemoryCache({cache_key(Origin.of(server.base_url, MODEL, "chat"), body): cached})
    # when
    reply = call(server, "cached question", cache=cache)
    # then
    assert server.total == 0
    assert reply.text == "Answer: from the cache"
    assert (reply.cached, reply.attempts, reply.finish_reason) == (True, 0, "x")
    assert reply.usage == {"prompt_tokens": 3}
    assert cache.puts == []


def test_a_second_identical_call_is_answered_by_the_cache(server: FakeOpenAI) -> None:
    cache = MemoryCache()
    first = call(server, "same question", cache=cache)
    second = call(server, "same question", cache=cache)
    assert server.total == 1
    assert second.text == first.text
    assert second.cached and not first.cached
    # another generation parameter is another request
    call(server, "same question", cache=cache, params={"temperature": 0.5})
    assert server.total == 2


def test_a_salted_call_is_asked_again_and_cached_apart(server: FakeOpenAI) -> None:
    cache = MemoryCache()
    call(server, "judge this", cache=cache)
    repeat = call(server, "judge this", cache=cache, salt="repeat-2")
    again = call(server, "judge this", cache=cache, salt="repeat-2")
    assert server.total == 2
    assert (repeat.cached, again.cached) == (False, True)
    assert len(cache.entries) == 2


def test_a_429_waits_at_least_what_retry_after_says(server: FakeOpenAI) -> None:
    sleeps = Sleeps()
    reply = call(server, "[[fault:429]] busy", sleeps=sleeps)
    assert reply.attempts == 2
    assert server.by_status == {429: 1, 200: 1}
    [delay] = sleeps.delays
    assert 2.0 <= delay <= 2.1  # the server's 2 s, plus at most 0.1 s of jitter


def test_a_huge_retry_after_is_capped() -> None:
    sleeps = Sleeps()
    with FakeOpenAI(retry_after=3600) as srv:
        call(srv, "[[fault:429]] very busy", sleeps=sleeps)
    [delay] = sleeps.delays
    assert RETRY_AFTER_CAP <= delay <= RETRY_AFTER_CAP + 0.1


def test_a_500_then_success_takes_two_attempts(server: FakeOpenAI) -> None:
    sleeps = Sleeps()
    cache = MemoryCache()
    reply = call(server, "[[fault:500]] flaky", sleeps=sleeps, cache=cache)
    assert reply.text == "Answer: 42"
    assert reply.attempts == 2
    assert server.by_status == {500: 1, 200: 1}
    [delay] = sleeps.delays
    assert 0.25 <= delay <= 0.5  # the first backoff
    assert len(cache.puts) == 1


def test_a_400_is_not_retried(server: FakeOpenAI) -> None:
    sleeps = Sleeps()
    cache = MemoryCache()
    with pytest.raises(CallFailed) as info:
        call(server, "[[fault:400x*]] bad request", sleeps=sleeps, cache=cache)
    assert str(info.value) == "HTTP 400: Injected 400 error (fake server)."
    assert server.total == 1
    assert sleeps.delays == []
    assert cache.puts == []


def test_attempts_run_out_with_the_last_reason(server: FakeOpenAI) -> None:
    sleeps = Sleeps()
    cache = MemoryCache()
    with pytest.raises(CallFailed) as info:
        call(server, "[[fail-always]]", sleeps=sleeps, cache=cache, max_attempts=3)
    assert str(info.value) == (
        "gave up after 3 attempts; last: HTTP 500: The server had an error while processing "
        "your request. Sorry about that!"
    )
    assert server.total == 3
    # a backoff between attempts, none after the last
    assert len(sleeps.delays) == 2
    assert 0.25 <= sleeps.delays[0] <= 0.5 <= sleeps.delays[1] <= 1.0
    assert cache.puts == []


def test_the_reason_given_is_the_last_attempts() -> None:
    # a 500 first, then rate limited for good: the message names the 429
    with FakeOpenAI(fail_first=1, fail_first_fault="500", faults={"429": 1.0}) as srv:
        with pytest.raises(CallFailed, match=r"^gave up after 2 attempts; last: HTTP 429: Rate"):
            call(srv, "first a 500, then rate limited", max_attempts=2)
        assert srv.by_status == {500: 1, 429: 1}


@pytest.mark.parametrize("fault", ["empty_choices", "truncated", "disconnect"])
def test_unusable_answers_are_retried(server: FakeOpenAI, fault: str) -> None:
    sleeps = Sleeps()
    reply = call(server, f"[[fault:{fault}]] unusable", sleeps=sleeps)
    assert reply.text == "Answer: 42"
    assert reply.attempts == 2
    assert server.total == 2
    assert len(sleeps.delays) == 1


def test_empty_choices_every_time_fail_with_the_reason(server: FakeOpenAI) -> None:
    with pytest.raises(CallFailed, match=r"; last: the answer had no choices$"):
        call(server, "[[fault:empty_choicesx*]] never usable", max_attempts=2)


def test_a_timeout_is_retried_with_a_fresh_request() -> None:
    with FakeOpenAI(responder="fixed:late", timeout_s=2) as srv:
        reply = call(srv, "[[fault:timeout]] slow", timeout=0.3)
    assert (reply.text, reply.attempts) == ("late", 2)


def test_completion_style_asks_the_completions_api() -> None:
    with FakeOpenAI(responder="echo") as srv:
        cache = MemoryCache()
        reply = call(srv, "[[fault:empty_choices]] base model", style="completion", cache=cache)
        [record] = srv.requests_for("base model")[-1:]
    assert record.path.endswith("/completions") and "chat" not in record.path
    assert reply.attempts == 2
    assert reply.text == "User: [[fault:empty_choices]] base model\nAssistant:"
    assert "prompt" in cache.puts[0][2] and "messages" not in cache.puts[0][2]


def test_a_list_in_place_of_an_answer_is_retried(server: FakeOpenAI) -> None:
    reply = call(server, "[[fault:not_object]] a list", sleeps=Sleeps())
    assert (reply.text, reply.attempts) == ("Answer: 42", 2)
    with pytest.raises(CallFailed, match=r"; last: the answer was not a JSON object$"):
        call(server, "[[fault:not_objectx*]] always a list", max_attempts=2)


def test_parameters_the_client_does_not_name_go_to_the_server_to_judge() -> None:
    """As the Responses style's extra_body: an OpenAI-compatible server's own sampling
    parameters (top_k, repetition_penalty) are sent, for it to use or refuse with a 400."""
    params = {"temperature": 0, "top_k": 5, "repetition_penalty": 1.1, "seed": 3}
    with FakeOpenAI(keep_bodies=True) as srv:
        call(srv, "with a server's own parameters", params=params)
        [record] = srv.requests_for("with a server's own parameters")
    assert record.body is not None
    assert {name: record.body.get(name) for name in params} == params


def test_a_request_carries_the_endpoints_key_and_no_other(
    server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The client reads an admin key from the environment; an endpoint's calls never send it
    # (the engine always gives the client a key: the endpoint's, or a placeholder).
    monkeypatch.setenv("OPENAI_ADMIN_KEY", "sk-admin-of-this-machine")
    call(server, "whose key")
    [record] = server.requests_for("whose key")
    assert record.authorization == "Bearer k"
