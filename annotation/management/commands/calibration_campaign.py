"""python manage.py calibration_campaign --judge NAME [--judge-version N] --selection
disagreements|least_sure --size N [--task TASK] [--name NAME] [--labels-per-item K]"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotation.calibration.services import SELECTIONS, calibration_campaign_create
from annotation.calibration.versions import version_named
from config.errors import ApplicationError


class Command(BaseCommand):
    help = (
        "Build a draft human campaign from a judge version's calibration report (the report "
        "page's form and the admin's build the same): the items where the judge and the human "
        "majority disagree, or where the judge is least sure, without the judge's verdicts. "
        "Add its annotators and open it (the campaign's setup pages, or the admin)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--judge", required=True, help="The judge's name.")
        parser.add_argument(
            "--judge-version", type=int, default=None, help="Its version number (latest)."
        )
        parser.add_argument("--selection", required=True, help=f"One of: {', '.join(SELECTIONS)}.")
        parser.add_argument("--size", type=int, required=True, help="At most this many items.")
        parser.add_argument("--task", default="", help="Only this task of the report.")
        parser.add_argument("--name", default="", help="The campaign's name.")
        parser.add_argument("--labels-per-item", type=int, default=None)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            version = version_named(options["judge"], options["judge_version"])
            campaign = calibration_campaign_create(
                version=version,
                selection=options["selection"],
                size=options["size"],
                task=options["task"],
                name=options["name"],
                labels_per_item=options["labels_per_item"],
            )
        except ApplicationError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"Campaign {campaign.pk} ({campaign.name!r}): {campaign.items.count()} items, a "
            "draft: add its annotators and open it."
        )
