"""A suite's declared breakdowns counted by PostgreSQL, against the same analyses computed over
the run's records in Python, on a run of MTU-Bench's M-S task (by turn, by number of tools,
error types) at several sizes.

    python perf/suite_analyses.py [--sizes 100000,1000000] [--repeat 3] [--python-max 100000]
                                  [--whole all|SUITE[:TASK],...]
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
  (evaluation.analyses.compute_in_database, as the reports worker computes them; the error
  types by each answer's, stored in the setup as the run's finishing stores them); baseline a
  plain SELECT of the mean scores by the metadata's turn (GROUP BY);
- python: the same analyses by their `compute` over the run's records read into Python (what
  every analysis of a suite other than the generic one cost before they declared their
  breakdowns), up to --python-max predictions only (minutes at a million);
- page: every analysis of the task as the page computes it (run_analyses_get, inline), up to
  --python-max too.

With --whole (every task of the suites named, or "all"), the whole page of each task instead:
setup per size N, a run of the suite's own example run of the task (its conformance's records:
items shaped as the suite imports them, answered and scored by the suite), stored and copied by
SQL until it holds N predictions (copies of a sample get the id "<id>#x<k>"); measured, every
declared analysis of the task as the reports worker computes it (evaluation.analyses.compute_run:
the declared breakdowns in the database, the others over the records), against the same plain
GROUP BY of the run's predictions and samples; once per size, what each part took (the
database's counting, reading the records, each analysis's compute). Inputs beyond the run's
records (judgments, human labels, other runs of the model) are not made: analyses that read them
compute over none. The values of the records some analyses count by (RecordValue) are stored
in the setup, as the run's finishing stores them (its time printed). One result per task,
target under 10 s at the largest size.

Target, at the largest size: the database's figure under 10 s. A result is disturbed (never a
pass) when its baseline's repeats spread over --max-spread or other processes took more than
--max-others cores (perf/honest.py). Exit status: 0 pass, 1 missed, 3 disturbed.
"""

from __future__ import annotations

import argparse
import itertools
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
from evaluation import analyses, services  # noqa: E402
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
    return store_record_values(Run.objects.select_related("benchmark").get(pk=run.pk))


def store_record_values(run: Run) -> Run:
    """The values of the records the run's analyses count by (RecordValue), stored as the
    run's finishing stores them (its time printed)."""
    started = time.perf_counter()
    named = list(services.record_values_declared(run).values())
    if named and services.fill_record_values(run, named):
        print(
            f"  the values of the records ({', '.join(v.name for v in named)}) stored in"
            f" {time.perf_counter() - started:.1f} s (once, as the run's finishing does)",
            flush=True,
        )
    return run


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


# --- the whole page of each task (--whole) ------------------------------------------------------

COPY_SAMPLES_SQL = """
INSERT INTO benchmarks_sample (benchmark_id, split, external_id, kind, input, reference,
    candidate_tools, metadata, revision, created_at, updated_at)
SELECT benchmark_id, split, external_id || '#x' || k, kind, input, reference, candidate_tools,
    metadata, 0, now(), now()
FROM benchmarks_sample, generate_series(1, %(copies)s - 1) AS k WHERE benchmark_id = %(benchmark)s
"""

COPY_PREDICTIONS_SQL = """
INSERT INTO evaluation_prediction (run_id, sample_id, position, repeat, status, attempts,
    context, prompt, output, answer, parsed, trace, note, scores, error, cached, usage,
    tool_calls, leaked, latency_ms, updated_at)
SELECT p.run_id, c.id, p.position + k * %(each)s, p.repeat, p.status, 1, p.context, '[]',
    p.output, p.answer, p.parsed, p.trace, p.note, p.scores, '', false, '{}', p.tool_calls,
    p.leaked, 40, now()
FROM evaluation_prediction p JOIN benchmarks_sample b ON b.id = p.sample_id
CROSS JOIN generate_series(1, %(copies)s - 1) AS k
JOIN benchmarks_sample c ON c.benchmark_id = b.benchmark_id AND c.split = b.split
    AND c.external_id = b.external_id || '#x' || k
WHERE p.run_id = %(run)s
"""

WHOLE_BASELINE_SQL = (
    "SELECT s.split, count(*), avg(length(p.scores::text)) FROM evaluation_prediction p"
    " JOIN benchmarks_sample s ON s.id = p.sample_id WHERE p.run_id = %s GROUP BY 1"
)


