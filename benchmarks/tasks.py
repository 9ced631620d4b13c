"""Celery tasks of the benchmarks app: thin wrappers that take ids and call a service."""

from __future__ import annotations

from celery import shared_task

# First the app these shared tasks belong to: Django's start no longer imports it (config).
import config.celery  # noqa: F401
from benchmarks import import_jobs


@shared_task(acks_late=True, reject_on_worker_lost=True)
def import_job_run(job_id: int) -> str:
    return import_jobs.import_job_run(job_id=job_id)
