"""The sizes real users bring: a run of a million predictions and a benchmark of a million
samples, each page and export measured against PostgreSQL's own reading of the same rows in the
same run, at several sizes, with how each cost grows per tenfold.

    python perf/large_sizes.py [--sizes 10000,100000,1000000] [--repeat 3]
                               [--only NAME,...] [--time-limit S] [--cpu-load N]
                               [--results FILE] [--max-spread 0.15] [--max-others 0.25]
                               [--keep] [--drop-db]

Setup per size N (not timed; written by SQL, never by the services: a million through them
would take the whole run): a benchmark `perf-sizes` of the generic suite with N samples in four
splits (one in a thousand asks the zebra: the text search finds those), two finished runs of its
answer task with N predictions each (answer, output, scores; B disagrees on every seventh item),
and a labels campaign of N rows of the labels CSV (perf/csv_speed.py's labels_build), all
ANALYZEd as a bulk write leaves them. Its own database (toolevals_perf_sizes) on the PostgreSQL
of DATABASE_URL (or of the embedded dev stack), refilled at each size.

Measured, --repeat times each at each size (the median kept), each with its baseline:
- run: `GET /runs/<A>/` (the run's page and its first page of predictions); baseline the SELECT
  of that page's rows (predictions with their samples, LIMIT 50).
- compare: `GET /runs/compare/?a=A&b=B` of the two done runs with their counts known (kept
  from a view before); noted, its first view (the counts not known: the page's pairs only)
  and the fragment that counts them (`GET /runs/compare/counts/`), and that fragment when its
  counts were counted ahead (services.run_compare_counts_ahead, the reports task queued when a
  run finishes); baseline the SELECT of the first page's pairs.
- search: `GET /benchmarks/<id>/?q=zebra`; baseline the SELECT of that page's samples (the
  same filter, LIMIT 50).
- sample: `GET /benchmarks/<id>/samples/<sample>/` of the last sample; baseline its SELECT.
- analyses: the run's analyses computed (evaluation.analyses.run_analyses_get, inline, as the
  reports worker computes them; the stored ones forgotten first); baseline a plain SELECT of
  the mean score by split (GROUP BY: what the generic suite's analysis is).
- predictions CSV, labels CSV: perf/csv_speed.py's measurement (through the view, the first
  byte and the memory growth); baseline the COPY ... TO STDOUT of the same rows.
- export: `manage.py export_benchmark perf-sizes --format jsonl`; baseline the COPY of the
  samples' stored fields.
Page baselines take milliseconds: each is the mean of ten SELECTs, so that its repeats hold
still enough to be compared.

Targets, at the largest size measured (the issue's are at a million): each page under 1 s,
analyses under 10 s, each CSV at >= 200,000 rows/s with the first byte under 200 ms and memory
growth under 64 MB, the export at >= 100,000 samples/s. Growth: each cost at 10x the rows over
its cost before (1.0: flat; 10: linear). A result is disturbed (never a pass) when its
baseline's repeats spread over --max-spread or other processes took more than --max-others
cores (perf/honest.py). Exit status: 0 pass, 1 missed (or stopped by --time-limit), 3
disturbed.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from perf import honest  # noqa: E402
from perf.owndb import django_on_own_database  # noqa: E402

# Its own database; PERF_SIZES_DATABASE names another (two measurements side by side).
PERF_DATABASE = os.environ.get("PERF_SIZES_DATABASE", "toolevals_perf_sizes")
SCRIPT = "large_sizes.py"
BENCHMARK = "perf-sizes"
USER = "perf-sizes"
SEARCHED = "zebra"
PAGE_MS = 1000.0
ANALYSES_S = 10.0
EXPORT_RATE = 100_000
BASELINE_LOOPS = 10

OWN = django_on_own_database(PERF_DATABASE)

from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection, connections  # noqa: E402
from django.test import Client  # noqa: E402

from benchmarks.models import Benchmark  # noqa: E402
from benchmarks.selectors import benchmark_splits  # noqa: E402
from evaluation.analyses import run_analyses_get  # noqa: E402
from evaluation.models import Run, RunAnalysis  # noqa: E402
from evaluation.selectors import (  # noqa: E402
    COMPARE_COUNTS_SQL,
    PREDICTION_CSV_SQL,
    compared_counts_known,
    forget_compared_counts,
    prediction_score_names,
    run_progress,
)
from evaluation.services import run_compare_counts_ahead  # noqa: E402
from perf import csv_speed  # noqa: E402


@dataclass
class World:
    """What one size's setup made."""

    size: int
    benchmark: int
    a: int
    b: int
    sample: int
    labels: csv_speed.Export


