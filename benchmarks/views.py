"""HTML pages of the benchmarks app: the list, a benchmark with its splits, tools and samples, a
sample with its gold and revision history, and imports from the browser. One view serves the
full page or, for htmx, the partial it swaps in."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from django.conf import settings
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods
from django_htmx.middleware import HtmxDetails

from benchmarks import import_jobs, selectors
from benchmarks.exports import benchmark_export
from benchmarks.hf import benchmark_hf_export, hf_folder_name
from benchmarks.kit.base import UNSTORABLE
from benchmarks.kit.registry import get_suite, suite_names
from benchmarks.models import Benchmark
from benchmarks.selectors import (
    REFINED_GOLD,
    benchmark_list_with_counts,
    sample_counts_by_split_for,
)
from config.access import allows
from config.errors import ApplicationError, shows_errors
from config.hfdataset import folder_zip_response


@require_GET
class HtmxHttpRequest(HttpRequest):
    """A request as django-htmx's middleware leaves it (request.htmx)."""

    htmx: HtmxDetails


def home(request: HttpRequest) -> HttpResponse:
    if not allows(request.user, "benchmark-list"):
        # Annotators work in their campaigns; the benchmarks (and their gold) are not theirs.
        return redirect("annotation:campaign-list")
    benchmarks = list(benchmark_list_with_counts())
    splits = sample_counts_by_split_for(b.pk for b in benchmarks)
    rows = [(b, sorted(splits.get(b.pk, {}).items())) for b in benchmarks]
    context = {
        "rows": rows,
        "can_import": allows(request.user, "benchmarks:import", method="POST"),
    }
    return render(request, "benchmarks/home.html", context)


@require_GET
def benchmark_detail(request: HtmxHttpRequest, benchmark_id: int) -> HttpResponse:
    benchmark = selectors.benchmark_get(benchmark_id=benchmark_id, counts=False)
    splits = selectors.benchmark_splits(benchmark=benchmark)
    tools = list(selectors.tool_list(benchmark=benchmark))
    selectors.benchmark_count_splits(benchmark=benchmark, splits=splits, tools=len(tools))
    split = request.GET.get("split", "")
    if split not in {row["split"] for row in splits}:
        split = ""
    # What PostgreSQL cannot compare (NUL, lone surrogates) cannot be in a sample either.
    text = UNSTORABLE.sub("", request.GET.get("q", "")).strip()[:200]
    revised_only = request.GET.get("revised") == "1"
    page = selectors.sample_page(
        benchmark=benchmark,
        split=split,
        text=text,
        revised_only=revised_only,
        page=request.GET.get("page", 1),
    )
    filters = {"split": split, "q": text, "revised": "1" if revised_only else ""}
    query = "&".join(f"{k}={v}" for k, v in _encoded(filters).items() if v)
    context = {
        "benchmark": benchmark,
        "splits": splits,
        "tools": tools,
        "page": page,
        "rows": [(s, selectors.sample_query_text(s.input)) for s in page.object_list],
        "filters": filters,
        "filter_query": query,
        "can_admin": request.user.is_superuser,  # the admin is the operators'
        "can_export": allows(request.user, "benchmarks:benchmark-export"),
    }
    if request.htmx and request.GET.get("part") == "samples":
        return render(request, "benchmarks/benchmark_detail.html#samples", context)
    return render(request, "benchmarks/benchmark_detail.html", context)


def _encoded(values: dict[str, str]) -> dict[str, str]:
    return {key: quote(value) for key, value in values.items()}


@require_GET
def sample_detail(request: HttpRequest, benchmark_id: int, sample_id: int) -> HttpResponse:
    benchmark = selectors.benchmark_get(benchmark_id=benchmark_id, counts=False)
    sample = selectors.sample_get(benchmark=benchmark, sample_id=sample_id)
    given = sample.input if isinstance(sample.input, dict) else {}
    context = {
        "benchmark": benchmark,
        "sample": sample,
        "query": given.get("query"),
        "turns": [t for t in given.get("turns") or [] if isinstance(t, dict)],
        "gold": selectors.gold_outline(sample.reference),
        "tools": selectors.sample_tools(sample=sample),
        "history": selectors.sample_history(sample=sample),
        "metadata": sample.metadata,
    }
    return render(request, "benchmarks/sample_detail.html", context)


