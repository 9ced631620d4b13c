"""Claiming more of a run (an execution's refill) reads the run's unsettled items only: the
query must not walk every answered item before the pending ones, or a run's claims cost
PostgreSQL time quadratic in its size (each refill of 100 re-reads all that is settled)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from evaluation import services
from evaluation.inference import PREDICTIONS
from evaluation.models import Prediction
from evaluation.work.locks import claim, extend_leases
from tests.evaluation.conftest import make_counting_benchmark, make_endpoint

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("broker")]


def rows_read_and_dropped(plan: Any) -> int:
    """Rows the plan's nodes read and then dropped by a filter, summed over the tree."""
    removed = int(plan.get("Rows Removed by Filter", 0))
    return removed + sum(rows_read_and_dropped(child) for child in plan.get("Plans", []))


def test_a_refill_does_not_read_the_runs_settled_items(tmp_path: Path) -> None:
    # given a run of 2000 items whose first 1500 are answered
    benchmark = make_counting_benchmark(tmp_path, 2000)
    endpoint = make_endpoint("http://127.0.0.1:9/v1")
    run = services.run_launch(
        benchmark=benchmark, task="answer", endpoint=endpoint, split="default"
    )
    Prediction.objects.filter(run=run, position__lt=1500).update(status=Prediction.Status.DONE)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE evaluation_prediction")
    # when an execution claims 100 more of the run, anywhere
    with CaptureQueriesContext(connection) as queries:
        claimed, exhausted = claim(PREDICTIONS, run.pk, None, None, uuid.uuid4(), 3, 100)
    # then it gets the next 100 pending items
    assert len(claimed) == 100 and not exhausted
    positions = dict(Prediction.objects.filter(run=run).values_list("id", "position"))
    assert sorted(positions[c.id] for c in claimed) == list(range(1500, 1600))
    # and its query, run again, reads no answered item to find the next ones: at most the
    # unsettled (the 100 just claimed, running under a live lease), not the 1500 answered
    select = next(q["sql"] for q in queries if "SKIP LOCKED" in q["sql"])
    assert_reads_at_most(select, 100)


def test_extending_an_executions_leases_reads_its_runs_unsettled_items_only(
    tmp_path: Path,
) -> None:
    # given a long finished run and a running one an execution holds 100 items of
    endpoint = make_endpoint("http://127.0.0.1:9/v1")
    old = services.run_launch(
        benchmark=make_counting_benchmark(tmp_path, 3000, name="Old"),
        task="answer",
        endpoint=endpoint,
        split="default",
    )
    Prediction.objects.filter(run=old).update(status=Prediction.Status.DONE)
    run = services.run_launch(
        benchmark=make_counting_benchmark(tmp_path, 200, name="New"),
        task="answer",
        endpoint=endpoint,
        split="default",
    )
    token = uuid.uuid4()
    claimed, _ = claim(PREDICTIONS, run.pk, 0, 99, token, 3)
    assert len(claimed) == 100
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE evaluation_prediction")
    # when its heartbeat extends the leases
    with CaptureQueriesContext(connection) as queries:
        assert extend_leases(token, run.pk, PREDICTIONS) == "running"
    # then the leases are extended, and the statement read none of the other run's items
    assert Prediction.objects.filter(claim=token, lease_until__isnull=False).count() == 100
    update = next(q["sql"] for q in queries if q["sql"].lstrip().startswith("UPDATE"))
    assert_reads_at_most(update, 100)


def assert_reads_at_most(statement: str, rows: int) -> None:
    """The statement, run again under EXPLAIN ANALYZE (and rolled back), reads and drops at most
    `rows` rows to find what it returns or changes."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {statement}")
        plan = cursor.fetchone()[0]
        transaction.set_rollback(True)
    plan = json.loads(plan) if isinstance(plan, str) else plan
    assert rows_read_and_dropped(plan[0]["Plan"]) <= rows, json.dumps(plan, indent=1)
