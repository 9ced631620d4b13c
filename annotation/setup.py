"""Setting up a campaign as a flow (the researcher's setup pages; the admin calls the same
services): details -> questions -> items -> members and roles -> preview -> open.

Creating is annotation.services.campaign_create (the kind's defaults), building items is
services.items_build (the kind's builders, limits honoured) and opening is
services.campaign_activate (the admin's bulk action too). This module holds what only the flow
needs: changing a draft's details, its questions as a whole, its members by role, what is
still missing or risky before it opens, and the prefill another page may link with
(`?kind=pairwise&runs=A,B`).

Every step changes a draft only: once a campaign is open, its questions, items and members are
what its labels were given against. Each service raises AnnotationError naming the field.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.errors import AnnotationError
from annotation.kinds import BuildRequest, kind_named, kind_of, kinds
from annotation.kinds.pairwise import PAIRWISE_CHOICES
from annotation.models import Campaign, Member, Question
from annotation.selectors import campaign_totals_forget
from annotation.services import (
    campaign_name_check,
    items_build,
    labels_per_item_check,
    public_name_check,
)
from benchmarks.models import Benchmark
from config.numbers import ParameterError, object_id, whole_number
from evaluation.models import Run

# The flow's steps: (slug, title). The slug names the step's page.
STEPS: tuple[tuple[str, str], ...] = (
    ("details", "Create"),
    ("questions", "Questions"),
    ("items", "Items"),
    ("members", "Members and roles"),
    ("preview", "Preview"),
    ("open", "Open"),
)

SCALES_WITH_CHOICES = (Question.Scale.CATEGORIES, Question.Scale.ORDINAL)
MAY_BE_MULTIPLE = (Question.Scale.CATEGORIES, Question.Scale.ITEM_CHOICES)
KEY = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
INTEGER = re.compile(r"^-?\d+$")
NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


def setup_editable(campaign: Campaign) -> None:
    """Refuses a change to a campaign that is no longer a draft."""
    if campaign.status != Campaign.Status.DRAFT:
        raise AnnotationError(
            f"{campaign.name} is {campaign.get_status_display().lower()}: its setup can no "
            "longer change",
            field="status",
        )


def _validation_error(exc: ValidationError) -> AnnotationError:
    name, messages = next(iter(exc.message_dict.items()))
    return AnnotationError(f"{name.replace('_', ' ')}: {' '.join(messages)}", field=name)


def campaign_details_update(
    *,
    campaign: Campaign,
    name: str,
    benchmark: Benchmark | None,
    guidelines: str,
    labels_per_item: int,
    randomize_sides: bool = True,
    show_gold: bool = False,
    review_stage: bool = False,
    adjudication_stage: bool = False,
    public_name: str = "",
) -> Campaign:
    """A draft's name, the name its members see, benchmark, guidelines and labelling settings
    (its kind stays: another kind is another campaign). The benchmark cannot change under
    items built from it."""
    setup_editable(campaign)
    name = campaign_name_check(name)
    public_name = public_name_check(public_name)
    if Campaign.objects.filter(name=name).exclude(pk=campaign.pk).exists():
        raise AnnotationError(f"a campaign named {name!r} exists already", field="name")
    labels_per_item_check(labels_per_item)
    if benchmark != campaign.benchmark and campaign.items.exists():
        raise AnnotationError(
            "the items were built from the other benchmark: build them again after changing it",
            field="benchmark",
        )
    campaign.name = name
    campaign.public_name = public_name
    campaign.benchmark = benchmark
    campaign.guidelines = guidelines
    campaign.labels_per_item = labels_per_item
    campaign.randomize_sides = randomize_sides
    campaign.show_gold = show_gold
    campaign.review_stage = review_stage
    campaign.adjudication_stage = adjudication_stage
    try:
        campaign.clean()
    except ValidationError as exc:
        raise _validation_error(exc) from None
    campaign.save()
    return campaign


# --- questions ----------------------------------------------------------------------------------


def _where(index: int, name: str = "") -> str:
    return f"question {index + 1}" + (f", {name}" if name else "")


def question_check(spec: dict[str, Any], index: int) -> dict[str, Any]:
    """One question as the form gave it ({key, text, scale, choices: [{value, label, key}],
    multiple, min_choices, max_choices, required, allow_note}), checked and typed as stored:
    ordinal values as numbers, a pairwise question's fixed answers. Raises AnnotationError
    whose field is the form's (q-<index>-<name>, q-<index>-choice-<n>-<name>)."""
    prefix = f"q-{index}-"
    key = str(spec.get("key", "")).strip()
    if not KEY.match(key) or len(key) > 50:
        raise AnnotationError(
            f"{_where(index, 'key')}: lower-case letters, digits, - and _ (at most 50)",
            field=prefix + "key",
        )
    text = str(spec.get("text", "")).strip()
    if not text or len(text) > 500:
        raise AnnotationError(
            f"{_where(index, 'text')}: write the question (at most 500 characters)",
            field=prefix + "text",
        )
    scale = str(spec.get("scale", ""))
    if scale not in Question.Scale.values:
        raise AnnotationError(
            f"{_where(index, 'scale')}: choose one of {', '.join(Question.Scale.values)}",
            field=prefix + "scale",
        )
    # Several answers make sense among categories or an item's own choices, not on a scale.
    multiple = bool(spec.get("multiple")) and scale in MAY_BE_MULTIPLE
    choices: list[dict[str, Any]] = []
    if scale == Question.Scale.PAIRWISE:
        # Fixed: 1 (A better), 0 (tie), -1 (B better) against the canonical order; the
        # studio shows them as the kind's side labels.
        choices = copy.deepcopy(PAIRWISE_CHOICES)
    elif scale in SCALES_WITH_CHOICES:
        choices = _choices_check(spec.get("choices") or [], index, scale)
    min_choices = _count(spec.get("min_choices"), 0, index, "min_choices")
    max_raw = spec.get("max_choices")
    max_choices = None if max_raw in (None, "") else _count(max_raw, 1, index, "max_choices")
    if multiple:
        if max_choices is not None and max_choices < min_choices:
            raise AnnotationError(
                f"{_where(index, 'at most')}: fewer than the least ({min_choices})",
                field=prefix + "max_choices",
            )
        if choices and min_choices > len(choices):
            raise AnnotationError(
                f"{_where(index, 'at least')}: more than its {len(choices)} choices",
                field=prefix + "min_choices",
            )
    else:
        min_choices, max_choices = 0, None
    return {
        "key": key,
        "text": text,
        "scale": scale,
        "choices": choices,
        "multiple": multiple,
        "min_choices": min_choices,
        "max_choices": max_choices,
        "required": bool(spec.get("required")),
        "allow_note": bool(spec.get("allow_note")),
    }


