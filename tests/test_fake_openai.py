"""The fake OpenAI server, driven by the real ``openai`` client (no database)."""

from __future__ import annotations

import asyncio
import base64
import email.utils
import http.client
import json
import socket
import struct
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import openai
import pytest

from benchmarks.kit.native import ToolNames, leaked_calls, read_tool_calls
from tests.fake_openai import (
    NO_CALL_TEXT,
    FakeCall,
    FakeOpenAI,
    FakeOpenAIProcess,
    Reply,
    ToolRequest,
    content_text,
    embedding_vector,
    leaked_call,
    oracle,
    responder_from_spec,
    scripted,
    short_hash,
    tool_reply,
)

MODEL = "test-model"


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as srv:
        yield srv


def client_for(srv: FakeOpenAI | FakeOpenAIProcess, timeout: float = 5.0) -> openai.OpenAI:
    return openai.OpenAI(base_url=srv.base_url, api_key="test", max_retries=0, timeout=timeout)


def chat(client: openai.OpenAI, content: str, **kwargs: Any) -> Any:
    return client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": content}], **kwargs
    )


def raw_request(
    srv: FakeOpenAI, method: str, path: str, body: bytes | None = None, **headers: str
) -> tuple[int, dict[str, Any]]:
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
    try:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


# ---- normal answers -------------------------------------------------------------------------


def test_chat_completion_parses_with_deterministic_answer(server: FakeOpenAI) -> None:
    client = client_for(server)
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is 2+2?"},
    ]
    resp = client.chat.completions.create(model=MODEL, messages=messages)  # type: ignore[arg-type]

    expected = "Answer: " + short_hash("Be brief.\nWhat is 2+2?")
    assert resp.object == "chat.completion"
    assert resp.model == MODEL
    assert resp.id.startswith("chatcmpl-")
    assert isinstance(resp.created, int)
    assert len(resp.choices) == 1
    assert resp.choices[0].message.role == "assistant"
    assert resp.choices[0].message.content == expected
    assert resp.choices[0].finish_reason == "stop"
    assert resp.usage is not None
    assert resp.usage.total_tokens == resp.usage.prompt_tokens + resp.usage.completion_tokens
    # Same content, same answer.
    again = client.chat.completions.create(model=MODEL, messages=messages)  # type: ignore[arg-type]
    assert again.choices[0].message.content == expected


def test_chat_text_parts_n_and_max_tokens(server: FakeOpenAI) -> None:
    client = client_for(server)
    resp = client.chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": [{"type": "text", "text": "parts"}]}],
        n=3,
    )
    assert [c.index for c in resp.choices] == [0, 1, 2]
    assert {c.message.content for c in resp.choices} == {"Answer: " + short_hash("parts")}

    cut = chat(client, "long", max_tokens=1)
    assert cut.choices[0].finish_reason == "length"
    assert cut.choices[0].message.content == "Answ"  # one token is four characters


def test_completions_single_and_batched_prompts(server: FakeOpenAI) -> None:
    client = client_for(server)
    resp = client.completions.create(model=MODEL, prompt="Once upon a time")
    assert resp.object == "text_completion"
    assert resp.choices[0].text == "Answer: " + short_hash("Once upon a time")
    assert resp.choices[0].finish_reason == "stop"

    batch = client.completions.create(model=MODEL, prompt=["a", "b"])
    assert [c.text for c in batch.choices] == ["Answer: " + short_hash(p) for p in "ab"]
    assert [c.index for c in batch.choices] == [0, 1]

    # usage, with the repeated prompt's tokens cached
    again = client.completions.create(model=MODEL, prompt="Once upon a time")
    for answer, cached in ((resp, 0), (again, 4)):
        assert answer.usage is not None and answer.usage.prompt_tokens == 4
        assert answer.usage.prompt_tokens_details is not None
        assert answer.usage.prompt_tokens_details.cached_tokens == cached


def test_embeddings_are_deterministic_unit_vectors() -> None:
    with FakeOpenAI(embedding_dim=16) as srv:
        client = client_for(srv)
        # The client asks for base64 unless told otherwise; both encodings must agree.
        default = client.embeddings.create(model=MODEL, input=["alpha", "beta"])
        floats = client.embeddings.create(
            model=MODEL, input=["alpha", "beta"], encoding_format="float"
        )
        assert [d.embedding for d in default.data] == [d.embedding for d in floats.data]
        assert default.data[0].embedding == embedding_vector("alpha", 16)
        assert default.data[0].embedding != default.data[1].embedding
        assert len(default.data[0].embedding) == 16
        assert sum(v * v for v in default.data[0].embedding) == pytest.approx(1.0, rel=1e-5)
        assert default.usage.total_tokens > 0

        sized = client.embeddings.create(model=MODEL, input="alpha", dimensions=5)
        assert len(sized.data[0].embedding) == 5


def test_embeddings_base64_is_little_endian_float32(server: FakeOpenAI) -> None:
    body = json.dumps({"model": MODEL, "input": "x", "encoding_format": "base64"}).encode()
    status, data = raw_request(server, "POST", "/v1/embeddings", body)
    assert status == 200
    raw = base64.b64decode(data["data"][0]["embedding"])
    assert list(struct.unpack("<8f", raw)) == embedding_vector("x", 8)


