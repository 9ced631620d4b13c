"""python manage.py calibration_report --judge NAME [--judge-version N] [--resamples B] [--seed S]
[--csv PATH] [--json]"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotation.calibration.report import CSV_COLUMNS, csv_rows
from annotation.calibration.stored import report_and_trend, report_params, report_request
from annotation.calibration.versions import version_named
from annotation.models import CalibrationReport
from config.errors import ApplicationError


def _number(est: Any) -> str:
    if not est or est.get("value") is None:
        return "\N{EN DASH}"
    text = f"{est['value']:.3f}"
    if est.get("low") is not None and est.get("high") is not None:
        text += f" [{est['low']:.3f}, {est['high']:.3f}]"
    return text


class Command(BaseCommand):
    help = (
        "A judge version's calibration against the humans who labelled the same items (the "
        "page /judges/<id>/v<n>/calibration/ shows the same): per task and question, accuracy "
        "and Cohen's kappa with the human majority, Pearson with the mean human answer, the "
        "expected calibration error, position and length bias, with 95% bootstrap intervals. The "
        "report is stored, so the page shows it at once until the judgments or labels change."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--judge", required=True, help="The judge's name.")
        parser.add_argument(
            "--judge-version", type=int, default=None, help="Its version number (latest)."
        )
        parser.add_argument("--resamples", type=int, default=1000)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--csv", type=Path, default=None, help="Write the CSV here.")
        parser.add_argument("--json", action="store_true", help="Print the report as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            params = report_params(resamples=options["resamples"], seed=options["seed"])
            version = version_named(options["judge"], options["judge_version"])
        except ApplicationError as exc:
            raise CommandError(str(exc)) from None
        # Computed here (or read as stored while its inputs are unchanged), and kept for the page.
        stored = report_request(version, params, inline=True)
        if stored.status != CalibrationReport.Status.DONE:
            raise CommandError(f"the report failed: {stored.error}")
        report, trend = report_and_trend(stored)
        if options["csv"]:
            with options["csv"].open("w", newline="", encoding="utf-8") as handle:
                writer = csv.writer(handle)
                writer.writerow(CSV_COLUMNS)
                for row in csv_rows(report, trend):
                    writer.writerow(["" if v is None else v for v in row])
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        self.stdout.write(f"{report['judge']} v{report['version']}: {report['units']} items judged")
        for task in report["tasks"]:
            self.stdout.write(f"{task['task']}: {task['units']} items")
            if not task["questions"]:
                self.stdout.write("  no human labels on these items yet")
            for q in task["questions"]:
                self.stdout.write(
                    f"  {q['key']}: {q['compared']} compared, {q['disagreements']} disagree; "
                    f"accuracy {_number(q['accuracy'])}, kappa {_number(q['cohen_kappa'])}, "
                    f"ECE {_number(q['ece'])}"
                )
