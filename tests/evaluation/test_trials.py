"""Repeated trials (issue 16): a run may answer each item k times (run option `trials`,
`launch_run --repeat k`). Each trial is its own prediction (repeat 0..k-1) asked with its own
seed (the run's seed + the trial), so two trials never share a response-cache entry and a rerun
of a trial finds its own. Real PostgreSQL, the fake OpenAI server at the edge."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from evaluation import services
from evaluation.models import Prediction, ResponseCache, Run
from evaluation.services import RunError
from tests.evaluation.conftest import execute_run, make_counting_benchmark, make_endpoint
from tests.evaluation.test_views import csv_rows, launch_form
from tests.factories import make_superuser
from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = re.compile(r"What number comes after (\d+)\?")


def seeded_answer(request: dict[str, Any]) -> str:
    """Right when the number plus the request's seed is even: which items a trial gets right
    depends on its seed, so a trial answered from another trial's cache entry would show."""
    n = int(QUESTION.findall(json.dumps(request["messages"]))[-1])
    seed = int(request.get("seed", 0))
    return f"Answer: {n + 1 if (n + seed) % 2 == 0 else n + 7}"


def launch(benchmark: Any, endpoint: Any, *args: str) -> Run:
    out = io.StringIO()
    call_command(
        "launch_run",
        "--benchmark",
        benchmark.name,
        "--task",
        "answer",
        "--split",
        "default",
        "--endpoint",
        endpoint.name,
        "--json",
        *args,
        stdout=out,
    )
    return Run.objects.get(pk=json.loads(out.getvalue())["run"])


def outputs(run: Run) -> dict[tuple[int, int], str]:
    return {(p.sample_id, p.repeat): p.output for p in run.predictions.all()}


def test_each_trial_is_its_own_prediction_with_its_own_seed_and_cache_entry(
    tmp_path: Path, broker: None
) -> None:
    benchmark = make_counting_benchmark(tmp_path, 4)
    with FakeOpenAI(responder=seeded_answer, keep_bodies=True) as server:
        endpoint = make_endpoint(server.base_url)
        run = launch(benchmark, endpoint, "--repeat", "3", "--seed", "10")
        assert run.launch_options["trials"] == 3
        predictions = list(run.predictions.order_by("position"))
        # 4 items x 3 trials, trial-major: trial 0 of every item first, so a run stopped half
        # way (a budget) has whole trials.
        assert [p.repeat for p in predictions] == [0] * 4 + [1] * 4 + [2] * 4
        assert [p.sample_id for p in predictions[4:8]] == [p.sample_id for p in predictions[:4]]
        execute_run(run)
        assert run.status == Run.Status.DONE, run.error
        sent = [record.body for record in server.requests_for("What number")]
        # one request per item and trial, each with the run's seed + its trial
        assert len(sent) == 12
        seeds = sorted(body["seed"] for body in sent if body is not None)
        assert seeds == [10] * 4 + [11] * 4 + [12] * 4
        # two trials of an item never share an entry: 12 entries, and the answers differ as
        # the seeds say (trial 0 and 2 alike, trial 1 the other way)
        assert ResponseCache.objects.count() == 12
        first = outputs(run)
        # Metrics over the trials. Items 0..3; seeds 10, 11, 12: trial 0 and 2 right on the
        # even items, trial 1 on the odd ones, so every trial's accuracy is 50 (sd 0). Per
        # item n = 3 trials, c = 2 (even items) or 1 (odd): pass^1 = (2/3 + 1/3 + 2/3 + 1/3)/4
        # = 1/2; pass^2 = C(c,2)/C(3,2) = (1/3 + 0 + 1/3 + 0)/4 = 1/6; pass@2 = 1 - C(3-c,2)/3
        # = (1 + 2/3 + 1 + 2/3)/4 = 5/6; pass@3 = 1 (every item right once), pass^3 = 0.
        assert run.metrics["accuracy"] == 50.0
        assert run.metrics["accuracy_std"] == 0.0
        assert run.metrics["trials"] == 3
        assert run.metrics["accuracy pass^1"] == pytest.approx(50.0)
        assert run.metrics["accuracy pass^2"] == pytest.approx(100 / 6)
        assert run.metrics["accuracy pass@2"] == pytest.approx(500 / 6)
        assert run.metrics["accuracy pass@3"] == pytest.approx(100.0)
        assert run.metrics["accuracy pass^3"] == 0.0
        # The bootstrap draws items with all their trials: with e even and o odd items drawn
        # the mean over trials is (2e + o) / 12, from 1/3 (all odd) to 2/3 (all even).
        intervals = services.run_compute_intervals(run_id=run.pk, resamples=200)
        low, high = intervals["accuracy"]
        assert 0 <= low < 50 < high <= 100
        for sample_id in {key[0] for key in first}:
            assert first[(sample_id, 0)] == first[(sample_id, 2)] != first[(sample_id, 1)]

        # when: the same trials are asked again (another run, same seed)
        again = launch(benchmark, endpoint, "--repeat", "3", "--seed", "10")
        execute_run(again)
        # then: each trial is answered from its own entry, and nothing is sent
        assert len(server.requests_for("What number")) == 12
        assert again.predictions.filter(cached=True).count() == 12
        assert outputs(again) == first


