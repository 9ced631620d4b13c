"""python manage.py import_api_cache PATH [--origin imported|real] [--benchmark NAME] [--json]"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from benchmarks.kit.base import ImportFormatError
from benchmarks.kit.registry import suites_serving_cache
from evaluation.management.commands._common import find_benchmark
from evaluation.models import ApiResponse
from evaluation.virtualapi.cache import apis_from_benchmark, cache_import


def cache_suites() -> list[str]:
    return [suite.name for suite in suites_serving_cache()]


class Command(BaseCommand):
    help = (
        "Import a StableToolBench response cache (a folder <Category>/<tool>/<api>.json, as "
        "its virtual API server keeps it) into the platform's virtual API server: its "
        "responses are then served as stored. All or nothing. --origin real declares them "
        "real API responses (the Turing test pairs them with simulated ones); --benchmark "
        "also records the documentation of that StableToolBench benchmark's APIs."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument(
            "--origin",
            choices=[ApiResponse.Origin.IMPORTED, ApiResponse.Origin.REAL],
            default=ApiResponse.Origin.IMPORTED,
        )
        parser.add_argument("--benchmark", help="A StableToolBench benchmark's name or id.")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        quiet = options["json"] or options["verbosity"] == 0
        documented = 0
        if options["benchmark"]:
            documented = apis_from_benchmark(find_benchmark(options["benchmark"], cache_suites()))
        bar = tqdm(desc="Storing", unit=" calls", file=sys.stderr, disable=quiet)
        try:
            counts = cache_import(options["path"], origin=options["origin"], progress=bar.update)
        except ImportFormatError as exc:
            raise CommandError(f"Nothing imported. {exc}") from None
        finally:
            bar.close()
        counts["documented_apis"] = documented
        if options["json"]:
            self.stdout.write(json.dumps(counts))
        else:
            self.stdout.write(
                f"{counts['read']} cached responses read ({counts['calls']} distinct calls): "
                f"{counts['added']} added, {counts['known']} already in the cache."
            )
