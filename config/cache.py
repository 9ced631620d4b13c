"""The cache backend: Django's Redis cache, keeping one client per connection pool, and going on
in the process's own memory while Redis does not answer.

Django's RedisCacheClient builds a new `redis.Redis` object for every cache call (its
`get_client`); building one costs more CPU than the round trip it makes (a studio request
makes two: the throttle, the campaign's counts). A `redis.Redis` over a connection pool is safe
to share between threads, so one per pool is kept and reused.

Nothing in the studio may wait on Redis: annotating depends on PostgreSQL only. Redis is asked
with short socket timeouts (settings.REDIS_SOCKET_TIMEOUT, in CACHES' OPTIONS); a call that
fails (refused, reset, timed out) marks the server down for RETRY_SECONDS, during which every
call of every thread of the process goes to a local-memory cache instead (no waiting), and then
one call tries Redis again. The outage is logged once as it starts, at most every
LOG_EVERY_SECONDS while it lasts, and once as it ends. What the cache holds while Redis is down
is each process's own: the throttles and the login's failure counts go on counting, per process
(so a limit holds per process rather than across them); cached counts are at most as old as
their timeout.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient
from redis.exceptions import RedisError

log = logging.getLogger(__name__)

# While Redis is down, how long the process goes without trying it, and how often it says so.
RETRY_SECONDS = 5.0
LOG_EVERY_SECONDS = 60.0


@dataclass
class Outage:
    """One Redis server as this process sees it: answering, or down since `since`."""

    where: str
    since: float | None = None  # time.monotonic() of the first failure; None while it answers
    failed_at: float = 0.0
    logged_at: float = 0.0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def skipping(self) -> bool:
        """Whether to skip Redis now (down, and not yet time to try it again)."""
        return self.since is not None and time.monotonic() < self.failed_at + RETRY_SECONDS

    def failed(self, error: BaseException) -> None:
        now = time.monotonic()
        with self._lock:
            self.failed_at = now
            if self.since is None:
                self.since = self.logged_at = now
                log.warning(
                    "Redis at %s does not answer (%s): caching and counting in each process's "
                    "memory until it does (tried again every %.0f s)",
                    self.where,
                    error,
                    RETRY_SECONDS,
                )
            elif now - self.logged_at >= LOG_EVERY_SECONDS:
                self.logged_at = now
                log.warning(
                    "Redis at %s still does not answer after %.0f s (%s)",
                    self.where,
                    now - self.since,
                    error,
                )

    def answered(self) -> None:
        if self.since is None:
            return
        with self._lock:
            if self.since is not None:
                log.info(
                    "Redis at %s answers again after %.0f s",
                    self.where,
                    time.monotonic() - self.since,
                )
                self.since = None


_outages: dict[str, Outage] = {}
_outages_lock = threading.Lock()


def outage_of(location: str) -> Outage:
    found = _outages.get(location)
    if found is None:
        with _outages_lock:
            found = _outages.setdefault(location, Outage(_shown(location)))
    return found


def outages_forget() -> None:
    """Forget every outage seen (a test that stopped its own Redis, when it is done)."""
    with _outages_lock:
        _outages.clear()


def _shown(location: str) -> str:
    # host:port/db, never a password
    parts = urlsplit(location.split(",")[0])
    return f"{parts.hostname}:{parts.port or 6379}{parts.path}"


class ReusingClient(RedisCacheClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        django_client: Any = self  # Django's RedisCacheClient, whose helpers have no stubs
        index = django_client._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:
            client = self._clients[index] = django_client._client(
                connection_pool=django_client._get_connection_pool(write)
            )
        return client


class RedisCache(DjangoRedisCache):
    def __init__(self, server: Any, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = ReusingClient
        location = server if isinstance(server, str) else ",".join(server)
        self.outage = outage_of(location)
        # The memory the process falls back on (shared by its threads, one per location).
        self.local = LocMemCache(
            f"redis-down:{location}",
            {**params, "OPTIONS": {"MAX_ENTRIES": 10_000}},
        )

    def redis_usable(self) -> bool:
        return not self.outage.skipping()

    def redis_client(self) -> Any:
        """The `redis.Redis` of the cache's server (for the throttle's script)."""
        return self._cache.get_client(None, write=True)


def _falling_back(name: str) -> Any:
    on_redis = getattr(DjangoRedisCache, name)

    def method(self: RedisCache, *args: Any, **kwargs: Any) -> Any:
        if self.outage.skipping():
            return getattr(self.local, name)(*args, **kwargs)
        try:
            result = on_redis(self, *args, **kwargs)
        except RedisError as error:
            self.outage.failed(error)
            return getattr(self.local, name)(*args, **kwargs)
        self.outage.answered()
        return result

    method.__name__ = name
    method.__doc__ = f"Redis's {name}, or the process's memory while Redis does not answer."
    return method


for _name in (
    "add",
    "get",
    "set",
    "touch",
    "delete",
    "get_many",
    "has_key",
    "incr",
    "set_many",
    "delete_many",
    "clear",
):
    setattr(RedisCache, _name, _falling_back(_name))