def whole_tasks(spec: str) -> list[tuple[str, str]]:
    """The (suite, task) pairs --whole names that declare analyses and an example run."""
    from benchmarks.kit.conformance import conformance_of
    from benchmarks.kit.registry import get_suite, suite_names

    wanted = [part.strip() for part in spec.split(",") if part.strip()]
    found: list[tuple[str, str]] = []
    for name in suite_names():
        suite = get_suite(name)
        promised = conformance_of(suite)
        for task, declared in suite.analyses.items():
            if not declared or promised is None or task not in promised.analysis_examples:
                continue
            if "all" in wanted or name in wanted or f"{name}:{task}" in wanted:
                found.append((name, task))
    return found


def example_records(suite_name: str, task: str):  # type: ignore[no-untyped-def]
    from benchmarks.kit.conformance import Files, conformance_of
    from benchmarks.kit.registry import get_suite

    files = Files(
        seeddata=ROOT.parent / "shared" / "seeddata",
        demo=ROOT / "benchmarks" / "demo",
        fixtures=ROOT / "tests" / "benchmarks" / "fixtures",
    )
    promised = conformance_of(get_suite(suite_name))
    assert promised is not None
    return promised.analysis_examples[task](files).records


def build_example(suite_name: str, task: str, size: int) -> Run:
    """A finished run of the task of about `size` predictions: the suite's example run, copied."""
    from benchmarks.models import Sample
    from evaluation.models import Prediction

    forget()
    records = example_records(suite_name, task)
    benchmark = Benchmark.objects.create(name=BENCHMARK, suite=suite_name)
    run = Run.objects.create(
        benchmark=benchmark, task=task, name="perf", model_name="perf", status=Run.Status.DONE
    )
    samples: dict[tuple[str, str], Sample] = {}
    repeats: dict[tuple[str, str], int] = {}
    for position, record in enumerate(records):
        item = record.item
        key = (item.split, item.external_id)
        if key not in samples:
            samples[key] = Sample.objects.create(
                benchmark=benchmark,
                split=item.split,
                external_id=item.external_id,
                kind=item.kind,
                input=item.input,
                reference=item.reference,
                candidate_tools=list(item.candidate_tools),
                metadata=item.metadata,
            )
        outcome = record.outcome
        Prediction.objects.create(
            run=run,
            sample=samples[key],
            position=position,
            repeat=repeats.get(key, 0),
            status="done" if outcome is not None else "failed",
            scores=dict(record.scores),
            output=(outcome.output or "") if outcome else "",
            answer=outcome.answer if outcome else None,
            parsed=bool(outcome and outcome.parsed),
            trace=list(outcome.trace) if outcome else [],
            note=outcome.note if outcome else "",
            tool_calls=outcome.tool_calls if outcome else None,
            leaked=bool(outcome and outcome.leaked),
            context=dict(record.context),
        )
        repeats[key] = repeats.get(key, 0) + 1
    copies = max(1, -(-size // len(records)))
    with connection.cursor() as cursor:
        if copies > 1:
            cursor.execute(COPY_SAMPLES_SQL, {"benchmark": benchmark.pk, "copies": copies})
            # planned from statistics that know the rows just written (else a nested loop that
            # reads every copy for every prediction)
            cursor.execute("ANALYZE benchmarks_sample")
            cursor.execute("ANALYZE evaluation_prediction")
            cursor.execute(
                COPY_PREDICTIONS_SQL, {"run": run.pk, "copies": copies, "each": len(records)}
            )
        cursor.execute("ANALYZE evaluation_prediction")
    run.score_names = prediction_score_names(run.pk)
    run.save(update_fields=["score_names"])
    return store_record_values(Run.objects.select_related("benchmark").get(pk=run.pk))


def whole_page(run: Run) -> dict:  # type: ignore[type-arg]
    return analyses.compute_run(run, analyses.declared(run))


def whole_parts(run: Run) -> list[tuple[str, float]]:
    """What each part of the page took: the database's counting, reading the records, and
    each analysis computed over them."""
    every = analyses.declared(run)
    in_database = [a for a in every if a.score_breakdown is not None]
    in_python = [a for a in every if a.score_breakdown is None]
    parts: list[tuple[str, float]] = []
    if in_database:
        seconds, _ = timed(lambda r: analyses.compute_in_database(r, in_database), run)
        parts.append((f"database ({', '.join(a.name for a in in_database)})", seconds))
    if in_python:
        seconds, data = timed(lambda r: analyses._records(r, in_python), run)
        parts.append(("reading the records", seconds))
        for analysis in in_python:
            start = time.perf_counter()
            analysis.run(data)  # type: ignore[arg-type]
            parts.append((analysis.name, time.perf_counter() - start))
    return parts


def whole_baseline(run: Run) -> float:
    start = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(WHOLE_BASELINE_SQL, [run.pk])
        cursor.fetchall()
    return time.perf_counter() - start


def work_whole(args: argparse.Namespace) -> int:
    sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})
    call_command("migrate", verbosity=0, interactive=False)
    tasks = whole_tasks(args.whole)
    if not tasks:
        raise SystemExit(f"--whole {args.whole!r}: no suite task with analyses and an example")
    results: list[honest.Result] = []
    try:
        for suite_name, task in tasks:
            taken: dict[int, list[float]] = {}
            bases: dict[int, list[float]] = {}
            loads: dict[int, honest.Load] = {}
            counts: dict[int, int] = {}
            for size in sizes:
                honest.doing(f"{suite_name} {task}: setup of {size:,}")
                started = time.perf_counter()
                run = build_example(suite_name, task, size)
                counts[size] = run.predictions.count()
                print(
                    f"{suite_name} {task}: {counts[size]:,} predictions set up in"
                    f" {time.perf_counter() - started:.1f} s",
                    flush=True,
                )
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_backend_pid()")
                    postmaster = honest.postmaster_of(cursor.fetchone()[0])
                watched = []
                with honest.CpuLoad(args.cpu_load) as burner:
                    for repeat in range(args.repeat):
                        honest.doing(f"{suite_name} {task} {size:,}: repeat {repeat + 1}")
                        watch = honest.Watch([postmaster] if postmaster else [], burner.pids)
                        watch.start()
                        seconds, _ = timed(whole_page, run)
                        base = whole_baseline(run)
                        watched.append(watch.stop())
                        taken.setdefault(size, []).append(seconds)
                        bases.setdefault(size, []).append(base)
                    parts = whole_parts(run)
                loads[size] = honest.merge(watched)
                median = statistics.median(taken[size])
                print(
                    f"  {counts[size]:>9,} whole page {median * 1000:10,.1f} ms  baseline"
                    f" {statistics.median(bases[size]) * 1000:.1f} ms; parts: "
                    + ", ".join(f"{name} {s * 1000:,.0f} ms" for name, s in parts),
                    flush=True,
                )
            largest = sizes[-1]
            seconds = statistics.median(taken[largest])
            base = statistics.median(bases[largest])
            reasons = honest.disturbed(
                bases[largest],
                loads[largest].others,
                max_spread=args.max_spread,
                max_others=args.max_others,
            )
            notes = list(reasons)
            for smaller, larger in itertools.pairwise(sizes):
                grown = statistics.median(taken[larger]) / statistics.median(taken[smaller])
                notes.append(f"{counts[smaller]:,} -> {counts[larger]:,}: x{grown:.1f}")
            results.append(
                honest.Result(
                    script=SCRIPT,
                    measured=f"{suite_name} {task}'s whole analyses page at"
                    f" {counts[largest]:,} (median of {args.repeat})",
                    value=f"{seconds:.2f} s",
                    baseline=f"{base * 1000:.1f} ms (a plain GROUP BY of the run's predictions)",
                    ratio=f"{seconds / base:.2f}x",
                    target=f"under {TARGET_S:g} s",
                    verdict=honest.verdict(seconds < TARGET_S, reasons),
                    load=loads[largest].text(),
                    command=honest.command_line(),
                    notes=notes,
                )
            )
    finally:
        forget()
    for result in results:
        result.print()
    honest.results_append(args.results, results)
    return honest.exit_status([result.verdict for result in results])


def work(args: argparse.Namespace) -> int:
    if args.whole:
        return work_whole(args)
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
    parser.add_argument(
        "--whole",
        default="",
        help="time the whole analyses page of each task of these suites (all, or"
        " SUITE[:TASK],...) instead of MTU-Bench's declared breakdowns",
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
