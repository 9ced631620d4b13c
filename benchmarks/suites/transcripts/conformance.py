"""What the transcripts suite promises (benchmarks/kit/conformance.py): it has no tasks, so no
metric cases and no analyses; it writes nothing back but the platform's own JSONL export."""

from __future__ import annotations

from collections.abc import Iterator

from benchmarks.kit.conformance import Conformance, Files, MetricCase


def _no_cases(task: str, files: Files) -> Iterator[MetricCase]:
    return iter(())


CONFORMANCE = Conformance(
    metric_cases=_no_cases,
    no_exporter="transcripts are logs, not a benchmark's published files: the platform's "
    "JSONL export of the samples keeps their messages as imported",
)