def forget() -> None:
    csv_speed.bulk_forget(
        [
            "DELETE FROM evaluation_runanalysis WHERE run_id IN (SELECT r.id FROM evaluation_run r"
            " JOIN benchmarks_benchmark b ON b.id = r.benchmark_id WHERE b.name = %s)",
            "DELETE FROM evaluation_prediction WHERE run_id IN (SELECT r.id FROM evaluation_run r"
            " JOIN benchmarks_benchmark b ON b.id = r.benchmark_id WHERE b.name = %s)",
            "DELETE FROM benchmarks_sample WHERE benchmark_id IN"
            " (SELECT id FROM benchmarks_benchmark WHERE name = %s)",
        ],
        BENCHMARK,
    )
    Run.objects.filter(benchmark__name=BENCHMARK).delete()
    Benchmark.objects.filter(name=BENCHMARK).delete()
    csv_speed.labels_forget()


SAMPLES_SQL = """
INSERT INTO benchmarks_sample (benchmark_id, split, external_id, kind, input, reference,
    candidate_tools, metadata, revision, created_at, updated_at)
SELECT %(benchmark)s, 's' || (i %% 4), 'q' || i, 'query',
    jsonb_build_object('query', 'What is ' || i || ' plus one?'
        || CASE WHEN i %% 1000 = 7 THEN ' Ask the zebra.' ELSE '' END),
    jsonb_build_object('answer', (i + 1)::text), '[]', '{}', 0, now(), now()
FROM generate_series(0, %(size)s - 1) AS i
"""

# B answers every seventh item wrong: the compare page has items on which the runs disagree.
PREDICTIONS_SQL = """
INSERT INTO evaluation_prediction (run_id, sample_id, position, repeat, status, attempts,
    context, prompt, output, answer, parsed, trace, note, scores, error, cached, usage,
    tool_calls, leaked, latency_ms, updated_at)
SELECT %(run)s, s.id, s.n, 0, 'done', 1, '{}', '[]',
    'Thought: I add one.' || chr(10) || 'Answer: ' || (s.n + 1 + w),
    to_jsonb((s.n + 1 + w)::text), true, '[]', '',
    jsonb_build_object('accuracy', CASE WHEN w = 0 AND s.n %% 3 > 0 THEN 100.0 ELSE 0.0 END,
        'parsed', 1.0),
    '', false, '{"prompt_tokens": 120, "completion_tokens": 9}', '[]', false, 40 + s.n %% 17,
    now()
FROM (SELECT id, (row_number() OVER (ORDER BY id) - 1)::int AS n FROM benchmarks_sample
      WHERE benchmark_id = %(benchmark)s) s,
    LATERAL (SELECT CASE WHEN %(wrong)s AND s.n %% 7 = 0 THEN 1 ELSE 0 END AS w) wrong
"""