def test_one_trial_sends_no_seed_of_its_own(tmp_path: Path, broker: None) -> None:
    """A run without trials asks as before (its cache entries stay valid)."""
    benchmark = make_counting_benchmark(tmp_path, 2)
    with FakeOpenAI(responder=seeded_answer, keep_bodies=True) as server:
        run = launch(benchmark, make_endpoint(server.base_url), "--seed", "10")
        execute_run(run)
        sent = [record.body for record in server.requests_for("What number")]
    assert len(sent) == 2 and all(body is not None and "seed" not in body for body in sent)
    assert set(run.predictions.values_list("repeat", flat=True)) == {0}


@pytest.mark.parametrize("trials", [0, -1, "two", 1.5, 101, True])
def test_a_bad_number_of_trials_is_refused(tmp_path: Path, trials: Any) -> None:
    benchmark = make_counting_benchmark(tmp_path, 2)
    endpoint = make_endpoint("http://127.0.0.1:9/v1")
    with pytest.raises(RunError, match="trials"):
        services.run_launch(
            benchmark=benchmark,
            task="answer",
            split="default",
            endpoint=endpoint,
            options={"trials": trials},
        )
    assert not Prediction.objects.exists()


def test_the_page_the_api_the_csv_and_the_leaderboard_show_the_trials(
    tmp_path: Path, broker: None, client: Any
) -> None:
    benchmark = make_counting_benchmark(tmp_path, 2)
    with FakeOpenAI(responder=seeded_answer) as server:
        run = launch(benchmark, make_endpoint(server.base_url), "--repeat", "2")
        execute_run(run)
    # Items 0 and 1; seed 0 gets item 0 right, seed 1 item 1: accuracy 50 in both trials.
    # Each item right once in two: pass@1 = pass^1 = 1/2, pass@2 = 1, pass^2 = 0.
    assert run.metrics["accuracy"] == 50.0
    client.force_login(make_superuser())
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "means ± sd over 2 trials" in page
    assert "± 0.00</td>" in page
    assert "pass^k" in page and "pass@k" in page
    pass_rows = re.findall(
        r"<tr><th scope=\"row\"><code>accuracy</code></th><td class=\"num\">(\d)</td>\s*"
        r"<td class=\"num\">([\d.]+)</td><td class=\"num\">([\d.]+)</td></tr>",
        page,
    )
    assert pass_rows == [("1", "50.00", "50.00"), ("2", "100.00", "0.00")]
    # the sds and pass figures are not metric rows of their own
    assert "accuracy_std" not in page and "accuracy pass" not in page

    api = client.get(f"/api/runs/{run.pk}/").json()
    assert api["metrics"]["accuracy"] == 50.0
    assert "accuracy_std" not in api["metrics"]
    assert api["trials"] == {
        "trials": 2,
        "std": {"accuracy": 0.0, "unparsed": 0.0},
        "pass": [
            {"metric": "accuracy", "k": 1, "pass_at": 50.0, "pass_hat": 50.0},
            {"metric": "accuracy", "k": 2, "pass_at": 100.0, "pass_hat": 0.0},
        ],
    }

    header, *rows = csv_rows(client, run)
    at = header.index("trial")
    assert sorted(row[at] for row in rows) == ["0", "0", "1", "1"]

    board = client.get(f"/leaderboard/{benchmark.pk}/answer/").content.decode()
    assert "fake-model" in board and ">50<" in board and "mean of 2 trials" in board
    assert "accuracy_std" not in board and "accuracy pass" not in board
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "2 trials (trial t sends seed 0 + t)" in page
    assert page.count('<span class="badge">trial 1</span>') == 2


def test_the_admin_launch_form_takes_trials_through_the_same_service(
    tmp_path: Path, client: Any
) -> None:
    benchmark = make_counting_benchmark(tmp_path, 3)
    endpoint = make_endpoint("http://127.0.0.1:9/v1")
    client.force_login(make_superuser())
    refused = client.post(
        "/admin/evaluation/run/add/", launch_form(benchmark, endpoint, options='{"trials": 0}')
    )
    assert refused.status_code == 200
    assert "option &#x27;trials&#x27; must be a whole number from 1 to 100; got 0" in (
        refused.content.decode()
    )
    assert not Run.objects.exists()
    client.post(
        "/admin/evaluation/run/add/", launch_form(benchmark, endpoint, options='{"trials": 2}')
    )
    run = Run.objects.get()
    assert run.launch_options == {"trials": 2}
    assert sorted(run.predictions.values_list("repeat", flat=True)) == [0, 0, 0, 1, 1, 1]
