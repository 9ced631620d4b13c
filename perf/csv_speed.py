"""The predictions CSV export against PostgreSQL's own `COPY ... TO STDOUT` of the same rows,
measured in the same run.

    python perf/csv_speed.py [--rows 1000000] [--repeat 3] [--cpu-load N] [--results FILE]
                             [--max-spread 0.15] [--max-others 0.25] [--keep]

Setup (not timed): a run of --rows predictions (and as many samples) written with COPY, each
with an answer, a two-line output, a note, token usage and two scores, in a benchmark named
`perf-csv-export` of the database of DATABASE_URL (or the embedded dev stack's), its score
names stored as a finished run stores them (Run.score_names); deleted at the end unless --keep.

Timed, --repeat times each:
- export: `GET /runs/<id>/predictions.csv` through Django's request handler (the test client,
  signed in as a superuser: the middleware, the access rule, the view, whose body is
  PostgreSQL's COPY of the cells' text), reading the streamed response to its last byte; the
  first byte is when its first chunk arrived. Memory is this
  process's resident set, sampled at every chunk: its growth over the export (the export must be
  flat, not grow with the rows). Its rows per CPU second of this process are shown too: what
  the export costs, whatever else the machine does.
- baseline: `COPY (SELECT the same columns ... ORDER BY position) TO STDOUT (FORMAT csv)`
  through psycopg, read to its last byte: what PostgreSQL itself gives of the stored columns,
  without the export's formula neutralisation, JSON cells, flags or prices.

Targets (issue #19): at least 200,000 rows/s for a million rows, first byte under 200 ms, memory
flat (growth under 64 MB). A pass only when they are met and the measurement was not disturbed
(perf/honest.py: the COPY repeats spread over --max-spread, or other processes took more than
--max-others cores). Exit status: 0 pass, 1 missed, 3 disturbed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DEBUG", "1")

import django  # noqa: E402

django.setup()

from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402

from benchmarks.models import Benchmark  # noqa: E402
from evaluation.models import Run  # noqa: E402
from evaluation.selectors import PREDICTION_CSV_SQL, prediction_score_names  # noqa: E402
from perf import honest  # noqa: E402

BENCHMARK = "perf-csv-export"
USER = "perf-csv-export"
TARGET_RATE = 200_000
TARGET_FIRST_BYTE_MS = 200.0
TARGET_MEMORY_MB = 64.0


def forget() -> None:
    Run.objects.filter(benchmark__name=BENCHMARK).delete()
    Benchmark.objects.filter(name=BENCHMARK).delete()


def build(rows: int) -> Run:
    forget()
    benchmark = Benchmark.objects.create(name=BENCHMARK, suite="generic")
    run = Run.objects.create(
        benchmark=benchmark, task="answer", split="default", status=Run.Status.DONE
    )
    now = timezone.now()
    with connection.cursor() as cursor:
        with cursor.cursor.copy(
            "COPY benchmarks_sample (benchmark_id, split, external_id, kind, input, "
            "candidate_tools, metadata, revision, created_at, updated_at) FROM STDIN"
        ) as copy:
            for i in range(rows):
                copy.write_row(
                    (
                        benchmark.pk,
                        "default",
                        f"q{i}",
                        "",
                        '{"query": "q"}',
                        "[]",
                        "{}",
                        0,
                        now,
                        now,
                    )
                )
        cursor.execute(
            "SELECT id FROM benchmarks_sample WHERE benchmark_id = %s ORDER BY id", [benchmark.pk]
        )
        samples = [row[0] for row in cursor.fetchall()]
        with cursor.cursor.copy(
            "COPY evaluation_prediction (run_id, sample_id, position, repeat, status, attempts, "
            "context, prompt, output, answer, parsed, trace, note, scores, error, cached, usage, "
            "tool_calls, leaked, latency_ms, updated_at) FROM STDIN"
        ) as copy:
            for i, sample in enumerate(samples):
                copy.write_row(
                    (
                        run.pk,
                        sample,
                        i,
                        0,
                        "done",
                        1,
                        "{}",
                        "[]",
                        f"Thought: I add one to {i}.\nAnswer: {i + 1}",
                        json.dumps(str(i + 1)),
                        True,
                        "[]",
                        "=looks like a formula" if i % 10 == 0 else "",
                        json.dumps({"accuracy": 100.0 if i % 3 else 0.0, "parsed": 1.0}),
                        "",
                        False,
                        json.dumps({"prompt_tokens": 120, "completion_tokens": 9}),
                        "[]",
                        False,
                        40 + i % 17,
                        now,
                    )
                )
        cursor.execute("VACUUM ANALYZE evaluation_prediction")
    # As a finished run has them (evaluation.services._run_summary), so the header needs no scan.
    run.score_names = prediction_score_names(run.pk)
    run.save(update_fields=["score_names"])
    return run


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def export(client: Client, run: Run) -> tuple[float, float, float, int, int, float]:
    """(seconds, first byte seconds, memory growth MB, bytes, lines, this process's CPU
    seconds) of one export."""
    start_rss = peak = rss_mb()
    cpu = time.process_time()
    start = time.perf_counter()
    response = client.get(f"/runs/{run.pk}/predictions.csv")
    assert response.status_code == 200, response.status_code
    first = None
    size = lines = 0
    for chunk in response.streaming_content:
        if first is None:
            first = time.perf_counter() - start
        size += len(chunk)
        lines += chunk.count(b"\n")
        peak = max(peak, rss_mb())
    seconds = time.perf_counter() - start
    return seconds, first or seconds, peak - start_rss, size, lines, time.process_time() - cpu


def copy_out(run: Run) -> tuple[float, int]:
    """PostgreSQL's own CSV of the same rows, read to its last byte."""
    sql = PREDICTION_CSV_SQL.replace("%s", str(int(run.pk)))
    start = time.perf_counter()
    size = 0
    with (
        connection.cursor() as cursor,
        cursor.cursor.copy(f"COPY ({sql}) TO STDOUT (FORMAT csv)") as copy,
    ):
        for block in copy:
            size += len(block)
    return time.perf_counter() - start, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the run for inspection")
    honest.add_arguments(parser)
    args = parser.parse_args()
    call_command("migrate", verbosity=0, interactive=False)
    started = time.perf_counter()
    run = build(args.rows)
    print(f"setup: {args.rows:,} predictions in {time.perf_counter() - started:.1f} s", flush=True)
    user, _ = User.objects.get_or_create(username=USER, defaults={"is_superuser": True})
    user.is_superuser = user.is_staff = True
    user.save()
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        postmaster = honest.postmaster_of(cursor.fetchone()[0])
    exports, copies, loads = [], [], []
    print(
        f"{'repeat':>6} {'export s':>9} {'rows/s':>10} {'per CPU s':>10} {'first ms':>9}"
        f" {'memory MB':>10}"
        f" {'COPY s':>7} {'ratio':>6}  load"
    )
    try:
        with honest.CpuLoad(args.cpu_load) as burner:
            for repeat in range(args.repeat):
                watch = honest.Watch([postmaster] if postmaster else [], burner.pids).start()
                seconds, first, memory, _size, lines, cpu = export(client, run)
                # a line per row and a line break inside each row's output, and the header
                assert lines == 2 * args.rows + 1, f"{lines} line breaks for {args.rows} rows"
                copy_seconds, _copy_size = copy_out(run)
                loads.append(watch.stop())
                exports.append((seconds, first, memory, cpu))
                copies.append(copy_seconds)
                print(
                    f"{repeat + 1:>6} {seconds:>9.2f} {args.rows / seconds:>10,.0f}"
                    f" {args.rows / cpu:>10,.0f} {first * 1000:>9.1f} {memory:>10.1f}"
                    f" {copy_seconds:>7.2f}"
                    f" {seconds / copy_seconds:>6.2f}  {loads[-1].text()}",
                    flush=True,
                )
    finally:
        if not args.keep:
            forget()
    seconds = statistics.median(e[0] for e in exports)
    first = statistics.median(e[1] for e in exports)
    memory = max(e[2] for e in exports)
    cpu = statistics.median(e[3] for e in exports)
    copy_s = statistics.median(copies)
    rate = args.rows / seconds
    load = honest.merge(loads)
    reasons = honest.disturbed(
        copies, load.others, max_spread=args.max_spread, max_others=args.max_others
    )
    met = rate >= TARGET_RATE and first * 1000 < TARGET_FIRST_BYTE_MS and memory < TARGET_MEMORY_MB
    result = honest.Result(
        script="csv_speed.py",
        measured=f"predictions CSV of {args.rows:,} rows through the view (median of "
        f"{args.repeat})",
        value=f"{seconds:.2f} s ({rate:,.0f} rows/s), first byte {first * 1000:.0f} ms, "
        f"memory +{memory:.0f} MB",
        baseline=f"{copy_s:.2f} s (COPY ... TO STDOUT of the same rows, {args.rows / copy_s:,.0f}"
        " rows/s)",
        ratio=f"{seconds / copy_s:.2f}x",
        target=f">= {TARGET_RATE:,} rows/s, first byte < {TARGET_FIRST_BYTE_MS:g} ms, "
        f"memory growth < {TARGET_MEMORY_MB:g} MB",
        verdict=honest.verdict(met, reasons),
        load=load.text(),
        command=honest.command_line(),
        notes=[
            *reasons,
            f"rows per CPU second of the exporting process: {args.rows / cpu:,.0f} (what the "
            "export costs whatever else the machine does)",
        ],
    )
    result.print()
    honest.results_append(args.results, [result])
    sys.exit(honest.exit_status([result.verdict]))


if __name__ == "__main__":
    main()
