"""The researchers' pages for what runs and judge jobs use: endpoints (create, edit, key,
connection check) and judges (define, read). They write through the services the admin and the
API use (endpoint_save, endpoint_check, judge_save), by way of the forms the admin uses too
(evaluation.forms), so no page writes differently. Who may open them: config.access."""

from __future__ import annotations

from django.contrib import messages
from django.db.models import Count, Max
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from benchmarks.kit.judging import templates
from config.access import allows
from evaluation.forms import EndpointForm, JudgeForm
from evaluation.models import Endpoint, Judge, JudgeJob
from evaluation.services import RunError, endpoint_check

# --- endpoints ----------------------------------------------------------------------------------


@require_GET
def endpoint_index(request: HttpRequest) -> HttpResponse:
    endpoints = Endpoint.objects.order_by("name")
    return render(
        request,
        "evaluation/endpoint_list.html",
        {
            "endpoints": endpoints,
            "can_add": allows(request.user, "evaluation:endpoint-new", method="POST"),
        },
    )


def _endpoint_page(
    request: HttpRequest, form: EndpointForm, endpoint: Endpoint | None, status: int = 200
) -> HttpResponse:
    can_change = endpoint is None or allows(
        request.user, "evaluation:endpoint-edit", method="POST", pk=endpoint.pk
    )
    if not can_change:  # read only: shown, not offered
        for field in form.fields.values():
            field.disabled = True
    context = {
        "form": form,
        "endpoint": endpoint,
        "can_change": can_change,
        "can_check": endpoint is not None
        and allows(request.user, "evaluation:endpoint-check", method="POST", pk=endpoint.pk),
        "judges": list(endpoint.judges.order_by("name")) if endpoint is not None else [],
    }
    return render(request, "evaluation/endpoint_form.html", context, status=status)


def _save(request: HttpRequest, form: EndpointForm, endpoint: Endpoint | None) -> HttpResponse:
    if form.is_valid():
        try:
            saved = form.save_endpoint()
        except RunError as exc:  # a change between the form's check and the save
            form.add_error(exc.field if exc.field in form.fields else None, str(exc))
        else:
            messages.success(request, f"Endpoint {saved.name} saved.")
            return redirect("evaluation:endpoint-edit", pk=saved.pk)
    return _endpoint_page(request, form, endpoint, status=400)


@require_http_methods(["GET", "POST"])
def endpoint_new(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        return _save(request, EndpointForm(request.POST, page=True), None)
    return _endpoint_page(request, EndpointForm(page=True), None)


@require_http_methods(["GET", "POST"])
def endpoint_edit(request: HttpRequest, pk: int) -> HttpResponse:
    endpoint = get_object_or_404(Endpoint, pk=pk)
    if request.method == "POST":
        return _save(request, EndpointForm(request.POST, instance=endpoint, page=True), endpoint)
    return _endpoint_page(request, EndpointForm(instance=endpoint, page=True), endpoint)


@require_POST
def endpoint_check_view(request: HttpRequest, pk: int) -> HttpResponse:
    """The connection check (GET /models with the stored key): its result in place for htmx,
    as a message on the endpoint's page otherwise."""
    endpoint = get_object_or_404(Endpoint, pk=pk)
    found = endpoint_check(endpoint)
    if request.htmx:
        return render(request, "evaluation/endpoint_form.html#check-result", {"check": found})
    {"success": messages.success, "warning": messages.warning}.get(found.level, messages.error)(
        request, found.message
    )
    return redirect("evaluation:endpoint-edit", pk=endpoint.pk)


# --- judges -------------------------------------------------------------------------------------


@require_GET
def judge_index(request: HttpRequest) -> HttpResponse:
    judges = (
        Judge.objects.select_related("endpoint")
        .annotate(latest_version=Max("versions__number"))
        .order_by("name")
    )
    return render(
        request,
        "evaluation/judge_list.html",
        {
            "judges": judges,
            "can_add": allows(request.user, "evaluation:judge-new", method="POST"),
        },
    )


@require_http_methods(["GET", "POST"])
def judge_new(request: HttpRequest) -> HttpResponse:
    """Define a judge (another template or endpoint is another judge here; the admin changes
    one, which makes its next version: judge_versions)."""
    form = JudgeForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        judge = form.save()
        messages.success(request, f"Judge {judge.name} defined.")
        return redirect("evaluation:judge-detail", pk=judge.pk)
    status = 400 if request.method == "POST" else 200
    return render(request, "evaluation/judge_form.html", {"form": form}, status=status)


@require_GET
def judge_detail(request: HttpRequest, pk: int) -> HttpResponse:
    judge = get_object_or_404(Judge.objects.select_related("endpoint"), pk=pk)
    # The same template under other judges: setups of one prompt side by side.
    same_template = (
        Judge.objects.filter(template=judge.template)
        .select_related("endpoint")
        .order_by("created_at", "pk")
    )
    # This judge's own pinned versions, newest first, with how many verdicts each gave.
    pinned = judge.versions.select_related("endpoint").annotate(verdicts=Count("judgments"))
    jobs = JudgeJob.objects.filter(judge=judge).select_related("run__benchmark")[:50]
    return render(
        request,
        "evaluation/judge_detail.html",
        {
            "judge": judge,
            "spec": templates().get(judge.template),
            "same_template": same_template,
            "pinned_versions": pinned.order_by("-number"),
            "jobs": jobs,
            "can_view_jobs": allows(request.user, "evaluation:job-detail"),
            # Each version's calibration against the humans (annotation.calibration's page).
            "can_view_calibration": allows(request.user, "annotation:calibration"),
            "can_view_endpoint": judge.endpoint is not None
            and allows(request.user, "evaluation:endpoint-edit", pk=judge.endpoint.pk),
        },
    )
