"""Executing a chunk of work items (a run's predictions, a judge job's judgments): claim them,
answer them concurrently, write each answer as it arrives. What an item is and how it is
answered is the caller's Handler; this module knows tables, leases, endpoints and the loop.

One execution (`execute`, called through the lifecycle by the Celery tasks):

1. Claim, in one transaction (evaluation.work.locks): the chunk's items that are pending, or
   running under a lease that ran out (their worker was lost), locked with SKIP LOCKED so two
   executions never hold one item. A claim takes a fresh token and counts one claim (the
   `attempts` column); an item already claimed the endpoint's `max_claims` times is failed
   instead (a poison item that kills workers stops). HTTP retries within one call are the
   Caller's (`max_attempts`).
2. Answer on the process's event loop (kept between executions, with its HTTP clients, Redis
   pool and database thread). Lanes take items and run the handler (for a run, the suite's
   solve()) through the Caller (response cache, shared concurrency slots, rate limit, retries).
   A lane holds a slot while it has work; each execution runs only its fair share of the
   endpoint's concurrency (the limit divided by the executions working against it, counted in
   Redis), so two processes share the slots instead of one holding them all. The loop never
   touches the database itself: one database thread does every query, and a writer batches
   answers into it as they arrive; an UPDATE only lands while the claim token still matches,
   so a lost lease never writes twice. A heartbeat extends the leases and slots and notices a
   cancelled parent.
3. When its own items run out, an execution claims more of the parent's pending items (any
   position), up to a budget, so that a worker keeps its lanes full to the end of a run
   instead of paying start-up and tail costs per chunk; the queued messages of chunks it took
   over find nothing left and return at once.
4. Afterwards: a cancelled parent's unstarted items go back to pending (their claim undone).

A layer below the services: it imports models and the pure suite protocol, never services,
selectors, tasks or views.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import socket
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import psycopg
from django.conf import settings
from django.db import connection, connections, transaction

from benchmarks.kit.base import jsonb_text, shown
from benchmarks.kit.protocol import Prompt
from evaluation.credentials import (
    KeyVariableError,
    SealedKeyError,
    key_from_environment,
    unseal,
)
from evaluation.models import Endpoint
from evaluation.work.addresses import normalised_base_url
from evaluation.work.budget import Spending, Tokens
from evaluation.work.caller import (
    TOKEN_FIELDS,
    Caller,
    EndpointConfig,
    Origin,
    Reply,
    cache_key,
    endpoint_client,
    prompt_fields,
    request_body,
    with_seed,
)
from evaluation.work.limits import Lane, RateLimit, Shares, Slots, fair_share
from evaluation.work.locks import (
    Claimed,
    WorkTable,
    claim,
    extend_leases,
    from_jsonb,
    lease_seconds,
    mark_sent,
    release,
    release_held,
)

if TYPE_CHECKING:
    # The client libraries are imported when the process loop makes its first client: they are
    # seconds of start-up for every process that sets Django up and never runs a chunk.
    import openai
    import redis.asyncio as aioredis

log = logging.getLogger(__name__)
T = TypeVar("T")


class ConfigurationError(RuntimeError):
    """The work cannot be executed as configured (e.g. its key variable is unset)."""


def endpoint_config(
    endpoint: Endpoint, *, model: str = "", style: str = "", params: dict[str, Any] | None = None
) -> EndpointConfig:
    """What calling `endpoint` needs, its key opened here (the one place a key is read: runs,
    judge jobs, rewriting, embeddings, the simulator and the admin's connection check). Raises
    ConfigurationError when the key cannot be sent: a stored key entered for another address
    or sealed under another encryption key, a variable the operator does not list, or one
    unset on this machine."""
    return EndpointConfig(
        id=endpoint.pk,
        base_url=endpoint.base_url,
        model=model or endpoint.model,
        api_key=endpoint_key(endpoint),
        style=style or endpoint.style,
        params=params if params is not None else endpoint.default_params,
        timeout=endpoint.timeout_seconds,
        max_attempts=endpoint.max_attempts,
        max_concurrency=endpoint.max_concurrency,
        requests_per_minute=endpoint.requests_per_minute,
    )


def endpoint_key(endpoint: Endpoint) -> str:
    """The key sent to `endpoint`'s base URL (see endpoint_config); "unused" for a server that
    needs none (the client insists on a key; such servers ignore it)."""
    if endpoint.api_key_sealed and endpoint.api_key_env:
        raise ConfigurationError(
            f"endpoint {endpoint.name!r} has both a stored key and a key variable; save it "
            "again with one of them"
        )
    if endpoint.api_key_sealed:
        try:
            return unseal(endpoint.api_key_sealed, normalised_base_url(endpoint.base_url))
        except SealedKeyError as exc:
            raise ConfigurationError(f"endpoint {endpoint.name!r}: {exc}") from None
    if not endpoint.api_key_env:
        return "unused"
    try:
        api_key = key_from_environment(endpoint.api_key_env)
    except KeyVariableError as exc:
        raise ConfigurationError(f"endpoint {endpoint.name!r}: {exc}") from None
    if not api_key:
        raise ConfigurationError(
            f"the environment variable {endpoint.api_key_env} (the key of endpoint "
            f"{endpoint.name!r}) is not set on worker {socket.gethostname()}"
        )
    return api_key


# --- results ------------------------------------------------------------------------------------


# A batch of cache entries: keys, models, base URLs, requests and responses, one array each, in
# binary (see WorkTable.write_sql).
CACHE_SQL = """
INSERT INTO evaluation_responsecache (key, model, base_url, request, response, created_at)
SELECT key, model, base_url, request, response, now()
FROM unnest(%b::text[], %b::text[], %b::text[], %b::jsonb[], %b::jsonb[])
    AS v(key, model, base_url, request, response)
ON CONFLICT (key) DO NOTHING
"""


class Row(Protocol):
    id: int
    status: str
    usage: dict[str, Any]

    def values(self) -> tuple[Any, ...]:
        """Its table's `written` columns' values, then its id."""
        ...


def write(
    token: uuid.UUID,
    results: Sequence[Row],
    cache_rows: Sequence[tuple],
    table: WorkTable,
    sent: Sequence[int] = (),
) -> int:
    """Store answers (only where this execution still holds the claim) and cache entries, and
    mark the items sent and not yet answered, a statement each, whatever their number. The
    arrays are bound by the server, in binary: Django's cursors bind on the client, which
    writes each array as a quoted literal in Python (more CPU than the rest of the write)."""
    written = 0
    with transaction.atomic():
        connection.ensure_connection()
        with psycopg.Cursor(connection.connection) as cursor:
            if sent:
                mark_sent(cursor, token, sent, table)
            if cache_rows:
                cursor.execute(
                    CACHE_SQL, [list(column) for column in zip(*cache_rows, strict=True)]
                )
            if results:
                arrays = [
                    list(column)
                    for column in zip(*(result.values() for result in results), strict=True)
                ]
                # A text PostgreSQL cannot store (NUL, a lone surrogate: a model may answer
                # them) is stored with those characters as escapes (jsonb: jsonb_text).
                for index in table.text_columns:
                    arrays[index] = [
                        shown(value) if isinstance(value, str) else value for value in arrays[index]
                    ]
                cursor.execute(table.write_sql, [*arrays, token])
                written = cursor.rowcount
    return written


def spent_so_far(table: WorkTable, parent_id: int) -> tuple[Tokens, int]:
    """The tokens a parent's items have spent, and how many of them are settled."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0),
                   coalesce(sum(cached_tokens), 0),
                   count(*) FILTER (WHERE status NOT IN ('pending', 'running'))
            FROM {table.table} WHERE {table.parent} = %s
            """,  # noqa: S608 - the table and column names are ours
            [parent_id],
        )
        prompt, completion, cached, settled = cursor.fetchone()
    return Tokens(int(prompt), int(completion), int(cached)), int(settled)


def cached_replies(keys: Sequence[str]) -> dict[str, dict[str, Any]]:
    if not keys:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT key, response FROM evaluation_responsecache WHERE key = ANY(%s)", [list(keys)]
        )
        return {key: from_jsonb(response) for key, response in cursor}


# --- the process's loop, database thread and clients ----------------------------------------


class DatabaseThread:
    """Every query of the async part runs here, on one thread with its own connection: the
    event loop never blocks on the database, and queries never run concurrently."""

    def __init__(self) -> None:
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chunk-db")

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)

    def close(self) -> None:
        self.pool.submit(connections.close_all).result()
        self.pool.shutdown(wait=True)


def _fresh_connection() -> None:
    # The thread's connection outlives a chunk; a server restart in between must not break
    # the next one.
    for conn in connections.all(initialized_only=True):
        conn.close_if_unusable_or_obsolete()


class ProcessLoop:
    """The worker process's event loop, kept between chunk executions, with what is bound to
    it: HTTP clients per endpoint (their keep-alive connections stay warm), the Redis pool and
    the database thread. Made anew in a forked child, and after an execution that broke off."""

    def __init__(self) -> None:
        self.pid = 0
        self.runner: asyncio.Runner | None = None
        self.clients: dict[tuple[str, str, float], openai.AsyncOpenAI] = {}
        self.redis: aioredis.Redis | None = None
        self.db: DatabaseThread | None = None

    def _ensure(self) -> asyncio.Runner:
        if self.runner is None or self.pid != os.getpid():
            self.runner = asyncio.Runner()
            self.pid = os.getpid()
            self.clients, self.redis = {}, None
            self.db = DatabaseThread()
        return self.runner

    def run(self, coroutine: Any) -> Any:
        runner = self._ensure()
        try:
            return runner.run(coroutine)
        except BaseException:
            self.reset()
            raise

    def reset(self) -> None:
        runner, self.runner = self.runner, None
        if runner is not None:
            with contextlib.suppress(Exception):
                runner.close()
        if self.db is not None:
            with contextlib.suppress(Exception):
                self.db.close()
            self.db = None

    def database(self) -> DatabaseThread:
        assert self.db is not None
        return self.db

    def openai_client(self, config: EndpointConfig) -> openai.AsyncOpenAI:
        key = (config.base_url, config.api_key, config.timeout)
        client = self.clients.get(key)
        if client is None:
            client = self.clients[key] = endpoint_client(config)
        return client

    def redis_client(self) -> aioredis.Redis:
        if self.redis is None:
            # Here, not at the top, as the clients are (above).
            import redis.asyncio as aioredis

            # Blocking pool: lanes waiting for a slot each hold a connection in BLPOP.
            pool = aioredis.BlockingConnectionPool.from_url(
                settings.CELERY_BROKER_URL, max_connections=512, timeout=60
            )
            self.redis = aioredis.Redis(connection_pool=pool)
        return self.redis


PROCESS_LOOP = ProcessLoop()


class DatabaseCache:
    """The response cache as the Caller sees it: a preloaded map for the first requests of the
    claimed items, a lookup through the database thread for others, writes batched by the
    writer."""

    def __init__(self, db: DatabaseThread, writer: Writer) -> None:
        self.db = db
        self.writer = writer
        self.known: dict[str, Any] = {}
        self.looked_up: set[str] = set()  # a key looked up and not found is a miss

    def preloaded(self, keys: Sequence[str], found: dict[str, Any]) -> None:
        self.known.update(found)
        self.looked_up.update(keys)

    async def get(self, key: str) -> dict[str, Any] | None:
        if key in self.known:
            return self.known[key]
        if key in self.looked_up:
            return None
        found = await self.db.run(cached_replies, [key])
        self.looked_up.add(key)
        return found.get(key)

    def put(self, key: str, origin: Origin, request: dict[str, Any], reply: dict[str, Any]) -> None:
        self.known[key] = reply
        self.writer.add_cache(
            (key, origin.model, origin.base_url, jsonb_text(request), jsonb_text(reply))
        )


def write_interval() -> float:
    """The least time between two writes of one execution (EVALUATION_WRITE_INTERVAL_SECONDS)."""
    return float(getattr(settings, "EVALUATION_WRITE_INTERVAL_SECONDS", 0.1))


class Writer:
    """Group commit over a window: whatever has arrived since the last write goes in the next,
    at most one write per `interval`. Answers arrive one by one; a transaction each (a commit,
    a statement per table) cost the database more than the answers' rows. An answer waits at
    most the interval before it is stored, and until then it is like one still in flight: a
    lost worker's item is answered again under a new claim, its late write finds no claim."""

    def __init__(
        self,
        db: DatabaseThread,
        token: uuid.UUID,
        table: WorkTable,
        interval: float | None = None,
    ) -> None:
        self.db = db
        self.token = token
        self.table = table
        self.interval = write_interval() if interval is None else interval
        self.results: list[Row] = []
        self.cache_rows: list[tuple] = []
        # Items a lane has sent since the last write (ids): marked in the next write, unless
        # their answer goes in the same one.
        self.sent: list[int] = []
        self.written = 0
        self._wake = asyncio.Event()
        self._closing = False
        self._closed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop())

    def add(self, result: Row) -> None:
        self.results.append(result)
        self._wake.set()

    def add_cache(self, row: tuple) -> None:
        self.cache_rows.append(row)

    def add_sent(self, item_id: int) -> None:
        self.sent.append(item_id)
        self._wake.set()

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        last = -self.interval
        while True:
            await self._wake.wait()
            wait = last + self.interval - loop.time()
            if wait > 0 and not self._closing:
                # The window: more answers join this write, until it ends or the execution
                # closes (its last answers are written at once, not a window later).
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._closed.wait(), wait)
            self._wake.clear()
            results, self.results = self.results, []
            cache_rows, self.cache_rows = self.cache_rows, []
            answered = {result.id for result in results}
            sent = [item for item in self.sent if item not in answered]
            self.sent = []
            if results or cache_rows or sent:
                last = loop.time()
                self.written += await self.db.run(
                    write, self.token, results, cache_rows, self.table, sent
                )
            if self._closing and not self.results and not self.cache_rows:
                return

    async def close(self) -> None:
        self._closing = True
        self._closed.set()
        self._wake.set()
        if self._task is not None:
            await self._task


