"""The papers' analyses of runs as pages and CSVs: one run (`/runs/<id>/analyses/`) or several
runs of one task (`/runs/analyses/?run=1&run=2`), a section per analysis with a server-side SVG
chart and its table, and a CSV per analysis. Every number comes from evaluation.analyses, the
same stored result the `run_analysis` command prints."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET

from benchmarks.kit.analyses import Analysis, AnalysisMetric
from config.charts import series_chart
from config.csvexport import csv_response
from config.errors import shows_errors
from evaluation.analyses import (
    AnalysisError,
    Series,
    compare,
    declared,
    find_analysis,
    permissions_needed,
    readable_by,
    run_analyses_get,
    run_label,
    runs_to_compare,
)
from evaluation.models import Run, RunAnalysis


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _chart(
    analysis: Analysis,
    groups: Sequence[Any],
    series: Sequence[str],
    values: Sequence[Sequence[Any]],
    metric: AnalysisMetric,
    title: str,
) -> Any:
    return series_chart(
        [_text(group) for group in groups],
        series,
        values,
        title=title,
        kind=analysis.chart,
        x_title=analysis.axis,
        y_title=metric.label,
        maximum=100.0 if metric.percent else None,
    )


def _single_section(run: Run, analysis: Analysis, found: dict[str, Any]) -> dict[str, Any]:
    rows = found.get("rows", [])
    groups = [row["group"] for row in rows]
    # One run: a series per metric that shares the first one's scale.
    drawn = [m for m in analysis.metrics if m.percent == analysis.metrics[0].percent]
    chart = series_chart(
        [_text(group) for group in groups],
        [m.label for m in drawn],
        [[row.get(m.name) for row in rows] for m in drawn],
        title=f"{analysis.title} · run #{run.pk}",
        kind=analysis.chart,
        x_title=analysis.axis,
        # several metrics share the axis: it says their unit, the legend which is which
        y_title=drawn[0].label if len(drawn) == 1 else ("%" if drawn[0].percent else ""),
        maximum=100.0 if drawn[0].percent else None,
    )
    return {
        "analysis": analysis,
        "charts": [chart] if rows else [],
        "columns": [m.label for m in analysis.metrics],
        "rows": [
            {
                "group": row["group"],
                "n": row["n"],
                "cells": [row.get(m.name) for m in analysis.metrics],
            }
            for row in rows
        ],
        # the items the groups partition; facets (partition=False) share items: no total
        "total": sum(row["n"] for row in rows) if analysis.partition else None,
        "csv": reverse("evaluation:run-analysis-csv", args=[run.pk, analysis.name]),
    }


def _withheld(user: Any, analyses: Sequence[Analysis]) -> list[dict[str, Any]]:
    """The analyses `user` may not read (what their inputs need), and what they would need."""
    return [
        {"analysis": analysis, "permissions": permissions_needed(analysis)}
        for analysis in analyses
        if not readable_by(user, analysis)
    ]


def _readable(user: Any, run: Run, name: str) -> Analysis:
    """The run's analysis `name`, for a user who may read it (403 for one who may not)."""
    analysis = find_analysis(run, name)
    if not readable_by(user, analysis):
        raise PermissionDenied(
            f"the analysis {name} draws on what needs {', '.join(permissions_needed(analysis))}"
        )
    return analysis


def _waiting(stored: RunAnalysis) -> bool:
    return stored.status in (RunAnalysis.Status.PENDING, RunAnalysis.Status.RUNNING)


@require_GET
@shows_errors()
def run_analyses(request: HttpRequest, pk: int) -> HttpResponse:
    """A run's analyses: computed at once for a small run, else by a worker while the page
    shows its progress (htmx polls the section)."""
    run = get_object_or_404(Run.objects.select_related("benchmark", "endpoint"), pk=pk)
    analyses = declared(run)
    stored = run_analyses_get(run) if analyses else None
    sections = []
    if stored is not None and stored.status == RunAnalysis.Status.DONE and stored.data:
        found = stored.data["analyses"]
        sections = [
            _single_section(run, a, found[a.name])
            for a in analyses
            if a.name in found and readable_by(request.user, a)
        ]
    context = {
        "withheld": _withheld(request.user, analyses),
        "run": run,
        "label": run_label(run),
        "stored": stored,
        "waiting": stored is not None and _waiting(stored),
        "sections": sections,
        "declared": analyses,
        "poll_url": f"{reverse('evaluation:run-analyses', args=[run.pk])}?part=analyses",
        "api_url": reverse("run-analyses", args=[run.pk]),
    }
    if request.htmx and request.GET.get("part") == "analyses":
        return render(request, "evaluation/run_analyses.html#analyses", context)
    return render(request, "evaluation/run_analyses.html", context)


