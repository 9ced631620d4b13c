"""Real Celery workers for tests: subprocesses on the test database and the test broker.

Tests that use them must be `django_db(transaction=True)`: a worker is another process and only
sees committed rows.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import redis
from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parent.parent
QUEUES = "default,inference,judging,reports"


def test_database_url() -> str:
    db = connection.settings_dict
    auth = quote(db["USER"] or "")
    if db.get("PASSWORD"):
        auth += ":" + quote(db["PASSWORD"])
    return f"postgres://{auth}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


def flush_test_broker() -> None:
    """Empty the test broker's Redis database (queues, slots, rate keys) between tests."""
    redis.from_url(settings.CELERY_BROKER_URL).flushdb()


def worker_env(**extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": test_database_url(),
        "DJANGO_SETTINGS_MODULE": "config.settings_test",
        "DEBUG": "1",
        "PYTHONUNBUFFERED": "1",
        **extra,
    }


class Worker:
    def __init__(self, proc: subprocess.Popen[bytes], log: Path) -> None:
        self.proc = proc
        self.log = log

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL the whole worker (main process and pool children), as a crash would."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.kill()


def _celery(tmp_path: Path, name: str, *args: str, **env: str) -> Worker:
    """`celery -A config <args>` on the test database and broker, in its own process group
    (Worker.kill ends all of it), its output in a log under tmp_path."""
    log = tmp_path / f"{name}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", *args],
            cwd=ROOT,
            env=worker_env(**env),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return Worker(proc, log)


@contextlib.contextmanager
def celery_worker(
    tmp_path: Path, *, concurrency: int = 2, queues: str = QUEUES, **env: str
) -> Iterator[Worker]:
    name = f"test-{uuid.uuid4().hex[:8]}"
    worker = _celery(
        tmp_path,
        name,
        "worker",
        "-Q",
        queues,
        "--concurrency",
        str(concurrency),
        "-n",
        f"{name}@%h",
        "-l",
        "info",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
        **env,
    )
    try:
        deadline = time.monotonic() + 60
        while " ready." not in worker.text():
            if worker.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the worker did not start:\n{worker.text()[-3000:]}")
            time.sleep(0.1)
        yield worker
    finally:
        worker.stop()


@contextlib.contextmanager
def celery_beat(tmp_path: Path) -> Iterator[Worker]:
    """Beat on the test broker, as the Procfile runs it: it sends the sweep of lost background
    work (config.background) every RECOVERY_INTERVAL_SECONDS (2 s under the test settings)."""
    name = f"beat-{uuid.uuid4().hex[:8]}"
    beat = _celery(tmp_path, name, "beat", "-s", str(tmp_path / f"{name}.schedule"), "-l", "info")
    try:
        yield beat
    finally:
        beat.stop()
