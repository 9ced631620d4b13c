"""The throttle (config.throttle.OneTripThrottle): DRF's scoped sliding window, decided in one
Redis round trip and atomically, and the cache's Redis client reused between calls."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import redis
from django.core.cache import cache
from rest_framework.throttling import ScopedRateThrottle

from config.throttle import OneTripThrottle


class Scope:
    throttle_scope = "annotation-submit"


class Request:
    """What ScopedRateThrottle reads of a request: the user (by pk) or the address."""

    def __init__(self, pk: int) -> None:
        self.user = type("User", (), {"is_authenticated": True, "pk": pk})()
        self.META = {"REMOTE_ADDR": "127.0.0.1"}


@pytest.fixture(autouse=True)
def three_a_minute(monkeypatch: Any) -> None:
    cache.clear()
    monkeypatch.setattr(
        ScopedRateThrottle, "THROTTLE_RATES", {"annotation": None, "annotation-submit": "3/min"}
    )


def throttle_at(now: float) -> OneTripThrottle:
    throttle = OneTripThrottle()
    throttle.timer = lambda: now  # type: ignore[method-assign]
    return throttle


def test_the_window_admits_the_rate_then_refuses_until_the_oldest_leaves_it() -> None:
    # given three requests at t = 1000, 1010, 1020 (3/min)
    for now in (1000.0, 1010.0, 1020.0):
        assert throttle_at(now).allow_request(Request(1), Scope)
    # when a fourth comes at t = 1030
    refused = throttle_at(1030.0)
    # then it is refused, to wait until the first is 60 s old: 1060 - 1030 = 30 s
    assert not refused.allow_request(Request(1), Scope)
    assert refused.wait() == pytest.approx(30.0)
    # a refused request takes no slot: at t = 1060.5 the first has left the window
    assert throttle_at(1060.5).allow_request(Request(1), Scope)
    assert not throttle_at(1061.0).allow_request(Request(1), Scope)
    # and another user has a window of their own
    assert throttle_at(1061.0).allow_request(Request(2), Scope)


def test_a_scope_without_a_rate_is_not_throttled() -> None:
    class Open:
        throttle_scope = "annotation"

    assert all(throttle_at(1000.0).allow_request(Request(1), Open) for _ in range(10))


def test_a_request_makes_one_round_trip_to_redis(monkeypatch: Any) -> None:
    sent: list[str] = []
    original = redis.Redis.execute_command

    def counted(self: Any, *args: Any, **options: Any) -> Any:
        sent.append(str(args[0]))
        return original(self, *args, **options)

    throttle_at(999.0).allow_request(Request(1), Scope)  # the script is loaded once
    monkeypatch.setattr(redis.Redis, "execute_command", counted)
    throttle_at(1000.0).allow_request(Request(1), Scope)
    assert sent == ["EVALSHA"]


def test_concurrent_requests_never_take_more_than_the_rate() -> None:
    # DRF's own throttle reads the history, then writes it back: two workers between the read
    # and the write both see room. Here the check and the record are one script.
    admitted: list[bool] = []
    start = threading.Barrier(20)

    def one() -> None:
        start.wait()
        admitted.append(OneTripThrottle().allow_request(Request(7), Scope))

    threads = [threading.Thread(target=one) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert admitted.count(True) == 3


def test_the_cache_keeps_one_redis_client_per_connection_pool() -> None:
    client = cache._cache.get_client(None, write=True)  # type: ignore[attr-defined]
    assert cache._cache.get_client(None, write=True) is client  # type: ignore[attr-defined]
    cache.set("k", 1)
    assert cache.get("k") == 1
