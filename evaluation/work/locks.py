"""Work items held under a lease: claiming them (row locks with SKIP LOCKED, so two executions
never hold one item), extending and giving back the leases, and taking back the items of a lost
worker. Every query on an item table's claim columns is here.

An item table has id, status, attempts (how many times the item was claimed), claim (the token of
the execution holding it), lease_until, started_at (when a lane sent it under the claim) and
position, under a parent row whose status says whether to go on.
"""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

# Every kind of background work holds its leases for as long (config.background).
from config.background import lease_seconds


@dataclass(frozen=True)
class WorkTable:
    """A table of work items the engine executes: predictions of a run, judgments of a judge
    job. Items are rows with status, attempts, claim, lease_until and position, under a
    parent row (`parent` column, in `parent_table`) whose status says whether to go on."""

    table: str
    parent: str
    parent_table: str
    # Columns a handler needs besides id and attempts; the jsonb ones among them are decoded.
    columns: tuple[str, ...]
    # What an answer writes: each column with its SQL type, in the order of Row.values()
    # (which then gives the row's id).
    written: tuple[tuple[str, str], ...]
    json_columns: frozenset[str] = frozenset()

    @functools.cached_property
    def text_columns(self) -> tuple[int, ...]:
        """The positions of the text columns in `written`."""
        return tuple(i for i, (_name, sql_type) in enumerate(self.written) if sql_type == "text")

    @functools.cached_property
    def write_sql(self) -> str:
        """One UPDATE for a batch of answers, each column's values one array parameter (then
        the ids, then the claim): it writes a row only while the claim is still the writer's,
        and frees it. One statement, where a statement per answer cost PostgreSQL about twice
        the time per row."""
        names = [f'"{name}"' for name, _type in self.written]  # quoted: one is "values"
        assigned = ", ".join(f"{name} = v.{name}" for name in names)
        # %b: the arrays go in binary (psycopg writes a text array's escapes in Python, which
        # cost ten times the rest of a write).
        arrays = ", ".join(f"%b::{sql_type}[]" for _name, sql_type in self.written)
        return (
            f"UPDATE {self.table} AS t SET {assigned},"  # noqa: S608 - names are ours
            " claim = NULL, lease_until = NULL, updated_at = now()"
            f" FROM unnest({arrays}, %b::bigint[]) AS v({', '.join(names)}, id)"
            " WHERE t.id = v.id AND t.claim = %s"
        )


@dataclass
class Claimed:
    id: int
    attempts: int
    data: dict[str, Any]

    @property
    def sample_id(self) -> int:
        return int(self.data["sample_id"])

    @property
    def context(self) -> dict[str, Any]:
        return self.data.get("context") or {}


