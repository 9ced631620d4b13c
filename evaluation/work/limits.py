"""Limits shared by every worker on every machine, kept in the Celery broker's Redis.

`Slots`: at most N requests in flight to an endpoint. A holder takes a slot with an expiry
(a sorted set scored by expiry time, so a killed worker's slot comes back by itself) and gives it
back with a wake-up note that a waiting lane blocks on, so waiting costs no polling.

`RateLimit`: at most R requests a minute to an endpoint, by the generic cell-rate algorithm: one
timestamp per endpoint, bursts up to one second's worth.

Both use the Redis server's clock, so workers on machines with skewed clocks agree.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Only the type: the client comes from the engine, which imports the library when it
    # makes one (seconds of start-up saved for every process that never does).
    import redis.asyncio as aioredis

PREFIX = "toolevals:endpoint"

# KEYS: slots zset, wake list. ARGV: limit, token, ttl ms.
_ACQUIRE = """
redis.replicate_commands()
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) * 2)
  return 1
end
return 0
"""

# KEYS: slots zset, wake list. ARGV: token.
_RELEASE = """
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('LPUSH', KEYS[2], '1')
redis.call('LTRIM', KEYS[2], 0, 255)
redis.call('PEXPIRE', KEYS[2], 60000)
return 1
"""

# KEYS: slots zset. ARGV: token, ttl ms. Extends a held slot; 0 if it had expired.
_REFRESH = """
redis.replicate_commands()
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
  -- The set itself must outlive its holders, or it vanishes under steady holders.
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
  return 1
end
return 0
"""

# KEYS: rate key. ARGV: interval ms (60000 / rpm), burst. Returns ms to wait (0: go).
_RATE = """
redis.replicate_commands()
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local interval = tonumber(ARGV[1])
local tolerance = interval * (tonumber(ARGV[2]) - 1)
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local wait = tat - tolerance - now
-- Whole milliseconds, rounded up: Redis turns a Lua number into an integer reply, and a wait
-- below 1 ms must not come back as 0 ("go") without the call being counted.
if wait > 0 then return math.ceil(wait) end
redis.call('SET', KEYS[1], tat + interval, 'PX', math.ceil(tat + interval - now + 1000))
return 0
"""


class Slots:
    """At most `limit` holders at once for one endpoint, across processes and machines."""

    def __init__(
        self,
        client: aioredis.Redis,
        endpoint_id: int,
        limit: int,
        *,
        ttl_seconds: float,
        wait_step: float = 0.25,
    ) -> None:
        self.client = client
        self.limit = max(1, limit)
        self.ttl_ms = max(1000, int(ttl_seconds * 1000))
        self.wait_step = wait_step
        self.keys = [f"{PREFIX}:{endpoint_id}:slots", f"{PREFIX}:{endpoint_id}:wake"]
        self._acquire = client.register_script(_ACQUIRE)
        self._release = client.register_script(_RELEASE)
        self._refresh = client.register_script(_REFRESH)

    async def acquire(self) -> str:
        token = uuid.uuid4().hex
        while not await self._acquire(keys=self.keys, args=[self.limit, token, self.ttl_ms]):
            # Woken by a release, or after wait_step in case a holder died without one.
            await self.client.blpop([self.keys[1]], timeout=self.wait_step)
        return token

    async def release(self, token: str) -> None:
        await self._release(keys=self.keys, args=[token])

    async def refresh(self, token: str) -> bool:
        return bool(await self._refresh(keys=self.keys[:1], args=[token, self.ttl_ms]))

    @contextlib.asynccontextmanager
    async def hold(self) -> AsyncIterator[str]:
        token = await self.acquire()
        try:
            yield token
        finally:
            # Shielded: a cancelled lane must still hand its slot back.
            await asyncio.shield(self.release(token))

    async def in_use(self) -> int:
        return int(await self.client.zcard(self.keys[0]))


# KEYS: executions zset. ARGV: token, ttl ms (0: leave). Returns the executions now present.
_SHARE = """
redis.replicate_commands()
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if tonumber(ARGV[2]) > 0 then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
else
  redis.call('ZREM', KEYS[1], ARGV[1])
end
return redis.call('ZCARD', KEYS[1])
"""


class Shares:
    """The executions working against one endpoint right now, so that each runs its fair share
    of the endpoint's concurrency: limit / executions lanes, rounded up. Slots stay the hard
    bound; shares only keep one process from holding every slot while another waits. An
    execution that dies drops out when its entry expires."""

    def __init__(self, client: aioredis.Redis, endpoint_id: int, *, ttl_seconds: float) -> None:
        self.key = f"{PREFIX}:{endpoint_id}:executions"
        self.ttl_ms = max(1000, int(ttl_seconds * 1000))
        self._share = client.register_script(_SHARE)

    async def touch(self, token: str) -> int:
        return max(1, int(await self._share(keys=[self.key], args=[token, self.ttl_ms])))

    async def leave(self, token: str) -> None:
        await self._share(keys=[self.key], args=[token, 0])


def fair_share(limit: int, executions: int) -> int:
    return max(1, -(-max(1, limit) // max(1, executions)))


class Lane:
    """One lane's hold on a slot: taken before its first request, kept while the lane has work
    (the chunk's heartbeat refreshes it), given back when the lane is done. Two Redis scripts
    per lane instead of two per request; a waiting lane of another process gets the slot as
    soon as this one lets go."""

    def __init__(self, slots: Slots) -> None:
        self.slots = slots
        self.token: str | None = None

    async def ensure(self) -> None:
        if self.token is None:
            self.token = await self.slots.acquire()

    async def refresh(self) -> None:
        # A slot that expired (the loop stalled past its TTL) is taken again before the next
        # request rather than silently kept over the limit.
        if self.token is not None and not await self.slots.refresh(self.token):
            self.token = None

    async def release(self) -> None:
        if self.token is not None:
            token, self.token = self.token, None
            await asyncio.shield(self.slots.release(token))


class RateLimit:
    """At most `per_minute` requests a minute for one endpoint, across processes."""

    def __init__(self, client: aioredis.Redis, endpoint_id: int, per_minute: int) -> None:
        self.client = client
        self.interval_ms = 60000.0 / max(1, per_minute)
        self.burst = max(1, per_minute // 60)
        self.key = f"{PREFIX}:{endpoint_id}:rate"
        self._take = client.register_script(_RATE)

    async def wait(self) -> None:
        while True:
            wait_ms = int(await self._take(keys=[self.key], args=[self.interval_ms, self.burst]))
            if wait_ms <= 0:
                return
            await asyncio.sleep(wait_ms / 1000.0)
