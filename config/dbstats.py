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

from collections.abc import Mapping

from django.db import connection, transaction
from psycopg import sql

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
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(table)))


def stats_after_bulk_write(written: Mapping[str, int]) -> None:
    """After a bulk write (`written`: table -> rows it added or rewrote), ANALYZE the tables
    the rule (above) names, once the transaction commits. Side effects: ANALYZE's lock
    (SHARE UPDATE EXCLUSIVE: reads and writes go on; another ANALYZE or VACUUM of the table
    waits) for the time it samples. Raises nothing of its own."""
    written = dict(written)
    transaction.on_commit(lambda: analyze(stale_tables(written)))
