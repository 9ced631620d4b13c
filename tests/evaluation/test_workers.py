"""Runs answered by real Celery workers (subprocesses) through the real broker, against a fake
OpenAI-compatible server that injects faults; a worker killed mid-run."""

from __future__ import annotations

import time
from decimal import Decimal
from pathlib import Path

import pytest

from evaluation import lifecycle, services
from evaluation.models import Prediction, ResponseCache, Run
from tests.evaluation.conftest import counting_answer, make_counting_benchmark, make_endpoint
from tests.fake_openai import FakeOpenAI
from tests.workers import celery_worker

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("broker"),
    pytest.mark.slow,
]


def wait_for(run: Run, status: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if run.status == status:
            return
        time.sleep(0.2)
    counts = dict(run.predictions.values_list("status").annotate().values_list("status", "id"))
    raise AssertionError(f"run {run.pk} is {run.status} after {timeout}s; {counts}")


def test_faults_are_retried_and_every_item_ends_answered_or_failed(tmp_path: Path) -> None:
    # given 500 items and a server that fails a fifth of its requests in every way it can
    benchmark = make_counting_benchmark(tmp_path, 500)
    faults = {"429": 0.06, "500": 0.06, "timeout": 0.02, "truncated": 0.03, "empty_choices": 0.03}
    with FakeOpenAI(
        responder=counting_answer, faults=faults, seed=3, retry_after=0.2, timeout_s=3
    ) as server:
        endpoint = make_endpoint(
            server.base_url, max_concurrency=16, timeout_seconds=1.0, max_attempts=3
        )
        with celery_worker(tmp_path, concurrency=2):
            # when
            run = services.run_launch(
                benchmark=benchmark, task="answer", endpoint=endpoint, split="default"
            )
            wait_for(run, Run.Status.DONE, timeout=240)
    # then: one prediction per sample, each answered or failed with its reason
    predictions = list(run.predictions.all())
    assert len(predictions) == 500
    assert len({p.sample_id for p in predictions}) == 500
    statuses = {p.status for p in predictions}
    assert statuses <= {Prediction.Status.DONE, Prediction.Status.FAILED}
    done = [p for p in predictions if p.status == Prediction.Status.DONE]
    failed = [p for p in predictions if p.status == Prediction.Status.FAILED]
    assert all(p.output.startswith("Answer: ") for p in done)
    assert all(p.error.startswith("gave up after 3 attempts; last: ") for p in failed)
    # with a 20% fault rate and 3 attempts, about 0.2^3 = 0.8% fail for good
    assert len(failed) < 25, [p.error for p in failed][:5]
    retried = [p for p in done if p.usage["http_attempts"] > 1]
    assert len(retried) > 50
    kinds = " ".join(p.error for p in failed)
    assert run.metrics["accuracy"] == pytest.approx(
        100 * sum(p.scores["accuracy"] == 100.0 for p in predictions) / 500, abs=0.01
    ), kinds


def test_a_worker_killed_mid_run_is_replaced_and_each_sample_answered_once(
    tmp_path: Path,
) -> None:
    # given a slow server, so that the kill lands while items are in flight
    benchmark = make_counting_benchmark(tmp_path, 120)
    with FakeOpenAI(responder=counting_answer, latency_ms=150) as server:
        endpoint = make_endpoint(server.base_url, max_concurrency=4, max_attempts=4)
        with celery_worker(tmp_path, concurrency=1) as worker:
            run = services.run_launch(
                benchmark=benchmark, task="answer", endpoint=endpoint, split="default"
            )
            deadline = time.monotonic() + 60
            while run.predictions.filter(status=Prediction.Status.DONE).count() < 10:
                assert time.monotonic() < deadline, worker.text()[-2000:]
                time.sleep(0.1)
            # when the worker dies without warning
            worker.kill()
        in_flight = run.predictions.filter(status=Prediction.Status.RUNNING).count()
        assert in_flight > 0
        # and another one starts
        with celery_worker(tmp_path, concurrency=1):
            wait_for(run, Run.Status.DONE, timeout=120)
        requests = server.total
    # then every sample has exactly one prediction, answered
    predictions = run.predictions.all()
    assert predictions.count() == 120
    assert predictions.filter(status=Prediction.Status.DONE).count() == 120
    assert run.metrics["accuracy"] == 50.0
    # the lost items were asked again, no more than once each
    assert 120 <= requests <= 120 + in_flight


def test_a_budget_stops_a_run_half_way_and_a_larger_one_finishes_the_rest(
    tmp_path: Path,
) -> None:
    # given what answering 40 items costs in tokens (then forgotten by the response cache)
    benchmark = make_counting_benchmark(tmp_path, 40)
    with FakeOpenAI(responder=counting_answer) as server:
        endpoint = make_endpoint(server.base_url, max_concurrency=4)
        with celery_worker(tmp_path, concurrency=2):
            measured = services.run_launch(
                benchmark=benchmark, task="answer", endpoint=endpoint, split="default"
            )
            wait_for(measured, Run.Status.DONE, timeout=120)
            whole = sum(p.prompt_tokens + p.completion_tokens for p in measured.predictions.all())
            ResponseCache.objects.all().delete()
            # when a run may spend half that
            run = services.run_launch(
                benchmark=benchmark,
                task="answer",
                endpoint=endpoint,
                split="default",
                budget=Decimal(whole // 2),
            )
            wait_for(run, Run.Status.CANCELLED, timeout=120)
            # then it stops about half way, within its budget, the rest pending
            done = run.predictions.filter(status=Prediction.Status.DONE)
            spent = sum(p.prompt_tokens + p.completion_tokens for p in done)
            assert 15 <= done.count() <= 20, done.count()
            assert spent <= whole // 2
            assert run.predictions.exclude(status=Prediction.Status.DONE).count() == (
                run.predictions.filter(status=Prediction.Status.PENDING).count()
            )
            assert "stopped at its budget" in run.error
            # when it is resumed with the whole budget, exactly the rest is asked
            lifecycle.resume(services.RUNS, run, budget=Decimal(whole))
            wait_for(run, Run.Status.DONE, timeout=120)
        for i in range(40):
            assert server.count_for(f"What number comes after {i}?") == 2, i
    assert run.predictions.filter(status=Prediction.Status.DONE).count() == 40
    assert sum(p.prompt_tokens + p.completion_tokens for p in run.predictions.all()) == whole