def build(size: int) -> World:
    forget()
    benchmark = Benchmark.objects.create(name=BENCHMARK, suite="generic")
    runs = [
        Run.objects.create(
            benchmark=benchmark,
            task="answer",
            name=name,
            model_name=name,
            status=Run.Status.DONE,
        )
        for name in ("perf-a", "perf-b")
    ]
    with connection.cursor() as cursor:
        cursor.execute(SAMPLES_SQL, {"benchmark": benchmark.pk, "size": size})
        cursor.execute("ANALYZE benchmarks_sample")
        for run, wrong in zip(runs, (False, True), strict=True):
            cursor.execute(
                PREDICTIONS_SQL, {"run": run.pk, "benchmark": benchmark.pk, "wrong": wrong}
            )
        cursor.execute("ANALYZE evaluation_prediction")
        cursor.execute(
            "SELECT max(id) FROM benchmarks_sample WHERE benchmark_id = %s", [benchmark.pk]
        )
        (last,) = cursor.fetchone()
    for run in runs:
        run.score_names = prediction_score_names(run.pk)
        run.save(update_fields=["score_names"])
    labels = csv_speed.setup("labels", size)
    return World(size, benchmark.pk, runs[0].pk, runs[1].pk, last, labels)


# --- what is measured ---------------------------------------------------------------------------


@dataclass
class Measure:
    """One cost: how to take it (seconds, and notes such as a CSV's first byte), its baseline
    (seconds), and what its target asks of the figures at the largest size."""

    name: str
    title: str
    baseline_text: str
    target_text: str
    take: Callable[[World, Client], tuple[float, dict[str, float]]]
    baseline: Callable[[World], float]
    met: Callable[[int, float, dict[str, float]], bool]
    per_row: bool = False
    rows: Callable[[World], int] = lambda world: world.size
    taken: dict[int, list[tuple[float, dict[str, float]]]] = field(default_factory=dict)
    baselines: dict[int, list[float]] = field(default_factory=dict)
    rows_at: dict[int, int] = field(default_factory=dict)
    # What of the page still reads every row (its floor at this size), timed alone
    floor: Callable[[World], float] | None = None
    floor_text: str = ""
    floors: dict[int, list[float]] = field(default_factory=dict)


def timed_get(client: Client, url: str) -> float:
    start = time.perf_counter()
    response = client.get(url)
    body = response.content
    seconds = time.perf_counter() - start
    assert response.status_code == 200, (url, response.status_code, body[:300])
    return seconds


def page(url: Callable[[World], str]) -> Callable[[World, Client], tuple[float, dict[str, float]]]:
    warm: set[str] = set()

    def take(world: World, client: Client) -> tuple[float, dict[str, float]]:
        # The first request of a page imports and compiles its templates: once, not timed.
        if url(world) not in warm:
            timed_get(client, url(world))
            warm.add(url(world))
        return timed_get(client, url(world)), {}

    return take


def select_mean(sql: str, params: Callable[[World], list[Any]]) -> Callable[[World], float]:
    """The mean of BASELINE_LOOPS runs of a SELECT, its rows fetched."""

    def measure(world: World) -> float:
        start = time.perf_counter()
        with connection.cursor() as cursor:
            for _ in range(BASELINE_LOOPS):
                cursor.execute(sql, params(world))
                cursor.fetchall()
        return (time.perf_counter() - start) / BASELINE_LOOPS

    return measure


def timed_select(sql: str, params: Callable[[World], list[Any]]) -> Callable[[World], float]:
    """One run of a SELECT, its rows fetched."""

    def measure(world: World) -> float:
        start = time.perf_counter()
        with connection.cursor() as cursor:
            cursor.execute(sql, params(world))
            cursor.fetchall()
        return time.perf_counter() - start

    return measure


def copy_baseline(sql: Callable[[World], str]) -> Callable[[World], float]:
    return lambda world: csv_speed.copy_out(sql(world))[0]


