"""For each kind of background work, a real Celery worker is killed inside it, the whole process
group at once (SIGKILL, as the machine dying would), and a fresh worker starts: the row settles
within the recovery interval (the fresh worker's start-up sweep, once the dead one's lease ran
out), and nothing is done twice (one prediction per item, one judgment per judgment asked, one
import, one report, each answer asked at most once more than there were items in flight).

What holds the first worker inside the work: a slow model server (runs, judge jobs), or a table
locked by the test (an import stores its samples, a report reads the labels, analyses and
intervals read the predictions) that the test releases once the worker is dead."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotation.agreement.services import report_params, report_request
from annotation.calibration.stored import report_request as calibration_request
from annotation.models import AgreementReport, CalibrationReport
from benchmarks.import_jobs import import_job_create
from benchmarks.kit.protocol import PublishedOutput
from benchmarks.models import Benchmark, ImportJob, Sample
from config import background
from evaluation import services, tasks
from evaluation.analyses import run_analyses_get
from evaluation.judging import judge_launch
from evaluation.models import Judge, Judgment, Prediction, Run, RunAnalysis
from evaluation.selectors import compared_counts_known
from tests.annotation.test_agreement_report import pairwise_campaign
from tests.annotation.test_calibration import judged_world
from tests.evaluation.conftest import counting_answer, make_counting_benchmark, make_endpoint
from tests.evaluation.test_analyses_mtubench import mtubench
from tests.factories import make_researcher
from tests.fake_openai import FakeOpenAI
from tests.workers import Worker, celery_worker, flush_test_broker
from tests.workers import test_database_url as database_url

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

SS_LINES = 104  # records of the seed data's MTU-Bench S-S file


def waiting_for_lock(table: str) -> bool:
    """Whether a session waits for a lock on `table` (the worker is held inside its work)."""
    with psycopg.connect(database_url(), autocommit=True) as other:
        row = other.execute(
            "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
            "WHERE c.relname = %s AND NOT l.granted",
            [table],
        ).fetchone()
    return bool(row and row[0])


class Scene:
    """One kind's work, started before any worker runs: `inside()` says when the first worker
    is in the middle of it, `release()` lets go of what held it there (after the kill),
    `settled()` whether the row ended, and `check()` that nothing was done twice."""

    env: dict[str, str] = {}
    # How long the fresh worker may have to wait for what the dead one held beyond its lease:
    # its endpoint's concurrency slots come back when they expire (evaluation.work.engine.
    # endpoint_slots: the request timeout + EVALUATION_SLOT_MARGIN_SECONDS), since a dead worker
    # cannot give them back.
    held_beyond_lease = 0.0

    def __init__(self, stack: contextlib.ExitStack, tmp_path: Path, seeddata: Path) -> None:
        self.stack, self.tmp_path, self.seeddata = stack, tmp_path, seeddata
        self.blocker: psycopg.Connection[Any] | None = None

    def lock(self, table: str, mode: str) -> None:
        self.blocker = psycopg.connect(database_url())
        self.stack.callback(self.blocker.close)
        self.blocker.execute(f"LOCK TABLE {table} IN {mode} MODE")

    def release(self) -> None:
        if self.blocker is not None:
            self.blocker.rollback()

    def start(self) -> None:
        raise NotImplementedError

    def killed(self) -> None:
        """After the kill, before the lock goes: what the dead worker had in hand."""

    def inside(self) -> bool:
        raise NotImplementedError

    def settled(self) -> bool:
        raise NotImplementedError

    def check(self) -> None:
        raise NotImplementedError


class Runs(Scene):
    ITEMS = 60
    held_beyond_lease = 5 + settings.EVALUATION_SLOT_MARGIN_SECONDS  # make_endpoint's timeout

    def start(self) -> None:
        self.server = self.stack.enter_context(
            FakeOpenAI(responder=counting_answer, latency_ms=150)
        )
        benchmark = make_counting_benchmark(self.tmp_path, self.ITEMS)
        endpoint = make_endpoint(self.server.base_url, max_concurrency=4, max_attempts=4)
        self.run = services.run_launch(
            benchmark=benchmark, task="answer", endpoint=endpoint, split="default"
        )

    def inside(self) -> bool:
        return self.run.predictions.filter(status="done").count() >= 8

    def killed(self) -> None:
        self.in_flight = self.run.predictions.filter(status="running").count()
        assert self.in_flight > 0

    def settled(self) -> bool:
        self.run.refresh_from_db()
        return self.run.status != Run.Status.RUNNING

    def check(self) -> None:
        assert self.run.status == Run.Status.DONE, self.run.error
        predictions = Prediction.objects.filter(run=self.run)
        assert predictions.count() == self.ITEMS
        assert predictions.filter(status="done").count() == self.ITEMS
        assert predictions.values("sample").distinct().count() == self.ITEMS
        assert self.ITEMS <= self.server.total <= self.ITEMS + self.in_flight


class JudgeJobs(Scene):
    SAMPLES = 20
    held_beyond_lease = 5 + settings.EVALUATION_SLOT_MARGIN_SECONDS  # make_endpoint's timeout

    def start(self) -> None:
        fast = self.stack.enter_context(FakeOpenAI(responder=counting_answer))
        benchmark = make_counting_benchmark(self.tmp_path, self.SAMPLES)
        runs = []
        for seed in (1, 2):
            run = services.run_launch(
                benchmark=benchmark,
                task="answer",
                endpoint=make_endpoint(fast.base_url, name=f"model {seed}"),
                split="default",
                seed=seed,
            )
            tasks.run_chunk(run.pk, 0, 99)
            run.refresh_from_db()
            assert run.status == Run.Status.DONE
            runs.append(run)
        flush_test_broker()  # the runs were answered here; their queued chunks are not work
        self.server = self.stack.enter_context(
            FakeOpenAI(
                responder=lambda request: '{"better": "1", "reason": "same"}', latency_ms=150
            )
        )
        judge = Judge.objects.create(
            name="pairwise",
            template="generic.pairwise",
            kind=Judge.Kind.PAIRWISE,
            endpoint=make_endpoint(self.server.base_url, name="judge", max_concurrency=4),
            answer_mode=Judge.AnswerMode.TEXT,  # the server above answers in text
        )
        self.job = judge_launch(judge=judge, run=runs[0], against=runs[1], repeats=1)
        self.expected = Judgment.objects.filter(job=self.job).count()
        assert self.expected == 2 * self.SAMPLES  # both orders

    def inside(self) -> bool:
        return self.job.judgments.filter(status="done").count() >= 6

    def killed(self) -> None:
        self.in_flight = self.job.judgments.filter(status="running").count()
        assert self.in_flight > 0

    def settled(self) -> bool:
        self.job.refresh_from_db()
        return self.job.status != "running"

    def check(self) -> None:
        assert self.job.status == "done", self.job.error
        judgments = Judgment.objects.filter(job=self.job)
        assert judgments.count() == self.expected
        assert judgments.filter(status="done").count() == self.expected
        assert self.expected <= self.server.total <= self.expected + self.in_flight


class ImportJobs(Scene):
    def start(self) -> None:
        uploads = self.tmp_path / "uploads"
        self.env = {"BENCHMARK_UPLOAD_DIR": str(uploads)}
        from django.conf import settings

        settings.BENCHMARK_UPLOAD_DIR = uploads
        data = (self.seeddata / "mtubench" / "S-S_eval.jsonl").read_bytes()
        # the samples table is locked: the import stops inside its one transaction
        self.lock("benchmarks_sample", "SHARE")
        self.job = import_job_create(
            user=make_researcher(),
            suite="mtubench",
            benchmark_name="Killed",
            files=[SimpleUploadedFile("S-S_eval.jsonl", data)],
        )
        self.folder = uploads / self.job.folder

    def inside(self) -> bool:
        phase = ImportJob.objects.get(pk=self.job.pk).phase
        return phase == "storing" and waiting_for_lock("benchmarks_sample")

    def settled(self) -> bool:
        # The job's files go once its final write has landed (RowWork.cleanup), a moment after
        # the status another process can read: settled is both, or the worker could be stopped
        # between them.
        self.job.refresh_from_db()
        return self.job.status in ("done", "failed") and not self.folder.exists()

    def check(self) -> None:
        assert self.job.status == "done", self.job.error
        assert self.job.attempts == 2
        assert Benchmark.objects.filter(name="Killed").count() == 1
        assert Sample.objects.filter(benchmark__name="Killed").count() == SS_LINES
        assert not self.folder.exists()


class AgreementReports(Scene):
    def start(self) -> None:
        campaign, *_ = pairwise_campaign()
        self.report = report_request(campaign, report_params(metrics=["accuracy"]), inline=False)
        assert self.report.status == "pending"
        # the labels are locked: the report stops as it reads them
        self.lock("annotation_label", "ACCESS EXCLUSIVE")

    def inside(self) -> bool:
        status = AgreementReport.objects.get(pk=self.report.pk).status
        return status == "running" and waiting_for_lock("annotation_label")

    def settled(self) -> bool:
        self.report.refresh_from_db()
        return self.report.status in ("done", "failed")

    def check(self) -> None:
        assert self.report.status == "done", self.report.error
        assert self.report.attempts == 2
        assert AgreementReport.objects.filter(campaign=self.report.campaign).count() == 1
        accuracy = self.report.data["questions"][0]["automatic"][0]["accuracy"]["value"]
        assert accuracy == 0.8


class CalibrationReports(Scene):
    def start(self) -> None:
        version, *_ = judged_world()
        self.report = calibration_request(version, inline=False)
        assert self.report.status == "pending"
        # the labels are locked: the report stops as it reads them
        self.lock("annotation_label", "ACCESS EXCLUSIVE")

    def inside(self) -> bool:
        status = CalibrationReport.objects.get(pk=self.report.pk).status
        return status == "running" and waiting_for_lock("annotation_label")

    def settled(self) -> bool:
        self.report.refresh_from_db()
        return self.report.status in ("done", "failed")

    def check(self) -> None:
        assert self.report.status == "done", self.report.error
        assert self.report.attempts == 2
        assert CalibrationReport.objects.filter(version=self.report.version).count() == 1
        (task,) = self.report.data["report"]["tasks"]
        (question,) = task["questions"]
        assert question["accuracy"]["value"] == pytest.approx(4 / 6)


def counting_run(tmp_path: Path) -> Run:
    benchmark = make_counting_benchmark(tmp_path, 40)
    outputs = [PublishedOutput(str(i), f"Answer: {i + 1}", "default") for i in range(40)]
    return services.outputs_import(
        benchmark=benchmark, task="answer", outputs=outputs, name="imported", split="default"
    )


class RunAnalyses(Scene):
    def start(self) -> None:
        self.run = counting_run(self.tmp_path)
        flush_test_broker()
        self.analysis = run_analyses_get(self.run, inline=False)
        assert self.analysis.status == "pending"
        # the predictions are locked: the analyses stop as they read them
        self.lock("evaluation_prediction", "ACCESS EXCLUSIVE")

    def inside(self) -> bool:
        status = RunAnalysis.objects.get(pk=self.analysis.pk).status
        return status == "running" and waiting_for_lock("evaluation_prediction")

    def settled(self) -> bool:
        self.analysis.refresh_from_db()
        return self.analysis.status in ("done", "failed")

    def check(self) -> None:
        assert self.analysis.status == "done", self.analysis.error
        assert self.analysis.attempts == 2
        assert RunAnalysis.objects.filter(run=self.run).count() == 1
        assert self.analysis.data is not None and self.analysis.data["run"] == self.run.pk


class RunIntervals(Scene):
    def start(self) -> None:
        benchmark = mtubench(self.seeddata, "S-S")
        samples = Sample.objects.filter(benchmark=benchmark).order_by("id")[:30]
        outputs = [
            PublishedOutput(s.external_id, "Action: x\nAction Input: {}", "S-S") for s in samples
        ]
        # finished here; its intervals are owed by the reports queue (MTU-Bench's metrics are
        # not plain means)
        self.run = services.outputs_import(
            benchmark=benchmark, task="S-S", outputs=outputs, name="imported"
        )
        assert self.run.intervals_status == "queued" and not self.run.intervals
        self.lock("evaluation_prediction", "ACCESS EXCLUSIVE")

    def inside(self) -> bool:
        status = Run.objects.values_list("intervals_status", flat=True).get(pk=self.run.pk)
        return status == "running" and waiting_for_lock("evaluation_prediction")

    def settled(self) -> bool:
        self.run.refresh_from_db()
        return self.run.intervals_status in ("done", "failed")

    def check(self) -> None:
        assert self.run.intervals_status == "done", self.run.intervals_error
        assert self.run.intervals_attempts == 2
        assert set(self.run.intervals) >= {"TS", "PS"}


class ComparisonCountsAhead(Scene):
    """No row of its own: what a lost worker left uncounted is counted by the comparison's
    fragment when first asked. The scene: the counting ahead held inside its reading, the
    worker killed, and the page then shows the right counts, counted once more at most."""

    ITEMS = 40

    def start(self) -> None:
        benchmark = make_counting_benchmark(self.tmp_path, self.ITEMS)

        def imported(name: str, wrong: int) -> Run:
            outputs = [
                PublishedOutput(str(i), f"Answer: {i + 1 + (i < wrong)}", "default")
                for i in range(self.ITEMS)
            ]
            return services.outputs_import(
                benchmark=benchmark, task="answer", outputs=outputs, name=name, split="default"
            )

        flush_test_broker()
        self.a = imported("first", wrong=0)
        # the second run's finishing queues its counting against the first
        self.b = imported("second", wrong=10)
        assert compared_counts_known(self.a, self.b) is None
        self.researcher = make_researcher(username="comparing")
        # the predictions are locked: the counting stops as it reads them
        self.lock("evaluation_prediction", "ACCESS EXCLUSIVE")

    def inside(self) -> bool:
        return waiting_for_lock("evaluation_prediction")

    def settled(self) -> bool:
        client = Client()
        client.force_login(self.researcher)
        page = client.get(
            reverse("evaluation:run-compare-counts"), {"a": self.a.pk, "b": self.b.pk}
        )
        return page.status_code == 200

    def check(self) -> None:
        counts = compared_counts_known(self.a, self.b)
        assert counts == {
            "shared": self.ITEMS,
            "agree": self.ITEMS - 10,
            "disagree": 10,
            "only_a": 0,
            "only_b": 0,
        }, counts


SCENES: dict[str, type[Scene]] = {
    "runs": Runs,
    "jobs": JudgeJobs,
    "import jobs": ImportJobs,
    "agreement reports": AgreementReports,
    "calibration reports": CalibrationReports,
    "run analyses": RunAnalyses,
    "run intervals": RunIntervals,
    "comparison counts ahead": ComparisonCountsAhead,
}


def test_every_kind_of_background_work_has_a_scene_here() -> None:
    assert sorted(SCENES) == sorted(kind.name for kind in background.kinds())


def wait(condition: Callable[[], bool], seconds: float, worker: Worker, what: str) -> float:
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < seconds, f"{what}:\n{worker.text()[-3000:]}"
        time.sleep(0.1)
    return time.monotonic() - started


@pytest.fixture
def stack() -> Iterator[contextlib.ExitStack]:
    flush_test_broker()
    with contextlib.ExitStack() as stack:
        yield stack
    flush_test_broker()


@pytest.mark.parametrize("name", SCENES)
def test_a_killed_worker_is_replaced_and_its_work_settles_once(
    name: str, stack: contextlib.ExitStack, tmp_path: Path, seeddata: Path, settings: Any
) -> None:
    scene = SCENES[name](stack, tmp_path, seeddata)
    scene.start()
    # given a worker inside the work
    with celery_worker(tmp_path, concurrency=2, **scene.env) as worker:
        wait(scene.inside, 60, worker, "the worker never got inside the work")
        # when it dies with everything it runs
        worker.kill()
    scene.killed()
    scene.release()
    # and a fresh worker starts
    with celery_worker(tmp_path, concurrency=2, **scene.env) as fresh:
        # then the work settles within the recovery interval (the fresh worker's start-up
        # sweep, once the dead worker's lease has run out), and the time the work takes
        interval = background.lease_seconds() + background.recovery_interval()
        took = wait(scene.settled, interval + scene.held_beyond_lease + 60, fresh, "never settled")
    scene.check()
    assert took < interval + scene.held_beyond_lease + 30
