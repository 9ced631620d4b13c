"""The overall score page of a benchmark whose suite declares one (BFCL v4 here): which runs
count (each model's and mode's latest finished run of each task), rows apart per tool mode,
missing categories shown missing and every figure above them too, the CSV of the same table."""

from __future__ import annotations

import csv
import io
import re
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from benchmarks.models import Benchmark
from evaluation.models import Run
from evaluation.overall import overall_board
from tests.factories import make_benchmark, make_researcher

pytestmark = pytest.mark.django_db

# Hand-computed figures (tests/suites/bfcl/test_overall.py): non-live 65, live 58 (by count),
# irrelevance 80, multi-turn 25, agentic 30; overall 39.8.
SCORES: dict[str, tuple[float, int]] = {
    "simple_python": (90.0, 400),
    "simple_java": (60.0, 100),
    "simple_javascript": (30.0, 50),
    "multiple": (80.0, 200),
    "parallel": (70.0, 200),
    "parallel_multiple": (50.0, 200),
    "live_simple": (80.0, 100),
    "live_multiple": (60.0, 300),
    "live_parallel": (40.0, 50),
    "live_parallel_multiple": (20.0, 50),
    "irrelevance": (90.0, 240),
    "live_irrelevance": (70.0, 800),
    "live_relevance": (100.0, 16),
    "multi_turn_base": (40.0, 200),
    "multi_turn_miss_func": (30.0, 200),
    "multi_turn_miss_param": (20.0, 200),
    "multi_turn_long_context": (10.0, 200),
}
AGENTIC: dict[str, tuple[float, int]] = {
    "web_search_base": (50.0, 100),
    "web_search_no_snippet": (30.0, 100),
    "memory_kv": (30.0, 155),
    "memory_vector": (20.0, 155),
    "memory_rec_sum": (10.0, 155),
}


@pytest.fixture
def bfcl() -> Benchmark:
    return make_benchmark(name="BFCL v4 (test)", suite="bfcl")


@pytest.fixture
def researcher(client: Client) -> Client:
    client.force_login(make_researcher(username="ada"))
    return client


def done(
    benchmark: Benchmark,
    task: str,
    accuracy: float,
    n: int,
    *,
    model: str = "m1",
    mode: str = "native",
    ago: int = 0,
    **fields: Any,
) -> Run:
    fields.setdefault("status", Run.Status.DONE)
    fields.setdefault("finished_at", timezone.now() - timedelta(hours=ago))
    return Run.objects.create(
        benchmark=benchmark,
        task=task,
        model_name=model,
        tool_mode=mode,
        metrics={"accuracy": accuracy, "n": float(n)},
        **fields,
    )


def cells(board: Any, model: str, mode: str) -> dict[str, Any]:
    row = next(r for r in board.rows if r.model == model and r.tool_mode == mode)
    return {cell.column.name: cell for cell in row.cells}


def test_every_category_run_gives_each_section_but_web_search_which_is_never_counted(
    bfcl: Benchmark,
) -> None:
    for task, (accuracy, n) in {**SCORES, **AGENTIC}.items():
        done(bfcl, task, accuracy, n)
    board = overall_board(bfcl)
    assert board is not None
    found = cells(board, "m1", "native")
    assert found["non_live"].figure.value == pytest.approx(65.0)
    assert found["live"].figure.value == pytest.approx(58.0)
    assert found["memory"].figure.value == pytest.approx(20.0)
    # the web search tasks' runs are answered by the platform's search service, not BFCL's:
    # never counted (their TaskSpec says why), so web search, agentic and the overall (39.8
    # with them, by hand) are missing
    for task in ("web_search_base", "web_search_no_snippet"):
        assert found[task].figure.value is None and found[task].run is None
        assert found[task].missing.startswith("never counted: ")
        assert "not comparable with BFCL's published ones" in found[task].missing
    assert found["agentic"].figure.value is None
    assert found["overall"].figure.value is None
    assert found["overall"].missing == "missing: web_search_base, web_search_no_snippet"
    assert board.rows[0].complete == pytest.approx(0.6)
    assert set(board.never_counted) == {"web_search_base", "web_search_no_snippet"}


