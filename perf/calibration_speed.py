"""Calibration report page speed: a judge version's page read as stored, against the same page
computing the report (and the trend) while the request waits, as every view once did.

    python perf/calibration_speed.py [--pairs 10000] [--versions 2] [--annotators 3]
                                     [--repeat 3] [--drop-db] [--time-limit S] [--cpu-load N]
                                     [--results FILE] [--max-spread 0.25] [--max-others 0.25]

Setup (not timed; written with bulk inserts): a generic benchmark of --pairs samples, two
finished runs of its answer task, a pairwise judge with --versions versions, each of which judged
every pair once in both orders (2 x --pairs judgments a version), and a pairwise campaign of the
same pairs that --annotators annotators labelled in full (one label each per item). Each version
agrees with the human majority on three pairs in four (the disagreements' table lists the rest).

Timed, --repeat times each, the median kept:
- computed (the baseline: what the page cost before the report was stored): `GET
  /judges/<id>/v<n>/calibration/` of the latest version with its stored report forgotten first
  and the inline size raised, so that the request computes the report and every version's for
  the trend, then renders it (as a worker computes it, plus the page).
- stored: the same page while the stored report is current: the fingerprint's reading of the
  judgments and labels, the stored row, the page.
The ratio is stored / computed; the CPU each request took in this process (the page's Python,
not PostgreSQL's) is printed too, a figure a busy machine stretches less than wall time.
Target: stored under 1 s and under 0.2x computed. A result is disturbed (never a pass) when the
baseline's repeats spread over --max-spread or other processes took over --max-others cores
(perf/honest.py). Exit status: 0 pass, 1 missed, 3 disturbed. Its own database
(toolevals_perf_calibration) on the PostgreSQL of DATABASE_URL (or of the embedded dev stack),
refilled at each start.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from perf import honest  # noqa: E402
from perf.owndb import django_on_own_database  # noqa: E402

SCRIPT = "calibration_speed.py"
STORED_S = 1.0
RATIO = 0.2

OWN = django_on_own_database("toolevals_perf_calibration")

from django.conf import settings  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection, connections  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402

from annotation.models import Assignment, CalibrationReport, Campaign, Item, Label  # noqa: E402
from benchmarks.models import Benchmark, Sample  # noqa: E402
from evaluation.judge_versions import version_for  # noqa: E402
from evaluation.models import (  # noqa: E402
    Endpoint,
    Judge,
    JudgeJob,
    JudgeVersion,
    Judgment,
    Prediction,
    Run,
)

ANSWERS = ("A", "tie", "B")


def majority(i: int) -> int:
    """The humans' answer on pair i (-1 B better, 0 tie, 1 A better)."""
    return (i % 3) - 1


def verdict(i: int, v: int) -> int:
    """Version v's verdict on pair i: the humans' on three pairs in four (each version errs on
    other pairs), as a judge worth calibrating does."""
    return majority(i) if i % 4 != v % 4 else majority(i + 1)


