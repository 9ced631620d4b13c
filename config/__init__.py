"""The Celery app is `config.celery_app` (and `celery -A config` finds it in config.celery).

It is imported on first use, not with this package: Celery and kombu are a third of a second of
start-up for every process that sets Django up (a management command, a web worker), and only
the ones that queue work need them. The modules that queue work import config.celery where they
do, and every tasks module imports it before declaring its shared tasks, so those are bound to
this app, never to Celery's default one.
"""

import os
from typing import Any

__all__ = ("celery_app",)

if not os.environ.get("DATABASE_URL") or not os.environ.get("REDIS_URL"):
    # Any process of the project on a dev machine (manage.py, a web worker, a Celery worker,
    # pytest) uses the embedded stack: importing this package starts what is missing, as the
    # Celery module did when this package still imported it (config.devstack.ensure_env).
    from config.devstack import ensure_env

    ensure_env()


def __getattr__(name: str) -> Any:
    if name == "celery_app":
        # On first use: Celery's start-up is not paid by every process (the docstring).
        from config.celery import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