def _count(raw: Any, least: int, index: int, name: str) -> int:
    text = str(raw if raw is not None else "").strip() or "0"
    label = _where(index, name.replace("_", " "))
    try:
        return whole_number(text, name=f"q-{index}-{name}", least=least, most=100, label=label) or 0
    except ParameterError as exc:  # the questions' own error, which their forms show in place
        raise AnnotationError(exc.message, field=exc.field) from None


def _choices_check(raw: Sequence[Any], index: int, scale: str) -> list[dict[str, Any]]:
    choices: list[dict[str, Any]] = []
    values: set[str] = set()
    keys: set[str] = set()
    for n, row in enumerate(raw):
        where = f"{_where(index)}, choice {n + 1}"
        prefix = f"q-{index}-choice-{n}-"
        value = str(row.get("value", "")).strip()
        label = str(row.get("label", "")).strip()
        key = str(row.get("key", "")).strip()
        if not value:
            raise AnnotationError(f"{where}: give its value", field=prefix + "value")
        if scale == Question.Scale.ORDINAL and not NUMBER.match(value):
            raise AnnotationError(
                f"{where}: an ordinal scale's values are numbers, not {value!r}",
                field=prefix + "value",
            )
        if value in values:
            raise AnnotationError(
                f"{where}: the value {value!r} is there twice", field=prefix + "value"
            )
        if not label:
            raise AnnotationError(f"{where}: give its label", field=prefix + "label")
        if len(key) > 1 or (key and not key.isalnum()):
            raise AnnotationError(
                f"{where}: the keyboard key is one letter or digit", field=prefix + "key"
            )
        if key and key in keys:
            raise AnnotationError(f"{where}: the key {key!r} is taken", field=prefix + "key")
        values.add(value)
        keys.add(key)
        typed: Any = value
        if scale == Question.Scale.ORDINAL:
            typed = int(value) if INTEGER.match(value) else float(value)
        choices.append({"value": typed, "label": label, "key": key})
    if len(choices) < 2:
        raise AnnotationError(
            f"{_where(index, 'choices')}: give at least two", field=f"q-{index}-choices"
        )
    return choices