RUN_PAGE_SQL = (
    "SELECT p.*, s.* FROM evaluation_prediction p JOIN benchmarks_sample s ON s.id = p.sample_id"
    " WHERE p.run_id = %s ORDER BY p.position LIMIT 50"
)
COMPARE_PAGE_SQL = (
    "SELECT pa.*, pb.*, s.* FROM evaluation_prediction pa JOIN evaluation_prediction pb"
    " ON pb.sample_id = pa.sample_id AND pb.repeat = pa.repeat AND pb.run_id = %s"
    " JOIN benchmarks_sample s ON s.id = pa.sample_id WHERE pa.run_id = %s"
    " ORDER BY pa.position LIMIT 50"
)
SEARCH_PAGE_SQL = (
    "SELECT * FROM benchmarks_sample WHERE benchmark_id = %s AND (UPPER(external_id) LIKE"
    " UPPER(%s) OR UPPER(input::text) LIKE UPPER(%s)) ORDER BY split, natural_id, external_id"
    " LIMIT 50"
)
SAMPLE_SQL = "SELECT * FROM benchmarks_sample WHERE id = %s"
ANALYSES_SQL = (
    "SELECT s.split, count(*), avg((p.scores ->> 'accuracy')::float8)"
    " FROM evaluation_prediction p JOIN benchmarks_sample s ON s.id = p.sample_id"
    " WHERE p.run_id = %s GROUP BY s.split"
)
EXPORT_COPY_SQL = (
    "SELECT split, external_id, kind, input, reference, candidate_tools, metadata, revision"
    " FROM benchmarks_sample WHERE benchmark_id = {benchmark} ORDER BY split, id"
)


def analyses(world: World, client: Client) -> tuple[float, dict[str, float]]:
    run = Run.objects.select_related("benchmark").get(pk=world.a)
    # Stored analyses are kept until the run changes: forgotten, so that each repeat computes.
    RunAnalysis.objects.filter(run=run).delete()
    start = time.perf_counter()
    stored = run_analyses_get(run, inline=True)
    seconds = time.perf_counter() - start
    assert stored.status == RunAnalysis.Status.DONE, stored.error
    return seconds, {}


def csv_export(url: Callable[[World], str]) -> Callable[[World, Client], tuple[float, dict]]:
    def take(world: World, client: Client) -> tuple[float, dict[str, float]]:
        seconds, first, memory, _size, _lines, _cpu = csv_speed.export(client, url(world))
        return seconds, {"first byte ms": first * 1000, "memory MB": memory}

    return take


def export_benchmark(world: World, client: Client) -> tuple[float, dict[str, float]]:
    # Its progress bar (tqdm, on stderr) is part of what it costs; not of what is shown.
    with (
        tempfile.TemporaryDirectory(prefix="perf-sizes-") as out,
        contextlib.redirect_stderr(io.StringIO()),
    ):
        start = time.perf_counter()
        call_command(
            "export_benchmark",
            BENCHMARK,
            "--format",
            "jsonl",
            "--out",
            out,
            stdout=io.StringIO(),
        )
        return time.perf_counter() - start, {}


def csv_met(rows: int, seconds: float, extra: dict[str, float]) -> bool:
    return (
        rows / seconds >= csv_speed.TARGET_RATE
        and extra["first byte ms"] < csv_speed.TARGET_FIRST_BYTE_MS
        and extra["memory MB"] < csv_speed.TARGET_MEMORY_MB
    )


def page_measure(
    name: str,
    title: str,
    url: Callable[[World], str],
    baseline_text: str,
    sql: str,
    params: Callable[[World], list[Any]],
    floor: tuple[str, Callable[[World], Any]] | None = None,
) -> Measure:
    return Measure(
        name=name,
        title=title,
        baseline_text=baseline_text,
        target_text=f"< {PAGE_MS:g} ms",
        take=page(url),
        baseline=select_mean(sql, params),
        met=lambda rows, seconds, extra: seconds * 1000 < PAGE_MS,
        floor=timed(floor[1]) if floor else None,
        floor_text=floor[0] if floor else "",
    )


def timed(call: Callable[[World], Any]) -> Callable[[World], float]:
    def measure(world: World) -> float:
        start = time.perf_counter()
        call(world)
        return time.perf_counter() - start

    return measure


