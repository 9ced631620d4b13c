"""The annotation studio's pages. Server-rendered; htmx swaps the workspace after each action,
so an annotator goes from item to item without a page load. Who may open each page is
config.access's table (studio pages: membership of the campaign in the page's role; another
campaign is a 404); the views fetch the campaign through the same membership check."""

from __future__ import annotations

import uuid
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET, require_POST

from annotation.adjudication import (
    adjudication_counts,
    adjudication_next,
    adjudication_submit,
    answer_text,
    dispute_get,
    shown_order,
    side_shown,
)
from annotation.assign import (
    AnnotationError,
    campaign_closed,
    item_next,
    item_skip,
    label_undo,
)
from annotation.kinds import CampaignKind, kind_of
from annotation.markdown import render as render_markdown
from annotation.models import Adjudication, Assignment, Campaign, Item, Label, Member, Question
from annotation.refinement_workflow import (
    draft_apply,
    editor_context,
    reference_outline,
    review_decide,
    review_next,
)
from annotation.selectors import (
    annotator_progress,
    assignment_of,
    campaigns_of,
    item_for_assignment,
    item_view,
    progress_by_annotator,
    studio_campaign,
)
from annotation.services import answers_clean
from annotation.submit import answers_submit
from config.errors import shows_errors
from config.numbers import object_id, whole_number
from config.throttle import throttled

PAIRWISE_KEYS = (("1", "2", "3"), ("4", "5", "6"), ("7", "8", "9"))


@require_GET
def campaign_index(request: HttpRequest) -> HttpResponse:
    campaigns = list(campaigns_of(request.user))
    roles: dict[int, list[str]] = {}
    for campaign_id, role in Member.objects.filter(user=request.user).values_list(
        "campaign_id", "role"
    ):
        roles.setdefault(campaign_id, []).append(role)
    rows = [campaign_row(c, roles.get(c.pk, [])) for c in campaigns]
    return render(request, "annotation/campaign_list.html", {"rows": rows})


def campaign_row(campaign: Campaign, roles: list[str]) -> dict[str, Any]:
    """A campaign in the member's list, with the work it offers them (by their roles, its
    stages and what its kind allows): the template only shows it."""
    kind = kind_of(campaign)
    return {
        "campaign": campaign,
        "kind_label": kind.label,
        "can_annotate": Member.Role.ANNOTATOR in roles
        and campaign.status == Campaign.Status.ACTIVE,
        "can_review": Member.Role.REVIEWER in roles and kind.reviewable and campaign.review_stage,
        "can_adjudicate": Member.Role.ADJUDICATOR in roles
        and kind.adjudicable
        and campaign.adjudication_stage,
    }


def question_views(
    questions: list[Question], view: dict[str, Any], kind: CampaignKind
) -> list[dict[str, Any]]:
    """Each question with its choices and their keyboard keys, as the form shows them (a
    pairwise question by the sides as shown: left, tie, right)."""
    shown = []
    pairwise_index = 0
    for question in questions:
        if question.scale == Question.Scale.PAIRWISE:
            keys = PAIRWISE_KEYS[pairwise_index] if pairwise_index < 3 else ("", "", "")
            pairwise_index += 1
            labels = kind.side_labels
            choices = [
                {"value": side, "label": label, "key": key}
                for side, label, key in zip(("left", "tie", "right"), labels, keys, strict=True)
            ]
        elif question.scale == Question.Scale.ITEM_CHOICES:
            choices = [
                {
                    "value": c["value"],
                    "label": c["value"],
                    "key": c["key"],
                    "hint": c["description"],
                }
                for c in view.get("choices", [])
            ]
        else:
            choices = [
                {"value": str(c["value"]), "label": c["label"], "key": c.get("key", "")}
                for c in question.choices
            ]
        shown.append(
            {
                "question": question,
                "choices": choices,
                "input": "checkbox" if question.multiple else "radio",
            }
        )
    return shown


