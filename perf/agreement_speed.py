"""Agreement report speed: one million labels against the same statistics computed directly with
scipy on arrays already in memory, measured in the same run.

    python perf/agreement_speed.py [--items 10000] [--annotators 5] [--questions 20]
                                   [--resamples 1000] [--repeat 3] [--drop-db] [--inline]
                                   [--cpu-load N] [--results FILE] [--max-spread 0.15]
                                   [--max-others 0.25]

Setup (not timed): a pairwise campaign of --items items over two runs (their predictions carry a
metric, "accuracy", a score the generic answer task declares), --questions questions (a third
pairwise A/tie/B, a third ordinal 1-5, a third categories of four), and every annotator
answering every question on every item:
items x annotators x questions answers (10,000 x 5 x 20 = one million), written with COPY.
Answers follow a per-item truth with a seeded share of noise, so the statistics are neither 0
nor 1.

Timed:
- report: the path the report page and the API take for a campaign this size: `report_request`
  (not inline: a million answers are over AGREEMENT_INLINE_ANSWERS) queues the computation on
  the reports queue, a real Celery worker (started before the clock, one process) computes it
  (the labels read from PostgreSQL, every statistic of every question with its bootstrap
  interval (--resamples), the Turing/pairwise sections and annotator quality) and stores it;
  the clock stops when the stored report is DONE, as the page's polling sees it. --inline
  measures the in-process computation instead (what the command does), without the queue. Its
  parts (reading, computing) are printed too, measured in this process.
- direct: the same point statistics on numpy arrays already in memory, computed by the
  reference implementations: scipy.stats pearsonr / spearmanr / kendalltau for every rater pair
  and the metric against the mean human answer, scikit-learn's cohen_kappa_score and percent
  agreement for every pair and the metric against the human majority, statsmodels' fleiss_kappa
  and the krippendorff package's alpha per question. No intervals: the report computes
  --resamples bootstrap resamples of every one of them on top, so the ratio is conservative.

Prints each repeat and the medians, the ratio report / direct, and the machine's load while it
measured. Targets: report under 10 s and under 5x direct; a pass only when they are met and the
measurement was not disturbed (perf/honest.py: the direct repeats spread over --max-spread, or
other processes took over --max-others cores). Exit status: 0 pass, 1 missed, 3 disturbed.
It uses its own database (toolevals_perf_agreement) on the PostgreSQL of
DATABASE_URL (or of the embedded dev stack), created if missing and refilled at each start.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from perf import honest  # noqa: E402
from perf.owndb import django_on_own_database  # noqa: E402

PERF_DATABASE = "toolevals_perf_agreement"
TARGET_SECONDS = 10.0
TARGET_RATIO = 5.0

OWN = django_on_own_database(PERF_DATABASE, redis_db=12)

import krippendorff  # noqa: E402
import numpy as np  # noqa: E402
import redis  # noqa: E402
from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection, connections  # noqa: E402
from scipy import stats as sp  # noqa: E402
from sklearn.metrics import cohen_kappa_score  # noqa: E402
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa  # noqa: E402

from annotation.agreement import stats as ours  # noqa: E402
from annotation.agreement.data import campaign_ratings  # noqa: E402
from annotation.agreement.report import campaign_report  # noqa: E402
from annotation.agreement.services import report_params, report_request  # noqa: E402
from annotation.models import AgreementReport, Campaign  # noqa: E402
from perf.agreement_fixture import fixture_build  # noqa: E402

# --- the direct computation ---------------------------------------------------------------------


def codes_of(question: dict, answers: np.ndarray) -> np.ndarray:
    if question["scale"] == "categories":
        position = {c["value"]: i for i, c in enumerate(question["choices"])}
        return np.vectorize(position.get)(answers).astype(float)
    return answers.astype(float)


def direct(memory: dict) -> int:
    """The report's point statistics by the reference implementations; returns how many."""
    count = 0
    metric = memory["metric"]
    for question in memory["spec"]:
        humans = codes_of(question, memory["answers"][question["key"]])
        numeric = question["scale"] != "categories"
        columns = [humans[:, j] for j in range(humans.shape[1])]
        if numeric:
            columns.append(metric)
        for a in range(len(columns)):
            for b in range(a + 1, len(columns)):
                x, y = columns[a], columns[b]
                if numeric:
                    sp.pearsonr(x, y)
                    sp.spearmanr(x, y)
                    sp.kendalltau(x, y)
                    count += 3
                float(np.mean(x == y))
                cohen_kappa_score(x, y)
                count += 2
        table, _ = aggregate_raters(humans.astype(int))
        fleiss_kappa(table)
        krippendorff.alpha(
            reliability_data=humans.T,
            level_of_measurement="ordinal" if numeric else "nominal",
        )
        count += 2
        if numeric:
            mean = humans.mean(axis=1)
            majority = ours.majority(humans)
            sp.pearsonr(metric, mean)
            sp.spearmanr(metric, mean)
            sp.kendalltau(metric, mean)
            known = ~np.isnan(majority)
            float(np.mean(metric[known] == majority[known]))
            cohen_kappa_score(metric[known], majority[known])
            count += 5
    return count


