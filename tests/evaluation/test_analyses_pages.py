"""The analyses pages and CSVs: a run's (a section per analysis, its SVG chart and table), several
runs' (a line per run), the CSV per analysis, and refusals that name what is wrong."""

from __future__ import annotations

import csv
import io
import json
import time
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from benchmarks.kit.protocol import PublishedOutput
from benchmarks.models import Sample
from evaluation.analyses import run_analyses_get
from evaluation.models import Prediction, Run, RunAnalysis
from evaluation.services import outputs_import
from tests.evaluation.test_analyses_mtubench import m_s_output, mtubench
from tests.factories import make_researcher
from tests.workers import celery_worker, flush_test_broker

pytestmark = pytest.mark.django_db


@pytest.fixture
def researcher_client() -> Client:
    client = Client()
    client.force_login(make_researcher())
    return client


def m_s_runs(seeddata: Path, *names: str) -> list[Run]:
    benchmark = mtubench(seeddata, "M-S", "S-S")
    samples = list(Sample.objects.filter(benchmark=benchmark, split="M-S").order_by("id"))
    runs = []
    for index, name in enumerate(names):
        outputs = [
            # the second run answers every turn in words: no call at all
            PublishedOutput(s.external_id, m_s_output(s) if index == 0 else "I cannot.", "M-S")
            for s in samples
        ]
        runs.append(
            outputs_import(
                benchmark=benchmark, task="M-S", outputs=outputs, name=name, model_name=name
            )
        )
    return runs


def read_csv(response: Any) -> list[list[str]]:
    body = b"".join(response.streaming_content).decode()
    return list(csv.reader(io.StringIO(body)))


def test_a_runs_page_has_a_chart_and_table_per_analysis(
    seeddata: Path, researcher_client: Client
) -> None:
    (run,) = m_s_runs(seeddata, "rules <b>")
    page = researcher_client.get(f"/runs/{run.pk}/analyses/")
    assert page.status_code == 200
    html = page.content.decode()
    for title in (
        "Tool selection by dialogue turn",
        "Tool selection by number of tools in the sample",
        "Error types of wrong turns",
    ):
        assert title in html
    assert html.count("<svg") == 3
    # the run's name is escaped wherever it is shown
    assert "rules <b>" not in html and "rules &lt;b&gt;" in html
    assert f'href="/runs/{run.pk}/analyses/by_turn.csv"' in html
    assert f'href="/api/runs/{run.pk}/analyses/"' in html
    # the run's page links here
    assert (
        f'href="/runs/{run.pk}/analyses/"'
        in researcher_client.get(f"/runs/{run.pk}/").content.decode()
    )

    rows = read_csv(researcher_client.get(f"/runs/{run.pk}/analyses/by_turn.csv"))
    assert rows[0] == ["run", "turn", "n", "TS", "PS"]
    assert rows[1] == [str(run.pk), "1", "30", "100.0", "100.0"]
    assert [row[1] for row in rows[1:]] == ["1", "2", "3", "4", "5", "6", "7"]
    errors = read_csv(researcher_client.get(f"/runs/{run.pk}/analyses/error_types.csv"))
    assert errors[0] == ["run", "error_type", "n", "share"]
    assert (
        sum(int(row[2]) for row in errors[1:])
        == run.predictions.exclude(scores__correct=1.0).count()
    )

    # an analysis the task does not have is a 404 naming the ones it has
    missing = researcher_client.get(f"/runs/{run.pk}/analyses/nothing.csv")
    assert missing.status_code == 404
    assert "by_turn, by_tools, error_types" in missing.content.decode()


def test_several_runs_draw_a_line_per_run_and_one_csv(
    seeddata: Path, researcher_client: Client
) -> None:
    first, second = m_s_runs(seeddata, "model-a", "model-b")
    page = researcher_client.get(f"/runs/analyses/?run={first.pk}&run={second.pk}")
    assert page.status_code == 200
    html = page.content.decode()
    # a chart per metric of each analysis: by_turn (TS, PS), by_tools (TS, PS), error types
    assert html.count("<svg") == 5
    assert f"#{first.pk} model-a" in html and f"#{second.pk} model-b" in html
    assert html.count('class="chart-series-line chart-series-1"') == 4
    rows = read_csv(
        researcher_client.get(f"/runs/analyses/by_turn.csv?run={first.pk}&run={second.pk}")
    )
    assert rows[0] == ["series", "runs", "turn", "n", "TS", "PS"]
    assert len(rows) == 1 + 2 * 7
    # the second run calls nothing: right exactly on the first turns where no call was due
    firsts = Sample.objects.filter(benchmark=first.benchmark, split="M-S", metadata__turn=0)
    silent = sum(1 for s in firsts if not s.reference["calls"])
    expected = round(100 * silent / firsts.count(), 2)
    assert rows[8][:5] == [f"#{second.pk} model-b", str(second.pk), "1", "30", str(expected)]
    # the leaderboard offers the comparison
    board = researcher_client.get(f"/leaderboard/{first.benchmark_id}/M-S/").content.decode()
    assert 'action="/runs/analyses/"' in board
    assert f'name="run" value="{first.pk}"' in board


