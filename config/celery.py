"""The Celery app. Settings come from Django's (namespace CELERY_)."""

import gc
import os
from typing import Any

from celery import Celery
from celery.signals import task_postrun, task_prerun, worker_process_init
from django.db import close_old_connections as close_old
from kombu import Queue

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

# A worker started by hand on a dev machine uses the same embedded stack as manage.py: the
# `config` package, imported before this module, started what was missing (ensure_env).

app = Celery("toolevals")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.task_queues = [Queue(name) for name in ("default", "inference", "judging", "reports")]
app.autodiscover_tasks()


@task_prerun.connect
@task_postrun.connect
def close_old_connections(sender: Any = None, **_: Any) -> None:
    """Before and after each task, what Django does around each request: close the connections
    older than CONN_MAX_AGE or broken, keep the others (settings.CELERY_DB_REUSE_MAX stops
    Celery's fixup from closing every connection after every task). Not for a task run eagerly,
    in its caller's process and maybe its transaction (Celery's fixup leaves those too)."""

    if not getattr(getattr(sender, "request", None), "is_eager", False):
        close_old()


@worker_process_init.connect
def freeze_inherited_objects(**_: Any) -> None:
    """A pool process starts with every module a worker loads (Django, the suites, numpy, the
    clients): moved to the permanent generation, they are no longer walked by the collections
    that each answer's short-lived objects trigger."""
    gc.freeze()