def test_models_list(server: FakeOpenAI) -> None:
    models = client_for(server).models.list()
    assert [m.id for m in models.data] == ["fake-model"]


def test_custom_echo_and_fixed_responders() -> None:
    seen: list[dict[str, Any]] = []

    def responder(body: dict[str, Any]) -> str:
        seen.append(body)
        return f"{body['model']}:{content_text(body).upper()}"

    with FakeOpenAI(responder) as srv:
        assert chat(client_for(srv), "hi").choices[0].message.content == f"{MODEL}:HI"
        assert seen[0]["messages"] == [{"role": "user", "content": "hi"}]

    with FakeOpenAI("echo") as srv:
        resp = client_for(srv).chat.completions.create(
            model=MODEL,
            messages=[
                {"role": "user", "content": "first"},
                {"role": "assistant", "content": "ok"},
                {"role": "user", "content": "last line"},
            ],
        )
        assert resp.choices[0].message.content == "last line"

    with FakeOpenAI("fixed:always this") as srv:
        assert chat(client_for(srv), "x").choices[0].message.content == "always this"


def test_a_failing_responder_is_a_500(server: FakeOpenAI) -> None:
    def broken(body: dict[str, Any]) -> str:
        raise RuntimeError("boom")

    server.responder = broken
    with pytest.raises(openai.InternalServerError, match="boom"):
        chat(client_for(server), "x")
    assert server.by_fault == {"responder_error": 1}


# ---- faults: what the platform's openai client sees ------------------------------------------


def test_429_is_rate_limit_error_with_retry_after_header() -> None:
    with (
        FakeOpenAI(faults={"429": 1.0}, retry_after=2) as srv,
        pytest.raises(openai.RateLimitError) as info,
    ):
        chat(client_for(srv), "x")
    exc = info.value
    assert exc.status_code == 429
    assert exc.response.headers["retry-after"] == "2"
    assert exc.code == "rate_limit_exceeded"


def test_429_retry_after_as_http_date() -> None:
    srv = FakeOpenAI(faults={"429": 1.0}, retry_after=30, retry_after_http_date=True)
    with srv, pytest.raises(openai.RateLimitError) as info:
        chat(client_for(srv), "x")
    when = email.utils.parsedate_to_datetime(info.value.response.headers["retry-after"])
    assert 25 < (when - datetime.now(UTC)).total_seconds() <= 31


@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_errors_are_internal_server_error(status: int) -> None:
    srv = FakeOpenAI(faults={str(status): 1.0})
    with srv, pytest.raises(openai.InternalServerError) as info:
        chat(client_for(srv), "x")
    assert info.value.status_code == status
    assert info.value.type == "server_error"


def test_timeout_is_api_timeout_error_and_does_not_block_others() -> None:
    with FakeOpenAI(timeout_s=30) as srv:
        client = client_for(srv, timeout=0.5)
        outcome: list[BaseException] = []

        def held() -> None:
            try:
                chat(client, "[[fault:timeout]] slow item")
            except BaseException as exc:
                outcome.append(exc)

        thread = threading.Thread(target=held)
        started = time.perf_counter()
        thread.start()
        time.sleep(0.1)
        # While that request is held, others are answered at once.
        assert chat(client, "fast item").choices[0].message.content
        assert time.perf_counter() - started < 0.45
        thread.join(timeout=5)
        assert len(outcome) == 1
        assert isinstance(outcome[0], openai.APITimeoutError)
        assert 0.45 < time.perf_counter() - started < 3


def test_stop_is_prompt_while_a_request_is_held() -> None:
    srv = FakeOpenAI(timeout_s=60).start()
    body = json.dumps({"model": MODEL, "prompt": "[[fault:timeout]]"}).encode()
    sock = socket.create_connection(("127.0.0.1", srv.port))
    try:
        sock.sendall(
            b"POST /v1/completions HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n%s"
            % (len(body), body)
        )
        deadline = time.monotonic() + 5
        while srv.total == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        started = time.perf_counter()
        srv.stop()
        assert time.perf_counter() - started < 2
    finally:
        sock.close()


def test_truncated_body_raises_json_decode_error(server: FakeOpenAI) -> None:
    client = client_for(server)
    # Not wrapped by the client: a plain json.JSONDecodeError (a ValueError), not an OpenAIError.
    with pytest.raises(json.JSONDecodeError) as info:
        chat(client, "[[fault:truncated]]")
    assert not isinstance(info.value, openai.OpenAIError)
    with pytest.raises(json.JSONDecodeError):
        client.completions.create(model=MODEL, prompt="[[fault:truncated]] completion")

    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    body = json.dumps({"model": MODEL, "prompt": "[[fault:truncatedx*]] raw"})
    conn.request("POST", "/v1/completions", body=body)
    response = conn.getresponse()
    status, raw = response.status, response.read()
    conn.close()
    assert status == 200
    assert int(response.headers["content-length"]) == len(raw)
    assert raw.startswith(b'{"id": "cmpl-')


