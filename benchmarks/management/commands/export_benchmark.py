"""python manage.py export_benchmark NAME [--split S] [--format published|jsonl] --out DIR"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from benchmarks.exports import FORMATS, ExportRefused, benchmark_export, benchmark_get_by_name
from benchmarks.kit.registry import get_suite
from benchmarks.selectors import GOLD_VERSIONS, REFINED_GOLD, sample_counts_by_split


class Command(BaseCommand):
    help = (
        "Write a benchmark in its suite's published format (the files its importer reads), "
        "each sample as its current revision (refinements applied once approved), with "
        "provenance.json naming each changed sample's revision, author, reviewer, date and "
        "verdict. --format jsonl writes every stored field as JSON Lines instead; --gold "
        "published writes every sample as imported, the refinements left out."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("name", help="The benchmark's name.")
        parser.add_argument("--split", help="Only this split (default: every split).")
        parser.add_argument("--format", choices=FORMATS, default="published", dest="fmt")
        parser.add_argument(
            "--gold",
            choices=GOLD_VERSIONS,
            default=REFINED_GOLD,
            help="refined: each sample as its current revision (default); published: as imported.",
        )
        parser.add_argument("--out", required=True, help="Folder to write (made if missing).")

    def handle(self, *args: Any, **options: Any) -> None:
        quiet = options["verbosity"] == 0
        bar = tqdm(desc="Reading", unit=" samples", file=sys.stderr, disable=quiet)
        try:
            benchmark = benchmark_get_by_name(options["name"])
            counts = sample_counts_by_split(benchmark=benchmark)
            bar.total = (
                counts.get(options["split"], 0) if options["split"] else sum(counts.values())
            )
            export = benchmark_export(
                benchmark=benchmark,
                split=options["split"],
                fmt=options["fmt"],
                gold=options["gold"],
                progress=bar.update,
            )
        except ExportRefused as exc:
            raise CommandError(f"Nothing written. {exc}") from None
        finally:
            bar.close()
        out = Path(options["out"])
        if out.exists() and not out.is_dir():
            raise CommandError(f"Nothing written. {out} is a file, not a folder")
        written = export.write_to(out)
        self.stdout.write(
            self.style.SUCCESS(
                f"{export.benchmark}: {export.samples} samples ({export.changed} refined, "
                f"{export.dropped} dropped) in {len(written)} files under {out}"
            )
        )
        if export.differs:
            self.stdout.write(
                self.style.WARNING(
                    f"{export.differs} samples read back otherwise than stored (the format "
                    "cannot carry all of them): see differs_when_read_back in provenance.json"
                )
            )
        exporter = get_suite(export.suite).exporter
        if export.fmt == "published" and exporter is not None:
            paths = " ".join(shlex.quote(str(p)) for p in exporter.paths_to_import(out))
            name = shlex.quote(f"{export.benchmark} (exported)")
            self.stdout.write(
                "Read back as a benchmark of its own with: ./dev python manage.py "
                f"import_benchmark {export.suite} {paths} --benchmark {name}"
            )