def test_refusals_name_the_run(seeddata: Path, researcher_client: Client) -> None:
    (run,) = m_s_runs(seeddata, "a")
    other = outputs_import(
        benchmark=run.benchmark,
        task="S-S",
        outputs=[PublishedOutput("S-S_0", "x", "S-S")],
        name="single",
    )
    mixed = researcher_client.get(f"/runs/analyses/?run={run.pk}&run={other.pk}")
    assert mixed.status_code == 400
    assert f"run {other.pk} is a run of MTU-Bench S-S" in mixed.content.decode()
    assert researcher_client.get("/runs/analyses/").status_code == 400
    assert researcher_client.get("/runs/analyses/?run=x").status_code == 400
    assert researcher_client.get("/runs/analyses/?run=987654").status_code == 404


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_large_run_is_analysed_by_a_worker_while_the_page_polls(
    seeddata: Path, researcher_client: Client, settings: Any, tmp_path: Path
) -> None:
    # given: runs above the inline size go to the reports queue (here: every run)
    flush_test_broker()
    settings.ANALYSES_INLINE_ITEMS = 0
    (run,) = m_s_runs(seeddata, "a")
    # when: the page asks before any worker runs
    html = researcher_client.get(f"/runs/{run.pk}/analyses/").content.decode()
    # then: it polls, and a worker on the reports queue computes them
    assert "Waiting for a worker" in html and 'hx-trigger="every 1s"' in html
    assert RunAnalysis.objects.get(run=run).status == RunAnalysis.Status.PENDING
    with celery_worker(tmp_path, queues="reports"):
        deadline = time.monotonic() + 60
        while RunAnalysis.objects.get(run=run).status != RunAnalysis.Status.DONE:
            assert time.monotonic() < deadline, RunAnalysis.objects.get(run=run).error
            time.sleep(0.2)
    polled = researcher_client.get(
        f"/runs/{run.pk}/analyses/?part=analyses", headers={"HX-Request": "true"}
    ).content.decode()
    assert '<section id="analyses"' in polled
    assert polled.count("<svg") == 3 and "<html" not in polled
    stored = RunAnalysis.objects.get(run=run)
    assert stored.data["analyses"]["by_turn"]["rows"][0] == {
        "group": 1,
        "n": 30,
        "TS": 100.0,
        "PS": 100.0,
    }
    # a change to the run (a prediction scored again) makes them stale: asked again, queued
    prediction = run.predictions.order_by("position").first()
    prediction.scores = {**prediction.scores, "TS": 0.0}
    prediction.save()
    assert researcher_client.get(f"/runs/{run.pk}/analyses/").status_code == 200
    assert RunAnalysis.objects.get(run=run).status == RunAnalysis.Status.PENDING
    flush_test_broker()


def test_the_api_answers_what_the_command_prints(
    seeddata: Path, researcher_client: Client, settings: Any
) -> None:
    (run,) = m_s_runs(seeddata, "a")
    out = io.StringIO()
    call_command("run_analysis", str(run.pk), "--json", stdout=out)
    answer = researcher_client.get(f"/api/runs/{run.pk}/analyses/")
    assert answer.status_code == 200
    assert answer.json() == json.loads(out.getvalue())
    # a large run: 202 with the progress while the reports queue has it
    (large,) = m_s_runs(seeddata, "b")
    settings.ANALYSES_INLINE_ITEMS = 0
    pending = researcher_client.get(f"/api/runs/{large.pk}/analyses/")
    assert pending.status_code == 202
    assert pending.json() == {"status": "pending", "done": 0, "total": 3}


def test_a_running_run_is_analysed_over_its_settled_items(
    seeddata: Path, researcher_client: Client
) -> None:
    # given: a run whose second turns are not answered yet
    (run,) = m_s_runs(seeddata, "a")
    waiting = run.predictions.filter(sample__metadata__turn=1)
    assert waiting.count() == 30
    waiting.update(status=Prediction.Status.PENDING, output="", answer=None, scores={})
    Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING)
    run.refresh_from_db()
    # when
    stored = run_analyses_get(run)
    # then: no turn 2 at all (not 30 wrong ones), the other turns as before
    rows = stored.data["analyses"]["by_turn"]["rows"]
    assert [row["group"] for row in rows] == [1, 3, 4, 5, 6, 7]
    assert sum(row["n"] for row in rows) == 136 - 30
    errors = stored.data["analyses"]["error_types"]["rows"]
    assert "no answer" not in [row["group"] for row in errors]
    page = researcher_client.get(f"/runs/{run.pk}/analyses/").content.decode()
    assert "The run is running: these are over its settled items" in page