# --- the worker ---------------------------------------------------------------------------------


class Worker:
    """One Celery worker process on the reports queue, started before the clock."""

    def __init__(self, log_dir: Path) -> None:
        self.log = open(log_dir / "worker.log", "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "-Q",
                "reports",
                "--concurrency",
                "1",
                "-n",
                "perf-agreement@%h",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "-l",
                "warning",
            ],
            cwd=ROOT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        time.sleep(3)  # it imports Django and connects before the clock starts
        if self.proc.poll() is not None:
            raise SystemExit(f"the worker died at start; see {self.log.name}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def through_worker(campaign: Campaign, params: dict) -> AgreementReport:
    """The page's path: request the report (queued for the worker), then poll the stored row
    until it is done, as the page does."""
    # inline=False: the queue whatever the size (a million answers take it anyway; a smoke
    # run's few would otherwise be computed at once).
    report = report_request(campaign, params, inline=False)
    deadline = time.monotonic() + 1800
    while report.status not in (AgreementReport.Status.DONE, AgreementReport.Status.FAILED):
        if time.monotonic() > deadline:
            raise SystemExit("the report was not computed within 30 minutes")
        time.sleep(0.05)
        report.refresh_from_db(fields=["status", "error"])
    report.refresh_from_db()
    return report


def service_pids() -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        postmaster = honest.postmaster_of(cursor.fetchone()[0])
    return ([postmaster] if postmaster else []) + honest.pids_named("redis-server")


# --- main ---------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--annotators", type=int, default=5)
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--drop-db", action="store_true")
    parser.add_argument(
        "--inline",
        action="store_true",
        help="compute the report in this process (no queue, no worker) instead of the page's "
        "path through Celery",
    )
    honest.add_arguments(parser, time_limit=600)
    args = parser.parse_args()
    sys.exit(honest.within_time_limit(args, "agreement_speed.py", lambda: measure_all(args)))


def measure_all(args: argparse.Namespace) -> int | None:
    total = args.items * args.annotators * args.questions
    print(f"database {OWN.name} (migrating)", flush=True)
    call_command("migrate", verbosity=0, interactive=False)
    redis.from_url(settings.CELERY_BROKER_URL).flushdb()
    started = time.perf_counter()
    campaign_id, memory = fixture_build(args.items, args.annotators, args.questions)
    print(
        f"setup: {args.items:,} items x {args.annotators} annotators x {args.questions} "
        f"questions = {total:,} answers (+ a metric on {2 * args.items:,} predictions) "
        f"in {time.perf_counter() - started:.1f} s",
        flush=True,
    )
    campaign = Campaign.objects.get(pk=campaign_id)
    params = report_params(metrics=["accuracy"], resamples=args.resamples)
    path = "in this process (--inline)" if args.inline else "queued, computed by a Celery worker"
    print(f"report: {path}; clock stops when the stored report is done")
    rows, loads = [], []
    with (
        tempfile.TemporaryDirectory(prefix="perf-agreement-") as tmp,
        honest.CpuLoad(args.cpu_load) as burner,
    ):
        worker = None if args.inline else Worker(Path(tmp))
        roots = service_pids() + ([worker.proc.pid] if worker else [])
        try:
            print(
                f"\n{'repeat':>6} {'report':>9} {'(read':>8} {'compute)':>9} {'direct':>8}"
                f" {'ratio':>6}  load"
            )
            for repeat in range(args.repeat):
                AgreementReport.objects.filter(campaign=campaign).delete()
                watch = honest.Watch(roots, burner.pids).start()
                t0 = time.perf_counter()
                if args.inline:
                    report = report_request(campaign, params, inline=True)
                else:
                    report = through_worker(campaign, params)
                report_s = time.perf_counter() - t0
                assert report.status == AgreementReport.Status.DONE, report.error
                # Its parts, again, outside the stored path.
                t0 = time.perf_counter()
                ratings = campaign_ratings(campaign, metrics=["accuracy"])
                read_s = time.perf_counter() - t0
                t0 = time.perf_counter()
                campaign_report(ratings, resamples=args.resamples)
                compute_s = time.perf_counter() - t0
                t0 = time.perf_counter()
                statistics_count = direct(memory)
                direct_s = time.perf_counter() - t0
                loads.append(watch.stop())
                rows.append((report_s, read_s, compute_s, direct_s))
                print(
                    f"{repeat + 1:>6} {report_s:>8.2f}s {read_s:>7.2f}s {compute_s:>8.2f}s "
                    f"{direct_s:>7.2f}s {report_s / direct_s:>5.2f}x  {loads[-1].text()}",
                    flush=True,
                )
        finally:
            if worker is not None:
                worker.stop()
    report_m, read_m, compute_m, direct_m = (statistics.median(c) for c in zip(*rows, strict=True))
    data = report.data
    pairs = sum(len(q["pairs"]) for q in data["questions"])
    ratio = report_m / direct_m
    print(
        f"\nmedian of {args.repeat}: report {report_m:.2f} s (reading {read_m:.2f} s, computing "
        f"{compute_m:.2f} s), direct {direct_m:.2f} s ({statistics_count} point statistics), "
        f"ratio {ratio:.2f}x"
    )
    size = len(json.dumps(data)) / 1e6
    print(
        f"the report: {len(data['questions'])} questions, {pairs} rater pairs, "
        f"{args.resamples} resamples per interval, {size:.1f} MB of JSON"
    )
    load = honest.merge(loads)
    reasons = honest.disturbed(
        [r[3] for r in rows], load.others, max_spread=args.max_spread, max_others=args.max_others
    )
    met = report_m < TARGET_SECONDS and ratio < TARGET_RATIO
    result = honest.Result(
        script="agreement_speed.py",
        measured=f"agreement report of {total:,} answers ({args.resamples} resamples), "
        f"{'in process' if args.inline else 'through the Celery worker, to the stored report'}"
        f" (median of {args.repeat})",
        value=f"{report_m:.2f} s (reading {read_m:.2f} s, computing {compute_m:.2f} s)",
        baseline=f"{direct_m:.2f} s (the point statistics by scipy/sklearn/statsmodels)",
        ratio=f"{ratio:.2f}x",
        target=f"< {TARGET_SECONDS:g} s and < {TARGET_RATIO:g}x",
        verdict=honest.verdict(met, reasons),
        load=load.text(),
        command=honest.command_line(),
        notes=list(reasons),
    )
    result.print()
    honest.results_append(args.results, [result])
    connections.close_all()
    if args.drop_db:
        OWN.drop()
    return honest.exit_status([result.verdict])


if __name__ == "__main__":
    main()
