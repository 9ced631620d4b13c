"""The Celery app. Settings come from Django's (namespace CELERY_)."""

import os

from celery import Celery
from kombu import Queue

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

# A worker started by hand on a dev machine uses the same embedded stack as manage.py: the
# `config` package, imported before this module, started what was missing (ensure_env).

app = Celery("toolevals")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.task_queues = [Queue(name) for name in ("default", "inference", "judging", "reports")]
app.autodiscover_tasks()
