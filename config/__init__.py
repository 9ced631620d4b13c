"""The Celery app is `config.celery_app` (and `celery -A config` finds it in config.celery).

It is imported on first use, not with this package: Celery and kombu are a third of a second of
start-up for every process that sets Django up (a management command, a web worker), and only
the ones that queue work need them. The modules that queue work import config.celery where they
do, and every tasks module imports it before declaring its shared tasks, so those are bound to
this app, never to Celery's default one.
"""

from typing import Any

__all__ = ("celery_app",)


def __getattr__(name: str) -> Any:
    if name == "celery_app":
        from config.celery import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
