"""The statements a connection sends again and again are prepared (config.settings: bound on the
server, psycopg's prepare_threshold): PostgreSQL parses and plans each once per connection
instead of at every request, as the connections persist (CONN_MAX_AGE). Measured by
perf/request_cost.py: about half of PostgreSQL's CPU per studio request went to that."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.db import connection

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


def prepared(fragment: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s",
            [f"%{fragment}%"],
        )
        return int(cursor.fetchone()[0])


def test_a_statement_sent_again_is_prepared_once() -> None:
    user = User.objects.create(username="prepared-probe")
    for _ in range(3):
        assert User.objects.get(pk=user.pk).username == "prepared-probe"
    assert prepared('FROM "auth_user" WHERE "auth_user"."id"') == 0  # not yet: 3 times
    for _ in range(10):
        assert User.objects.get(pk=user.pk).username == "prepared-probe"
    # once, however often it is sent after
    assert prepared('FROM "auth_user" WHERE "auth_user"."id"') == 1


def test_raw_statements_with_parameters_still_run() -> None:
    # What binding on the server changes: parameters typed by their Python values.
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::int + 1, %s || 'b', %s = ANY(%s)", [1, "a", 2, [1, 2]])
        assert cursor.fetchone() == (2, "ab", True)


def test_prepared_statements_can_be_turned_off_for_a_pooler() -> None:
    code = (
        "import django; django.setup(); from django.conf import settings; "
        "o = settings.DATABASES['default'].get('OPTIONS', {}); "
        "print(o.get('server_side_binding'), o.get('prepare_threshold'))"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_PREPARED_STATEMENTS": "0",
    }
    found = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout.split() == ["None", "None"]
