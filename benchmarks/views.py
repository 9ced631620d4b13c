"""HTML pages of the benchmarks app."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from benchmarks.selectors import benchmark_list_with_counts, sample_counts_by_split_for
from config.access import allows


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    if not allows(request.user, "benchmark-list"):
        # Annotators work in their campaigns; the benchmarks (and their gold) are not theirs.
        return redirect("annotation:campaign-list")
    benchmarks = list(benchmark_list_with_counts())
    splits = sample_counts_by_split_for(b.pk for b in benchmarks)
    rows = [(b, sorted(splits.get(b.pk, {}).items())) for b in benchmarks]
    return render(request, "benchmarks/home.html", {"rows": rows})
