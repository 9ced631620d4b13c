"""Queueing work: the one way every module sends a Celery task (by name, so that services never
import tasks modules).

Redis is needed to queue work, and only for that (annotating depends on PostgreSQL alone). A
service that saves work for a worker calls `send_after_commit` inside the transaction that
writes the work's rows: the broker must answer a PING within REDIS_SOCKET_TIMEOUT first, or
`QueueUnavailable` (503) is raised there, which rolls the transaction back, so nothing is saved
that no worker would hear of and the person who asked is told to try again. The task itself is
sent once the transaction commits (a worker must find the rows), with the broker's own short
timeouts (CELERY_BROKER_TRANSPORT_OPTIONS); should the broker stop answering in between, the
failure is logged, not raised after the commit.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.db import transaction

from config.errors import ApplicationError

log = logging.getLogger(__name__)

# One task to send: its registered name, its arguments and the queue (None: the task routes').
Task = tuple[str, Sequence[Any], str | None]


class QueueUnavailable(ApplicationError):
    status = 503
    code = "queue_unavailable"


@functools.cache
def _broker(url: str) -> Any:
    # On first use, with the app below: only the processes that queue work load the clients.
    import redis

    timeout = float(getattr(settings, "REDIS_SOCKET_TIMEOUT", 0.5))
    return redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)


def broker_check() -> None:
    """Raise QueueUnavailable unless the broker answers now."""
    # On first use (see _broker).
    from redis.exceptions import RedisError

    try:
        _broker(settings.CELERY_BROKER_URL).ping()
    except RedisError as error:
        log.warning("the broker does not answer (%s): work refused", error)
        raise QueueUnavailable(
            "The work queue (Redis) does not answer, so nothing was started or saved. "
            "Try again in a moment; if it persists, the queue's server needs looking at.",
            field="queue",
        ) from None


def send(name: str, args: Sequence[Any] = (), queue: str | None = None, **options: Any) -> None:
    """Send one task now (a worker re-queueing work; after a commit)."""
    # On first use: Celery's start-up is paid only by processes that queue work (config/__init__).
    from config.celery import app

    app.send_task(name, args=list(args), queue=queue, **options)


def send_after_commit(*tasks: Task) -> None:
    """Inside the transaction that saves work: check the broker answers (QueueUnavailable rolls
    the transaction back), then send the tasks once it commits."""
    broker_check()
    transaction.on_commit(functools.partial(_send_all, tasks))


def _send_all(tasks: Sequence[Task]) -> None:
    for name, args, queue in tasks:
        try:
            send(name, args, queue)
        except Exception as error:  # kombu's OperationalError, a socket error: logged
            log.error("task %s%s was saved but not queued: %s", name, tuple(args), error)