def compare_page(world: World, client: Client) -> tuple[float, dict[str, float]]:
    """The page of two done runs with their counts known (kept from a view before), and, as
    notes, its first view (the counts not known: the pairs only, the counts asked for apart),
    that fragment (every item of both counted, then kept) and that fragment when the counts
    were counted ahead (what a run's finish queues)."""
    url = f"/runs/compare/?a={world.a}&b={world.b}"
    fragment = f"/runs/compare/counts/?a={world.a}&b={world.b}"
    a, b = Run.objects.get(pk=world.a), Run.objects.get(pk=world.b)
    timed_get(client, url)  # templates imported and compiled: once, not timed
    forget_compared_counts(a, b)
    first = timed_get(client, url)
    counted = timed_get(client, fragment)
    assert compared_counts_known(a, b) is not None, "the fragment kept no counts"
    seconds = timed_get(client, url)
    # Counted ahead, as the reports worker does when B finishes (its task's body, here): the
    # fragment reads what it counted.
    forget_compared_counts(a, b)
    assert run_compare_counts_ahead(run_id=world.b) == 1, "B was not counted against A"
    ahead = timed_get(client, fragment)
    return seconds, {
        "first view ms": first * 1000,
        "counts fragment ms": counted * 1000,
        "counts fragment counted ahead ms": ahead * 1000,
    }


def compare_counts(world: World) -> None:
    with connection.cursor() as cursor:
        cursor.execute(COMPARE_COUNTS_SQL, {"a": world.a, "b": world.b})
        cursor.fetchall()


CSV_TARGET = (
    f">= {csv_speed.TARGET_RATE:,} rows/s, first byte < {csv_speed.TARGET_FIRST_BYTE_MS:g} ms,"
    f" memory growth < {csv_speed.TARGET_MEMORY_MB:g} MB"
)

MEASURES = [
    page_measure(
        "run",
        "run page (GET /runs/<id>/)",
        lambda w: f"/runs/{w.a}/",
        "SELECT of the page's 50 predictions with their samples",
        RUN_PAGE_SQL,
        lambda w: [w.a],
        floor=(
            "its progress panel's counts by status (run_progress)",
            lambda w: run_progress(Run.objects.get(pk=w.a)),
        ),
    ),
    Measure(
        name="compare",
        title="compare page (GET /runs/compare/?a=&b=, the counts known)",
        baseline_text="SELECT of the page's 50 pairs with their sample",
        target_text=f"< {PAGE_MS:g} ms, the first view too",
        take=compare_page,
        baseline=select_mean(COMPARE_PAGE_SQL, lambda w: [w.b, w.a]),
        met=lambda rows, seconds, extra: max(seconds * 1000, extra["first view ms"]) < PAGE_MS,
        floor=timed(compare_counts),
        floor_text="the counts of the pairs (COMPARE_COUNTS_SQL, the fragment's query)",
    ),
    page_measure(
        "search",
        f"benchmark page with a text search (GET /benchmarks/<id>/?q={SEARCHED})",
        lambda w: f"/benchmarks/{w.benchmark}/?q={SEARCHED}",
        "SELECT of the page's 50 samples (the same filter)",
        SEARCH_PAGE_SQL,
        lambda w: [w.benchmark, f"%{SEARCHED}%", f"%{SEARCHED}%"],
        floor=(
            "its samples counted by split (benchmark_splits)",
            lambda w: benchmark_splits(benchmark=Benchmark.objects.get(pk=w.benchmark)),
        ),
    ),
    page_measure(
        "sample",
        "sample page (GET /benchmarks/<id>/samples/<id>/)",
        lambda w: f"/benchmarks/{w.benchmark}/samples/{w.sample}/",
        "SELECT of the sample",
        SAMPLE_SQL,
        lambda w: [w.sample],
    ),
    Measure(
        name="analyses",
        title="analyses of a run (computed, as the reports worker does)",
        baseline_text="SELECT of the mean score by split, GROUP BY",
        target_text=f"< {ANALYSES_S:g} s",
        take=analyses,
        baseline=timed_select(ANALYSES_SQL, lambda w: [w.a]),
        met=lambda rows, seconds, extra: seconds < ANALYSES_S,
    ),
    Measure(
        name="predictions_csv",
        title="predictions CSV (GET /runs/<id>/predictions.csv)",
        baseline_text="COPY ... TO STDOUT of the same rows",
        target_text=CSV_TARGET,
        take=csv_export(lambda w: f"/runs/{w.a}/predictions.csv"),
        baseline=copy_baseline(lambda w: PREDICTION_CSV_SQL.replace("%s", str(int(w.a)))),
        met=csv_met,
        per_row=True,
    ),
    Measure(
        name="labels_csv",
        title="labels CSV (GET /campaigns/<id>/agreement/labels.csv)",
        baseline_text="COPY ... TO STDOUT of the same rows",
        target_text=CSV_TARGET,
        take=csv_export(lambda w: w.labels.url),
        baseline=copy_baseline(lambda w: w.labels.copy_sql),
        met=csv_met,
        per_row=True,
        rows=lambda w: w.labels.rows,
    ),
    Measure(
        name="export",
        title="export_benchmark --format jsonl",
        baseline_text="COPY of the samples' stored fields",
        target_text=f">= {EXPORT_RATE:,} samples/s",
        take=export_benchmark,
        baseline=copy_baseline(lambda w: EXPORT_COPY_SQL.format(benchmark=int(w.benchmark))),
        met=lambda rows, seconds, extra: rows / seconds >= EXPORT_RATE,
        per_row=True,
    ),
]


