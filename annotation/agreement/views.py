"""The agreement report's pages: the report with its tables and plots (filters swap it in
place with htmx, a report still computing shows its progress and polls), and its two CSVs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET

from annotation.agreement.data import available_raters
from annotation.agreement.exports import label_csv_lines, summary_csv_lines
from annotation.agreement.hf import labels_folder_name, labels_hf_export
from annotation.agreement.report import MAJORITY, MEAN
from annotation.agreement.sections import short_rater
from annotation.agreement.services import (
    params_from,
    params_shown,
    report_check,
    report_request,
)
from annotation.kinds import kind_of
from annotation.kinds.base import ReportSection
from annotation.models import AgreementReport, Campaign
from config.charts import confusion_matrix, heat_map, scatter_chart
from config.errors import shows_errors
from config.hfdataset import folder_zip_response


def query_of(params: dict[str, Any]) -> str:
    pairs = [("metric", m) for m in params["metrics"]] + [("judge", j) for j in params["judges"]]
    pairs += [("question", q) for q in params["questions"]]
    return urlencode(pairs)


def _agreement_page(
    request: HttpRequest,
    campaign: Campaign,
    *,
    params: dict[str, Any],
    available: dict[str, Any],
    report: AgreementReport | None = None,
    error: str = "",
) -> HttpResponse:
    context = {
        "campaign": campaign,
        "params": params,
        "query": query_of(params),
        "available": available,
        "questions": list(campaign.questions.all()),
        "report": report,
        "error": error,
        "view": (
            report_view(report.data, kind_of(campaign).report_sections)
            if report and report.data and _done(report)
            else None
        ),
    }
    template = "annotation/agreement.html"
    if request.htmx:
        template += "#report"
    return render(request, template, context)


def _agreement_refused(request: HttpRequest, error: Exception, campaign_id: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    return _agreement_page(
        request,
        campaign,
        params=params_shown(request.GET),
        available=available_raters(campaign),
        error=str(error),
    )


@require_GET
@shows_errors(_agreement_refused)
def agreement(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    available = available_raters(campaign)
    params = params_from(request.GET)
    report = report_request(campaign, params, available=available)
    return _agreement_page(request, campaign, params=params, available=available, report=report)


def _done(report: AgreementReport) -> bool:
    return report.status == AgreementReport.Status.DONE


@require_GET
@shows_errors()
def agreement_summary_csv(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    report = report_request(campaign, params_from(request.GET))
    if report.status == AgreementReport.Status.FAILED:
        return _text(f"the report failed: {report.error}", 500)
    if not _done(report):
        # A large report is a worker's job: this request only queued it.
        return _text("The report is being computed; download it when the page shows it.", 202)
    return _csv(
        f"agreement-{campaign.pk}-summary.csv",
        summary_csv_lines(report.data),
    )


@require_GET
@shows_errors()
def agreement_labels_csv(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    params = params_from(request.GET)
    report_check(campaign, params)
    return _csv(f"agreement-{campaign.pk}-labels.csv", label_csv_lines(campaign, params))


@require_GET
@shows_errors()
def agreement_labels_hf(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """The campaign's labels as a Hugging Face dataset folder (annotation.agreement.hf) in a
    zip, streamed as it is read."""
    campaign = get_object_or_404(Campaign.objects.select_related("benchmark"), pk=campaign_id)
    return folder_zip_response(
        lambda folder: labels_hf_export(campaign=campaign, folder=folder),
        labels_folder_name(campaign),
    )


def _text(message: str, status: int) -> HttpResponse:
    return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")


def _csv(filename: str, lines: Any) -> StreamingHttpResponse:
    response = StreamingHttpResponse(lines, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


# --- what the page shows ------------------------------------------------------------------------


def report_view(data: dict[str, Any], sections: Sequence[ReportSection]) -> dict[str, Any]:
    """The report's plots (server-side SVG) next to its numbers, per question and section."""
    questions = []
    turned = {
        f"metric:{name}" for name, how in (data.get("metrics") or {}).items() if how["sign_turned"]
    }
    for q in data["questions"]:
        entry = {"q": q, "charts": []}
        for rater, points in (q.get("scatter") or {}).items():
            if points["x"]:
                # A lower-is-better metric is plotted as compared: its values negated.
                axis = (
                    f"\N{MINUS SIGN}{short_rater(rater)}" if rater in turned else short_rater(rater)
                )
                entry["charts"].append(
                    scatter_chart(
                        points["x"],
                        points["y"],
                        title=f"{short_rater(rater)} against the mean human answer",
                        x_label=axis,
                        y_label="mean human answer",
                        jitter=0.02,
                    )
                )
        confusion = q["confusion"]
        if confusion["labels"] and any(any(row) for row in confusion["humans"]):
            entry["charts"].append(
                confusion_matrix(
                    confusion["labels"],
                    confusion["labels"],
                    confusion["humans"],
                    title="Annotator against annotator",
                    row_title="one annotator",
                    col_title="another",
                )
            )
        for rater, counts in confusion["automatic"].items():
            if any(any(row) for row in counts):
                entry["charts"].append(
                    confusion_matrix(
                        confusion["labels"],
                        confusion["labels"],
                        counts,
                        title=f"{short_rater(rater)} against the human majority",
                        row_title=short_rater(rater),
                        col_title=MAJORITY,
                    )
                )
        heat = q["heatmap"]
        if len(heat["raters"]) >= 2:
            entry["charts"].append(
                heat_map(
                    [short_rater(r) for r in heat["raters"]],
                    heat["values"],
                    title=f"{heat['statistic'].replace('_', ' ')} between raters",
                )
            )
        questions.append(entry)
    view: dict[str, Any] = {"questions": questions, "mean": MEAN, "majority": MAJORITY}
    view["sections"] = [
        {
            "template": section.template,
            "data": data[section.name],
            **section.view(data[section.name]),
        }
        for section in sections
        if data.get(section.name)
    ]
    return view


def agreement_url(campaign: Campaign, params: dict[str, Any]) -> str:
    query = query_of(params)
    url = reverse("annotation:agreement", args=[campaign.pk])
    return f"{url}?{query}" if query else url
