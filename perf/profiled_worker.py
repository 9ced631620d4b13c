"""A Celery app for profiling (perf/eval_cpu.py --profile): the project's app, with every task
run under cProfile in the worker's pool process, its stats dumped after each task to
$PERF_PROFILE_DIR/worker-<pid>.prof (the database thread's queries are not in it: cProfile sees
the task's thread only)."""

from __future__ import annotations

import cProfile
import os
from typing import Any

from celery.signals import task_postrun, task_prerun

from config.celery import app

__all__ = ["app"]

PROFILE = cProfile.Profile()


@task_prerun.connect
def _start(**_: Any) -> None:
    PROFILE.enable()


@task_postrun.connect
def _stop(**_: Any) -> None:
    PROFILE.disable()
    PROFILE.dump_stats(f"{os.environ['PERF_PROFILE_DIR']}/worker-{os.getpid()}.prof")
