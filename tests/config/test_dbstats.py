"""The statistics after a bulk write (config.dbstats): the rule by hand cases on a table of
the test's own, the ANALYZE after the commit, and the platform's bulk writes calling it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

from benchmarks.models import Benchmark
from benchmarks.services import benchmark_import
from config.dbstats import ANALYZE_FRACTION, ANALYZE_MIN_ROWS, stale_tables, stats_after_bulk_write
from evaluation import services
from tests.evaluation.conftest import make_endpoint
from tests.workers import flush_test_broker

pytestmark = pytest.mark.django_db

PROBE = "dbstats_probe"


def probe(rows: int, *, analyzed: bool) -> None:
    """A table of `rows` rows, analysed or never (rolled back with the test)."""
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE dbstats_probe (x int)")
        cursor.execute("INSERT INTO dbstats_probe SELECT g FROM generate_series(1, %s) g", [rows])
        if analyzed:
            cursor.execute("ANALYZE dbstats_probe")


def reltuples(table: str) -> float:
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [table])
        return float(cursor.fetchone()[0])


def test_the_rule_by_hand() -> None:
    assert (ANALYZE_MIN_ROWS, ANALYZE_FRACTION) == (1000, 0.1)
    probe(0, analyzed=False)  # never analysed: its statistics know no row
    assert stale_tables({PROBE: 1000}) == [PROBE]
    assert stale_tables({PROBE: 999}) == []  # too few to matter, whatever the table
    assert stale_tables({"no_such_table": 5000}) == ["no_such_table"]


def test_a_write_counts_against_the_rows_the_statistics_know() -> None:
    probe(100_000, analyzed=True)
    assert reltuples(PROBE) == 100_000
    assert stale_tables({PROBE: 10_000}) == []  # 10%: not more than the fraction
    assert stale_tables({PROBE: 10_001}) == [PROBE]


def test_the_analyze_runs_once_the_write_commits(django_capture_on_commit_callbacks: Any) -> None:
    probe(0, analyzed=True)
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO dbstats_probe SELECT g FROM generate_series(1, 5000) g")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        stats_after_bulk_write({PROBE: 5000})
    assert reltuples(PROBE) == 0  # not before the commit
    for callback in callbacks:
        callback()
    assert reltuples(PROBE) == 5000


def generic_file(path: Path, rows: int) -> Path:
    lines = [json.dumps({"id": i, "query": f"q{i}", "answer": i}) for i in range(rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def committed(capture: Any, write: Callable[[], Any]) -> Any:
    with capture(execute=True):
        return write()


def test_an_import_and_a_launch_leave_statistics_that_know_their_rows(
    tmp_path: Path, django_capture_on_commit_callbacks: Any
) -> None:
    rows = 2000
    path = generic_file(tmp_path / "q.jsonl", rows)
    committed(
        django_capture_on_commit_callbacks,
        lambda: benchmark_import(suite="generic", paths=[path], benchmark_name="B"),
    )
    assert reltuples("benchmarks_sample") == rows
    flush_test_broker()
    committed(
        django_capture_on_commit_callbacks,
        lambda: services.run_launch(
            benchmark=Benchmark.objects.get(name="B"),
            task="answer",
            split="default",
            endpoint=make_endpoint("http://127.0.0.1:9/v1"),
        ),
    )
    flush_test_broker()
    assert reltuples("evaluation_prediction") == rows
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT most_common_vals::text FROM pg_stats"
            " WHERE tablename = 'evaluation_prediction' AND attname = 'status'"
        )
        assert cursor.fetchone()[0] == "{pending}"


def test_imported_predictions_leave_statistics_that_know_them(
    tmp_path: Path, django_capture_on_commit_callbacks: Any
) -> None:
    rows = 1500
    path = generic_file(tmp_path / "q.jsonl", rows)
    committed(
        django_capture_on_commit_callbacks,
        lambda: benchmark_import(suite="generic", paths=[path], benchmark_name="B"),
    )
    outputs = tmp_path / "outputs.jsonl"
    outputs.write_text(
        "".join(json.dumps({"sample_id": str(i), "output": str(i)}) + "\n" for i in range(rows))
    )
    committed(
        django_capture_on_commit_callbacks,
        lambda: services.predictions_import(
            benchmark=Benchmark.objects.get(name="B"),
            task="answer",
            split="default",
            path=outputs,
            name="imported",
            fmt="generic",
        ),
    )
    assert reltuples("evaluation_prediction") == rows


def test_a_failed_analyze_is_logged_not_raised(caplog: Any) -> None:
    from config.dbstats import analyze

    with connection.cursor() as cursor:
        cursor.execute("SAVEPOINT before_failure")
        analyze(["no_such_table"])
        cursor.execute("ROLLBACK TO SAVEPOINT before_failure")
    assert "ANALYZE of no_such_table after a bulk write failed" in caplog.text
