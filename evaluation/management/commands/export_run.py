"""python manage.py export_run RUN_ID --out DIR [--license ID]"""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from config.hfcommand import empty_folder
from evaluation.hf import RunExportRefused, run_hf_export
from evaluation.models import Prediction, Run


class Command(BaseCommand):
    help = (
        "Write a run's predictions, with their per-item scores, as a Hugging Face dataset "
        "folder: Parquet files per split under data/ and a dataset card (README.md) naming the "
        "run's benchmark, task, endpoint, model and settings. Publishing it is yours: "
        "huggingface-cli upload NAME DIR . --repo-type dataset."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("run", type=int, help="The run's id.")
        parser.add_argument("--out", required=True, help="Folder to write (new or empty).")
        parser.add_argument(
            "--license", default="other", help="The license id the card declares (default: other)."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        run = Run.objects.select_related("benchmark", "endpoint").filter(pk=options["run"]).first()
        if run is None:
            raise CommandError(f"Nothing written. No run {options['run']}")
        out = empty_folder(options["out"])
        bar = tqdm(
            desc="Writing",
            unit=" predictions",
            total=Prediction.objects.filter(run=run).count(),
            file=sys.stderr,
            disable=options["verbosity"] == 0,
        )
        try:
            export = run_hf_export(
                run=run, folder=out, license=options["license"], progress=bar.update
            )
        except RunExportRefused as exc:
            raise CommandError(f"Nothing written. {exc}") from None
        finally:
            bar.close()
        splits = ", ".join(f"{name} ({n})" for name, n in export.rows.items())
        self.stdout.write(
            self.style.SUCCESS(
                f"run {export.run}: {sum(export.rows.values())} predictions in splits {splits}, "
                f"{len(export.score_names)} score columns, as a Hugging Face dataset under {out}"
            )
        )
