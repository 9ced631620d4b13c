"""One recovery rule for every kind of background work (config.background): whatever a worker
works on holds a lease in the database; the sweep queues again, once, what a lost worker held
(or what waits for a message the broker lost), and fails, with the reason and its files removed,
what has lost its worker too often. Every Celery task belongs to a registered kind.

This walks every registered kind that is one row done by one task (import jobs, agreement
reports, run analyses, run intervals) through the same cases, and the item kinds (runs, judge
jobs) through what the sweep adds to their items' leases. A real worker killed inside each kind
is in test_background_workers.py."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
from django.conf import settings
from django.utils import timezone

from annotation.models import AgreementReport, CalibrationReport, Campaign
from benchmarks.models import ImportJob
from config import background
from config.background import RowWork
from evaluation import judging, lifecycle, services
from evaluation.judge_versions import version_for
from evaluation.models import Endpoint, Judge, Run, RunAnalysis
from tests.evaluation.test_lifecycle import Work
from tests.factories import make_benchmark
from tests.workers import flush_test_broker

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("broker")]


@pytest.fixture
def broker() -> Iterator[None]:
    flush_test_broker()
    yield
    flush_test_broker()


def queued(queue: str) -> int:
    return int(redis.from_url(settings.CELERY_BROKER_URL).llen(queue))


def a_run(**fields: Any) -> Run:
    fields.setdefault("status", Run.Status.DONE)
    return Run.objects.create(benchmark=make_benchmark(), task="answer", model_name="m", **fields)


# One row of each kind, waiting for its worker, and what its failure must leave behind.
def import_job(uploads: Path) -> ImportJob:
    folder = uploads / "20250101-000000-abcdef"
    folder.mkdir()
    (folder / "counting.jsonl").write_text("{}\n")
    return ImportJob.objects.create(
        suite="generic", benchmark_name="Counting", folder=folder.name, files=[]
    )


def agreement_report(uploads: Path) -> AgreementReport:
    campaign = Campaign.objects.create(name="c", kind="pairwise")
    return AgreementReport.objects.create(campaign=campaign, key="k", fingerprint="f")


def calibration_report(uploads: Path) -> CalibrationReport:
    endpoint = Endpoint.objects.create(name="e", base_url="http://127.0.0.1:9/v1", model="m")
    judge = Judge.objects.create(
        name="j", template="generic.pairwise", kind="pairwise", endpoint=endpoint
    )
    return CalibrationReport.objects.create(version=version_for(judge), key="k", fingerprint="f")


def run_analysis(uploads: Path) -> RunAnalysis:
    return RunAnalysis.objects.create(run=a_run(), fingerprint="f")


def run_intervals(uploads: Path) -> Run:
    return a_run(intervals_status="queued")


MAKERS: dict[str, Callable[[Path], Any]] = {
    "import jobs": import_job,
    "agreement reports": agreement_report,
    "calibration reports": calibration_report,
    "run analyses": run_analysis,
    "run intervals": run_intervals,
}


@pytest.fixture
def uploads(tmp_path: Path, settings: Any) -> Path:
    settings.BENCHMARK_UPLOAD_DIR = str(tmp_path / "uploads")
    (tmp_path / "uploads").mkdir()
    return tmp_path / "uploads"


def row_kinds() -> list[RowWork]:
    return [kind.work for kind in background.kinds() if kind.work is not None]


def test_every_row_kind_is_walked_here() -> None:
    assert sorted(work.name for work in row_kinds()) == sorted(MAKERS)


@pytest.fixture(params=sorted(MAKERS))
def kind(request: Any, uploads: Path) -> Iterator[tuple[RowWork, Any]]:
    work = next(w for w in row_kinds() if w.name == request.param)
    row = MAKERS[request.param](uploads)
    work._rows().filter(pk=row.pk).update(**work.fresh())
    yield work, row


def state(work: RowWork, row: Any) -> tuple[str, int, str]:
    return work._rows().filter(pk=row.pk).values_list(work.status, work.attempts, work.error).get()


def lease_of(work: RowWork, row: Any) -> Any:
    return work._rows().filter(pk=row.pk).values_list(work.lease, flat=True).get()


def expire(work: RowWork, row: Any, **fields: Any) -> None:
    past = timezone.now() - timedelta(seconds=1)
    work._rows().filter(pk=row.pk).update(**{work.lease: past}, **fields)


def leftovers(work: RowWork, row: Any, uploads: Path) -> bool:
    """Whether what the row's work keeps on disk is still there (import jobs' uploads)."""
    return isinstance(row, ImportJob) and (uploads / row.folder).exists()


def test_a_row_is_held_by_one_execution_at_a_time(kind: tuple[RowWork, Any]) -> None:
    work, row = kind
    held = work.claim(row.pk)
    assert held is not None and held.attempt == 1
    assert state(work, row)[:2] == (work.running, 1)
    assert lease_of(work, row) > timezone.now()
    # a second delivery of its message finds it held under a live lease
    assert work.claim(row.pk) is None
    assert state(work, row)[:2] == (work.running, 1)


def test_work_that_raises_fails_its_row_with_the_message(
    kind: tuple[RowWork, Any], uploads: Path
) -> None:
    work, row = kind
    held = work.claim(row.pk)
    assert held is not None
    with pytest.raises(RuntimeError), held:
        raise RuntimeError("the disk is full")
    assert state(work, row) == (
        work.failed,
        1,
        "stopped by an error: RuntimeError: the disk is full",
    )
    assert not leftovers(work, row, uploads)


def test_the_sweep_queues_again_once_what_a_lost_worker_held(kind: tuple[RowWork, Any]) -> None:
    work, row = kind
    assert work.claim(row.pk) is not None
    # given its worker died: the lease ran out
    expire(work, row)
    # when two sweeps run
    background.recover()
    background.recover()
    # then it waits again, under a new lease, and its task was sent once
    assert state(work, row)[:2] == (work.waiting, 1)
    assert lease_of(work, row) > timezone.now()
    assert queued(work.queue) == 1
    # and the next delivery takes it, as its second attempt
    held = work.claim(row.pk)
    assert held is not None and held.attempt == 2


def test_the_sweep_sends_again_a_message_the_broker_lost(kind: tuple[RowWork, Any]) -> None:
    work, row = kind
    # given a row queued long ago whose message never reached a worker (a Redis restart)
    expire(work, row)
    background.recover()
    assert state(work, row)[:2] == (work.waiting, 0)
    assert queued(work.queue) == 1
    # while its queue lease lasts, it is not sent again
    background.recover()
    assert queued(work.queue) == 1


def test_a_row_whose_worker_was_lost_too_often_fails_with_the_reason(
    kind: tuple[RowWork, Any], uploads: Path
) -> None:
    work, row = kind
    for _ in range(work.max_attempts):
        assert work.claim(row.pk) is not None
        expire(work, row)
    # the sweep fails it rather than queueing it again
    background.recover()
    status, attempts, error = state(work, row)
    assert (status, attempts) == (work.failed, work.max_attempts)
    assert error == work.lost(work.max_attempts) and str(work.max_attempts) in error
    assert queued(work.queue) == 0
    assert not leftovers(work, row, uploads)


def test_a_delivery_after_the_last_allowed_attempt_fails_the_row(
    kind: tuple[RowWork, Any], uploads: Path
) -> None:
    work, row = kind
    work._rows().filter(pk=row.pk).update(**{work.attempts: work.max_attempts})
    assert work.claim(row.pk) is None
    assert state(work, row) == (work.failed, work.max_attempts + 1, work.lost(work.max_attempts))
    assert not leftovers(work, row, uploads)


def test_an_ended_row_is_left_alone(kind: tuple[RowWork, Any]) -> None:
    work, row = kind
    work._rows().filter(pk=row.pk).update(**{work.status: "done", work.lease: None})
    assert work.claim(row.pk) is None
    background.recover()
    assert state(work, row)[0] == "done" and queued(work.queue) == 0


def test_a_finished_imports_leftover_files_are_removed(uploads: Path) -> None:
    job = import_job(uploads)
    ImportJob.objects.filter(pk=job.pk).update(status="done")
    background.recover()
    assert not (uploads / job.folder).exists()


# --- the item kinds: runs and judge jobs ---------------------------------------------------------

ITEM_KINDS = {"run": services.RUNS, "job": judging.JUDGE_JOBS}


@pytest.mark.parametrize("name", ITEM_KINDS)
def test_a_parent_whose_items_are_settled_but_never_finished_is_finished(
    name: str, tmp_path: Path
) -> None:
    # given a parent whose worker died between its last answer and the finish
    parent = Work(tmp_path).make(name, ["done", "failed"])
    background.recover()
    parent.refresh_from_db()
    assert parent.status == "done" and parent.finished_at is not None


@pytest.mark.parametrize("name", ITEM_KINDS)
def test_a_parent_no_worker_has_is_queued_again_once_a_lease(name: str, tmp_path: Path) -> None:
    kind = ITEM_KINDS[name]
    # given a running parent with pending items whose messages were lost
    work = Work(tmp_path)
    parent = work.make(name, ["done", "pending", "pending"])
    long_ago = timezone.now() - timedelta(minutes=5)
    kind.parent._default_manager.filter(pk=parent.pk).update(updated_at=long_ago)
    getattr(parent, kind.items).update(updated_at=long_ago)
    background.recover()
    assert queued(kind.queue) == 1
    # the next sweep, within a lease, leaves it to the message it sent
    background.recover()
    assert queued(kind.queue) == 1
    # a parent that is being worked on, or was just queued, is left alone
    busy = work.make(name, ["running", "pending"])
    getattr(busy, kind.items).filter(position=0).update(
        lease_until=timezone.now() + timedelta(minutes=1)
    )
    background.recover()
    assert queued(kind.queue) == 1


def test_the_item_kinds_are_registered_with_their_chunk_tasks() -> None:
    registered = {kind.name: kind.tasks for kind in background.kinds()}
    assert registered["runs"] == ("evaluation.tasks.run_chunk",)
    assert registered["jobs"] == ("evaluation.tasks.judge_chunk",)
    assert lifecycle.recover  # the item kinds' part of the sweep


# --- every task belongs to a kind ---------------------------------------------------------------


def test_every_celery_task_that_does_work_belongs_to_a_recoverable_kind() -> None:
    from config.celery import app

    app.loader.import_default_modules()
    ours = {name for name in app.tasks if not name.startswith("celery.")}
    owned = {task for kind in background.kinds() for task in kind.tasks}
    # the sweep itself is the mechanism, not work
    assert ours - owned == {background.SWEEP_TASK}, sorted(ours - owned)
    assert owned <= ours, sorted(owned - ours)
    # and beat runs the sweep
    schedule = settings.CELERY_BEAT_SCHEDULE["recover-lost-work"]
    assert schedule["task"] == background.SWEEP_TASK
    assert schedule["schedule"] == background.recovery_interval()
