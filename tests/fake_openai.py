"""A fast, fault-injecting, OpenAI-compatible HTTP server for tests and performance scripts.

Pure standard library: HTTP/1.1 (keep-alive, Content-Length or chunked request bodies) on
asyncio streams, so thousands of requests held in ``asyncio.sleep`` cost next to nothing.

Two ways to run it
------------------
In the test process (a background thread with its own event loop)::

    with FakeOpenAI(latency_ms=50, faults={"429": 0.1}, seed=7) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
        ...
        assert server.count_for("some prompt") == 1

Out of process (real Celery workers, perf scripts); it prints its base URL on one line and serves
until killed (SIGTERM / SIGINT)::

    python tests/fake_openai.py --port 0 --latency-ms 50 --responder hash \\
        --faults 429=0.1,500=0.05 --seed 7 --retry-after 1

``FakeOpenAIProcess`` wraps that in a context manager for tests.

Endpoints
---------
``POST /v1/chat/completions``, ``POST /v1/completions``, ``POST /v1/embeddings``,
``POST /v1/responses`` (the Responses API), ``GET /v1/models`` (and ``GET /v1/models/<id>``); the
``/v1`` prefix is optional. ``"stream": true`` is refused with 400. Malformed requests (bad JSON, a
body that is not an object, no ``model``, no ``messages``/``prompt``/``input``; ``tools`` that are
not function tools named by ``^[a-zA-Z0-9_-]{1,64}$``, once each; a ``tool_choice`` that is not
none/auto/required or a declared function; in chat, an empty ``tools`` array, or ``tool_choice`` /
``parallel_tool_calls`` without tools; a ``tool`` message without ``tool_call_id``; a
``function_call_output`` item without ``call_id``) get a 400 with an OpenAI-style error body,
unknown paths 404,
wrong methods 405. Control endpoints, never counted: ``GET /_stats`` (the counters as JSON;
``?contains=<text>`` adds ``"matching"``, the number of logged requests whose content contains
it), ``POST /_reset`` (clears counters, log and per-content attempt numbers) and ``POST /_config``
(JSON with any of ``latency_ms``, ``faults``, ``seed``, ``fail_first``, ``fail_first_fault``,
``retry_after``, ``timeout_s``, ``redirect_to``: changes them at run time).

Answers
-------
The assistant's answer comes from a *responder*, ``(request json dict) -> str | Reply``. Built in
(also the ``--responder`` values): ``hash`` (default; ``"Answer: " + the first 8 hex digits of the
sha256 of the request content``), ``echo`` (the last user message, or the prompt),
``fixed:<text>``, ``gold:<file>`` and ``import:<module>:<callable>`` (see Tool calls). In process
any callable can be passed; if it raises, the request gets a 500. ``content_text()`` is the
request content the hash, the directives and ``requests_for`` all look at: the message texts
(string or text parts; an assistant message's tool calls as ``name(arguments)``) joined by
newlines, the prompt(s), the Responses API's instructions and input items (a function call as
``name(arguments)``, a function call's output as its text), or the embedding input(s).

``max_tokens`` / ``max_completion_tokens`` (``max_output_tokens`` for responses) cut the answer's
text (one token = 4 characters) and set ``finish_reason`` to ``"length"`` (a response's status to
``"incomplete"``); ``n`` repeats the choice.

``usage`` is on every answer and counts 4 characters a token (text plus each call's name and
arguments). Chat and completion answers also carry ``prompt_tokens_details.cached_tokens`` and
responses ``input_tokens``/``output_tokens``/``input_tokens_details.cached_tokens``: a prompt
cache that remembers every request's leading messages (or items), so the cached tokens are those
of the longest run of leading messages an earlier request since the last reset began with (0 for
a new conversation, all of it for a repeat, the earlier turns for an agent's next step); a
completion prompt is one piece (cached when repeated); ``[[cached-tokens:N]]`` in the content
says N.

Embeddings are unit vectors derived from the sha256 of each input, ``embedding_dim`` long (or
the request's ``dimensions``), as floats or, when the client asks (the openai client does by
default), as base64 of little-endian float32.

Tool calls
----------
A responder may return a ``Reply(content, tool_calls)`` (``tool_calls`` a tuple of
``FakeCall(name, arguments, id=None)``; ``arguments`` a dict sent as JSON, or a string sent as it
is, malformed or not), one ``FakeCall``, or a list of calls (``FakeCall``, ``(name, arguments)``
or ``{"name", "arguments"}``). Chat answers carry them as ``message.tool_calls`` (``id``,
``type: "function"``, ``function.name``, ``function.arguments`` as a JSON string; several in one
message are parallel calls) with ``finish_reason: "tool_calls"``; responses as ``function_call``
output items (``call_id``, ``name``, ``arguments``) after a ``message`` item holding any text.
The script wins over the request: the fake sends what the responder says whatever ``tools``,
``tool_choice`` or ``parallel_tool_calls`` were (a test asserts on those from the record), so a
call of an undeclared tool is as easy to script as a good one. Helpers: ``tool_reply(*calls,
content=None)``; ``leaked_call(name, arguments)`` (the call written into the text as
``<tool_call>{...}</tool_call>``, no ``tool_calls``, ``finish_reason: "stop"``);
``scripted(*answers)`` (one answer per request in turn; a 500 when they run out);
``oracle(choose)``, the oracle mode: ``choose(ToolRequest)`` picks each answer from the request,
which it sees the same way for chat and responses (``api``, ``tools`` declared, ``tool_choice``,
``parallel_tool_calls``, ``last_user`` text, ``calls_made`` and ``tool_results`` so far), so a test
answers every item with its gold calls; ``gold:<file>`` (``gold_responder``) is an oracle from a
JSON object of last user text -> calls or text, for a server in another process, which
``import:<module>:<callable>`` also serves with any responder of the project.

Each ``RequestRecord`` keeps what the request declared: ``tools`` (the function names, in order),
``tool_choice`` and ``parallel_tool_calls`` (None when not sent); ``stats()["with_tools"]``
counts the requests that declared any. ``keep_bodies=True`` (in process) also keeps each API
request's JSON body on its record (``record.body``), e.g. to check the declared schemas. The
fake keeps no conversation state: a Responses API ``previous_response_id`` is echoed back, not
followed, so a client sends the whole conversation as input items.

Knobs (constructor keyword = CLI flag)
--------------------------------------
``latency_ms`` / ``--latency-ms`` (0)
    Added to every POST API request (faults included) with ``asyncio.sleep``.
``faults`` / ``--faults KIND=RATE,...`` (none)
    Per-request probabilities; rates must sum to <= 1 and a request gets at most one fault.
``seed`` / ``--seed`` (0)
    The fault draw for a request is a hash of (seed, content hash, attempt number for that
    content), not a shared RNG stream, so the same inputs fail the same way however concurrent
    requests interleave.
``retry_after`` / ``--retry-after`` (1) and ``retry_after_http_date`` / ``--retry-after-date``
    The 429 ``Retry-After`` header: seconds, or an HTTP-date that many seconds ahead.
``timeout_s`` / ``--timeout-s`` (30)
    How long a ``timeout`` fault holds the request before answering normally (a held request
    whose client went away is dropped). Other requests are not delayed by it.
``fail_first`` / ``--fail-first`` (0) with ``fail_first_fault`` / ``--fail-first-fault`` ("500")
    Every distinct content fails its first N attempts with that fault, then succeeds.
``embedding_dim`` / ``--embedding-dim`` (8), ``model`` / ``--model`` ("fake-model", what
``/v1/models`` lists), ``host`` / ``--host`` (127.0.0.1), ``port`` / ``--port`` (0 = any free),
``max_records`` / ``--max-records`` (100000: the request log keeps only the latest records, so
``requests_for`` sees only those; the counters and attempt numbers are never dropped).
``per_client_concurrency`` / ``--per-client-concurrency`` (0 = no cap)
    At most N API requests of one client address are answered at once; the others wait their
    turn before they are logged (an endpoint's per-client limit). Every record keeps the
    client's address (``record.client``) and ``stats()["by_client"]`` counts requests by it.

Fault kinds, and what ``openai`` 3.54 (``max_retries=0``) raises for each
------------------------------------------------------------------------
``429``            429 + ``Retry-After`` + rate-limit error body: ``openai.RateLimitError``;
                   ``exc.response.headers["retry-after"]`` is readable, ``exc.code`` is
                   ``"rate_limit_exceeded"``.
``500``/``502``/``503``  that status + error body: ``openai.InternalServerError``
                   (``exc.status_code`` tells which).
any other ``4xx``/``5xx`` (``"401"``, ``"404"`` ...)  that status: the matching ``APIStatusError``
                   subclass (``AuthenticationError``, ``NotFoundError`` ...).
a ``3xx`` (``"301"``, ``"307"`` ...)  that status with ``Location: <redirect_to>`` (the
                   ``redirect_to`` / ``--redirect-to`` knob, ``/v1/moved`` by default, which
                   answers 404): a client that follows redirects posts there; one that does not
                   gets an ``APIStatusError`` with that status.
``timeout``        the request is held ``timeout_s``: ``openai.APITimeoutError`` once the client's
                   own timeout passes.
``truncated``      200, ``Content-Type: application/json``, the body cut in half with a matching
                   Content-Length: the client does not wrap this; it raises the standard library's
                   ``json.JSONDecodeError`` (a ``ValueError``, *not* an ``openai.OpenAIError`` and
                   not ``APIResponseValidationError``), and it never retries it.
``empty_choices``  200 with ``"choices": []``: no exception; the call returns a normal
                   ``ChatCompletion`` / ``Completion`` whose ``.choices == []``, so
                   ``resp.choices[0]`` raises ``IndexError``.
``not_object``     200 whose JSON is a list holding the answer: no exception from the client; what
                   it returns has no ``choices``.
``disconnect``     the connection is closed without a response: ``openai.APIConnectionError``.

With ``max_retries > 0`` the client itself retries 429, 5xx, timeouts and disconnects (waiting
``Retry-After`` when it is at most 60 s) before raising the same exceptions; it never retries a
truncated body, empty choices or a list, since all arrive as a 200.

Directives in the request content (they win over ``fail_first``, which wins over the rates)
------------------------------------------------------------------------------------------
``[[fault:KIND]]``    the first request with this exact content gets KIND, later ones succeed
                      (the same as ``[[fault:KINDx1]]``).
``[[fault:KINDxN]]``  the first N requests with this exact content get KIND (``x*``: all).
``[[fail-always]]``   every request with this content gets a 500.
``[[latency-ms:N]]``  this request's latency is N ms instead of ``latency_ms``.
"Exact content" is the sha256 of ``content_text()``; ``reset()`` restarts the attempt numbers.

Observability (thread safe)
---------------------------
``server.total``, ``server.by_status`` ({200: n, 429: n}), ``server.by_fault``,
``server.stats()`` (everything, also what ``/_stats`` returns), ``server.records()``,
``server.requests_for(substring)`` (the logged ``RequestRecord``\\ s whose content contains it),
``server.count_for(substring)``, ``server.attempts(content)`` (requests with exactly that
content), ``server.reset()``, ``server.configure(...)`` (the ``/_config`` knobs).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import email.utils
import hashlib
import http.client
import importlib
import json
import math
import re
import select
import signal
import struct
import subprocess
import sys
import threading
import time
import traceback
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

# A responder answers a request body with text, or with a Reply (text and/or tool calls).
Responder = Callable[[dict[str, Any]], "str | Reply"]

NAMED_FAULTS = (
    "429",
    "500",
    "502",
    "503",
    "timeout",
    "truncated",
    "empty_choices",
    "not_object",
    "disconnect",
)
_STATUS_FAULT = re.compile(r"^[345]\d\d$")
_FAULT_DIRECTIVE = re.compile(r"\[\[fault:([a-z_]+|\d{3})(?:x(\d+|\*))?\]\]")
_FAIL_ALWAYS = "[[fail-always]]"
_LATENCY_DIRECTIVE = re.compile(r"\[\[latency-ms:(\d+(?:\.\d+)?)\]\]")
_MAX_BODY = 64 * 1024 * 1024
_MAX_HEAD = 1024 * 1024
_CHARS_PER_TOKEN = 4
_MAX_PREFIXES = 1_000_000
_CACHED_DIRECTIVE = re.compile(r"\[\[cached-tokens:(\d+)\]\]")
API_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


# --------------------------------------------------------------------------------------------
# Request content, responders, embeddings


def _part_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def _prompt_list(value: Any) -> list[str]:
    """The separate prompts/inputs of a completions or embeddings request, as text."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        if value and all(isinstance(v, int) for v in value):
            return [" ".join(map(str, value))]
        return [
            v if isinstance(v, str) else " ".join(map(str, v)) if isinstance(v, list) else str(v)
            for v in value
        ]
    return [] if value is None else [str(value)]


