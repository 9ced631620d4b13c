"""The virtual API server (StableToolBench section 3.1): a call is answered from the cache; on a
miss, by the real API where one is configured for the tool and its host is allowed; otherwise by
the simulator, an LLM shown the API's documentation and up to five cached examples of the same
API. Real and simulated responses are cached only when clean (no error, no failure text: see
simulator.is_clean); every answer says where it came from and is logged (ServedCall).

A tool marked down for an experiment (section 4.2) skips the cache and the real API and goes to
the simulator ("simulate"), or answers the paper's failure response ("fail", section 2.3); such
answers are not cached.

`serve()` is one async function for every caller; what it does to the database and to LLMs comes
in `Steps`: `ThreadSteps` for a page, the API or a command (the ORM in the caller's thread), and
the run engine's own for agent runs (its database thread, its lanes).
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connection

from benchmarks.kit.base import jsonb_text
from benchmarks.kit.protocol import Prompt
from evaluation.credentials import KeyVariableError, key_from_environment
from evaluation.models import (
    LOCAL_ENDPOINT,
    ApiResponse,
    Endpoint,
    RealApi,
    ServedCall,
    VirtualApi,
)
from evaluation.virtualapi import simulator
from evaluation.virtualapi.fetch import FetchFailed, FetchRefused, fetch
from evaluation.virtualapi.keys import ApiName, call_key, canonical
from evaluation.work.caller import Caller, endpoint_client
from evaluation.work.engine import ConfigurationError, endpoint_config
from evaluation.work.styles import style_named

log = logging.getLogger(__name__)
T = TypeVar("T")

# What a tool made unavailable answers (StableToolBench section 2.3).
DOWN_RESPONSE = "This API did not return any useful information..."


@dataclass(frozen=True)
class Call:
    api: ApiName
    arguments: dict[str, Any]
    run_id: int | None = None
    # "" (served normally), "simulate" (the tool is down: simulated at once) or "fail" (the tool
    # is down: the failure response).
    down: str = ""


@dataclass
class Served:
    error: str
    response: Any
    source: str  # ServedCall.Source
    origin: str = ""  # a cache hit's ApiResponse.Origin
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        out = {"error": self.error, "response": self.response, "source": self.source}
        if self.origin:
            out["origin"] = self.origin
        return out

    def observation(self) -> str:
        """What an agent sees: the server's JSON answer, with its provenance."""
        return json.dumps(self.as_dict(), ensure_ascii=False)


class SimulatorUnavailable(RuntimeError):
    """No simulator endpoint is configured (VIRTUAL_API_SIMULATOR)."""


# --- the database side (sync; Steps.db runs them where the caller may use the ORM) ---------------


def api_get(name: ApiName, documentation: dict[str, Any] | None = None) -> VirtualApi:
    """The API's row, made on first use; documentation given fills one that has none."""
    api, created = VirtualApi.objects.get_or_create(
        category=name.category,
        tool=name.tool,
        api=name.api,
        defaults={"documentation": documentation or {}},
    )
    if documentation and not created and not api.documentation:
        api.documentation = documentation
        api.save(update_fields=["documentation"])
    return api


def cached(api_id: int, key: str) -> ApiResponse | None:
    return ApiResponse.objects.filter(api_id=api_id, key=key).first()


def examples_for(api_id: int, key: str) -> list[tuple[Any, Any]]:
    """Up to five clean cached calls of the API (real or imported first) as (arguments,
    response), not the call being simulated."""
    rows = (
        ApiResponse.objects.filter(api_id=api_id, error="")
        .exclude(key=key)
        .exclude(response=None)
        .order_by("origin", "id")  # "imported" < "real" < "simulated"
        .values_list("arguments", "response")[:20]
    )
    clean = [(a, r) for a, r in rows if simulator.is_clean(r, "")]
    return clean[: simulator.MAX_EXAMPLES]


