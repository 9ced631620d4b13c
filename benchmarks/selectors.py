"""Reads of the benchmarks app."""

from __future__ import annotations

from django.db.models import Count, QuerySet

from benchmarks.models import Benchmark, Sample, Tool


def benchmark_list() -> QuerySet[Benchmark]:
    return Benchmark.objects.annotate(
        tool_total=Count("tools", distinct=True), sample_total=Count("samples", distinct=True)
    ).order_by("name")


def tool_count(*, benchmark: Benchmark) -> int:
    return Tool.objects.filter(benchmark=benchmark).count()


def sample_counts_by_split(*, benchmark: Benchmark) -> dict[str, int]:
    rows = (
        Sample.objects.filter(benchmark=benchmark)
        .values("split")
        .annotate(n=Count("id"))
        .order_by("split")
    )
    return {row["split"]: row["n"] for row in rows}


def sample_list(
    *, benchmark: Benchmark | None = None, split: str | None = None
) -> QuerySet[Sample]:
    samples = Sample.objects.select_related("benchmark")
    if benchmark is not None:
        samples = samples.filter(benchmark=benchmark)
    if split:
        samples = samples.filter(split=split)
    return samples