def _call_text(name: Any, arguments: Any) -> str:
    return f"{name}({arguments if isinstance(arguments, str) else json.dumps(arguments)})"


def _message_text(message: Mapping[str, Any]) -> str:
    """A chat message's text; an assistant message's tool calls follow as `name(arguments)`."""
    text = _part_text(message.get("content"))
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        lines = [
            _call_text(call["function"].get("name"), call["function"].get("arguments"))
            for call in calls
            if isinstance(call, dict) and isinstance(call.get("function"), dict)
        ]
        text = "\n".join(filter(None, [text, *lines]))
    return text


def _item_text(item: Any) -> str:
    """One Responses API input item as text: a message's text, a function call as
    `name(arguments)`, a function call's output as itself."""
    if isinstance(item, str):
        return item
    if not isinstance(item, dict):
        return ""
    kind = item.get("type", "message")
    if kind == "function_call":
        return _call_text(item.get("name"), item.get("arguments"))
    if kind == "function_call_output":
        output = item.get("output")
        return output if isinstance(output, str) else _part_text(output)
    return _part_text(item.get("content"))


def _responses_segments(body: Mapping[str, Any]) -> list[str]:
    segments = []
    if isinstance(body.get("instructions"), str):
        segments.append(body["instructions"])
    given = body.get("input")
    items = given if isinstance(given, list) else [given]
    segments.extend(_item_text(item) for item in items)
    return segments


def _is_responses(body: Mapping[str, Any]) -> bool:
    """A Responses API body: its input is items (objects), or it has instructions."""
    given = body.get("input")
    if "instructions" in body:
        return True
    return isinstance(given, list) and any(isinstance(item, dict) for item in given)


def _segments(body: Mapping[str, Any]) -> list[str]:
    """The request content in its parts (messages, items, prompts), in order."""
    messages = body.get("messages")
    if isinstance(messages, list):
        return [_message_text(m) for m in messages if isinstance(m, dict)]
    if "prompt" in body:
        return _prompt_list(body["prompt"])
    if _is_responses(body):
        return _responses_segments(body)
    if "input" in body:
        return _prompt_list(body["input"])
    return []


def content_text(body: Mapping[str, Any]) -> str:
    """The request content that hashing, directives and ``requests_for`` look at."""
    return "\n".join(_segments(body))


def short_hash(text: str, length: int = 8) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def hash_responder(body: dict[str, Any]) -> str:
    return "Answer: " + short_hash(content_text(body))


def echo_responder(body: dict[str, Any]) -> str:
    messages = body.get("messages")
    if not isinstance(messages, list) and _is_responses(body):
        given = body.get("input")
        messages = given if isinstance(given, list) else [{"role": "user", "content": given}]
    if isinstance(messages, list):
        for message in reversed(messages):
            if isinstance(message, dict) and message.get("role") == "user":
                return _part_text(message.get("content"))
        return ""
    return content_text(body)


