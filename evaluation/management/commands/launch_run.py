"""python manage.py launch_run --benchmark B --task T --endpoint E [options] [--wait] [--json]
[--wait-ready SECONDS]

An endpoint still building or starting (the local model's first `make run` compiles llama.cpp
for minutes) is waited for, with a progress line, up to --wait-ready seconds (default 900);
then the run is launched, or the command says how far the endpoint is and what to do."""

from __future__ import annotations

import json
import re
import time
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
from evaluation.services import ENDPOINT_COMING, EndpointNotReady, RunError, run_launch

STALL_HINT_SECONDS = 30
READY_WAIT_SECONDS = 900
# How often the endpoint's status is read while waiting for it, and at most how long between
# two progress lines (a changed status is shown after a few seconds; the build changes its
# percentage often).
POLL_SECONDS = 1.0
REPORT_SECONDS = 30.0
CHANGE_SECONDS = 5.0
_PERCENT = re.compile(r"(\d{1,3})%")


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
        parser.add_argument(
            "--wait-ready",
            type=float,
            default=READY_WAIT_SECONDS,
            metavar="SECONDS",
            help="An endpoint still building or starting (the local model's first start): wait "
            f"up to this long for it to be ready (default {READY_WAIT_SECONDS}; 0: refuse at "
            "once).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        benchmark = find_benchmark(options["benchmark"])
        endpoint = Endpoint.objects.filter(name=options["endpoint"]).first()
        if endpoint is None:
            names = ", ".join(Endpoint.objects.values_list("name", flat=True)) or "none"
            raise CommandError(f"no endpoint {options['endpoint']!r}; endpoints: {names}")
        quiet = options["json"] or options["verbosity"] == 0

        def launch() -> Run:
            return run_launch(
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

        try:
            try:
                run = launch()
            except EndpointNotReady:
                # Building or starting: wait (the task and its options were checked before the
                # endpoint, so a mistyped one fails at once, not after the wait).
                if options["wait_ready"] <= 0 or endpoint.status not in ENDPOINT_COMING:
                    raise
                self.wait_ready(endpoint, options["wait_ready"], quiet)
                run = launch()
        except (RunError, QueueUnavailable) as exc:
            raise CommandError(str(exc)) from None
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

    def wait_ready(self, endpoint: Endpoint, limit: float, quiet: bool) -> None:
        """While `endpoint` is building or starting, and for at most `limit` seconds: wait,
        with a progress line on stderr. Returns once it is in any other state (run_launch
        refuses one that is down or failed); CommandError, saying how far it is, at the limit."""
        started = time.monotonic()
        shown, shown_at = "", -REPORT_SECONDS
        while endpoint.status in ENDPOINT_COMING:
            now = time.monotonic()
            elapsed = now - started
            if elapsed >= limit:
                raise CommandError(
                    f"{still_coming(endpoint)}; try again in a few minutes or pass "
                    f"--wait-ready SECONDS (waited {elapsed:.0f} s)"
                )
            line = f"{endpoint.get_status_display().lower()}: {endpoint.status_detail}"
            since = now - shown_at
            if not quiet and (
                since >= REPORT_SECONDS or (line != shown and since >= CHANGE_SECONDS)
            ):
                self.stderr.write(
                    f"Waiting for {subject(endpoint)} ({line}): {elapsed:.0f} s so far, "
                    f"at most {limit:.0f} s (--wait-ready)"
                )
                shown, shown_at = line, now
            time.sleep(min(POLL_SECONDS, limit - elapsed))
            endpoint.refresh_from_db()
        if not quiet:
            self.stderr.write(
                f"{subject(endpoint).capitalize()} is "
                f"{endpoint.get_status_display().lower()} after {time.monotonic() - started:.0f} s."
            )

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


def subject(endpoint: Endpoint) -> str:
    return "the local model" if endpoint.is_local else f"endpoint {endpoint.name!r}"


def still_coming(endpoint: Endpoint) -> str:
    """'the local model is still building (62%)': the build's percentage when its status detail
    has one, else the detail itself."""
    found = _PERCENT.search(endpoint.status_detail)
    detail = found[0] if found else endpoint.status_detail
    where = f" ({detail})" if detail else ""
    return f"{subject(endpoint)} is still {endpoint.get_status_display().lower()}{where}"