def test_empty_choices_parses_to_an_empty_list(server: FakeOpenAI) -> None:
    client = client_for(server)
    resp = chat(client, "[[fault:empty_choices]]")
    assert resp.choices == []
    with pytest.raises(IndexError):
        _ = resp.choices[0]
    # Directive counts are per content, across endpoints: a different prompt fires afresh.
    completion = client.completions.create(model=MODEL, prompt="p [[fault:empty_choices]]")
    assert completion.choices == []


def test_disconnect_and_other_statuses(server: FakeOpenAI) -> None:
    client = client_for(server)
    with pytest.raises(openai.APIConnectionError) as info:
        chat(client, "[[fault:disconnect]]")
    assert not isinstance(info.value, openai.APITimeoutError)
    with pytest.raises(openai.AuthenticationError):
        chat(client, "[[fault:401]]")
    with pytest.raises(openai.BadRequestError):
        chat(client, "[[fault:400]]")


def test_async_client_sees_the_same_exceptions() -> None:
    async def run(base_url: str) -> list[type[BaseException] | str]:
        client = openai.AsyncOpenAI(base_url=base_url, api_key="t", max_retries=0, timeout=0.5)
        seen: list[type[BaseException] | str] = []
        for content in (
            "ok",
            "[[fault:429]]",
            "[[fault:503]]",
            "[[fault:timeout]]",
            "[[fault:truncated]]",
            "[[fault:empty_choices]]",
        ):
            try:
                resp = await client.chat.completions.create(
                    model=MODEL, messages=[{"role": "user", "content": content}]
                )
                seen.append(f"{len(resp.choices)} choices")
            except Exception as exc:
                seen.append(type(exc))
        await client.close()
        return seen

    with FakeOpenAI() as srv:
        seen = asyncio.run(run(srv.base_url))
    assert seen == [
        "1 choices",
        openai.RateLimitError,
        openai.InternalServerError,
        openai.APITimeoutError,
        json.JSONDecodeError,
        "0 choices",
    ]


# ---- directives, fail-first, seeded rates -----------------------------------------------------


def test_fault_directive_with_count_then_success(server: FakeOpenAI) -> None:
    client = client_for(server)
    content = "item 7 [[fault:500x2]]"
    for _ in range(2):
        with pytest.raises(openai.InternalServerError):
            chat(client, content)
    assert chat(client, content).choices[0].message.content.startswith("Answer: ")
    assert server.attempts(content) == 3
    assert [r.status for r in server.requests_for("item 7")] == [500, 500, 200]
    assert [r.attempt for r in server.requests_for("item 7")] == [1, 2, 3]

    # Without a count: once.
    with pytest.raises(openai.RateLimitError):
        chat(client, "item 8 [[fault:429]]")
    assert chat(client, "item 8 [[fault:429]]").choices

    # reset() restarts the attempt numbers, so the directive fires again.
    server.reset()
    with pytest.raises(openai.InternalServerError):
        chat(client, content)


def test_fail_always_and_latency_directives(server: FakeOpenAI) -> None:
    client = client_for(server)
    for _ in range(4):
        with pytest.raises(openai.InternalServerError):
            chat(client, "doomed [[fail-always]]")
    with pytest.raises(openai.RateLimitError):
        for _ in range(3):
            chat(client, "[[fault:429x*]] always limited")

    started = time.perf_counter()
    chat(client, "[[latency-ms:200]] slow")
    assert time.perf_counter() - started >= 0.2


def test_fail_first_mode_and_client_retries() -> None:
    with FakeOpenAI(fail_first=2, fail_first_fault="429", retry_after=0.01) as srv:
        client = client_for(srv)
        for prompt in ("a", "b"):
            for _ in range(2):
                with pytest.raises(openai.RateLimitError):
                    chat(client, prompt)
            assert chat(client, prompt).choices
        assert srv.by_status == {429: 4, 200: 2}

        # With retries the client gets through on the third attempt, honouring Retry-After.
        retrying = openai.OpenAI(base_url=srv.base_url, api_key="t", max_retries=2, timeout=5)
        assert chat(retrying, "c").choices
        assert srv.attempts("c") == 3


def outcomes(srv: FakeOpenAI, count: int) -> list[str]:
    client = client_for(srv, timeout=1)
    seen = []
    for i in range(count):
        try:
            resp = chat(client, f"prompt {i}")
            seen.append("ok" if resp.choices else "empty")
        except openai.APIStatusError as exc:
            seen.append(str(exc.status_code))
    return seen


def test_fault_rates_are_seeded_and_reproducible() -> None:
    faults = {"429": 0.2, "500": 0.1, "empty_choices": 0.1}
    with FakeOpenAI(faults=faults, seed=3) as srv:
        first = outcomes(srv, 300)
    with FakeOpenAI(faults=dict(reversed(faults.items())), seed=3) as srv:
        assert outcomes(srv, 300) == first
    with FakeOpenAI(faults=faults, seed=4) as srv:
        assert outcomes(srv, 300) != first

    # The rates are honoured (loosely: 300 draws).
    assert 40 <= first.count("429") <= 80
    assert 15 <= first.count("500") <= 45
    assert 15 <= first.count("empty") <= 45
    assert first.count("ok") + first.count("429") + first.count("500") + first.count(
        "empty"
    ) == len(first)