def workspace(
    request: HttpRequest,
    campaign: Campaign,
    *,
    assignment: Assignment | None = None,
    error: str = "",
    posted: dict[str, Any] | None = None,
    status: int = 200,
) -> HttpResponse:
    """The annotation workspace for the annotator's current item (the full page, or for htmx
    the partial that replaces the previous one)."""
    if assignment is None and not error:
        # A closed campaign is a state to show, not a refusal: the page says it is closed.
        error = campaign_closed(campaign)
        if not error:
            assignment = item_next(campaign=campaign, user=request.user)
    context: dict[str, Any] = {
        "campaign": campaign,
        "progress": annotator_progress(campaign, request.user),
        "assignment": assignment,
        "error": error,
        "posted": posted or {},
        "token": uuid.uuid4(),
        "item_script": kind_of(campaign).script,
        "can_undo": Label.objects.filter(campaign=campaign, annotator=request.user, is_current=True)
        .exclude(review=Label.Review.APPROVED)
        .exists(),
    }
    if assignment is not None:
        kind = kind_of(campaign)
        item = item_for_assignment(assignment, campaign)
        view = item_view(item, assignment)
        questions = list(campaign.questions.all())
        context.update(
            {
                "item": item,
                "view": view,
                "questions": question_views(questions, view, kind),
                "item_template": kind.item_template,
                "wide_item": kind.wide,
                **kind.workspace_context(assignment),
            }
        )
    template = "annotation/annotate.html#workspace" if request.htmx else "annotation/annotate.html"
    return render(request, template, context, status=status)


