"""Rate limits for pages, counted with the API's: a page view decorated with a scope shares
the budget (and the Redis counter) of the API's throttle for that scope, so a script cannot get
around the API's limit by posting the page's form.

The throttle (`OneTripThrottle`, DEFAULT_THROTTLE_CLASSES) is DRF's ScopedRateThrottle (the same
scopes, rates and sliding window) with its window kept in a Redis sorted set and decided by one
script: one round trip a request instead of DRF's read and write of the whole pickled history,
and atomic, so two web workers cannot both take the last slot of a window. While Redis does not
answer, each process counts on its own (config.cache): requests are never refused or held up for
want of Redis."""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.core.cache import caches
from django.http import HttpRequest, HttpResponse
from redis.exceptions import RedisError
from rest_framework.throttling import ScopedRateThrottle

from config.address import client_address
from config.cache import RedisCache

# KEYS[1] the window; ARGV now, duration, limit, a unique member. Drops the requests older than
# the window (as DRF drops history[-1] <= now - duration), then admits and records this one if
# fewer than `limit` remain; otherwise answers the oldest request's time (for Retry-After).
WINDOW_SCRIPT = """
local now = tonumber(ARGV[1])
local duration = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - duration)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], now, ARGV[4])
  redis.call('EXPIRE', KEYS[1], math.ceil(duration) + 1)
  return ''
end
return redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2]
"""

_script: Any = None


def _window() -> tuple[Any, Any, RedisCache] | None:
    """(the script, a client of the cache's Redis, the cache), or None when the cache is not
    Redis or Redis is down (config.cache: DRF's own way then, through the cache, which counts in
    the process's memory meanwhile). The script is sent once; later calls name it by its hash
    (EVALSHA)."""
    global _script
    backend = caches["default"]
    if not isinstance(backend, RedisCache) or not backend.redis_usable():
        return None
    client = backend.redis_client()
    if _script is None:
        _script = client.register_script(WINDOW_SCRIPT)
    return _script, client, backend


class OneTripThrottle(ScopedRateThrottle):
    """ScopedRateThrottle in one Redis round trip (see the module's docstring). The rates are
    ScopedRateThrottle.THROTTLE_RATES (settings, or a test's patch of them)."""

    oldest: float | None = None

    def get_ident(self, request: Any) -> str:
        # Anonymous requests are counted by address: the one reading of it (DRF's own believes
        # any X-Forwarded-For a client writes when NUM_PROXIES is unset).
        return client_address(request)

    def allow_request(self, request: Any, view: Any) -> bool:
        window = _window()
        if window is None:
            return super().allow_request(request, view)
        self.scope = getattr(view, self.scope_attr, None)
        if not self.scope:
            return True
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        self.now = self.timer()
        script, client, backend = window
        key = backend.make_and_validate_key(f"{self.key}:window")
        member = f"{self.now!r}:{secrets.token_hex(6)}"
        try:
            oldest = script(
                keys=[key],
                args=[repr(self.now), self.duration, self.num_requests, member],
                client=client,
            )
        except RedisError as error:
            backend.outage.failed(error)
            return super().allow_request(request, view)
        backend.outage.answered()
        if not oldest:
            return True
        self.oldest = float(oldest)
        return False

    def wait(self) -> float | None:
        if self.oldest is None:
            return super().wait()
        return max(0.0, float(self.duration or 0) - (self.now - self.oldest))


def throttled(scope: str) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """Answer 429 with Retry-After (and a sentence an htmx page shows) over the scope's rate."""

    class Scope:
        throttle_scope = scope

    def decorator(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            throttle = OneTripThrottle()
            if throttle.allow_request(request, Scope):
                return view(request, *args, **kwargs)
            wait = math.ceil(throttle.wait() or 1)
            response = HttpResponse(
                f"Too many requests: wait {wait} s and try again (nothing was lost).",
                status=429,
                content_type="text/plain; charset=utf-8",
            )
            response["Retry-After"] = str(wait)
            return response

        return wrapped

    return decorator
