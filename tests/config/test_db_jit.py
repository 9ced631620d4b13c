"""Every connection runs without PostgreSQL's JIT (config.db): the planner's row estimates for
a function in FROM (jsonb_object_keys, jsonb_each: 100 rows a call) or for CASE-heavy cells
pass jit_above_cost on a few thousand rows, and JIT then compiles for longer than the query
runs (363 ms of the 455 ms the agreement report's metric catalogue took on 20,000 predictions;
4 s of the 5 s of a labels CSV)."""

from __future__ import annotations

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db


def test_a_connection_has_jit_off() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SHOW jit")
        assert cursor.fetchone()[0] == "off"


def test_an_expensive_looking_plan_is_not_compiled() -> None:
    # A plan whose estimated cost is far over jit_above_cost (100,000 by default): a function
    # scan over a hundred thousand rows, each estimated at a hundred.
    with connection.cursor() as cursor:
        cursor.execute(
            "EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*) FROM generate_series(1, 100000) g "
            "CROSS JOIN LATERAL jsonb_object_keys(jsonb_build_object('k', g)) AS k(name)"
        )
        (plan,) = cursor.fetchone()[0]
    assert plan["Plan"]["Total Cost"] > 100_000
    assert "JIT" not in plan
