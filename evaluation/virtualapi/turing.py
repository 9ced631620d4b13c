"""Turing-test pairs (StableToolBench section 4.3): calls whose real response is cached, asked
once more of the simulator, so that experts can be shown both without knowing which is which."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Exists, OuterRef, Q

from benchmarks.kit.protocol import CallFailed
from evaluation.models import ApiResponse, TuringPair, VirtualApi
from evaluation.virtualapi import simulator
from evaluation.virtualapi.keys import ApiName
from evaluation.virtualapi.server import Call, Steps, simulate_call


def pair_candidates(
    *, limit: int, origins: tuple[str, ...], simulator_name: str, seed: int, contains: str = ""
) -> list[ApiResponse]:
    """Up to `limit` cached calls with a clean real response and no pair from this simulator
    yet, a seeded choice spread over the APIs (one call per API first). Reads which APIs have
    such calls, then the calls of an API only until it has `limit` clean ones, not the cache."""
    rows = (
        ApiResponse.objects.filter(origin__in=origins, error="")
        .exclude(response=None)
        .exclude(
            Exists(
                TuringPair.objects.filter(
                    simulator=simulator_name, api_id=OuterRef("api_id"), key=OuterRef("key")
                )
            )
        )
    )
    if contains:
        rows = rows.filter(Q(api__api__icontains=contains) | Q(api__tool__icontains=contains))
    rng = random.Random(seed)
    api_ids = list(rows.order_by("api_id").values_list("api_id", flat=True).distinct())
    rng.shuffle(api_ids)
    # One call per API before a second of any: the paper samples APIs, not calls.
    by_api: dict[int, list[ApiResponse]] = {}
    for api_id in api_ids:
        if len(by_api) >= limit:
            break
        calls: list[ApiResponse] = []
        for row in (
            rows.filter(api_id=api_id).select_related("api").order_by("id").iterator(chunk_size=100)
        ):
            if simulator.is_clean(row.response, row.error):
                calls.append(row)
                if len(calls) == limit:
                    break
        if calls:
            rng.shuffle(calls)
            by_api[api_id] = calls
    chosen: list[ApiResponse] = []
    while len(chosen) < limit and any(by_api.values()):
        for calls in by_api.values():
            if calls and len(chosen) < limit:
                chosen.append(calls.pop())
    return chosen


@dataclass
class Paired:
    pairs: list[TuringPair] = field(default_factory=list)
    # (the API's path, why) for each call the simulator gave no answer to: no pair is made
    failed: list[tuple[str, str]] = field(default_factory=list)


async def pairs_make(
    candidates: list[ApiResponse],
    steps: Steps,
    *,
    progress: Callable[[int], Any] | None = None,
) -> Paired:
    """Simulate each candidate's call and store the pair. The simulator sees the API's other
    cached calls as examples, never this call's real answer. A call the simulator does not
    answer (unavailable, or failing every attempt) makes no pair: a pair with nothing on one
    side would give the test away."""
    out = Paired()
    for real in candidates:
        api: VirtualApi = real.api
        name = ApiName(api.category, api.tool, api.api)
        arguments = real.arguments if isinstance(real.arguments, dict) else {}
        try:
            # Not cached: the call's cached answer is the real one.
            served = await simulate_call(Call(name, arguments), api, real.key, steps, store=False)
        except CallFailed as exc:
            out.failed.append((name.path, str(exc)))
        else:
            if served.source == "failed":
                out.failed.append((name.path, served.detail))
            else:
                pair = await steps.db(_store, api.pk, real, served.response, steps.simulator_name)
                out.pairs.append(pair)
        if progress:
            progress(1)
    return out


def _store(api_id: int, real: ApiResponse, simulated: Any, simulator_name: str) -> TuringPair:
    pair, _ = TuringPair.objects.update_or_create(
        api_id=api_id,
        key=real.key,
        simulator=simulator_name,
        defaults={"arguments": real.arguments, "real": real.response, "simulated": simulated},
    )
    return pair