# --- answering ----------------------------------------------------------------------------------


class ItemCalls:
    """The `complete` a suite's solve() gets for one item: it records the first request, the
    usage, whether every answer came from the cache, and how many HTTP attempts were made."""

    def __init__(
        self, caller: Caller, lane: Lane | None, salt: str = "", seed: int | None = None
    ) -> None:
        self.caller = caller
        self.lane = lane
        self.salt = salt
        self.seed = seed  # a run's trial: sent as the request's seed (Caller.call)
        self.prompt: Any = None
        self.replies: list[Reply] = []

    async def __call__(self, prompt: Prompt) -> str:
        return (await self.reply(prompt)).text

    async def reply(self, prompt: Prompt) -> Reply:
        """The whole answer (native runs read its tool_calls)."""
        if self.prompt is None:
            self.prompt = prompt_fields(prompt, self.caller.config.style)
        reply = await self.caller.call(prompt, self.lane, self.salt, self.seed)
        self.replies.append(reply)
        return reply

    def usage(self) -> dict[str, int]:
        """Calls, HTTP attempts and the tokens the server reported, summed over the item's
        calls. A call answered from the response cache cost nothing now: it is counted in
        cached_calls, and its tokens are not."""
        usage = {"calls": len(self.replies), "http_attempts": 0, "cached_calls": 0}
        usage.update(dict.fromkeys(TOKEN_FIELDS, 0))
        for reply in self.replies:
            usage["http_attempts"] += reply.attempts
            if reply.cached:
                usage["cached_calls"] += 1
                continue
            for name in TOKEN_FIELDS:
                usage[name] += int(reply.usage.get(name, 0))
        return usage


