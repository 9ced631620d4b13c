"""python manage.py make_turing_pairs [--limit 70] [--include-imported] [--api TEXT] [--seed 0]"""

from __future__ import annotations

import json
import sys
from typing import Any

from asgiref.sync import async_to_sync
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from evaluation.models import ApiResponse
from evaluation.virtualapi.server import ThreadSteps
from evaluation.virtualapi.turing import pair_candidates, pairs_make


class Command(BaseCommand):
    help = (
        "Turing-test pairs (StableToolBench section 4.3): cached calls with a clean real "
        "response, asked again of the simulator (VIRTUAL_API_SIMULATOR); each (real, simulated) "
        "pair is stored with the API's documentation. Build a Turing campaign from them in the "
        "admin (Turing pairs, action 'Build a Turing campaign'). The paper used 70 APIs."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--limit", type=int, default=70, help="Pairs to make (one per API first)."
        )
        parser.add_argument(
            "--include-imported",
            action="store_true",
            help="Also pair imported cache entries (a published cache mixes real and simulated).",
        )
        parser.add_argument(
            "--api", default="", help="Only APIs or tools whose name contains this."
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        steps = ThreadSteps()
        if steps.endpoint is None:
            raise CommandError("no simulator: set VIRTUAL_API_SIMULATOR to an endpoint's name")
        origins = (ApiResponse.Origin.REAL,)
        if options["include_imported"]:
            origins += (ApiResponse.Origin.IMPORTED,)
        candidates = pair_candidates(
            limit=options["limit"],
            origins=origins,
            simulator_name=steps.simulator_name,
            seed=options["seed"],
            contains=options["api"],
        )
        if not candidates:
            raise CommandError(
                "no cached call with a clean real response left to pair (import a cache with "
                "import_api_cache --origin real, or pass --include-imported)"
            )
        quiet = options["json"] or options["verbosity"] == 0
        bar = tqdm(
            total=len(candidates), desc="Simulating", unit=" calls", file=sys.stderr, disable=quiet
        )
        try:
            made = async_to_sync(pairs_make)(candidates, steps, progress=bar.update)
        finally:
            bar.close()
        for path, reason in made.failed:
            self.stderr.write(f"{path}: no simulated answer, no pair ({reason})")
        apis = len({pair.api_id for pair in made.pairs})
        if options["json"]:
            self.stdout.write(
                json.dumps({"pairs": len(made.pairs), "apis": apis, "failed": len(made.failed)})
            )
        else:
            self.stdout.write(
                f"{len(made.pairs)} Turing pairs over {apis} APIs ({steps.simulator_name})"
                + (f"; {len(made.failed)} calls not answered." if made.failed else ".")
            )
        if not made.pairs:
            raise CommandError("the simulator answered none of the calls: no pair made")