def claim(
    table: WorkTable,
    parent_id: int,
    first: int | None,
    last: int | None,
    token: uuid.UUID,
    max_claims: int,
    limit: int | None = None,
) -> tuple[list[Claimed], list[Claimed]]:
    """(claimed, exhausted): the parent's claimable items at positions first..last (or
    anywhere, in position order, at most `limit`), under `token` and a fresh lease."""
    lease = timezone.now() + timedelta(seconds=lease_seconds())
    where = f"{table.parent} = %s"
    params: list[Any] = [parent_id]
    if first is not None and last is not None:
        where += " AND position BETWEEN %s AND %s"
        params += [first, last]
    limit_sql = ""
    if limit is not None:
        limit_sql = " LIMIT %s"
        params.append(limit)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT id, attempts, {", ".join(f'"{c}"' for c in table.columns)} FROM {table.table}
            WHERE {where}
              AND (status = 'pending' OR (status = 'running' AND lease_until < now()))
            ORDER BY position{limit_sql}
            FOR UPDATE SKIP LOCKED
            """,  # noqa: S608 - the interpolated parts are fixed fragments, values are params
            params,
        )
        rows = [
            Claimed(
                row[0],
                row[1],
                {
                    name: from_jsonb(value) if name in table.json_columns else value
                    for name, value in zip(table.columns, row[2:], strict=True)
                },
            )
            for row in cursor
        ]
        claimed = [row for row in rows if row.attempts < max_claims]
        exhausted = [row for row in rows if row.attempts >= max_claims]
        if rows:
            cursor.execute(
                f"""
                UPDATE {table.table} SET status = 'running', claim = %s,
                    lease_until = %s, attempts = attempts + 1, started_at = NULL,
                    updated_at = now()
                WHERE id = ANY(%s)
                """,  # noqa: S608 - the table name is one of ours
                [token, lease, [row.id for row in rows]],
            )
    for row in rows:
        row.attempts += 1
    return claimed, exhausted


def from_jsonb(value: Any) -> Any:
    # Django's psycopg setup hands raw cursors jsonb as text (JSONField decodes it itself).
    return json.loads(value) if isinstance(value, str) else value


def mark_sent(cursor: Any, token: uuid.UUID, ids: Sequence[int], table: WorkTable) -> None:
    """Mark items a lane has sent (the page shows them "Running", the others it holds
    "Claimed"), where this execution still holds them and they are not yet marked."""
    cursor.execute(
        f"UPDATE {table.table} SET started_at = now() "  # noqa: S608 - the table name is ours
        "WHERE id = ANY(%b::bigint[]) AND claim = %s AND status = 'running' "
        "AND started_at IS NULL",
        [list(ids), token],
    )


def extend_leases(token: uuid.UUID, parent_id: int, table: WorkTable) -> str | None:
    """Extend this execution's leases; return the parent's status (None if it is gone). The
    parent narrows the update to its unsettled items (an index): the claim column has none, and
    every item of every run would be read at each heartbeat."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table.table} SET lease_until = now() + %s * interval '1 second' "  # noqa: S608
            f"WHERE {table.parent} = %s AND claim = %s AND status = 'running'",
            [lease_seconds(), parent_id, token],
        )
        cursor.execute(
            f"SELECT status FROM {table.parent_table} WHERE id = %s",  # noqa: S608
            [parent_id],
        )
        row = cursor.fetchone()
    return row[0] if row else None


def release(token: uuid.UUID, ids: Sequence[int], table: WorkTable) -> None:
    """Give unstarted items back: pending, and the attempt their claim counted undone."""
    if not ids:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table.table} SET status = 'pending', claim = NULL, "  # noqa: S608
            "lease_until = NULL, started_at = NULL, attempts = greatest(attempts - 1, 0) "
            "WHERE id = ANY(%s) AND claim = %s",
            [list(ids), token],
        )


def release_held(token: uuid.UUID, parent_id: int, table: WorkTable) -> int:
    """Give back every item an execution still holds (it broke off): pending, the attempt its
    claim counted undone. Returns how many."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table.table} SET status = 'pending', claim = NULL, "  # noqa: S608
            "lease_until = NULL, started_at = NULL, attempts = greatest(attempts - 1, 0) "
            f"WHERE {table.parent} = %s AND claim = %s AND status = 'running'",
            [parent_id, token],
        )
        return cursor.rowcount


def take_back_lost(table: WorkTable) -> list[tuple[int, int]]:
    """Items of running parents whose lease ran out (their worker was lost): back to pending,
    their claim count kept. Returns (parent id, position) of each.

    An item whose row is locked is skipped (SKIP LOCKED) and taken at a later sweep: a worker
    host whose link was cut inside a write leaves its session open, idle in a transaction that
    holds its rows' locks, until PostgreSQL finds its peer gone (config.db's keepalive and
    user timeout); waiting on those locks would stop every sweep, and every worker that
    sweeps, with it."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"""
            UPDATE {table.table} i SET status = 'pending', claim = NULL, lease_until = NULL,
                started_at = NULL
            WHERE i.id IN (
                SELECT l.id FROM {table.table} l JOIN {table.parent_table} p
                    ON l.{table.parent} = p.id
                WHERE p.status = 'running' AND l.status = 'running' AND l.lease_until < now()
                FOR UPDATE OF l SKIP LOCKED
            )
            RETURNING i.{table.parent}, i.position
            """  # noqa: S608 - the table and column names are ours
        )
        return list(cursor.fetchall())
