"""python manage.py simulator_diversity [--apis 60] [--calls 5] [--seed S] [--json]"""

from __future__ import annotations

import json
import sys
from typing import Any

from asgiref.sync import async_to_sync
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from benchmarks.kit.registry import suites_serving_cache
from evaluation.management.commands._common import find_benchmark
from evaluation.virtualapi.cache import apis_from_benchmark
from evaluation.virtualapi.diversity import apis_sample, diversity_check, summary, summary_text
from evaluation.virtualapi.server import ThreadSteps


def cache_suites() -> list[str]:
    return [suite.name for suite in suites_serving_cache()]


class Command(BaseCommand):
    help = (
        "The simulator's diversity check (StableToolBench section 4.4): for sampled APIs, five "
        "calls with different arguments (written by the simulator's model with the paper's "
        "Appendix H prompt), each simulated afresh; reports how many APIs answer two different "
        "calls identically (the paper: 2 of 60)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--apis", type=int, default=60)
        parser.add_argument("--calls", type=int, default=5)
        parser.add_argument("--attempts", type=int, default=15, help="Writer tries per API.")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--benchmark", help="Record this StableToolBench benchmark's API documentation first."
        )
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["benchmark"]:
            apis_from_benchmark(find_benchmark(options["benchmark"], cache_suites()))
        steps = ThreadSteps()
        if steps.endpoint is None:
            raise CommandError("no simulator: set VIRTUAL_API_SIMULATOR to an endpoint's name")
        apis = apis_sample(options["apis"], options["seed"])
        if not apis:
            raise CommandError(
                "no API with documentation in the virtual API server: import a StableToolBench "
                "benchmark and pass --benchmark"
            )
        quiet = options["json"] or options["verbosity"] == 0
        bar = tqdm(total=len(apis), desc="APIs", unit=" api", file=sys.stderr, disable=quiet)
        try:
            results = async_to_sync(diversity_check)(
                apis,
                steps,
                calls=options["calls"],
                attempts=options["attempts"],
                progress=bar.update,
            )
        finally:
            bar.close()
        data = summary(results)
        self.stdout.write(json.dumps(data) if options["json"] else summary_text(data))
