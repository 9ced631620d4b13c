"""Admin for endpoints, runs (launched from here with a form), predictions and the cache."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from benchmarks.admin import pretty_json
from config.errors import ApplicationError
from config.queue import QueueUnavailable
from evaluation import lifecycle
from evaluation.forms import EndpointForm, JudgeForm, LaunchJudgeJobForm, LaunchRunForm
from evaluation.judging import JUDGE_JOBS, JudgeError, solvability_mark
from evaluation.models import (
    ApiResponse,
    Endpoint,
    Judge,
    JudgeJob,
    JudgeVersion,
    Judgment,
    Prediction,
    RealApi,
    ResponseCache,
    Run,
    ServedCall,
    VirtualApi,
)
from evaluation.selectors import ordered_metrics
from evaluation.services import RUNS, RunError, endpoint_check


@admin.register(Endpoint)
class EndpointAdmin(admin.ModelAdmin):
    form = EndpointForm
    list_display = (
        "name",
        "model",
        "base_url",
        "style_code",
        "status_badge",
        "max_concurrency",
        "requests_per_minute",
        "is_local",
    )
    list_filter = ("style", "status", "is_local")
    search_fields = ("name", "model", "base_url")
    readonly_fields = ("key_status", "is_local", "status", "status_detail", "status_changed_at")
    actions = ("check_connection",)
    fieldsets = (
        (None, {"fields": ("name", "base_url", "model", "style")}),
        (
            "Key",
            {
                "fields": ("key_status", "api_key", "clear_api_key", "api_key_env"),
                "description": "Enter the key here (stored encrypted), or name a variable the "
                "operator lists in ENDPOINT_KEY_VARIABLES; neither for a server without keys.",
            },
        ),
        (
            "Requests",
            {
                "fields": (
                    "default_params",
                    "max_concurrency",
                    "requests_per_minute",
                    "timeout_seconds",
                    "max_attempts",
                    "max_claims",
                )
            },
        ),
        (
            "Prices per million tokens",
            {
                "fields": ("price_in", "price_out", "price_cached"),
                "description": "Optional: with an input and an output price, runs and judge "
                "jobs show their cost, and a budget is a cost (else it counts tokens).",
            },
        ),
        ("State", {"fields": ("is_local", "status", "status_detail", "status_changed_at")}),
    )

    def save_model(self, request: HttpRequest, obj: Endpoint, form: Any, change: bool) -> None:
        # The one path for endpoint writes (the pages, the API and add_endpoint take it too).
        try:
            form.save_endpoint(obj)
        except RunError as exc:
            raise ValidationError(str(exc)) from None

    @admin.display(description="stored key")
    def key_status(self, obj: Endpoint) -> str:
        return obj.key_display

    @admin.display(description="style", ordering="style")
    def style_code(self, obj: Endpoint) -> str:
        return obj.style

    @admin.display(description="status", ordering="status")
    def status_badge(self, obj: Endpoint) -> SafeString:
        return format_html(
            '<span class="status status-{}" title="{}">{}</span>',
            obj.status,
            obj.status_detail,
            obj.get_status_display(),
        )

    @admin.action(description="Check the connection (GET /models)", permissions=["change"])
    def check_connection(self, request: HttpRequest, queryset: QuerySet[Endpoint]) -> None:
        levels = {"success": messages.SUCCESS, "warning": messages.WARNING}
        for endpoint in queryset:
            found = endpoint_check(endpoint)
            self.message_user(request, found.message, levels.get(found.level, messages.ERROR))

    class Media:
        css = {"all": ("css/admin-extra.css",)}


def launch_view(
    model_admin: admin.ModelAdmin,
    request: HttpRequest,
    form: forms.Form,
    launch: Any,
    *,
    errors: tuple[type[Exception], ...],
    title: str,
    detail: str,
    intro: str = "",
) -> HttpResponse:
    """An admin add page that launches work: the form, then the service (its domain errors
    shown on the form), then the new object's live page. It replaces the admin's own add view,
    so it asks the add permission itself, as that view would."""
    if not model_admin.has_add_permission(request):
        raise PermissionDenied("launching needs the add permission")
    if request.method == "POST" and form.is_valid():
        try:
            created = launch(form.cleaned_data)
        except (*errors, QueueUnavailable) as exc:
            # Beside the field the refusal names (on the form when it names none of its fields).
            named = getattr(exc, "field", "")
            form.add_error(named if named in form.fields else None, str(exc))
        else:
            model_admin.message_user(request, f"{created} launched.", messages.SUCCESS)
            return HttpResponseRedirect(reverse(detail, args=[created.pk]))
    context = {
        **model_admin.admin_site.each_context(request),
        "title": title,
        "form": form,
        "opts": model_admin.model._meta,
        "media": model_admin.media + form.media,
        "intro": intro,
    }
    return render(request, "admin/evaluation/run/launch.html", context)


class WorkAdminMixin:
    """What the admins of runs and judge jobs share, over their lifecycle.WorkKind: progress
    counted in the changelist's one query, cancel and resume actions, metrics shown as JSON,
    deletion for superusers only."""

    work_kind: lifecycle.WorkKind
    message_user: Any

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        items = self.work_kind.items
        settled = ~Q(**{f"{items}__status__in": lifecycle.UNSETTLED})
        failed = Q(**{f"{items}__status": lifecycle.FAILED})
        return (
            super()  # type: ignore[misc]
            .get_queryset(request)
            .annotate(
                n_total=Count(items),
                n_settled=Count(items, filter=settled),
                n_failed=Count(items, filter=failed),
            )
        )

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser)

    @admin.display(description="progress")
    def progress(self, obj: Any) -> SafeString:
        return format_html(
            '<progress max="{}" value="{}"></progress> {}/{}{}',
            obj.n_total or 1,
            obj.n_settled,
            obj.n_settled,
            obj.n_total,
            f", {obj.n_failed} failed" if obj.n_failed else "",
        )

    @admin.display(description="metrics")
    def metrics_pretty(self, obj: Any) -> SafeString:
        return pretty_json(obj.metrics)

    @admin.action(description="Cancel the selected %(verbose_name_plural)s", permissions=["change"])
    def cancel_selected(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        cancelled = sum(lifecycle.cancel(self.work_kind, parent) for parent in queryset)
        self.message_user(request, f"{cancelled} {self.work_kind.words.noun}(s) cancelled.")

    @admin.action(
        description="Resume the selected %(verbose_name_plural)s (pending items)",
        permissions=["change"],
    )
    def resume_selected(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        words = self.work_kind.words
        for parent in queryset:
            name = f"{words.noun.capitalize()} {parent.pk}"
            try:
                count = lifecycle.resume(self.work_kind, parent)
            except ApplicationError as exc:
                self.message_user(request, f"{name}: {exc}", messages.ERROR)
            else:
                self.message_user(request, f"{name}: {count} {words.item}(s) queued.")


@admin.register(Run)
class RunAdmin(WorkAdminMixin, admin.ModelAdmin):
    class Media:
        css = {"all": ("css/admin-extra.css",)}

    list_display = (
        "__str__",
        "benchmark",
        "task",
        "split",
        "model_name",
        "status",
        "progress",
        "headline",
        "created_at",
    )
    list_filter = ("status", "source", "benchmark", "task")
    list_select_related = ("benchmark",)
    search_fields = ("name", "model_name", "task")
    work_kind = RUNS
    actions = ("cancel_runs", "resume_runs")
    # The actions' names as they have always been posted.
    cancel_runs = WorkAdminMixin.cancel_selected
    resume_runs = WorkAdminMixin.resume_selected
    readonly_fields = (
        "benchmark",
        "task",
        "split",
        "endpoint",
        "source",
        "model_name",
        "style",
        "shots",
        "item_limit",
        "params_pretty",
        "options_pretty",
        "seed",
        "status",
        "error",
        "metrics_pretty",
        "intervals_pretty",
        "created_by",
        "created_at",
        "finished_at",
        "page_link",
    )
    fields = ("name", *readonly_fields)

    @admin.display(description="headline metric")
    def headline(self, obj: Run) -> str:
        metrics = ordered_metrics(obj)
        if not metrics:
            return "—"
        name, value = metrics[0]
        return f"{name} {value}"

    @admin.display(description="page")
    def page_link(self, obj: Run) -> SafeString:
        url = reverse("evaluation:run-detail", args=[obj.pk])
        return format_html('<a href="{}">Live progress and predictions</a>', url)

    @admin.display(description="parameters")
    def params_pretty(self, obj: Run) -> SafeString:
        return pretty_json(obj.params)

    @admin.display(description="options")
    def options_pretty(self, obj: Run) -> SafeString:
        return pretty_json(obj.launch_options)

    @admin.display(description="95% intervals")
    def intervals_pretty(self, obj: Run) -> SafeString:
        return pretty_json(obj.intervals)

    def add_view(
        self, request: HttpRequest, form_url: str = "", extra_context: dict | None = None
    ) -> HttpResponse:
        """Launching is the only way to add a run: a form, then run_launch (the form's, which
        the page at /runs/new/ uses too)."""
        form = LaunchRunForm(request.POST or None)
        return launch_view(
            self,
            request,
            form,
            lambda data: form.launch(request.user),
            errors=(RunError,),
            title="Launch a run",
            detail="evaluation:run-detail",
        )


@admin.register(Prediction)
class PredictionAdmin(admin.ModelAdmin):
    list_display = ("run", "position", "sample", "status", "attempts", "cached", "latency_ms")
    list_filter = ("status", "cached")
    list_select_related = ("run", "sample")
    search_fields = ("sample__external_id", "output", "error")
    raw_id_fields = ("run", "sample")
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(ResponseCache)
class ResponseCacheAdmin(admin.ModelAdmin):
    list_display = ("key", "model", "base_url", "created_at")
    search_fields = ("key", "model", "base_url")
    show_full_result_count = False
    fields = ("key", "model", "base_url", "request_pretty", "response_pretty", "created_at")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="request")
    def request_pretty(self, obj: ResponseCache) -> SafeString:
        return pretty_json(obj.request)

    @admin.display(description="response")
    def response_pretty(self, obj: ResponseCache) -> SafeString:
        return pretty_json(obj.response)


# --- judges -------------------------------------------------------------------------------------


@admin.register(Judge)
class JudgeAdmin(admin.ModelAdmin):
    form = JudgeForm
    list_display = ("name", "template", "kind", "answer_mode", "endpoint", "created_at")
    list_filter = ("kind", "template", "answer_mode")
    search_fields = ("name", "template")
    readonly_fields = ("kind", "versions")

    @admin.display(description="versions")
    def versions(self, obj: Judge) -> SafeString:
        """Its pinned versions, newest first (judge_save makes them; they never change)."""
        rows = format_html_join(
            "",
            "<li>v{} · {} · {} · <code>{}</code> · {}</li>",
            (
                (v.number, v.get_mode_display(), v.model or "—", v.digest[:12], v.created_at)
                for v in JudgeVersion.objects.filter(judge=obj).order_by("-number")
            ),
        )
        return format_html("<ul>{}</ul>", rows) if rows else format_html("none yet")

    def save_model(self, request: HttpRequest, obj: Judge, form: Any, change: bool) -> None:
        # The one path for judge writes (the judge pages take it too).
        form.save(commit=True)


@admin.register(JudgeJob)
class JudgeJobAdmin(WorkAdminMixin, admin.ModelAdmin):
    class Media:
        css = {"all": ("css/admin-extra.css",)}

    list_display = (
        "__str__",
        "judge",
        "run",
        "against",
        "repeats",
        "status",
        "progress",
        "created_at",
    )
    list_filter = ("status", "source", "judge")
    list_select_related = ("judge", "run", "against")
    work_kind = JUDGE_JOBS
    actions = ("cancel_jobs", "resume_jobs", "mark_solvable")
    cancel_jobs = WorkAdminMixin.cancel_selected
    resume_jobs = WorkAdminMixin.resume_selected
    readonly_fields = (
        "judge",
        "version",
        "run",
        "against",
        "repeats",
        "source",
        "status",
        "error",
        "metrics_pretty",
        "created_by",
        "created_at",
        "finished_at",
        "page_link",
    )
    fields = readonly_fields

    @admin.display(description="page")
    def page_link(self, obj: JudgeJob) -> SafeString:
        url = reverse("evaluation:job-detail", args=[obj.pk])
        return format_html('<a href="{}">Live progress and judgments</a>', url)

    def has_change_samples_permission(self, request: HttpRequest) -> bool:
        # The verdicts go into the samples' metadata.
        return bool(request.user.has_perm("benchmarks.change_sample"))

    @admin.action(
        description="Mark the samples solvable by majority of the selected jobs",
        permissions=["change_samples"],
    )
    def mark_solvable(self, request: HttpRequest, queryset: QuerySet[JudgeJob]) -> None:
        try:
            marked = solvability_mark(jobs=list(queryset))
        except JudgeError as exc:
            self.message_user(request, str(exc), messages.ERROR)
            return
        self.message_user(
            request,
            f"{marked['solvable']} sample(s) solvable, {marked['unsolvable']} not, "
            f"{marked['undecided']} without a vote",
        )

    def add_view(
        self, request: HttpRequest, form_url: str = "", extra_context: dict | None = None
    ) -> HttpResponse:
        form = LaunchJudgeJobForm(request.POST or None)
        return launch_view(
            self,
            request,
            form,
            lambda data: form.launch(request.user),
            errors=(JudgeError,),
            title="Judge a run",
            detail="evaluation:job-detail",
            intro="A judge job asks an LLM judge about every answer of a finished run "
            "(pairwise judges: of two runs, in both orders), each item `repeats` times.",
        )


@admin.register(Judgment)
class JudgmentAdmin(admin.ModelAdmin):
    list_display = ("job", "position", "sample", "repeat", "order", "status", "label", "value")
    list_filter = ("status", "order")
    list_select_related = ("job", "sample")
    search_fields = ("sample__external_id", "raw")
    raw_id_fields = ("job", "sample", "prediction", "other")
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


# --- the virtual API server ---------------------------------------------------------------------


@admin.register(VirtualApi)
class VirtualApiAdmin(admin.ModelAdmin):
    list_display = ("category", "tool", "api", "function", "responses")
    search_fields = ("category", "tool", "api", "function")
    readonly_fields = ("documentation_pretty", "created_at")
    fields = ("category", "tool", "api", "function", "documentation", "documentation_pretty")

    def get_queryset(self, request: HttpRequest) -> Any:

        return super().get_queryset(request).annotate(n_responses=Count("responses"))

    @admin.display(description="cached responses", ordering="n_responses")
    def responses(self, obj: VirtualApi) -> int:
        return obj.n_responses  # type: ignore[attr-defined]

    @admin.display(description="documentation")
    def documentation_pretty(self, obj: VirtualApi) -> SafeString:
        return pretty_json(obj.documentation)


@admin.register(ApiResponse)
class ApiResponseAdmin(admin.ModelAdmin):
    list_display = ("api", "origin", "simulator", "short_error", "created_at")
    list_filter = ("origin",)
    search_fields = ("api__api", "api__tool", "key")
    show_full_result_count = False
    list_select_related = ("api",)
    fields = (
        "api",
        "key",
        "arguments_pretty",
        "response_pretty",
        "error",
        "origin",
        "simulator",
        "source",
        "raw_key",
        "created_at",
    )
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="error")
    def short_error(self, obj: ApiResponse) -> str:
        return obj.error[:60]

    @admin.display(description="arguments")
    def arguments_pretty(self, obj: ApiResponse) -> SafeString:
        return pretty_json(obj.arguments)

    @admin.display(description="response")
    def response_pretty(self, obj: ApiResponse) -> SafeString:
        return pretty_json(obj.response)


@admin.register(ServedCall)
class ServedCallAdmin(admin.ModelAdmin):
    list_display = ("api", "source", "run", "latency_ms", "created_at")
    list_filter = ("source",)
    list_select_related = ("api",)
    show_full_result_count = False
    readonly_fields = ("api", "key", "source", "detail", "run", "latency_ms", "created_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(RealApi)
class RealApiAdmin(admin.ModelAdmin):
    list_display = ("category", "tool", "api", "url", "method", "enabled")
    list_filter = ("enabled", "method")
    search_fields = ("category", "tool", "api", "url")
