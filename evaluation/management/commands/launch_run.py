"""python manage.py launch_run --benchmark B --task T --endpoint E [options] [--wait] [--json]"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from config.queue import QueueUnavailable
from evaluation.management.commands._common import (
    find_benchmark,
    follow,
    key_values,
    run_summary,
)
from evaluation.models import Endpoint, Run
from evaluation.selectors import run_progress
from evaluation.services import RunError, run_launch

STALL_HINT_SECONDS = 30


class Command(BaseCommand):
    help = (
        "Launch a run of a benchmark task against an endpoint; Celery workers answer it. "
        'With --wait, show progress until it ends; with --json, print {"run", "items", '
        '"metrics"}.'
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--benchmark", required=True, help="Benchmark name or id.")
        parser.add_argument("--task", required=True)
        parser.add_argument("--endpoint", required=True, help="Endpoint name.")
        parser.add_argument("--split", default="", help="Default: the task's splits.")
        parser.add_argument("--shots", type=int, default=0)
        parser.add_argument("--limit", type=int, default=None, help="At most this many items.")
        parser.add_argument("--param", action="append", metavar="KEY=VALUE", help="Generation.")
        parser.add_argument("--option", action="append", metavar="KEY=VALUE", help="Task.")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--repeat",
            type=int,
            default=None,
            metavar="K",
            help="Answer each item K times (the run option trials): trial t sends seed + t.",
        )
        parser.add_argument("--name", default="")
        parser.add_argument(
            "--budget",
            type=Decimal,
            default=None,
            help="What the run may spend: a cost when the endpoint has prices, else tokens "
            "(in + out). Reached: the rest stays pending (resume with a larger budget).",
        )
        parser.add_argument("--wait", action="store_true", help="Wait until the run ends.")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        benchmark = find_benchmark(options["benchmark"])
        endpoint = Endpoint.objects.filter(name=options["endpoint"]).first()
        if endpoint is None:
            names = ", ".join(Endpoint.objects.values_list("name", flat=True)) or "none"
            raise CommandError(f"no endpoint {options['endpoint']!r}; endpoints: {names}")
        try:
            run = run_launch(
                benchmark=benchmark,
                task=options["task"],
                endpoint=endpoint,
                split=options["split"],
                shots=options["shots"],
                item_limit=options["limit"],
                params=key_values(options["param"], "--param"),
                options=with_trials(key_values(options["option"], "--option"), options["repeat"]),
                seed=options["seed"],
                name=options["name"],
                budget=options["budget"],
            )
        except (RunError, QueueUnavailable) as exc:
            raise CommandError(str(exc)) from None
        quiet = options["json"] or options["verbosity"] == 0
        if not quiet:
            self.stderr.write(f"Run {run.pk} launched: {run_progress(run)['total']} items.")
        if options["wait"]:
            self.wait(run, quiet)
        if options["json"]:
            self.stdout.write(json.dumps(run_summary(run)))
        elif options["wait"]:
            run.refresh_from_db()
            self.stdout.write(f"Run {run.pk} {run.status}: {json.dumps(run.metrics)}")
            if run.error:
                self.stdout.write(f"error: {run.error}")

    def wait(self, run: Run, quiet: bool) -> None:
        follow(
            run,
            progress=lambda: run_progress(run),
            settled=("done", "failed"),
            unit="items",
            queue="inference",
            stderr=self.stderr,
            quiet=quiet,
        )


def with_trials(task_options: dict[str, Any], repeat: int | None) -> dict[str, Any]:
    """--repeat K is the option trials=K (run_launch checks it, whichever way it came)."""
    return task_options if repeat is None else {**task_options, "trials": repeat}
