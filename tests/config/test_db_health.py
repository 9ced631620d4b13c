"""The database health check (config.db): a reused connection is checked at the start of each
request without a round trip while it is healthy, and one the server closed is still replaced
before a request uses it."""

from __future__ import annotations

import os
import resource
import select
import time
from typing import Any

import psycopg
import pytest
from django.conf import settings
from django.db import connection

pytestmark = pytest.mark.django_db(transaction=True)


def _count_statements(monkeypatch: Any) -> list[str]:
    """Every statement sent through the raw psycopg connection (Django's health check uses
    it directly, bypassing Django's query log)."""
    sent: list[str] = []
    raw = connection.connection
    real_cursor = raw.cursor

    def cursor(*args: Any, **kwargs: Any) -> Any:
        inner = real_cursor(*args, **kwargs)
        real_execute = inner.execute

        def execute(query: Any, *rest: Any, **more: Any) -> Any:
            sent.append(str(query))
            return real_execute(query, *rest, **more)

        inner.execute = execute
        return inner

    monkeypatch.setattr(raw, "cursor", cursor)
    return sent


def _new_request() -> None:
    # What Django does when a request starts with a reused connection and health checks on.
    connection.close_if_unusable_or_obsolete()
    connection.health_check_done = False


def test_the_settings_use_the_backend_with_health_checks_on() -> None:
    assert settings.DATABASES["default"]["ENGINE"] == "config.db"
    assert settings.DATABASES["default"]["CONN_HEALTH_CHECKS"] is True


def test_a_healthy_idle_connection_is_reused_without_a_round_trip(monkeypatch: Any) -> None:
    connection.ensure_connection()
    raw = connection.connection
    sent = _count_statements(monkeypatch)
    _new_request()
    with connection.cursor() as cursor:
        cursor.execute("SELECT 2")
        assert cursor.fetchone() == (2,)
    # only the request's own statement (Django's backend sends `SELECT 1` before it)
    assert sent == ["SELECT 2"]
    assert connection.connection is raw


def test_a_connection_numbered_over_1024_is_still_reused(monkeypatch: Any) -> None:
    # select() cannot watch a descriptor numbered 1024 or more: in a process with many files
    # open every connection read as unusable, and each request opened a new one.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"this process may open only {hard} files")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    connection.close()
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        connection.ensure_connection()
        raw = connection.connection
        assert raw.fileno() >= 1024
        sent = _count_statements(monkeypatch)
        _new_request()
        with connection.cursor() as cursor:
            cursor.execute("SELECT 2")
        assert sent == ["SELECT 2"]
        assert connection.connection is raw
    finally:
        connection.close()
        for descriptor in held:
            os.close(descriptor)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_the_stock_backend_would_have_sent_select_1(monkeypatch: Any) -> None:
    """The check above can fail: Django's own is_usable sends SELECT 1 on the same path."""
    from django.db.backends.postgresql.base import DatabaseWrapper as Stock

    connection.ensure_connection()
    sent = _count_statements(monkeypatch)
    from django.db import connections

    monkeypatch.setattr(type(connections["default"]), "is_usable", Stock.is_usable)
    _new_request()
    with connection.cursor() as cursor:
        cursor.execute("SELECT 2")
    assert sent == ["SELECT 1", "SELECT 2"]


def test_a_connection_the_server_closed_is_replaced_before_the_request_uses_it() -> None:
    connection.ensure_connection()
    raw = connection.connection
    pid = raw.info.backend_pid
    dsn = raw.info.dsn
    with psycopg.connect(dsn, autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])
    # the server's notice arrives on the idle connection's socket
    deadline = time.monotonic() + 5
    while not select.select([raw.fileno()], [], [], 0.05)[0]:
        assert time.monotonic() < deadline, "the terminated connection never turned readable"
    _new_request()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (new_pid,) = cursor.fetchone()
    assert new_pid != pid
    assert connection.connection is not raw


def test_a_closed_connection_is_unusable_at_once() -> None:
    connection.ensure_connection()
    connection.connection.close()
    assert connection.is_usable() is False
    connection.close()