def responses_insert(rows: Sequence[Sequence[Any]]) -> int:
    """Cache responses, each row (api_id, key, arguments, raw_key, response, error, origin,
    simulator, source) with arguments and response already JSON text. A call already cached
    stays (a concurrent answer, an earlier import), so every reader sees one response per call.
    Returns how many were added."""
    with connection.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO evaluation_apiresponse (api_id, key, arguments, raw_key, response, "
            "error, origin, simulator, source, created_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, now()) "
            "ON CONFLICT (api_id, key) DO NOTHING",
            rows,
        )
        return cursor.rowcount


def response_store(
    api_id: int, key: str, arguments: Any, served: Served, simulator_name: str = ""
) -> None:
    """Cache a clean answer (one already cached for the same call stays)."""
    responses_insert(
        [
            (
                api_id,
                key,
                jsonb_text(canonical(arguments)),
                "",
                jsonb_text(served.response),
                "",
                served.source,
                simulator_name,
                "",
            )
        ]
    )


def call_log(api_id: int, key: str, served: Served, run_id: int | None, ms: int) -> None:
    ServedCall.objects.create(
        api_id=api_id,
        key=key,
        source=served.source,
        detail=served.detail[:2000],
        run_id=run_id,
        latency_ms=ms,
    )


def real_api_for(name: ApiName) -> RealApi | None:
    return (
        RealApi.objects.filter(
            category=name.category, tool=name.tool, api__in=[name.api, ""], enabled=True
        )
        .order_by("-api")
        .first()
    )


def allowed_hosts() -> list[str]:
    return list(getattr(settings, "VIRTUAL_API_ALLOWED_HOSTS", []))


def real_call(real: RealApi, name: ApiName, arguments: dict[str, Any]) -> Served:
    """Ask the real API (network; run it off the event loop). Any failure is a Served with
    source "failed" and the reason in detail, so the simulator takes over."""
    headers = {"Accept": "application/json"}
    if real.key_env:
        try:
            key = key_from_environment(real.key_env)
        except KeyVariableError as exc:
            return Served("", None, "failed", detail=f"real API: {exc}")
        if not key:
            return Served("", None, "failed", detail=f"{real.key_env} is not set")
        headers["X-RapidAPI-Key"] = key
    url = real.url.replace("{api}", name.api)
    try:
        result = fetch(
            real.method,
            url,
            params=arguments if real.method == RealApi.Method.GET else None,
            json_body=arguments if real.method == RealApi.Method.POST else None,
            headers=headers,
            allowed_hosts=allowed_hosts(),
        )
    except (FetchRefused, FetchFailed) as exc:
        return Served("", None, "failed", detail=f"real API: {exc}")
    text = result.body.decode("utf-8", errors="replace")
    if result.status >= 400:
        return Served("", None, "failed", detail=f"real API answered {result.status}")
    try:
        response: Any = json.loads(text)
    except ValueError:
        response = text
    served = Served("", response, "real")
    if not simulator.is_clean(response, ""):
        served.detail = "not clean: not cached"
    return served


# --- the orchestration --------------------------------------------------------------------------


class Steps(Protocol):
    simulator_name: str
    completion: bool

    async def db(self, fn: Callable[..., T], *args: Any) -> T: ...

    async def simulate(self, prompt: Prompt) -> str: ...


async def serve(call: Call, steps: Steps, *, documentation: dict[str, Any] | None = None) -> Served:
    """Answer one call (see the module docstring). `documentation` is the API's, for an API the
    server meets for the first time."""
    started = time.monotonic()
    api = await steps.db(api_get, call.api, documentation)
    key = call_key(call.arguments)
    served: Served | None = None
    real_failure = ""
    if call.down == "fail":
        served = Served("", DOWN_RESPONSE, "down")
    elif not call.down:
        hit = await steps.db(cached, api.pk, key)
        if hit is not None:
            served = Served(hit.error, hit.response, "cache", origin=hit.origin)
        else:
            real = await steps.db(real_api_for, call.api)
            if real is not None:
                served = await asyncio.to_thread(real_call, real, call.api, call.arguments)
                if served.source == "real" and not served.detail:
                    await steps.db(response_store, api.pk, key, call.arguments, served)
                elif served.source == "failed":
                    log.info("%s: %s; simulating", call.api.path, served.detail)
                    real_failure, served = served.detail, None
    if served is None:
        served = await simulate_call(call, api, key, steps, store=not call.down)
        served.detail = "; ".join(d for d in (real_failure, served.detail) if d)
    ms = int((time.monotonic() - started) * 1000)
    await steps.db(call_log, api.pk, key, served, call.run_id, ms)
    return served