def fixed_responder(text: str) -> Responder:
    def respond(body: dict[str, Any]) -> str:
        return text

    return respond


def responder_from_spec(spec: str) -> Responder:
    """``hash``, ``echo``, ``fixed:<text>``, ``gold:<file>`` or ``import:<module>:<callable>``
    (the CLI's ``--responder``; the last two let a server in another process be an oracle)."""
    if spec == "hash":
        return hash_responder
    if spec == "echo":
        return echo_responder
    if spec.startswith("fixed:"):
        return fixed_responder(spec.removeprefix("fixed:"))
    if spec.startswith("gold:"):
        return gold_responder(Path(spec.removeprefix("gold:")))
    if spec.startswith("import:"):
        module_name, _, attribute = spec.removeprefix("import:").rpartition(":")
        if not module_name or not attribute:
            raise ValueError(f"expected import:<module>:<callable>, got {spec!r}")
        responder = getattr(importlib.import_module(module_name), attribute)
        if not callable(responder):
            raise ValueError(f"{spec!r} is not callable")
        return responder  # type: ignore[no-any-return]
    raise ValueError(
        f"unknown responder {spec!r}; expected hash, echo, fixed:<text>, gold:<file> or "
        "import:<module>:<callable>"
    )


# --------------------------------------------------------------------------------------------
# Tool calls: scripted replies, the oracle


@dataclass(frozen=True)
class FakeCall:
    """One tool call to answer with. ``arguments`` a dict (sent as JSON) or a string sent as
    it is (so a test can send malformed JSON); ``id`` made up when None."""

    name: str
    arguments: Any = field(default_factory=dict)
    id: str | None = None

    @property
    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False)


@dataclass(frozen=True)
class Reply:
    """What the model answers: text (``content``, None for none) and tool calls, in order.
    Several calls are one message's parallel calls."""

    content: str | None = None
    tool_calls: tuple[FakeCall, ...] = ()


def tool_reply(*calls: FakeCall | tuple[str, Any], content: str | None = None) -> Reply:
    """A reply with these calls (``FakeCall``\\ s or ``(name, arguments)`` pairs)."""
    return Reply(content, tuple(_as_call(call) for call in calls))


def leaked_call(name: str, arguments: Any, *, style: str = "hermes") -> Reply:
    """A call written into the text instead of ``tool_calls`` (what a model whose chat template
    the server does not parse sends): ``<tool_call>{"name", "arguments"}</tool_call>``
    (``style="hermes"``) or the bare JSON object (``style="json"``); finish_reason "stop"."""
    payload = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
    if style == "json":
        return Reply(payload)
    return Reply(f"<tool_call>\n{payload}\n</tool_call>")


def _as_call(value: Any) -> FakeCall:
    if isinstance(value, FakeCall):
        return value
    if isinstance(value, dict):
        return FakeCall(str(value["name"]), value.get("arguments", {}), value.get("id"))
    name, arguments = value
    return FakeCall(str(name), arguments)


def as_reply(answer: Any) -> Reply:
    """A responder's answer as a Reply: text, a Reply, one call, or a list of calls
    (``FakeCall``, ``(name, arguments)`` or ``{"name", "arguments"}``; [] is an empty text)."""
    if isinstance(answer, Reply):
        return answer
    if isinstance(answer, str):
        return Reply(answer)
    if isinstance(answer, FakeCall):
        return Reply(None, (answer,))
    if isinstance(answer, list | tuple):
        calls = tuple(_as_call(call) for call in answer)
        return Reply(None if calls else "", calls)
    raise TypeError(f"responder returned {type(answer).__name__}, not str or Reply")


def _chat_tool_names(tools: Any) -> tuple[str, ...]:
    names = []
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        function = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        if isinstance(function.get("name"), str):
            names.append(function["name"])
    return tuple(names)


@dataclass(frozen=True)
class ToolRequest:
    """A chat or Responses API request as an oracle sees it, the same for both."""

    body: dict[str, Any]
    api: str  # "chat", "responses" or "completions"
    tools: tuple[str, ...]  # the declared function names, in order
    tool_choice: Any
    parallel_tool_calls: bool | None
    text: str  # content_text(body)
    last_user: str  # the last user message's text ("" when none)
    # The calls already made in the conversation ({"id", "name", "arguments"}) and the tool
    # results sent back ({"id", "output"}), in order.
    calls_made: tuple[dict[str, Any], ...]
    tool_results: tuple[dict[str, Any], ...]

    @classmethod
    def of(cls, body: dict[str, Any]) -> ToolRequest:
        calls: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        last_user = ""
        if isinstance(body.get("messages"), list):
            api = "chat"
            for message in body["messages"]:
                if not isinstance(message, dict):
                    continue
                role = message.get("role")
                if role == "user":
                    last_user = _part_text(message.get("content"))
                elif role == "tool":
                    output = _part_text(message.get("content"))
                    results.append({"id": message.get("tool_call_id"), "output": output})
                for call in message.get("tool_calls") or []:
                    function = call.get("function", {}) if isinstance(call, dict) else {}
                    calls.append(
                        {
                            "id": call.get("id"),
                            "name": function.get("name"),
                            "arguments": function.get("arguments"),
                        }
                    )
        elif _is_responses(body) or (isinstance(body.get("input"), str) and "prompt" not in body):
            api = "responses"
            given = body.get("input")
            for item in given if isinstance(given, list) else [{"role": "user", "content": given}]:
                if not isinstance(item, dict):
                    continue
                kind = item.get("type", "message")
                if kind == "function_call":
                    calls.append(
                        {
                            "id": item.get("call_id"),
                            "name": item.get("name"),
                            "arguments": item.get("arguments"),
                        }
                    )
                elif kind == "function_call_output":
                    results.append({"id": item.get("call_id"), "output": _item_text(item)})
                elif item.get("role") == "user":
                    last_user = _part_text(item.get("content"))
        else:
            api = "completions"
            last_user = content_text(body)
        parallel = body.get("parallel_tool_calls")
        return cls(
            body=body,
            api=api,
            tools=_chat_tool_names(body.get("tools")),
            tool_choice=body.get("tool_choice"),
            parallel_tool_calls=parallel if isinstance(parallel, bool) else None,
            text=content_text(body),
            last_user=last_user,
            calls_made=tuple(calls),
            tool_results=tuple(results),
        )


def oracle(choose: Callable[[ToolRequest], Any]) -> Responder:
    """A responder that answers each request with what ``choose(ToolRequest)`` returns: calls
    (a list of ``FakeCall`` / ``(name, arguments)`` / ``{"name", "arguments"}``), a Reply, or
    text. A test answers each item with its gold calls by looking the request up (its
    ``last_user`` text, its declared ``tools``) in the gold it holds."""

    def respond(body: dict[str, Any]) -> Reply:
        return as_reply(choose(ToolRequest.of(body)))

    return respond


NO_CALL_TEXT = "No tool call is needed."


def gold_responder(path: Path) -> Responder:
    """An oracle from a JSON file: an object mapping a request's last user text to its answer
    (a list of ``{"name", "arguments"}`` calls, or text). A request whose text is not there, or
    that already carries tool results, is answered with ``NO_CALL_TEXT``."""
    answers = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(answers, dict):
        raise ValueError(f"{path}: expected a JSON object of user text -> answer")

    def choose(request: ToolRequest) -> Any:
        if request.tool_results:
            return NO_CALL_TEXT
        return answers.get(request.last_user, NO_CALL_TEXT)

    return oracle(choose)