def test_bad_fault_configuration_is_refused() -> None:
    with pytest.raises(ValueError, match="sum"):
        FakeOpenAI(faults={"429": 0.6, "500": 0.6})
    with pytest.raises(ValueError, match="unknown fault"):
        FakeOpenAI(faults={"teapot": 0.1})


# ---- observability -----------------------------------------------------------------------------


def test_counts_per_status_content_and_reset(server: FakeOpenAI) -> None:
    client = client_for(server)
    chat(client, "alpha one")
    chat(client, "alpha one")
    chat(client, "beta")
    with pytest.raises(openai.RateLimitError):
        chat(client, "gamma [[fault:429]]")
    client.embeddings.create(model=MODEL, input="alpha two")

    assert server.total == 5
    assert server.by_status == {200: 4, 429: 1}
    assert server.by_fault == {"429": 1}
    assert server.count_for("alpha") == 3
    assert server.attempts("alpha one") == 2
    assert [r.path for r in server.requests_for("alpha")] == [
        "/v1/chat/completions",
        "/v1/chat/completions",
        "/v1/embeddings",
    ]
    stats = server.stats()
    assert stats["by_key"][short_hash("alpha one", 16)] == 2
    assert stats["distinct_contents"] == 4
    assert stats["by_path"] == {"/v1/chat/completions": 4, "/v1/embeddings": 1}

    server.reset()
    assert server.total == 0
    assert server.requests_for("alpha") == []
    assert server.stats()["by_key"] == {}