def questions_save(*, campaign: Campaign, questions: Sequence[dict[str, Any]]) -> list[Question]:
    """A draft's questions replaced by these, in this order (all or none: the first wrong one
    is refused, with its field)."""
    setup_editable(campaign)
    if not questions:
        raise AnnotationError("ask at least one question", field="questions")
    checked = [question_check(dict(spec), i) for i, spec in enumerate(questions)]
    seen: dict[str, int] = {}
    for i, spec in enumerate(checked):
        if spec["key"] in seen:
            raise AnnotationError(
                f"{_where(i, 'key')}: {spec['key']!r} is question {seen[spec['key']] + 1}'s key",
                field=f"q-{i}-key",
            )
        seen[spec["key"]] = i
    with transaction.atomic():
        campaign.questions.all().delete()
        return [
            Question.objects.create(campaign=campaign, order=order, **spec)
            for order, spec in enumerate(checked)
        ]


def questions_as_specs(campaign: Campaign) -> list[dict[str, Any]]:
    """A campaign's questions as the questions form edits them."""
    return [
        {
            "key": q.key,
            "text": q.text,
            "scale": q.scale,
            "choices": [
                {
                    "value": str(c.get("value", "")),
                    "label": c.get("label", ""),
                    "key": c.get("key", ""),
                }
                for c in (q.choices or [])
            ],
            "multiple": q.multiple,
            "min_choices": q.min_choices,
            "max_choices": q.max_choices,
            "required": q.required,
            "allow_note": q.allow_note,
        }
        for q in campaign.questions.all()
    ]


# --- items --------------------------------------------------------------------------------------


def items_rebuild(*, campaign: Campaign, request: BuildRequest) -> int:
    """A draft's items built again from what the researcher gave (services.items_build: the
    kind's builders, the limit honoured), replacing those it had; all or nothing."""
    setup_editable(campaign)
    if campaign.labels.exists():
        raise AnnotationError("the campaign has labels: its items stay", field="items")
    with transaction.atomic():
        campaign.items.all().delete()
        added = items_build(campaign=campaign, request=request)
    campaign_totals_forget(campaign.pk)
    return added


# --- members ------------------------------------------------------------------------------------


def member_roles(campaign: Campaign) -> list[str]:
    """The roles a campaign has members in: annotators, and reviewers and adjudicators when
    its kind and stages have them."""
    kind = kind_of(campaign)
    roles = [Member.Role.ANNOTATOR.value]
    if kind.reviewable and campaign.review_stage:
        roles.append(Member.Role.REVIEWER.value)
    if kind.adjudicable and campaign.adjudication_stage:
        roles.append(Member.Role.ADJUDICATOR.value)
    return roles


def members_set(
    *,
    campaign: Campaign,
    by_role: Mapping[str, Sequence[int]],
    labels_per_item: int | None = None,
) -> dict[str, int]:
    """A draft's members, role by role, become exactly these users (ids); returns the count in
    each role. A role the campaign has no stage for is refused, as is an unknown or inactive
    user. `labels_per_item`, when given, is set with them: the number of annotators and the
    labels each item asks of them are chosen together."""
    setup_editable(campaign)
    if labels_per_item is not None:
        labels_per_item_check(labels_per_item)
    allowed = member_roles(campaign)
    for role, ids in by_role.items():
        if role not in Member.Role.values:
            raise AnnotationError(f"no role {role!r}", field="role")
        if ids and role not in allowed:
            raise AnnotationError(
                f"this campaign has no {role}s: turn its stage on in the first step",
                field=role,
            )
    users = get_user_model().objects.filter(is_active=True)
    with transaction.atomic():
        counts: dict[str, int] = {}
        for role in Member.Role.values:
            ids = sorted({int(i) for i in by_role.get(role, [])})
            found = list(users.filter(pk__in=ids).values_list("pk", flat=True))
            if len(found) != len(ids):
                missing = sorted(set(ids) - set(found))
                raise AnnotationError(f"no active user with id {missing[0]}", field=role)
            Member.objects.filter(campaign=campaign, role=role).exclude(user_id__in=ids).delete()
            have = set(
                Member.objects.filter(campaign=campaign, role=role).values_list(
                    "user_id", flat=True
                )
            )
            Member.objects.bulk_create(
                [Member(campaign=campaign, user_id=i, role=role) for i in ids if i not in have]
            )
            counts[role] = len(ids)
        if labels_per_item is not None and labels_per_item != campaign.labels_per_item:
            campaign.labels_per_item = labels_per_item
            campaign.save(update_fields=["labels_per_item"])
    return counts


