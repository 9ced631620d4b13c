"""Annotating depends on PostgreSQL only: with Redis killed or frozen, the studio's pages and API
answer, and quickly (the cache and the throttles count in each process's memory meanwhile, and
sessions are never in Redis); a page that queues work says the queue is unreachable and saves
nothing. The Redis here is the test's own (tests/private_redis.py), never the shared one."""

from __future__ import annotations

import ast
import logging
import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from django.conf import settings as django_settings
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.throttling import ScopedRateThrottle

from annotation.models import AgreementReport, CalibrationReport, Label
from benchmarks.models import ImportJob
from config import cache as shared_cache
from config.throttle import OneTripThrottle
from evaluation import lifecycle, services
from evaluation.models import Run, RunAnalysis
from tests.annotation.conftest import motivation_campaign
from tests.evaluation.conftest import make_counting_benchmark, make_endpoint
from tests.factories import TEST_PASSWORD, make_researcher, make_superuser, make_user
from tests.private_redis import PrivateRedis, private_redis

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
# Every request below must answer within this, whatever Redis does.
BOUND = 2.0


@pytest.fixture
def server(tmp_path: Path, settings: Any) -> Iterator[PrivateRedis]:
    with private_redis(tmp_path / "redis") as redis_server:
        settings.CACHES = {
            "default": {**django_settings.CACHES["default"], "LOCATION": redis_server.url(0)}
        }
        settings.CELERY_BROKER_URL = redis_server.url(1)
        cache.clear()
        try:
            yield redis_server
        finally:
            redis_server.resume()
            shared_cache.outages_forget()


def fail(server: PrivateRedis, fault: str) -> None:
    server.kill() if fault == "killed" else server.freeze()