# How often an execution counts the executions sharing its endpoint, and how long an entry
# lasts without being renewed (a dead process's share is given back after this).
SHARE_POLL_SECONDS = 0.2
SHARE_TTL_SECONDS = 5.0


def endpoint_slots(redis_client: Any, config: EndpointConfig) -> Slots:
    """The endpoint's concurrency slots (`Slots`), as every caller of it holds them (runs, judge
    jobs, the simulator, rewriting). A slot is refreshed before each request, not during one,
    so it outlives its last refresh by the request's timeout and a margin for a stalled loop
    (EVALUATION_SLOT_MARGIN_SECONDS), and by three leases at least: the slots of a worker that
    died come back that long after its last request began."""
    margin = float(getattr(settings, "EVALUATION_SLOT_MARGIN_SECONDS", 30))
    return Slots(
        redis_client,
        config.id,
        config.max_concurrency,
        ttl_seconds=max(config.timeout + margin, 3 * lease_seconds()),
    )


def refill_size() -> int:
    return int(getattr(settings, "EVALUATION_CHUNK_SIZE", 100))


def execution_seconds() -> float:
    """How long an execution keeps taking more work: a third of the task's soft time limit, so
    that the items it holds are finished long before Celery would stop it."""
    soft = float(getattr(settings, "CELERY_TASK_SOFT_TIME_LIMIT", 1740))
    return float(getattr(settings, "EVALUATION_EXECUTION_MAX_SECONDS", soft / 3))


