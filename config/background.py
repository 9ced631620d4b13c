"""Background work and its recovery: one rule for every kind of work a Celery worker does.

The rule. Whatever a worker is working on holds a lease in the database (`lease_until`), which
the execution holding it renews while it works (a heartbeat); a worker that dies, however it
dies, stops renewing it. A sweep (`recover`) takes back everything held under a lease that ran
out: it is queued again, once (the update that takes it back decides which sweep does), or,
when it has been started too often, failed with the reason; what a failed row leaves behind (an
import's uploaded files) is removed. Each worker runs the sweep as it starts (once the leases of
a worker it may be replacing have run out) and beat runs it every RECOVERY_INTERVAL_SECONDS, so
no row stays running, or waiting for a message the broker lost, after its worker is gone. The
broker's own redelivery (acks_late) only adds deliveries: a task that finds its row taken, done
or held by a live lease does nothing.

Each kind of work registers here (`register`), where it is declared, so that the sweep knows it;
every Celery task that does work belongs to a registered kind, which a test checks by walking
Celery's task registry (tests/config/test_background.py), so a kind added later cannot be left
out. Two shapes of work register:

- items under a parent (a run's predictions, a judge job's judgments): evaluation.lifecycle's
  WorkKind, whose items hold the leases (evaluation.work.locks) and whose sweep also finishes
  a parent whose items are all settled and queues again a parent whose pending items no
  execution has touched for a lease;
- one row done by one task (an import job, an agreement report, a run's analyses, a run's
  intervals): `RowWork` below. The row says whether it is waiting for a worker (with a lease
  for the queue: the message may be lost) or running, how often it was started (`attempts`),
  and why it failed (`error`). A RowWork that is a result computed from inputs (a report,
  analyses, an import) is a `config.computed.Computed`, which adds how it is asked for and
  computed.

A config utility: it imports no app (the kinds bring their models).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connections, models, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.module_loading import autodiscover_modules

from config.queue import send, send_after_commit

log = logging.getLogger(__name__)

# The Celery task that runs the sweep (config.recovery), named here for beat's schedule.
SWEEP_TASK = "config.recovery.recover_lost_work"


def lease_seconds() -> float:
    """How long a lease lasts without a heartbeat (EVALUATION_LEASE_SECONDS): every kind's."""
    return float(getattr(settings, "EVALUATION_LEASE_SECONDS", 60))


def recovery_interval() -> float:
    """How often beat runs the sweep (RECOVERY_INTERVAL_SECONDS)."""
    return float(getattr(settings, "RECOVERY_INTERVAL_SECONDS", 60))


@dataclass(frozen=True)
class Kind:
    """A kind of background work as the sweep sees it: its name, the Celery tasks that do it
    (by name), and its part of the sweep (what it took back, failed or cleaned, by count)."""

    name: str
    tasks: tuple[str, ...]
    recover: Callable[[], Mapping[str, int]]
    # The kind itself, where it is one row done by one task.
    work: RowWork | None = None


_KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> Kind:
    """Make a kind known to the sweep (again under the same name: replaced)."""
    _KINDS[kind.name] = kind
    return kind


def kinds() -> list[Kind]:
    """Every registered kind, once every app's tasks module (which imports the modules that
    declare the kinds) is imported."""

    autodiscover_modules("tasks")
    return list(_KINDS.values())


def recover() -> dict[str, int]:
    """The sweep: every kind takes back what its lost workers held. A kind whose sweep fails
    is logged and the others go on. Safe to run any time, anywhere, concurrently."""
    report: dict[str, int] = {}
    for kind in kinds():
        try:
            for key, count in kind.recover().items():
                if count:
                    report[key] = report.get(key, 0) + count
        except Exception:
            log.exception("the recovery of %s failed", kind.name)
    if report:
        log.warning("recovered lost work: %s", report)
    return report


# --- one row done by one task -------------------------------------------------------------------


def _stopped(exc: BaseException) -> str:
    return f"stopped by an error: {type(exc).__name__}: {exc}"[:2000]


