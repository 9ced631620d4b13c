"""Turing-test pairs (StableToolBench section 4.3): calls whose real response is cached, asked
once more of the simulator, so that experts can be shown both without knowing which is which."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from evaluation.models import ApiResponse, TuringPair, VirtualApi
from evaluation.virtualapi import simulator
from evaluation.virtualapi.keys import ApiName
from evaluation.virtualapi.server import Call, Steps, simulate_call


def pair_candidates(
    *, limit: int, origins: tuple[str, ...], simulator_name: str, seed: int, contains: str = ""
) -> list[ApiResponse]:
    """Up to `limit` cached calls with a clean real response and no pair from this simulator
    yet, a seeded choice spread over the APIs (one call per API first)."""
    rows = (
        ApiResponse.objects.filter(origin__in=origins, error="")
        .exclude(response=None)
        .select_related("api")
        .order_by("api_id", "id")
    )
    if contains:
        rows = rows.filter(api__api__icontains=contains) | rows.filter(
            api__tool__icontains=contains
        )
    paired = set(TuringPair.objects.filter(simulator=simulator_name).values_list("api_id", "key"))
    clean = [
        r
        for r in rows
        if (r.api_id, r.key) not in paired and simulator.is_clean(r.response, r.error)
    ]
    rng = random.Random(seed)
    rng.shuffle(clean)
    # One call per API before a second of any: the paper samples APIs, not calls.
    by_api: dict[int, list[ApiResponse]] = {}
    for row in clean:
        by_api.setdefault(row.api_id, []).append(row)
    chosen: list[ApiResponse] = []
    while len(chosen) < limit and any(by_api.values()):
        for calls in by_api.values():
            if calls and len(chosen) < limit:
                chosen.append(calls.pop())
    return chosen


async def pairs_make(
    candidates: list[ApiResponse],
    steps: Steps,
    *,
    progress: Callable[[int], Any] | None = None,
) -> list[TuringPair]:
    """Simulate each candidate's call and store the pair. The simulator sees the API's other
    cached calls as examples, never this call's real answer."""
    made = []
    for real in candidates:
        api: VirtualApi = real.api
        name = ApiName(api.category, api.tool, api.api)
        arguments = real.arguments if isinstance(real.arguments, dict) else {}
        # Not cached: the call's cached answer is the real one.
        served = await simulate_call(Call(name, arguments), api, real.key, steps, store=False)
        pair = await steps.db(_store, api.pk, real, served.response, steps.simulator_name)
        made.append(pair)
        if progress:
            progress(1)
    return made


def _store(api_id: int, real: ApiResponse, simulated: Any, simulator_name: str) -> TuringPair:
    pair, _ = TuringPair.objects.update_or_create(
        api_id=api_id,
        key=real.key,
        simulator=simulator_name,
        defaults={"arguments": real.arguments, "real": real.response, "simulated": simulated},
    )
    return pair
