"""Run.score_names: every score name of a finished run in the order the predictions CSV lists
them, stored so that the CSV's header needs no scan of a million predictions' scores. Every
path that writes a run's scores must leave them equal to what the scan finds (the scan is
evaluation.selectors.prediction_score_names, the CSV's order until then); a path that forgets
them fails here."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from evaluation import lifecycle, services
from evaluation.models import Prediction, Run
from evaluation.selectors import prediction_score_names
from tests.evaluation.conftest import execute_run, make_counting_benchmark, make_endpoint
from tests.evaluation.test_predictions_csv import HOSTILE_SCORES, hostile_run
from tests.factories import make_researcher
from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.usefixtures("broker")


def assert_stored_as_scanned(run: Run) -> None:
    run.refresh_from_db()
    assert run.status == Run.Status.DONE
    assert run.score_names, "a finished run with scores stores their names"
    assert run.score_names == prediction_score_names(run.pk)


def launched(tmp_path: Path, fake_server: FakeOpenAI, items: int) -> Run:
    """A run of the counting benchmark's answer task, launched against the fake server."""
    return services.run_launch(
        benchmark=make_counting_benchmark(tmp_path, items),
        task="answer",
        endpoint=make_endpoint(fake_server.base_url),
        split="default",
    )


@pytest.mark.django_db(transaction=True)
def test_a_launched_run_stores_its_score_names_when_it_finishes(
    tmp_path: Path, fake_server: FakeOpenAI
) -> None:
    run = launched(tmp_path, fake_server, 12)
    assert Run.objects.get(pk=run.pk).score_names is None
    execute_run(run)
    assert_stored_as_scanned(run)


@pytest.mark.django_db(transaction=True)
def test_resuming_forgets_the_names_until_the_run_finishes_again(
    tmp_path: Path, fake_server: FakeOpenAI
) -> None:
    run = launched(tmp_path, fake_server, 6)
    execute_run(run)
    # given a finished run with a failed item, whose retry may bring other names
    Prediction.objects.filter(run=run, position=2).update(status="failed", scores={})
    Run.objects.filter(pk=run.pk).update(score_names=["stale"])
    # when it is resumed, its names are unknown (the CSV scans) until it finishes again
    lifecycle.resume(services.RUNS, Run.objects.get(pk=run.pk), retry_failed=True)
    assert Run.objects.get(pk=run.pk).score_names is None
    execute_run(run)
    assert_stored_as_scanned(run)


@pytest.mark.django_db
def test_an_imported_run_stores_its_score_names(tmp_path: Path) -> None:
    benchmark = make_counting_benchmark(tmp_path, 5)
    path = tmp_path / "outputs.jsonl"
    path.write_text(
        "".join(
            json.dumps({"sample_id": str(i), "output": f"Answer: {i + 1}"}) + "\n" for i in range(5)
        )
    )
    run = services.predictions_import(
        benchmark=benchmark,
        task="answer",
        split="default",
        path=path,
        name="published",
        fmt="generic",
    )
    assert_stored_as_scanned(run)


@pytest.mark.django_db
def test_the_order_is_the_scans_on_hostile_scores() -> None:
    # Keys in another order on each row, a new name on a later row, non-object scores.
    run = hostile_run()
    scores = [p.scores for p in run.predictions.order_by("position")]
    assert scores == HOSTILE_SCORES
    assert services.score_names_of([*scores, ["not", "an", "object"], None]) == (
        prediction_score_names(run.pk)
    )


@pytest.mark.django_db
def test_the_migration_fills_finished_runs_as_the_scan_did() -> None:
    migration = importlib.import_module("evaluation.migrations.0015_run_score_names")
    done = hostile_run()
    running = hostile_run(tag="running")
    Run.objects.filter(pk=running.pk).update(status=Run.Status.RUNNING)
    empty = hostile_run(tag="empty")
    empty.predictions.all().delete()
    with connection.cursor() as cursor:
        cursor.execute(migration.FILL_SQL)
    assert Run.objects.get(pk=done.pk).score_names == prediction_score_names(done.pk)
    assert len(Run.objects.get(pk=done.pk).score_names) == 8
    assert Run.objects.get(pk=running.pk).score_names is None
    assert Run.objects.get(pk=empty.pk).score_names == []


@pytest.mark.django_db
def test_the_csv_of_a_finished_run_does_not_scan_its_scores(client: Client) -> None:
    run = hostile_run()
    Run.objects.filter(pk=run.pk).update(score_names=prediction_score_names(run.pk))
    client.force_login(make_researcher())
    with CaptureQueriesContext(connection) as queries:
        response = client.get(f"/runs/{run.pk}/predictions.csv")
        header = next(iter(response.streaming_content))
    assert not [q for q in queries.captured_queries if "jsonb_object_keys" in q["sql"]]
    assert b"score:=evil" in header and b"score:nested" in header
    # a run whose names are unknown (not finished) is scanned
    Run.objects.filter(pk=run.pk).update(score_names=None, status=Run.Status.CANCELLED)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(f"/runs/{run.pk}/predictions.csv")
        assert next(iter(response.streaming_content)) == header
    assert [q for q in queries.captured_queries if "jsonb_object_keys" in q["sql"]]
