"""An endpoint's two limits, each with one meaning: `max_attempts` is how many HTTP attempts one
call makes (retries with backoff), `max_claims` how many times workers may take an item (an item
whose worker keeps being lost is failed). Real PostgreSQL, Redis and a fake endpoint."""

from __future__ import annotations

import io
import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from django.utils import timezone

from evaluation import services
from evaluation.models import Endpoint, Prediction
from tests.evaluation.conftest import counting_answer, make_counting_benchmark, make_endpoint
from tests.factories import make_superuser
from tests.fake_openai import FakeOpenAI

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("broker")]


def test_http_attempts_are_per_call_whatever_the_claims(tmp_path: Path) -> None:
    # given an endpoint that fails each request twice, allowing 3 HTTP attempts and 1 claim
    benchmark = make_counting_benchmark(tmp_path, 2)
    with FakeOpenAI(responder=counting_answer, fail_first=2, fail_first_fault="500") as server:
        endpoint = make_endpoint(server.base_url, max_attempts=3, max_claims=1)
        run = services.run_launch(
            benchmark=benchmark, task="answer", endpoint=endpoint, split="default"
        )
        # when
        services.chunk_execute(run.pk, 0, 99)
    # then every item is answered on its third HTTP attempt, within its one claim
    predictions = list(run.predictions.all())
    assert {p.status for p in predictions} == {Prediction.Status.DONE}
    assert [p.usage["http_attempts"] for p in predictions] == [3, 3]
    assert [p.attempts for p in predictions] == [1, 1]


def test_lost_workers_count_against_the_claims_not_the_http_attempts(tmp_path: Path) -> None:
    # given two items whose workers were lost (leases run out): one claimed twice already, one
    # once; the endpoint allows 2 claims and a single HTTP attempt
    benchmark = make_counting_benchmark(tmp_path, 2)
    with FakeOpenAI(responder=counting_answer) as server:
        endpoint = make_endpoint(server.base_url, max_attempts=1, max_claims=2)
        run = services.run_launch(
            benchmark=benchmark, task="answer", endpoint=endpoint, split="default"
        )
        lost = timezone.now() - timedelta(seconds=5)
        for position, claims in ((0, 2), (1, 1)):
            run.predictions.filter(position=position).update(
                status=Prediction.Status.RUNNING, attempts=claims, lease_until=lost
            )
        # when another execution takes them back
        services.chunk_execute(run.pk, 0, 99)
        asked = server.total
    # then the one claimed max_claims times fails without a call, the other is redone once
    first, second = run.predictions.order_by("position")
    assert first.status == Prediction.Status.FAILED
    assert first.error.startswith("gave up after 2 claims: the worker running this item was lost")
    assert (second.status, second.attempts, second.output) == (
        Prediction.Status.DONE,
        2,
        "Answer: 3",
    )
    assert asked == 1


def test_the_command_the_api_and_the_admin_set_both_limits(client: Client) -> None:
    call_command(
        "add_endpoint",
        "cli",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
        "--attempts",
        "2",
        "--claims",
        "5",
        stdout=io.StringIO(),
    )
    assert Endpoint.objects.values_list("max_attempts", "max_claims").get(name="cli") == (2, 5)
    client.force_login(make_superuser())
    response = client.post(
        "/api/endpoints/",
        json.dumps(
            {
                "name": "api",
                "base_url": "http://127.0.0.1:9/v1",
                "model": "m",
                "max_attempts": 6,
                "max_claims": 1,
            }
        ),
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    assert (response.json()["max_attempts"], response.json()["max_claims"]) == (6, 1)
    page = client.get(f"/admin/evaluation/endpoint/{response.json()['id']}/change/")
    assert "HTTP attempts per call" in page.content.decode()
    assert "Claims per item" in page.content.decode()
    # a limit below one is refused where it is given
    refused = client.post(
        "/api/endpoints/",
        json.dumps(
            {"name": "zero", "base_url": "http://x.example/v1", "model": "m", "max_claims": 0}
        ),
        content_type="application/json",
    )
    assert refused.status_code == 400
    assert "max_claims" in refused.content.decode()


def test_the_migration_gives_each_endpoint_its_attempts_as_claims() -> None:
    before = [("evaluation", "0006_prediction_repeat_import_report")]
    after = [("evaluation", "0007_endpoint_max_claims")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps.get_model("evaluation", "Endpoint")
    old.objects.create(name="seven", base_url="http://x.example/v1", model="m", max_attempts=7)
    old.objects.create(name="one", base_url="http://x.example/v1", model="m", max_attempts=1)
    executor = MigrationExecutor(connection)
    executor.migrate(after)
    executor.loader.build_graph()
    old = executor.loader.project_state(after).apps.get_model("evaluation", "Endpoint")
    assert dict(old.objects.values_list("name", "max_claims")) == {"seven": 7, "one": 1}
    assert dict(old.objects.values_list("name", "max_attempts")) == {"seven": 7, "one": 1}
    # Back to the latest schema: later migrations add columns the next tests use.
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    executor.loader.build_graph()
    assert Endpoint.objects.count() == 2