# --- what is missing, what is risky -------------------------------------------------------------


@dataclass
class Readiness:
    """What a draft has, and what stops it from opening or makes it risky."""

    items: int
    annotators: int
    labels_per_item: int
    missing: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    done: dict[str, bool] = field(default_factory=dict)


def campaign_readiness(campaign: Campaign) -> Readiness:
    items = campaign.items.count()
    roles = dict.fromkeys(Member.Role.values, 0)
    for role in Member.objects.filter(campaign=campaign).values_list("role", flat=True):
        roles[role] += 1
    ready = Readiness(
        items=items, annotators=roles["annotator"], labels_per_item=campaign.labels_per_item
    )
    has_questions = campaign.questions.exists()
    if not has_questions:
        ready.missing.append("ask at least one question")
    if not items:
        ready.missing.append("build the items")
    if not ready.annotators:
        ready.missing.append("add annotators")
    elif ready.annotators < campaign.labels_per_item:
        ready.warnings.append(
            f"{ready.annotators} annotator{'s' if ready.annotators != 1 else ''} for "
            f"{campaign.labels_per_item} labels per item: no item can get all its labels. Add "
            f"{campaign.labels_per_item - ready.annotators} more, or ask fewer labels per item."
        )
    for role in member_roles(campaign)[1:]:
        if not roles[role]:
            ready.warnings.append(f"the {role} stage is on, but the campaign has no {role}")
    ready.done = {
        "details": True,
        "questions": has_questions,
        "items": items > 0,
        "members": ready.annotators > 0,
        "preview": items > 0,
        "open": campaign.status != Campaign.Status.DRAFT,
    }
    return ready


# --- the prefill contract -----------------------------------------------------------------------


@dataclass
class Prefill:
    """What a link into the flow chose already: `/campaigns/new/?kind=pairwise&runs=A,B`
    (run ids) starts a pairwise campaign whose items step has runs A and B chosen."""

    kind: str = ""
    runs: tuple[Run, ...] = ()

    @property
    def run_ids(self) -> str:
        return ",".join(str(run.pk) for run in self.runs)


def prefill_read(params: dict[str, str]) -> Prefill:
    """The prefill a link asks for; an unknown kind or run, or runs a kind does not compare,
    are refused with their field. Runs without a kind choose the first kind that compares
    two runs (the `runs` builder)."""
    kind = params.get("kind", "").strip()
    if kind:
        kind_named(kind)
    raw = [part.strip() for part in params.get("runs", "").split(",") if part.strip()]
    if not raw:
        return Prefill(kind=kind)
    comparing = [name for name, k in kinds().items() if "runs" in k.builders]
    if kind and kind not in comparing:
        raise AnnotationError(
            f"runs: a {kind_named(kind).label.lower()} campaign is not built from two runs",
            field="runs",
        )
    if len(raw) != 2:
        raise AnnotationError("runs: give two run ids, A,B", field="runs")
    try:
        ids = [object_id(part, name="runs", label="runs (two run ids, A,B)") for part in raw]
    except ParameterError as exc:  # the prefill's own error, as its other refusals
        raise AnnotationError(exc.message, field="runs") from None
    by_id = Run.objects.select_related("benchmark").in_bulk(ids)
    runs = []
    for part, pk in zip(raw, ids, strict=True):
        run = by_id.get(pk)
        if run is None:
            raise AnnotationError(f"runs: no run {part}", field="runs")
        runs.append(run)
    a, b = runs
    if a.pk == b.pk:
        raise AnnotationError("runs: compare two different runs", field="runs")
    if (a.benchmark_id, a.task) != (b.benchmark_id, b.task):
        raise AnnotationError(
            "runs: the two runs must be of the same benchmark and task", field="runs"
        )
    return Prefill(kind=kind or comparing[0], runs=(a, b))


def runs_for_items(campaign: Campaign) -> list[Run]:
    """Runs the items step offers (the newest 200): of the campaign's benchmark when it has
    one, and the runs it was set up with."""
    runs = Run.objects.select_related("benchmark").order_by("-pk")
    if campaign.benchmark_id:
        runs = runs.filter(benchmark_id=campaign.benchmark_id)
    chosen = [run for run in (campaign.run_a, campaign.run_b) if run is not None]
    listed = list(runs[:200])
    return [*chosen, *(run for run in listed if run not in chosen)]
