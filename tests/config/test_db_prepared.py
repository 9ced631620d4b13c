"""Prepared statements are a choice (config.settings, DATABASE_PREPARED_STATEMENTS=1: parameters
bound on the server, psycopg's prepare_threshold), off by default: PostgreSQL then parses and
plans a statement a connection sends again once per connection (perf/request_cost.py measured
about half of PostgreSQL's CPU per studio request going to that), but a statement bound on the
server takes at most 65,535 parameters, and Django 5.2 does not split a longer `__in` list."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.db import connections

from benchmarks.models import Sample

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


def database_options(**env: str) -> list[str]:
    code = (
        "import django; django.setup(); from django.conf import settings; "
        "o = settings.DATABASES['default'].get('OPTIONS', {}); "
        "print(o.get('server_side_binding'), o.get('prepare_threshold'))"
    )
    variables = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    variables.pop("DATABASE_PREPARED_STATEMENTS", None)
    variables.update(env)
    found = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=variables, capture_output=True, text=True
    )
    assert found.returncode == 0, found.stderr
    return found.stdout.split()


def test_statements_are_bound_on_the_client_unless_asked() -> None:
    assert database_options() == ["None", "None"]
    assert database_options(DATABASE_PREPARED_STATEMENTS="0") == ["None", "None"]
    assert database_options(DATABASE_PREPARED_STATEMENTS="1") == ["True", "5"]


def test_by_default_a_list_longer_than_the_protocols_parameters_is_read() -> None:
    # 70,000 ids: more than a statement bound on the server may carry (65,535).
    assert Sample.objects.filter(id__in=range(1, 70_001)).count() == 0


def prepared_connection() -> Any:
    """A second connection to the test database as DATABASE_PREPARED_STATEMENTS=1 makes it."""
    default = connections["default"]
    settings = {
        **default.settings_dict,
        "OPTIONS": {
            **default.settings_dict.get("OPTIONS", {}),
            "server_side_binding": True,
            "prepare_threshold": 5,
        },
    }
    return default.__class__(settings, alias="prepared-probe")


def prepared_count(cursor: Any, fragment: str) -> int:
    cursor.execute(
        "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s", [f"%{fragment}%"]
    )
    return int(cursor.fetchone()[0])


def test_when_asked_a_statement_sent_again_is_prepared_once() -> None:
    probe = prepared_connection()
    try:
        with probe.cursor() as cursor:
            statement = "SELECT %s::int + 1 AS prepared_probe"
            for n in range(3):
                cursor.execute(statement, [n])
                assert cursor.fetchone() == (n + 1,)
            assert prepared_count(cursor, "prepared_probe") == 0  # not yet: 3 times
            for n in range(10):
                cursor.execute(statement, [n])
                assert cursor.fetchone() == (n + 1,)
            # once, however often it is sent after
            assert prepared_count(cursor, "prepared_probe") == 1
            # what binding on the server changes: parameters typed by their Python values
            cursor.execute("SELECT %s::int + 1, %s || 'b', %s = ANY(%s)", [1, "a", 2, [1, 2]])
            assert cursor.fetchone() == (2, "ab", True)
    finally:
        probe.close()
