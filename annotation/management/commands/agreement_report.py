"""python manage.py agreement_report --campaign ID [--metric M] [--judge J] [--question Q]
[--resamples N] [--seed S] [--csv PATH] [--labels-csv PATH] [--json]"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotation.agreement.data import AgreementError
from annotation.agreement.exports import label_csv_lines, summary_csv_lines
from annotation.agreement.report import summary_rows
from annotation.agreement.services import report_params, report_request
from annotation.kinds import kind_of
from annotation.models import AgreementReport, Campaign


def _number(value: Any) -> str:
    return "\N{EN DASH}" if value is None else f"{value:.3f}"


class Command(BaseCommand):
    help = (
        "Agreement between a campaign's annotators, and with LLM judges and automatic metrics "
        "of the runs behind its items: per question and rater pair, with seeded bootstrap 95% "
        "intervals. Prints a summary; --csv writes one row per statistic, --labels-csv every "
        "rating in long format, --json prints the whole report. The report is stored, so the "
        "page shows it at once until the labels change."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--campaign", type=int, required=True, help="Campaign id.")
        parser.add_argument(
            "--metric",
            action="append",
            default=[],
            help="A per-item score of the runs behind the items (repeatable); counts and flags "
            "are refused, a lower-is-better score is compared with its sign turned.",
        )
        parser.add_argument("--judge", action="append", default=[], help="Judge name (repeatable).")
        parser.add_argument(
            "--question", action="append", default=[], help="Only this question (repeatable)."
        )
        parser.add_argument("--resamples", type=int, default=None, help="Bootstrap resamples.")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--csv", type=Path, default=None, help="Write the summary CSV here.")
        parser.add_argument("--labels-csv", type=Path, default=None, help="Write every rating.")
        parser.add_argument("--json", action="store_true", help="Print the report as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = Campaign.objects.filter(pk=options["campaign"]).first()
        if campaign is None:
            raise CommandError(f"no campaign {options['campaign']}")
        params = report_params(
            metrics=options["metric"],
            judges=options["judge"],
            questions=options["question"],
            resamples=options["resamples"],
            seed=options["seed"],
        )
        quiet = options["json"] or options["verbosity"] == 0
        bar = None if quiet else tqdm(total=1, desc="questions", unit="q", file=self.stderr)

        def progress(done: int, total: int) -> None:
            if bar is not None:
                bar.total = total
                bar.n = done
                bar.refresh()

        try:
            report = report_request(campaign, params, inline=True, on_progress=progress)
        except AgreementError as exc:
            raise CommandError(str(exc)) from None
        finally:
            if bar is not None:
                bar.close()
        if report.status != AgreementReport.Status.DONE:
            raise CommandError(f"the report failed: {report.error}")
        if options["csv"]:
            with options["csv"].open("w", newline="", encoding="utf-8") as out:
                out.writelines(summary_csv_lines(report.data))
        if options["labels_csv"]:
            with options["labels_csv"].open("w", newline="", encoding="utf-8") as out:
                out.writelines(label_csv_lines(campaign, params))
        if options["json"]:
            self.stdout.write(json.dumps(report.data))
            return
        self.stdout.write(
            f"{campaign.name}: {report.data['items']} items, "
            f"{len(report.data['annotators'])} annotators "
            f"({report.seconds:.1f} s)"
        )
        for name, how in report.data.get("metrics", {}).items():
            if how.get("sign_turned"):
                self.stdout.write(f"  metric:{name} is better lower: compared with its sign turned")
        for row in summary_rows(report.data, kind_of(campaign).report_sections):
            question, a, b, statistic, n, value, low, high = row
            interval = f" [{_number(low)}, {_number(high)}]" if low is not None else ""
            self.stdout.write(
                f"  {question or '-':<24} {a:<28} {b:<28} {statistic:<30} n={n:<6} "
                f"{_number(value)}{interval}"
            )
