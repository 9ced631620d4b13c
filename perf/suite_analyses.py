"""A suite's declared breakdowns counted by PostgreSQL, against the same analyses computed over
the run's records in Python, on a run of MTU-Bench's M-S task (by turn, by number of tools) at
several sizes.

    python perf/suite_analyses.py [--sizes 100000,1000000] [--repeat 3] [--python-max 100000]
                                  [--time-limit S] [--cpu-load N] [--results FILE]
                                  [--max-spread 0.15] [--max-others 0.25] [--drop-db]

Setup per size N (not timed; written by SQL): a benchmark `perf-suite-analyses` of the mtubench
suite with N samples of split M-S (dialogues of five turns, ids M-S_<dialogue>_<turn>, the turn
in the metadata but for one in ten, whose turn is read from its id; one to four candidate
tools), and a finished run of its M-S task with N predictions (an answer, TS and PS scores;
one in nine without scores). Its own database (PERF_SIZES_DATABASE, default
toolevals_perf_suite_analyses) on the PostgreSQL of DATABASE_URL, refilled at each size.

Measured, --repeat times each at each size (the median kept):
- database: the task's analyses that declare a score_breakdown, counted by PostgreSQL
  (evaluation.analyses.compute_in_database, as the reports worker computes them); baseline a
  plain SELECT of the mean scores by the metadata's turn (GROUP BY);
- python: the same analyses by their `compute` over the run's records read into Python (what
  every analysis of a suite other than the generic one cost before they declared their
  breakdowns), up to --python-max predictions only (minutes at a million);
- page: every analysis of the task as the page computes it (run_analyses_get, inline): the
  declared ones in the database, the error types over the records, up to --python-max too.

Target, at the largest size: the database's figure under 10 s. A result is disturbed (never a
pass) when its baseline's repeats spread over --max-spread or other processes took more than
--max-others cores (perf/honest.py). Exit status: 0 pass, 1 missed, 3 disturbed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from perf import honest  # noqa: E402
from perf.owndb import django_on_own_database  # noqa: E402

PERF_DATABASE = os.environ.get("PERF_SIZES_DATABASE", "toolevals_perf_suite_analyses")
SCRIPT = "suite_analyses.py"
BENCHMARK = "perf-suite-analyses"
SUITE = "mtubench"
TASK = "M-S"
TARGET_S = 10.0

OWN = django_on_own_database(PERF_DATABASE)

from django.core.management import call_command  # noqa: E402
from django.db import connection, connections  # noqa: E402

from benchmarks.models import Benchmark  # noqa: E402
from evaluation import analyses  # noqa: E402
from evaluation.models import Run, RunAnalysis  # noqa: E402
from evaluation.selectors import prediction_score_names  # noqa: E402

SAMPLES_SQL = """
INSERT INTO benchmarks_sample (benchmark_id, split, external_id, kind, input, reference,
    candidate_tools, metadata, revision, created_at, updated_at)
SELECT %(benchmark)s, 'M-S', 'M-S_' || (i / 5) || '_' || (i %% 5), 'query',
    jsonb_build_object('query', 'Turn ' || i || ': what is the weather?'),
    jsonb_build_object('calls', jsonb_build_array(
        jsonb_build_object('name', 'tool_' || (i %% 3), 'arguments', '{"city": "Paris"}'::jsonb))),
    (SELECT jsonb_agg(jsonb_build_object('name', 'tool_' || t)) FROM generate_series(0, i %% 4) t),
    CASE WHEN i %% 10 = 3 THEN jsonb_build_object('conversation', 'M-S_' || (i / 5))
         ELSE jsonb_build_object('conversation', 'M-S_' || (i / 5), 'turn', i %% 5) END,
    0, now(), now()
FROM generate_series(0, %(size)s - 1) AS i
"""

PREDICTIONS_SQL = """
INSERT INTO evaluation_prediction (run_id, sample_id, position, repeat, status, attempts,
    context, prompt, output, answer, parsed, trace, note, scores, error, cached, usage,
    tool_calls, leaked, latency_ms, updated_at)
