"""Each perf script runs to its end with tiny settings and leaves one result per target (what it
measured, its baseline, the ratio, the target, a verdict and the machine's load) for the table
`make perf` writes. The figures of such a run mean nothing; that the scripts run, measure what
they say and refuse to call a disturbed run a pass is what is checked. They run in a database of
their own (dropped afterwards), never the test database or the checkout's."""

from __future__ import annotations

import os
import pstats
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from perf import honest
from perf.owndb import OwnDatabase

ROOT = Path(__file__).resolve().parents[2]
VERDICTS = {"pass", "MISSED", "disturbed", "MISSED (disturbed)"}

SUFFIX = "_smoke"


@pytest.fixture(scope="module")
def smoke_env() -> Iterator[dict[str, str]]:
    """The environment of the scripts: DATABASE_URL a database of their own on the test
    PostgreSQL server, and their own databases' names suffixed (perf/owndb.py)."""
    from tests.workers import test_database_url

    server = test_database_url()
    saved = os.environ.pop("PERF_DATABASE_SUFFIX", None)
    try:
        names = ["toolevals_perf_smoke", *(f"toolevals_perf_{n}{SUFFIX}" for n in PERF_DBS)]
        own = [OwnDatabase(server, name) for name in names]
    finally:
        if saved is not None:
            os.environ["PERF_DATABASE_SUFFIX"] = saved
    own[0].ensure()
    env = {
        **os.environ,
        "DATABASE_URL": own[0].url,
        "PERF_DATABASE_SUFFIX": SUFFIX,
        "DEBUG": "1",
        "PYTHONUNBUFFERED": "1",
    }
    try:
        yield env
    finally:
        for database in own:
            database.drop()


PERF_DBS = ("annotate", "agreement", "sizes", "calibration")