# --- the run ------------------------------------------------------------------------------------


def shown(measure: Measure, rows: int, seconds: float, extra: dict[str, float]) -> str:
    text = f"{seconds:.3f} s" if seconds >= 1 or measure.per_row else f"{seconds * 1000:.0f} ms"
    if measure.per_row:
        text += f" ({rows / seconds:,.0f} rows/s)"
    return text + "".join(f", {key} {value:.0f}" for key, value in extra.items())


def median_of(taken: list[tuple[float, dict[str, float]]]) -> tuple[float, dict[str, float]]:
    seconds = statistics.median(t[0] for t in taken)
    extra = {key: statistics.median(t[1][key] for t in taken) for key in taken[0][1]}
    if "memory MB" in extra:
        extra["memory MB"] = max(t[1]["memory MB"] for t in taken)
    return seconds, extra


def growth(measure: Measure, sizes: list[int]) -> str:
    """Each cost at 10x the rows over its cost before: '10k->100k 3.1x, 100k->1M 9.8x'."""
    steps = []
    for small, big in itertools.pairwise(sizes):
        ratio = median_of(measure.taken[big])[0] / median_of(measure.taken[small])[0]
        steps.append(f"{compact(small)}->{compact(big)} {ratio:.1f}x")
    return ", ".join(steps)


def compact(size: int) -> str:
    for unit, name in ((1_000_000, "M"), (1_000, "k")):
        if size >= unit and size % unit == 0:
            return f"{size // unit}{name}"
    return str(size)