SELECT %(run)s, s.id, s.n, 0, 'done', 1, '{}', '[]',
    'Thought: I call it.' || chr(10) || 'Action: tool_' || (s.n %% 2) || chr(10)
        || 'Action Input: {"city": "Paris"}',
    jsonb_build_object('name', 'tool_' || (s.n %% 2), 'arguments', '{"city": "Paris"}'::jsonb),
    true, '[]', '',
    CASE WHEN s.n %% 9 = 4 THEN '{}'::jsonb
         ELSE jsonb_build_object('TS', CASE WHEN s.n %% 3 = 0 THEN 1.0 ELSE 0.0 END,
                                 'PS', CASE WHEN s.n %% 6 = 0 THEN 1.0 ELSE 0.0 END) END,
    '', false, '{"prompt_tokens": 300, "completion_tokens": 20}', null, false, 40, now()
FROM (SELECT id, (row_number() OVER (ORDER BY id) - 1)::int AS n FROM benchmarks_sample
      WHERE benchmark_id = %(benchmark)s) s
"""

BASELINE_SQL = (
    "SELECT s.metadata ->> 'turn', count(*), avg((p.scores ->> 'TS')::float8),"
    " avg((p.scores ->> 'PS')::float8) FROM evaluation_prediction p"
    " JOIN benchmarks_sample s ON s.id = p.sample_id WHERE p.run_id = %s GROUP BY 1"
)


def forget() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM evaluation_prediction WHERE run_id IN (SELECT r.id FROM evaluation_run r"
            " JOIN benchmarks_benchmark b ON b.id = r.benchmark_id WHERE b.name = %s)",
            [BENCHMARK],
        )
        cursor.execute(
            "DELETE FROM benchmarks_sample WHERE benchmark_id IN"
            " (SELECT id FROM benchmarks_benchmark WHERE name = %s)",
            [BENCHMARK],
        )
    Run.objects.filter(benchmark__name=BENCHMARK).delete()
    Benchmark.objects.filter(name=BENCHMARK).delete()


def build(size: int) -> Run:
    forget()
    benchmark = Benchmark.objects.create(name=BENCHMARK, suite=SUITE)
    run = Run.objects.create(
        benchmark=benchmark, task=TASK, name="perf", model_name="perf", status=Run.Status.DONE
    )
    with connection.cursor() as cursor:
        cursor.execute(SAMPLES_SQL, {"benchmark": benchmark.pk, "size": size})
        cursor.execute("ANALYZE benchmarks_sample")
        cursor.execute(PREDICTIONS_SQL, {"run": run.pk, "benchmark": benchmark.pk})
        cursor.execute("ANALYZE evaluation_prediction")
    run.score_names = prediction_score_names(run.pk)
    run.save(update_fields=["score_names"])
    return Run.objects.select_related("benchmark").get(pk=run.pk)


def declared_breakdowns(run: Run) -> list:  # type: ignore[type-arg]
    return [a for a in analyses.declared(run) if a.score_breakdown is not None]


def in_database(run: Run) -> dict:  # type: ignore[type-arg]
    return analyses.compute_in_database(run, declared_breakdowns(run))


def in_python(run: Run) -> dict:  # type: ignore[type-arg]
    return analyses.compute(declared_breakdowns(run), analyses._records(run))


def page(run: Run) -> dict:  # type: ignore[type-arg]
    RunAnalysis.objects.filter(run=run).delete()
    stored = analyses.run_analyses_get(run, inline=True)
    assert stored.status == RunAnalysis.Status.DONE, stored.error
    return dict(stored.data)


def baseline(run: Run) -> float:
    start = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(BASELINE_SQL, [run.pk])
        cursor.fetchall()
    return time.perf_counter() - start


def timed(call: Callable[[Run], object], run: Run) -> tuple[float, object]:
    start = time.perf_counter()
    result = call(run)
    return time.perf_counter() - start, result


def work(args: argparse.Namespace) -> int:
    sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})
    call_command("migrate", verbosity=0, interactive=False)
    measures: dict[str, Callable[[Run], object]] = {
        "database": in_database,
        "python": in_python,
        "page": page,
    }
    taken: dict[tuple[str, int], list[float]] = {}
    bases: dict[int, list[float]] = {}
    loads: dict[int, honest.Load] = {}
    try:
        for size in sizes:
            honest.doing(f"setup: {size:,} samples and predictions")
            started = time.perf_counter()
            run = build(size)
            print(f"setup of {size:,} in {time.perf_counter() - started:.1f} s", flush=True)
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                postmaster = honest.postmaster_of(cursor.fetchone()[0])
            watched = []
            with honest.CpuLoad(args.cpu_load) as burner:
                for name, call in measures.items():
                    if name != "database" and size > args.python_max:
                        continue
                    for repeat in range(args.repeat):
                        honest.doing(f"{size:,}: {name}, repeat {repeat + 1}/{args.repeat}")
                        watch = honest.Watch([postmaster] if postmaster else [], burner.pids)
                        watch.start()
                        seconds, result = timed(call, run)
                        base = baseline(run)
                        watched.append(watch.stop())
                        taken.setdefault((name, size), []).append(seconds)
                        bases.setdefault(size, []).append(base)
                        print(
                            f"  {size:>9,} {name:<9} {seconds * 1000:10,.1f} ms"
                            f"  baseline {base * 1000:.1f} ms  ratio {seconds / base:.1f}x",
                            flush=True,
                        )
                    if name == "database" and size <= args.python_max:
                        # the two readings give the same rows (the tests hold them to it too)
                        assert result == in_python(run), f"rows differ at {size:,}"
            loads[size] = honest.merge(watched)
    finally:
        forget()
    print(f"\n{'measured':<10}" + "".join(f"{size:>16,}" for size in sizes))
    for name in measures:
        cells = [
            f"{statistics.median(taken[(name, s)]) * 1000:,.0f} ms" if (name, s) in taken else "-"
            for s in sizes
        ]
        print(f"{name:<10}" + "".join(f"{c:>16}" for c in cells))
    largest = sizes[-1]
    seconds = statistics.median(taken[("database", largest)])
    base = statistics.median(bases[largest])
    reasons = honest.disturbed(
        bases[largest],
        loads[largest].others,
        max_spread=args.max_spread,
        max_others=args.max_others,
    )
    notes = list(reasons)
    for size in sizes:
        if ("python", size) in taken:
            python = statistics.median(taken[("python", size)])
            database = statistics.median(taken[("database", size)])
            notes.append(
                f"at {size:,}: python {python:.2f} s, database {database:.2f} s"
                f" ({python / database:.1f}x faster)"
            )
    result = honest.Result(
        script=SCRIPT,
        measured=f"{SUITE} {TASK}'s declared breakdowns at {largest:,} (median of {args.repeat})",
        value=f"{seconds:.2f} s",
        baseline=f"{base * 1000:.1f} ms (a plain GROUP BY of the scores by turn)",
        ratio=f"{seconds / base:.2f}x",
        target=f"under {TARGET_S:g} s",
        verdict=honest.verdict(seconds < TARGET_S, reasons),
        load=loads[largest].text(),
        command=honest.command_line(),
        notes=notes,
    )
    result.print()
    honest.results_append(args.results, [result])
    return honest.exit_status([result.verdict])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--python-max",
        type=int,
        default=100_000,
        help="measure the Python readings up to this many predictions",
    )
    parser.add_argument("--drop-db", action="store_true", help="drop the own database at the end")
    honest.add_arguments(parser, time_limit=3600)
    args = parser.parse_args()
    try:
        status = honest.within_time_limit(args, "suite_analyses.py", lambda: work(args))
    finally:
        connections.close_all()
        if args.drop_db:
            OWN.drop()
    sys.exit(status)


if __name__ == "__main__":
    main()