class Timed:
    def __init__(self, client: Client) -> None:
        self.client = client
        self.slowest = 0.0

    def __call__(self, method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        start = time.monotonic()
        response = getattr(self.client, method)(path, *args, **kwargs)
        self.slowest = max(self.slowest, time.monotonic() - start)
        # never an error of the server's own; 503 (the queue is unreachable) says what is down
        assert response.status_code < 500 or response.status_code == 503, (path, response)
        return response


@pytest.mark.parametrize("fault", ["killed", "frozen"])
def test_the_studio_pages_and_api_work_and_answer_fast_without_redis(
    server: PrivateRedis, client: Client, fault: str
) -> None:
    campaign, (ann,) = motivation_campaign(tools=4, labels_per_item=1, annotators=1)
    client.force_login(ann)
    assert client.get(f"/annotate/{campaign.pk}/").status_code == 200  # Redis in use
    fail(server, fault)
    timed = Timed(client)
    # the page: the item, its submit (htmx), the next item, twice
    for done in (1, 2):
        page = timed("get", f"/annotate/{campaign.pk}/").content.decode()
        action = re.search(r'hx-post="(/annotate/\d+/submit/\d+/)"', page)
        token = re.search(r'name="token" value="([^"]+)"', page)
        assert action and token, page
        answered = timed(
            "post", action[1], {"reason": "A", "token": token[1]}, HTTP_HX_REQUEST="true"
        )
        assert answered.status_code == 200
        assert Label.objects.filter(campaign=campaign, annotator=ann).count() == done
    # the API: the next item and its submit
    given = timed("post", f"/api/campaigns/{campaign.pk}/next/").json()
    body = {"assignment": given["assignment"], "answers": {"reason": "B"}}
    submitted = timed(
        "post",
        f"/api/campaigns/{campaign.pk}/submit/",
        {**body, "token": str(uuid.uuid4())},
        content_type="application/json",
    )
    assert submitted.status_code == 201
    assert Label.objects.filter(campaign=campaign, annotator=ann).count() == 3
    # and the campaign list with its counts
    assert timed("get", "/api/campaigns/").json()[0]["mine"] == 3
    assert timed.slowest < BOUND, f"a request took {timed.slowest:.2f} s"


def test_sessions_are_never_stored_in_redis() -> None:
    # A logout while Redis is unreachable must end the session for good: kept in Redis, the
    # session would come back with it.
    assert django_settings.SESSION_ENGINE == "django.contrib.sessions.backends.db"


@pytest.mark.parametrize("fault", ["killed", "frozen"])
def test_the_throttles_count_in_the_process_while_redis_is_down(
    server: PrivateRedis, monkeypatch: Any, fault: str
) -> None:
    monkeypatch.setattr(
        ScopedRateThrottle, "THROTTLE_RATES", {"annotation": None, "annotation-submit": "3/min"}
    )

    class Scope:
        throttle_scope = "annotation-submit"

    class Request:
        user = type("User", (), {"is_authenticated": True, "pk": 1})()
        META = {"REMOTE_ADDR": "127.0.0.1"}

    fail(server, fault)
    start = time.monotonic()
    admitted = [OneTripThrottle().allow_request(Request(), Scope) for _ in range(5)]
    assert admitted == [True, True, True, False, False]
    assert time.monotonic() - start < BOUND


@pytest.mark.parametrize("fault", ["killed", "frozen"])
def test_logins_work_and_still_pause_while_redis_is_down(
    server: PrivateRedis, settings: Any, fault: str
) -> None:
    settings.LOGIN_MAX_FAILURES = 3
    make_user(username="ann", password=TEST_PASSWORD)
    fail(server, fault)
    timed = Timed(Client())
    ok = timed("post", "/accounts/login/", {"username": "ann", "password": TEST_PASSWORD})
    assert ok.status_code == 302
    for _ in range(3):
        timed("post", "/accounts/login/", {"username": "ann", "password": "wrong"})
    paused = timed("post", "/accounts/login/", {"username": "ann", "password": TEST_PASSWORD})
    assert paused.status_code == 429
    assert timed.slowest < BOUND


def test_an_outage_is_logged_once_and_its_end_too(
    server: PrivateRedis, caplog: Any, monkeypatch: Any
) -> None:
    caplog.set_level(logging.INFO, logger="config.cache")
    server.freeze()
    for n in range(20):
        cache.set(f"k{n}", n)
        assert cache.get(f"k{n}") == n  # kept in the process meanwhile
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    assert "Redis" in warnings[0].getMessage()
    # Redis answers again: after the retry interval the cache is Redis's again
    server.resume()
    monkeypatch.setattr(shared_cache, "RETRY_SECONDS", 0.0)
    cache.set("back", 1)
    assert redis.from_url(server.url(0)).exists(cache.make_and_validate_key("back"))
    assert any("answers again" in r.getMessage() for r in caplog.records)


# --- queueing work -------------------------------------------------------------------------------


def launch_form(benchmark: Any, endpoint: Any) -> dict[str, Any]:
    """The run form (the page's and the admin's) filled in for a three-item run."""
    return {
        "name": "queued?",
        "benchmark": benchmark.pk,
        "task": "generic:answer",
        "split": "default",
        "endpoint": endpoint.pk,
        "tool_mode": "text",
        "shots": 0,
        "trials": 1,
        "seed": 0,
    }


@pytest.mark.parametrize("fault", ["killed", "frozen"])
def test_launching_a_run_with_the_broker_down_says_so_and_saves_nothing(
    server: PrivateRedis, client: Client, tmp_path: Path, fault: str
) -> None:
    benchmark = make_counting_benchmark(tmp_path, 3)
    endpoint = make_endpoint("http://127.0.0.1:9/v1")
    client.force_login(make_researcher())
    fail(server, fault)
    timed = Timed(client)
    response = timed("post", "/runs/new/", launch_form(benchmark, endpoint))
    assert response.status_code == 503
    assert "queue" in response.content.decode()
    assert not Run.objects.exists()
    assert timed.slowest < BOUND


def test_every_other_way_to_start_work_says_the_queue_is_down_and_saves_nothing(
    server: PrivateRedis, client: Client, tmp_path: Path, settings: Any
) -> None:
    benchmark = make_counting_benchmark(tmp_path, 3)
    endpoint = make_endpoint("http://127.0.0.1:9/v1")
    cancelled = services.run_launch(
        benchmark=benchmark, task="answer", split="default", endpoint=endpoint
    )
    lifecycle.cancel(services.RUNS, cancelled)
    settings.BENCHMARK_UPLOAD_DIR = tmp_path / "uploads"
    client.force_login(make_superuser())
    # the admin's modules are imported by its first page (seconds; nothing to do with Redis)
    assert client.get("/admin/evaluation/run/add/").status_code == 200
    server.kill()
    timed = Timed(client)
    launch = launch_form(benchmark, endpoint)
    # the admin's launch form
    html = timed("post", "/admin/evaluation/run/add/", launch).content.decode()
    assert "The work queue (Redis) does not answer" in html
    # the command line
    with pytest.raises(CommandError, match="work queue"):
        call_command(
            "launch_run",
            *("--benchmark", benchmark.name, "--task", "answer", "--split", "default"),
            *("--endpoint", endpoint.name),
        )
    assert Run.objects.count() == 1
    # resuming the cancelled run from its page: it stays cancelled, the page says why
    timed("post", f"/runs/{cancelled.pk}/resume/", {"budget": ""})
    page = client.get(f"/runs/{cancelled.pk}/").content.decode()
    assert "The work queue (Redis) does not answer" in page
    cancelled.refresh_from_db()
    assert cancelled.status == "cancelled"
    # an import from the browser: refused, its upload not kept
    upload = SimpleUploadedFile("questions.jsonl", b'{"id": "q1", "question": "?"}\n')
    refused = timed(
        "post",
        "/benchmarks/import/",
        {"suite": "generic", "benchmark_name": "B", "files": [upload]},
    )
    assert refused.status_code == 503 and "work queue" in refused.content.decode()
    assert not ImportJob.objects.exists()
    assert not any((tmp_path / "uploads").glob("*/*"))
    # a large run's analyses, asked for by their page
    settings.ANALYSES_INLINE_ITEMS = -1
    analyses = timed("get", f"/runs/{cancelled.pk}/analyses/")
    assert analyses.status_code == 503 and "work queue" in analyses.content.decode()
    assert not RunAnalysis.objects.exists()
    assert timed.slowest < BOUND


def test_a_large_agreement_report_with_the_broker_down_says_so_and_stores_nothing(
    server: PrivateRedis, client: Client, settings: Any
) -> None:
    settings.AGREEMENT_INLINE_ANSWERS = -1  # every report is a worker's, even an empty one
    campaign, _ = motivation_campaign(tools=2, labels_per_item=1, annotators=1)
    client.force_login(make_superuser())
    server.kill()
    answer = Timed(client)("get", f"/api/agreement/{campaign.pk}/")
    assert answer.status_code == 503
    assert "queue" in answer.json()["detail"]
    assert not AgreementReport.objects.exists()


def test_a_large_calibration_report_with_the_broker_down_says_so_and_stores_nothing(
    server: PrivateRedis, client: Client, settings: Any
) -> None:
    from tests.annotation.test_calibration import judged_world

    settings.CALIBRATION_INLINE_UNITS = -1  # every report is a worker's
    version, _campaign, _pairs = judged_world()
    client.force_login(make_researcher())
    server.kill()
    base = f"/judges/{version.judge_id}/v{version.number}/calibration"
    for url in (f"{base}/", f"{base}.csv"):
        answer = Timed(client)("get", url)
        assert answer.status_code == 503, url
        assert "work queue" in answer.content.decode()
    assert not CalibrationReport.objects.exists()


def test_all_work_is_queued_through_one_function() -> None:
    # config.queue.send checks the broker answers (inside the transaction, so that nothing is
    # saved when it does not) and sends with short timeouts: no module queues work another way.
    calls = {"apply_async", "delay", "send_task", "apply"}
    found = []
    for path in sorted(ROOT.glob("*/**/*.py")):
        relative = path.relative_to(ROOT)
        if relative.parts[0] in {".venv", "tests", "perf"} or relative == Path("config/queue.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in calls
            ):
                found.append(f"{relative}:{node.lineno} .{node.func.attr}()")
    assert not found, "work queued outside config.queue:\n" + "\n".join(found)