def measure_size(
    args: argparse.Namespace, client: Client, size: int, chosen: list[Measure]
) -> honest.Load:
    honest.doing(f"setup: {size:,} samples, 2 runs of {size:,} predictions, {size:,} label rows")
    started = time.perf_counter()
    world = build(size)
    print(f"setup of {size:,} in {time.perf_counter() - started:.1f} s", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        postmaster = honest.postmaster_of(cursor.fetchone()[0])
    loads = []
    with honest.CpuLoad(args.cpu_load) as burner:
        for measure in chosen:
            rows = measure.rows_at[size] = measure.rows(world)
            measure.taken[size], measure.baselines[size], measure.floors[size] = [], [], []
            for repeat in range(args.repeat):
                honest.doing(f"{compact(size)}: {measure.name}, repeat {repeat + 1}/{args.repeat}")
                watch = honest.Watch([postmaster] if postmaster else [], burner.pids).start()
                seconds, extra = measure.take(world, client)
                base = measure.baseline(world)
                if measure.floor is not None:
                    measure.floors[size].append(measure.floor(world))
                loads.append(watch.stop())
                measure.taken[size].append((seconds, extra))
                measure.baselines[size].append(base)
                print(
                    f"  {measure.name:<16} {shown(measure, rows, seconds, extra)}"
                    f"  baseline {base * 1000:.1f} ms  ratio {seconds / base:.1f}x",
                    flush=True,
                )
    return honest.merge(loads)


def work(args: argparse.Namespace) -> int:
    sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})
    wanted = {n.strip() for n in args.only.split(",") if n.strip()}
    unknown = wanted - {m.name for m in MEASURES}
    if unknown:
        raise SystemExit(
            f"--only: no measure {sorted(unknown)}; known: {[m.name for m in MEASURES]}"
        )
    chosen = [m for m in MEASURES if not wanted or m.name in wanted]
    call_command("migrate", verbosity=0, interactive=False)
    user, _ = User.objects.get_or_create(username=USER)
    user.is_superuser = user.is_staff = True
    user.save()
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)
    loads = {}
    try:
        for size in sizes:
            loads[size] = measure_size(args, client, size, chosen)
    finally:
        if not args.keep:
            forget()
    largest = sizes[-1]
    load = loads[largest]
    print(f"\n{'measured':<18}" + "".join(f"{compact(s):>22}" for s in sizes) + "   growth per 10x")
    for measure in chosen:
        cells = [f"{median_of(measure.taken[s])[0] * 1000:,.1f} ms" for s in sizes]
        print(f"{measure.name:<18}" + "".join(f"{c:>22}" for c in cells), growth(measure, sizes))
    results = []
    for measure in chosen:
        seconds, extra = median_of(measure.taken[largest])
        base = statistics.median(measure.baselines[largest])
        rows = measure.rows_at[largest]
        reasons = honest.disturbed(
            measure.baselines[largest],
            load.others,
            max_spread=args.max_spread,
            max_others=args.max_others,
        )
        notes = list(reasons)
        if measure.floors.get(largest):
            floor = statistics.median(measure.floors[largest])
            notes.append(
                f"of which {measure.floor_text} alone: {floor * 1000:.0f} ms (it reads every row)"
            )
        if len(sizes) > 1:
            notes.append(f"growth per 10x rows: {growth(measure, sizes)}")
        results.append(
            honest.Result(
                script=SCRIPT,
                measured=f"{measure.title} at {largest:,} (median of {args.repeat})",
                value=shown(measure, rows, seconds, extra),
                baseline=f"{base * 1000:.1f} ms ({measure.baseline_text})",
                ratio=f"{seconds / base:.2f}x",
                target=measure.target_text,
                verdict=honest.verdict(measure.met(rows, seconds, extra), reasons),
                load=load.text(),
                command=honest.command_line(),
                notes=notes,
            )
        )
    for result in results:
        result.print()
    honest.results_append(args.results, results)
    return honest.exit_status(r.verdict for r in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="", help="measure only these (comma-separated)")
    parser.add_argument("--keep", action="store_true", help="keep the largest size's data")
    parser.add_argument("--drop-db", action="store_true", help="drop the own database at the end")
    honest.add_arguments(parser, time_limit=3600)
    args = parser.parse_args()
    try:
        status = honest.within_time_limit(args, "large_sizes.py", lambda: work(args))
    finally:
        connections.close_all()
        if args.drop_db:
            OWN.drop()
    sys.exit(status)


if __name__ == "__main__":
    main()
