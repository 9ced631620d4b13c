"""python manage.py export_benchmark NAME [--split S] [--format published|jsonl|hf]
[--gold refined|published] [--license ID] --out DIR"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from benchmarks.exports import FORMATS, ExportRefused, benchmark_export, benchmark_get_by_name
from benchmarks.hf import benchmark_hf_export
from benchmarks.kit.registry import get_suite
from benchmarks.models import Benchmark
from benchmarks.selectors import GOLD_VERSIONS, REFINED_GOLD, sample_counts_by_split
from config.hfcommand import empty_folder

HF_FORMAT = "hf"


def _folder(name: str) -> Path:
    out = Path(name)
    if out.exists() and not out.is_dir():
        raise CommandError(f"Nothing written. {out} is a file, not a folder")
    return out


class Command(BaseCommand):
    help = (
        "Write a benchmark in its suite's published format (the files its importer reads), "
        "each sample as its current revision (refinements applied once approved), with "
        "provenance.json naming each changed sample's revision, author, reviewer, date and "
        "verdict. --format jsonl writes every stored field as JSON Lines instead (each field as "
        "PostgreSQL's jsonb writes it: its key order, numbers in decimal notation), --format hf a "
        "Hugging Face dataset folder (Parquet files per split and a dataset card); --gold "
        "published writes every sample as imported, the refinements left out."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("name", help="The benchmark's name.")
        parser.add_argument("--split", help="Only this split (default: every split).")
        parser.add_argument(
            "--format", choices=(*FORMATS, HF_FORMAT), default="published", dest="fmt"
        )
        parser.add_argument(
            "--gold",
            choices=GOLD_VERSIONS,
            default=REFINED_GOLD,
            help="refined: each sample as its current revision (default); published: as imported.",
        )
        parser.add_argument(
            "--license",
            default="other",
            help="--format hf: the license id the dataset card declares (default: other).",
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
            if options["fmt"] == HF_FORMAT:
                self._hf(benchmark, options, bar)
                return
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
        out = _folder(options["out"])
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

    def _hf(self, benchmark: Benchmark, options: dict[str, Any], bar: Any) -> None:
        out = empty_folder(options["out"])
        export = benchmark_hf_export(
            benchmark=benchmark,
            folder=out,
            split=options["split"],
            gold=options["gold"],
            license=options["license"],
            progress=bar.update,
        )
        splits = ", ".join(f"{name} ({n})" for name, n in export.rows.items())
        self.stdout.write(
            self.style.SUCCESS(
                f"{export.benchmark} ({export.gold} gold): {sum(export.rows.values())} samples "
                f"in splits {splits}, {export.tools} tools, {export.dropped} dropped, "
                f"as a Hugging Face dataset under {out}"
            )
        )
        for name, written in export.renamed.items():
            self.stdout.write(f"split {name!r} is written as {written!r}")
