"""The sweep of lost background work as a Celery task, and a worker's sweep as it starts
(config.background.recover does the work; beat runs the task every RECOVERY_INTERVAL_SECONDS).
The worker imports this module with the app (config.celery's `imports`)."""

from typing import Any

from celery.signals import worker_ready

from config import background, queue
from config.celery import app


@app.task(name=background.SWEEP_TASK, acks_late=True)
def recover_lost_work() -> dict[str, int]:
    return background.recover()


@worker_ready.connect
def recover_after_start(**_: Any) -> None:
    """A worker that starts may be replacing one that was killed: once the dead worker's
    leases have run out, take back what it held (beat repeats this in any case)."""
    queue.send(background.SWEEP_TASK, countdown=background.lease_seconds() + 1)