async def simulate_call(
    call: Call, api: VirtualApi, key: str, steps: Steps, *, store: bool
) -> Served:
    """Ask the simulator (the API's documentation, up to five other cached calls as examples);
    a clean answer is cached when `store`."""
    examples = await steps.db(examples_for, api.pk, key)
    request = {
        "category": call.api.category,
        "tool_name": call.api.tool,
        "api_name": call.api.api,
        "tool_input": json.dumps(call.arguments, ensure_ascii=False),
        "strip": "filter",
    }
    prompt = simulator.build_prompt(
        api.documentation or {"name": call.api.api},
        request,
        examples,
        completion=steps.completion,
        max_tokens=int(getattr(settings, "VIRTUAL_API_SIMULATOR_MAX_TOKENS", simulator.MAX_TOKENS)),
    )
    try:
        text = await steps.simulate(prompt)
    except SimulatorUnavailable as exc:
        return Served(
            "The API is not available and no simulator is configured.",
            "",
            "failed",
            detail=str(exc),
        )
    result = simulator.parse_reply(text, completion=steps.completion)
    served = Served(result.error, result.response, "simulated", detail=result.note)
    if result.clean and store:
        await steps.db(response_store, api.pk, key, call.arguments, served, steps.simulator_name)
    return served


# --- Steps for pages, the API and commands ------------------------------------------------------


def simulator_endpoint() -> Endpoint | None:
    """The endpoint that plays APIs: VIRTUAL_API_SIMULATOR names it (by default the embedded
    local model's)."""
    name = getattr(settings, "VIRTUAL_API_SIMULATOR", "") or LOCAL_ENDPOINT
    return Endpoint.objects.filter(name=name).first()


class NoCache:
    """The simulator's LLM calls are not kept in the response cache: the API cache keeps the
    clean answers, and the diversity check needs fresh ones."""

    async def get(self, key: str) -> None:
        return None

    def put(self, key: str, origin: Any, request: Any, reply: Any) -> None:
        return None


def simulator_caller(endpoint: Endpoint) -> Any:
    """A Caller for the simulator endpoint with its own generation parameters (the endpoint's,
    whatever the run asked of its model)."""
    config = endpoint_config(endpoint)
    return Caller(config, client=endpoint_client(config), cache=NoCache(), slots=None, rate=None)


class ThreadSteps:
    """The ORM in the calling thread (a view, a command), the simulator through its endpoint."""

    def __init__(self, endpoint: Endpoint | None = None) -> None:
        self.endpoint = endpoint if endpoint is not None else simulator_endpoint()
        self.simulator_name = self.endpoint.model if self.endpoint else ""
        self.completion = bool(
            self.endpoint and style_named(self.endpoint.style).prompt_form == "completion"
        )
        self._caller: Any = None

    async def db(self, fn: Callable[..., T], *args: Any) -> T:
        return await sync_to_async(fn, thread_sensitive=True)(*args)

    async def simulate(self, prompt: Prompt) -> str:
        if self.endpoint is None:
            raise SimulatorUnavailable("VIRTUAL_API_SIMULATOR names no endpoint")
        if self._caller is None:
            try:
                self._caller = await sync_to_async(simulator_caller, thread_sensitive=True)(
                    self.endpoint
                )
            except ConfigurationError as exc:  # as the engine's steps: no key here, no simulator
                raise SimulatorUnavailable(str(exc)) from exc
        reply = await self._caller.call(prompt)
        return reply.text


def sample_down_tools(tools: Sequence[str], share: float, seed: int) -> list[str]:
    """The tools an experiment makes unavailable: a seeded share of them."""
    ordered = sorted(set(tools))
    count = round(len(ordered) * share)
    return sorted(random.Random(seed).sample(ordered, count)) if count else []