def execution_budget() -> int:
    """Items one execution may take beyond its own chunk before it lets the queue decide
    again (so that one run does not hold a worker while other runs wait)."""
    return int(getattr(settings, "EVALUATION_EXECUTION_MAX_ITEMS", 10 * refill_size()))


class Handler(Protocol):
    """What one kind of work does with its claimed rows (predictions, judgments)."""

    report: dict[str, int]

    async def load(self, rows: Sequence[Claimed], db: DatabaseThread) -> None:
        """Fetch what answering these rows needs (samples, outputs), through the db thread."""

    def first_request_keys(self, rows: Sequence[Claimed], config: EndpointConfig) -> list[str]:
        """Cache keys of the rows' first requests, to look up in one query (may be [])."""

    async def answer(self, row: Claimed, caller: Caller, lane: Lane | None) -> Row: ...

    def exhausted(self, row: Claimed) -> Row:
        """The result of a row whose attempts are used up."""


@dataclass
class Chunk:
    table: WorkTable
    parent_id: int
    handler: Handler
    token: uuid.UUID
    claimed: deque[Claimed]
    exhausted: list[Claimed]
    config: EndpointConfig
    max_claims: int
    budget: int = 0
    # Items taken beyond the first claim (refills), and how often a lane waited for them,
    # for the report.
    refilled: int = 0
    waited: int = 0
    cancelled: bool = False
    # The parent's budget, and whether this execution stopped at it.
    spending: Spending | None = None
    over_budget: bool = False


