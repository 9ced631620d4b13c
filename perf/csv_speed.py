"""The predictions and labels CSV exports against PostgreSQL's own `COPY ... TO STDOUT` of the
same rows, measured in the same run.

    python perf/csv_speed.py [--rows 1000000] [--repeat 3] [--export predictions|labels|both]
                             [--cpu-load N] [--results FILE] [--max-spread 0.15]
                             [--max-others 0.25] [--keep]

--export says which CSV (predictions by default; both: the predictions CSV, then the labels
CSV, one result each). Labels: a pairwise campaign named `perf-csv-labels` of --rows / 100
items, each answered by 5 annotators on 20 questions (a third pairwise, a third ordinal 1-5, a
third categories of four), written with COPY: --rows rows of the long format. Its export is
`GET /campaigns/<id>/agreement/labels.csv` (the annotators' rows, no metric or judge), its
baseline the COPY of the same rows (label x question, with the answer, in the CSV's order).

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
  (JIT off, as the exports run)
  through psycopg, read to its last byte: what PostgreSQL itself gives of the stored columns,
  without the export's formula neutralisation, JSON cells, flags or prices.

Targets: at least 200,000 rows/s for a million rows, first byte under 200 ms, memory
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DEBUG", "1")

import django  # noqa: E402

django.setup()

from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402

from annotation.models import Campaign, Label, Question  # noqa: E402
from benchmarks.models import Benchmark  # noqa: E402
from evaluation.models import Run  # noqa: E402
from evaluation.selectors import PREDICTION_CSV_SQL, prediction_score_names  # noqa: E402
from perf import honest  # noqa: E402
from perf.labels import LABEL_COLUMNS, label_row  # noqa: E402

BENCHMARK = "perf-csv-export"
USER = "perf-csv-export"
TARGET_RATE = 200_000
TARGET_FIRST_BYTE_MS = 200.0
TARGET_MEMORY_MB = 64.0


def bulk_forget(statements: list[str], name: str) -> None:
    """The rows by the million first, by plain DELETEs (the ORM's delete collects and reads
    them in Python first: minutes for a million); the few rows that point at them then go by
    the ORM, with its cascades."""
    with transaction.atomic(), connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement, [name])


def forget() -> None:
    bulk_forget(
        [
            "DELETE FROM evaluation_prediction WHERE run_id IN (SELECT r.id FROM evaluation_run r"
            " JOIN benchmarks_benchmark b ON b.id = r.benchmark_id WHERE b.name = %s)",
            "DELETE FROM benchmarks_sample WHERE benchmark_id IN"
            " (SELECT id FROM benchmarks_benchmark WHERE name = %s)",
        ],
        BENCHMARK,
    )
    Run.objects.filter(benchmark__name=BENCHMARK).delete()
    Benchmark.objects.filter(name=BENCHMARK).delete()


def samples_copy(cursor: Any, benchmark_id: int, split: str, prefix: str, count: int) -> None:
    """`count` small samples of the benchmark (external ids prefix0, prefix1, ...), by COPY."""
    now = timezone.now()
    with cursor.cursor.copy(
        "COPY benchmarks_sample (benchmark_id, split, external_id, kind, input, "
        "candidate_tools, metadata, revision, created_at, updated_at) FROM STDIN"
    ) as copy:
        for i in range(count):
            copy.write_row(
                (benchmark_id, split, f"{prefix}{i}", "", '{"query": "q"}', "[]", "{}", 0, now, now)
            )


def build(rows: int) -> Run:
    forget()
    benchmark = Benchmark.objects.create(name=BENCHMARK, suite="generic")
    run = Run.objects.create(
        benchmark=benchmark, task="answer", split="default", status=Run.Status.DONE
    )
    now = timezone.now()
    with connection.cursor() as cursor:
        samples_copy(cursor, benchmark.pk, "default", "q", rows)
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


def export(client: Client, url: str) -> tuple[float, float, float, int, int, float]:
    """(seconds, first byte seconds, memory growth MB, bytes, lines, this process's CPU
    seconds) of one export."""
    start_rss = peak = rss_mb()
    cpu = time.process_time()
    start = time.perf_counter()
    response = client.get(url)
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


def copy_out(sql: str) -> tuple[float, int]:
    """PostgreSQL's own CSV of the same rows, read to its last byte, on a connection of the
    platform's, with JIT off as every one of them (config.db): its compiling would only slow
    the baseline down and flatter the ratio."""
    start = time.perf_counter()
    size = 0
    with (
        connection.cursor() as cursor,
        cursor.cursor.copy(f"COPY ({sql}) TO STDOUT (FORMAT csv)") as copy,
    ):
        for block in copy:
            size += len(block)
    return time.perf_counter() - start, size


# --- the labels CSV -----------------------------------------------------------------------------

LABELS = "perf-csv-labels"
ANNOTATORS = 5
QUESTIONS = 20

# The long format's rows as stored: one per current label and question, in the CSV's order.
LABEL_ROWS_COPY_SQL = """
SELECT l.item_id, u.username, q.key, l.answers -> q.key, a.shown_order, l.time_ms, l.created_at
FROM annotation_label l
JOIN annotation_item i ON i.id = l.item_id
JOIN auth_user u ON u.id = l.annotator_id
JOIN annotation_assignment a ON a.id = l.assignment_id
CROSS JOIN (SELECT key, "order", id FROM annotation_question WHERE campaign_id = {campaign}) q
WHERE l.campaign_id = {campaign} AND l.is_current
ORDER BY i.position, u.username, q."order", q.id
"""


def labels_forget() -> None:
    of_campaign = "WHERE campaign_id IN (SELECT id FROM annotation_campaign WHERE name = %s)"
    bulk_forget(
        [
            f"DELETE FROM annotation_label {of_campaign}",
            f"DELETE FROM annotation_assignment {of_campaign}",
            f"DELETE FROM annotation_item {of_campaign}",
            "DELETE FROM benchmarks_sample WHERE benchmark_id IN"
            " (SELECT id FROM benchmarks_benchmark WHERE name = %s)",
        ],
        LABELS,
    )
    Campaign.objects.filter(name=LABELS).delete()
    Benchmark.objects.filter(name=LABELS).delete()
    User.objects.filter(username__startswith=f"{LABELS}-").delete()


def labels_build(rows: int) -> Campaign:
    """A campaign of rows / (ANNOTATORS x QUESTIONS) items, each answered by ANNOTATORS
    annotators on QUESTIONS questions (a third pairwise A/tie/B, a third ordinal 1-5, a third
    categories of four): `rows` rows of the labels CSV, written with COPY."""
    labels_forget()
    items = max(1, rows // (ANNOTATORS * QUESTIONS))
    users = User.objects.bulk_create(
        # "!" is Django's unusable password: nobody signs in as them.
        [User(username=f"{LABELS}-{j}", password="!") for j in range(ANNOTATORS)]  # noqa: S106
    )
    benchmark = Benchmark.objects.create(name=LABELS, suite="generic")
    campaign = Campaign.objects.create(
        name=LABELS, kind="pairwise", labels_per_item=ANNOTATORS, status="active"
    )
    kinds = (
        ("pairwise", [1, 0, -1]),
        ("ordinal", [1, 2, 3, 4, 5]),
        ("categories", ["A", "B", "C", "D"]),
    )
    spec = [(f"q{q:02d}", *kinds[q % 3]) for q in range(QUESTIONS)]
    Question.objects.bulk_create(
        [
            Question(
                campaign=campaign,
                key=key,
                text=f"Question {key}",
                scale=scale,
                choices=[{"value": v, "label": str(v)} for v in values],
                order=n,
            )
            for n, (key, scale, values) in enumerate(spec)
        ]
    )
    now = timezone.now()
    with connection.cursor() as cursor:
        samples_copy(cursor, benchmark.pk, "test", "s", items)
        cursor.execute(
            "INSERT INTO annotation_item (campaign_id, position, sample_id, payload, active, "
            "submitted, is_open) SELECT %s, row_number() OVER (ORDER BY id) - 1, id, '{}', %s, "
            "%s, false FROM benchmarks_sample WHERE benchmark_id = %s",
            [campaign.pk, ANNOTATORS, ANNOTATORS, benchmark.pk],
        )
        cursor.execute(
            "INSERT INTO annotation_assignment (campaign_id, item_id, annotator_id, status, "
            "shown_order, leased_at, lease_until, submitted_at) SELECT %s, i.id, u.id, "
            "'submitted', CASE WHEN (i.position + u.id) %% 2 = 0 THEN 'AB' ELSE 'BA' END, "
            "%s, %s, %s FROM annotation_item i CROSS JOIN auth_user u "
            "WHERE i.campaign_id = %s AND u.username LIKE %s",
            [campaign.pk, now, now, now, campaign.pk, f"{LABELS}-%"],
        )
        cursor.execute(
            "SELECT a.id, a.item_id, a.annotator_id, i.position FROM annotation_assignment a "
            "JOIN annotation_item i ON i.id = a.item_id WHERE a.campaign_id = %s",
            [campaign.pk],
        )
        assignments = cursor.fetchall()
        order = {user.pk: j for j, user in enumerate(users)}
        with cursor.cursor.copy(f"COPY annotation_label ({LABEL_COLUMNS}) FROM STDIN") as copy:
            for assignment, item, annotator, position in assignments:
                j = order[annotator]
                answers = {
                    key: values[(position * 7 + j * 3 + q) % len(values)]
                    for q, (key, _scale, values) in enumerate(spec)
                }
                copy.write_row(
                    label_row(campaign.pk, item, assignment, annotator, answers, 4000 + j, now)
                )
        cursor.execute("VACUUM ANALYZE annotation_label")
        cursor.execute("VACUUM ANALYZE annotation_item")
    return campaign


# --- measuring ----------------------------------------------------------------------------------


@dataclass
class Export:
    """One CSV measured: its name, the view's URL, the COPY of the same rows, how many line
    breaks the export has, and how many rows it has."""

    name: str
    url: str
    copy_sql: str
    line_breaks: int
    rows: int


def setup(kind: str, rows: int) -> Export:
    honest.doing(f"setup: {rows:,} rows of the {kind} CSV")
    started = time.perf_counter()
    if kind == "predictions":
        run = build(rows)
        found = Export(
            "predictions",
            f"/runs/{run.pk}/predictions.csv",
            PREDICTION_CSV_SQL.replace("%s", str(int(run.pk))),
            # a line per row and a line break inside each row's output, and the header
            2 * rows + 1,
            rows,
        )
    else:
        campaign = labels_build(rows)
        total = Label.objects.filter(campaign=campaign).count() * QUESTIONS
        found = Export(
            "labels",
            f"/campaigns/{campaign.pk}/agreement/labels.csv",
            LABEL_ROWS_COPY_SQL.format(campaign=int(campaign.pk)),
            total + 1,
            total,
        )
    print(
        f"setup: {found.rows:,} rows of the {kind} CSV in {time.perf_counter() - started:.1f} s",
        flush=True,
    )
    return found


def measure(args: argparse.Namespace, client: Client, target: Export) -> honest.Result:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        postmaster = honest.postmaster_of(cursor.fetchone()[0])
    rows = target.rows
    exports, copies, loads = [], [], []
    print(
        f"{'repeat':>6} {'export s':>9} {'rows/s':>10} {'per CPU s':>10} {'first ms':>9}"
        f" {'memory MB':>10}"
        f" {'COPY s':>7} {'ratio':>6}  load"
    )
    with honest.CpuLoad(args.cpu_load) as burner:
        for repeat in range(args.repeat):
            watch = honest.Watch([postmaster] if postmaster else [], burner.pids).start()
            honest.doing(f"repeat {repeat + 1} of {args.repeat}: the {target.name} CSV's export")
            seconds, first, memory, _size, lines, cpu = export(client, target.url)
            assert lines == target.line_breaks, f"{lines} line breaks for {rows} rows"
            honest.doing(f"repeat {repeat + 1} of {args.repeat}: its COPY (the baseline)")
            copy_seconds, _copy_size = copy_out(target.copy_sql)
            loads.append(watch.stop())
            exports.append((seconds, first, memory, cpu))
            copies.append(copy_seconds)
            print(
                f"{repeat + 1:>6} {seconds:>9.2f} {rows / seconds:>10,.0f}"
                f" {rows / cpu:>10,.0f} {first * 1000:>9.1f} {memory:>10.1f}"
                f" {copy_seconds:>7.2f}"
                f" {seconds / copy_seconds:>6.2f}  {loads[-1].text()}",
                flush=True,
            )
    seconds = statistics.median(e[0] for e in exports)
    first = statistics.median(e[1] for e in exports)
    memory = max(e[2] for e in exports)
    cpu = statistics.median(e[3] for e in exports)
    copy_s = statistics.median(copies)
    rate = rows / seconds
    load = honest.merge(loads)
    reasons = honest.disturbed(
        copies, load.others, max_spread=args.max_spread, max_others=args.max_others
    )
    met = rate >= TARGET_RATE and first * 1000 < TARGET_FIRST_BYTE_MS and memory < TARGET_MEMORY_MB
    return honest.Result(
        script="csv_speed.py",
        measured=f"{target.name} CSV of {rows:,} rows through the view (median of {args.repeat})",
        value=f"{seconds:.2f} s ({rate:,.0f} rows/s), first byte {first * 1000:.0f} ms, "
        f"memory +{memory:.0f} MB",
        baseline=f"{copy_s:.2f} s (COPY ... TO STDOUT of the same rows, {rows / copy_s:,.0f}"
        " rows/s)",
        ratio=f"{seconds / copy_s:.2f}x",
        target=f">= {TARGET_RATE:,} rows/s, first byte < {TARGET_FIRST_BYTE_MS:g} ms, "
        f"memory growth < {TARGET_MEMORY_MB:g} MB",
        verdict=honest.verdict(met, reasons),
        load=load.text(),
        command=honest.command_line(),
        notes=[
            *reasons,
            f"rows per CPU second of the exporting process: {rows / cpu:,.0f} (what the "
            "export costs whatever else the machine does)",
        ],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the run for inspection")
    parser.add_argument(
        "--export",
        choices=("predictions", "labels", "both"),
        default="predictions",
        help="which CSV to measure (both: the predictions CSV, then the labels CSV)",
    )
    honest.add_arguments(parser, time_limit=900)
    args = parser.parse_args()
    sys.exit(honest.within_time_limit(args, "csv_speed.py", lambda: measure_all(args)))


def measure_all(args: argparse.Namespace) -> int | None:
    call_command("migrate", verbosity=0, interactive=False)
    user, _ = User.objects.get_or_create(username=USER, defaults={"is_superuser": True})
    user.is_superuser = user.is_staff = True
    user.save()
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)
    kinds = ("predictions", "labels") if args.export == "both" else (args.export,)
    results = []
    for kind in kinds:
        try:
            results.append(measure(args, client, setup(kind, args.rows)))
        finally:
            if not args.keep:
                honest.doing(f"cleanup: deleting the {kind} CSV's rows")
                forget() if kind == "predictions" else labels_forget()
    for result in results:
        result.print()
    honest.results_append(args.results, results)
    return honest.exit_status([result.verdict for result in results])


if __name__ == "__main__":
    main()
