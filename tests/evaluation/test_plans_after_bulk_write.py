"""A run exported right after its bulk writes (the benchmark's import, the run's launch) is read
by a plan that is not quadratic, however stale the statistics were before them.

The stale case, as autovacuum leaves the tables after a large delete (a benchmark and its run
deleted): the last ANALYZE saw a few live rows in many pages, so the planner's density of each
table is near zero, and the new run's id is one its statistics never saw. Planned from that,
the predictions CSV's join of the run's predictions with their samples was a nested loop
estimated at one row a side whose inner side read the whole samples index for every
prediction (a join filter, not an index condition): N predictions x every sample index entry,
dead ones included (found by EXPLAIN ANALYZE at 200,000 rows: stopped after 30 s, where the
same export takes under 2 s). At this test's size, 3,000 rows, the same plan is chosen and
the export took 10 s."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from benchmarks.models import Benchmark
from benchmarks.services import benchmark_import
from evaluation import services
from evaluation.analyses import fingerprint
from evaluation.gold_versions import refined_sample_count
from evaluation.models import Prediction, Run
from evaluation.selectors import prediction_csv_query
from tests.evaluation.conftest import make_endpoint
from tests.factories import make_benchmark, make_researcher
from tests.plans import explain, leave_stale_statistics, quadratic_joins, worst_choices
from tests.workers import flush_test_broker

pytestmark = pytest.mark.django_db

ROWS = 3000
DELETED = 30_000


def write_benchmark(path: Path) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for i in range(ROWS):
            handle.write(json.dumps({"id": i, "query": f"What is {i} + 1?", "answer": i + 1}))
            handle.write("\n")
    return path


def test_a_run_exported_right_after_its_bulk_writes_is_not_read_quadratically(
    tmp_path: Path, django_capture_on_commit_callbacks, client: Client
) -> None:
    # given: statistics that know nothing of what comes
    leave_stale_statistics(DELETED)
    flush_test_broker()
    # when: the platform's bulk writes, each committed (what follows their commits runs)
    with django_capture_on_commit_callbacks(execute=True):
        benchmark_import(
            suite="generic", paths=[write_benchmark(tmp_path / "q.jsonl")], benchmark_name="New"
        )
    with django_capture_on_commit_callbacks(execute=True):
        run = services.run_launch(
            benchmark=Benchmark.objects.get(name="New"),
            task="answer",
            split="default",
            endpoint=make_endpoint("http://127.0.0.1:9/v1"),
        )
    flush_test_broker()  # its chunks are not answered here: the export reads pending rows
    assert Prediction.objects.filter(run=run).count() == ROWS
    # then: the export's plan has no nested loop that reads a whole table per row ...
    query = prediction_csv_query(run, score_names=[], whole=set(), prices=None)
    assert quadratic_joins(explain(query)) == []
    # ... and the export itself takes a fraction of a second, not seconds
    client.force_login(make_researcher())
    with connection.cursor() as cursor:
        cursor.execute("SET statement_timeout = '60s'")  # a quadratic plan fails, never hangs
        try:
            started = time.perf_counter()
            response = client.get(f"/runs/{run.pk}/predictions.csv")
            body = b"".join(response.streaming_content)
            seconds = time.perf_counter() - started
        finally:
            cursor.execute("RESET statement_timeout")
    assert body.count(b"\n") == ROWS + 1
    assert seconds < 2, f"the export of {ROWS} rows took {seconds:.1f} s"


def fresh_run(revised: bool = False) -> Run:
    """After stale statistics (leave_stale_statistics), a run of ROWS predictions of a new
    benchmark, written by SQL and never analysed: its id is one the statistics never saw.
    `revised`: every other sample refined (revision 1)."""
    leave_stale_statistics(DELETED)
    benchmark = make_benchmark(name="fresh")
    run = Run.objects.create(benchmark=benchmark, task="answer", split="default", status="done")
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO benchmarks_sample (benchmark_id, split, external_id, kind, input,"
            " candidate_tools, metadata, revision, created_at, updated_at)"
            " SELECT %s, 'default', 'q' || g, 'query', '{}', '[]', '{}', %s * (g %% 2), now(),"
            " now() FROM generate_series(1, %s) g",
            [benchmark.pk, int(revised), ROWS],
        )
        cursor.execute(
            "INSERT INTO evaluation_prediction (run_id, sample_id, repeat, position, status,"
            " attempts, context, output, trace, note, scores, error, cached, usage, updated_at)"
            " SELECT %s, id, 0, row_number() OVER (ORDER BY id) - 1, 'done', 1, '{}', 'x',"
            " '[]', '', '{}', '', false, '{}', now() FROM benchmarks_sample"
            " WHERE benchmark_id = %s",
            [run.pk, benchmark.pk],
        )
    return run


def quadratic_joins_of(call: Callable[[], object]) -> dict[str, list[str]]:
    """The SELECTs `call` runs, each with the nested loops of its plan that read a whole table
    (or all of a run's rows) per outer row, as the planner chooses now and as it chooses with
    only nested loops left (worst_choices): {query: [described]}, the clean ones left out."""
    with CaptureQueriesContext(connection) as seen:
        call()
    found = {}
    for query in seen.captured_queries:
        text = query["sql"]
        if not text.lstrip().upper().startswith("SELECT"):
            continue
        joins = quadratic_joins(explain(text))
        with worst_choices():
            joins += quadratic_joins(explain(text))
        if joins:
            found[text] = joins
    return found


def test_the_export_is_looked_up_by_index_whatever_the_planner_prefers() -> None:
    """With hash and merge joins off and the statistics stale, the only join left is a nested
    loop: its inner side must still be an index lookup (the sample by its primary key)."""
    run = fresh_run()
    query = prediction_csv_query(run, score_names=[], whole=set(), prices=None)
    assert quadratic_joins(explain(query)) == []
    with worst_choices():
        assert quadratic_joins(explain(query)) == []


def test_the_run_page_reads_its_predictions_and_samples_without_a_quadratic_plan(
    client: Client,
) -> None:
    """The run page's list of predictions (a page deep into the run) with their samples: the
    samples by their primary keys, never a join that stale statistics plan as a nested loop
    reading every sample for every prediction up to the page."""
    run = fresh_run()
    client.force_login(make_researcher())
    response: list[object] = []
    assert quadratic_joins_of(lambda: response.append(client.get(f"/runs/{run.pk}/?page=40"))) == {}
    html = response[0].content.decode()  # type: ignore[attr-defined]
    assert ">q1951<" in html or "q1951" in html  # position 1950 is on page 40


def test_the_refined_sample_count_probes_the_runs_prediction_of_each_revised_sample() -> None:
    """Stale statistics made the count a semi join whose inner side read every prediction of
    the run for every revised sample (an index condition on the run alone)."""
    run = fresh_run(revised=True)
    counted: list[int] = []
    assert quadratic_joins_of(lambda: counted.append(refined_sample_count(run))) == {}
    assert counted == [ROWS // 2]


def test_the_analyses_freshness_check_joins_nothing() -> None:
    """The analyses' fingerprint reads the run's predictions and its benchmark's samples each
    alone: the join of both, planned from stale statistics, read every sample per prediction."""
    run = fresh_run()
    assert quadratic_joins_of(lambda: fingerprint(run)) == {}


@pytest.mark.parametrize("url", ["/runs/", "/api/runs/", "/"])
def test_a_list_of_runs_counts_its_page_without_a_quadratic_plan(client: Client, url: str) -> None:
    """The run list, the API's and the home page's recent runs: each counts the predictions of
    the runs it shows, in one GROUP BY of those runs' predictions; aggregating every run's
    predictions joined to the runs before the page was taken planned, from stale statistics,
    a nested loop over a scan of the predictions for every run."""
    run = fresh_run()
    client.force_login(make_researcher())
    response: list[Any] = []
    assert quadratic_joins_of(lambda: response.append(client.get(url))) == {}
    assert response[0].status_code == 200
    if url == "/api/runs/":
        (shown,) = [r for r in response[0].json()["results"] if r["id"] == run.pk]
        assert shown["items"] == ROWS
