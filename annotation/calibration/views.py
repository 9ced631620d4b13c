"""A judge version's calibration report: the page (with the loop's form), its CSV, and the form's
POST that builds the campaign (annotation.calibration.services). The page and the CSV read the
stored report (annotation.calibration.stored), computed again only when its inputs changed."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation.calibration import services
from annotation.calibration import stored as stored_reports
from annotation.calibration.report import CSV_COLUMNS, SHOWN, csv_rows
from annotation.errors import AnnotationError
from annotation.models import CalibrationReport
from config.charts import series_chart
from config.errors import shows_errors
from config.numbers import whole_number
from evaluation.models import JudgeVersion


def _version(judge_id: int, number: int) -> JudgeVersion:
    return get_object_or_404(
        JudgeVersion.objects.select_related("judge"), judge_id=judge_id, number=number
    )


def _reliability_chart(q: dict[str, Any]) -> Any:
    bins = q["calibration_bins"]
    return series_chart(
        # Short bin names: the bars are narrow (the table under the chart names the bins).
        [f"{b['low']:g}\N{EN DASH}{b['high']:g}" for b in bins],
        ["accuracy", "mean confidence"],
        [[b["accuracy"] for b in bins], [b["confidence"] for b in bins]],
        title=f"Reliability diagram: {q['text']}",
        kind="bar",
        x_title="the judge's confidence (bins (low, high])",
        y_title="share of items",
        maximum=1.0,
    )


def _confidence(value: float | None) -> str:
    return "\N{EN DASH}" if value is None else f"{value:.2f}"


def _trend_view(trend: dict[str, Any]) -> list[dict[str, Any]]:
    versions = trend["versions"]
    groups = [f"v{n}" for n in versions]
    out = []
    for row in trend["rows"]:
        cells = [row["by_version"].get(n) for n in versions]

        def values(name: str, cells: list[Any] = cells) -> list[float | None]:
            return [((c or {}).get(name) or {}).get("value") for c in cells]

        out.append(
            {
                **row,
                "cells": list(zip(groups, cells, strict=True)),
                "chart": series_chart(
                    groups,
                    ["accuracy", "ECE"],
                    [values("accuracy"), values("ece")],
                    title=f"Across versions: {row['task']}, {row['question']}",
                    kind="line",
                    x_title="judge version",
                    maximum=1.0,
                ),
            }
        )
    return out


def _page(
    request: HttpRequest,
    version: JudgeVersion,
    *,
    posted: dict[str, Any] | None = None,
    error: str = "",
    status: int = 200,
) -> HttpResponse:
    stored = stored_reports.report_request(version)
    report = trend = None
    if stored_reports.is_done(stored) and stored.data:
        report, stored_trend = stored_reports.report_and_trend(stored)
        trend = _trend_view(stored_trend)
        for task in report["tasks"]:
            for q in task["questions"]:
                q["chart"] = _reliability_chart(q) if q["calibration_bins"] else None
                # The table lists these alone, formatted here: thousands of rows cost the
                # template seconds.
                q["disagreeing"] = [
                    {**item, "confidence_shown": _confidence(item["confidence"])}
                    for item in q["items"]
                    if item["agrees"] is False
                ]
    try:
        kind = services.loop_kind(version)
        loop_error = ""
    except AnnotationError as exc:
        kind, loop_error = None, str(exc)
    context = {
        "judge": version.judge,
        "version": version,
        "stored": stored,
        "report": report,
        "trend": trend,
        "shown": SHOWN,
        "selections": services.SELECTIONS,
        "loop_kind": kind,
        "loop_error": loop_error,
        "posted": posted or {"selection": services.DISAGREEMENTS, "size": "20"},
        "error": error,
        "versions": version.judge.versions.order_by("number"),
        # The page is a judge's: the site's navigation shows it under Judges.
        "nav_judges": True,
    }
    template = "annotation/calibration.html"
    if getattr(request, "htmx", False):
        # The polling of a report being computed: the report's part alone.
        template += "#report"
    return render(request, template, context, status=status)


@require_GET
def calibration(request: HttpRequest, judge_id: int, number: int) -> HttpResponse:
    """The stored report while the judgments and labels it read are unchanged; else computed
    again (by a worker for a large judge, while the page shows progress and polls)."""
    return _page(request, _version(judge_id, number))


def _lines(rows: Iterator[tuple[Any, ...]]) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    for row in [CSV_COLUMNS, *rows]:
        writer.writerow(["" if v is None else v for v in row])
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()


def _text(message: str, status: int) -> HttpResponse:
    return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")


@require_GET
def calibration_csv(request: HttpRequest, judge_id: int, number: int) -> HttpResponseBase:
    """The stored report's figures; while it is computed, 202 and a message (the request only
    queued it)."""
    version = _version(judge_id, number)
    stored = stored_reports.report_request(version)
    if stored.status == CalibrationReport.Status.FAILED:
        return _text(f"the report failed: {stored.error}", 500)
    if not stored_reports.is_done(stored) or not stored.data:
        return _text("The report is being computed; download it when the page shows it.", 202)
    rows = csv_rows(*stored_reports.report_and_trend(stored))
    response = StreamingHttpResponse(_lines(rows), content_type="text/csv; charset=utf-8")
    name = f"calibration-judge-{version.judge_id}-v{version.number}.csv"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


def _refused(request: HttpRequest, error: Exception, judge_id: int, number: int) -> HttpResponse:
    return _page(
        request,
        _version(judge_id, number),
        posted=request.POST.dict(),
        error=str(error),
        status=400,
    )


@require_POST
@shows_errors(_refused)
def calibration_campaign(request: HttpRequest, judge_id: int, number: int) -> HttpResponse:
    """The loop's form: a draft campaign of the chosen items, then its setup's members step.
    The items are chosen from the judgments and labels the current report read: while the
    report is computed again (they changed since), the form waits for it."""
    version = _version(judge_id, number)
    stored = stored_reports.report_request(version)
    if stored.status == CalibrationReport.Status.FAILED:
        raise AnnotationError(f"the report failed: {stored.error}", field="selection")
    if not stored_reports.is_done(stored):
        raise AnnotationError(
            "the judgments or labels changed since the report was made, and it is being "
            "computed again: build the campaign once the page shows it",
            field="selection",
        )
    data = request.POST
    size = whole_number(
        data.get("size"), name="size", least=1, most=services.MAX_ITEMS, label="the size"
    )
    if size is None:
        raise AnnotationError("give the number of items", field="size")
    per_item = whole_number(
        data.get("labels_per_item"), name="labels_per_item", least=1, label="labels per item"
    )
    campaign = services.calibration_campaign_create(
        version=version,
        selection=data.get("selection", ""),
        size=size,
        labels_per_item=per_item,
        task=data.get("task", "").strip(),
        name=data.get("name", ""),
        user=request.user,
    )
    messages.success(
        request,
        f"Campaign {campaign.name!r}: {campaign.items.count()} items. Add its annotators, then "
        "open it.",
    )
    return HttpResponseRedirect(reverse("annotation:setup-members", args=[campaign.pk]))