def _import_context(request: HttpRequest, **extra: Any) -> dict[str, Any]:
    suites = [
        {"name": name, "default": get_suite(name).default_benchmark} for name in suite_names()
    ]
    return {
        "suites": suites,
        "jobs": selectors.import_job_list(),
        "max_size": import_jobs.size_text(settings.BENCHMARK_UPLOAD_MAX_BYTES),
        "max_bytes": settings.BENCHMARK_UPLOAD_MAX_BYTES,
        "form": {"suite": "", "benchmark_name": "", "allow_known_tools": False},
        "can_import": allows(request.user, "benchmarks:import", method="POST"),
        **extra,
    }


def _import_redraw(request: HttpRequest, error: ApplicationError) -> HttpResponse:
    form = {
        "suite": request.POST.get("suite", ""),
        "benchmark_name": request.POST.get("benchmark_name", ""),
        "allow_known_tools": request.POST.get("allow_known_tools") == "on",
    }
    context = _import_context(request, form=form, error=error)
    return render(request, "benchmarks/import.html", context, status=error.status)


@require_http_methods(["GET", "POST"])
@shows_errors(redraw=_import_redraw)
def import_page(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return render(request, "benchmarks/import.html", _import_context(request))
    # Refused before the body is read, when the request says how large it is.
    import_jobs.upload_check_size(int(request.META.get("CONTENT_LENGTH") or 0))
    job = import_jobs.import_job_create(
        user=request.user,
        suite=request.POST.get("suite", ""),
        benchmark_name=request.POST.get("benchmark_name", ""),
        files=request.FILES.getlist("files"),
        allow_known_tools=request.POST.get("allow_known_tools") == "on",
    )
    return redirect("benchmarks:import-job", job.pk)


@require_GET
def import_job(request: HtmxHttpRequest, job_id: int) -> HttpResponse:
    job = selectors.import_job_get(job_id=job_id)
    context = {"job": job, "progress": selectors.import_job_panel(job)}
    if request.htmx and request.GET.get("part") == "progress":
        return render(request, "benchmarks/import_job.html#progress", context)
    return render(request, "benchmarks/import_job.html", context)


# --- export (refined benchmarks out) -------------------------------------------------------------


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
        "chosen_gold": request.GET.get("gold") or REFINED_GOLD,
        "error": error,
    }
    return render(request, "benchmarks/export.html", context, status=error.status if error else 200)


def _export_refused(request: HttpRequest, error: ApplicationError, pk: int) -> HttpResponse:
    return _export_page(request, get_object_or_404(Benchmark, pk=pk), error)


@require_GET
@shows_errors(_export_refused)
def benchmark_export_view(request: HttpRequest, pk: int) -> HttpResponse | StreamingHttpResponse:
    """The export page (split and format); with ?format= the zip of the export itself: the
    files the suite's importer reads and provenance.json (benchmarks.exports), or with
    format=hf a Hugging Face dataset folder (benchmarks.hf), streamed."""
    benchmark = get_object_or_404(Benchmark, pk=pk)
    fmt = request.GET.get("format")
    if not fmt:
        return _export_page(request, benchmark)
    gold = request.GET.get("gold") or REFINED_GOLD
    if fmt == "hf":
        # Checked before the response starts, so that a refusal is the page with its error.
        return folder_zip_response(
            lambda folder: benchmark_hf_export(
                benchmark=benchmark,
                folder=folder,
                split=request.GET.get("split") or None,
                gold=gold,
            ),
            hf_folder_name(benchmark, gold),
        )
    export = benchmark_export(
        benchmark=benchmark,
        split=request.GET.get("split") or None,
        fmt=fmt,
        gold=gold,
    )
    response = HttpResponse(export.zip_bytes(), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{export.zip_name}"'
    return response
