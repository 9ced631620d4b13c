"""python manage.py run_golds RUN_ID [--json]"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from evaluation.gold_versions import PUBLISHED, REFINED, compare_golds
from evaluation.management.commands.run_analysis import cell
from evaluation.models import Run


class Command(BaseCommand):
    help = (
        "Score a finished run's stored answers again under the published gold (every sample as "
        "imported) and the refined gold (every sample as experts refined it), without calling "
        "the model; print the metrics under each and the items whose verdict changed. Any size "
        "(the run page compares runs of up to GOLD_COMPARE_ITEMS answers). With --json: the "
        "comparison as one JSON object."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("run", type=int, help="The run's id.")
        parser.add_argument("--json", action="store_true", help="Print JSON instead of tables.")

    def handle(self, *args: Any, **options: Any) -> None:
        run = Run.objects.select_related("benchmark").filter(pk=options["run"]).first()
        if run is None:
            raise CommandError(f"no run {options['run']}")
        if run.status != Run.Status.DONE:
            raise CommandError(f"run {run.pk} is {run.status}, not done: its answers are not in")
        quiet = options["verbosity"] == 0 or options["json"]
        bar = tqdm(desc="Scoring", unit=" answers", file=sys.stderr, disable=quiet)

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        try:
            comparison = compare_golds(run, progress=progress)
        finally:
            bar.close()
        if options["json"]:
            self.stdout.write(
                json.dumps(
                    {
                        "run": run.pk,
                        "metrics": comparison.metrics,
                        "refined_samples": comparison.refined_samples,
                        "items": comparison.items,
                        "changed": [asdict(item) for item in comparison.changed],
                    },
                    ensure_ascii=False,
                )
            )
            return
        lines = [
            f"Run {run.pk} ({run.benchmark.name} {run.task}): {comparison.refined_samples} "
            f"refined samples, {len(comparison.changed)} of {comparison.items} answers change "
            "verdict",
            f"  {'metric':<28} {PUBLISHED:>12} {REFINED:>12}",
        ]
        lines += [
            f"  {name:<28} {cell(published):>12} {cell(refined):>12}"
            for name, published, refined in comparison.metric_rows(())
        ]
        for item in comparison.changed:
            lines.append(
                f"  {item.split}/{item.external_id}: "
                + ", ".join(
                    f"{name} {cell(item.published[name])} -> {cell(item.refined[name])}"
                    for name in comparison.compared
                )
            )
        self.stdout.write("\n".join(lines))
