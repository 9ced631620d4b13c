"""python manage.py import_predictions <suite> <task> PATH --name NAME
[--on-duplicate refuse|reference|first|last] [--json]"""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from benchmarks.kit.base import ImportFormatError
from benchmarks.kit.registry import suite_names
from evaluation.management.commands._common import find_benchmark, key_values, run_summary
from evaluation.services import (
    DUPLICATE_POLICIES,
    MISSING_LISTED,
    RunError,
    predictions_import,
)

# Missing samples named on the text output; --json and the run's page list them all (up to
# services.MISSING_LISTED).
MISSING_SHOWN = 20


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


class Command(BaseCommand):
    help = (
        "Import outputs made elsewhere as a run and score them as a launched run is scored: "
        "MTU-Bench response files ({id, model, response} JSON Lines), UltraTool predictions, "
        "StableToolBench converted predictions, or --format generic ({sample_id, output} JSON "
        "Lines). All or nothing."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("suite", choices=suite_names())
        parser.add_argument("task")
        parser.add_argument("path")
        parser.add_argument("--name", required=True, help="The run's name (e.g. the model).")
        parser.add_argument("--benchmark", help="Default: the suite's only benchmark.")
        parser.add_argument("--split", default="")
        parser.add_argument("--model", default="", help="Model name to record (default: name).")
        parser.add_argument("--format", choices=["suite", "generic"], default="suite")
        parser.add_argument("--option", action="append", metavar="KEY=VALUE", help="Task.")
        parser.add_argument(
            "--on-duplicate",
            choices=DUPLICATE_POLICIES,
            default="refuse",
            help="A file that gives a sample several lines: refuse it (default); reference: "
            "score every line against the sample's gold, as MTU-Bench's scorer does; first or "
            "last: keep one line per sample.",
        )
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        benchmark = find_benchmark(options["benchmark"], options["suite"])
        quiet = options["json"] or options["verbosity"] == 0
        bar = tqdm(desc="Scoring", unit=" outputs", file=sys.stderr, disable=quiet)
        try:
            run = predictions_import(
                benchmark=benchmark,
                task=options["task"],
                path=options["path"],
                name=options["name"],
                split=options["split"],
                model_name=options["model"],
                fmt=options["format"],
                options=key_values(options["option"], "--option"),
                on_duplicate=options["on_duplicate"],
                progress=bar.update,
            )
        except (RunError, ImportFormatError) as exc:
            raise CommandError(f"Nothing imported. {exc}") from None
        finally:
            bar.close()
        summary = run_summary(run)
        report = run.import_report
        if options["json"]:
            summary.update(
                outputs=report["outputs"],
                on_duplicate=report["on_duplicate"],
                repeated=[entry["sample"] for entry in report["repeated"]],
                repeats_scored=report["repeats_scored"],
                repeats_dropped=report["repeats_dropped"],
                missing=report["missing"],
                missing_count=report["missing_count"],
            )
            self.stdout.write(json.dumps(summary))
            return
        self.stdout.write(
            f"Run {run.pk} ({run.name}): {summary['items']} items, {json.dumps(run.metrics)}"
        )
        self.stdout.write(describe_repeats(report))
        if report["missing_count"]:
            shown = report["missing"][:MISSING_SHOWN]
            more = report["missing_count"] - len(shown)
            self.stdout.write(
                f"No output for {plural(report['missing_count'], 'sample')}: {', '.join(shown)}"
                + (f" and {more} more (--json lists up to {MISSING_LISTED})" if more else "")
            )


def describe_repeats(report: dict[str, Any]) -> str:
    """What the import read and did with samples given several lines, in a sentence or two."""
    text = f"Read {plural(report['outputs'], 'output')}."
    repeated = report["repeated"]
    if not repeated:
        return text
    names = ", ".join(entry["sample"] for entry in repeated[:MISSING_SHOWN])
    if len(repeated) > MISSING_SHOWN:
        names += f" and {len(repeated) - MISSING_SHOWN} more"
    several = "sample has" if len(repeated) == 1 else "samples have"
    text += f" {len(repeated)} {several} several lines ({names}): "
    if report["on_duplicate"] == "reference":
        count = report["repeats_scored"]
        each = "an item of its own" if count == 1 else "items of their own"
        return text + f"{plural(count, 'repeat')} scored as {each} (--on-duplicate reference)."
    kept = report["on_duplicate"]
    dropped = plural(report["repeats_dropped"], "repeat")
    return text + f"{dropped} dropped, the {kept} line of each kept (--on-duplicate {kept})."
