"""python manage.py judge_run --judge NAME --run ID [--against ID] [--repeat K] [--wait] [--json]"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from config.queue import QueueUnavailable
from evaluation.judging import JudgeError, judge_launch
from evaluation.management.commands._common import follow
from evaluation.models import Judge, JudgeJob, Judgment, Run
from evaluation.selectors import job_progress

STALL_HINT_SECONDS = 30


def job_summary(job: JudgeJob) -> dict[str, Any]:
    job.refresh_from_db()
    return {
        "judge": job.judge.name,
        "run": job.run_id,
        **({"against": job.against_id} if job.against_id else {}),
        "items": int(job.metrics.get("items", 0)) if job.metrics else _items(job),
        "metrics": job.metrics,
    }


def _items(job: JudgeJob) -> int:
    return job.judgments.values("sample_id").distinct().count()


class Command(BaseCommand):
    help = (
        "Judge a run (or, with a pairwise judge, a run against another) with an LLM judge; "
        "Celery workers on the judging queue answer. With --wait, show progress; with --json "
        'print {"judge", "run", "items", "metrics"}.'
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--judge", required=True, help="Judge name.")
        parser.add_argument("--run", type=int, required=True)
        parser.add_argument("--against", type=int, default=None, help="Pairwise: the other run.")
        parser.add_argument("--repeat", type=int, default=3, help="Times each item is judged.")
        parser.add_argument(
            "--budget",
            type=Decimal,
            default=None,
            help="What the job may spend: a cost when the judge's endpoint has prices, else "
            "tokens (in + out).",
        )
        parser.add_argument("--wait", action="store_true")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        judge = Judge.objects.select_related("endpoint").filter(name=options["judge"]).first()
        if judge is None:
            names = ", ".join(Judge.objects.values_list("name", flat=True)) or "none"
            raise CommandError(f"no judge {options['judge']!r}; judges: {names}")
        run = self.find_run(options["run"])
        against = self.find_run(options["against"]) if options["against"] else None
        try:
            job = judge_launch(
                judge=judge,
                run=run,
                against=against,
                repeats=options["repeat"],
                budget=options["budget"],
            )
        except (JudgeError, QueueUnavailable) as exc:
            raise CommandError(str(exc)) from None
        quiet = options["json"] or options["verbosity"] == 0
        if not quiet:
            self.stderr.write(f"Judge job {job.pk}: {job_progress(job)['total']} judgments.")
        if options["wait"]:
            self.wait(job, quiet)
        if options["json"]:
            self.stdout.write(json.dumps(job_summary(job)))
        elif options["wait"]:
            job.refresh_from_db()
            self.stdout.write(f"Judge job {job.pk} {job.status}: {json.dumps(job.metrics)}")

    def find_run(self, pk: int) -> Run:
        run = Run.objects.select_related("benchmark").filter(pk=pk).first()
        if run is None:
            raise CommandError(f"no run {pk}")
        return run

    def wait(self, job: JudgeJob, quiet: bool) -> None:
        follow(
            job,
            progress=lambda: job_progress(job),
            settled=(Judgment.Status.DONE, Judgment.Status.UNPARSED, Judgment.Status.FAILED),
            unit="judgments",
            queue="judging",
            stderr=self.stderr,
            quiet=quiet,
        )
