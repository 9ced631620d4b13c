"""A worker process between tasks (config.celery): it keeps its database connection from one
task to the next as a web process does between requests (closed when it is older than
CONN_MAX_AGE or broken), and the objects it was born with are out of the garbage collector's
way."""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator

import pytest
from celery.fixups.django import DjangoWorkerFixup
from celery.signals import task_postrun, task_prerun, worker_process_init
from django.db import connection

from config.celery import app

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def chunk_task() -> object:
    import evaluation.tasks  # noqa: F401 - registers the tasks

    return app.tasks["evaluation.tasks.run_chunk"]


def _task_ends_and_next_starts(task: object) -> None:
    """What a worker does around a task: Celery's Django fixup, then the signals' receivers."""
    fixup = DjangoWorkerFixup(app)
    task_prerun.send(sender=task, task_id="1", task=task, args=(), kwargs={})
    fixup.on_task_prerun(sender=task)
    fixup.on_task_postrun(sender=task)
    task_postrun.send(sender=task, task_id="1", task=task, args=(), kwargs={}, retval=None)
    task_prerun.send(sender=task, task_id="2", task=task, args=(), kwargs={})
    fixup.on_task_prerun(sender=task)


def test_the_next_task_uses_the_same_database_connection(chunk_task: object) -> None:
    # given a task that used the database
    connection.ensure_connection()
    raw = connection.connection
    # when it ends and the next starts
    _task_ends_and_next_starts(chunk_task)
    # then the connection is the same (no new backend per task: each is a fork and catalog
    # caches on the server, and a connect in the worker)
    assert connection.connection is raw


def test_a_connection_past_its_max_age_is_closed_before_the_next_task(chunk_task: object) -> None:
    # given a connection older than CONN_MAX_AGE
    connection.ensure_connection()
    connection.close_at = time.monotonic() - 1
    # when a task ends and the next starts
    _task_ends_and_next_starts(chunk_task)
    # then it was closed, and the next query opens a new one
    assert connection.connection is None
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


@pytest.mark.usefixtures("unfrozen")
def test_a_pool_process_freezes_what_it_was_forked_with() -> None:
    # when a pool process starts
    worker_process_init.send(sender=None)
    # then the objects it inherited (Django, the suites, the clients' modules) are in the
    # permanent generation: the collections its answers' garbage triggers no longer walk them
    assert gc.get_freeze_count() > 0


def test_a_task_run_eagerly_leaves_the_callers_connection_alone(chunk_task: object) -> None:
    # given a caller's connection past its max age (a shell, a view inside a transaction)
    connection.ensure_connection()
    raw = connection.connection
    connection.close_at = time.monotonic() - 1
    # when a task runs in the caller's process (eagerly), as Celery's fixup also leaves it
    eager = type("Request", (), {"is_eager": True})()
    sender = type("Task", (), {"request": eager})()
    task_prerun.send(sender=sender, task_id="1", task=sender, args=(), kwargs={})
    task_postrun.send(sender=sender, task_id="1", task=sender, args=(), kwargs={}, retval=None)
    # then the caller's connection is the caller's business
    assert connection.connection is raw