def request_key(
    prompt: Prompt, config: EndpointConfig, salt: str = "", seed: int | None = None
) -> str:
    body = request_body(prompt, config.style, config.model, with_seed(config.params, seed))
    return cache_key(config.origin, body, salt)


def exhausted_error(row: Claimed) -> str:
    return (
        f"gave up after {row.attempts - 1} claims: the worker running this item was lost "
        "each time (the endpoint's max_claims)"
    )


class Execution:
    """One chunk execution on the process loop."""

    def __init__(self, chunk: Chunk) -> None:
        self.chunk = chunk
        self.db = PROCESS_LOOP.database()
        self.writer = Writer(self.db, chunk.token, chunk.table)
        self.cache = DatabaseCache(self.db, self.writer)
        self.refill_lock = asyncio.Lock()
        self.lanes: list[Lane] = []
        # Lanes with an index below `allowed` work; the others wait for a larger share.
        self.allowed = 1
        self.finished = False
        self.share_changed = asyncio.Condition()
        self.spending_changed = asyncio.Condition()
        self.refill_until = time.monotonic() + execution_seconds()
        # More rows are claimed once this few are left (claim_ahead), and how often a lane
        # found none while the parent had more.
        self.low_water = refill_size() // 2
        self.ahead: asyncio.Task[None] | None = None
        self.waited = 0

    async def take(self, claimed: Sequence[Claimed], exhausted: Sequence[Claimed]) -> None:
        """Make newly claimed rows ready: what the handler needs, their cached answers."""
        chunk = self.chunk
        await chunk.handler.load([*claimed, *exhausted], self.db)
        for row in exhausted:
            self.writer.add(chunk.handler.exhausted(row))
        keys = chunk.handler.first_request_keys(claimed, chunk.config)
        if keys:
            self.cache.preloaded(keys, await self.db.run(cached_replies, keys))
        chunk.claimed.extend(claimed)

    async def set_share(self, allowed: int) -> None:
        if allowed != self.allowed:
            async with self.share_changed:
                self.allowed = allowed
                self.share_changed.notify_all()

    async def finish(self) -> None:
        async with self.share_changed:
            self.finished = True
            self.share_changed.notify_all()

    async def admit(self) -> bool:
        """Under a budget, whether a lane may start one more item (counted in flight until
        `settle`): it waits while the answer depends on items being answered; False when the
        next item would pass the budget (the execution then stops there)."""
        spending = self.chunk.spending
        if spending is None:
            return True
        async with self.spending_changed:
            while True:
                if self.chunk.cancelled or self.finished:
                    return False
                verdict = spending.admits()
                if verdict is True:
                    spending.in_flight += 1
                    return True
                if verdict is False:
                    self.chunk.over_budget = True
                    return False
                await self.spending_changed.wait()

    async def settle(self, result: Row | None) -> None:
        spending = self.chunk.spending
        if spending is None:
            return
        async with self.spending_changed:
            spending.in_flight -= 1
            if result is not None:
                spending.add(Tokens.of_usage(result.usage))
            self.spending_changed.notify_all()

    async def refill(self, ahead: bool = False) -> bool:
        """More of the parent's pending rows, within this execution's budget: when a lane
        finds none left, or `ahead` of that (see `claim_ahead`). False when none are left."""
        chunk = self.chunk
        async with self.refill_lock:
            if len(chunk.claimed) > (self.low_water if ahead else 0):
                return True
            if chunk.cancelled or chunk.budget <= 0 or time.monotonic() > self.refill_until:
                return False
            claimed, exhausted = await self.db.run(
                claim,
                chunk.table,
                chunk.parent_id,
                None,
                None,
                chunk.token,
                chunk.max_claims,
                min(refill_size(), chunk.budget),
            )
            chunk.budget -= len(claimed) + len(exhausted)
            chunk.refilled += len(claimed) + len(exhausted)
            if not claimed and not exhausted:
                chunk.budget = 0
                return False
            await self.take(claimed, exhausted)
            return bool(chunk.claimed)

    def claim_ahead(self) -> None:
        """Claim the next rows once no more than `low_water` are left, while the lanes still
        answer those: a lane that finds no row waits for the claim, the items' loading and the
        cache lookup, and so does every lane after it (`waited` in the report)."""
        if len(self.chunk.claimed) > self.low_water:
            return
        if self.ahead is None or self.ahead.done():
            self.ahead = asyncio.create_task(self._refill_ahead())

    async def _refill_ahead(self) -> None:
        try:
            await self.refill(ahead=True)
        except Exception:
            # A lane that runs out refills itself, and meets the same error if it lasts.
            log.warning("claiming rows ahead failed", exc_info=True)

    async def rows_left(self) -> bool:
        """Whether a claimed row is left for a lane, refilled when none is (a lane idle while
        the parent had rows for it is counted in `waited`)."""
        if self.chunk.claimed:
            return True
        if not await self.refill():
            return False
        self.waited += 1
        return True

    async def next_row(self) -> Claimed | None:
        """The next claimed row (None: the work is done); claims more ahead when few are left."""
        if not await self.rows_left():
            return None
        row = self.chunk.claimed.popleft()
        self.claim_ahead()
        return row

    async def run(self) -> None:
        chunk, config = self.chunk, self.chunk.config
        await self.db.run(_fresh_connection)
        self.writer.start()
        redis_client = PROCESS_LOOP.redis_client()
        slots = endpoint_slots(redis_client, config)
        caller = Caller(
            config,
            client=PROCESS_LOOP.openai_client(config),
            cache=self.cache,
            slots=slots,
            rate=RateLimit(redis_client, config.id, config.requests_per_minute)
            if config.requests_per_minute
            else None,
            rng=random.Random(),
        )
        initial, chunk.claimed = list(chunk.claimed), deque()
        await self.take(initial, chunk.exhausted)
        if chunk.spending is not None:
            tokens, settled = await self.db.run(spent_so_far, chunk.table, chunk.parent_id)
            chunk.spending.tokens, chunk.spending.answered = tokens, settled

        shares = Shares(redis_client, config.id, ttl_seconds=SHARE_TTL_SECONDS)
        share_token = chunk.token.hex
        await self.set_share(fair_share(config.max_concurrency, await shares.touch(share_token)))

        async def lane_loop(index: int, lane: Lane) -> None:
            try:
                while not chunk.cancelled and not self.finished:
                    if index >= self.allowed:
                        # Over this execution's share: let another process have the slot.
                        await lane.release()
                        async with self.share_changed:
                            await self.share_changed.wait_for(
                                lambda: index < self.allowed or self.finished or chunk.cancelled
                            )
                        continue
                    if not await self.rows_left():
                        await self.finish()
                        return
                    if not await self.admit():
                        await self.finish()
                        return
                    result = None
                    try:
                        # Another lane may have taken the last item while this one waited.
                        claimed = await self.next_row()
                        if claimed is None:
                            await self.finish()
                            return
                        self.writer.add_sent(claimed.id)
                        result = await chunk.handler.answer(claimed, caller, lane)
                        self.writer.add(result)
                    finally:
                        await self.settle(result)
            finally:
                await lane.release()

        async def heartbeat() -> None:
            interval = max(0.5, lease_seconds() / 3)
            while True:
                await asyncio.sleep(interval)
                status = await self.db.run(extend_leases, chunk.token, chunk.parent_id, chunk.table)
                if status != "running":
                    chunk.cancelled = True
                    await self.finish()
                for lane in self.lanes:
                    await lane.refresh()

        async def share_watch() -> None:
            while True:
                await asyncio.sleep(SHARE_POLL_SECONDS)
                count = await shares.touch(share_token)
                await self.set_share(fair_share(config.max_concurrency, count))

        self.lanes = [Lane(slots) for _ in range(max(1, config.max_concurrency))]
        helpers = [asyncio.create_task(heartbeat()), asyncio.create_task(share_watch())]
        try:
            await asyncio.gather(*(lane_loop(i, lane) for i, lane in enumerate(self.lanes)))
        finally:
            for task in helpers:
                task.cancel()
            if self.ahead is not None:
                await self.ahead  # its rows are this execution's to answer or release
            chunk.waited = self.waited
            await asyncio.shield(shares.leave(share_token))
            await self.writer.close()
        if (chunk.cancelled or chunk.over_budget) and chunk.claimed:
            await self.db.run(release, chunk.token, [c.id for c in chunk.claimed], chunk.table)