def test_counts_are_thread_safe(server: FakeOpenAI) -> None:
    client = client_for(server)

    def work(worker: int) -> None:
        for i in range(25):
            chat(client, f"w{worker} i{i}")

    threads = [threading.Thread(target=work, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert server.total == 200
    assert server.stats()["distinct_contents"] == 200
    assert server.count_for("w3 ") == 25


# ---- HTTP robustness -------------------------------------------------------------------------


def test_malformed_requests_get_400_json(server: FakeOpenAI) -> None:
    cases = [
        b"{not json",
        b"[1, 2]",
        json.dumps({"messages": [{"role": "user", "content": "x"}]}).encode(),
        json.dumps({"model": MODEL, "messages": []}).encode(),
        json.dumps({"model": MODEL, "messages": ["x"]}).encode(),
    ]
    for body in cases:
        status, data = raw_request(server, "POST", "/v1/chat/completions", body)
        assert status == 400, body
        assert data["error"]["type"] == "invalid_request_error"
    status, _ = raw_request(server, "POST", "/v1/completions", b'{"model": "m"}')
    assert status == 400
    status, _ = raw_request(server, "POST", "/v1/embeddings", b'{"model": "m", "input": []}')
    assert status == 400

    with pytest.raises(openai.BadRequestError, match="stream"):
        chat(client_for(server), "x", stream=True)


def test_unknown_paths_and_methods(server: FakeOpenAI) -> None:
    status, data = raw_request(server, "GET", "/v1/nope")
    assert (status, data["error"]["type"]) == (404, "invalid_request_error")
    status, _ = raw_request(server, "GET", "/v1/chat/completions")
    assert status == 405
    assert server.by_status == {404: 1, 405: 1}


def test_keep_alive_and_chunked_bodies(server: FakeOpenAI) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.request("GET", "/v1/models")
        first = conn.getresponse()
        first.read()
        sock = conn.sock
        body = json.dumps({"model": MODEL, "prompt": "chunked"}).encode()
        conn.request(
            "POST",
            "/v1/completions",
            body=iter([body[:10], body[10:]]),
            encode_chunked=True,
            headers={"Transfer-Encoding": "chunked"},
        )
        second = conn.getresponse()
        data = json.loads(second.read())
        assert conn.sock is sock  # the same connection served both
        assert data["choices"][0]["text"] == "Answer: " + short_hash("chunked")
    finally:
        conn.close()


def test_client_disconnects_and_garbage_do_not_break_the_server(server: FakeOpenAI) -> None:
    # Half a request, then gone.
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\ncontent-length: 500\r\n\r\n{")
    # Gone before the (slow) answer.
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        body = b'{"model": "m", "prompt": "[[latency-ms:100]]"}'
        sock.sendall(b"POST /v1/completions HTTP/1.1\r\ncontent-length: %d\r\n\r\n" % len(body))
        sock.sendall(body)
    # Not HTTP at all.
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(b"hello there\r\n\r\n")
        assert sock.recv(200).startswith(b"HTTP/1.1 400 ")
    time.sleep(0.2)
    assert chat(client_for(server), "still alive").choices


# ---- tool calls ------------------------------------------------------------------------------

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
TIME = {
    "type": "function",
    "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}},
}
TOOLS: list[Any] = [WEATHER, TIME]
NAMES = ToolNames.of(["get_weather", "get_time"])


def tool_chat(client: openai.OpenAI, content: str, **kwargs: Any) -> Any:
    return client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": content}], tools=TOOLS, **kwargs
    )


def test_a_single_tool_call_with_its_declaration_recorded() -> None:
    with FakeOpenAI(scripted(tool_reply(("get_weather", {"city": "Ghent"})))) as srv:
        resp = tool_chat(client_for(srv), "Weather in Ghent?", tool_choice="auto")
        (record,) = srv.records()
        stats = srv.stats()
    choice = resp.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    (call,) = choice.message.tool_calls
    assert call.type == "function" and call.id.startswith("call_")
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Ghent"}
    assert record.tools == ("get_weather", "get_time")
    assert record.tool_choice == "auto" and record.parallel_tool_calls is None
    assert stats["with_tools"] == 1


def test_parallel_calls_in_one_message_keep_their_order() -> None:
    reply = tool_reply(
        FakeCall("get_weather", {"city": "Ghent"}, id="call_a"),
        FakeCall("get_time", {}, id="call_b"),
        ("get_weather", {"city": "Lyon"}),
        content="Looking these up.",
    )
    with FakeOpenAI(scripted(reply)) as srv:
        resp = tool_chat(client_for(srv), "Ghent, the time, Lyon", parallel_tool_calls=True)
        assert srv.records()[0].parallel_tool_calls is True
    message = resp.choices[0].message
    assert message.content == "Looking these up."
    assert [c.id for c in message.tool_calls][:2] == ["call_a", "call_b"]
    read = read_tool_calls(message.tool_calls, NAMES)
    assert read.answer() == [
        {"name": "get_weather", "arguments": {"city": "Ghent"}},
        {"name": "get_time", "arguments": {}},
        {"name": "get_weather", "arguments": {"city": "Lyon"}},
    ]


def test_malformed_arguments_an_unknown_tool_and_a_leaked_call() -> None:
    answers = scripted(
        FakeCall("get_weather", '{"city": "Ghent"'),
        FakeCall("get_forecast", {"city": "Ghent"}),
        leaked_call("get_weather", {"city": "Ghent"}),
        leaked_call("get_weather", {"city": "Ghent"}, style="json"),
    )
    with FakeOpenAI(answers) as srv:
        client = client_for(srv)
        malformed, unknown, leaked, bare = (tool_chat(client, f"q{i}") for i in range(4))
    call = malformed.choices[0].message.tool_calls[0]
    assert call.function.arguments == '{"city": "Ghent"'  # sent as scripted
    assert "not valid JSON" in read_tool_calls([call], NAMES).calls[0].problem
    assert unknown.choices[0].message.tool_calls[0].function.name == "get_forecast"
    assert read_tool_calls(unknown.choices[0].message.tool_calls, NAMES).unknown
    for resp in (leaked, bare):
        assert resp.choices[0].finish_reason == "stop"
        assert resp.choices[0].message.tool_calls is None
        assert '"name": "get_weather"' in resp.choices[0].message.content
        assert leaked_calls(resp.choices[0].message.content, NAMES) == [
            {"name": "get_weather", "arguments": {"city": "Ghent"}}
        ]
    assert leaked.choices[0].message.content.startswith("<tool_call>")


def test_the_script_runs_out_with_a_500() -> None:
    with FakeOpenAI(scripted("only one")) as srv:
        client = client_for(srv)
        assert chat(client, "a").choices[0].message.content == "only one"
        with pytest.raises(openai.InternalServerError, match="ran out"):
            chat(client, "b")


GOLD = {
    "Weather in Ghent?": [{"name": "get_weather", "arguments": {"city": "Ghent"}}],
    "Ghent and the time?": [
        {"name": "get_weather", "arguments": {"city": "Ghent"}},
        {"name": "get_time", "arguments": {}},
    ],
    "Hello!": "Hi there.",
}


def gold_answer(request: ToolRequest) -> Any:
    if request.tool_results:  # the tools answered: the final text
        return "Done: " + "; ".join(result["output"] for result in request.tool_results)
    return GOLD[request.last_user]


def test_oracle_answers_each_chat_request_with_its_gold() -> None:
    seen: list[ToolRequest] = []

    def choose(request: ToolRequest) -> Any:
        seen.append(request)
        return gold_answer(request)

    with FakeOpenAI(oracle(choose)) as srv:
        client = client_for(srv)
        for question, gold in GOLD.items():
            message = tool_chat(client, question).choices[0].message
            if isinstance(gold, str):
                assert message.content == gold and message.tool_calls is None
            else:
                assert read_tool_calls(message.tool_calls, NAMES).answer() == gold
        # The next step of the conversation: the calls made and their results go back.
        first = tool_chat(client, "Weather in Ghent?").choices[0].message
        follow = client.chat.completions.create(
            model=MODEL,
            tools=TOOLS,
            messages=[
                {"role": "user", "content": "Weather in Ghent?"},
                first.model_dump(exclude_none=True),  # type: ignore[list-item]
                {"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": "sunny"},
            ],
        )
    assert follow.choices[0].message.content == "Done: sunny"
    assert seen[0].api == "chat" and seen[0].tools == ("get_weather", "get_time")
    last = seen[-1]
    assert last.calls_made[0]["name"] == "get_weather"
    assert last.tool_results == ({"id": first.tool_calls[0].id, "output": "sunny"},)
    assert "get_weather(" in last.text  # the call is part of the content hashed and searched


def responses_tools() -> list[Any]:
    return [{"type": "function", **tool["function"]} for tool in TOOLS]


def test_the_responses_api_with_function_calls_and_outputs() -> None:
    with FakeOpenAI(oracle(gold_answer)) as srv:
        client = client_for(srv)
        resp = client.responses.create(
            model=MODEL,
            instructions="Use the tools.",
            input=[{"role": "user", "content": "Ghent and the time?"}],
            tools=responses_tools(),
            tool_choice="required",
            parallel_tool_calls=True,
        )
        assert resp.object == "response" and resp.status == "completed"
        calls = [item for item in resp.output if item.type == "function_call"]
        assert [(c.name, json.loads(c.arguments)) for c in calls] == [
            ("get_weather", {"city": "Ghent"}),
            ("get_time", {}),
        ]
        assert all(c.call_id.startswith("call_") for c in calls)
        assert read_tool_calls(calls, NAMES).answer() == GOLD["Ghent and the time?"]
        assert resp.output_text == ""
        record = srv.records()[0]
        assert record.tools == ("get_weather", "get_time")
        assert record.tool_choice == "required" and record.parallel_tool_calls is True

        follow = client.responses.create(
            model=MODEL,
            instructions="Use the tools.",
            input=[
                {"role": "user", "content": "Ghent and the time?"},
                *(
                    {
                        "type": "function_call",
                        "call_id": c.call_id,
                        "name": c.name,
                        "arguments": c.arguments,
                    }
                    for c in calls
                ),
                {"type": "function_call_output", "call_id": calls[0].call_id, "output": "rain"},
                {"type": "function_call_output", "call_id": calls[1].call_id, "output": "9:00"},
            ],  # type: ignore[arg-type]
            tools=responses_tools(),
        )
    assert follow.output_text == "Done: rain; 9:00"
    (message,) = follow.output
    assert message.type == "message" and message.role == "assistant"
    usage = follow.usage
    assert usage is not None
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens
    assert usage.input_tokens_details.cached_tokens > 0  # the question was seen before
    assert usage.output_tokens_details.reasoning_tokens == 0


def test_responses_text_answers_limits_and_faults(server: FakeOpenAI) -> None:
    client = client_for(server)
    resp = client.responses.create(model=MODEL, input="Say something")
    assert resp.output_text == "Answer: " + short_hash("Say something")
    server.responder = lambda body: "y" * 400
    cut = client.responses.create(model=MODEL, input="long please", max_output_tokens=16)
    assert cut.status == "incomplete"
    assert cut.incomplete_details is not None
    assert cut.incomplete_details.reason == "max_output_tokens"
    assert len(cut.output_text) == 64
    empty = client.responses.create(model=MODEL, input="[[fault:empty_choices]]")
    assert empty.output == []
    assert server.by_status == {200: 3}
    assert server.stats()["by_path"] == {"/v1/responses": 3}


def test_usage_counts_cached_prompt_tokens() -> None:
    with FakeOpenAI("fixed:ok") as srv:
        client = client_for(srv)
        system = {"role": "system", "content": "Be careful. " * 25}  # 300 characters
        first = client.chat.completions.create(
            model=MODEL, messages=[system, {"role": "user", "content": "one"}]
        )
        again = client.chat.completions.create(
            model=MODEL, messages=[system, {"role": "user", "content": "one"}]
        )
        other = client.chat.completions.create(
            model=MODEL, messages=[system, {"role": "user", "content": "two"}]
        )
        forced = chat(client, "[[cached-tokens:2]] hello there")
        srv.reset()
        after_reset = client.chat.completions.create(
            model=MODEL, messages=[system, {"role": "user", "content": "one"}]
        )
    for resp in (first, again, other, forced, after_reset):
        assert resp.usage is not None and resp.usage.prompt_tokens_details is not None
        assert resp.usage.total_tokens == resp.usage.prompt_tokens + resp.usage.completion_tokens
    cached = [
        r.usage.prompt_tokens_details.cached_tokens  # type: ignore[union-attr]
        for r in (first, again, other, forced, after_reset)
    ]
    assert again.usage is not None and other.usage is not None
    # The repeat is all cached; the other question shares the system message's 75 tokens.
    assert cached == [0, again.usage.prompt_tokens, 75, 2, 0]
    assert other.usage.prompt_tokens > 75


def test_tool_declarations_are_checked_like_the_api() -> None:
    bad_name = {"type": "function", "function": {"name": "maps.search", "parameters": {}}}
    with FakeOpenAI() as srv:
        client = client_for(srv)
        with pytest.raises(openai.BadRequestError, match="does not match pattern"):
            client.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": "x"}], tools=[bad_name]
            )
        with pytest.raises(openai.BadRequestError, match="duplicate"):
            client.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": "x"}], tools=[WEATHER, WEATHER]
            )
        with pytest.raises(openai.BadRequestError, match="not among the tools"):
            tool_chat(client, "x", tool_choice={"type": "function", "function": {"name": "nope"}})
        with pytest.raises(openai.BadRequestError, match="minimum length 1"):
            client.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": "x"}], tools=[]
            )
        with pytest.raises(openai.BadRequestError, match="only allowed when 'tools'"):
            chat(client, "x", tool_choice="auto")
        with pytest.raises(openai.BadRequestError, match="only allowed when 'tools'"):
            chat(client, "x", parallel_tool_calls=False)
        with pytest.raises(openai.BadRequestError, match="tool_call_id"):
            client.chat.completions.create(
                model=MODEL,
                messages=[{"role": "user", "content": "x"}, {"role": "tool", "content": "r"}],  # type: ignore[list-item]
            )
        with pytest.raises(openai.BadRequestError, match="call_id"):
            client.responses.create(
                model=MODEL,
                input=[{"type": "function_call_output", "output": "r"}],  # type: ignore[list-item]
            )
        # A declared function as the choice is fine, in both shapes.
        chosen = {"type": "function", "function": {"name": "get_time"}}
        assert tool_chat(client, "x", tool_choice=chosen).choices
        resp = client.responses.create(
            model=MODEL,
            input="x",
            tools=responses_tools(),
            tool_choice={"type": "function", "name": "get_time"},
        )
        assert resp.status == "completed"
        assert srv.stats()["with_tools"] == 2  # the refused ones are not API answers


