"""Reading PostgreSQL's plans in tests: EXPLAIN's JSON, and the one shape of plan that turns a
read quadratic, a nested loop whose inner side is not looked up by an index (it reads the
whole of a table, or a materialised copy of one, for every outer row)."""

from __future__ import annotations

import contextlib
import json
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


def _looked_up(node: dict[str, Any]) -> bool:
    """Whether the inner side reads its rows through an index condition (a probe per outer
    row), not the whole of a relation."""
    while node["Node Type"] in PASS_THROUGH and len(node.get("Plans", [])) == 1:
        node = node["Plans"][0]
    if node["Node Type"] == "Bitmap Heap Scan":
        return all(_looked_up(child) for child in node.get("Plans", []))
    if node["Node Type"] == "Bitmap Index Scan":
        return "Index Cond" in node
    if node["Node Type"] == "BitmapAnd" or node["Node Type"] == "BitmapOr":
        return all(_looked_up(child) for child in node["Plans"])
    return node["Node Type"] in INDEXED and "Index Cond" in node


def quadratic_joins(plan: dict[str, Any]) -> list[str]:
    """Each nested loop whose inner side is not an index lookup, described (empty: none)."""
    found = []
    for node in nodes(plan):
        if node["Node Type"] != "Nested Loop":
            continue
        inner = next(c for c in node["Plans"] if c.get("Parent Relationship") == "Inner")
        if not _looked_up(inner):
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