def build(pairs: int, versions: int, annotators: int) -> JudgeVersion:
    """The world of the module docstring; the latest version."""
    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE annotation_label, annotation_assignment, annotation_item, "
            "annotation_calibrationreport, evaluation_judgment, evaluation_judgejob, "
            "evaluation_judgeversion, evaluation_judge, evaluation_prediction, evaluation_run, "
            "benchmarks_sample, annotation_campaign CASCADE"
        )
    benchmark, _ = Benchmark.objects.get_or_create(
        name="perf-calibration", defaults={"suite": "generic"}
    )
    samples = Sample.objects.bulk_create(
        Sample(benchmark=benchmark, external_id=f"s{i}", split="test", input={})
        for i in range(pairs)
    )
    endpoint, _ = Endpoint.objects.get_or_create(
        name="perf", defaults={"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    )
    runs = [
        Run.objects.create(
            benchmark=benchmark, task="answer", endpoint=endpoint, status=Run.Status.DONE, name=n
        )
        for n in ("model A", "model B")
    ]
    predictions = [
        Prediction.objects.bulk_create(
            Prediction(
                run=run,
                sample=sample,
                position=i,
                status=Prediction.Status.DONE,
                output=f"{run.name} answer {i} " + "x" * (i % 40),
            )
            for i, sample in enumerate(samples)
        )
        for run in runs
    ]
    judge = Judge.objects.create(
        name="perf judge", template="generic.pairwise", kind="pairwise", endpoint=endpoint
    )
    version = None
    for v in range(versions):
        judge.params = {"temperature": v / 10}
        judge.save()
        version = version_for(judge)
        job = JudgeJob.objects.create(
            judge=judge, run=runs[0], against=runs[1], repeats=1, version=version, status="done"
        )
        Judgment.objects.bulk_create(
            (
                Judgment(
                    job=job,
                    version=version,
                    sample=samples[i],
                    prediction=predictions[0][i],
                    other=predictions[1][i],
                    order=order,
                    position=2 * i + k,
                    status=Judgment.Status.DONE,
                    value=float(verdict(i, v)),
                    label=ANSWERS[verdict(i, v) + 1],
                )
                for i in range(pairs)
                for k, order in enumerate(("AB", "BA"))
            ),
            batch_size=5000,
        )
    from annotation import services

    campaign = services.campaign_create(name="perf humans", kind="pairwise")
    services.items_from_runs(campaign=campaign, run_a=runs[0], run_b=runs[1])
    users = [User.objects.get_or_create(username=f"perf-ann{j}")[0] for j in range(annotators)]
    items = list(Item.objects.filter(campaign=campaign).order_by("position"))
    lease = timezone.now() + timedelta(hours=1)
    for j, user in enumerate(users):
        assignments = Assignment.objects.bulk_create(
            (
                Assignment(
                    campaign=campaign,
                    item=item,
                    annotator=user,
                    status="submitted",
                    lease_until=lease,
                )
                for item in items
            ),
            batch_size=5000,
        )
        Label.objects.bulk_create(
            (
                Label(
                    campaign=campaign,
                    item=a.item,
                    assignment=a,
                    annotator=user,
                    answers={
                        "better": majority(a.item.position + (j == 0 and a.item.position % 5 == 0))
                    },
                    token=uuid.uuid4(),
                )
                for a in assignments
            ),
            batch_size=5000,
        )
    Campaign.objects.filter(pk=campaign.pk).update(status="active")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    assert version is not None
    return version


CPU: list[tuple[str, float]] = []


def timed_get(client: Client, url: str, what: str = "") -> float:
    """The request's wall time; its CPU in this process (the page's Python: PostgreSQL's is
    not counted) goes to CPU under `what`."""
    started, cpu = time.perf_counter(), time.process_time()
    response = client.get(url)
    took = time.perf_counter() - started
    if what:
        CPU.append((what, time.process_time() - cpu))
    assert response.status_code == 200, response.status_code
    html = response.content.decode()
    assert "Reliability diagram" in html, html[html.find("<main") :][:3000]
    return took


def cpu(what: str) -> float:
    return statistics.median(seconds for name, seconds in CPU if name == what)


def work(args: argparse.Namespace) -> int:
    honest.doing("setup: migrate")
    call_command("migrate", verbosity=0, interactive=False)
    user, _ = User.objects.get_or_create(username="perf-calibration")
    user.is_superuser = user.is_staff = True
    user.save()
    honest.doing(f"setup: {args.pairs:,} pairs, {args.versions} versions")
    version = build(args.pairs, args.versions, args.annotators)
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)
    url = f"/judges/{version.judge_id}/v{version.number}/calibration/"
    settings.CALIBRATION_INLINE_UNITS = 10**9  # the request computes it, as the page once did
    honest.doing("warming up (the first request loads the templates and the statistics)")
    timed_get(client, url)
    computed, stored = [], []
    watches = []
    for repeat in range(args.repeat):
        honest.doing(f"repeat {repeat + 1} of {args.repeat}")
        watch = honest.Watch().start()
        CalibrationReport.objects.all().delete()
        computed.append(timed_get(client, url, "computed"))
        stored.append(timed_get(client, url, "stored"))
        watches.append(watch.stop())
        print(f"  computed {computed[-1]:.3f} s, stored {stored[-1]:.3f} s", flush=True)
    row = CalibrationReport.objects.get(version=version)
    load = honest.merge(watches)
    value, base = statistics.median(stored), statistics.median(computed)
    reasons = honest.disturbed(
        computed, load.others, max_spread=args.max_spread, max_others=args.max_others
    )
    result = honest.Result(
        script=SCRIPT,
        measured=(
            f"calibration page at {args.pairs:,} judged pairs x {args.versions} versions, "
            f"stored (median of {args.repeat})"
        ),
        value=f"{value * 1000:.0f} ms",
        baseline=f"{base * 1000:.0f} ms (the page computing the report and its trend)",
        ratio=f"{value / base:.3f}x",
        target=f"stored under {STORED_S:g} s and under {RATIO:g}x computed",
        verdict=honest.verdict(value < STORED_S and value / base < RATIO, reasons),
        load=load.text(),
        command=honest.command_line(),
        notes=[
            *reasons,
            f"the worker's computation stored {row.seconds:.2f} s",
            f"CPU of this process per request (median): stored {cpu('stored'):.3f} s, "
            f"computed {cpu('computed'):.3f} s ({cpu('stored') / cpu('computed'):.3f}x)",
        ],
    )
    result.print()
    honest.results_append(args.results, [result])
    return honest.exit_status([result.verdict])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--versions", type=int, default=2)
    parser.add_argument("--annotators", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--drop-db", action="store_true", help="drop the own database at the end")
    honest.add_arguments(parser, time_limit=900)
    args = parser.parse_args()
    try:
        status = honest.within_time_limit(args, "calibration_speed.py", lambda: work(args))
    finally:
        connections.close_all()
        if args.drop_db:
            OWN.drop()
    sys.exit(status)


if __name__ == "__main__":
    main()
