"""What the transcripts suite promises (benchmarks/kit/conformance.py): it has no tasks, so no
metric cases and no analyses; its exporter writes the demo's transcripts back as they came."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from benchmarks.kit.conformance import Conformance, Files, MetricCase


def _no_cases(task: str, files: Files) -> Iterator[MetricCase]:
    return iter(())


def round_trip(files: Files) -> list[Path]:
    return [files.demo / "transcripts" / "transcripts.jsonl"]


CONFORMANCE = Conformance(metric_cases=_no_cases, round_trip=round_trip)