def run_python(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """A perf script run from the checkout's root, its output captured."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=840,
    )


def run_script(env: dict[str, str], tmp_path: Path, *args: str) -> list[honest.Result]:
    results = tmp_path / "results.jsonl"
    done = run_python(env, *args, "--results", str(results))
    output = done.stdout + done.stderr
    # 0 pass, 1 missed, 3 disturbed: every one a finished measurement; anything else a crash
    assert done.returncode in (0, 1, 3), output
    # a crash exits 1 too: the output says which, when the results are missing
    found = honest.results_read(results) if results.exists() else []
    assert found, output
    for result in found:
        assert result.verdict in VERDICTS and "cores busy" in result.load, result
        assert result.value and result.baseline and result.target
        assert f"RESULT {result.measured}" in done.stdout
    assert done.returncode == honest.exit_status(r.verdict for r in found), output
    return found


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_import_speed_times_the_whole_command(smoke_env: dict[str, str], tmp_path: Path) -> None:
    (result,) = run_script(smoke_env, tmp_path, "perf/import_speed.py", "--sizes", "300")
    assert "the whole import_benchmark command" in result.measured
    assert "to its COMMIT" in result.baseline
    # and it says what part is start-up, and what part of that Django itself takes
    (startup,) = [note for note in result.notes if note.startswith("start-up ")]
    assert "Django with its own apps and the PostgreSQL backend" in startup
    assert "the command after start-up" in startup


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_csv_speed_compares_the_view_with_copy(smoke_env: dict[str, str], tmp_path: Path) -> None:
    predictions, labels = run_script(
        smoke_env,
        tmp_path,
        "perf/csv_speed.py",
        "--rows",
        "500",
        "--repeat",
        "2",
        "--export",
        "both",
    )
    for result, name in ((predictions, "predictions"), (labels, "labels")):
        assert result.measured.startswith(f"{name} CSV of 500 rows")
        assert "COPY ... TO STDOUT" in result.baseline and "first byte" in result.value


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_eval_overhead_in_both_modes_with_equal_processes(
    smoke_env: dict[str, str], tmp_path: Path
) -> None:
    text, native = run_script(
        smoke_env,
        tmp_path,
        "perf/eval_overhead.py",
        *("--items", "30", "--concurrency", "4", "--latency-ms", "5", "--workers", "1"),
        *("--repeat", "2", "--tool-mode", "both"),
    )
    for result in (text, native):
        assert "1 workers vs 1 bare processes" in result.measured
        assert "metrics and intervals stored" in result.measured


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_eval_cpu_gives_each_sides_cpu_per_item(smoke_env: dict[str, str]) -> None:
    # A diagnostic, not a target: no result for the table, the CPU per item of each side.
    done = run_python(smoke_env, "perf/eval_cpu.py", "--items", "30", "--pairs", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("pair 1: bare ")]
    assert "| platform workers " in line and "| extra " in line


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_agreement_speed_goes_through_the_worker(smoke_env: dict[str, str], tmp_path: Path) -> None:
    (result,) = run_script(
        smoke_env,
        tmp_path,
        "perf/agreement_speed.py",
        *("--items", "60", "--annotators", "3", "--questions", "3", "--resamples", "20"),
        *("--repeat", "2", "--drop-db"),
    )
    assert "through the Celery worker" in result.measured


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_calibration_speed_reads_the_stored_report(
    smoke_env: dict[str, str], tmp_path: Path
) -> None:
    (result,) = run_script(
        smoke_env,
        tmp_path,
        "perf/calibration_speed.py",
        *("--pairs", "60", "--versions", "2", "--repeat", "2", "--drop-db"),
    )
    assert "stored" in result.measured and "computing the report" in result.baseline


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_suite_analyses_counts_the_declared_breakdowns_against_a_group_by(
    smoke_env: dict[str, str], tmp_path: Path
) -> None:
    found = run_script(
        smoke_env,
        tmp_path,
        "perf/suite_analyses.py",
        *("--sizes", "300,3000", "--repeat", "2", "--python-max", "3000", "--drop-db"),
    )
    assert found and all("GROUP BY" in result.baseline for result in found)
    assert any("3,000" in result.measured for result in found)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_suite_analyses_times_the_whole_page_of_each_task(
    smoke_env: dict[str, str], tmp_path: Path
) -> None:
    found = run_script(
        smoke_env,
        tmp_path,
        "perf/suite_analyses.py",
        *("--whole", "mtubench:M-S,wtueval:R2", "--sizes", "300,1000", "--repeat", "1"),
        "--drop-db",
    )
    assert [result.measured.split("'s")[0] for result in found] == [
        "mtubench M-S",
        "wtueval R2",
    ]
    assert all("whole analyses page" in result.measured for result in found)
    assert all("GROUP BY" in result.baseline for result in found)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_annotate_load_compares_cpu_per_request(smoke_env: dict[str, str], tmp_path: Path) -> None:
    found = run_script(
        smoke_env,
        tmp_path,
        "perf/annotate_load.py",
        *("--seconds", "4", "--warmup", "1", "--annotators", "4", "--items", "300"),
        *("--gunicorn", "1x2", "--baseline-seconds", "3", "--saturation-seconds", "3"),
        *("--saturation-annotators", "2", "--cpu-load", "1", "--drop-db"),
    )
    assert [r.measured.split(" (")[0] for r in found] == [
        "next item and submit p95",
        "gunicorn CPU per next/submit request",
        "capacity: next+submit pairs/s, 2 annotators, no think time, gunicorn 1x2",
    ]
    assert "competing load we started" in found[0].load


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_annotate_load_one_request_per_item(smoke_env: dict[str, str], tmp_path: Path) -> None:
    """--protocol one: each submit brings the next item (as the studio page does); the items
    are still given once each (the script's integrity checks fail the run otherwise)."""
    found = run_script(
        smoke_env,
        tmp_path,
        "perf/annotate_load.py",
        *("--seconds", "4", "--warmup", "1", "--annotators", "4", "--items", "300"),
        *("--gunicorn", "1x2", "--baseline-seconds", "3", "--saturation-seconds", "3"),
        *("--saturation-annotators", "2", "--protocol", "one", "--drop-db"),
    )
    assert len(found) == 3
    for result in found:
        assert "one request per item: submit brings the next" in result.measured
    pairs = float(found[2].value.split(" pairs/s")[0])
    assert pairs > 0


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_request_cost_profiles_each_class_over_its_floors(
    smoke_env: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "profiles"
    (result,) = run_script(
        smoke_env,
        tmp_path,
        "perf/request_cost.py",
        *("--requests", "6", "--warmup", "2", "--repeat", "2", "--items", "300"),
        *("--out", str(out)),
    )
    assert result.measured.startswith("worker CPU per studio request")
    assert "one-query page" in result.measured
    (floors,) = [note for note in result.notes if note.startswith("floors: ")]
    assert "gunicorn" in floors and "Django without session" in floors
    # one profile per class, each readable by pstats and holding its requests
    for kind in ("gunicorn", "django", "page", "studio"):
        stats = pstats.Stats(str(out / f"{kind}.prof"))
        assert stats.total_calls > 0  # type: ignore[attr-defined]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_large_sizes_measures_each_page_and_export_with_its_growth(
    smoke_env: dict[str, str], tmp_path: Path
) -> None:
    found = run_script(
        smoke_env,
        tmp_path,
        "perf/large_sizes.py",
        *("--sizes", "300,3000", "--repeat", "2", "--time-limit", "600"),
    )
    measured = [result.measured.split(" (")[0] for result in found]
    assert measured == [
        "run page",
        "compare page",
        "benchmark page with a text search",
        "sample page",
        "analyses of a run",
        "predictions CSV",
        "labels CSV",
        "export_benchmark --format jsonl at 3,000",
    ]
    for result in found:
        assert "at 3,000" in result.measured and "median of 2" in result.measured
        # how the cost grew from the small size to the large one, per 10x rows
        assert any(note.startswith("growth per 10x rows: 300->3k ") for note in result.notes)
