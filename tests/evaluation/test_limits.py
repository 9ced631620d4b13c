"""Limits shared through Redis (evaluation/work/limits.py), against the real test broker: slots,
the rate limit and the fair shares. Two Redis clients stand for two processes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import pytest
import redis.asyncio as aioredis
from django.conf import settings

from evaluation.work.limits import Lane, RateLimit, Shares, Slots, fair_share
from tests.workers import flush_test_broker

T = TypeVar("T")
ENDPOINT = 4242


@pytest.fixture(autouse=True)
def clean_broker() -> Iterator[None]:
    flush_test_broker()
    yield
    flush_test_broker()


def with_redis(test: Callable[..., Awaitable[T]], clients: int = 1) -> T:
    """Run `test(*clients)` on a fresh event loop with its own Redis clients (own pools)."""

    async def main() -> T:
        made = [aioredis.from_url(settings.CELERY_BROKER_URL) for _ in range(clients)]
        try:
            return await test(*made)
        finally:
            for client in made:
                await client.aclose()

    return asyncio.run(main())


class Gauge:
    """How many holders are inside at once, and the most there ever were."""

    def __init__(self) -> None:
        self.inside = 0
        self.most = 0
        self.entries = 0

    async def visit(self, slots: Slots, seconds: float) -> None:
        async with slots.hold():
            self.inside += 1
            self.entries += 1
            self.most = max(self.most, self.inside)
            assert await slots.in_use() <= slots.limit
            await asyncio.sleep(seconds)
            self.inside -= 1


# --- Slots ------------------------------------------------------------------------------------


def test_slots_never_let_more_than_the_limit_in() -> None:
    async def test(client: aioredis.Redis) -> Gauge:
        slots = Slots(client, ENDPOINT, 3, ttl_seconds=30, wait_step=0.05)
        gauge = Gauge()
        await asyncio.gather(*(gauge.visit(slots, 0.02) for _ in range(20)))
        assert await slots.in_use() == 0  # every slot given back
        return gauge

    gauge = with_redis(test)
    assert gauge.entries == 20
    assert gauge.most == 3


def test_two_processes_share_one_bound() -> None:
    async def test(first: aioredis.Redis, second: aioredis.Redis) -> Gauge:
        # one endpoint, seen through two connection pools (two worker processes)
        a = Slots(first, ENDPOINT, 2, ttl_seconds=30, wait_step=0.05)
        b = Slots(second, ENDPOINT, 2, ttl_seconds=30, wait_step=0.05)
        gauge = Gauge()
        await asyncio.gather(
            *(gauge.visit(a, 0.02) for _ in range(10)), *(gauge.visit(b, 0.02) for _ in range(10))
        )
        return gauge

    gauge = with_redis(test, clients=2)
    assert gauge.entries == 20
    assert gauge.most == 2


def test_other_endpoints_have_their_own_slots() -> None:
    async def test(client: aioredis.Redis) -> tuple[int, int]:
        one = Slots(client, ENDPOINT, 1, ttl_seconds=30)
        other = Slots(client, ENDPOINT + 1, 1, ttl_seconds=30)
        await one.acquire()
        await asyncio.wait_for(other.acquire(), timeout=1)
        return await one.in_use(), await other.in_use()

    assert with_redis(test) == (1, 1)


def test_a_dead_holders_slot_comes_back_after_its_ttl() -> None:
    async def test(client: aioredis.Redis) -> float:
        slots = Slots(client, ENDPOINT, 1, ttl_seconds=1, wait_step=0.05)
        await slots.acquire()  # a holder that dies: it never releases
        started = time.monotonic()
        await asyncio.wait_for(slots.acquire(), timeout=5)
        return time.monotonic() - started

    waited = with_redis(test)
    assert 0.8 <= waited <= 2.0


def test_a_release_wakes_a_waiter_at_once() -> None:
    async def test(client: aioredis.Redis) -> float:
        # a long wait step: only the wake-up note can let the waiter in quickly
        slots = Slots(client, ENDPOINT, 1, ttl_seconds=30, wait_step=5)
        token = await slots.acquire()
        waiter = asyncio.create_task(slots.acquire())
        await asyncio.sleep(0.2)
        assert not waiter.done()
        released = time.monotonic()
        await slots.release(token)
        await asyncio.wait_for(waiter, timeout=10)
        return time.monotonic() - released

    assert with_redis(test) < 0.5


def test_refresh_keeps_a_slot_and_reports_one_that_was_taken_back() -> None:
    async def test(client: aioredis.Redis) -> tuple[bool, bool, bool]:
        slots = Slots(client, ENDPOINT, 1, ttl_seconds=1, wait_step=0.05)
        token = await slots.acquire()  # expires at 1.0 s
        await asyncio.sleep(0.5)
        kept = await slots.refresh(token)  # now at 1.5 s
        await asyncio.sleep(0.6)
        # at 1.1 s the refreshed slot is still held: no one else gets in
        try:
            await asyncio.wait_for(slots.acquire(), timeout=0.1)
            blocked = False
        except TimeoutError:
            blocked = True
        await asyncio.sleep(0.6)
        # at 1.8 s it has expired: another takes it back, and the holder learns it is gone
        await asyncio.wait_for(slots.acquire(), timeout=1)
        lost = await slots.refresh(token)
        return kept, blocked, lost

    assert with_redis(test) == (True, True, False)


def test_a_lane_takes_its_slot_once_and_takes_another_after_losing_it() -> None:
    async def test(client: aioredis.Redis) -> list[Any]:
        slots = Slots(client, ENDPOINT, 1, ttl_seconds=1, wait_step=0.05)
        lane = Lane(slots)
        await lane.ensure()
        first = lane.token
        await lane.ensure()
        steps: list[Any] = [first is not None, lane.token == first, await slots.in_use()]
        # the lane's loop stalls past the TTL and another process takes the slot
        await asyncio.sleep(1.1)
        other = await asyncio.wait_for(slots.acquire(), timeout=1)
        await lane.refresh()
        steps.append(lane.token)
        await slots.release(other)
        await asyncio.wait_for(lane.ensure(), timeout=1)
        steps.append(lane.token not in (None, first))
        await lane.release()
        steps += [lane.token, await slots.in_use()]
        return steps

    assert with_redis(test) == [True, True, 1, None, True, None, 0]


def test_a_holder_that_refreshes_in_time_keeps_its_slot() -> None:
    async def test(client: aioredis.Redis) -> list[bool]:
        slots = Slots(client, ENDPOINT, 1, ttl_seconds=1, wait_step=0.05)
        token = await slots.acquire()
        kept = []
        for _ in range(6):  # 2.4 s, refreshing well within each 1 s TTL
            await asyncio.sleep(0.4)
            kept.append(await slots.refresh(token))
        return kept

    assert with_redis(test) == [True] * 6


def test_a_cancelled_holder_still_gives_its_slot_back() -> None:
    async def test(client: aioredis.Redis) -> int:
        slots = Slots(client, ENDPOINT, 1, ttl_seconds=30)

        async def hold_forever() -> None:
            async with slots.hold():
                await asyncio.sleep(60)

        task = asyncio.create_task(hold_forever())
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.05)
        return await slots.in_use()

    assert with_redis(test) == 0


# --- RateLimit --------------------------------------------------------------------------------


def rate_times(rpm: int, calls: int, tasks: int = 1) -> list[float]:
    """When each of `calls` waits returned, in seconds from the first call, over `tasks`
    concurrent callers."""

    async def test(client: aioredis.Redis) -> list[float]:
        rate = RateLimit(client, ENDPOINT, rpm)
        started = time.monotonic()
        times: list[float] = []
        remaining = calls

        async def caller() -> None:
            nonlocal remaining
            while remaining > 0:
                remaining -= 1
                await rate.wait()
                times.append(time.monotonic() - started)

        await asyncio.gather(*(caller() for _ in range(tasks)))
        return sorted(times)

    return with_redis(test)


def test_a_rate_limit_spaces_calls_after_a_burst() -> None:
    # 600 a minute: one every 100 ms, bursts of 10 (one second's worth)
    times = rate_times(600, 30, tasks=4)
    assert len(times) == 30
    # the burst goes at once
    assert times[9] < 0.3
    # the other 20 are spaced: the 30th no sooner than 20 intervals after the start
    assert times[-1] >= 1.8
    assert times[-1] < 4.0
    # at no point more than the burst plus what the elapsed time allows
    for index, at in enumerate(times):
        assert index + 1 <= 10 + at / 0.1 + 1


def test_two_processes_share_one_rate() -> None:
    async def test(first: aioredis.Redis, second: aioredis.Redis) -> float:
        a, b = RateLimit(first, ENDPOINT, 1200), RateLimit(second, ENDPOINT, 1200)
        started = time.monotonic()

        async def calls(rate: RateLimit) -> None:
            for _ in range(20):
                await rate.wait()

        await asyncio.gather(calls(a), calls(b))
        return time.monotonic() - started

    # 1200 a minute: bursts of 20, then one every 50 ms; 40 calls need 20 * 50 ms
    assert with_redis(test, clients=2) >= 0.9


def test_a_rate_that_is_no_whole_number_of_milliseconds_is_kept() -> None:
    # 1900 a minute: one every 31.58 ms, bursts of 31
    times = rate_times(1900, 31 + 48)
    # the 48 calls after the burst need at least 48 intervals (1.52 s); allow 10% slack
    assert times[-1] >= 0.9 * 48 * 60 / 1900


# --- Shares -----------------------------------------------------------------------------------


def test_shares_count_the_executions_working_against_an_endpoint() -> None:
    async def test(first: aioredis.Redis, second: aioredis.Redis) -> list[int]:
        a = Shares(first, ENDPOINT, ttl_seconds=30)
        b = Shares(second, ENDPOINT, ttl_seconds=30)
        counts = [await a.touch("one"), await b.touch("two"), await a.touch("one")]
        await b.leave("two")
        counts.append(await a.touch("one"))
        await a.leave("one")
        counts.append(await b.touch("three"))
        return counts

    assert with_redis(test, clients=2) == [1, 2, 2, 1, 1]


def test_an_execution_that_stops_renewing_drops_out() -> None:
    async def test(client: aioredis.Redis) -> tuple[int, int]:
        shares = Shares(client, ENDPOINT, ttl_seconds=1)
        await shares.touch("dies")
        together = await shares.touch("lives")
        await asyncio.sleep(0.6)
        await shares.touch("lives")
        await asyncio.sleep(0.6)
        # "dies" was last seen 1.2 s ago, "lives" 0.6 s ago
        return together, await shares.touch("lives")

    assert with_redis(test) == (2, 1)


@pytest.mark.parametrize(
    ("limit", "executions", "share"),
    [
        (8, 1, 8),
        (8, 2, 4),
        (8, 3, 3),  # rounded up
        (7, 2, 4),
        (8, 20, 1),  # never less than one lane
        (1, 5, 1),
        (0, 0, 1),
        (5, 0, 5),
    ],
)
def test_fair_share(limit: int, executions: int, share: int) -> None:
    assert fair_share(limit, executions) == share
