"""Celery tasks of the evaluation app: thin wrappers that take ids and call a service. The
chunk tasks go through evaluation.lifecycle with their kind of work; the services queue them by
name (so that nothing below imports this module)."""

from __future__ import annotations

# A worker answers chunks with these clients and sums runs up with numpy: it loads them as it
# starts, not in its first chunk (the modules below import them only when they use them, to
# keep the other processes that set Django up lean).
import numpy  # noqa: F401
import openai  # noqa: F401
import redis.asyncio  # noqa: F401
from celery import shared_task

# First the app these shared tasks belong to: Django's start no longer imports it (config).
import config.celery  # noqa: F401
from evaluation import analyses, judging, lifecycle, services


@shared_task(acks_late=True, reject_on_worker_lost=True)
def run_chunk(run_id: int, first: int, last: int) -> dict[str, int]:
    return lifecycle.chunk(services.RUNS, run_id, first, last)


@shared_task(acks_late=True, reject_on_worker_lost=True)
def run_intervals(run_id: int) -> dict[str, list[float]]:
    return services.run_intervals_compute(run_id=run_id)


@shared_task(acks_late=True, reject_on_worker_lost=True)
def run_compare_counts(run_id: int) -> int:
    return services.run_compare_counts_ahead(run_id=run_id)


@shared_task(acks_late=True, reject_on_worker_lost=True)
def run_analyses_compute(analysis_id: int) -> str:
    # The row is gone when its run was deleted meanwhile: nothing to do.
    if not analyses.RunAnalysis.objects.filter(pk=analysis_id).exists():
        return "gone"
    return analyses.run_analyses_compute(analysis_id=analysis_id).status


@shared_task(acks_late=True, reject_on_worker_lost=True)
def judge_chunk(job_id: int, first: int, last: int) -> dict[str, int]:
    return lifecycle.chunk(judging.JUDGE_JOBS, job_id, first, last)
