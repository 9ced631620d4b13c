"""A run's bootstrap intervals: a suite whose metrics are plain means (the generic suite
declares it, `mean_metrics`) is resampled without its aggregate being called a thousand times,
and the intervals are stored with the metrics when the run is finalized, with no task of their
own (issue 19: the intervals of a 2,000-item run took seconds of CPU, after the run, on the
reports queue). Other runs get the reports task (run_compute_intervals). Real PostgreSQL, the
fake OpenAI server at the edge."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import redis
from django.conf import settings

import benchmarks.suites.generic as generic
from benchmarks.kit.protocol import Context, Scored, Scores
from evaluation import services
from evaluation.models import Run
from tests.evaluation.conftest import execute_run, make_counting_benchmark, make_endpoint

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("broker")]


def queued(queue: str) -> int:
    return int(redis.from_url(settings.CELERY_BROKER_URL).llen(queue))


def counted_aggregate(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The generic suite's answer task with its aggregate counting its calls."""
    calls: list[int] = []
    evaluator = generic.SUITE.evaluator
    task = evaluator.part("answer")
    real = task.aggregate

    def aggregate(scored: Sequence[Scored], ctx: Context) -> Scores:
        calls.append(len(scored))
        return real(scored, ctx)

    monkeypatch.setitem(evaluator.parts, "answer", dataclasses.replace(task, aggregate=aggregate))
    return calls


def finished_run(tmp_path: Path, fake_server: Any, count: int, **options: Any) -> Run:
    benchmark = make_counting_benchmark(tmp_path, count)
    run = services.run_launch(
        benchmark=benchmark,
        task="answer",
        endpoint=make_endpoint(fake_server.base_url),
        split="default",
        options=options,
    )
    execute_run(run)
    assert run.status == Run.Status.DONE, run.error
    return run


def test_the_generic_suites_means_are_resampled_directly(
    tmp_path: Path, fake_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a finished run of 200 items, every even one right: accuracy 50%
    run = finished_run(tmp_path, fake_server, 200)
    assert run.metrics == {"accuracy": 50.0, "unparsed": 0.0}
    calls = counted_aggregate(monkeypatch)
    # when its intervals are computed
    intervals = services.run_compute_intervals(run_id=run.pk, resamples=1000)
    # then the aggregate ran once (the check of the declaration), not once per resample
    assert calls == [200]
    # and they are the mean's: 50 +/- 1.96 * sqrt(2500 / 200) = 50 +/- 6.9
    low, high = intervals["accuracy"]
    assert 42 <= low <= 44 and 56 <= high <= 58
    assert intervals["unparsed"] == [0.0, 0.0]
    run.refresh_from_db()
    assert run.intervals == intervals


def test_trials_are_resampled_through_the_aggregate(
    tmp_path: Path, fake_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a run of 2 trials: its metrics are means and sds over the trials, not one mean
    run = finished_run(tmp_path, fake_server, 20, trials=2)
    calls = counted_aggregate(monkeypatch)
    intervals = services.run_compute_intervals(run_id=run.pk, resamples=50)
    # each resample's 2 trials, each through the suite's aggregate
    assert len(calls) == 2 * 50
    low, high = intervals["accuracy"]
    assert low < 50 < high


def test_a_runs_mean_intervals_are_stored_with_its_metrics(
    tmp_path: Path, fake_server: Any
) -> None:
    # given a run of 100 items, every even one right
    # when its last chunk finalizes it
    run = finished_run(tmp_path, fake_server, 100)
    # then its intervals are there with its metrics, and no task was queued for them
    assert run.metrics == {"accuracy": 50.0, "unparsed": 0.0}
    low, high = run.intervals["accuracy"]
    assert low < 50 < high
    assert queued("reports") == 0
    # the same intervals the reports task computes (same seed, same resamples)
    assert services.run_compute_intervals(run_id=run.pk) == run.intervals


def test_a_run_of_trials_gets_its_intervals_from_the_reports_task(
    tmp_path: Path, fake_server: Any
) -> None:
    run = finished_run(tmp_path, fake_server, 20, trials=2)
    assert run.intervals == {}
    assert queued("reports") == 1
