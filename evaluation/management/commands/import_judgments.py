"""python manage.py import_judgments <format> PATH --name NAME [--benchmark B] [--judge J]
[--answers PATH] [--task T] [--json]"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from benchmarks.kit.base import ImportFormatError
from benchmarks.kit.registry import judgment_formats
from evaluation.judging import JudgeError, judgments_import
from evaluation.management.commands._common import find_benchmark
from evaluation.management.commands.judge_run import job_summary
from evaluation.services import RunError


class Command(BaseCommand):
    @property
    def help(self) -> str:  # type: ignore[override]
        formats = judgment_formats()
        return (
            "Import published judge outputs: the judged run (the model's outputs) and the "
            "judgments, matched to imported samples. All or nothing. Formats: "
            + ", ".join(formats)
            + ". "
            + " ".join(f"{fmt}: {reader.help}" for fmt, (_suite, reader) in formats.items())
        )

    def add_arguments(self, parser: Any) -> None:
        formats = judgment_formats()
        takers = [(fmt, r) for fmt, (_suite, r) in formats.items() if r.takes_answers]
        parser.add_argument("format", choices=list(formats))
        parser.add_argument("path")
        parser.add_argument("--name", required=True, help="The judged run's name (the model).")
        parser.add_argument("--benchmark", help="Default: the format's suite's only benchmark.")
        parser.add_argument("--judge", default="", help="Judge name (default: per format).")
        parser.add_argument(
            "--answers",
            default=None,
            help=" ".join(f"{fmt}: {reader.answers_help}" for fmt, reader in takers),
        )
        parser.add_argument(
            "--task",
            default="",
            help=" ".join(f"{fmt}: {reader.task_help}" for fmt, reader in takers),
        )
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        suite, _reader = judgment_formats()[options["format"]]
        benchmark = find_benchmark(options["benchmark"], suite.name)
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
