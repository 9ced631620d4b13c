"""python manage.py export_labels CAMPAIGN_ID --out DIR [--license ID]"""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotation.agreement.hf import LabelExportRefused, labels_hf_export
from annotation.models import Campaign, Label
from config.hfcommand import empty_folder


class Command(BaseCommand):
    help = (
        "Write a campaign's current labels as a Hugging Face dataset folder: Parquet files "
        "under data/ (one row per item as one annotator labelled it) and a dataset card "
        "(README.md) naming the campaign, its kind and questions. Publishing it is yours: "
        "huggingface-cli upload NAME DIR . --repo-type dataset."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("campaign", type=int, help="The campaign's id.")
        parser.add_argument("--out", required=True, help="Folder to write (new or empty).")
        parser.add_argument(
            "--license", default="other", help="The license id the card declares (default: other)."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = (
            Campaign.objects.select_related("benchmark").filter(pk=options["campaign"]).first()
        )
        if campaign is None:
            raise CommandError(f"Nothing written. No campaign {options['campaign']}")
        out = empty_folder(options["out"])
        bar = tqdm(
            desc="Writing",
            unit=" labels",
            total=Label.objects.filter(campaign=campaign, is_current=True).count(),
            file=sys.stderr,
            disable=options["verbosity"] == 0,
        )
        try:
            export = labels_hf_export(
                campaign=campaign, folder=out, license=options["license"], progress=bar.update
            )
        except LabelExportRefused as exc:
            raise CommandError(f"Nothing written. {exc}") from None
        finally:
            bar.close()
        self.stdout.write(
            self.style.SUCCESS(
                f"campaign {export.campaign}: {export.labels} labels, "
                f"{len(export.questions)} questions, as a Hugging Face dataset under {out}"
            )
        )
