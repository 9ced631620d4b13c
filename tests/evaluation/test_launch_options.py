"""A run's options are checked once, by the launch service (services.run_options, over the
declarations of the run's suite), before anything is stored or queued: every way of launching
(the page, the API, the admin, the command line) refuses an option the task does not declare, a
value of the wrong type and a value the declaration does not allow, naming the option, for every
suite. (tests/benchmarks/test_suite_options.py walks every declared option's values.)"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from django.conf import settings
from django.core.management import CommandError, call_command
from django.test import Client

from benchmarks.kit.registry import all_suites, get_suite
from benchmarks.models import Benchmark
from evaluation.models import Endpoint, Run
from tests.evaluation.conftest import make_counting_benchmark, make_endpoint
from tests.factories import make_researcher, make_superuser

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("broker")]


def queued() -> int:
    """Messages waiting on every queue of the test broker."""
    client = redis.from_url(settings.CELERY_BROKER_URL)
    return sum(int(client.llen(q)) for q in ("default", "inference", "judging", "reports"))


def bad_options(suite: str, task: str) -> list[tuple[dict[str, Any], str]]:
    """(options, the option a refusal must name): a name the task does not declare, a value of
    another type, and a value beside the choices (the task's own option with choices, else the
    platform's tool_mode)."""
    declared = get_suite(suite).options(task)
    own = [option for option in declared if option.choices]
    chosen = own[-1]
    text = next((o for o in declared if o.kind == "text"), chosen)
    return [
        ({"variant_typo": "strict"}, "variant_typo"),
        ({text.name: ["strict"]}, text.name),
        ({chosen.name: "bogus"}, chosen.name),
    ]


CASES = [
    (suite.name, task, options, named)
    for suite in all_suites()
    for task in list(suite.tasks)[:1]
    for options, named in bad_options(suite.name, task)
]


class Ways:
    """The four ways of launching a run, each returning (refused?, the message shown)."""

    def __init__(self, client: Client, endpoint: Endpoint) -> None:
        self.client = client
        self.endpoint = endpoint

    def form(
        self, benchmark: Benchmark, task: str, options: dict[str, Any], split: str
    ) -> dict[str, Any]:
        return {
            "benchmark": benchmark.pk,
            "task": f"{benchmark.suite}:{task}",
            "split": split,
            "endpoint": self.endpoint.pk,
            "tool_mode": "",
            "shots": 0,
            "seed": 0,
            "options": json.dumps(options),
        }

    def page(
        self, benchmark: Benchmark, task: str, options: dict[str, Any], split: str = ""
    ) -> tuple[bool, str]:
        response = self.client.post("/runs/new/", self.form(benchmark, task, options, split))
        if response.status_code == 302:
            return False, ""
        assert response.status_code == 400, response.status_code
        html = response.content.decode()
        # beside the options field, not somewhere on the page
        start = html.index('id="id_options"')
        return True, html[start : html.index("</div>", start)]

    def admin(
        self, benchmark: Benchmark, task: str, options: dict[str, Any], split: str = ""
    ) -> tuple[bool, str]:
        response = self.client.post(
            "/admin/evaluation/run/add/", self.form(benchmark, task, options, split)
        )
        if response.status_code == 302:
            return False, ""
        assert response.status_code == 200, response.status_code
        return True, response.content.decode()

    def api(
        self, benchmark: Benchmark, task: str, options: dict[str, Any], split: str = ""
    ) -> tuple[bool, str]:
        body = {
            "benchmark": benchmark.pk,
            "task": task,
            "split": split,
            "endpoint": self.endpoint.pk,
            "options": options,
        }
        response = self.client.post("/api/runs/", body, content_type="application/json")
        if response.status_code == 201:
            assert response.json()["options"] == options
            return False, ""
        assert response.status_code == 400, (response.status_code, response.content[:500])
        data = response.json()
        assert data["field"] == "options", data
        return True, data["detail"]

    def cli(
        self, benchmark: Benchmark, task: str, options: dict[str, Any], split: str = ""
    ) -> tuple[bool, str]:
        pairs = [f"--option={name}={json.dumps(value)}" for name, value in options.items()]
        args = ["--benchmark", str(benchmark.pk), "--task", task, "--split", split]
        args += ["--endpoint", self.endpoint.name]
        try:
            call_command("launch_run", *args, *pairs, "--json", stdout=io.StringIO())
        except CommandError as exc:
            return True, str(exc)
        return False, ""


WAYS = ("page", "api", "admin", "cli")


@pytest.fixture
def ways(client: Client) -> Iterator[Ways]:
    client.force_login(make_superuser())
    yield Ways(client, make_endpoint("http://127.0.0.1:9/v1"))


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize(("suite", "task", "options", "named"), CASES)
def test_every_way_in_refuses_an_option_its_suite_does_not_allow_naming_it(
    ways: Ways,
    way: str,
    suite: str,
    task: str,
    options: dict[str, Any],
    named: str,
    django_capture_on_commit_callbacks: Callable[..., Any],
) -> None:
    benchmark = Benchmark.objects.create(name=f"A {suite} benchmark", suite=suite)
    with django_capture_on_commit_callbacks(execute=True):
        refused, message = getattr(ways, way)(benchmark, task, options)
    assert refused, f"{way} launched a {suite} {task} run with {options}"
    assert f"option {named!r}" in message.replace("&#x27;", "'"), message[:3000]
    # and the refusal says what there is: the options, or the allowed values
    shown = message.replace("&#x27;", "'").replace("&quot;", '"')
    if named == "variant_typo":
        assert all(option.name in shown for option in get_suite(suite).options(task))
    else:
        assert next(o for o in get_suite(suite).options(task) if o.name == named).allowed() in shown
    assert not Run.objects.exists() and queued() == 0


@pytest.mark.parametrize("way", WAYS)
def test_every_way_in_launches_with_options_the_suite_declares(
    ways: Ways, way: str, tmp_path: Path, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    benchmark = make_counting_benchmark(tmp_path, 3)
    options = {"unparsed": "exclude", "min_completion_shots": 0}
    with django_capture_on_commit_callbacks(execute=True):
        refused, message = getattr(ways, way)(benchmark, "answer", {**options}, "default")
    assert not refused, message[:3000]
    run = Run.objects.get()
    assert run.launch_options == options and run.task == "answer"
    assert run.predictions.count() == 3 and queued() == 1


def test_the_api_launches_as_a_researcher_and_refuses_an_annotator(
    client: Client, tmp_path: Path
) -> None:
    benchmark = make_counting_benchmark(tmp_path, 2)
    endpoint = make_endpoint("http://127.0.0.1:9/v1")
    body = {"benchmark": benchmark.pk, "task": "answer", "split": "default"}
    body["endpoint"] = endpoint.pk
    client.force_login(make_researcher())
    response = client.post("/api/runs/", body, content_type="application/json")
    assert response.status_code == 201, response.content
    assert response.json()["status"] == "running" and response.json()["items"] == 2
    from tests.factories import make_user

    client.force_login(make_user())
    response = client.post("/api/runs/", body, content_type="application/json")
    assert response.status_code == 403


def test_the_run_form_shows_what_options_the_benchmarks_tasks_take(
    client: Client, tmp_path: Path
) -> None:
    benchmark = Benchmark.objects.create(name="MTU", suite="mtubench")
    client.force_login(make_researcher())
    html = client.get("/runs/new/", {"benchmark": benchmark.pk}).content.decode()
    for task in get_suite("mtubench").tasks:
        for option in get_suite("mtubench").options(task):
            assert f"<code>{option.name}</code>" in html
    assert "one of reference, strict, paper" in html