def test_text_requests_declare_no_tools(server: FakeOpenAI) -> None:
    chat(client_for(server), "plain")
    (record,) = server.records()
    assert record.tools == () and record.tool_choice is None
    assert record.body is None  # bodies are kept only when asked
    assert server.stats()["with_tools"] == 0


def test_the_request_bodies_can_be_kept() -> None:
    with FakeOpenAI(keep_bodies=True) as srv:
        tool_chat(client_for(srv), "x")
        (record,) = srv.records()
    assert record.body is not None
    assert record.body["tools"] == TOOLS


def test_async_clients_get_tool_calls_through_chat_and_responses() -> None:
    async def run(base_url: str) -> tuple[Any, Any]:
        client = openai.AsyncOpenAI(base_url=base_url, api_key="t", max_retries=0, timeout=5)
        chat_resp, resp = await asyncio.gather(
            client.chat.completions.create(
                model=MODEL,
                messages=[{"role": "user", "content": "Weather in Ghent?"}],
                tools=TOOLS,
            ),
            client.responses.create(
                model=MODEL, input="Weather in Ghent?", tools=responses_tools()
            ),
        )
        await client.close()
        return chat_resp, resp

    with FakeOpenAI(oracle(gold_answer)) as srv:
        chat_resp, resp = asyncio.run(run(srv.base_url))
        apis = sorted(r.path for r in srv.records())
    gold = GOLD["Weather in Ghent?"]
    assert read_tool_calls(chat_resp.choices[0].message.tool_calls, NAMES).answer() == gold
    assert read_tool_calls(resp.output, NAMES).answer() == gold
    assert apis == ["/v1/chat/completions", "/v1/responses"]