def _ready(run: Run) -> RunAnalysis:
    stored = run_analyses_get(run)
    if stored.status != RunAnalysis.Status.DONE or not stored.data:
        state = stored.error or stored.get_status_display().lower()
        raise AnalysisError(
            f"the analyses of run {run.pk} are not ready ({state}); its analyses page shows "
            "their progress",
            field="run",
            status=409,
        )
    return stored


@require_GET
@shows_errors()
def run_analysis_csv(request: HttpRequest, pk: int, name: str) -> StreamingHttpResponse:
    """One analysis of a run: a row per group (run, the grouping, n, each metric)."""
    run = get_object_or_404(Run.objects.select_related("benchmark"), pk=pk)
    analysis = _readable(request.user, run, name)
    rows = _ready(run).data["analyses"].get(name, {}).get("rows", [])  # type: ignore[index]
    return csv_response(
        f"run-{run.pk}-{name}.csv",
        ["run", analysis.by, "n", *(m.name for m in analysis.metrics)],
        (
            [run.pk, row["group"], row["n"], *(row.get(m.name) for m in analysis.metrics)]
            for row in rows
        ),
    )


def _compare_section(
    runs: Sequence[Run], analysis: Analysis, series: list[Series], query: str
) -> dict[str, Any]:
    # Every series' rows are in the analysis's order (natural, or its group_order): so is
    # their union.
    groups = sorted({row["group"] for entry in series for row in entry.rows}, key=analysis.sort_key)
    by_group = [{row["group"]: row for row in entry.rows} for entry in series]
    labels = [entry.label for entry in series]
    charts = [
        _chart(
            analysis,
            groups,
            labels,
            [[rows.get(g, {}).get(metric.name) for g in groups] for rows in by_group],
            metric,
            f"{analysis.title} · {metric.label}",
        )
        for metric in analysis.metrics
    ]
    table = [
        {
            "group": group,
            "cells": [
                (
                    rows.get(group, {}).get("n"),
                    [rows.get(group, {}).get(m.name) for m in analysis.metrics],
                )
                for rows in by_group
            ],
        }
        for group in groups
    ]
    return {
        "analysis": analysis,
        "charts": charts if groups else [],
        "series": series,
        "table": table,
        "csv": f"{reverse('evaluation:runs-analysis-csv', args=[analysis.name])}?{query}",
    }


@require_GET
@shows_errors()
def runs_analyses(request: HttpRequest) -> HttpResponse:
    """The analyses of several runs of one task (?run=ID, repeatable), one line or bar per run
    (or per model, for analyses that pool a model's runs)."""
    runs = runs_to_compare(request.GET.getlist("run"))
    query = urlencode([("run", run.pk) for run in runs])
    stored = {run.pk: run_analyses_get(run) for run in runs}
    waiting = [run for run in runs if _waiting(stored[run.pk])]
    failed = [run for run in runs if stored[run.pk].status == RunAnalysis.Status.FAILED]
    sections = []
    if not waiting and not failed and declared(runs[0]):
        found = compare(runs)
        sections = [
            _compare_section(runs, analysis, found[analysis.name], query)
            for analysis in declared(runs[0])
            if readable_by(request.user, analysis)
        ]
    context = {
        "withheld": _withheld(request.user, declared(runs[0])),
        "runs": runs,
        "first": runs[0],
        "labels": [(run, run_label(run)) for run in runs],
        "stored": stored,
        "waiting": waiting,
        "failed": failed,
        "done": sum(1 for s in stored.values() if s.status == RunAnalysis.Status.DONE),
        "sections": sections,
        "declared": declared(runs[0]),
        "poll_url": f"{reverse('evaluation:runs-analyses')}?{query}&part=analyses",
        "inline_items": int(getattr(settings, "ANALYSES_INLINE_ITEMS", 5000)),
    }
    if request.htmx and request.GET.get("part") == "analyses":
        return render(request, "evaluation/runs_analyses.html#analyses", context)
    return render(request, "evaluation/runs_analyses.html", context)


@require_GET
@shows_errors()
def runs_analysis_csv(request: HttpRequest, name: str) -> StreamingHttpResponse:
    """One analysis across several runs: a row per series and group (the series' label, the
    runs it stands for, the grouping, n, each metric)."""
    runs = runs_to_compare(request.GET.getlist("run"))
    analysis = _readable(request.user, runs[0], name)
    for run in runs:
        _ready(run)
    series = compare(runs)[name]
    return csv_response(
        f"runs-{'-'.join(str(run.pk) for run in runs)}-{name}.csv",
        ["series", "runs", analysis.by, "n", *(m.name for m in analysis.metrics)],
        (
            [
                entry.label,
                " ".join(str(pk) for pk in entry.runs),
                row["group"],
                row["n"],
                *(row.get(m.name) for m in analysis.metrics),
            ]
            for entry in series
            for row in entry.rows
        ),
    )
