"""The evaluation pages: run list and detail (with the htmx progress partial), the CSV export,
leaderboards, cancel/resume, and the admin (launch form, endpoints' key check)."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
from django.conf import settings
from django.contrib.auth.models import Permission
from django.core.exceptions import ValidationError
from django.test import Client
from django.utils import timezone

from benchmarks.models import Benchmark
from evaluation.models import Endpoint, Prediction, ResponseCache, Run
from tests.evaluation.conftest import make_counting_benchmark, make_endpoint
from tests.factories import make_benchmark, make_superuser, make_user

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("broker")]

HX = {"HX-Request": "true"}
SCRIPT = "<script>alert(1)</script>"


@pytest.fixture
def benchmark(tmp_path: Path) -> Benchmark:
    return make_counting_benchmark(tmp_path, 3)


@pytest.fixture
def endpoint() -> Endpoint:
    return make_endpoint("http://127.0.0.1:9/v1")


def make_run(
    benchmark: Benchmark,
    endpoint: Endpoint | None,
    *,
    statuses: tuple[str, ...] = ("done", "done", "failed"),
    outputs: tuple[str, ...] | None = None,
    **fields: Any,
) -> Run:
    """A run with one prediction per sample of `benchmark` (as many as `statuses` names)."""
    fields.setdefault("status", Run.Status.DONE)
    fields.setdefault("model_name", "m")
    run = Run.objects.create(
        benchmark=benchmark,
        task="answer",
        split="default",
        endpoint=endpoint,
        source=Run.Source.LAUNCHED if endpoint else Run.Source.IMPORTED,
        **fields,
    )
    samples = list(benchmark.samples.order_by("id"))
    for position, status in enumerate(statuses):
        done = status == Prediction.Status.DONE
        Prediction.objects.create(
            run=run,
            sample=samples[position],
            position=position,
            status=status,
            attempts=1 if status != Prediction.Status.PENDING else 0,
            output=outputs[position] if outputs else (f"Answer: {position + 1}" if done else ""),
            error="" if status != Prediction.Status.FAILED else "gave up after 4 attempts",
            scores={"accuracy": 100.0 if done else 0.0} if status in ("done", "failed") else {},
        )
    return run


# What the run and job pages need (config.access); the tests add change_* where they act.
READ_RUNS = ("view_run", "view_prediction", "view_judgejob", "view_judgment")


def login(client: Client, *permissions: str) -> None:
    user = make_user()
    for codename in (*READ_RUNS, *permissions):
        user.user_permissions.add(Permission.objects.get(codename=codename))
    client.force_login(user)


# --- login --------------------------------------------------------------------------------


def test_the_pages_need_a_login(client: Client, benchmark: Benchmark, endpoint: Endpoint) -> None:
    run = make_run(benchmark, endpoint)
    for url in (
        "/runs/",
        f"/runs/{run.pk}/",
        f"/runs/{run.pk}/predictions.csv",
        f"/leaderboard/{benchmark.pk}/answer/",
    ):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"] == f"/accounts/login/?next={url}"


# --- run list and detail ------------------------------------------------------------------


def test_the_run_list_shows_runs_with_their_progress(
    client: Client, benchmark: Benchmark, endpoint: Endpoint
) -> None:
    login(client)
    assert "No run yet." in client.get("/runs/").content.decode()
    run = make_run(benchmark, endpoint, name=f"first try {SCRIPT}")
    html = client.get("/runs/").content.decode()
    assert f"#{run.pk} first try &lt;script&gt;" in html
    assert SCRIPT not in html
    assert "3/3, 1 failed" in html
    assert f'href="/leaderboard/{benchmark.pk}/answer/"' in html
    # the htmx refresh gets the table alone
    partial = client.get("/runs/", headers=HX).content.decode()
    assert partial.lstrip().startswith('<div id="runs"')
    assert "<html" not in partial


def test_the_detail_page_shows_counts_and_metrics(
    client: Client, benchmark: Benchmark, endpoint: Endpoint
) -> None:
    run = make_run(
        benchmark,
        endpoint,
        metrics={"unparsed": 0.0, "accuracy": 66.67},
        intervals={"accuracy": [33.33, 100.0]},
        params={"temperature": 0},
    )
    login(client)
    response = client.get(f"/runs/{run.pk}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<strong>2</strong> done" in html
    assert "<strong>1</strong> failed" in html
    assert "<strong>0</strong> to go" in html
    assert "of 3 (100.00%)" in html
    # the headline metric first, with its interval
    assert html.index("<code>accuracy</code>") < html.index("<code>unparsed</code>")
    assert "66.67" in html
    assert "33.33 \N{EN DASH} 100" in html
    assert "gave up after 4 attempts" in html
    assert "{&quot;temperature&quot;: 0}" in html
    assert client.get("/runs/999999/").status_code == 404


def test_the_predictions_can_be_filtered_by_status(
    client: Client, benchmark: Benchmark, endpoint: Endpoint
) -> None:
    run = make_run(benchmark, endpoint)
    login(client)
    html = client.get(f"/runs/{run.pk}/", {"status": "failed"}).content.decode()
    assert "default/2" in html
    assert "default/0" not in html and "default/1" not in html


def test_the_predictions_partial_is_the_table_alone(
    client: Client, benchmark: Benchmark, endpoint: Endpoint
) -> None:
    run = make_run(benchmark, endpoint)
    login(client)
    response = client.get(f"/runs/{run.pk}/", {"part": "predictions"}, headers=HX)
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="predictions"')
    assert "<html" not in html and 'id="progress"' not in html
    assert "default/0" in html and "default/2" in html


def test_the_run_pages_make_a_fixed_number_of_queries(
    client: Client, benchmark: Benchmark, endpoint: Endpoint, django_assert_max_num_queries: Any
) -> None:
    small = make_run(benchmark, endpoint, statuses=("done",), metrics={"accuracy": 100.0})
    large = make_run(benchmark, endpoint, metrics={"accuracy": 66.67})
    login(client)
    # session, user, its permissions (its own and its groups': the access check), run, counts
    # per status, recent count: polled every 2 s while running
    with django_assert_max_num_queries(7):
        client.get(f"/runs/{large.pk}/", {"part": "progress"}, headers=HX)
    counts = []
    for run in (small, large):
        with django_assert_max_num_queries(14) as queries:
            client.get(f"/runs/{run.pk}/")
        counts.append(len(queries))
    # no query per prediction shown
    assert counts[0] == counts[1]


def progress(client: Client, run: Run) -> str:
    response = client.get(f"/runs/{run.pk}/", {"part": "progress"}, headers=HX)
    assert response.status_code == 200
    return response.content.decode()


def test_the_progress_partial_polls_while_the_run_is_running(
    client: Client, benchmark: Benchmark, endpoint: Endpoint
) -> None:
    run = make_run(benchmark, endpoint, status=Run.Status.RUNNING, statuses=("done", "pending"))
    login(client)
    html = progress(client, run)
    assert html.lstrip().startswith('<section id="progress"')
    assert "<html" not in html and "Predictions" not in html
    assert 'hx-trigger="every 2s"' in html
    assert f'hx-get="/runs/{run.pk}/?part=progress"' in html
    assert "<strong>1</strong> to go" in html


def test_the_progress_partial_polls_until_the_intervals_arrive_then_stops(
    client: Client, benchmark: Benchmark, endpoint: Endpoint
) -> None:
    run = make_run(benchmark, endpoint, metrics={"accuracy": 66.67, "unparsed": 0.0})
    login(client)
    waiting = progress(client, run)
    assert 'hx-trigger="every 2s"' in waiting
    assert "(intervals being computed)" in waiting
    # when the intervals are stored
    Run.objects.filter(pk=run.pk).update(intervals={"accuracy": [33.33, 100.0]})
    finished = progress(client, run)
    assert "hx-trigger" not in finished
    assert "with bootstrap 95% intervals" in finished


def test_a_run_whose_intervals_never_come_stops_polling(
    client: Client, benchmark: Benchmark, endpoint: Endpoint
) -> None:
    # every metric undefined in the resamples: the bootstrap stores nothing
    run = make_run(benchmark, endpoint, metrics={"accuracy": None})
    Run.objects.filter(pk=run.pk).update(finished_at=timezone.now() - timedelta(minutes=11))
    login(client)
    assert "hx-trigger" not in progress(client, run)


def test_a_cancelled_run_does_not_poll(
    client: Client, benchmark: Benchmark, endpoint: Endpoint
) -> None:
    run = make_run(benchmark, endpoint, status=Run.Status.CANCELLED, statuses=("done", "pending"))
    login(client)
    assert "hx-trigger" not in progress(client, run)


def test_model_output_is_escaped(client: Client, benchmark: Benchmark, endpoint: Endpoint) -> None:
    # given a model that answers with markup everywhere it can
    run = make_run(benchmark, endpoint, name=SCRIPT, outputs=(SCRIPT, SCRIPT, SCRIPT))
    Prediction.objects.filter(run=run).update(
        answer=SCRIPT,
        note=SCRIPT,
        trace=[{"thought": SCRIPT, "action": SCRIPT}],
        error=SCRIPT,
        scores={SCRIPT: 1.0},
    )
    Run.objects.filter(pk=run.pk).update(error=SCRIPT, metrics={SCRIPT: 1.0})
    login(client)
    # when
    html = client.get(f"/runs/{run.pk}/").content.decode()
    # then
    assert SCRIPT not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    board = client.get(f"/leaderboard/{benchmark.pk}/answer/").content.decode()
    assert SCRIPT not in board
    assert "&lt;script&gt;" in board


# --- CSV export ---------------------------------------------------------------------------


def csv_rows(client: Client, run: Run) -> list[list[str]]:
    response = client.get(f"/runs/{run.pk}/predictions.csv")
    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"] == "text/csv"
    assert response["Content-Disposition"] == f'attachment; filename="run-{run.pk}-predictions.csv"'
    text = b"".join(response.streaming_content).decode()
    return list(csv.reader(io.StringIO(text, newline="")))


def test_the_csv_has_a_row_per_prediction_and_a_column_per_score(
    client: Client, benchmark: Benchmark, endpoint: Endpoint
) -> None:
    run = make_run(benchmark, endpoint)
    Prediction.objects.filter(run=run, position=1).update(
        scores={"accuracy": 100.0, "extra": 0.5}, latency_ms=12, cached=True, answer="2"
    )
    login(client)
    header, *rows = csv_rows(client, run)
    assert header == [
        "run",
        "position",
        "split",
        "sample_id",
        "repeat",
        "trial",
        "status",
        "output",
        "answer",
        "tool_calls",
        "parsed",
        "note",
        "error",
        "attempts",
        "latency_ms",
        "cached",
        "prompt_tokens",
        "completion_tokens",
        "cached_tokens",
        "cost",
        "score:accuracy",
        "score:extra",
    ]
    assert len(rows) == 3
    assert [row[1] for row in rows] == ["0", "1", "2"]
    second = dict(zip(header, rows[1], strict=True))
    assert second["run"] == str(run.pk)
    assert (second["split"], second["sample_id"], second["status"]) == ("default", "1", "done")
    assert (second["output"], second["answer"]) == ("Answer: 2", "2")
    assert (second["latency_ms"], second["cached"]) == ("12", "true")
    assert (second["score:accuracy"], second["score:extra"]) == ("100.0", "0.5")
    third = dict(zip(header, rows[2], strict=True))
    assert (third["status"], third["error"]) == ("failed", "gave up after 4 attempts")
    assert third["score:extra"] == ""  # a score the item does not have


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_csv_cells_a_spreadsheet_would_run_are_neutralised(
    client: Client, benchmark: Benchmark, endpoint: Endpoint, start: str
) -> None:
    formula = f'{start}HYPERLINK("http://evil.example","x")'
    run = make_run(benchmark, endpoint, outputs=(formula, "plain", "-"))
    Prediction.objects.filter(run=run, position=0).update(note=formula, error=formula)
    login(client)
    header, *rows = csv_rows(client, run)
    first = dict(zip(header, rows[0], strict=True))
    assert first["output"] == "'" + formula
    assert first["note"] == "'" + formula
    assert first["error"] == "'" + formula
    assert rows[1][header.index("output")] == "plain"
    assert rows[2][header.index("output")] == "'-"


def test_the_csv_of_a_missing_run_is_404(client: Client) -> None:
    login(client)
    assert client.get("/runs/424242/predictions.csv").status_code == 404


# --- leaderboard --------------------------------------------------------------------------


def test_the_leaderboard_ranks_finished_runs_by_the_headline_metric(
    client: Client, benchmark: Benchmark, endpoint: Endpoint
) -> None:
    for name, accuracy in (("middle", 70.0), ("worst", 50.0), ("best", 90.0)):
        make_run(benchmark, endpoint, name=name, metrics={"accuracy": accuracy, "unparsed": 0.0})
    make_run(benchmark, endpoint, name="no metric", metrics={"unparsed": 0.0})
    make_run(benchmark, endpoint, name="still running", status=Run.Status.RUNNING)
    other = make_run(benchmark, endpoint, name="other task", metrics={"accuracy": 99.0})
    Run.objects.filter(pk=other.pk).update(task="tool_calls")
    login(client)
    response = client.get(f"/leaderboard/{benchmark.pk}/answer/")
    assert response.status_code == 200
    html = response.content.decode()
    positions = [html.index(f" {name}</a>") for name in ("best", "middle", "worst", "no metric")]
    assert positions == sorted(positions)
    assert "still running" not in html and "other task" not in html
    assert "<svg" in html
    assert "accuracy by run, with bootstrap 95% intervals" in html


def test_a_leaderboard_without_runs_or_of_an_unknown_task(
    client: Client, benchmark: Benchmark
) -> None:
    login(client)
    empty = client.get(f"/leaderboard/{benchmark.pk}/answer/").content.decode()
    assert "No finished run of this task yet." in empty
    assert "<svg" not in empty
    assert client.get(f"/leaderboard/{benchmark.pk}/nonsense/").status_code == 404
    assert client.get("/leaderboard/424242/answer/").status_code == 404


# --- cancel and resume --------------------------------------------------------------------


def queued(queue: str = "inference") -> int:
    return int(redis.from_url(settings.CELERY_BROKER_URL).llen(queue))


def test_cancel_and_resume_need_the_change_permission(
    client: Client, benchmark: Benchmark, endpoint: Endpoint
) -> None:
    run = make_run(benchmark, endpoint, status=Run.Status.RUNNING, statuses=("done", "pending"))
    anonymous = client.post(f"/runs/{run.pk}/cancel/")
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")
    login(client)
    for action in ("cancel", "resume", "retry"):
        assert client.post(f"/runs/{run.pk}/{action}/").status_code == 403
    run.refresh_from_db()
    assert run.status == Run.Status.RUNNING
    # the buttons are not shown either
    assert "Cancel run" not in client.get(f"/runs/{run.pk}/").content.decode()


def test_cancel_stops_a_running_run(
    client: Client, benchmark: Benchmark, endpoint: Endpoint
) -> None:
    run = make_run(benchmark, endpoint, status=Run.Status.RUNNING, statuses=("done", "pending"))
    login(client, "change_run")
    assert "Cancel run" in client.get(f"/runs/{run.pk}/").content.decode()
    assert client.get(f"/runs/{run.pk}/cancel/").status_code == 405
    response = client.post(f"/runs/{run.pk}/cancel/", follow=True)
    assert response.redirect_chain == [(f"/runs/{run.pk}/", 302)]
    assert "Run cancelled." in response.content.decode()
    run.refresh_from_db()
    assert run.status == Run.Status.CANCELLED
    # the pending item stays pending, to be resumed
    assert run.predictions.filter(status=Prediction.Status.PENDING).count() == 1


def test_resume_requeues_the_pending_items(
    client: Client,
    benchmark: Benchmark,
    endpoint: Endpoint,
    django_capture_on_commit_callbacks: Any,
) -> None:
    run = make_run(
        benchmark, endpoint, status=Run.Status.CANCELLED, statuses=("done", "pending", "pending")
    )
    login(client, "change_run")
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "Resume" in page and "Retry failed items" not in page
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/runs/{run.pk}/resume/", follow=True)
    assert "Run resumed: 2 item(s) queued." in response.content.decode()
    run.refresh_from_db()
    assert (run.status, run.finished_at) == (Run.Status.RUNNING, None)
    assert queued() == 1  # one chunk holds both items


def test_retry_makes_failed_items_pending_again(
    client: Client, benchmark: Benchmark, endpoint: Endpoint
) -> None:
    run = make_run(benchmark, endpoint, statuses=("done", "failed", "failed"))
    login(client, "change_run")
    assert "Retry failed items" in client.get(f"/runs/{run.pk}/").content.decode()
    client.post(f"/runs/{run.pk}/retry/")
    run.refresh_from_db()
    assert run.status == Run.Status.RUNNING
    pending = run.predictions.filter(status=Prediction.Status.PENDING)
    assert list(pending.values_list("position", "attempts", "error", "scores")) == [
        (1, 0, "", {}),
        (2, 0, "", {}),
    ]


def test_an_imported_run_cannot_be_resumed(client: Client, benchmark: Benchmark) -> None:
    run = make_run(benchmark, None)
    login(client, "change_run")
    assert "Resume" not in client.get(f"/runs/{run.pk}/").content.decode()
    response = client.post(f"/runs/{run.pk}/resume/", follow=True)
    assert "an imported run has nothing to resume" in response.content.decode()
    run.refresh_from_db()
    assert run.status == Run.Status.DONE


def test_an_unknown_action_is_404(client: Client, benchmark: Benchmark, endpoint: Endpoint) -> None:
    run = make_run(benchmark, endpoint)
    login(client, "change_run")
    assert client.post(f"/runs/{run.pk}/explode/").status_code == 404


# --- admin --------------------------------------------------------------------------------


def test_the_admin_changelists_load(
    client: Client, benchmark: Benchmark, endpoint: Endpoint
) -> None:
    run = make_run(benchmark, endpoint, metrics={"accuracy": 66.67, "unparsed": 0.0})
    ResponseCache.objects.create(
        key="ab" * 32, model="fake-model", request={"model": "fake-model"}, response={"text": "x"}
    )
    client.force_login(make_superuser())
    for model, expected in (
        ("endpoint", "fake"),
        ("run", "accuracy 66.67"),
        ("prediction", f"run {run.pk}"),
        ("responsecache", "ab" * 32),
    ):
        response = client.get(f"/admin/evaluation/{model}/")
        assert response.status_code == 200, model
        assert expected in response.content.decode(), model
    change = client.get(f"/admin/evaluation/run/{run.pk}/change/")
    assert change.status_code == 200
    assert "Live progress and predictions" in change.content.decode()


def admin_action(client: Client, model: str, action: str, *objects: Any) -> str:
    response = client.post(
        f"/admin/evaluation/{model}/",
        {"action": action, "_selected_action": [obj.pk for obj in objects]},
        follow=True,
    )
    assert response.status_code == 200
    return response.content.decode()


def test_the_admin_actions_cancel_and_resume_runs(
    client: Client,
    benchmark: Benchmark,
    endpoint: Endpoint,
    django_capture_on_commit_callbacks: Any,
) -> None:
    running = make_run(benchmark, endpoint, status=Run.Status.RUNNING, statuses=("pending",))
    finished = make_run(benchmark, endpoint)
    imported = make_run(benchmark, None)
    client.force_login(make_superuser())
    html = admin_action(client, "run", "cancel_runs", running, finished)
    assert "1 run(s) cancelled." in html
    running.refresh_from_db()
    assert running.status == Run.Status.CANCELLED
    with django_capture_on_commit_callbacks(execute=True):
        html = admin_action(client, "run", "resume_runs", running, imported)
    assert f"Run {running.pk}: 1 item(s) queued." in html
    assert f"Run {imported.pk}: an imported run has nothing to resume" in html
    running.refresh_from_db()
    assert running.status == Run.Status.RUNNING
    assert queued() == 1


def test_the_connection_check_asks_the_endpoint_for_its_models(
    client: Client, fake_server: Any, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    monkeypatch.delenv("H6_UNSET_API_KEY", raising=False)
    settings.ENDPOINT_KEY_VARIABLES = ["H6_UNSET_API_KEY"]
    reachable = make_endpoint(fake_server.base_url, name="reachable")
    other_model = make_endpoint(fake_server.base_url, name="other", model="not-served")
    keyless = make_endpoint(fake_server.base_url, name="keyless", api_key_env="H6_UNSET_API_KEY")
    client.force_login(make_superuser())
    html = admin_action(client, "endpoint", "check_connection", reachable, other_model, keyless)
    # (the admin capitalises its messages)
    assert "Reachable: reachable; it offers model &#x27;fake-model&#x27; (1 model(s))" in html
    assert "Other: reachable; it does not list model &#x27;not-served&#x27;" in html
    assert "Keyless: the environment variable H6_UNSET_API_KEY (the key of endpoint" in html
    assert "is not set on worker" in html


def test_the_admin_escapes_what_models_and_servers_wrote(
    client: Client, benchmark: Benchmark, endpoint: Endpoint
) -> None:
    run = make_run(
        benchmark,
        endpoint,
        name=SCRIPT,
        outputs=(SCRIPT, SCRIPT, SCRIPT),
        params={SCRIPT: SCRIPT},
        metrics={"accuracy": SCRIPT},
        error=SCRIPT,
    )
    Endpoint.objects.filter(pk=endpoint.pk).update(
        status=Endpoint.Status.FAILED, status_detail=SCRIPT
    )
    client.force_login(make_superuser())
    for url in (
        "/admin/evaluation/run/",
        f"/admin/evaluation/run/{run.pk}/change/",
        "/admin/evaluation/endpoint/",
        "/admin/evaluation/prediction/",
    ):
        html = client.get(url).content.decode()
        assert SCRIPT not in html, url
        assert "&lt;script&gt;" in html, url


def launch_form(benchmark: Benchmark, endpoint: Endpoint, **fields: Any) -> dict[str, Any]:
    return {
        "name": "from the admin",
        "benchmark": benchmark.pk,
        "task": "generic:answer",
        "split": "default",
        "endpoint": endpoint.pk,
        "shots": 0,
        "item_limit": "",
        "params": '{"temperature": 0}',
        "options": "",
        "seed": 0,
        **fields,
    }


def test_the_run_add_page_is_the_launch_form(client: Client) -> None:
    client.force_login(make_superuser())
    response = client.get("/admin/evaluation/run/add/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Launch a run" in html
    for field in ("benchmark", "task", "split", "endpoint", "shots", "item_limit", "params"):
        assert f'name="{field}"' in html
    assert 'value="generic:answer"' in html and 'value="mtubench:S-S"' in html


def test_launching_from_the_admin_creates_the_run(
    client: Client, benchmark: Benchmark, endpoint: Endpoint
) -> None:
    admin = make_superuser()
    client.force_login(admin)
    response = client.post("/admin/evaluation/run/add/", launch_form(benchmark, endpoint))
    run = Run.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/runs/{run.pk}/"
    assert (run.name, run.task, run.split, run.created_by) == (
        "from the admin",
        "answer",
        "default",
        admin,
    )
    assert run.params == {"temperature": 0}
    assert run.predictions.filter(status=Prediction.Status.PENDING).count() == 3


def test_a_task_of_another_suite_is_refused(
    client: Client, benchmark: Benchmark, endpoint: Endpoint
) -> None:
    client.force_login(make_superuser())
    response = client.post(
        "/admin/evaluation/run/add/", launch_form(benchmark, endpoint, task="mtubench:S-S")
    )
    assert response.status_code == 200
    assert "Counting is a generic benchmark; pick one of its tasks" in response.content.decode()
    assert not Run.objects.exists()


def test_the_launch_form_shows_why_a_run_cannot_start(
    client: Client, benchmark: Benchmark, endpoint: Endpoint
) -> None:
    client.force_login(make_superuser())
    response = client.post(
        "/admin/evaluation/run/add/", launch_form(benchmark, endpoint, split="nowhere")
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "Counting has no samples in split(s) nowhere (its splits: default)" in html
    bad_json = client.post(
        "/admin/evaluation/run/add/", launch_form(benchmark, endpoint, params="[1, 2]")
    )
    assert "expected a JSON object" in bad_json.content.decode()
    assert not Run.objects.exists()


@pytest.mark.parametrize(
    "value", ["sk-abc123def456", "sk_live_1234", "hf_abcdef", "a8F3kQ9zL2mN7xV4cB1dR6tY0wE5uI3o"]
)
def test_an_endpoint_refuses_a_key_where_the_variable_name_belongs(value: str) -> None:
    endpoint = Endpoint(
        name="leaky", base_url="https://api.example/v1", model="m", api_key_env=value
    )
    with pytest.raises(ValidationError) as info:
        endpoint.full_clean()
    assert "This looks like an API key" in str(info.value.message_dict["api_key_env"])


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("OPENAI_API_KEY", True),
        ("MY_COMPANY_PRODUCTION_OPENAI_COMPATIBLE_API_KEY", True),  # long, but a name
        ("", True),
        ("HF_TOKEN", True),
        ("my key", False),
    ],
)
def test_an_endpoint_takes_a_variable_name(value: str, ok: bool, settings: Any) -> None:
    # (listed by the operator: only listed variables are taken at all, test_endpoint_keys)
    settings.ENDPOINT_KEY_VARIABLES = [value]
    endpoint = Endpoint(name="e", base_url="https://api.example/v1", model="m", api_key_env=value)
    if ok:
        endpoint.full_clean()
    else:
        with pytest.raises(ValidationError, match="is not an environment variable name"):
            endpoint.full_clean()


def test_the_admin_does_not_store_a_pasted_key(client: Client) -> None:
    client.force_login(make_superuser())
    response = client.post(
        "/admin/evaluation/endpoint/add/",
        {
            "name": "leaky",
            "base_url": "https://api.example/v1",
            "model": "m",
            "api_key_env": "sk-abc123def456",
            "style": "chat",
            "default_params": "{}",
            "max_concurrency": 8,
            "timeout_seconds": 60,
            "max_attempts": 4,
        },
    )
    assert response.status_code == 200
    assert "This looks like an API key" in response.content.decode()
    assert not Endpoint.objects.exists()


def test_a_benchmark_of_another_suite_lists_no_generic_leaderboard(client: Client) -> None:
    other = make_benchmark(name="Mtu", suite="mtubench")
    login(client)
    assert client.get(f"/leaderboard/{other.pk}/answer/").status_code == 404