def scripted(*answers: Any) -> Responder:
    """A responder that gives ``answers`` in turn, one per request (text, Reply, a call or a
    list of calls); a request after the last gets a 500 (the script ran out)."""
    queue = deque(answers)
    lock = threading.Lock()

    def respond(body: dict[str, Any]) -> Reply:
        with lock:
            if not queue:
                raise RuntimeError("the scripted answers ran out")
            answer = queue.popleft()
        return as_reply(answer)

    return respond


def embedding_vector(text: str, dim: int) -> list[float]:
    """A deterministic unit vector for ``text``: same text, same vector, on any machine."""
    out: list[float] = []
    counter = 0
    while len(out) < dim:
        digest = hashlib.sha256(f"{counter}\0{text}".encode()).digest()
        out.extend((b - 127.5) / 127.5 for b in digest)
        counter += 1
    vec = out[:dim]
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    # Rounded through float32 so the float and base64 encodings decode to the same numbers.
    packed = struct.pack(f"<{dim}f", *(v / norm for v in vec))
    return list(struct.unpack(f"<{dim}f", packed))


def _tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / _CHARS_PER_TOKEN)) if text else 0


def _normalize_fault(kind: object) -> str:
    name = str(kind).strip().lower()
    if name in NAMED_FAULTS or _STATUS_FAULT.match(name):
        return name
    raise ValueError(
        f"unknown fault kind {kind!r}; expected one of {NAMED_FAULTS} or a 3xx/4xx/5xx"
    )


def _normalize_rates(faults: Mapping[Any, float] | None) -> list[tuple[str, float]]:
    rates: dict[str, float] = {}
    for kind, rate in (faults or {}).items():
        rate = float(rate)
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"fault rate for {kind!r} must be within [0, 1], got {rate}")
        if rate:
            rates[_normalize_fault(kind)] = rates.get(_normalize_fault(kind), 0.0) + rate
    if sum(rates.values()) > 1.0 + 1e-9:
        raise ValueError(f"fault rates sum to more than 1: {rates}")

    # A canonical order, so the same rates pick the same faults whatever order they were given in.
    def order(kind: str) -> tuple[int, str]:
        return (NAMED_FAULTS.index(kind) if kind in NAMED_FAULTS else len(NAMED_FAULTS), kind)

    return sorted(rates.items(), key=lambda item: order(item[0]))


