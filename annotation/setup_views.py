"""The researcher's campaign pages: the list of campaigns (drafts with a link to continue their
setup) and the setup flow, create -> questions -> items -> members and roles -> preview ->
open (annotation.setup). Each step is a page of its own that can be revisited while the
campaign is a draft; the services refuse with a field-named AnnotationError, which the step's
page shows next to what was typed (config.errors.shows_errors). Who may open them is
config.access's table (the campaign and its questions' and members' permissions)."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from typing import Any

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.db.models import Count
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation import services
from annotation.errors import AnnotationError
from annotation.kinds import BuildRequest, kind_named, kind_of, kinds
from annotation.markdown import render as render_markdown
from annotation.models import Assignment, Campaign, Item, Member, Question
from annotation.selectors import campaigns_overview, item_view
from annotation.services import labels_per_item_default
from annotation.setup import (
    MAY_BE_MULTIPLE,
    SCALES_WITH_CHOICES,
    STEPS,
    Prefill,
    campaign_details_update,
    campaign_readiness,
    items_rebuild,
    member_roles,
    members_set,
    prefill_read,
    questions_as_specs,
    questions_save,
    runs_for_items,
    setup_editable,
)
from annotation.views import question_views
from benchmarks.models import Benchmark, Sample
from config.access import allows
from config.errors import shows_errors
from config.numbers import object_id, object_ids, whole_number
from evaluation.models import Run

# --- the list -----------------------------------------------------------------------------------


def next_step(campaign: Any) -> str:
    """Where a draft's setup continues (a campaign of selectors.campaigns_overview): the
    first of questions, items and members it lacks, else the preview."""
    if not campaign.n_questions:
        return "questions"
    if not campaign.n_items:
        return "items"
    if not campaign.n_annotators:
        return "members"
    return "preview"


@require_GET
def campaign_overview(request: HttpRequest) -> HttpResponse:
    """Every campaign for whoever reads campaigns: drafts first, each with a link to continue
    its setup; open and closed ones with their progress."""
    campaigns = list(campaigns_overview())
    # Drafts first (the list is otherwise newest first).
    campaigns.sort(key=lambda campaign: campaign.status != Campaign.Status.DRAFT)
    can_setup = allows(request.user, "annotation:setup-details", campaign_id=0)
    rows = []
    for campaign in campaigns:
        draft = campaign.status == Campaign.Status.DRAFT
        rows.append(
            {
                "campaign": campaign,
                "kind_label": campaign.kind_label,
                "continue_url": reverse(
                    f"annotation:setup-{next_step(campaign)}", args=[campaign.pk]
                )
                if draft and can_setup
                else "",
            }
        )
    return render(
        request,
        "annotation/setup/overview.html",
        {
            "rows": rows,
            "can_create": allows(request.user, "annotation:setup-new"),
            "can_read_labels": allows(request.user, "annotation:progress", campaign_id=0),
            "nav_campaigns": True,
        },
    )


# --- shared -------------------------------------------------------------------------------------


def _campaign(campaign_id: int) -> Campaign:
    return get_object_or_404(
        Campaign.objects.select_related("benchmark", "run_a", "run_b"), pk=campaign_id
    )


def _step_page(
    request: HttpRequest,
    campaign: Campaign | None,
    step: str,
    context: dict[str, Any],
    *,
    status: int = 200,
    template: str = "",
) -> HttpResponse:
    readiness = campaign_readiness(campaign) if campaign is not None else None
    steps = [
        {
            "slug": slug,
            "title": title,
            "number": n + 1,
            "current": slug == step,
            "done": bool(readiness and readiness.done.get(slug)),
            "url": reverse(f"annotation:setup-{slug}", args=[campaign.pk])
            if campaign is not None and campaign.status == Campaign.Status.DRAFT
            else "",
        }
        for n, (slug, title) in enumerate(STEPS)
    ]
    error = context.get("error")
    full = {
        "campaign": campaign,
        "step": step,
        "steps": steps,
        "readiness": readiness,
        "editable": campaign is None or campaign.status == Campaign.Status.DRAFT,
        "error_field": getattr(error, "field", ""),
        "nav_campaigns": True,
        **context,
    }
    name = template or f"annotation/setup/{step}.html"
    return render(request, name, full, status=status)


def _int(raw: str, field: str, what: str, column: Any = None) -> int | None:
    return whole_number(raw.strip(), name=field, label=what, column=column)


LABELS_PER_ITEM = Campaign._meta.get_field("labels_per_item")


def _benchmark(raw: str) -> Benchmark | None:
    pk = object_id(raw.strip(), name="benchmark")
    if pk is None:
        return None
    benchmark = Benchmark.objects.filter(pk=pk).first()
    if benchmark is None:
        raise AnnotationError(f"no benchmark {pk}", field="benchmark")
    return benchmark


def _kind_rows() -> list[dict[str, Any]]:
    return [
        {
            "name": name,
            "label": kind.label,
            "help": kind.build_help,
            "labels": labels_per_item_default(name),
            "kind_labels": kind.labels_per_item,
            # A link from two runs (the prefill) offers only the kinds built from two runs.
            "from_runs": "runs" in kind.builders,
        }
        for name, kind in kinds().items()
    ]


# The first step's options, each shown with the kinds that ask it (CampaignKind.setup_options;
# the details step shows a draft's own).
OPTIONS = ("randomize_sides", "show_gold", "review_stage", "adjudication_stage")


def _option_kinds() -> dict[str, str]:
    """Each option of the first step, with the labels of the kinds it applies to."""
    return {
        option: ", ".join(kind.label for kind in kinds().values() if option in kind.setup_options())
        for option in OPTIONS
    }


def _posted_options(data: Any, kind_name: str) -> dict[str, bool]:
    """The options posted with the first step that apply to the chosen kind."""
    try:
        kind = kind_named(kind_name)
    except ValueError:
        return {}  # the create service names the unknown kind
    return {option: bool(data.get(option)) for option in kind.setup_options()}


# --- step 1: create, then the details of a draft ------------------------------------------------


def _new_page(
    request: HttpRequest, prefill: Prefill, posted: dict[str, Any], error: Any = None
) -> HttpResponse:
    context = {
        "kinds": _kind_rows(),
        "option_kinds": _option_kinds(),
        "benchmarks": Benchmark.objects.order_by("name"),
        "prefill": prefill,
        "posted": posted,
        "error": error,
        "preview": render_markdown(posted.get("guidelines", "")),
    }
    return _step_page(
        request,
        None,
        "details",
        context,
        status=400 if error else 200,
        template="annotation/setup/new.html",
    )


def _new_refused(request: HttpRequest, error: Exception) -> HttpResponse:
    try:
        prefill = prefill_read(
            request.POST.dict() if request.method == "POST" else request.GET.dict()
        )
    except AnnotationError:
        prefill = Prefill()
    return _new_page(request, prefill, request.POST.dict(), error)


@require_http_methods(["GET", "POST"])
@shows_errors(_new_refused)
def campaign_new(request: HttpRequest) -> HttpResponse:
    """A new draft campaign. `?kind=pairwise&runs=A,B` (run ids: the run comparison's link)
    chooses the kind, the benchmark and the items step's two runs."""
    if request.method == "GET":
        prefill = prefill_read(request.GET.dict())
        posted: dict[str, Any] = {"kind": prefill.kind, "randomize_sides": True}
        if prefill.runs:
            posted["benchmark"] = str(prefill.runs[0].benchmark_id)
            posted["name"] = f"{prefill.runs[0]} vs {prefill.runs[1]}"
        return _new_page(request, prefill, posted)
    data = request.POST
    prefill = prefill_read({"kind": data.get("kind", ""), "runs": data.get("runs", "")})
    if not data.get("kind"):
        raise AnnotationError("choose the kind of campaign", field="kind")
    runs = {}
    if prefill.runs:
        runs = {"run_a": prefill.runs[0], "run_b": prefill.runs[1]}
    campaign = services.campaign_create(
        name=data.get("name", ""),
        public_name=data.get("public_name", ""),
        kind=data.get("kind", ""),
        benchmark=_benchmark(data.get("benchmark", "")),
        guidelines=data.get("guidelines", ""),
        labels_per_item=_int(
            data.get("labels_per_item", ""), "labels_per_item", "labels per item", LABELS_PER_ITEM
        ),
        user=request.user,
        **_posted_options(data, data.get("kind", "")),
        **runs,
    )
    messages.success(request, f"{campaign.name} is a draft: now its questions.")
    return HttpResponseRedirect(reverse("annotation:setup-questions", args=[campaign.pk]))


@require_POST
def guidelines_preview(request: HttpRequest) -> HttpResponse:
    """The guidelines as annotators will read them (the safe Markdown renderer), for the live
    preview beside the editor. Stores nothing."""
    text = request.POST.get("guidelines", "")[:100_000]
    return render(request, "annotation/setup/new.html#preview", {"preview": render_markdown(text)})


def _details_page(
    request: HttpRequest, campaign: Campaign, posted: dict[str, Any], error: Any = None
) -> HttpResponse:
    kind = kind_of(campaign)
    context = {
        "kind": kind,
        "options": kind.setup_options(),
        "benchmarks": Benchmark.objects.order_by("name"),
        "posted": posted,
        "error": error,
        "preview": render_markdown(posted.get("guidelines", "")),
    }
    return _step_page(request, campaign, "details", context, status=400 if error else 200)


def _details_refused(request: HttpRequest, error: Exception, campaign_id: int) -> HttpResponse:
    return _details_page(request, _campaign(campaign_id), request.POST.dict(), error)


@require_http_methods(["GET", "POST"])
@shows_errors(_details_refused)
def setup_details(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = _campaign(campaign_id)
    if request.method == "GET":
        posted = {
            "name": campaign.name,
            "public_name": campaign.public_name,
            "benchmark": str(campaign.benchmark_id or ""),
            "guidelines": campaign.guidelines,
            "labels_per_item": str(campaign.labels_per_item),
            "randomize_sides": campaign.randomize_sides,
            "show_gold": campaign.show_gold,
            "review_stage": campaign.review_stage,
            "adjudication_stage": campaign.adjudication_stage,
        }
        return _details_page(request, campaign, posted)
    data = request.POST
    labels = _int(
        data.get("labels_per_item", ""), "labels_per_item", "labels per item", LABELS_PER_ITEM
    )
    campaign_details_update(
        campaign=campaign,
        name=data.get("name", ""),
        public_name=data.get("public_name", ""),
        benchmark=_benchmark(data.get("benchmark", "")),
        guidelines=data.get("guidelines", ""),
        labels_per_item=labels if labels is not None else 0,
        randomize_sides=bool(data.get("randomize_sides")),
        show_gold=bool(data.get("show_gold")),
        review_stage=bool(data.get("review_stage")),
        adjudication_stage=bool(data.get("adjudication_stage")),
    )
    messages.success(request, "Saved.")
    return HttpResponseRedirect(reverse("annotation:setup-questions", args=[campaign.pk]))


# --- step 2: questions --------------------------------------------------------------------------


def questions_from_post(data: Any) -> list[dict[str, Any]]:
    """The questions form as specs (annotation.setup.question_check reads them)."""
    specs = []
    count = min(_int(data.get("questions", "0"), "questions", "questions") or 0, 50)
    for i in range(count):
        prefix = f"q-{i}-"
        rows = min(_int(data.get(prefix + "choices", "0"), prefix + "choices", "choices") or 0, 50)
        specs.append(
            {
                "key": data.get(prefix + "key", ""),
                "text": data.get(prefix + "text", ""),
                "scale": data.get(prefix + "scale", ""),
                "choices": [
                    {
                        "value": data.get(f"{prefix}choice-{n}-value", ""),
                        "label": data.get(f"{prefix}choice-{n}-label", ""),
                        "key": data.get(f"{prefix}choice-{n}-key", ""),
                    }
                    for n in range(rows)
                ],
                "multiple": bool(data.get(prefix + "multiple")),
                "min_choices": data.get(prefix + "min_choices", ""),
                "max_choices": data.get(prefix + "max_choices", ""),
                "required": bool(data.get(prefix + "required")),
                "allow_note": bool(data.get(prefix + "allow_note")),
            }
        )
    return specs


def _edit_questions(specs: list[dict[str, Any]], action: str) -> tuple[list[dict[str, Any]], str]:
    """A button of the questions form that changes the form, not the campaign: add or remove
    a choice row or a question. Returns the specs and the field to focus."""
    parts = action.split(":")
    verb, numbers = parts[0], [whole_number(p, name="action", default=0) or 0 for p in parts[1:]]
    if verb == "add-question":
        specs.append(
            {"key": "", "text": "", "scale": "categories", "required": True, "choices": [{}, {}]}
        )
        return specs, f"q-{len(specs) - 1}-key"
    if verb == "remove-question" and numbers and numbers[0] < len(specs):
        del specs[numbers[0]]
        return specs, "add-question"
    if verb == "add-choice" and numbers and numbers[0] < len(specs):
        choices = specs[numbers[0]].setdefault("choices", [])
        choices.append({})
        return specs, f"q-{numbers[0]}-choice-{len(choices) - 1}-value"
    if verb == "remove-choice" and len(numbers) == 2 and numbers[0] < len(specs):
        choices = specs[numbers[0]].get("choices", [])
        if numbers[1] < len(choices):
            del choices[numbers[1]]
        return specs, f"q-{numbers[0]}-add-choice"
    return specs, ""


def _question_rows(specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for i, spec in enumerate(specs):
        prefix = f"q-{i}-"
        scale = spec.get("scale", "")
        rows.append(
            {
                "i": i,
                "prefix": prefix,
                "spec": spec,
                "has_choices": scale in SCALES_WITH_CHOICES,
                "may_be_multiple": scale in MAY_BE_MULTIPLE,
                "choices": [
                    {
                        "n": n,
                        "prefix": f"{prefix}choice-{n}-",
                        "value": choice.get("value", ""),
                        "label": choice.get("label", ""),
                        "key": choice.get("key", ""),
                    }
                    for n, choice in enumerate(spec.get("choices") or [])
                ],
            }
        )
    return rows


def _questions_page(
    request: HttpRequest,
    campaign: Campaign,
    specs: list[dict[str, Any]],
    *,
    error: Any = None,
    focus: str = "",
) -> HttpResponse:
    context = {
        "rows": _question_rows(specs),
        "count": len(specs),
        "scales": Question.Scale.choices,
        "error": error,
        "focus": focus or getattr(error, "field", ""),
        "sided_labels": kind_of(campaign).side_labels,
    }
    if getattr(request, "htmx", False):
        return _step_page(
            request, campaign, "questions", context, template="annotation/setup/questions.html#form"
        )
    return _step_page(request, campaign, "questions", context, status=400 if error else 200)


def _questions_refused(request: HttpRequest, error: Exception, campaign_id: int) -> HttpResponse:
    campaign = _campaign(campaign_id)
    try:
        specs = questions_from_post(request.POST)
    except AnnotationError:
        specs = questions_as_specs(campaign)
    return _questions_page(request, campaign, specs, error=error)


@require_http_methods(["GET", "POST"])
@shows_errors(_questions_refused)
def setup_questions(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """The questions, a form per scale: choices as rows to add and remove (categories,
    ordinal), a pairwise question's fixed sides, how many of an item's own choices."""
    campaign = _campaign(campaign_id)
    if request.method == "GET":
        return _questions_page(request, campaign, questions_as_specs(campaign))
    specs = questions_from_post(request.POST)
    action = request.POST.get("action", "save")
    if action != "save":
        specs, focus = _edit_questions(specs, action)
        return _questions_page(request, campaign, specs, focus=focus)
    questions_save(campaign=campaign, questions=specs)
    messages.success(request, f"{len(specs)} question{'s' if len(specs) != 1 else ''} saved.")
    return HttpResponseRedirect(reverse("annotation:setup-items", args=[campaign.pk]))


# --- step 3: items ------------------------------------------------------------------------------


def _items_page(
    request: HttpRequest, campaign: Campaign, posted: dict[str, Any], error: Any = None
) -> HttpResponse:
    kind = kind_of(campaign)
    fields = kind.build_fields()
    splits = []
    if "split" in fields and campaign.benchmark_id:
        splits = list(
            Sample.objects.filter(benchmark_id=campaign.benchmark_id)
            .values("split")
            .annotate(n=Count("id"))
            .order_by("split")
        )
    context = {
        "kind": kind,
        "fields": fields,
        "builds_tools": "tools" in kind.builders,
        "tools": campaign.benchmark.tools.count() if campaign.benchmark else 0,
        "splits": splits,
        "runs": runs_for_items(campaign) if "run" in fields else [],
        "posted": posted,
        "error": error,
        "items": campaign.items.count(),
        "first_items": campaign.items.select_related("sample", "tool").order_by("position")[:5],
    }
    return _step_page(request, campaign, "items", context, status=400 if error else 200)


def _items_refused(request: HttpRequest, error: Exception, campaign_id: int) -> HttpResponse:
    return _items_page(request, _campaign(campaign_id), request.POST.dict(), error)


def _run(raw: str, field: str) -> Run | None:
    pk = object_id(raw.strip(), name=field, label="run")
    if pk is None:
        return None
    run = Run.objects.select_related("benchmark").filter(pk=pk).first()
    if run is None:
        raise AnnotationError(f"{field.replace('_', ' ')}: no run {pk}", field=field)
    return run


@require_http_methods(["GET", "POST"])
@shows_errors(_items_refused)
def setup_items(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """The items, from what the campaign's kind builds them from (its builders: a split, a
    run, the benchmark's tools, two runs, a run's failures, a pairs file), with a limit.
    Building again replaces a draft's items."""
    campaign = _campaign(campaign_id)
    if request.method == "GET":
        posted = {
            "run": str(campaign.run_a_id or ""),
            "run_b": str(campaign.run_b_id or ""),
        }
        return _items_page(request, campaign, posted)
    setup_editable(campaign)
    data = request.POST
    build = BuildRequest(
        split=data.get("split", "").strip(),
        limit=_int(data.get("limit", ""), "limit", "limit"),
        run=_run(data.get("run", ""), "run"),
        run_b=_run(data.get("run_b", ""), "run_b"),
        failed_only=data.get("failed_only", "") == "on",
    )
    upload = request.FILES.get("pairs")
    with tempfile.TemporaryDirectory() as folder:
        if upload is not None:
            target = Path(folder) / "pairs.json"
            with target.open("wb") as handle:
                for chunk in upload.chunks():
                    handle.write(chunk)
            build.pairs = target
            build.pairs_name = Path(upload.name or "pairs.json").name
        added = items_rebuild(campaign=campaign, request=build)
    messages.success(request, f"{added} item{'s' if added != 1 else ''} built.")
    return HttpResponseRedirect(reverse("annotation:setup-members", args=[campaign.pk]))


# --- step 4: members and roles ------------------------------------------------------------------


def _members_page(
    request: HttpRequest,
    campaign: Campaign,
    chosen: dict[str, set[int]],
    error: Any = None,
) -> HttpResponse:
    roles = member_roles(campaign)
    users = list(get_user_model().objects.filter(is_active=True).order_by("username")[:1000])
    context = {
        "roles": [(role, Member.Role(role).label) for role in roles],
        "users": [
            {
                "user": user,
                "roles": [
                    {"role": role, "checked": user.pk in chosen.get(role, set())} for role in roles
                ],
            }
            for user in users
        ],
        "error": error,
    }
    return _step_page(request, campaign, "members", context, status=400 if error else 200)


def _posted_members(request: HttpRequest) -> dict[str, list[int]]:
    return {role: object_ids(request.POST.getlist(role), name=role) for role in Member.Role.values}


def _members_refused(request: HttpRequest, error: Exception, campaign_id: int) -> HttpResponse:
    chosen = {role: set(ids) for role, ids in _posted_members(request).items()}
    return _members_page(request, _campaign(campaign_id), chosen, error)


@require_http_methods(["GET", "POST"])
@shows_errors(_members_refused)
def setup_members(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """Who annotates (and reviews or adjudicates, when the campaign has those stages) and how
    many labels each item asks; fewer annotators than labels per item keeps this step open
    with a warning."""
    campaign = _campaign(campaign_id)
    if request.method == "GET":
        chosen: dict[str, set[int]] = {}
        for user_id, role in Member.objects.filter(campaign=campaign).values_list(
            "user_id", "role"
        ):
            chosen.setdefault(role, set()).add(user_id)
        return _members_page(request, campaign, chosen)
    labels = _int(
        request.POST.get("labels_per_item", ""),
        "labels_per_item",
        "labels per item",
        LABELS_PER_ITEM,
    )
    counts = members_set(
        campaign=campaign, by_role=_posted_members(request), labels_per_item=labels
    )
    annotators = counts.get("annotator", 0)
    messages.success(request, f"{annotators} annotator{'s' if annotators != 1 else ''} chosen.")
    if 0 < annotators < campaign.labels_per_item:
        # The readiness warning where the choice is made: this step, where both can change.
        return HttpResponseRedirect(reverse("annotation:setup-members", args=[campaign.pk]))
    return HttpResponseRedirect(reverse("annotation:setup-preview", args=[campaign.pk]))


# --- step 5: preview ----------------------------------------------------------------------------


@require_GET
def setup_preview(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """One item as an annotator will see it: the studio's item template and question form,
    sides in an order of their own when the campaign randomizes them. Nothing is stored: the
    assignment it is shown under is never saved, so no item is leased and no label given."""
    campaign = _campaign(campaign_id)
    kind = kind_of(campaign)
    items = campaign.items.order_by("position")
    count = items.count()
    position = whole_number(
        request.GET.get("position"), name="position", column=Item._meta.get_field("position")
    )
    position = min(position or 0, max(count - 1, 0))
    context: dict[str, Any] = {"count": count, "position": position}
    item = items.filter(position__gte=position).first()
    if item is not None:
        relations = kind.relations
        if "sample" in relations:
            relations = (*relations, "sample__benchmark")
        item = Item.objects.select_related(*relations).get(pk=item.pk)
        item.campaign = campaign
        shown = ""
        if kind.sided:
            shown = random.choice(("AB", "BA")) if campaign.randomize_sides else "AB"
        # Never saved: id 0 only names it in the item template's links, which the preview
        # makes inert where an item edits (the refinement editor).
        unsaved = Assignment(id=0, campaign=campaign, item=item, shown_order=shown)
        view = item_view(item, unsaved)
        context.update(
            {
                "item": item,
                "view": view,
                "item_template": kind.item_template,
                "questions": question_views(list(campaign.questions.all()), view, kind),
                "wide_item": kind.wide,
                "drafts": kind.drafts,
                "assignment": unsaved,
                **kind.preview_context(unsaved),
                "posted": {},
                "previous": position - 1 if position > 0 else None,
                "next": position + 1 if position + 1 < count else None,
            }
        )
    return _step_page(request, campaign, "preview", context)


# --- step 6: open -------------------------------------------------------------------------------


def _open_refused(request: HttpRequest, error: Exception, campaign_id: int) -> HttpResponse:
    return _step_page(request, _campaign(campaign_id), "open", {"error": error}, status=400)


@require_http_methods(["GET", "POST"])
@shows_errors(_open_refused)
def setup_open(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """What the campaign has and lacks, and the button that opens it (the admin's bulk action's
    service)."""
    campaign = _campaign(campaign_id)
    if request.method == "GET":
        return _step_page(request, campaign, "open", {})
    setup_editable(campaign)
    services.campaign_activate(campaign=campaign)
    messages.success(request, f"{campaign.name} is open to its annotators.")
    return HttpResponseRedirect(reverse("annotation:progress", args=[campaign.pk]))
