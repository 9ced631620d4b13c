"""The cache backend: Django's Redis cache, keeping one client per connection pool.

Django's RedisCacheClient builds a new `redis.Redis` object for every cache call (its
`get_client`); building one costs more CPU than the round trip it makes (a studio request
makes three: the session, the throttle, the campaign's counts). A `redis.Redis` over a
connection pool is safe to share between threads, so one per pool is kept and reused."""

from __future__ import annotations

from typing import Any

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient


class ReusingClient(RedisCacheClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        index = self._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:
            client = self._clients[index] = self._client(
                connection_pool=self._get_connection_pool(write)
            )
        return client


class RedisCache(DjangoRedisCache):
    def __init__(self, server: Any, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = ReusingClient
