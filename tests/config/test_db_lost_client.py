"""A client lost with its link is found by PostgreSQL within seconds (config.db: TCP keepalives
and tcp_user_timeout as startup options of every connection), and the sweep that takes back lost
work skips rows a lost session still holds locked (evaluation.work.locks.take_back_lost): a
worker host cut inside a write transaction left its session idle in that transaction, holding
its rows' locks for the kernel's two hours, and every other worker's sweep waited on them
(perf/scale_out.py's lost host, seen in 2 of 4 runs)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import psycopg
import pytest
from django.db import connection
from django.utils import timezone

from evaluation import inference
from evaluation.models import Prediction, Run
from evaluation.work.locks import take_back_lost
from tests.evaluation.conftest import make_counting_benchmark, make_endpoint


@pytest.mark.django_db
def test_a_session_tells_postgresql_to_find_a_lost_client_within_seconds() -> None:
    shown = {}
    with connection.cursor() as cursor:
        for name in (
            "tcp_keepalives_idle",
            "tcp_keepalives_interval",
            "tcp_keepalives_count",
            "tcp_user_timeout",
        ):
            cursor.execute(f"SHOW {name}")
            shown[name] = cursor.fetchone()[0]
    # over TCP (the tests' DATABASE_URL); PostgreSQL's defaults are 0: the kernel's two hours
    assert shown == {
        "tcp_keepalives_idle": "5",
        "tcp_keepalives_interval": "2",
        "tcp_keepalives_count": "3",
        "tcp_user_timeout": "10000",  # ms
    }


@pytest.mark.django_db(transaction=True)
def test_the_sweep_skips_a_lost_item_whose_row_a_lost_session_still_locks(tmp_path: Path) -> None:
    # given a running run with two items whose leases ran out
    benchmark = make_counting_benchmark(tmp_path, 2)
    run = Run.objects.create(
        benchmark=benchmark,
        task="answer",
        split="default",
        endpoint=make_endpoint("http://127.0.0.1:9/v1"),
        source=Run.Source.LAUNCHED,
        model_name="m",
        status=Run.Status.RUNNING,
    )
    lost = timezone.now() - timedelta(seconds=5)
    for position, sample in enumerate(benchmark.samples.order_by("id")):
        Prediction.objects.create(
            run=run,
            sample=sample,
            position=position,
            status="running",
            attempts=1,
            lease_until=lost,
        )
    held = run.predictions.get(position=0)
    # and a session (the lost worker's) idle in a transaction that wrote the first item
    settings = connection.settings_dict
    with psycopg.connect(
        host=settings["HOST"],
        port=settings["PORT"] or 5432,
        user=settings["USER"],
        dbname=settings["NAME"],
    ) as lost_session:
        lost_session.execute("UPDATE evaluation_prediction SET note = 'x' WHERE id = %s", [held.id])
        with connection.cursor() as cursor:
            cursor.execute("SET statement_timeout = '5s'")
        try:
            # when the sweep runs
            taken = take_back_lost(inference.PREDICTIONS)
        finally:
            with connection.cursor() as cursor:
                cursor.execute("RESET statement_timeout")
        # then it took the other item at once, and left the locked one for a later sweep
        assert taken == [(run.pk, 1)]
        lost_session.rollback()
    # once the lost session has ended (its transaction rolled back), the next sweep takes it
    assert take_back_lost(inference.PREDICTIONS) == [(run.pk, 0)]
    assert list(run.predictions.order_by("position").values_list("status", "attempts")) == [
        ("pending", 1),
        ("pending", 1),
    ]