def _draw(seed: int, key: str, attempt: int) -> float:
    digest = hashlib.blake2b(f"{seed}\0{key}\0{attempt}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2.0**64


# --------------------------------------------------------------------------------------------
# Request log


@dataclass(frozen=True)
class RequestRecord:
    seq: int
    method: str
    path: str
    key: str  # sha256 prefix of content_text(); "" for requests without content
    content: str
    attempt: int  # 1 for the first request with this content since the last reset
    status: int  # what was (or, for a timeout still held, will be) sent; 0 for a disconnect
    fault: str | None
    at: float
    # What the request declared for tool calling: the function names of its ``tools`` (in
    # order), its ``tool_choice`` and ``parallel_tool_calls`` (None when not sent).
    tools: tuple[str, ...] = ()
    tool_choice: Any = None
    parallel_tool_calls: bool | None = None
    # The request as sent, when the server keeps bodies (``keep_bodies``); None otherwise.
    body: dict[str, Any] | None = None
    # Its Authorization header (None when it had none): which key a client sent.
    authorization: str | None = None
    # The client's address (the peer's host), as the server saw it.
    client: str = ""


class _Log:
    def __init__(self, max_records: int) -> None:
        self._lock = threading.Lock()
        self._max_records = max_records
        self.clear()

    def clear(self) -> None:
        with self._lock:
            self.seq = 0
            self.count = 0
            self.records: deque[RequestRecord] = deque(maxlen=self._max_records)
            self.by_status: Counter[int] = Counter()
            self.by_fault: Counter[str] = Counter()
            self.by_path: Counter[str] = Counter()
            self.by_key: Counter[str] = Counter()
            self.by_client: Counter[str] = Counter()
            self.with_tools = 0
            # Hashes of the message prefixes seen, for cached_tokens (a prompt cache).
            self.prefixes: set[str] = set()

    def next_attempt(self, key: str) -> tuple[int, int]:
        with self._lock:
            self.seq += 1
            if key:
                self.by_key[key] += 1
            return self.seq, self.by_key[key] if key else 1

    def add(self, record: RequestRecord) -> None:
        with self._lock:
            self.count += 1
            self.records.append(record)
            self.by_status[record.status] += 1
            self.by_path[record.path] += 1
            if record.fault:
                self.by_fault[record.fault] += 1
            if record.tools:
                self.with_tools += 1
            if record.client:
                self.by_client[record.client] += 1

    def cached_prefix(self, segments: list[str]) -> int:
        """How many leading segments an earlier request began with; remembers these."""
        chain = hashlib.sha256()
        hashes = []
        for segment in segments:
            chain.update(segment.encode("utf-8", "surrogatepass") + b"\0")
            hashes.append(chain.hexdigest())
        with self._lock:
            found = 0
            for index, digest in enumerate(hashes):
                if digest not in self.prefixes:
                    break
                found = index + 1
            if len(self.prefixes) > _MAX_PREFIXES:
                self.prefixes.clear()
            self.prefixes.update(hashes)
            return found

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {
                "total": self.count,
                "by_status": {str(k): v for k, v in sorted(self.by_status.items())},
                "by_fault": dict(sorted(self.by_fault.items())),
                "by_path": dict(sorted(self.by_path.items())),
                "by_key": dict(self.by_key),
                "distinct_contents": len(self.by_key),
                "with_tools": self.with_tools,
                "by_client": dict(sorted(self.by_client.items())),
            }

    def matching(self, substring: str) -> list[RequestRecord]:
        with self._lock:
            return [r for r in self.records if substring in r.content]


# --------------------------------------------------------------------------------------------
# HTTP plumbing


class _HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class _Request:
    method: str
    target: str
    version: str
    headers: dict[str, str]
    body: bytes

    @property
    def keep_alive(self) -> bool:
        connection = self.headers.get("connection", "").lower()
        if self.version == "HTTP/1.0":
            return "keep-alive" in connection
        return "close" not in connection


@dataclass
class _Response:
    status: int
    body: bytes = b""
    headers: list[tuple[str, str]] | None = None
    close: bool = False  # close the connection after sending
    drop: bool = False  # close the connection without sending anything
    request_id: str = "req_none"


def _error_body(message: str, type_: str, code: str | None = None) -> bytes:
    error = {"message": message, "type": type_, "param": None, "code": code}
    return json.dumps({"error": error}).encode()


def _json_response(status: int, payload: Any) -> _Response:
    return _Response(status, json.dumps(payload).encode())


def _error_response(status: int, message: str, type_: str = "invalid_request_error") -> _Response:
    return _Response(status, _error_body(message, type_))


async def _read_request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> _Request | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if exc.partial.strip():
            raise _HttpError(400, "incomplete request head") from None
        return None  # the client closed an idle keep-alive connection
    except asyncio.LimitOverrunError:
        raise _HttpError(431, "request head too large") from None
    lines = head.decode("latin-1").split("\r\n")
    try:
        method, target, version = lines[0].split(" ")
    except ValueError:
        raise _HttpError(400, f"malformed request line {lines[0]!r}") from None
    if not version.startswith("HTTP/1."):
        raise _HttpError(505, f"unsupported protocol {version!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep:
            raise _HttpError(400, f"malformed header line {line!r}")
        headers[name.strip().lower()] = value.strip()

    if headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = await _read_chunked(reader)
    else:
        try:
            length = int(headers.get("content-length", "0"))
        except ValueError:
            raise _HttpError(400, "malformed Content-Length") from None
        if length < 0 or length > _MAX_BODY:
            raise _HttpError(413, "request body too large")
        body = await reader.readexactly(length) if length else b""
    return _Request(method.upper(), target, version, headers, body)


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    chunks: list[bytes] = []
    size_total = 0
    while True:
        line = await reader.readuntil(b"\r\n")
        try:
            size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise _HttpError(400, "malformed chunk size") from None
        if size == 0:
            # Skip trailers up to the blank line that ends the body.
            while (await reader.readuntil(b"\r\n")) != b"\r\n":
                pass
            return b"".join(chunks)
        size_total += size
        if size_total > _MAX_BODY:
            raise _HttpError(413, "request body too large")
        chunks.append(await reader.readexactly(size))
        await reader.readexactly(2)


def _encode_response(response: _Response, keep_alive: bool) -> bytes:
    try:
        reason = HTTPStatus(response.status).phrase
    except ValueError:
        reason = "Unknown"
    head = [
        f"HTTP/1.1 {response.status} {reason}",
        "content-type: application/json",
        f"content-length: {len(response.body)}",
        f"x-request-id: {response.request_id}",
        "connection: " + ("keep-alive" if keep_alive else "close"),
    ]
    head.extend(f"{name}: {value}" for name, value in response.headers or ())
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + response.body


# --------------------------------------------------------------------------------------------
# The server


class FakeOpenAI:
    """See the module docstring. Use as a context manager, or ``start()`` / ``stop()``."""

    def __init__(
        self,
        responder: Responder | str | None = None,
        *,
        latency_ms: float = 0.0,
        faults: Mapping[Any, float] | None = None,
        seed: int = 0,
        retry_after: float = 1.0,
        retry_after_http_date: bool = False,
        timeout_s: float = 30.0,
        fail_first: int = 0,
        fail_first_fault: str = "500",
        redirect_to: str = "/v1/moved",
        embedding_dim: int = 8,
        model: str = "fake-model",
        host: str = "127.0.0.1",
        port: int = 0,
        max_records: int = 100_000,
        keep_bodies: bool = False,
        per_client_concurrency: int = 0,
    ) -> None:
        if responder is None:
            responder = hash_responder
        elif isinstance(responder, str):
            responder = responder_from_spec(responder)
        self.responder: Responder = responder
        self.embedding_dim = embedding_dim
        self.model = model
        self.host = host
        self.port = port
        self.retry_after_http_date = retry_after_http_date
        self.keep_bodies = keep_bodies
        self.per_client_concurrency = per_client_concurrency
        self._client_gates: dict[str, asyncio.Semaphore] = {}
        self._log = _Log(max_records)
        self._rates: list[tuple[str, float]] = []
        self.configure(
            latency_ms=latency_ms,
            faults=faults,
            seed=seed,
            retry_after=retry_after,
            timeout_s=timeout_s,
            fail_first=fail_first,
            fail_first_fault=fail_first_fault,
            redirect_to=redirect_to,
        )
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        self._connections: set[asyncio.Task[None]] = set()

    # ---- configuration -----------------------------------------------------------------

    def configure(
        self,
        *,
        latency_ms: float | None = None,
        faults: Mapping[Any, float] | None = None,
        seed: int | None = None,
        retry_after: float | None = None,
        timeout_s: float | None = None,
        fail_first: int | None = None,
        fail_first_fault: str | None = None,
        redirect_to: str | None = None,
    ) -> None:
        """Change knobs while running (each request reads them when it arrives)."""
        if latency_ms is not None:
            self.latency_ms = float(latency_ms)
        if faults is not None:
            self._rates = _normalize_rates(faults)
        if seed is not None:
            self.seed = int(seed)
        if retry_after is not None:
            self.retry_after = float(retry_after)
        if timeout_s is not None:
            self.timeout_s = float(timeout_s)
        if fail_first is not None:
            self.fail_first = int(fail_first)
        if fail_first_fault is not None:
            self.fail_first_fault = _normalize_fault(fail_first_fault)
        if redirect_to is not None:
            self.redirect_to = str(redirect_to)

    @property
    def faults(self) -> dict[str, float]:
        return dict(self._rates)

    # ---- observability -----------------------------------------------------------------

    @property
    def total(self) -> int:
        with self._log._lock:
            return self._log.count

    @property
    def by_status(self) -> dict[int, int]:
        return {int(k): v for k, v in self.stats()["by_status"].items()}

    @property
    def by_fault(self) -> dict[str, int]:
        return self.stats()["by_fault"]

    def stats(self) -> dict[str, Any]:
        return self._log.snapshot()

    def records(self) -> list[RequestRecord]:
        with self._log._lock:
            return list(self._log.records)

    def requests_for(self, substring: str) -> list[RequestRecord]:
        """Logged requests whose ``content_text`` contains ``substring``."""
        return self._log.matching(substring)

    def count_for(self, substring: str) -> int:
        return len(self.requests_for(substring))

    def attempts(self, content: str) -> int:
        """How many requests had exactly this ``content_text`` since the last reset."""
        with self._log._lock:
            return self._log.by_key.get(short_hash(content, 16), 0)

    def reset(self) -> None:
        """Forget all requests, including the attempt numbers directives count with."""
        self._log.clear()

    # ---- lifecycle -----------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    async def open(self) -> None:
        """Start listening on the running loop (the CLI and the thread both use this)."""
        self._loop = asyncio.get_running_loop()
        self._server = await asyncio.start_server(
            self._on_connection, self.host, self.port, limit=_MAX_HEAD, backlog=4096
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
        tasks = list(self._connections)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    def start(self) -> FakeOpenAI:
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            try:
                try:
                    loop.run_until_complete(self.open())
                except BaseException as exc:
                    failure.append(exc)
                    return
                finally:
                    ready.set()
                loop.run_forever()
                loop.run_until_complete(self.aclose())
            finally:
                loop.close()

        self._thread = threading.Thread(target=run, name=f"fake-openai-{id(self)}", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            self._thread.join()
            raise failure[0]
        return self

    def stop(self) -> None:
        if self._thread is None or self._loop is None:
            return
        with contextlib.suppress(RuntimeError):  # the loop already closed
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._thread = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # ---- connection handling -----------------------------------------------------------

    async def _on_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        peer = writer.get_extra_info("peername")
        client = str(peer[0]) if isinstance(peer, tuple) and peer else ""
        try:
            while True:
                try:
                    request = await _read_request(reader, writer)
                except _HttpError as exc:
                    response = _error_response(exc.status, exc.message)
                    writer.write(_encode_response(response, keep_alive=False))
                    await writer.drain()
                    return
                if request is None:
                    return
                try:
                    response = await self._dispatch(request, reader, client)
                except Exception as exc:
                    # A bug here must not take the connection (or the server) down silently.
                    traceback.print_exc(file=sys.stderr)
                    response = _error_response(500, f"fake server bug: {exc!r}", "server_error")
                if response.drop:
                    return
                keep_alive = request.keep_alive and not response.close
                writer.write(_encode_response(response, keep_alive))
                await writer.drain()
                if not keep_alive:
                    return
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError):
            pass  # the client went away mid-request or mid-response: nothing to answer
        except asyncio.CancelledError:
            # Only aclose() cancels these tasks; re-raising would make asyncio's stream callback
            # log every cancelled connection as an error.
            pass
        finally:
            self._connections.discard(task)
            writer.close()

    async def _dispatch(
        self, request: _Request, reader: asyncio.StreamReader, client: str = ""
    ) -> _Response:
        split = urlsplit(request.target)
        path = split.path.rstrip("/") or "/"
        if path.startswith("/_"):
            return self._control(request.method, path, parse_qs(split.query), request.body)
        api_path = path.removeprefix("/v1")
        post_routes = {
            "/chat/completions": self._chat,
            "/completions": self._completions,
            "/embeddings": self._embeddings,
            "/responses": self._responses,
        }
        if api_path in post_routes:
            if request.method != "POST":
                return self._record_plain(request.method, path, _method_not_allowed(request))
            if self.per_client_concurrency > 0:
                # One client's requests beyond the cap wait their turn, unlogged until answered
                # (an endpoint's per-client limit: a client gains nothing by sending more).
                gate = self._client_gates.setdefault(
                    client, asyncio.Semaphore(self.per_client_concurrency)
                )
                async with gate:
                    return await self._api(
                        path, request.body, post_routes[api_path], reader, request.headers, client
                    )
            return await self._api(
                path, request.body, post_routes[api_path], reader, request.headers, client
            )
        if api_path == "/models" or api_path.startswith("/models/"):
            if request.method != "GET":
                return self._record_plain(request.method, path, _method_not_allowed(request))
            return self._record_plain(request.method, path, self._models(api_path))
        response = _error_response(404, f"Unknown request URL: {request.method} {path}.")
        return self._record_plain(request.method, path, response)

    def _record_plain(self, method: str, path: str, response: _Response) -> _Response:
        seq, _ = self._log.next_attempt("")
        record = RequestRecord(seq, method, path, "", "", 1, response.status, None, time.time())
        self._log.add(record)
        response.request_id = f"req_{seq}"
        return response

    def _control(
        self, method: str, path: str, query: dict[str, list[str]], body: bytes
    ) -> _Response:
        if path == "/_stats" and method == "GET":
            stats = self.stats()
            if "contains" in query:
                stats["matching"] = self.count_for(query["contains"][0])
            return _json_response(200, stats)
        if path == "/_reset" and method == "POST":
            self.reset()
            return _json_response(200, {"ok": True})
        if path == "/_config" and method == "POST":
            try:
                options = json.loads(body or b"{}")
                self.configure(**options)
            except (ValueError, TypeError) as exc:
                return _error_response(400, f"bad config: {exc}")
            return _json_response(200, {"ok": True, "latency_ms": self.latency_ms})
        return _error_response(404, f"Unknown control request: {method} {path}.")

    def _models(self, api_path: str) -> _Response:
        def model(name: str) -> dict[str, Any]:
            return {"id": name, "object": "model", "created": 1_700_000_000, "owned_by": "fake"}

        if api_path == "/models":
            return _json_response(200, {"object": "list", "data": [model(self.model)]})
        return _json_response(200, model(api_path.removeprefix("/models/")))

    # ---- the API endpoints ---------------------------------------------------------------

    async def _api(
        self,
        path: str,
        raw: bytes,
        handler: Callable[[dict[str, Any], str], dict[str, Any]],
        reader: asyncio.StreamReader,
        headers: dict[str, str] | None = None,
        client: str = "",
    ) -> _Response:
        try:
            body = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            return self._record_plain(
                "POST",
                path,
                _error_response(400, "We could not parse the JSON body of your request."),
            )
        invalid = _validate(path, body)
        if invalid:
            return self._record_plain("POST", path, _error_response(400, invalid))

        text = content_text(body)
        key = short_hash(text, 16)
        seq, attempt = self._log.next_attempt(key)
        fault = self._pick_fault(text, key, attempt)
        latency_ms = self.latency_ms
        if match := _LATENCY_DIRECTIVE.search(text):
            latency_ms = float(match.group(1))

        response = self._fault_response(fault) if fault else None
        if response is None:
            try:
                payload = handler(body, f"{key[:10]}{seq:x}")
            except _HttpError as exc:
                payload, response = None, _error_response(exc.status, exc.message)
            except Exception as exc:
                payload = None
                response = _error_response(500, f"responder failed: {exc!r}", "server_error")
                fault = "responder_error"
            if payload is not None:
                response = _answer_response(payload, fault)
        response.request_id = f"req_{seq}"
        status = 0 if fault == "disconnect" else response.status
        parallel = body.get("parallel_tool_calls")
        record = RequestRecord(
            seq,
            "POST",
            path,
            key,
            text,
            attempt,
            status,
            fault,
            time.time(),
            tools=_chat_tool_names(body.get("tools")),
            tool_choice=body.get("tool_choice"),
            parallel_tool_calls=parallel if isinstance(parallel, bool) else None,
            body=body if self.keep_bodies else None,
            authorization=(headers or {}).get("authorization"),
            client=client,
        )
        self._log.add(record)

        if latency_ms > 0:
            await asyncio.sleep(latency_ms / 1000.0)
        if fault == "timeout":
            await self._hold(reader, response)
        return response

    def _pick_fault(self, text: str, key: str, attempt: int) -> str | None:
        if _FAIL_ALWAYS in text:
            return "500"
        if match := _FAULT_DIRECTIVE.search(text):
            kind = _normalize_fault(match.group(1))
            times = match.group(2) or "1"
            if times == "*" or attempt <= int(times):
                return kind
            return None
        if self.fail_first and attempt <= self.fail_first:
            return self.fail_first_fault
        if self._rates:
            draw = _draw(self.seed, key, attempt)
            cumulative = 0.0
            for kind, rate in self._rates:
                cumulative += rate
                if draw < cumulative:
                    return kind
        return None

    def _fault_response(self, fault: str) -> _Response | None:
        """The response for a fault, or None when the fault alters a normal answer instead."""
        if fault == "429":
            if self.retry_after_http_date:
                value = email.utils.formatdate(time.time() + self.retry_after, usegmt=True)
            else:
                value = f"{self.retry_after:g}"
            body = _error_body(
                "Rate limit reached for fake-model (fake server). Please try again later.",
                "requests",
                "rate_limit_exceeded",
            )
            return _Response(429, body, [("retry-after", value)])
        if _STATUS_FAULT.match(fault) and fault.startswith("3"):
            body = _error_body(f"Moved (fake server {fault}).", "invalid_request_error")
            return _Response(int(fault), body, [("location", self.redirect_to)])
        if _STATUS_FAULT.match(fault):
            status = int(fault)
            message = (
                "The server had an error while processing your request. Sorry about that!"
                if status >= 500
                else f"Injected {status} error (fake server)."
            )
            kind = "server_error" if status >= 500 else "invalid_request_error"
            return _Response(status, _error_body(message, kind))
        if fault == "disconnect":
            return _Response(0, drop=True)
        return None  # timeout, truncated, empty_choices, not_object: from the normal answer

    async def _hold(self, reader: asyncio.StreamReader, response: _Response) -> None:
        """Keep the request ``timeout_s`` before answering; drop it if the client hangs up."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        try:
            # Waiting on the socket (not polling) keeps thousands of held requests cheap, and an
            # HTTP/1.1 client sends nothing more on this connection until it has an answer.
            data = await asyncio.wait_for(reader.read(1), self.timeout_s)
        except TimeoutError:
            return
        if not data:
            response.drop = True  # EOF: the client gave up, no one to answer
            return
        # A pipelining client: the byte read belongs to its next request, which can no longer
        # be parsed; finish this one and close.
        await asyncio.sleep(max(0.0, deadline - loop.time()))
        response.close = True

    def _answer(self, body: dict[str, Any], prompt_body: dict[str, Any]) -> tuple[str, str]:
        reply, finish = self._reply(body, prompt_body)
        if reply.tool_calls:
            raise TypeError("a completions answer cannot carry tool calls")
        return reply.content or "", finish

    def _reply(self, body: dict[str, Any], prompt_body: dict[str, Any]) -> tuple[Reply, str]:
        """The responder's reply, cut to the request's token limit, and its finish reason."""
        reply = as_reply(self.responder(prompt_body))
        finish = "tool_calls" if reply.tool_calls else "stop"
        limit = (
            body.get("max_completion_tokens")
            or body.get("max_tokens")
            or body.get("max_output_tokens")
        )
        text = reply.content
        if isinstance(limit, int) and limit > 0 and text and _tokens(text) > limit:
            text, finish = text[: limit * _CHARS_PER_TOKEN], "length"
            reply = Reply(text, reply.tool_calls)
        return reply, finish

    def _cached_tokens(self, body: dict[str, Any], prompt_tokens: int) -> int:
        """Tokens of the leading messages (or items) an earlier request began with, as a
        provider's prompt cache reports them; ``[[cached-tokens:N]]`` in the content says N."""
        segments = _segments(body)
        if match := _CACHED_DIRECTIVE.search("\n".join(segments)):
            return min(prompt_tokens, int(match.group(1)))
        seen = self._log.cached_prefix(segments)
        return min(prompt_tokens, _tokens("\n".join(segments[:seen])))

    def _chat(self, body: dict[str, Any], suffix: str) -> dict[str, Any]:
        reply, finish = self._reply(body, body)
        n = body.get("n") if isinstance(body.get("n"), int) and body["n"] > 0 else 1
        prompt_tokens = _tokens(content_text(body))
        completion_tokens = _reply_tokens(reply) * n
        message: dict[str, Any] = {"role": "assistant", "content": reply.content, "refusal": None}
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id or f"call_{suffix}_{index}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_text},
                }
                for index, call in enumerate(reply.tool_calls)
            ]
        choice = {"message": message, "logprobs": None, "finish_reason": finish}
        usage = _usage(prompt_tokens, completion_tokens)
        usage["prompt_tokens_details"] = {
            "cached_tokens": self._cached_tokens(body, prompt_tokens),
            "audio_tokens": 0,
        }
        usage["completion_tokens_details"] = {"reasoning_tokens": 0, "audio_tokens": 0}
        payload = {
            "id": f"chatcmpl-{suffix}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "system_fingerprint": "fp_fake",
            "choices": [{"index": i, **choice} for i in range(n)],
            "usage": usage,
        }
        return payload

    def _responses(self, body: dict[str, Any], suffix: str) -> dict[str, Any]:
        """``POST /v1/responses``: the reply as output items, a ``message`` with the text and a
        ``function_call`` per call."""
        reply, finish = self._reply(body, body)
        output: list[dict[str, Any]] = []
        if reply.content:
            output.append(
                {
                    "type": "message",
                    "id": f"msg_{suffix}",
                    "status": "incomplete" if finish == "length" else "completed",
                    "role": "assistant",
                    "content": [
                        {
                            "type": "output_text",
                            "text": reply.content,
                            "annotations": [],
                            "logprobs": [],
                        }
                    ],
                }
            )
        for index, call in enumerate(reply.tool_calls):
            output.append(
                {
                    "type": "function_call",
                    "id": f"fc_{suffix}_{index}",
                    "call_id": call.id or f"call_{suffix}_{index}",
                    "name": call.name,
                    "arguments": call.arguments_text,
                    "status": "completed",
                }
            )
        input_tokens = _tokens(content_text(body))
        output_tokens = _reply_tokens(reply)
        cut = finish == "length"
        return {
            "id": f"resp_{suffix}",
            "object": "response",
            "created_at": int(time.time()),
            "status": "incomplete" if cut else "completed",
            "completed_at": None if cut else int(time.time()),
            "error": None,
            "incomplete_details": {"reason": "max_output_tokens"} if cut else None,
            "instructions": body.get("instructions"),
            "max_output_tokens": body.get("max_output_tokens"),
            "model": body["model"],
            "output": output,
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "previous_response_id": body.get("previous_response_id"),
            "temperature": body.get("temperature", 1.0),
            "text": {"format": {"type": "text"}},
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools", []),
            "top_p": body.get("top_p", 1.0),
            "truncation": "disabled",
            "metadata": body.get("metadata") or {},
            "usage": {
                "input_tokens": input_tokens,
                "input_tokens_details": {
                    "cached_tokens": self._cached_tokens(body, input_tokens),
                    "cache_write_tokens": 0,
                },
                "output_tokens": output_tokens,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": input_tokens + output_tokens,
            },
        }

    def _completions(self, body: dict[str, Any], suffix: str) -> dict[str, Any]:
        prompts = _prompt_list(body["prompt"]) or [""]
        choices = []
        prompt_tokens = completion_tokens = cached_tokens = 0
        for index, prompt in enumerate(prompts):
            text, finish = self._answer(body, {**body, "prompt": prompt})
            choices.append(
                {"text": text, "index": index, "logprobs": None, "finish_reason": finish}
            )
            prompt_tokens += _tokens(prompt)
            completion_tokens += _tokens(text)
            cached_tokens += self._cached_tokens({"prompt": prompt}, _tokens(prompt))
        payload = {
            "id": f"cmpl-{suffix}",
            "object": "text_completion",
            "created": int(time.time()),
            "model": body["model"],
            "system_fingerprint": "fp_fake",
            "choices": choices,
            "usage": {
                **_usage(prompt_tokens, completion_tokens),
                "prompt_tokens_details": {"cached_tokens": cached_tokens, "audio_tokens": 0},
            },
        }
        return payload

    def _embeddings(self, body: dict[str, Any], suffix: str) -> dict[str, Any]:
        inputs = _prompt_list(body["input"])
        dim = body.get("dimensions") or self.embedding_dim
        if not isinstance(dim, int) or dim <= 0:
            raise _HttpError(400, f"Invalid 'dimensions': {dim!r}.")
        as_base64 = body.get("encoding_format") == "base64"
        data = []
        for index, text in enumerate(inputs):
            vector = embedding_vector(text, dim)
            embedding: Any = (
                base64.b64encode(struct.pack(f"<{dim}f", *vector)).decode() if as_base64 else vector
            )
            data.append({"object": "embedding", "index": index, "embedding": embedding})
        tokens = sum(_tokens(t) for t in inputs)
        payload = {
            "object": "list",
            "data": data,
            "model": body["model"],
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }
        return payload


def _answer_response(payload: dict[str, Any], fault: str | None) -> _Response:
    """A 200 for a normal answer, spoiled the way ``truncated`` / ``empty_choices`` /
    ``not_object`` ask."""
    if fault == "not_object":
        return _Response(200, json.dumps([payload]).encode())  # JSON, but a list
    if fault == "empty_choices":
        if "output" in payload:
            payload["output"] = []
        else:
            payload["choices" if "choices" in payload else "data"] = []
    body = json.dumps(payload).encode()
    if fault == "truncated":
        # Cut mid-way but keep Content-Length honest: the HTTP exchange is valid, the JSON is not.
        body = body[: len(body) // 2]
    return _Response(200, body)


def _reply_tokens(reply: Reply) -> int:
    """What a reply costs: its text and each call's name and arguments."""
    calls = sum(_tokens(call.name + call.arguments_text) for call in reply.tool_calls)
    return _tokens(reply.content or "") + calls


def _usage(prompt_tokens: int, completion_tokens: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def _method_not_allowed(request: _Request) -> _Response:
    return _error_response(405, f"Method {request.method} not allowed here.")


def _validate(path: str, body: Any) -> str | None:
    """Why the request is malformed, or None."""
    if not isinstance(body, dict):
        return "The request body must be a JSON object."
    if body.get("stream"):
        return "stream=true is not supported by the fake server."
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "you must provide a model parameter"
    if path.endswith("/chat/completions"):
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return "'messages' must be a non-empty array."
        if not all(isinstance(m, dict) and "role" in m for m in messages):
            return "each message must be an object with a 'role'."
        for index, message in enumerate(messages):
            if message["role"] == "tool" and not isinstance(message.get("tool_call_id"), str):
                return f"messages[{index}]: a 'tool' message needs 'tool_call_id'."
            calls = message.get("tool_calls")
            if calls is not None and not _valid_calls(calls):
                return f"messages[{index}].tool_calls: each needs an id and a function name."
        return _validate_tools(body, nested=True)
    if path.endswith("/completions"):
        if "prompt" not in body:
            return "Missing required parameter: 'prompt'."
        return None
    if path.endswith("/responses"):
        given = body.get("input")
        if not (isinstance(given, str) and given) and not (isinstance(given, list) and given):
            return "Missing required parameter: 'input'."
        for index, item in enumerate(given if isinstance(given, list) else []):
            if not isinstance(item, dict):
                return f"input[{index}] must be an object."
            kind = item.get("type", "message")
            if kind == "function_call_output" and not isinstance(item.get("call_id"), str):
                return f"input[{index}]: a function_call_output needs 'call_id'."
            if kind == "function_call" and not all(
                isinstance(item.get(key), str) for key in ("call_id", "name", "arguments")
            ):
                return f"input[{index}]: a function_call needs call_id, name and arguments."
        return _validate_tools(body, nested=False)
    if "input" not in body or body["input"] in ("", []):
        return "Missing required parameter: 'input'."
    return None


def _valid_calls(calls: Any) -> bool:
    return isinstance(calls, list) and all(
        isinstance(call, dict)
        and isinstance(call.get("id"), str)
        and isinstance(call.get("function"), dict)
        and isinstance(call["function"].get("name"), str)
        for call in calls
    )


def _validate_tools(body: dict[str, Any], *, nested: bool) -> str | None:
    """The checks the API makes on ``tools`` and ``tool_choice``: function tools (nested under
    "function" in chat, flat in the Responses API) with names of the API's pattern, once each;
    a tool_choice of none/auto/required or a declared function."""
    tools = body.get("tools")
    if tools is None:
        if nested:
            for key in ("tool_choice", "parallel_tool_calls"):
                if body.get(key) is not None:
                    return f"Invalid value for '{key}': only allowed when 'tools' are specified."
        tools = []
    elif not isinstance(tools, list):
        return "'tools' must be an array."
    elif nested and not tools:
        return "Invalid 'tools': empty array. Expected an array with minimum length 1."
    names: list[str] = []
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict) or tool.get("type") != "function":
            return f"tools[{index}]: only function tools are supported by the fake server."
        function = tool.get("function") if nested else tool
        if not isinstance(function, dict):
            return f"tools[{index}]: missing 'function'."
        name = function.get("name")
        if not isinstance(name, str) or not API_NAME.match(name):
            return (
                f"Invalid 'tools[{index}].function.name': string does not match pattern. "
                "Expected a string that matches the pattern '^[a-zA-Z0-9_-]{1,64}$'."
            )
        if name in names:
            return f"tools[{index}]: duplicate function name {name!r}."
        parameters = function.get("parameters")
        if parameters is not None and not isinstance(parameters, dict):
            return f"tools[{index}]: 'parameters' must be a JSON Schema object."
        names.append(name)
    choice = body.get("tool_choice")
    if choice is None or choice in ("none", "auto", "required"):
        if choice == "required" and not names:
            return "tool_choice 'required' needs at least one tool."
        return None
    if isinstance(choice, dict) and choice.get("type") == "function":
        chosen = choice.get("function", {}).get("name") if nested else choice.get("name")
        if chosen in names:
            return None
        return f"tool_choice names {chosen!r}, which is not among the tools."
    return f"Invalid 'tool_choice': {choice!r}."


# --------------------------------------------------------------------------------------------
# Out of process


class FakeOpenAIProcess:
    """``python tests/fake_openai.py ARGS`` as a context manager, for code that needs the server
    outside the test process (real Celery workers, perf scripts)::

        with FakeOpenAIProcess("--latency-ms", "50", "--faults", "429=0.1") as server:
            server.base_url, server.stats(), server.reset()
    """

    def __init__(self, *args: str, python: str = sys.executable, startup_timeout: float = 15.0):
        self.args = list(args)
        self.python = python
        self.startup_timeout = startup_timeout
        self.process: subprocess.Popen[str] | None = None
        self.base_url = ""

    def start(self) -> FakeOpenAIProcess:
        args = self.args if "--port" in self.args else ["--port", "0", *self.args]
        self.process = subprocess.Popen(
            [self.python, str(Path(__file__).resolve()), *args],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], self.startup_timeout)
        line = self.process.stdout.readline().strip() if ready else ""
        if not line.startswith("http://"):
            self.stop()
            raise RuntimeError(f"fake OpenAI server did not start (said {line!r})")
        self.base_url = line
        return self

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.process = None

    def __enter__(self) -> FakeOpenAIProcess:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _call(self, method: str, path: str, payload: Any = None) -> Any:
        split = urlsplit(self.base_url)
        conn = http.client.HTTPConnection(split.hostname or "127.0.0.1", split.port, timeout=10)
        try:
            body = None if payload is None else json.dumps(payload)
            conn.request(method, path, body=body, headers={"content-type": "application/json"})
            response = conn.getresponse()
            data = json.loads(response.read())
            if response.status != 200:
                raise RuntimeError(f"{method} {path}: {response.status} {data}")
            return data
        finally:
            conn.close()

    def stats(self, contains: str | None = None) -> dict[str, Any]:
        if contains is None:
            return self._call("GET", "/_stats")
        return self._call("GET", "/_stats?" + urlencode({"contains": contains}))

    def reset(self) -> None:
        self._call("POST", "/_reset")

    def configure(self, **options: Any) -> None:
        self._call("POST", "/_config", options)


def _parse_faults(values: list[str]) -> dict[str, float]:
    faults: dict[str, float] = {}
    for value in values:
        for item in filter(None, (part.strip() for part in value.split(","))):
            kind, sep, rate = item.partition("=")
            if not sep:
                raise argparse.ArgumentTypeError(f"expected KIND=RATE, got {item!r}")
            faults[kind] = float(rate)
    return faults


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument(
        "--responder",
        default="hash",
        help="hash | echo | fixed:<text> | gold:<file> | import:<module>:<callable>",
    )
    parser.add_argument(
        "--faults",
        action="append",
        default=[],
        metavar="KIND=RATE[,KIND=RATE...]",
        help=f"fault rates; kinds: {', '.join(NAMED_FAULTS)} or any 4xx/5xx (repeatable)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--retry-after", type=float, default=1.0, help="seconds (429)")
    parser.add_argument(
        "--retry-after-date", action="store_true", help="send Retry-After as an HTTP-date"
    )
    parser.add_argument("--timeout-s", type=float, default=30.0, help="how long timeouts hold")
    parser.add_argument("--fail-first", type=int, default=0, metavar="N")
    parser.add_argument("--fail-first-fault", default="500")
    parser.add_argument("--redirect-to", default="/v1/moved", help="a 3xx fault's Location")
    parser.add_argument("--embedding-dim", type=int, default=8)
    parser.add_argument("--model", default="fake-model")
    parser.add_argument("--max-records", type=int, default=100_000, help="request log size")
    parser.add_argument(
        "--per-client-concurrency",
        type=int,
        default=0,
        metavar="N",
        help="answer at most N requests of one client address at once (0: no cap)",
    )
    args = parser.parse_args(argv)
    # So that --responder import:tests.<module>:<callable> finds the project's modules.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

    try:
        server = FakeOpenAI(
            args.responder,
            latency_ms=args.latency_ms,
            faults=_parse_faults(args.faults),
            seed=args.seed,
            retry_after=args.retry_after,
            retry_after_http_date=args.retry_after_date,
            timeout_s=args.timeout_s,
            fail_first=args.fail_first,
            fail_first_fault=args.fail_first_fault,
            redirect_to=args.redirect_to,
            embedding_dim=args.embedding_dim,
            model=args.model,
            host=args.host,
            port=args.port,
            max_records=args.max_records,
            per_client_concurrency=args.per_client_concurrency,
        )
    except (ValueError, argparse.ArgumentTypeError) as exc:
        parser.error(str(exc))

    async def serve() -> None:
        await server.open()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        print(server.base_url, flush=True)
        await stop.wait()
        await server.aclose()

    asyncio.run(serve())


if __name__ == "__main__":
    main()