@dataclass(frozen=True, eq=False)
class RowWork:
    """A kind of work done on one row by one task (args: the row's id), on one queue.

    The row's fields (names after `prefix`): `status` (`waiting` while queued, `running` while
    a worker holds it, `failed`, or any other value the work sets when it ends), `lease_until`,
    `attempts` (how often a worker started it) and `error`. A row whose worker was lost
    `max_attempts` times is failed with `lost(attempts)`; `failed_fields()` are set with any
    failure and `waiting_fields` whenever it waits again, and `cleanup(row)` removes what a
    failed row leaves behind. `sweep_extra()` is more of the kind's sweep (files no row needs
    any more), by count."""

    name: str
    model: type[models.Model]
    task: str
    queue: str
    waiting: str
    lost: Callable[[int], str]
    prefix: str = ""
    running: str = "running"
    failed: str = "failed"
    max_attempts: int = 3
    failed_fields: Callable[[], Mapping[str, Any]] = field(default=lambda: {})
    waiting_fields: Mapping[str, Any] = field(default_factory=dict)
    cleanup: Callable[[Any], None] | None = None
    sweep_extra: Callable[[], Mapping[str, int]] | None = None

    def __post_init__(self) -> None:
        register(Kind(self.name, (self.task,), self.recover, self))

    # the row's fields
    @property
    def status(self) -> str:
        return f"{self.prefix}status"

    @property
    def lease(self) -> str:
        return f"{self.prefix}lease_until"

    @property
    def attempts(self) -> str:
        return f"{self.prefix}attempts"

    @property
    def error(self) -> str:
        return f"{self.prefix}error"

    def _rows(self) -> Any:
        return self.model._default_manager

    def _expired(self, now: Any) -> Q:
        # A lease never set (a row from before leases, or queued by hand) counts as run out.
        return Q(**{f"{self.lease}__isnull": True}) | Q(**{f"{self.lease}__lt": now})

    def queued(self) -> dict[str, Any]:
        """The fields of a row queued now: waiting, with a lease for the time its message may
        take to reach a worker."""
        return {
            self.status: self.waiting,
            self.lease: timezone.now() + timedelta(seconds=lease_seconds()),
            **self.waiting_fields,
        }

    def fresh(self) -> dict[str, Any]:
        """The fields of a row asked for anew (new work, not a lost worker's): waiting, with
        its queue lease, and no attempt yet."""
        return {**self.queued(), self.attempts: 0, self.error: ""}

    def enqueue(self, pk: int) -> None:
        """Inside the transaction that asked for the work: the row is waiting, anew (`fresh`),
        and its task is sent once the transaction commits (config.queue: refused, and the
        transaction rolled back, when the broker does not answer)."""
        self._rows().filter(pk=pk).update(**self.fresh())
        send_after_commit((self.task, [pk], self.queue))

    def claim(self, pk: int) -> Held | None:
        """Start the work on a row: running, under a fresh lease, one more attempt. None when
        it is not this execution's to do: gone, ended, or held by a live lease (a second
        delivery of its message). A row started `max_attempts` times before is failed instead
        (its workers keep dying), and None."""
        now = timezone.now()
        claimable = Q(**{self.status: self.waiting}) | (
            Q(**{self.status: self.running}) & self._expired(now)
        )
        taken = (
            self._rows()
            .filter(claimable, pk=pk)
            .update(
                **{
                    self.status: self.running,
                    self.lease: now + timedelta(seconds=lease_seconds()),
                    self.attempts: models.F(self.attempts) + 1,
                }
            )
        )
        if not taken:
            return None
        attempt = int(self._rows().filter(pk=pk).values_list(self.attempts, flat=True).get())
        if attempt > self.max_attempts:
            self._fail(pk, self.lost(attempt - 1), attempt=attempt)
            return None
        return Held(self, pk, attempt)

    def _fail(self, pk: int, message: str, *, attempt: int | None = None) -> bool:
        """Fail the row (while it is running, and still this attempt's when one is given)."""
        rows = self._rows().filter(pk=pk, **{self.status: self.running})
        if attempt is not None:
            rows = rows.filter(**{self.attempts: attempt})
        changed = rows.update(
            **{self.status: self.failed, self.error: message, self.lease: None},
            **self.failed_fields(),
        )
        if changed and self.cleanup is not None:
            row = self._rows().filter(pk=pk).first()
            if row is not None:
                try:
                    self.cleanup(row)
                except Exception:
                    log.exception("cleaning up after %s %s failed", self.name, pk)
        return bool(changed)

    def recover(self) -> dict[str, int]:
        """This kind's part of the sweep: a running row whose lease ran out after its last
        allowed attempt is failed with `lost`; every other row whose lease ran out (running,
        or waiting for a message the broker may have lost) is waiting again, with a new lease,
        and its task sent once more."""
        now = timezone.now()
        expired = self._expired(now)
        failed = 0
        spent = self._rows().filter(
            expired,
            **{self.status: self.running, f"{self.attempts}__gte": self.max_attempts},
        )
        for pk, attempts in spent.values_list("pk", self.attempts):
            failed += self._fail(pk, self.lost(attempts), attempt=attempts)
        with transaction.atomic():
            # Locked, and skipped when another sweep holds them: each row is taken back once.
            lost = list(
                self._rows()
                .select_for_update(skip_locked=True)
                .filter(expired, **{f"{self.status}__in": (self.waiting, self.running)})
                .values_list("pk", flat=True)
            )
            if lost:
                self._rows().filter(pk__in=lost).update(**self.queued())
        for pk in lost:
            send(self.task, [pk], self.queue)
        report = {f"{self.name}: queued again": len(lost), f"{self.name}: failed": failed}
        if self.sweep_extra is not None:
            report.update({f"{self.name}: {k}": v for k, v in self.sweep_extra().items()})
        return report


class Held:
    """A row an execution is working on: renews its lease every third of it while the work
    goes on (a thread with its own database connection), and fails the row with the error when
    the work raises and has not ended the row itself. Use it as a context manager."""

    def __init__(self, work: RowWork, pk: int, attempt: int) -> None:
        self.work = work
        self.pk = pk
        self.attempt = attempt
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Held:
        # Inside a transaction (a page computing inline within one) the claim is seen by no one
        # before the commit, and a heartbeat would wait on this transaction's own row lock.
        if not connections["default"].in_atomic_block:
            self._thread = threading.Thread(
                target=self._beat, name=f"lease-{self.work.name}-{self.pk}", daemon=True
            )
            self._thread.start()
        return self

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if exc is not None and isinstance(exc, Exception):
            log.exception("%s %s failed", self.work.name, self.pk, exc_info=exc)
            self.work._fail(self.pk, _stopped(exc), attempt=self.attempt)

    def mine(self) -> Any:
        """The row's queryset while it is still this attempt's and running: the work's final
        write goes through it, so a worker that lost its lease writes nothing."""
        work = self.work
        return work._rows().filter(
            pk=self.pk, **{work.status: work.running, work.attempts: self.attempt}
        )

    def _beat(self) -> None:
        interval = max(0.2, lease_seconds() / 3)
        try:
            while not self._stop.wait(interval):
                lease = timezone.now() + timedelta(seconds=lease_seconds())
                if not self.mine().update(**{self.work.lease: lease}):
                    return  # ended, or taken back from this execution
        except Exception:
            log.exception("the heartbeat of %s %s failed", self.work.name, self.pk)
        finally:
            connections.close_all()
