"""Reading PostgreSQL's plans in tests: EXPLAIN's JSON, and the one shape of plan that turns a
read quadratic, a nested loop whose inner side is not looked up by an index on the outer row (it
reads the whole of a table, a materialised copy of one, or all of a run's rows, for every outer
row)."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from typing import Any

from django.db import connection
from psycopg import sql

# Nodes that pass their one child's rows on: the inner side is what is under them.
PASS_THROUGH = {"Subquery Scan", "Limit", "Memoize", "Result", "Gather", "Gather Merge"}
INDEXED = {"Index Scan", "Index Only Scan", "Bitmap Heap Scan"}


def explain(query: str | sql.Composable, params: Any = None) -> dict[str, Any]:
    """The plan PostgreSQL chooses for the query now (EXPLAIN (FORMAT JSON): not run)."""
    with connection.cursor() as cursor:
        text = query if isinstance(query, str) else query.as_string(cursor.cursor.connection)
        cursor.execute("EXPLAIN (FORMAT JSON) " + text, params)
        found = cursor.fetchone()[0]
    return (json.loads(found) if isinstance(found, str) else found)[0]["Plan"]


def nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", []):
        yield from nodes(child)


# A column of another relation in an index condition: EXPLAIN names the scanned relation's own
# columns bare and the outer row's by their relation ("(id = p.sample_id)"). Quoted constants
# are left out first.
OUTER_COLUMN = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*\b")
QUOTED = re.compile(r"'(?:[^']|'')*'")


def _probes(node: dict[str, Any]) -> bool:
    """Whether an index scan's condition takes a value from the outer row: one probe per outer
    row. An index condition of constants only ("run_id = 2") reads the same rows, all of them,
    for every outer row."""
    return bool(OUTER_COLUMN.search(QUOTED.sub("", node.get("Index Cond", ""))))


def _looked_up(node: dict[str, Any]) -> bool:
    """Whether the inner side reads its rows through an index condition on the outer row (a
    probe per outer row), not the whole of a relation, or all of a run's rows, every time."""
    while node["Node Type"] in PASS_THROUGH and len(node.get("Plans", [])) == 1:
        node = node["Plans"][0]
    if node["Node Type"] == "Bitmap Heap Scan":
        return all(_looked_up(child) for child in node.get("Plans", []))
    if node["Node Type"] == "Bitmap Index Scan":
        return _probes(node)
    if node["Node Type"] == "BitmapAnd":  # one probing index narrows the whole
        return any(_looked_up(child) for child in node["Plans"])
    if node["Node Type"] == "BitmapOr":
        return all(_looked_up(child) for child in node["Plans"])
    return node["Node Type"] in INDEXED and _probes(node)


# A relation this small is read whole as cheaply as probed: the planner rightly scans it (its
# real pages are what a scan costs, whatever the statistics say of its rows).
SMALL_PAGES = 8


def _scanned_pages(node: dict[str, Any]) -> int:
    """The real size in pages of the relations a side reads (0 when it reads none)."""
    names = {n["Relation Name"] for n in nodes(node) if "Relation Name" in n}
    if not names:
        return 0
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT max(pg_relation_size(c.oid) / current_setting('block_size')::int)"
            " FROM pg_class c WHERE c.relname = ANY(%s)",
            [sorted(names)],
        )
        return int(cursor.fetchone()[0] or 0)


def quadratic_joins(plan: dict[str, Any]) -> list[str]:
    """Each nested loop whose inner side is not an index lookup, described (empty: none); an
    inner side that reads only relations of SMALL_PAGES pages or fewer is let be."""
    found = []
    for node in nodes(plan):
        if node["Node Type"] != "Nested Loop":
            continue
        inner = next(c for c in node["Plans"] if c.get("Parent Relationship") == "Inner")
        if not _looked_up(inner) and _scanned_pages(inner) > SMALL_PAGES:
            found.append(
                f"Nested Loop (join filter {node.get('Join Filter', '-')}) over inner"
                f" {inner['Node Type']} {inner.get('Relation Name') or inner.get('Index Name', '')}"
                f" (estimated {inner.get('Plan Rows')} rows)"
            )
    return found


@contextlib.contextmanager
def worst_choices() -> Iterator[None]:
    """The planner without hash and merge joins, for the rest of the block: a nested loop is
    then its only join, the shape that goes quadratic when its inner side is a scan."""
    with connection.cursor() as cursor:
        cursor.execute("SET enable_hashjoin = off")
        cursor.execute("SET enable_mergejoin = off")
        try:
            yield
        finally:
            cursor.execute("RESET enable_hashjoin")
            cursor.execute("RESET enable_mergejoin")


# Rows written and deleted, in the tables the hot reads join, for leave_stale_statistics.
_DELETED = {
    "benchmarks_sample": (
        "INSERT INTO benchmarks_sample (benchmark_id, split, external_id, kind, input,"
        " candidate_tools, metadata, revision, created_at, updated_at)"
        " SELECT %(benchmark)s, 'default', 'old' || g, 'query', '{\"query\": \"q\"}', '[]', '{}',"
        " 0, now(), now() FROM generate_series(1, %(rows)s) g",
        "DELETE FROM benchmarks_sample"
        " WHERE benchmark_id = %(benchmark)s AND external_id <> 'old1'",
    ),
    "evaluation_prediction": (
        "INSERT INTO evaluation_prediction (run_id, sample_id, repeat, position, status,"
        " attempts, context, output, trace, note, scores, error, cached, usage, updated_at)"
        " SELECT %(run)s, s.id, g, g, 'done', 1, '{}', 'x', '[]', '', '{}', '', false, '{}',"
        " now() FROM generate_series(0, %(rows)s - 1) g, benchmarks_sample s"
        " WHERE s.benchmark_id = %(benchmark)s AND s.external_id = 'old1'",
        "DELETE FROM evaluation_prediction WHERE run_id = %(run)s AND position > 0",
    ),
    "benchmarks_tool": (
        "INSERT INTO benchmarks_tool (benchmark_id, name, description, parameters, returns,"
        " category, raw, created_at, updated_at) SELECT %(benchmark)s, 'old' || g, 'd', '{}',"
        " '{}', '', '{}', now(), now() FROM generate_series(1, %(rows)s) g",
        "DELETE FROM benchmarks_tool WHERE benchmark_id = %(benchmark)s",
    ),
    "auth_user": (
        "INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email,"
        " is_staff, is_active, date_joined) SELECT '!', false, 'deleted-' || g, '', '', '',"
        " false, false, now() FROM generate_series(1, %(rows)s) g",
        "DELETE FROM auth_user WHERE username LIKE 'deleted-%%'",
    ),
}


def leave_stale_statistics(rows: int, *, analyze: tuple[str, ...] = ()) -> None:
    """Statistics as a large delete leaves them: `rows` samples, predictions, tools and users
    written and deleted (one sample and one prediction kept), then these tables and `analyze`
    analysed, as autovacuum would: each table's density near zero, its pages real."""
    from benchmarks.models import Benchmark
    from evaluation.models import Run

    old = Benchmark.objects.create(name="deleted", suite="generic")
    run = Run.objects.create(benchmark=old, task="answer", split="default", status="done")
    params = {"benchmark": old.pk, "run": run.pk, "rows": rows}
    with connection.cursor() as cursor:
        for insert, _delete in _DELETED.values():
            cursor.execute(insert, params)
        for _insert, delete in _DELETED.values():
            cursor.execute(delete, params)
        for table in [*_DELETED, *analyze]:
            cursor.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(table)))
