"""HTML pages of the benchmarks app."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET

from benchmarks.exports import benchmark_export
from benchmarks.models import Benchmark
from benchmarks.selectors import benchmark_list_with_counts, sample_counts_by_split_for
from benchmarks.suites.registry import get_suite
from config.access import allows
from config.errors import ApplicationError, shows_errors


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    if not allows(request.user, "benchmark-list"):
        # Annotators work in their campaigns; the benchmarks (and their gold) are not theirs.
        return redirect("annotation:campaign-list")
    benchmarks = list(benchmark_list_with_counts())
    splits = sample_counts_by_split_for(b.pk for b in benchmarks)
    rows = [(b, sorted(splits.get(b.pk, {}).items())) for b in benchmarks]
    can_export = allows(request.user, "benchmarks:benchmark-export")
    return render(request, "benchmarks/home.html", {"rows": rows, "can_export": can_export})


# --- export (issue 17: refined benchmarks out) ----------------------------------------------------


def _export_page(
    request: HttpRequest, benchmark: Benchmark, error: ApplicationError | None = None
) -> HttpResponse:
    suite = get_suite(benchmark.suite)
    splits = sample_counts_by_split_for([benchmark.pk]).get(benchmark.pk, {})
    refined = benchmark.samples.filter(revision__gt=0).count()
    context: dict[str, Any] = {
        "benchmark": benchmark,
        "splits": sorted(splits.items()),
        "total": sum(splits.values()),
        "refined": refined,
        "has_published": suite.exporter is not None,
        "not_carried": suite.exporter.cannot_carry if suite.exporter else "",
        "chosen_split": request.GET.get("split", ""),
        "chosen_format": request.GET.get("format") or ("published" if suite.exporter else "jsonl"),
        "error": error,
    }
    return render(request, "benchmarks/export.html", context, status=error.status if error else 200)


def _export_refused(request: HttpRequest, error: ApplicationError, pk: int) -> HttpResponse:
    return _export_page(request, get_object_or_404(Benchmark, pk=pk), error)


@require_GET
@shows_errors(_export_refused)
def benchmark_export_view(request: HttpRequest, pk: int) -> HttpResponse:
    """The export page (split and format); with ?format= the zip of the export itself: the
    files the suite's importer reads and provenance.json (benchmarks.exports)."""
    benchmark = get_object_or_404(Benchmark, pk=pk)
    fmt = request.GET.get("format")
    if not fmt:
        return _export_page(request, benchmark)
    export = benchmark_export(benchmark=benchmark, split=request.GET.get("split") or None, fmt=fmt)
    response = HttpResponse(export.zip_bytes(), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{export.zip_name}"'
    return response
