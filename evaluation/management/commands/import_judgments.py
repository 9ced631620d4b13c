"""python manage.py import_judgments <format> PATH --name NAME [--benchmark B] [--judge J]
[--answers PATH] [--task T] [--json]"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from benchmarks.suites.base import ImportFormatError
from evaluation.judging import IMPORT_FORMATS, IMPORT_SUITES, JudgeError, judgments_import
from evaluation.management.commands._common import find_benchmark
from evaluation.management.commands.judge_run import job_summary
from evaluation.services import RunError


class Command(BaseCommand):
    help = (
        "Import published judge outputs: the judged run (the model's outputs) and the "
        "judgments, matched to imported samples. All or nothing. Formats: "
        + ", ".join(IMPORT_FORMATS)
        + '. ultratool-planning: UltraTool\'s planning evaluations ({"data": {"data": '
        '{"input", "reference"}, "init output"}, "eval": [{"Reasoning", "<Dimension> Score"}, '
        "...]} per line, in the order of the planning test set). stabletoolbench-pass: "
        "StableToolBench's pass-rate results (pass_rate_results/<method>/<group>_<method>.json, "
        "the is_solved label of each query in each evaluation round); --answers takes the "
        "answers from the converted predictions file instead of the results' steps."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("format", choices=IMPORT_FORMATS)
        parser.add_argument("path")
        parser.add_argument("--name", required=True, help="The judged run's name (the model).")
        parser.add_argument("--benchmark", help="Default: the format's suite's only benchmark.")
        parser.add_argument("--judge", default="", help="Judge name (default: per format).")
        parser.add_argument(
            "--answers",
            default=None,
            help="stabletoolbench-pass: model_predictions_converted/<method>/<group>.json, "
            "the whole answers the labels judged (default: rebuilt from the results' steps).",
        )
        parser.add_argument(
            "--task",
            default="",
            help="stabletoolbench-pass: the run's task, pass_rate (default) or preference.",
        )
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        benchmark = find_benchmark(options["benchmark"], IMPORT_SUITES[options["format"]])
        try:
            job = judgments_import(
                fmt=options["format"],
                path=options["path"],
                name=options["name"],
                benchmark=benchmark,
                judge_name=options["judge"],
                answers=options["answers"],
                task=options["task"],
            )
        except (JudgeError, RunError, ImportFormatError) as exc:
            raise CommandError(f"Nothing imported. {exc}") from None
        summary = job_summary(job)
        if options["json"]:
            self.stdout.write(json.dumps(summary))
        else:
            self.stdout.write(
                f"Run {job.run_id} and judge job {job.pk}: {summary['items']} items, "
                f"{json.dumps(job.metrics)}"
            )