@require_GET
def annotate(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = studio_campaign(request, campaign_id)
    return workspace(request, campaign)


def _posted_answers(request: HttpRequest, campaign: Campaign) -> dict[str, Any]:
    answers: dict[str, Any] = {}
    for question in campaign.questions.all():
        if question.multiple:
            answers[question.key] = request.POST.getlist(question.key)
        else:
            answers[question.key] = request.POST.get(question.key, "")
    for name in kind_of(campaign).extra_fields:
        answers[name] = request.POST.get(name, "")
    return answers


def _own_assignment(campaign: Campaign, assignment_id: int, user: Any) -> Assignment | None:
    return assignment_of(campaign, user, assignment_id)


def _submit_refused(
    request: HttpRequest, error: Exception, campaign_id: int, assignment_id: int
) -> HttpResponse:
    # Answers kept, error shown next to the form; the item stays on screen.
    campaign = studio_campaign(request, campaign_id)
    posted = {**_posted_answers(request, campaign), "note": request.POST.get("note", "")[:5000]}
    assignment = _own_assignment(campaign, assignment_id, request.user)
    return workspace(request, campaign, assignment=assignment, error=str(error), posted=posted)


def _workspace_refused(
    request: HttpRequest, error: Exception, campaign_id: int, **kwargs: Any
) -> HttpResponse:
    return workspace(request, studio_campaign(request, campaign_id), error=str(error))


@require_POST
@throttled("annotation-submit")
@shows_errors(_submit_refused)
def submit(request: HttpRequest, campaign_id: int, assignment_id: int) -> HttpResponse:
    campaign = studio_campaign(request, campaign_id)
    assignment = _own_assignment(campaign, assignment_id, request.user)
    if assignment is None:
        return workspace(request, campaign, error="this item is not yours", status=404)
    try:
        token = uuid.UUID(request.POST.get("token", ""))
    except ValueError:
        raise AnnotationError("the form is stale", field="token") from None
    time_ms = request.POST.get("time_ms", "")
    answers_submit(
        campaign=campaign,
        assignment=assignment,
        user=request.user,
        raw=_posted_answers(request, campaign),
        token=token,
        note=request.POST.get("note", "")[:5000],
        time_ms=whole_number(time_ms, name="time_ms", column=Label._meta.get_field("time_ms")),
    )
    return workspace(request, campaign)


@require_POST
@throttled("annotation")
@shows_errors(_workspace_refused)
def skip(request: HttpRequest, campaign_id: int, assignment_id: int) -> HttpResponse:
    campaign = studio_campaign(request, campaign_id)
    item_skip(campaign=campaign, assignment_id=assignment_id, user=request.user)
    return workspace(request, campaign)


@require_POST
@throttled("annotation")
@shows_errors(_workspace_refused)
def undo(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = studio_campaign(request, campaign_id)
    assignment = label_undo(campaign=campaign, user=request.user)
    previous = Label.objects.filter(assignment=assignment).order_by("-created_at").first()
    posted: dict[str, Any] = {}
    if previous is not None:
        posted = shown_answers(
            list(campaign.questions.all()), previous.answers, assignment.shown_order
        )
        posted["note"] = previous.note
    return workspace(request, campaign, assignment=assignment, posted=posted)


def shown_answers(questions: list[Question], answers: dict[str, Any], order: str) -> dict[str, Any]:
    """Stored answers as the form shows them: a pairwise 1 / 0 / -1 (canonical) becomes the
    side it is on for this annotator."""
    shown = dict(answers)
    for question in questions:
        value = answers.get(question.key)
        if question.scale == Question.Scale.PAIRWISE and value in (1, 0, -1):
            shown[question.key] = side_shown(value, order)
    return shown


@require_GET
def guidelines(request: HttpRequest, campaign_id: int) -> HttpResponse:
    # Members of the campaign, and researchers (config.access).
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    return render(
        request,
        "annotation/guidelines.html",
        {"campaign": campaign, "guidelines": render_markdown(campaign.guidelines)},
    )


@require_GET
def campaign_progress(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign.objects.select_related("benchmark"), pk=campaign_id)
    context = {
        "campaign": campaign,
        "progress": annotator_progress(campaign, request.user),
        "rows": progress_by_annotator(campaign),
    }
    return render(request, "annotation/progress.html", context)


# --- refinement ---------------------------------------------------------------------------------


def _editable(request: HttpRequest, campaign: Campaign, assignment_id: int) -> Assignment:
    assignment = (
        Assignment.objects.select_related("item__sample", "campaign")
        .filter(pk=assignment_id, campaign=campaign, annotator=request.user)
        .first()
    )
    if assignment is None or not kind_of(campaign).drafts:
        raise Http404("no such item for you")
    return assignment


def _editor(
    request: HttpRequest, campaign: Campaign, assignment: Assignment, error: str = ""
) -> HttpResponse:
    context = {
        "campaign": campaign,
        "assignment": assignment,
        "editor_error": error,
        **editor_context(assignment),
    }
    return render(request, "annotation/items/refinement.html#editor", context)


def _edit_refused(
    request: HttpRequest, error: Exception, campaign_id: int, assignment_id: int
) -> HttpResponse:
    campaign = studio_campaign(request, campaign_id)
    return _editor(request, campaign, _editable(request, campaign, assignment_id), str(error))


@require_POST
@throttled("annotation")
@shows_errors(_edit_refused)
def refine_edit(request: HttpRequest, campaign_id: int, assignment_id: int) -> HttpResponse:
    """One edit of the refinement draft (saved at once); answers with the editor."""
    campaign = studio_campaign(request, campaign_id)
    assignment = _editable(request, campaign, assignment_id)
    draft_apply(
        assignment=assignment,
        op=request.POST.get("op", ""),
        params={k: v for k, v in request.POST.items() if k != "csrfmiddlewaretoken"},
    )
    return _editor(request, campaign, assignment)


@require_GET
def review(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = studio_campaign(request, campaign_id, Member.Role.REVIEWER)
    label = review_next(campaign=campaign, reviewer=request.user)
    return _review_page(request, campaign, label)


def _review_page(
    request: HttpRequest, campaign: Campaign, label: Label | None, error: str = ""
) -> HttpResponse:
    pending = Label.objects.filter(
        campaign=campaign, is_current=True, review=Label.Review.PENDING
    ).exclude(annotator=request.user)
    refined = (label.answers.get("refined") or {}) if label else {}
    context = {
        "campaign": campaign,
        "label": label,
        "error": error,
        "pending": pending.count(),
        "refined": refined,
        "now_outline": reference_outline(label.item.sample.reference) if label else None,
        "refined_outline": reference_outline(refined["reference"])
        if "reference" in refined
        else None,
    }
    template = "annotation/review.html#review" if request.htmx else "annotation/review.html"
    return render(request, template, context)


def _review_refused(
    request: HttpRequest, error: Exception, campaign_id: int, label_id: int
) -> HttpResponse:
    campaign = studio_campaign(request, campaign_id, Member.Role.REVIEWER)
    label = Label.objects.filter(pk=label_id, campaign=campaign).first()
    return _review_page(request, campaign, label, error=str(error))


@require_POST
@throttled("annotation-submit")
@shows_errors(_review_refused)
def review_submit(request: HttpRequest, campaign_id: int, label_id: int) -> HttpResponse:
    campaign = studio_campaign(request, campaign_id, Member.Role.REVIEWER)
    decision = request.POST.get("decision", "")
    comment = request.POST.get("comment", "")[:5000]
    if decision not in ("approve", "return"):
        raise AnnotationError("approve or return", field="decision")
    if not Label.objects.filter(pk=label_id, campaign=campaign).exists():
        raise Http404("no such refinement")
    review_decide(
        label_id=label_id, reviewer=request.user, approve=decision == "approve", comment=comment
    )
    return _review_page(request, campaign, review_next(campaign=campaign, reviewer=request.user))


# --- adjudication -------------------------------------------------------------------------------


def _adjudication_page(
    request: HttpRequest,
    campaign: Campaign,
    *,
    dispute: Any = None,
    error: str = "",
    posted: dict[str, Any] | None = None,
    saved: bool = False,
) -> HttpResponse:
    # The sides in the adjudicator's own order, and every answer as the side it is on there.
    order = shown_order(dispute.item, request.user) if dispute is not None else ""
    context: dict[str, Any] = {
        "campaign": campaign,
        "counts": adjudication_counts(campaign),
        "dispute": dispute,
        "error": error,
        "saved": saved,
        "posted": posted
        or (
            {
                **shown_answers(list(campaign.questions.all()), dispute.current.answers, order),
                "note": dispute.current.note,
            }
            if dispute is not None and dispute.current is not None
            else {}
        ),
        "recent": Adjudication.objects.filter(item__campaign=campaign, is_current=True)
        .select_related("item", "adjudicator")
        .order_by("-created_at")[:10],
    }
    if dispute is not None:
        kind = kind_of(campaign)
        item = dispute.item
        view = item_view(item, None, order=order)
        questions = list(campaign.questions.all())
        by_key = {q.key: q for q in questions}
        context.update(
            {
                "item": item,
                "view": view,
                "item_template": kind.item_template,
                "sided": kind.sided,
                "questions": question_views(questions, view, kind),
                "table": [
                    {
                        "question": q,
                        "differs": q.key in dispute.keys,
                        "answers": [
                            answer_text(q, label.answers.get(q.key), order)
                            for label in dispute.labels
                        ],
                    }
                    for q in questions
                ],
                "current_text": {
                    key: answer_text(by_key[key], value, order)
                    for key, value in (dispute.current.answers if dispute.current else {}).items()
                    if key in by_key
                },
            }
        )
    template = (
        "annotation/adjudicate.html#adjudicate" if request.htmx else "annotation/adjudicate.html"
    )
    return render(request, template, context)


def _adjudicable(request: HttpRequest, campaign_id: int) -> Campaign:
    campaign = studio_campaign(request, campaign_id, Member.Role.ADJUDICATOR)
    if not campaign.adjudication_stage or not kind_of(campaign).adjudicable:
        raise Http404("this campaign has no adjudication stage")
    return campaign


@require_GET
def adjudicate(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """The next disputed item (after ?after=<position> to pass one over), or ?item=<id> to
    open one again (a settled item, to change its answer)."""
    campaign = _adjudicable(request, campaign_id)
    item_id = object_id(request.GET.get("item"), name="item")
    if item_id is not None:
        item = Item.objects.filter(pk=item_id, campaign=campaign).first()
        if item is None:
            raise Http404("no such item in this campaign")
        dispute = dispute_get(item)
        error = "" if dispute else "the labels of this item agree: nothing to settle"
        return _adjudication_page(request, campaign, dispute=dispute, error=error)
    after = whole_number(
        request.GET.get("after"), name="after", column=Item._meta.get_field("position")
    )
    dispute = adjudication_next(campaign=campaign, adjudicator=request.user, after=after)
    return _adjudication_page(request, campaign, dispute=dispute)


def _disputed_item(campaign: Campaign, item_id: int) -> Item:
    item = (
        Item.objects.select_related(
            "campaign", "sample__benchmark", "tool", "prediction", "prediction_b"
        )
        .filter(pk=item_id, campaign=campaign)
        .first()
    )
    if item is None:
        raise Http404("no such item in this campaign")
    return item


def _adjudication_refused(
    request: HttpRequest, error: Exception, campaign_id: int, item_id: int
) -> HttpResponse:
    campaign = _adjudicable(request, campaign_id)
    item = _disputed_item(campaign, item_id)
    posted = {**_posted_answers(request, campaign), "note": request.POST.get("note", "")[:5000]}
    return _adjudication_page(
        request, campaign, dispute=dispute_get(item), error=str(error), posted=posted
    )


@require_POST
@throttled("annotation-submit")
@shows_errors(_adjudication_refused)
def adjudicate_submit(request: HttpRequest, campaign_id: int, item_id: int) -> HttpResponse:
    campaign = _adjudicable(request, campaign_id)
    item = _disputed_item(campaign, item_id)
    answers = answers_clean(
        questions=list(campaign.questions.all()),
        item=item,
        raw=_posted_answers(request, campaign),
        shown_order=shown_order(item, request.user),
    )
    adjudication_submit(
        item=item,
        adjudicator=request.user,
        answers=answers,
        note=request.POST.get("note", "")[:5000],
        replaces=object_id(request.POST.get("replaces"), name="replaces"),
    )
    return _adjudication_page(
        request,
        campaign,
        dispute=adjudication_next(campaign=campaign, adjudicator=request.user),
        saved=True,
    )
