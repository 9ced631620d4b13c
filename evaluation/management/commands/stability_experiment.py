"""python manage.py stability_experiment --endpoint E --judge J [--benchmark B] [--split S]
[--limit N] [--shares 0,10,20,50] [--mode simulate|fail] [--repeat 3] [--seed 0] [--json]"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from benchmarks.kit.registry import get_suite, suites_serving_cache
from evaluation.judging import JudgeError
from evaluation.management.commands._common import find_benchmark, follow
from evaluation.models import Endpoint, Judge, Judgment, Prediction
from evaluation.selectors import job_progress, run_progress
from evaluation.services import RunError
from evaluation.virtualapi.stability import agent_task, judge_arms, runs_launch, table


def _shares(text: str) -> list[float]:
    try:
        values = [float(part) / 100 for part in text.split(",") if part.strip()]
    except ValueError:
        raise CommandError(f"--shares takes percentages like 0,10,20,50, not {text!r}") from None
    if not values or any(not 0 <= v <= 1 for v in values):
        raise CommandError("--shares are percentages between 0 and 100")
    return values


def cache_suites() -> list[str]:
    return [suite.name for suite in suites_serving_cache()]


class Command(BaseCommand):
    help = (
        "StableToolBench's stability experiment (sections 2.3 and 4.2): the same queries run "
        "with 0, 10, 20 and 50%% of their tools made unavailable, each run judged with the pass "
        "judge; prints SoPR per share. --mode simulate sends calls to a tool that is down to the "
        "simulator (the virtual API server); --mode fail answers them with the failure response "
        "(no server, section 2.3). Celery workers on the inference and judging queues answer."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--endpoint", required=True, help="The model's endpoint.")
        parser.add_argument("--judge", required=True, help="A pass judge of the benchmark.")
        parser.add_argument(
            "--benchmark",
            help="Default: the only benchmark whose tools the virtual API server serves from a "
            "published cache (StableToolBench's).",
        )
        parser.add_argument("--split", default=None, help="Default: the agent task's first.")
        parser.add_argument("--limit", type=int, default=None, help="Queries per run.")
        parser.add_argument("--shares", default="0,10,20,50", help="Percent of tools down.")
        parser.add_argument("--mode", choices=["simulate", "fail"], default="simulate")
        parser.add_argument("--repeat", type=int, default=3, help="Judge rounds (SoPR std).")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        benchmark = find_benchmark(options["benchmark"], cache_suites())
        endpoint = Endpoint.objects.filter(name=options["endpoint"]).first()
        if endpoint is None:
            raise CommandError(f"no endpoint {options['endpoint']!r}")
        judge = Judge.objects.filter(name=options["judge"]).first()
        if judge is None:
            raise CommandError(f"no judge {options['judge']!r}")
        split = (
            options["split"] or get_suite(benchmark.suite).tasks[agent_task(benchmark)].splits[0]
        )
        quiet = options["json"] or options["verbosity"] == 0
        try:
            arms = runs_launch(
                benchmark=benchmark,
                endpoint=endpoint,
                split=split,
                limit=options["limit"],
                shares=_shares(options["shares"]),
                mode=options["mode"],
                seed=options["seed"],
            )
        except (RunError, ValueError) as exc:
            raise CommandError(str(exc)) from None
        for arm in arms:
            if not quiet:
                self.stderr.write(f"Run {arm.run.pk}: {arm.share:.0%} of tools down.")
            follow(
                arm.run,
                progress=lambda run=arm.run: run_progress(run),
                settled=(Prediction.Status.DONE, Prediction.Status.FAILED),
                unit="queries",
                queue="inference",
                stderr=self.stderr,
                quiet=quiet,
            )
        try:
            judge_arms(arms, judge, options["repeat"])
        except JudgeError as exc:
            raise CommandError(str(exc)) from None
        for arm in arms:
            assert arm.job is not None
            follow(
                arm.job,
                progress=lambda job=arm.job: job_progress(job),
                settled=(Judgment.Status.DONE, Judgment.Status.UNPARSED, Judgment.Status.FAILED),
                unit="judgments",
                queue="judging",
                stderr=self.stderr,
                quiet=quiet,
            )
            arm.job.refresh_from_db()
        rows = table(arms)
        if options["json"]:
            self.stdout.write(json.dumps(rows))
            return
        self.stdout.write(
            f"{'tools down':>10} {'SoPR':>14} {'answered':>9}  "
            "calls (cache/real/simulated/down/failed)"
        )
        for row in rows:
            sopr = (
                "\N{EN DASH}"
                if row["sopr"] is None
                else f"{row['sopr']:.1f} ± {row['sopr_std']:.1f}"
            )
            calls = row["calls"]
            self.stdout.write(
                f"{row['share']:>10.0%} {sopr:>14} {row['answered'] or 0:>8.1f}%  "
                f"{calls['cache']}/{calls['real']}/{calls['simulated']}/{calls['down']}/"
                f"{calls['failed']}"
            )
