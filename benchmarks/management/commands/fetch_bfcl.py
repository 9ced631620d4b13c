"""python manage.py fetch_bfcl [--dir DIR]: the pinned bfcl-eval wheel, for import_benchmark."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from benchmarks.suites.bfcl.wheel import (
    DEFAULT_DIR,
    PINNED_SHA256,
    PINNED_VERSION,
    WheelError,
    fetch_wheel,
)


class Command(BaseCommand):
    help = (
        f"Download the Berkeley Function Calling Leaderboard's wheel (bfcl-eval {PINNED_VERSION}) "
        "without its dependencies (pip download --no-deps: nothing is installed), check its "
        "sha256 against the pinned one, and print the path to give import_benchmark. A wheel "
        "already in the folder is checked, not downloaded again."
    )
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--dir",
            default=str(DEFAULT_DIR),
            help=f"Folder to download into (default: {DEFAULT_DIR}).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            wheel = fetch_wheel(Path(options["dir"]))
        except WheelError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"{wheel} (sha256 {PINNED_SHA256})")
        self.stdout.write(f"Import it with: python manage.py import_benchmark bfcl {wheel}")
