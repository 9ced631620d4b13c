"""Computed results: one lifecycle for a result that a row holds and a worker (or the request
that asks for it) computes from inputs: an agreement report, a run's analyses, a browser
import.

A kind of result declares itself once (`Computed`): its row (a `config.background.RowWork`,
which it is: the row's status, lease, attempts and error, its task and queue, and the one
recovery rule), what it reads (`inputs`, from the row), that reading summed up (`fingerprint`,
or none when every row is a request of its own), how to compute it (`compute`, which returns
the fields of the finished row), when it is small enough to compute while the request waits
(`small`), how far a computation got (`progress_fields`) and how an error is recorded
(`failure`). This module owns the rest, the same for every kind:

- a stored result is kept while the fingerprint of its inputs is the same (`request`);
  asked for again with other inputs, it is computed again: at once when `small` (or when the
  caller says `inline`), else queued for a worker, and the row comes back waiting;
- a row being computed, or queued, for the same inputs is waited for while its lease lasts;
  once the lease ran out (its worker or its message was lost) a request takes it back, and so
  does the sweep (config.background);
- one execution computes a row at a time (`RowWork.claim`), renewing its lease while it works;
  its final write goes through `Held.mine()` and, for a fingerprinted result, only while the
  row still asks for the inputs it read: a request that saw newer inputs meanwhile has queued
  the row anew, and the newer computation stores its own result;
- an error in the computation fails the row with the message `failure` gives (and its fields),
  logged with its traceback unless it is the inputs' fault; and what a row leaves behind
  (`RowWork.cleanup`) is removed once its final write, done or failed, has landed.

A config utility: it imports no app (each kind brings its model and functions).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from django.db import transaction
from django.utils import timezone

from config.background import Held, RowWork

log = logging.getLogger(__name__)

# What a computation reads, in the shape its kind's declaration gives it.
Inputs = TypeVar("Inputs")


@dataclass(frozen=True)
class Failure:
    """How an error in a computation is recorded: the row's `error`, more fields of the failed
    row, whether it is the inputs' fault (said to the person; not logged as a defect) and
    whether the error goes on up to the caller after it is recorded."""

    message: str
    fields: Mapping[str, Any] = field(default_factory=dict)
    expected: bool = False
    reraise: bool = False


def unexpected(inputs: Any, exc: Exception) -> Failure:
    """The default record of an error: its type and message, logged with its traceback."""
    return Failure(f"{type(exc).__name__}: {exc}")


def no_fields(inputs: Any) -> Mapping[str, Any]:
    return {}


def never_small(inputs: Any) -> bool:
    return False


def touched(*_: Any) -> dict[str, Any]:
    """`updated_at` now: the fields of a write to a row that keeps when it last changed
    (`update` leaves auto_now alone)."""
    return {"updated_at": timezone.now()}


def counted(done: int, total: int) -> dict[str, Any]:
    """Progress as `done` of `total`, for a row with those fields and `updated_at`."""
    return {"done": done, "total": total, **touched()}


class Computing:
    """What a computation is handed besides its inputs: the fingerprint of what it reads, and
    where it says how far it got. Progress is written to the row while this execution holds it
    (at most every `progress_every` seconds of the declaration), and the last of it goes into
    the final write, done or failed."""

    def __init__(
        self,
        result: Computed[Any],
        held: Held,
        fingerprint: str | None,
        on_progress: Callable[[int, int], None] | None,
    ) -> None:
        self.result = result
        self.held = held
        self.fingerprint = fingerprint
        self.on_progress = on_progress
        self.last: Mapping[str, Any] = {}
        self._written = time.monotonic()

    def progress(self, done: int, total: int = 0) -> None:
        self.last = self.result.progress_fields(done, total)
        now = time.monotonic()
        if now - self._written >= self.result.progress_every:
            self._written = now
            self.held.mine().update(**self.last)
        if self.on_progress is not None:
            self.on_progress(done, total)

    def note(self, **fields: Any) -> None:
        """Write `fields` (a phase) at once, with the progress so far."""
        self.held.mine().update(**{**self.last, **fields})


@dataclass(frozen=True, eq=False, kw_only=True)
class Computed(RowWork, Generic[Inputs]):
    """A kind of computed result: a RowWork (its row, task, queue and recovery) that also says
    what it computes. Fields, besides RowWork's:

    done             the status of a row that holds its result
    inputs           what the computation reads, from its row (fetched with `related`)
    compute          (inputs, Computing) -> the fields of the finished row
    fingerprint      inputs -> what they were, summed up (the row's `fingerprint` field); None
                     when each row is a request of its own (an import of uploaded files)
    small            inputs -> whether a request computes it at once rather than queue it
    started          inputs -> fields written when an execution starts on it
    ended            () -> fields written with the final write, done or failed
    progress_fields  (done, total) -> the fields that say how far it got
    progress_every   seconds between two progress writes
    failure          (inputs, error) -> how the error is recorded (`Failure`)
    timed            whether the finished row's `seconds` says how long it took
    """

    done: str
    inputs: Callable[[Any], Inputs]
    compute: Callable[[Inputs, Computing], Mapping[str, Any]]
    fingerprint: Callable[[Inputs], str] | None = None
    small: Callable[[Inputs], bool] = never_small
    related: tuple[str, ...] = ()
    started: Callable[[Inputs], Mapping[str, Any]] = no_fields
    ended: Callable[[], Mapping[str, Any]] = lambda: {}
    progress_fields: Callable[[int, int], Mapping[str, Any]] = lambda done, total: {}
    progress_every: float = 0.0
    failure: Callable[[Inputs, Exception], Failure] = unexpected
    timed: bool = False

    def request(
        self,
        lookup: Mapping[str, Any],
        inputs: Inputs,
        *,
        fields: Mapping[str, Any] | None = None,
        inline: bool | None = None,
        force: bool = False,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> Any:
        """The stored result that `lookup` names (created when there is none), for `inputs`:
        as it is when it was computed, or is being computed, from inputs of the same
        fingerprint, under a lease that lasts; else asked for anew (with `fields` set) and
        computed at once when `inline` (None: when `small(inputs)`), or queued for a worker
        and returned waiting. `force` computes it here even while a live worker holds it (a
        command that must have the result). Needs a `fingerprint`."""
        assert self.fingerprint is not None, f"{self.name}: a requested result has a fingerprint"
        fingerprint = self.fingerprint(inputs)
        fields = dict(fields or {})
        with transaction.atomic():
            row, created = (
                self._rows()
                .select_for_update()
                .get_or_create(**lookup, defaults={**fields, "fingerprint": fingerprint})
            )
            if not created and row.fingerprint == fingerprint:
                status = getattr(row, self.status)
                if status == self.done:
                    return row
                # Queued or being computed for these inputs: waited for while its lease lasts
                # (the sweep takes it back from a worker that was lost).
                lease = getattr(row, self.lease)
                busy = status in (self.waiting, self.running)
                if busy and lease is not None and lease > timezone.now() and not force:
                    return row
            if inline is None:
                inline = self.small(inputs)
            row.fingerprint = fingerprint
            for name, value in {**fields, **self.fresh()}.items():
                setattr(row, name, value)
            row.save()
            if not inline:
                self.enqueue(row.pk)
                return row
        return self.execute(row.pk, on_progress=on_progress)

    def execute(self, pk: int, *, on_progress: Callable[[int, int], None] | None = None) -> Any:
        """Compute a row that waits for it (its task's body, or a request's inline), and return
        the row as it is then (None when there is no such row). Safe to run twice: a row that
        ended, or that a live execution holds, is returned as it is (`claim`)."""
        held = self.claim(pk)
        if held is not None:
            with held:
                self._compute(held, on_progress)
        return self._rows().select_related(*self.related).filter(pk=pk).first()

    def _compute(self, held: Held, on_progress: Callable[[int, int], None] | None) -> None:
        row = self._rows().select_related(*self.related).get(pk=held.pk)
        inputs = self.inputs(row)
        fingerprint = self.fingerprint(inputs) if self.fingerprint is not None else None
        computing = Computing(self, held, fingerprint, on_progress)
        begun = dict(self.started(inputs))
        if fingerprint is not None:
            begun["fingerprint"] = fingerprint
        if begun:
            held.mine().update(**begun)
        clock = time.perf_counter()
        try:
            result = dict(self.compute(inputs, computing))
        except Exception as exc:
            failure = self.failure(inputs, exc)
            if not failure.expected and not failure.reraise:
                # A re-raised error is logged where it ends (Held, the task).
                log.exception("%s %s failed", self.name, held.pk)
            self._end(
                held.mine(),
                computing,
                {
                    self.status: self.failed,
                    self.error: failure.message,
                    **self.failed_fields(),
                    **failure.fields,
                },
            )
            if failure.reraise:
                raise
            return
        if self.timed:
            result["seconds"] = time.perf_counter() - clock
        rows = held.mine()
        if fingerprint is not None:
            # Only for the inputs it read: a request that saw newer ones meanwhile queued the
            # row anew, and the newer computation stores its own result.
            rows = rows.filter(fingerprint=fingerprint)
        self._end(rows, computing, {self.status: self.done, **result})

    def _end(self, rows: Any, computing: Computing, fields: Mapping[str, Any]) -> None:
        """The final write, while the row is still this execution's; then what the row leaves
        behind is removed (not when a worker that lost the row wrote nothing: the files are
        the attempt's that has it)."""
        changed = rows.update(**{**computing.last, **self.ended(), **fields, self.lease: None})
        if changed and self.cleanup is not None:
            row = self._rows().filter(pk=computing.held.pk).first()
            if row is not None:
                self.cleanup(row)
