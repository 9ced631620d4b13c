"""Admin for campaigns: questions and members inline, opening and closing, and building items
(from a benchmark split, its tools, two runs, a run's failures, or a file of API-response
pairs). Labels are read-only here: they are written by annotators, with their history."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString

from annotation import services
from annotation.assign import AnnotationError
from annotation.calibration.services import MAX_ITEMS, SELECTIONS, calibration_campaign_create
from annotation.kinds import BuildRequest, kind_choices, kind_of, kinds
from annotation.models import (
    Adjudication,
    Assignment,
    Campaign,
    Item,
    Label,
    Member,
    Question,
    Review,
)
from annotation.setup import campaign_readiness, question_check
from benchmarks.admin import pretty_json
from config.access import allows
from evaluation.models import JudgeVersion, Run, TuringPair

QUESTION_FIELDS = ("key", "text", "scale", "min_choices", "max_choices")


class QuestionForm(forms.ModelForm):
    """A question checked by the same rules as the setup page's (annotation.setup.
    question_check), and stored as it stores them (ordinal values as numbers, a pairwise
    question's fixed answers)."""

    class Meta:
        model = Question
        fields = (
            "order",
            "key",
            "text",
            "scale",
            "choices",
            "multiple",
            "min_choices",
            "max_choices",
            "required",
            "allow_note",
        )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.errors or not data or data.get("DELETE"):
            return data
        choices = data.get("choices")
        index = (self.prefix or "").rsplit("-", 1)[-1]
        try:
            checked = question_check(
                {**data, "choices": choices if isinstance(choices, list) else []},
                int(index) if index.isdigit() else 0,
            )
        except AnnotationError as exc:
            name = exc.field.rsplit("-", 1)[-1] if exc.field else ""
            field = name if name in QUESTION_FIELDS else "choices"
            raise forms.ValidationError({field: str(exc)}) from None
        for name in ("key", "text", "choices", "multiple", "min_choices", "max_choices"):
            data[name] = checked[name]
            setattr(self.instance, name, checked[name])
        return data


class QuestionInline(admin.TabularInline):
    model = Question
    form = QuestionForm
    extra = 0
    fields = QuestionForm.Meta.fields


class MemberInline(admin.TabularInline):
    model = Member
    extra = 1
    autocomplete_fields = ("user",)


def labels_default_help() -> str:
    defaults = ", ".join(
        f"{kind.label.lower()} {kind.labels_per_item}" for kind in kinds().values()
    )
    return f"Distinct annotators each item needs. Blank: the kind's default ({defaults})."


class CampaignForm(forms.ModelForm):
    # The registered kinds (annotation.kinds), not a fixed list in the database.
    kind = forms.ChoiceField(choices=kind_choices)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # (absent from a read-only form: a user who may only view campaigns)
        field = self.fields.get("labels_per_item")
        if field is not None and self.instance.pk is None:
            # A new campaign takes its kind's default (the create service's), unless given.
            field.required = False
            field.initial = None
            field.help_text = labels_default_help()

    class Meta:
        model = Campaign
        fields = [
            "name",
            "public_name",
            "kind",
            "benchmark",
            "status",
            "guidelines",
            "labels_per_item",
            "randomize_sides",
            "show_gold",
            "review_stage",
            "adjudication_stage",
            "lease_seconds",
        ]


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    form = CampaignForm
    list_display = ("name", "kind_label", "benchmark", "status", "labels_per_item", "links")
    list_filter = ("kind", "status")
    search_fields = ("name",)
    inlines = (QuestionInline, MemberInline)
    actions = ("activate", "close", "score_baseline", "agreement_report")
    readonly_fields = ("run_a", "run_b", "task", "links", "created_by", "created_at")
    fieldsets = (
        (None, {"fields": ("name", "public_name", "kind", "benchmark", "status", "guidelines")}),
        (
            "Labelling",
            {
                "fields": (
                    "labels_per_item",
                    "randomize_sides",
                    "show_gold",
                    "review_stage",
                    "adjudication_stage",
                    "lease_seconds",
                )
            },
        ),
        ("Built from", {"fields": ("task", "run_a", "run_b", "links", "created_by", "created_at")}),
    )

    @admin.display(description="kind", ordering="kind")
    def kind_label(self, obj: Campaign) -> str:
        return obj.kind_label

    def save_model(self, request: HttpRequest, obj: Campaign, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            services.questions_ensure(obj)
            return
        # The same create service as the setup page: the kind's defaults and questions.
        data = {name: getattr(obj, name) for name in CampaignForm.Meta.fields}
        created = services.campaign_create(
            **{**data, "labels_per_item": data["labels_per_item"] or None}, user=request.user
        )
        # The inlines are saved against `obj`: it becomes the created row.
        obj.pk = created.pk
        obj.refresh_from_db()
        obj._state.adding = False

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        # The setup page's warnings (fewer annotators than labels per item...), here too.
        campaign = self.get_object(request, object_id)
        if campaign is not None and request.method == "GET":
            for warning in campaign_readiness(campaign).warnings:
                self.message_user(request, warning, messages.WARNING)
        return super().change_view(request, object_id, form_url, extra_context)

    @admin.display(description="items and progress")
    def links(self, obj: Campaign) -> SafeString:
        if obj.pk is None:
            return format_html("{}", "save the campaign first")
        setup = ""
        if obj.status == Campaign.Status.DRAFT:
            setup = format_html(
                ' · <a href="{}">Set up step by step</a>',
                reverse("annotation:setup-details", args=[obj.pk]),
            )
        return format_html(
            '{} items · <a href="{}">Build items</a> · <a href="{}">Progress</a> · '
            '<a href="{}">Agreement</a>{}',
            obj.items.count(),
            reverse("admin:annotation_campaign_build", args=[obj.pk]),
            reverse("annotation:progress", args=[obj.pk]),
            reverse("annotation:agreement", args=[obj.pk]),
            setup,
        )

    @admin.action(
        description="Open the selected campaigns to their annotators", permissions=["change"]
    )
    def activate(self, request: HttpRequest, queryset: QuerySet[Campaign]) -> None:
        for campaign in queryset:
            try:
                services.campaign_activate(campaign=campaign)
            except AnnotationError as exc:
                self.message_user(request, f"{campaign}: {exc}", messages.ERROR)
            else:
                self.message_user(request, f"{campaign} is open.")

    @admin.action(description="Close the selected campaigns", permissions=["change"])
    def close(self, request: HttpRequest, queryset: QuerySet[Campaign]) -> None:
        count = sum(services.campaign_close(campaign=campaign) for campaign in queryset)
        self.message_user(request, f"{count} campaign(s) closed.")

    def has_add_runs_permission(self, request: HttpRequest) -> bool:
        # Scoring a baseline makes one run per annotator.
        return bool(request.user.has_perm("evaluation.add_run"))

    @admin.action(
        description="Score the human baseline: each annotator's answers as a run",
        permissions=["add_runs"],
    )
    def score_baseline(self, request: HttpRequest, queryset: QuerySet[Campaign]) -> None:
        for campaign in queryset:
            try:
                runs = services.baseline_runs_build(campaign=campaign)
            except AnnotationError as exc:
                self.message_user(request, f"{campaign}: {exc}", messages.ERROR)
                continue
            self.message_user(
                request,
                format_html(
                    '{}: {} run(s) scored; see the <a href="{}">runs</a>.',
                    campaign,
                    len(runs),
                    reverse("evaluation:run-list"),
                ),
            )

    def has_read_labels_permission(self, request: HttpRequest) -> bool:
        # The report shows every annotator's answers: the access table's rule for it.
        return allows(request.user, "annotation:agreement")

    # Only a link to the report (which the table lets label readers open): a read.
    @admin.action(
        description="Agreement report: annotators, judges and metrics compared",
        permissions=["read_labels"],
    )
    def agreement_report(
        self, request: HttpRequest, queryset: QuerySet[Campaign]
    ) -> HttpResponseRedirect | None:
        campaigns = list(queryset[:2])
        if len(campaigns) == 1:
            return HttpResponseRedirect(reverse("annotation:agreement", args=[campaigns[0].pk]))
        for campaign in queryset:
            self.message_user(
                request,
                format_html(
                    '{}: <a href="{}">agreement report</a>',
                    campaign,
                    reverse("annotation:agreement", args=[campaign.pk]),
                ),
            )
        return None

    def get_urls(self) -> list[Any]:
        return [
            path(
                "calibrate/",
                self.admin_site.admin_view(self.calibrate_view),
                name="annotation_campaign_calibrate",
            ),
            path(
                "<int:campaign_id>/build/",
                self.admin_site.admin_view(self.build_view),
                name="annotation_campaign_build",
            ),
            *super().get_urls(),
        ]

    def build_view(self, request: HttpRequest, campaign_id: int) -> HttpResponse:
        campaign = get_object_or_404(Campaign, pk=campaign_id)
        if not self.has_change_permission(request, campaign):
            raise PermissionDenied
        form = BuildItemsForm(campaign, request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            try:
                added = form.build()
            except AnnotationError as exc:
                form.add_error(None, str(exc))
            else:
                self.message_user(
                    request, f"{added} item(s) added to {campaign}.", messages.SUCCESS
                )
                return HttpResponseRedirect(
                    reverse("admin:annotation_campaign_change", args=[campaign.pk])
                )
        context = {
            **self.admin_site.each_context(request),
            "title": f"Build items: {campaign}",
            "form": form,
            "opts": self.model._meta,
            "media": self.media + form.media,
            "intro": kind_of(campaign).build_help,
            "multipart": True,
        }
        return render(request, "admin/evaluation/run/launch.html", context)

    def calibrate_view(self, request: HttpRequest) -> HttpResponse:
        """A campaign from a judge version's calibration report (the report page's form and the
        calibration_campaign command build the same, through the same service)."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = CalibrationForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                campaign = calibration_campaign_create(
                    version=data["version"],
                    selection=data["selection"],
                    size=data["size"],
                    task=data.get("task") or "",
                    name=data.get("name") or "",
                    labels_per_item=data.get("labels_per_item"),
                    user=request.user,
                )
            except AnnotationError as exc:
                form.add_error(None, str(exc))
            else:
                self.message_user(
                    request,
                    f"{campaign.items.count()} item(s) in the draft {campaign}: add its "
                    "annotators and open it.",
                    messages.SUCCESS,
                )
                return HttpResponseRedirect(
                    reverse("admin:annotation_campaign_change", args=[campaign.pk])
                )
        context = {
            **self.admin_site.each_context(request),
            "title": "A campaign from a judge's calibration",
            "form": form,
            "opts": self.model._meta,
            "media": self.media + form.media,
            "intro": "The items of a judge version where the judge and the human majority "
            "disagree, or where the judge is least sure, for annotators who will not see its "
            "verdicts (see the version's calibration report).",
        }
        return render(request, "admin/evaluation/run/launch.html", context)


class CalibrationForm(forms.Form):
    version = forms.ModelChoiceField(
        queryset=JudgeVersion.objects.select_related("judge").order_by("judge__name", "number"),
        help_text="The judge version whose report chooses the items.",
    )
    selection = forms.ChoiceField(choices=list(SELECTIONS.items()))
    size = forms.IntegerField(min_value=1, max_value=MAX_ITEMS, help_text="At most this many.")
    task = forms.CharField(
        required=False, help_text="Only this task of the report (as the report names it)."
    )
    labels_per_item = forms.IntegerField(
        required=False, min_value=1, help_text="Blank: the campaign kind's default."
    )
    name = forms.CharField(required=False, max_length=200, help_text="Blank: named for you.")


class BuildItemsForm(forms.Form):
    split = forms.CharField(required=False, help_text="Refinement, baseline: the split.")
    limit = forms.IntegerField(required=False, min_value=1, help_text="At most this many.")
    run = forms.ModelChoiceField(
        queryset=Run.objects.select_related("benchmark"),
        required=False,
        help_text="Baseline, error types: the run; pairwise: run A.",
    )
    run_b = forms.ModelChoiceField(
        queryset=Run.objects.select_related("benchmark"),
        required=False,
        help_text="Pairwise: run B.",
    )
    failed_only = forms.BooleanField(
        required=False, help_text="Step-level review: only the run's failed or wrong outputs."
    )
    pairs = forms.FileField(required=False, help_text="Turing test: the pairs file (JSON).")

    def __init__(self, campaign: Campaign, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.campaign = campaign
        # Only the fields of the kind's item sources: another field would be ignored.
        wanted = kind_of(campaign).build_fields()
        for name in list(self.fields):
            if name not in wanted:
                del self.fields[name]

    def build(self) -> int:
        """The items the campaign's kind builds from what the form was given."""
        data = self.cleaned_data
        request = BuildRequest(
            split=data.get("split") or "",
            limit=data.get("limit"),
            run=data.get("run"),
            run_b=data.get("run_b"),
            failed_only=bool(data.get("failed_only")),
        )
        upload = data.get("pairs")
        if upload is None:
            return services.items_build(campaign=self.campaign, request=request)
        with tempfile.TemporaryDirectory() as folder:
            target = Path(folder) / "pairs.json"
            with target.open("wb") as handle:
                for chunk in upload.chunks():
                    handle.write(chunk)
            request.pairs = target
            request.pairs_name = Path(upload.name or "pairs.json").name
            return services.items_build(campaign=self.campaign, request=request)


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ("campaign", "position", "sample", "tool", "submitted", "active", "is_open")
    list_filter = ("campaign", "is_open")
    raw_id_fields = ("sample", "tool", "prediction", "prediction_b")
    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(Label)
class LabelAdmin(admin.ModelAdmin):
    list_display = ("campaign", "item", "annotator", "is_current", "review", "created_at")
    list_filter = ("campaign", "is_current", "review")
    search_fields = ("annotator__username", "note")
    readonly_fields = (
        "campaign",
        "item",
        "assignment",
        "annotator",
        "answers_pretty",
        "note",
        "token",
        "is_current",
        "supersedes",
        "revoked_at",
        "time_ms",
        "review",
        "created_at",
    )
    fields = readonly_fields
    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="answers")
    def answers_pretty(self, obj: Label) -> SafeString:
        return pretty_json(obj.answers)


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ("campaign", "item", "annotator", "status", "shown_order", "lease_until")
    list_filter = ("campaign", "status")
    raw_id_fields = ("item",)
    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Review)
class ReviewAdmin(admin.ModelAdmin):
    list_display = ("label", "reviewer", "decision", "created_at")
    list_filter = ("decision",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(Adjudication)
class AdjudicationAdmin(admin.ModelAdmin):
    """Settled answers, with the history (is_current off) of earlier ones; written on the
    adjudication page."""

    list_display = ("item", "adjudicator", "is_current", "created_at")
    list_filter = ("item__campaign", "is_current")
    readonly_fields = ("item", "adjudicator", "answers_pretty", "note", "is_current", "created_at")
    fields = readonly_fields
    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="answers")
    def answers_pretty(self, obj: Adjudication) -> SafeString:
        return pretty_json(obj.answers)


# --- Turing pairs of the virtual API server -----------------------------------------------------
# Registered here, not in the evaluation app: building a campaign from them is the studio's,
# and the evaluation app never imports the annotation app.


@admin.register(TuringPair)
class TuringPairAdmin(admin.ModelAdmin):
    list_display = ("api", "simulator", "created_at")
    list_filter = ("simulator",)
    list_select_related = ("api",)
    search_fields = ("api__api", "api__tool")
    actions = ("build_campaign",)
    readonly_fields = ("api", "key", "arguments", "real", "simulated", "simulator", "created_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_add_campaign_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.has_perm("annotation.add_campaign"))

    @admin.action(
        description="Build a Turing campaign from the selected pairs",
        permissions=["add_campaign"],
    )
    def build_campaign(
        self, request: HttpRequest, queryset: QuerySet[TuringPair]
    ) -> HttpResponseRedirect | None:
        pairs = list(queryset.select_related("api").order_by("api_id", "id"))
        name = f"Turing test: {len(pairs)} API pairs ({timezone.now():%Y-%m-%d %H:%M})"
        try:
            campaign = services.campaign_create(name=name, kind="turing", user=request.user)
            services.items_from_turing_pairs(campaign=campaign, pairs=pairs)
        except AnnotationError as exc:
            self.message_user(request, str(exc), messages.ERROR)
            return None
        self.message_user(
            request,
            f"{campaign.name}: {len(pairs)} items, {campaign.labels_per_item} annotators each "
            "(the kind's default, as in the paper). "
            "Add its annotators and open it.",
        )
        return HttpResponseRedirect(reverse("admin:annotation_campaign_change", args=[campaign.pk]))
