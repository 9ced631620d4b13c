"""python manage.py rewrite_tool_descriptions BENCHMARK --endpoint E [--model M] [--budget B]
[--run RUN_ID | --task T [--split S] [--limit N] [--seed N] [--option K=V] [--eval-endpoint E]]
[--wait] [--json]

The description-rewriting experiment (MetaTool, papers/000 section 4.3, Figure 6)."""

from __future__ import annotations

import json
import sys
from decimal import Decimal
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from config.errors import ApplicationError
from evaluation.management.commands._common import find_benchmark, follow, key_values
from evaluation.models import Endpoint, Run
from evaluation.rewriting import (
    rewrite_report,
    rewriting_task_check,
    tool_descriptions_rewrite,
)
from evaluation.selectors import run_progress
from evaluation.services import run_launch, run_rerun


def _endpoint(name: str) -> Endpoint:
    endpoint = Endpoint.objects.filter(name=name).first()
    if endpoint is None:
        names = ", ".join(Endpoint.objects.values_list("name", flat=True)) or "none"
        raise CommandError(f"no endpoint {name!r}; endpoints: {names}")
    return endpoint


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.2f}%"


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


class Command(BaseCommand):
    help = (
        "Have an endpoint rewrite every tool description of a benchmark (its suite's prompt) "
        "into a new tool revision; with --run (a launched run) or --task (a new run, launched "
        "first on the original descriptions), run the same items again on the new descriptions "
        "and, with --wait, report the change of the success rate per tool and overall."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("benchmark", help="Benchmark name or id.")
        parser.add_argument("--endpoint", required=True, help="The endpoint that rewrites.")
        parser.add_argument("--model", default="", help="Its model (default: the endpoint's).")
        parser.add_argument(
            "--budget",
            type=Decimal,
            default=None,
            help="What the rewriting may spend: a cost when the endpoint has prices, else "
            "tokens (in + out).",
        )
        parser.add_argument("--run", type=int, default=None, help="The run to repeat.")
        parser.add_argument("--task", default="", help="Launch a run of this task first.")
        parser.add_argument("--split", default="")
        parser.add_argument("--limit", type=int, default=None, help="At most this many items.")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--option", action="append", metavar="KEY=VALUE", help="Task.")
        parser.add_argument(
            "--eval-endpoint",
            default="",
            help="The endpoint of the runs --task launches (default: --endpoint).",
        )
        parser.add_argument("--wait", action="store_true", help="Wait for the runs; report.")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["run"] is not None and options["task"]:
            raise CommandError("give --run (a run to repeat) or --task (a new run), not both")
        benchmark = find_benchmark(options["benchmark"])
        endpoint = _endpoint(options["endpoint"])
        base: Run | None = None
        if options["run"] is not None:
            base = Run.objects.filter(pk=options["run"], benchmark=benchmark).first()
            if base is None:
                raise CommandError(f"no run {options['run']} of {benchmark.name}")
        quiet = options["json"] or options["verbosity"] == 0
        bar = tqdm(unit=" tools", file=sys.stderr, disable=quiet, desc="rewriting")

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        try:
            if options["task"] or base is not None:
                rewriting_task_check(benchmark, options["task"] or (base.task if base else ""))
            if options["task"]:
                base = run_launch(
                    benchmark=benchmark,
                    task=options["task"],
                    endpoint=_endpoint(options["eval_endpoint"] or options["endpoint"]),
                    split=options["split"],
                    item_limit=options["limit"],
                    options=key_values(options["option"], "--option"),
                    seed=options["seed"],
                    name=f"{options['task']}, tool descriptions as imported",
                )
                if not quiet:
                    self.stderr.write(f"Run {base.pk} launched on the imported descriptions.")
            try:
                revision = tool_descriptions_rewrite(
                    benchmark=benchmark,
                    endpoint=endpoint,
                    model=options["model"],
                    budget=options["budget"],
                    progress=progress,
                )
            finally:
                bar.close()
            rerun = None
            if base is not None:
                rerun = run_rerun(
                    run=base,
                    tool_revision=revision,
                    name=f"{base.task}, tool descriptions r{revision.number}",
                )
        except ApplicationError as exc:
            raise CommandError(str(exc)) from None
        if not quiet:
            self.stderr.write(f"Tool revision {revision.number}: {revision.note}")
            if rerun is not None:
                self.stderr.write(f"Run {rerun.pk} repeats run {base.pk if base else ''} on it.")
        report = None
        if rerun is not None and base is not None and options["wait"]:
            for run in (base, rerun):
                follow(
                    run,
                    progress=lambda run=run: run_progress(run),  # type: ignore[misc]
                    settled=("done", "failed"),
                    unit="items",
                    queue="inference",
                    stderr=self.stderr,
                    quiet=quiet,
                )
            rerun.refresh_from_db()
            report = rewrite_report(rerun)
        result = {
            "tool_revision": revision.number,
            "before_run": base.pk if base is not None else None,
            "run": rerun.pk if rerun is not None else None,
            "report": report,
        }
        if options["json"]:
            self.stdout.write(json.dumps(result))
        elif report is not None:
            self.write_report(report)
        else:
            self.stdout.write(json.dumps(result))

    def write_report(self, report: dict[str, Any]) -> None:
        metric = report["metric"]
        self.stdout.write(
            f"{metric} on tool revision {report['tool_revision']} (run {report['run']}) against "
            f"the imported descriptions (run {report['before_run']}):"
        )
        self.stdout.write(f"{'tool':40} {'n':>5} {'before':>8} {'after':>8} {'change':>9}")
        for row in [report["overall"], *report["tools"]]:
            self.stdout.write(
                f"{row['group'][:40]:40} {row['n_after']:>5} {_rate(row['before']):>8} "
                f"{_rate(row['after']):>8} {_percent(row['change_percent']):>9}"
            )