def test_the_categories_not_run_are_missing_and_so_is_every_figure_above_them(
    bfcl: Benchmark,
) -> None:
    for task, (accuracy, n) in SCORES.items():
        done(bfcl, task, accuracy, n)
    board = overall_board(bfcl)
    assert board is not None
    found = cells(board, "m1", "native")
    assert found["overall"].figure.value is None
    assert found["overall"].missing == (
        "missing: web_search_base, web_search_no_snippet, memory_kv, memory_vector, memory_rec_sum"
    )
    assert found["agentic"].figure.value is None
    # no task of the platform runs it: the suite says why (agentic.NOT_RUN); one whose runs
    # are never counted says why (TaskSpec.not_comparable); a category it runs but this model
    # has no run of is simply not run
    assert "SerpAPI" in found["web_search_base"].missing
    assert found["web_search_base"].missing.startswith("never counted: ")
    assert "faiss" in found["memory_vector"].missing
    assert "faiss" not in found["memory_kv"].missing
    # the complete sections keep their figures; 60 of the 100 points of weight are covered
    assert found["multi_turn"].figure.value == pytest.approx(25.0)
    assert found["hallucination"].figure.value == pytest.approx(80.0)
    assert board.rows[0].complete == pytest.approx(0.6)


def test_native_and_text_runs_of_one_model_are_rows_apart(bfcl: Benchmark) -> None:
    done(bfcl, "simple_python", 90.0, 400, mode="native")
    done(bfcl, "simple_python", 40.0, 400, mode="text")
    done(bfcl, "simple_python", 70.0, 400, model="m2", mode="text")
    board = overall_board(bfcl)
    assert board is not None
    assert {(r.model, r.tool_mode) for r in board.rows} == {
        ("m1", "native"),
        ("m1", "text"),
        ("m2", "text"),
    }
    assert cells(board, "m1", "native")["simple_python"].figure.value == 90.0
    assert cells(board, "m1", "text")["simple_python"].figure.value == 40.0
    assert cells(board, "m1", "text")["simple_java"].missing == "not run"


def test_the_latest_finished_run_of_a_task_counts(bfcl: Benchmark) -> None:
    done(bfcl, "multiple", 10.0, 200, ago=5)
    newest = done(bfcl, "multiple", 90.0, 200, ago=1)
    # neither a run still going, a failed one, nor one on rewritten descriptions counts
    done(bfcl, "multiple", 50.0, 200, status=Run.Status.RUNNING)
    done(bfcl, "multiple", 50.0, 200, status=Run.Status.FAILED)
    done(bfcl, "multiple", 30.0, 200, model="")
    # a finished run without a time of finishing counts as the oldest
    done(bfcl, "multiple", 20.0, 200, finished_at=None)
    board = overall_board(bfcl)
    assert board is not None
    cell = cells(board, "m1", "native")["multiple"]
    assert (cell.figure.value, cell.run) == (90.0, newest)
    assert board.unnamed == 1


def test_a_run_without_the_metric_is_missing_saying_so(bfcl: Benchmark) -> None:
    run = done(bfcl, "parallel", 0.0, 0)
    board = overall_board(bfcl)
    assert board is not None
    cell = cells(board, "m1", "native")["parallel"]
    assert cell.figure.value is None and cell.run == run
    assert cell.missing == f"run #{run.pk} has no accuracy over n >= 1 items"


def test_a_zero_accuracy_counts_as_zero_not_as_missing(bfcl: Benchmark) -> None:
    done(bfcl, "irrelevance", 0.0, 240)
    done(bfcl, "live_irrelevance", 50.0, 800)
    board = overall_board(bfcl)
    assert board is not None
    assert cells(board, "m1", "native")["hallucination"].figure.value == pytest.approx(25.0)


