"""A run's chunks executed in this process against a fake endpoint: claim, answer, write,
finalise; the response cache; idempotent re-execution. Real PostgreSQL and Redis."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from evaluation import services
from evaluation.models import Prediction, ResponseCache, Run
from tests.evaluation.conftest import counting_answer, make_counting_benchmark, make_endpoint
from tests.fake_openai import FakeOpenAI

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("broker")]


def execute_all(run: Run) -> None:
    size = services.chunk_size()
    total = run.predictions.count()
    for first in range(0, total, size):
        services.chunk_execute(run.pk, first, first + size - 1)
    services.run_finalize(run_id=run.pk)


def test_a_run_goes_from_launch_to_metrics(tmp_path: Path, fake_server: FakeOpenAI) -> None:
    # given
    benchmark = make_counting_benchmark(tmp_path, 40)
    endpoint = make_endpoint(fake_server.base_url)
    # when
    run = services.run_launch(
        benchmark=benchmark, task="answer", endpoint=endpoint, split="default"
    )
    execute_all(run)
    # then
    run.refresh_from_db()
    assert run.status == Run.Status.DONE
    assert run.metrics["accuracy"] == 50.0
    predictions = list(run.predictions.order_by("position"))
    assert len(predictions) == 40
    assert {p.status for p in predictions} == {Prediction.Status.DONE}
    assert predictions[0].output == "Answer: 1"
    assert predictions[0].scores["accuracy"] == 100.0
    assert predictions[1].scores["accuracy"] == 0.0
    assert all(p.attempts == 1 and p.claim is None for p in predictions)
    assert fake_server.total == 40
    assert ResponseCache.objects.count() == 40


def test_a_second_identical_run_makes_no_endpoint_call(
    tmp_path: Path, fake_server: FakeOpenAI
) -> None:
    benchmark = make_counting_benchmark(tmp_path, 30)
    endpoint = make_endpoint(fake_server.base_url)
    first = services.run_launch(
        benchmark=benchmark, task="answer", endpoint=endpoint, split="default"
    )
    execute_all(first)
    calls = fake_server.total
    # when the same run is launched again
    second = services.run_launch(
        benchmark=benchmark, task="answer", endpoint=endpoint, split="default"
    )
    execute_all(second)
    # then
    second.refresh_from_db()
    assert fake_server.total == calls == 30
    assert second.metrics == Run.objects.get(pk=first.pk).metrics
    assert second.predictions.filter(cached=True).count() == 30


def test_executing_a_chunk_twice_changes_nothing(tmp_path: Path, fake_server: FakeOpenAI) -> None:
    benchmark = make_counting_benchmark(tmp_path, 12)
    endpoint = make_endpoint(fake_server.base_url)
    run = services.run_launch(
        benchmark=benchmark, task="answer", endpoint=endpoint, split="default"
    )
    execute_all(run)
    before = list(run.predictions.values_list("id", "status", "output", "attempts", "updated_at"))
    # when a redelivered chunk runs again
    report = services.chunk_execute(run.pk, 0, 99)
    # then it finds nothing to do
    assert report == {"skipped": 1} or report.get("claimed") == 0
    after = list(run.predictions.values_list("id", "status", "output", "attempts", "updated_at"))
    assert after == before
    assert fake_server.total == 12


def test_an_item_that_keeps_failing_is_failed_with_its_reason(tmp_path: Path) -> None:
    benchmark = make_counting_benchmark(tmp_path, 6)

    def answer(request: dict) -> str:
        return "Answer: 1"

    with FakeOpenAI(responder=answer, fail_first=2, fail_first_fault="500") as server:
        endpoint = make_endpoint(server.base_url, max_attempts=2)
        run = services.run_launch(
            benchmark=benchmark, task="answer", endpoint=endpoint, split="default"
        )
        execute_all(run)
    run.refresh_from_db()
    assert run.status == Run.Status.DONE
    failed = run.predictions.filter(status=Prediction.Status.FAILED)
    assert failed.count() == 6
    assert all("gave up after 2 attempts" in p.error and "HTTP 500" in p.error for p in failed)
    # a failed item counts against the model
    assert run.metrics["accuracy"] == 0.0


def counting_run(tmp_path: Path, items: int, server: FakeOpenAI, concurrency: int) -> Run:
    """A run launched over `items` counting questions, on an endpoint of the server."""
    benchmark = make_counting_benchmark(tmp_path, items)
    endpoint = make_endpoint(server.base_url, max_concurrency=concurrency)
    return services.run_launch(
        benchmark=benchmark, task="answer", endpoint=endpoint, split="default"
    )


def test_answers_arriving_one_by_one_are_written_a_window_at_a_time(tmp_path: Path) -> None:
    # given 80 items answered four at a time, one answer every few milliseconds
    with FakeOpenAI(responder=counting_answer, latency_ms=30) as server:
        run = counting_run(tmp_path, 80, server, concurrency=4)
        # when the run is executed
        execute_all(run)
    # then every answer is stored, in few write transactions (one statement time, now(), each):
    # a transaction per answer or two costs the database a commit each
    rows = list(run.predictions.values_list("status", "updated_at"))
    assert {status for status, _ in rows} == {Prediction.Status.DONE}
    writes = len({updated_at for _, updated_at in rows})
    assert len(rows) / writes >= 5, f"{writes} write transactions for {len(rows)} answers"


def test_lanes_do_not_wait_for_rows_while_the_run_has_more(tmp_path: Path, settings: Any) -> None:
    # given 80 items in chunks of 20, answered four at a time
    settings.EVALUATION_CHUNK_SIZE = 20
    with FakeOpenAI(responder=counting_answer, latency_ms=40) as server:
        run = counting_run(tmp_path, 80, server, concurrency=4)
        # when one execution answers its chunk and then the rest of the run
        report = services.chunk_execute(run.pk, 0, 19)
    # then it took the later rows before its lanes ran out (a lane that finds no row waits
    # for the claim, the items and the cache lookups, and every other lane with it)
    assert report["claimed"] == 80 and report["done"] == 80
    assert report.get("waited", 0) == 0, report
    assert server.total == 80


def test_the_last_answers_are_written_when_the_lanes_are_done_not_after_the_window(
    tmp_path: Path, settings: Any
) -> None:
    # given a write window far longer than the answers take
    settings.EVALUATION_WRITE_INTERVAL_SECONDS = 5.0
    with FakeOpenAI(responder=counting_answer, latency_ms=20) as server:
        run = counting_run(tmp_path, 12, server, concurrency=2)
        # when one execution answers them all
        started = time.monotonic()
        report = services.chunk_execute(run.pk, 0, 11)
        elapsed = time.monotonic() - started
    # then what arrived after the first write is written as soon as the last lane is done
    assert report["done"] == 12
    assert run.predictions.filter(status=Prediction.Status.DONE).count() == 12
    assert elapsed < 2.5, f"{elapsed:.2f} s: the writer waited out its window"
