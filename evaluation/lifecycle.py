"""The lifecycle of machine work, written once for runs and judge jobs.

A parent row (a Run, a JudgeJob) owns work items (its Predictions, its Judgments) at positions
0..n-1, answered in chunks of positions by Celery tasks on the parent's queue. The parent's status
says whether to go on: running, then done (finalized), failed (its endpoint cannot be used), or
cancelled (resumable). What differs between kinds of work is declared once in a WorkKind: the
models, the engine's view of the item table, the task that answers a chunk, how a chunk is
answered (the handler), and how a finished parent is summed up (its metrics).

    launch     queue the chunks of new items once their transaction commits
    execute    answer a chunk (the task); the chunk that settles the last item finalizes
    cancel     stop taking items; the rest stay pending, to be resumed
    resume     queue the chunks that still have pending items (optionally failed ones again),
               optionally with a new budget; a finished parent is only asked its failed ones
    budget     a parent with a budget (`budget`, see evaluation.work.budget) starts no item
               that would pass it: the execution that sees this stops the parent (cancelled,
               with the reason); its other items stay pending, resumable with a larger budget
    fail       stop, with the reason (e.g. the endpoint's key variable is unset on the worker,
               or an error in the work itself: any error in a chunk or a finish fails it)
    finalize   when every item is settled: the kind's summary, then done
    recover    the kind's part of the one recovery rule of background work (config.background,
               where every WorkKind registers): take back the items of lost workers and queue
               their chunks again; finish a parent whose items are all settled (its worker died
               before the finish); queue again a parent whose pending items no execution has
               touched for a lease (their messages were lost)

Chunks are queued by task name, so the services that declare kinds never import the tasks that
call them. Work for workers is queued on commit only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal
from typing import Any, Literal

from django.conf import settings
from django.db import models, transaction
from django.db.models import Exists, OuterRef, Q, Subquery
from django.utils import timezone

from config import background
from config.dbstats import stats_after_bulk_write
from config.errors import ApplicationError
from config.numbers import decimal_problem
from config.queue import Task, send, send_after_commit
from evaluation.models import Endpoint, Run
from evaluation.work.budget import Prices, Spending
from evaluation.work.caller import EndpointConfig
from evaluation.work.engine import ConfigurationError, Handler, execute
from evaluation.work.locks import WorkTable, take_back_lost

log = logging.getLogger(__name__)

# The parents' statuses (Run.Status and JudgeJob.Status share them) and the items' own.
RUNNING = "running"
CANCELLED = "cancelled"
DONE = "done"
FAILED = "failed"
PENDING = "pending"
UNSETTLED = (PENDING, RUNNING)


@dataclass(frozen=True)
class Words:
    """How pages, admin messages and reports name a kind of work."""

    noun: str  # "run"
    item: str  # "item"
    cancel: str  # the cancel button
    retry: str  # the button that asks failed items again


@dataclass(frozen=True)
class WorkKind:
    """One kind of machine work (see the module's docstring)."""

    words: Words
    parent: type[models.Model]
    item: type[models.Model]
    # The parent's related name for its items, and the engine's view of their table.
    items: str
    table: WorkTable
    # The Celery task answering a chunk (args: parent id, first, last position) and its queue.
    chunk_task: str
    queue: str
    # The parent with what executing a chunk needs (None if it is gone).
    fetch: Callable[[int], Any]
    # The endpoint that answers, None for imported work; its settings for this parent (may
    # raise ConfigurationError); the handler of one execution's items.
    endpoint: Callable[[Any], Endpoint | None]
    config: Callable[[Any], EndpointConfig]
    handler: Callable[[Any], Handler]
    # Sum up a finished parent (set its fields; return their names), in the finalizing
    # transaction; what to queue once it commits.
    finish: Callable[[Any], Sequence[str]]
    finish_related: tuple[str, ...] = ()
    after_finish: Callable[[int], None] | None = None
    # Items that `resume(retry_failed=True)` asks again, and what is reset on them.
    retry: tuple[str, ...] = (FAILED,)
    retry_reset: Mapping[str, Any] = field(default_factory=dict)
    # What `resume` resets on the parent: what finish() summed up from items that may change.
    resume_reset: Mapping[str, Any] = field(default_factory=dict)
    error: type[ApplicationError] = ApplicationError
    # Why a parent cannot be resumed ("" if it can).
    resume_refusal: Callable[[Any], str] = lambda parent: ""

    def __post_init__(self) -> None:
        # Known to the sweep of every kind of background work (config.background).
        background.register(
            background.Kind(f"{self.words.noun}s", (self.chunk_task,), lambda: recover([self]))
        )


def chunk_size() -> int:
    return int(getattr(settings, "EVALUATION_CHUNK_SIZE", 100))


def chunk_starts(positions: Iterable[int], size: int) -> list[int]:
    """The first positions of the chunks holding these positions."""
    return sorted({position // size * size for position in positions})


def chunk_tasks(kind: WorkKind, parent_id: int, starts: Sequence[int], size: int) -> list[Task]:
    return [(kind.chunk_task, [parent_id, first, first + size - 1], kind.queue) for first in starts]


def queue_chunks(kind: WorkKind, parent_id: int, starts: Sequence[int], size: int) -> None:
    for name, args, queue in chunk_tasks(kind, parent_id, starts, size):
        send(name, args, queue)


def launch(kind: WorkKind, parent_id: int, count: int) -> None:
    """Inside the transaction that created a parent and its `count` items (positions
    0..count-1): queue their chunks once it commits (refused, and so rolled back, when the
    broker does not answer: config.queue). The items' table is analysed when they are many
    (config.dbstats), after the chunks are sent (commit hooks run in the order registered):
    workers start while the ANALYZE samples, their claims and loads are planned the same
    whatever the statistics (an index on the parent and position, primary keys), and the
    run's page and export that follow are planned knowing the new rows."""
    size = chunk_size()
    starts = list(range(0, count, size))
    send_after_commit(*chunk_tasks(kind, parent_id, starts, size))
    stats_after_bulk_write({kind.item._meta.db_table: count})


def cancel(kind: WorkKind, parent: Any) -> bool:
    """Stop a running parent: chunks stop taking items (answers in flight are still stored)
    and the rest stay pending, so it can be resumed. Returns whether it was running."""
    changed = kind.parent._default_manager.filter(pk=parent.pk, status=RUNNING).update(
        status=CANCELLED, updated_at=timezone.now()
    )
    return bool(changed)


KEEP: Literal["keep"] = "keep"
# Runs and judge jobs keep their budget in columns of the same size.
BUDGET = Run._meta.get_field("budget")


def budget_error(budget: Decimal | None) -> str:
    """Why a budget cannot be used ("" if it can): see evaluation.work.budget."""
    if budget is not None and (not Decimal(budget).is_finite() or Decimal(budget) < 0):
        return "a budget must be a number, 0 or more"
    if budget is not None and (problem := decimal_problem(Decimal(budget), BUDGET)):
        return f"the budget {budget}: {problem}"
    return ""


def resume(
    kind: WorkKind,
    parent: Any,
    *,
    retry_failed: bool = False,
    budget: Decimal | Literal["keep"] | None = KEEP,
) -> int:
    """Continue a cancelled, failed or finished parent: queue the chunks that still have
    pending items (with retry_failed, the kind's failed items become pending again, their
    claims reset), with a new budget unless `budget` is KEEP (None: no limit). Returns the
    number of items queued; raises the kind's error when the parent cannot be resumed
    (imported work) or the budget is negative."""
    refusal = kind.resume_refusal(parent) or finished_refusal(kind, parent, retry_failed)
    if refusal:
        raise kind.error(refusal)
    if budget != KEEP and (problem := budget_error(budget)):
        raise kind.error(problem)
    size = chunk_size()
    with transaction.atomic():
        locked: Any = kind.parent._default_manager.select_for_update().get(pk=parent.pk)
        items = getattr(locked, kind.items)
        if retry_failed:
            items.filter(status__in=kind.retry).update(
                status=PENDING, attempts=0, error="", started_at=None, **kind.retry_reset
            )
        pending = items.filter(status=PENDING)
        count = pending.count()
        starts = chunk_starts(pending.values_list("position", flat=True), size)
        locked.status = RUNNING
        locked.error = ""
        locked.finished_at = None
        fields = ["status", "error", "finished_at", "updated_at"]
        for name, value in kind.resume_reset.items():
            setattr(locked, name, value)
            fields.append(name)
        if budget != KEEP:
            locked.budget = budget
            fields.append("budget")
        locked.save(update_fields=fields)
        if starts:
            send_after_commit(*chunk_tasks(kind, parent.pk, starts, size))
        else:
            transaction.on_commit(lambda: finalize(kind, parent.pk))
    return count


def finished_refusal(kind: WorkKind, parent: Any, retry_failed: bool) -> str:
    """A finished parent has nothing pending (finalize waits for every item): resuming it would
    only queue nothing and undo its finish; asking its failed items again is what is left."""
    if parent.status != DONE or retry_failed:
        return ""
    return f"the {kind.words.noun} is finished: nothing is pending to resume"


def fail(kind: WorkKind, parent_id: int, error: str) -> None:
    kind.parent._default_manager.filter(pk=parent_id, status=RUNNING).update(
        status=FAILED, error=error, updated_at=timezone.now()
    )


def stopped_by(exc: BaseException) -> str:
    """What a parent failed by an error in its own work says (the log has the traceback)."""
    return f"stopped by an error: {type(exc).__name__}: {exc}"[:2000]


def unsettled(kind: WorkKind, parent_id: int) -> bool:
    return kind.item._default_manager.filter(
        **{kind.table.parent: parent_id, "status__in": UNSETTLED}
    ).exists()


def finalize(kind: WorkKind, parent_id: int) -> bool:
    """When every item of a running parent is settled: the kind's summary, then done.
    Idempotent; returns whether it finished the parent now. A summary that raises fails the
    parent with the error (its items stay as they are)."""
    try:
        return _finalize(kind, parent_id)
    except Exception as exc:
        log.exception("%s %s could not be finished", kind.words.noun, parent_id)
        fail(kind, parent_id, stopped_by(exc))
        return False


def _finalize(kind: WorkKind, parent_id: int) -> bool:
    with transaction.atomic():
        parent: Any = (
            kind.parent._default_manager.select_for_update()
            .select_related(*kind.finish_related)
            .filter(pk=parent_id, status=RUNNING)
            .first()
        )
        if parent is None or unsettled(kind, parent_id):
            return False
        fields = list(kind.finish(parent))
        parent.status = DONE
        parent.finished_at = timezone.now()
        parent.save(update_fields=[*fields, "status", "finished_at", "updated_at"])
        # The engine's write windows rewrote every item (answers, statuses): the export and
        # pages that follow the finish are planned from statistics that know them.
        stats_after_bulk_write({kind.item._meta.db_table: getattr(parent, kind.items).count()})
        if kind.after_finish is not None:
            after = kind.after_finish
            transaction.on_commit(lambda: after(parent_id))
    return True


def execute_chunk(kind: WorkKind, parent_id: int, first: int, last: int) -> dict[str, int]:
    """Answer the pending items at positions first..last of a parent, then, while the
    engine's budget lasts, whatever else of it is pending. Idempotent: items answered or held
    by another live execution are left alone. A parent whose endpoint cannot be used here is
    failed with the reason."""
    parent = kind.fetch(parent_id)
    endpoint = kind.endpoint(parent) if parent is not None else None
    if parent is None or parent.status != RUNNING or endpoint is None:
        return {"skipped": 1}
    try:
        config = kind.config(parent)
    except ConfigurationError as exc:
        fail(kind, parent_id, str(exc))
        return {f"failed_{kind.words.noun}": 1}
    prices = Prices.of(endpoint)
    spending = None if parent.budget is None else Spending(Decimal(parent.budget), prices)
    report = execute(
        table=kind.table,
        parent_id=parent_id,
        first=first,
        last=last,
        config=config,
        max_claims=endpoint.max_claims,
        make_handler=lambda: kind.handler(parent),
        spending=spending,
    )
    # (An execution that stopped as the last items were being answered leaves nothing.)
    if report.get("over_budget") and spending is not None and unsettled(kind, parent_id):
        stop_at_budget(kind, parent_id, spending)
    return report


def stop_at_budget(kind: WorkKind, parent_id: int, spending: Spending) -> None:
    """A running parent whose next item would pass its budget: cancelled, with the reason."""
    if spending.prices is None:
        figures = f"{spending.spent:.0f} of {spending.limit:.0f} tokens (in + out)"
    else:
        figures = f"{spending.spent:.4f} of {spending.limit:.4f}"
    kind.parent._default_manager.filter(pk=parent_id, status=RUNNING).update(
        status=CANCELLED,
        error=f"stopped at its budget: spent {figures}; the rest is pending, resume with a "
        "larger budget",
        updated_at=timezone.now(),
    )


def chunk(kind: WorkKind, parent_id: int, first: int, last: int) -> dict[str, int]:
    """What a chunk's task does: execute it; the chunk that settles the last item finalizes
    the parent (idempotent if two race). Any error on the way fails the parent with it: a
    worker never leaves its parent running (the items it held are pending again: engine)."""
    try:
        report = execute_chunk(kind, parent_id, first, last)
    except Exception as exc:
        log.exception("a chunk of %s %s failed", kind.words.noun, parent_id)
        fail(kind, parent_id, stopped_by(exc))
        return {f"failed_{kind.words.noun}": 1}
    if report.get("claimed"):
        finalize(kind, parent_id)
    return report


def recover(kinds: Sequence[WorkKind]) -> dict[str, int]:
    """Each kind's part of the sweep (config.background): take back the items whose worker was
    lost (their lease ran out) and queue their chunks again (the next claim fails those that
    have used up their claims); finish a running parent whose items are all settled; queue the
    first pending chunk of a running parent that no execution has touched for a lease (its
    messages were lost: an execution goes on with the parent's other pending items). Safe to
    run any time, anywhere. Returns how many items and parents of each kind were taken back
    (and, when there were any, how many parents were finished and queued again)."""
    size = chunk_size()
    report: dict[str, int] = {}
    for kind in kinds:
        lost = take_back_lost(kind.table)
        by_parent: dict[int, list[int]] = {}
        for parent_id, position in lost:
            by_parent.setdefault(parent_id, []).append(position)
        for parent_id, positions in by_parent.items():
            starts = chunk_starts(positions, size)
            log.warning(
                "%s %s: %d chunk(s) of a lost worker queued again",
                kind.words.noun,
                parent_id,
                len(starts),
            )
            queue_chunks(kind, parent_id, starts, size)
        report[kind.items] = len(lost)
        report[f"{kind.words.noun}s"] = len(by_parent)
        finished = sum(finalize(kind, parent_id) for parent_id in _settled_running(kind))
        stalled = _stalled(kind, exclude=set(by_parent))
        for parent_id, first in stalled:
            log.warning(
                "%s %s: no worker has it; its pending items queued again",
                kind.words.noun,
                parent_id,
            )
            start = first // size * size
            queue_chunks(kind, parent_id, [start], size)
        if finished:
            report[f"{kind.words.noun}s finished"] = finished
        if stalled:
            report[f"{kind.words.noun}s queued again"] = len(stalled)
    return report


def _items(kind: WorkKind, parent: Any) -> Any:
    return kind.item._default_manager.filter(**{kind.table.parent: parent})


def _settled_running(kind: WorkKind) -> list[int]:
    """Running parents with nothing left pending or running."""
    unsettled = _items(kind, OuterRef("pk")).filter(status__in=UNSETTLED)
    return list(
        kind.parent._default_manager.filter(status=RUNNING)
        .exclude(Exists(unsettled))
        .values_list("pk", flat=True)
    )


def _stalled(kind: WorkKind, exclude: set[int]) -> list[tuple[int, int]]:
    """(parent, its first pending position) for each running parent with pending items, none
    running, and no item or the parent itself changed for a lease. The item whose chunk is
    queued is touched, so that the next sweep waits another lease before asking again."""
    stale = timezone.now() - timedelta(seconds=background.lease_seconds())
    pending = _items(kind, OuterRef("pk")).filter(status=PENDING)
    busy = _items(kind, OuterRef("pk")).filter(Q(status=RUNNING) | Q(updated_at__gte=stale))
    found = list(
        kind.parent._default_manager.filter(status=RUNNING, updated_at__lt=stale)
        .filter(Exists(pending))
        .exclude(Exists(busy))
        .exclude(pk__in=exclude)
        .annotate(first=Subquery(pending.order_by("position").values("position")[:1]))
        .values_list("pk", "first")
    )
    for parent_id, first in found:
        _items(kind, parent_id).filter(position=first).update(updated_at=timezone.now())
    return found


@dataclass(frozen=True)
class Control:
    action: str  # "cancel", "resume", "retry": the control URL's last part
    label: str


def controls(
    kind: WorkKind, parent: Any, progress: Mapping[str, int], *, can_change: bool
) -> list[Control]:
    """The buttons a parent's page shows: cancel while it runs; otherwise resume (unless it is
    finished), and retry when it has failed items. None for imported work or a user who may
    not change it."""
    if not can_change or kind.resume_refusal(parent):
        return []
    if parent.status == RUNNING:
        return [Control("cancel", kind.words.cancel)]
    shown = [] if finished_refusal(kind, parent, False) else [Control("resume", "Resume")]
    if any(progress.get(status) for status in kind.retry):
        shown.append(Control("retry", kind.words.retry))
    return shown
