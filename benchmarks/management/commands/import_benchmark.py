"""python manage.py import_benchmark <suite> PATH... [--benchmark NAME] [--allow-known-tools]
[--json]"""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from benchmarks.kit.base import ImportFormatError
from benchmarks.kit.registry import suite_names
from benchmarks.services import benchmark_import


class Command(BaseCommand):
    help = (
        "Import a benchmark's files as published. All or nothing: a bad file imports nothing "
        "and the error names the file, the line or record, and the field. Re-importing the same "
        "files changes nothing."
    )
    # No system checks before an import: they import every URL's view (and with them the API,
    # the schema generator and numpy), a second of start-up on a ToolE-sized file whose import
    # takes a third of that, and nothing they check is used by an import. `manage.py check`,
    # runserver and migrate run them.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("suite", choices=suite_names())
        parser.add_argument("paths", nargs="+", metavar="PATH")
        parser.add_argument("--benchmark", help="Benchmark name (default: the suite's own).")
        parser.add_argument("--demo", action="store_true", help="Mark the benchmark as demo data.")
        parser.add_argument(
            "--allow-known-tools",
            action="store_true",
            help=(
                "A gold tool must be described by a tool file of the same import (MetaTool: "
                "plugin_des.json, big_tool_des.json, plugin_info.json). With this option, a "
                "gold tool the benchmark already has from an earlier import is accepted too; "
                "one it does not have is still an error."
            ),
        )
        parser.add_argument(
            "--json",
            action="store_true",
            help='Print {"benchmark", "tools", "samples": {split: n}} for the stored totals.',
        )

    def handle(self, *args: Any, **options: Any) -> None:
        quiet = options["json"] or options["verbosity"] == 0
        bar = tqdm(desc="Reading", unit=" rec", file=sys.stderr, disable=quiet, dynamic_ncols=True)
        try:
            summary = benchmark_import(
                suite=options["suite"],
                paths=options["paths"],
                benchmark_name=options["benchmark"],
                is_demo=options["demo"],
                progress=bar.update,
                allow_known_tools=options["allow_known_tools"],
            )
        except ImportFormatError as exc:
            raise CommandError(f"Nothing imported. {exc}") from None
        finally:
            bar.close()
        if options["json"]:
            self.stdout.write(json.dumps(summary.as_json()))
            return
        splits = ", ".join(f"{split}: {n}" for split, n in summary.samples.items()) or "none"
        self.stdout.write(
            self.style.SUCCESS(
                f"{summary.benchmark}: {summary.tools} tools, samples {splits} "
                f"(written now: {summary.tools_written} tools, {summary.samples_written} samples; "
                f"unchanged: {summary.unchanged}; refined samples kept: {summary.refined_kept})"
            )
        )
