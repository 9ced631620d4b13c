"""The planner's statistics after a bulk write: every path that writes rows by the thousand
(a benchmark's import, a run's or a judge job's launch and finish, imported predictions and
verdicts, a campaign's items) calls `stats_after_bulk_write` with the tables it filled, so
that the next read of those rows is planned from statistics that know them.

Why: PostgreSQL plans from pg_class.reltuples/relpages (the live rows and pages the last
ANALYZE or VACUUM saw; the planner scales the density to the table's pages now) and from
pg_statistic's per-column values. Autovacuum refreshes them a minute or more later, and not
at all where it is off. Until then a table analysed while it held few live rows in many
pages (after a large DELETE) keeps a density near zero, and a run's id that the last ANALYZE
never saw is estimated at one row: a join of the run's million predictions with their
samples is planned for one row each, as a nested loop whose inner side reads the whole
other table for every row (docs/performance.md, "Plans after a bulk write").

The rule, bounded in cost: a table is analysed when the rows just written are at least
ANALYZE_MIN_ROWS and more than ANALYZE_FRACTION of the live rows its statistics know
(reltuples; a table never analysed knows none). So a table of N rows is analysed at most
about log(N / ANALYZE_MIN_ROWS) / log(1 + ANALYZE_FRACTION) times as it grows by writes of
that size, each ANALYZE reading a sample of at most 300 x default_statistics_target rows
(30,000; under a second at a million rows) whatever the table's size. Below
ANALYZE_MIN_ROWS a wrong plan costs milliseconds, and autovacuum catches up.

The ANALYZE runs once the writing transaction has committed (at once outside one): inside
it, it would hold its lock until the commit (serialising two imports into one table) and its
statistics would be seen by no one else before then anyway.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from django.db import DatabaseError, connection, transaction
from psycopg import sql

log = logging.getLogger(__name__)

ANALYZE_MIN_ROWS = 1000
ANALYZE_FRACTION = 0.1


def stale_tables(written: Mapping[str, int]) -> list[str]:
    """The tables of `written` (table -> rows just written) whose statistics the rule says to
    refresh, in the order given."""
    wanted = {table: rows for table, rows in written.items() if rows >= ANALYZE_MIN_ROWS}
    if not wanted:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname, reltuples FROM pg_class"
            " WHERE relname = ANY(%s) AND relnamespace = 'public'::regnamespace",
            [list(wanted)],
        )
        known = {name: max(float(tuples), 0.0) for name, tuples in cursor.fetchall()}
    return [
        table for table, rows in wanted.items() if rows > ANALYZE_FRACTION * known.get(table, 0)
    ]


def analyze(tables: list[str]) -> None:
    """ANALYZE each table. A failure (a lock not granted, a connection lost) is logged, not
    raised: the write it follows has committed, and autovacuum remains behind it."""
    try:
        with connection.cursor() as cursor:
            for table in tables:
                cursor.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(table)))
    except DatabaseError:
        log.warning("ANALYZE of %s after a bulk write failed", ", ".join(tables), exc_info=True)


def stats_after_bulk_write(written: Mapping[str, int]) -> None:
    """After a bulk write (`written`: table -> rows it added or rewrote), ANALYZE the tables
    the rule (above) names, once the transaction commits. Side effects: ANALYZE's lock
    (SHARE UPDATE EXCLUSIVE: reads and writes go on; another ANALYZE or VACUUM of the table
    waits) for the time it samples. Raises nothing: a failed ANALYZE is logged."""
    written = dict(written)
    transaction.on_commit(lambda: analyze(stale_tables(written)))


def by_primary_key(table: str, columns: str, key: str, alias: str, *, outer: bool = False) -> str:
    """A join of `table` (its `columns`, as `alias`) to the row its primary key `key` names,
    written so that no statistics can plan it quadratic: a LATERAL subquery kept apart by
    OFFSET 0, which the planner cannot turn into a join it plans from the two tables'
    estimates (stale ones made such a join a nested loop whose inner side read the whole
    table for every outer row). Alone, the subquery's cheapest path is the probe of the
    primary key whatever the estimates (a scan costs the table's real pages): one probe per
    outer row. `outer`: a LEFT JOIN (no row when `key` is NULL or names none). The names are
    the caller's constants, never input."""
    join = "LEFT JOIN LATERAL" if outer else "CROSS JOIN LATERAL"
    on = " ON true" if outer else ""
    subquery = f"SELECT {columns} FROM {table} WHERE id = {key} OFFSET 0"  # noqa: S608
    return f"{join} ({subquery}) {alias}{on}"