def execute(
    *,
    table: WorkTable,
    parent_id: int,
    first: int,
    last: int,
    config: EndpointConfig,
    max_claims: int,
    make_handler: Callable[[], Handler],
    spending: Spending | None = None,
) -> dict[str, int]:
    """Claim positions first..last of a parent's rows and answer them (then, within the
    execution's budget of items, more of the parent's pending rows). With `spending` (the
    parent's budget), no item is started that would pass it: the report then says
    "over_budget" and the unstarted items are pending again. Returns counts for the log."""
    token = uuid.uuid4()
    claimed, exhausted = claim(table, parent_id, first, last, token, max_claims)
    if not claimed and not exhausted:
        return {"claimed": 0}
    budget = execution_budget()
    try:
        chunk = Chunk(
            table=table,
            parent_id=parent_id,
            handler=make_handler(),
            token=token,
            claimed=deque(claimed),
            exhausted=exhausted,
            config=config,
            max_claims=max_claims,
            budget=budget,
            spending=spending,
        )
        PROCESS_LOOP.run(_execute(chunk))
    except Exception:
        # The execution broke off: what it still holds goes back to pending at once, its claim
        # undone (the error is the platform's, not the items'), rather than when its lease ends.
        release_held(token, parent_id, table)
        raise
    taken = len(claimed) + len(exhausted) + chunk.refilled
    report = {"claimed": taken, **chunk.handler.report}
    if chunk.over_budget:
        report["over_budget"] = 1
    if chunk.waited:
        report["waited"] = chunk.waited
    return report


async def _execute(chunk: Chunk) -> None:
    # Built inside the loop: its locks belong to it, and the loop owns the database thread.
    await Execution(chunk).run()
