"""The read-only API of runs, predictions and endpoints."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client

from evaluation.models import Prediction, Run
from tests.evaluation.conftest import make_counting_benchmark, make_endpoint
from tests.factories import make_researcher, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(tmp_path: Path) -> Run:
    benchmark = make_counting_benchmark(tmp_path, 3)
    endpoint = make_endpoint("http://127.0.0.1:9/v1")
    run = Run.objects.create(
        benchmark=benchmark,
        task="answer",
        split="default",
        endpoint=endpoint,
        model_name="m",
        status=Run.Status.DONE,
        metrics={"unparsed": 0.0, "accuracy": 66.67},
    )
    for position, sample in enumerate(benchmark.samples.order_by("id")):
        Prediction.objects.create(
            run=run,
            sample=sample,
            position=position,
            status=Prediction.Status.DONE if position else Prediction.Status.FAILED,
            output=f"Answer: {position + 1}",
            scores={"accuracy": 100.0 if position else 0.0},
        )
    return run


def test_the_api_needs_a_login(client: Client, run: Run) -> None:
    assert client.get("/api/runs/").status_code == 403


def test_the_root_lists_every_collection(client: Client) -> None:
    client.force_login(make_user())
    root = client.get("/api/").json()
    assert set(root) == {
        "benchmarks",
        "tools",
        "samples",
        "endpoints",
        "runs",
        "predictions",
        "campaigns",
        "agreement",
    }


def test_runs_show_progress_and_metrics_in_the_tasks_order(client: Client, run: Run) -> None:
    client.force_login(make_researcher())
    body = client.get("/api/runs/", {"benchmark": run.benchmark.name, "task": "answer"}).json()
    assert body["count"] == 1
    found = body["results"][0]
    assert (found["items"], found["done"], found["failed"]) == (3, 2, 1)
    assert list(found["metrics"]) == ["accuracy", "unparsed"]  # the headline first
    assert client.get("/api/runs/", {"status": "nonsense"}).status_code == 400


def test_predictions_of_a_run_in_order(client: Client, run: Run) -> None:
    client.force_login(make_researcher())
    assert client.get("/api/predictions/").status_code == 400  # the run is required
    body = client.get("/api/predictions/", {"run": run.pk}).json()
    assert [p["position"] for p in body["results"]] == [0, 1, 2]
    assert body["results"][1]["scores"] == {"accuracy": 100.0}
    failed = client.get("/api/predictions/", {"run": run.pk, "status": "failed"}).json()
    assert [p["external_id"] for p in failed["results"]] == ["0"]