def test_rows_with_an_overall_come_first_then_by_how_much_they_cover(bfcl: Benchmark) -> None:
    for task, (accuracy, n) in {**SCORES, **AGENTIC}.items():
        done(bfcl, task, accuracy, n, model="full")
    for task in ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param"):
        done(bfcl, task, 50.0, 200, model="most")
    done(bfcl, "multi_turn_long_context", 50.0, 200, model="most")
    done(bfcl, "simple_python", 99.0, 400, model="least")
    board = overall_board(bfcl)
    assert board is not None
    assert [row.model for row in board.rows] == ["full", "most", "least"]
    # web search is never counted: even "full" covers 60 of the 100 points
    assert [row.complete_percent for row in board.rows] == [60.0, 30.0, 0.0]


def test_the_page_shows_the_rows_the_missing_cells_and_the_way_runs_are_picked(
    researcher: Client, bfcl: Benchmark
) -> None:
    python = done(bfcl, "simple_python", 90.0, 400)
    done(bfcl, "simple_python", 40.0, 400, mode="text", model="<b>m</b>")
    page = researcher.get(f"/leaderboard/{bfcl.pk}/").content.decode()
    assert "latest finished run" in page
    assert "native (FC)" in page and "text (Prompt)" in page
    assert "&lt;b&gt;m&lt;/b&gt;" in page and "<b>m</b>" not in page
    assert f'href="/runs/{python.pk}/"' in page
    assert "90.00" in page
    assert page.count('class="missing"') > 20
    # the categories a row lacks are named on the page
    lacks = page.split("What each row lacks")[1]
    assert "<code>simple_java</code>" in lacks and "<code>memory_rec_sum</code>" in lacks
    assert "weighted non_live 10, live 10, hallucination 10, multi_turn 30, agentic 40" in page
    assert f'href="/leaderboard/{bfcl.pk}/overall.csv"' in page
    never = page.split("Never counted, whatever their runs:")[1].split("</p>")[0]
    assert "<code>web_search_base</code>" in never and "not comparable with BFCL" in never
    # the task's leaderboard and the runs' list lead here
    board = researcher.get(f"/leaderboard/{bfcl.pk}/simple_python/").content.decode()
    assert f'href="/leaderboard/{bfcl.pk}/"' in board
    assert f'href="/leaderboard/{bfcl.pk}/"' in researcher.get("/runs/").content.decode()


def test_the_csv_is_the_same_table_with_missing_cells_empty(
    researcher: Client, bfcl: Benchmark
) -> None:
    run = done(bfcl, "irrelevance", 90.0, 240)
    limited = done(bfcl, "live_irrelevance", 70.0, 800, item_limit=800)
    response = researcher.get(f"/leaderboard/{bfcl.pk}/overall.csv")
    assert response.status_code == 200
    text = b"".join(response.streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 1
    row = rows[0]
    assert (row["model"], row["tool_mode"]) == ("m1", "native")
    assert row["hallucination"] == "80.0" and row["irrelevance"] == "90.0"
    assert row["overall"] == "" and row["live"] == ""
    assert row["complete_weight"] == "10.0"
    assert re.search(rf"\birrelevance:{run.pk}\b", row["runs"])
    assert "simple_python" in row["missing"].split()
    assert row["subset_runs"] == f"live_irrelevance:{limited.pk}"


def test_a_benchmark_whose_suite_declares_no_overall_has_no_such_page(
    researcher: Client,
) -> None:
    generic = make_benchmark(suite="generic")
    assert researcher.get(f"/leaderboard/{generic.pk}/").status_code == 404
    assert researcher.get(f"/leaderboard/{generic.pk}/overall.csv").status_code == 404
    assert researcher.get("/leaderboard/999999/").status_code == 404
