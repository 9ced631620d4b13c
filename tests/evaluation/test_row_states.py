"""A running run's rows show their true state: the rows a worker holds are "Claimed" until a
lane sends them, only the ones sent are "Running" (never more than the endpoint's concurrency),
and the page's poll swaps a row in when it moves from one to the other. Real PostgreSQL,
Redis, a fake endpoint that holds each answer, the execution in a thread of this process."""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from evaluation import services
from evaluation.inference import PREDICTIONS
from evaluation.models import Prediction, Run
from evaluation.work.locks import release_held
from tests.evaluation.conftest import counting_answer, make_counting_benchmark, make_endpoint
from tests.factories import make_researcher
from tests.fake_openai import FakeOpenAI

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("broker")]

ROW = re.compile(
    r'<tr id="prediction-(\d+)".*?<span class="status status-([a-z]+)"[^>]*>([^<]+)<', re.S
)


def wait_for(condition: Callable[[], bool], seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.fixture
def held_run(tmp_path: Path) -> Iterator[tuple[Run, FakeOpenAI]]:
    """12 items, concurrency 2, every answer held 1.5 s; one execution holds all 12 rows."""
    with FakeOpenAI(responder=counting_answer, latency_ms=1500) as server:
        benchmark = make_counting_benchmark(tmp_path, 12)
        endpoint = make_endpoint(server.base_url, max_concurrency=2, timeout_seconds=30)
        run = services.run_launch(
            benchmark=benchmark, task="answer", endpoint=endpoint, split="default"
        )
        errors: list[BaseException] = []

        def execute() -> None:
            try:
                services.chunk_execute(run.pk, 0, 11)
            except BaseException as error:  # reported when the test ends
                errors.append(error)
            finally:
                connection.close()

        thread = threading.Thread(target=execute, daemon=True)
        thread.start()
        try:
            yield run, server
        finally:
            thread.join(60)
            assert not errors, errors


def shown_rows(client: Client, run: Run) -> dict[int, tuple[str, str]]:
    html = client.get(f"/runs/{run.pk}/").content.decode()
    return {int(pk): (css, label) for pk, css, label in ROW.findall(html)}


def test_only_the_rows_sent_read_running(client: Client, held_run: tuple[Run, FakeOpenAI]) -> None:
    run, server = held_run
    client.force_login(make_researcher(username="ada"))
    # when the worker holds every row and its two lanes have sent two of them
    wait_for(lambda: server.total >= 2 and run.predictions.exclude(started_at=None).count() == 2)
    wait_for(lambda: run.predictions.filter(status=Prediction.Status.RUNNING).count() == 12)
    # then the page says so: two rows running, the other ten claimed, none of them done
    rows = shown_rows(client, run)
    assert len(rows) == 12
    states = sorted(label for _css, label in rows.values())
    assert states == ["Claimed"] * 10 + ["Running"] * 2, rows
    assert {css for css, label in rows.values() if label == "Claimed"} == {"claimed"}
    # and the progress panel counts what is being answered, not what is held
    panel = client.get(f"/runs/{run.pk}/", {"part": "progress"}).content.decode()
    assert re.search(r"<strong>2</strong> being answered", panel), panel


def test_the_poll_swaps_in_a_row_that_moved_from_claimed_to_running(
    client: Client, held_run: tuple[Run, FakeOpenAI]
) -> None:
    run, _server = held_run
    client.force_login(make_researcher(username="ada"))
    wait_for(lambda: run.predictions.exclude(started_at=None).count() == 2)
    html = client.get(f"/runs/{run.pk}/").content.decode()
    watch = re.search(r'hx-get="[^"]*watch=([^"&]+)', html)
    assert watch is not None, "the page of a running run polls its unsettled rows"
    watched = re.sub("%2C", ",", re.sub("%2E", ".", watch.group(1)))
    claimed = [entry for entry in watched.split(",") if entry.endswith(".claimed")]
    assert len(claimed) == 10, watched
    # when the first two answers come back and the lanes send the next two
    wait_for(lambda: run.predictions.filter(status=Prediction.Status.DONE).count() >= 2)
    wait_for(
        lambda: (
            run.predictions.filter(status=Prediction.Status.RUNNING)
            .exclude(started_at=None)
            .count()
            == 2
        )
    )
    part = client.get(f"/runs/{run.pk}/", {"part": "rows", "watch": watched}).content.decode()
    # then the poll's answer carries the rows that moved, the newly sent ones among them
    swapped = {int(pk): label for pk, _css, label in ROW.findall(part)}
    sent = set(
        run.predictions.filter(status=Prediction.Status.RUNNING)
        .exclude(started_at=None)
        .values_list("pk", flat=True)
    )
    assert sent <= set(swapped), (sent, swapped)
    assert {swapped[pk] for pk in sent} == {"Running"}


def test_rows_given_back_are_no_longer_shown_as_sent(tmp_path: Path) -> None:
    # given a row an execution holds and had sent
    benchmark = make_counting_benchmark(tmp_path, 2)
    run = services.run_launch(
        benchmark=benchmark,
        task="answer",
        endpoint=make_endpoint("http://127.0.0.1:9/v1"),
        split="default",
    )
    token = uuid.uuid4()
    row = run.predictions.order_by("position").first()
    assert row is not None
    Prediction.objects.filter(pk=row.pk).update(
        status=Prediction.Status.RUNNING, claim=token, started_at=timezone.now()
    )
    # when the execution gives back what it holds (it broke off)
    release_held(token, run.pk, PREDICTIONS)
    # then the row is pending and no longer marked as sent
    row.refresh_from_db()
    assert row.status == Prediction.Status.PENDING
    assert row.started_at is None


def test_a_settled_row_keeps_when_it_was_sent(tmp_path: Path) -> None:
    with FakeOpenAI(responder=counting_answer, latency_ms=200) as server:
        benchmark = make_counting_benchmark(tmp_path, 4)
        run = services.run_launch(
            benchmark=benchmark,
            task="answer",
            endpoint=make_endpoint(server.base_url, max_concurrency=2),
            split="default",
        )
        services.chunk_execute(run.pk, 0, 3)
    rows = list(run.predictions.all())
    assert {row.status for row in rows} == {Prediction.Status.DONE}
    # every answer took longer than a write window: each row's sending was written
    assert all(row.started_at is not None for row in rows)