def test_gold_file_oracle_out_of_process(tmp_path: Path) -> None:
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps(GOLD), encoding="utf-8")
    with FakeOpenAIProcess("--responder", f"gold:{gold}") as srv:
        client = client_for(srv)
        message = tool_chat(client, "Ghent and the time?").choices[0].message
        assert read_tool_calls(message.tool_calls, NAMES).answer() == GOLD["Ghent and the time?"]
        assert tool_chat(client, "Unknown question").choices[0].message.content == NO_CALL_TEXT
        assert srv.stats()["with_tools"] == 2
    imported = responder_from_spec("import:tests.fake_openai:echo_responder")
    assert imported({"messages": [{"role": "user", "content": "hi"}]}) == "hi"
    with pytest.raises(ValueError, match="import:"):
        responder_from_spec("nonsense")


def test_a_reply_is_text_or_calls() -> None:
    with FakeOpenAI(lambda body: Reply("plain")) as srv:
        assert chat(client_for(srv), "x").choices[0].finish_reason == "stop"
        srv.responder = lambda body: []  # no calls, no text
        assert chat(client_for(srv), "y").choices[0].message.content == ""
        srv.responder = lambda body: [("get_time", {})]
        with pytest.raises(openai.InternalServerError, match="cannot carry tool calls"):
            client_for(srv).completions.create(model=MODEL, prompt="z")


# ---- out of process ----------------------------------------------------------------------------


