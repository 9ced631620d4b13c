"""Values shown as what their task declares them to be (issue 14): counts as whole numbers
without intervals on the run page, the leaderboard, the API and the CSV; scores with their
intervals and direction; leaderboards sorted by the headline in its direction; names no task
declares (older runs) shown as stored."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from benchmarks.kit import registry as suites
from benchmarks.models import Benchmark
from evaluation.models import Prediction, Run
from tests.factories import make_benchmark, make_researcher, make_sample

pytestmark = pytest.mark.django_db


def similar_run(**fields: Any) -> Run:
    """A finished MetaTool `similar` run as its aggregate leaves it, with one older name."""
    benchmark = make_benchmark(name="MetaTool", suite="metatool")
    fields.setdefault("name", "gpt")
    run = Run.objects.create(
        benchmark=benchmark,
        task="similar",
        status=Run.Status.DONE,
        model_name="m",
        metrics={
            "CSR": 8.33,
            "Top@1": 50.0,
            "Top@3": 100.0,
            "Top@5": 100.0,
            "n": 20.0,
            "unparsed": 3.0,
            "failed": 0.0,
            "wrong_picks": 2.0,
            "legacy_rate": 0.125,
        },
        # as the bootstrap stored them, counts included
        intervals={"CSR": [0.0, 20.5], "n": [20.0, 20.0], "unparsed": [1.0, 6.0]},
        **fields,
    )
    scores = [
        {"correct": 0.0, "unparsed": 0.0, "failed": 0.0, "pick_rank": 3.0},
        {"correct": 1.0, "unparsed": 0.0, "failed": 0.0, "pick_rank": None, "old": 0.5},
    ]
    for position, values in enumerate(scores):
        Prediction.objects.create(
            run=run,
            sample=make_sample(benchmark=benchmark, split="queries"),
            position=position,
            status=Prediction.Status.DONE,
            output="Forecast",
            scores=values,
        )
    return run


def cells(html: str, name: str) -> list[str]:
    """The text of the cells of the metrics table's row for `name`."""
    row = re.search(
        rf"<tr><th scope=\"row\"[^>]*><code>{re.escape(name)}</code>(.*?)</tr>", html, re.S
    )
    assert row, f"no row for {name}"
    return [
        re.sub(r"<[^>]+>", "", cell).strip()
        for cell in re.findall(r"<td[^>]*>(.*?)</td>", row[1], re.S)
    ]


def test_the_run_page_shows_counts_as_counts_and_scores_with_intervals(client: Client) -> None:
    run = similar_run()
    client.force_login(make_researcher())
    html = client.get(f"/runs/{run.pk}/").content.decode()
    # n is 20, not "20.0" nor "20 [20, 20]"; the unread answers are a count too
    assert cells(html, "n") == ["20", ""]
    assert cells(html, "unparsed") == ["3", ""]
    assert cells(html, "wrong_picks") == ["2", ""]
    # the headline keeps its interval, in its percent's two decimals (not 8.3300)
    assert cells(html, "CSR") == ["8.33", "0.00 \N{EN DASH} 20.50"]
    assert 'title="higher is better">↑' in html and 'title="lower is better">↓' in html
    # a name the task does not declare is shown as stored
    assert cells(html, "legacy_rate") == ["0.1250", ""]
    # per item: flags and counts whole, in the declared order, older names after
    assert "<code>pick_rank</code> 3</div>" in html
    assert "<code>unparsed</code> 0</div>" in html
    assert "<code>correct</code> 0.0</div>" in html  # a score, as stored
    assert "<code>old</code> 0.5</div>" in html
    order = re.findall(r"<div><code>(\w+)</code>", html)[:4]
    assert order == ["correct", "unparsed", "failed", "pick_rank"]
    # the progress partial (htmx polling) shows the same
    partial = client.get(f"/runs/{run.pk}/", {"part": "progress"}, HTTP_HX_REQUEST="true")
    assert cells(partial.content.decode(), "n") == ["20", ""]


def test_the_api_gives_counts_as_integers_and_no_interval_for_them(client: Client) -> None:
    run = similar_run()
    client.force_login(make_researcher())
    body = client.get(f"/api/runs/{run.pk}/").json()
    assert body["metrics"]["n"] == 20 and isinstance(body["metrics"]["n"], int)
    assert isinstance(body["metrics"]["CSR"], float)
    assert list(body["metrics"])[:2] == ["CSR", "Top@1"]
    assert body["intervals"] == {"CSR": [0.0, 20.5]}
    assert body["metric_specs"]["n"] == {"kind": "count", "direction": None, "description": "items"}
    assert body["metric_specs"]["CSR"]["direction"] == "higher"
    assert body["metric_specs"]["Top@1"]["direction"] is None
    assert "legacy_rate" not in body["metric_specs"] and body["metrics"]["legacy_rate"] == 0.125


def test_the_csv_gives_flags_and_counts_as_whole_numbers(client: Client) -> None:
    run = similar_run()
    client.force_login(make_researcher())
    response = client.get(f"/runs/{run.pk}/predictions.csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0]["score:pick_rank"] == "3" and rows[0]["score:unparsed"] == "0"
    assert rows[0]["score:correct"] == "0.0"  # a score, as stored
    assert rows[1]["score:old"] == "0.5"


@pytest.fixture
def errors_suite(monkeypatch: pytest.MonkeyPatch) -> Iterator[Benchmark]:
    monkeypatch.setitem(suites.SUITE_MODULES, "errors_test", "tests.evaluation.errors_suite")
    yield make_benchmark(name="Calls", suite="errors_test")


def test_a_leaderboard_sorts_a_lower_is_better_headline_ascending(
    client: Client, errors_suite: Benchmark
) -> None:
    for name, error_rate in (("middling", 30.0), ("best", 5.0), ("none yet", None), ("good", 10.0)):
        Run.objects.create(
            benchmark=errors_suite,
            task="calls",
            status=Run.Status.DONE,
            name=name,
            metrics={"error_rate": error_rate, "accuracy": 100 - (error_rate or 0), "n": 40.0},
            intervals={"error_rate": [1.0, 9.0], "n": [40.0, 40.0]},
        )
    client.force_login(make_researcher())
    html = client.get(f"/leaderboard/{errors_suite.pk}/calls/").content.decode()
    names = re.findall(r'<th scope="row"><a href="/runs/\d+/">#\d+ ([^<]+)</a>', html)
    assert names == ["best", "good", "middling", "none yet"]
    assert "best first by <code>error_rate</code> (lower is better)" in html
    # n is a count: 40, with no interval; error_rate keeps its interval
    assert ">40</td>" in html and "[40, 40]" not in html and "[1.00, 9.00]" in html