def test_subprocess_mode_with_stats_config_and_reset() -> None:
    args = ("--latency-ms", "5", "--responder", "fixed:hi", "--fail-first", "1", "--seed", "2")
    with FakeOpenAIProcess(*args) as srv:
        assert srv.base_url.startswith("http://127.0.0.1:")
        assert srv.base_url.endswith("/v1")
        client = client_for(srv)
        with pytest.raises(openai.InternalServerError):
            chat(client, "one")
        assert chat(client, "one").choices[0].message.content == "hi"
        with pytest.raises(openai.RateLimitError):
            chat(client, "two [[fault:429]]")

        stats = srv.stats(contains="one")
        assert stats["total"] == 3
        assert stats["by_status"] == {"200": 1, "429": 1, "500": 1}
        assert stats["matching"] == 2

        srv.configure(faults={"503": 1.0}, fail_first=0)
        with pytest.raises(openai.InternalServerError) as info:
            chat(client, "three")
        assert info.value.status_code == 503

        srv.reset()
        assert srv.stats()["total"] == 0


def test_cli_prints_its_base_url_and_serves_until_killed() -> None:
    process = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("fake_openai.py")), "--responder", "echo"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        client = openai.OpenAI(base_url=base_url, api_key="t", max_retries=0, timeout=5)
        assert chat(client, "echo me").choices[0].message.content == "echo me"
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0
        if process.stdout is not None:
            process.stdout.close()


# ---- throughput --------------------------------------------------------------------------------

# The openai client costs ~1.5 ms of CPU per request (request transforms, pydantic, the connection
# pool), so at the ~640 requests/s this needs it alone keeps one core busy. It runs in its own
# process: sharing the test process's GIL with the server thread would measure GIL contention,
# not the server.
LOAD_GENERATOR = textwrap.dedent(
    """
    import asyncio, hashlib, json, sys, time
    import openai

    async def main(base_url, total, concurrency):
        client = openai.AsyncOpenAI(base_url=base_url, api_key="t", max_retries=0, timeout=10)
        gate = asyncio.Semaphore(concurrency)

        latencies = []

        async def one(i):
            async with gate:
                sent = time.perf_counter()
                resp = await client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": f"item {i}"}]
                )
                latencies.append(time.perf_counter() - sent)
                expected = "Answer: " + hashlib.sha256(f"item {i}".encode()).hexdigest()[:8]
                return resp.choices[0].message.content == expected

        await asyncio.gather(*(one(-1 - i) for i in range(concurrency)))  # warm the pool
        latencies.clear()
        started = time.perf_counter()
        results = await asyncio.gather(*(one(i) for i in range(total)))
        wall = time.perf_counter() - started
        await client.close()
        latencies.sort()
        median = latencies[len(latencies) // 2]
        print(json.dumps({"wall": wall, "ok": sum(results), "median": median}))

    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
    """
)


@pytest.mark.slow
def test_throughput_2000_requests_at_concurrency_32_with_50ms_latency() -> None:
    total, concurrency, latency_ms = 2000, 32, 50
    ideal = total / concurrency * latency_ms / 1000  # 3.125 s
    with FakeOpenAI(latency_ms=latency_ms) as srv:
        result = subprocess.run(
            [sys.executable, "-c", LOAD_GENERATOR, srv.base_url, str(total), str(concurrency)],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        assert srv.total == total + concurrency
    report = json.loads(result.stdout)
    assert report["ok"] == total
    # What this guards is that the server answers concurrently. A server that serialised requests
    # would keep each one waiting behind the 31 others (a median of ~1.6 s, a wall of 100 s). The
    # wall time alone does not tell that apart from a busy machine: the client needs ~1.5 ms of
    # CPU a request (about 1.1x the ideal on an idle machine, 7x seen with other test runs
    # sharing the 2 cores), so the bounds are on the median request (85-125 ms seen under that
    # load: the client times a request from when it is sent) and a wall far below serial.
    median_ms = report["median"] * 1000
    assert median_ms < 8 * latency_ms, f"median request {median_ms:.0f} ms"
    serial = total * latency_ms / 1000
    wall = report["wall"]
    assert wall < serial / 2, f"{wall:.2f}s (ideal {ideal:.3f}s, serial {serial:.0f}s)"


# ---- a per-client concurrency cap -----------------------------------------------------------


async def _timed_chats(base_url: str, count: int) -> float:
    client = openai.AsyncOpenAI(base_url=base_url, api_key="test", max_retries=0, timeout=10)
    start = time.perf_counter()
    await asyncio.gather(
        *(
            client.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": f"q {i}"}]
            )
            for i in range(count)
        )
    )
    elapsed = time.perf_counter() - start
    await client.close()
    return elapsed


def test_per_client_concurrency_holds_one_clients_requests_to_the_cap() -> None:
    # 8 requests of 200 ms from one client under a cap of 2: four rounds, about 0.8 s
    with FakeOpenAI(latency_ms=200, per_client_concurrency=2) as srv:
        capped = asyncio.run(_timed_chats(srv.base_url, 8))
        by_client = srv.stats()["by_client"]
        clients = {record.client for record in srv.records()}
    assert 0.75 <= capped < 1.5, capped
    assert by_client == {"127.0.0.1": 8} and clients == {"127.0.0.1"}
    # without the cap, one round
    with FakeOpenAI(latency_ms=200) as srv:
        free = asyncio.run(_timed_chats(srv.base_url, 8))
    assert free < 0.6, free
