"""Adjudication: an item whose annotators disagree goes to an adjudicator, who sees every
answer and settles on one. The settled answers are stored beside the labels (never over them),
with the history of earlier adjudications kept.

An item is disputed when it has all the labels the campaign asks for and they differ on at
least one question. Refinements are not adjudicated: a campaign settles them with its review
stage.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.utils.crypto import salted_hmac

from annotation.assign import AnnotationError
from annotation.kinds import kind_of
from annotation.models import Adjudication, Campaign, Item, Label, Question


def _comparable(value: Any) -> Any:
    """A value as it is compared: several choices are a set (their order is not an answer)."""
    if isinstance(value, list):
        return frozenset(str(v) for v in value)
    return value


def disagreements(answer_sets: list[dict[str, Any]], keys: list[str]) -> list[str]:
    """The question keys on which the answers differ (a missing answer counts as an answer of
    its own). Fewer than two answer sets never disagree."""
    if len(answer_sets) < 2:
        return []
    return [
        key
        for key in keys
        if len({_comparable_key(answers.get(key)) for answers in answer_sets}) > 1
    ]


def _comparable_key(value: Any) -> Any:
    value = _comparable(value)
    # dicts are not hashable; they are compared by their sorted items.
    if isinstance(value, dict):
        return tuple(sorted((k, repr(v)) for k, v in value.items()))
    return value


def disputed_items(campaign: Campaign) -> QuerySet[Item]:
    """Items with every label they need whose answers are not all the same, compared in the
    database: exact because answers_clean stores several choices in the order of the
    question's choices."""
    current = Q(labels__is_current=True)
    return (
        Item.objects.filter(campaign=campaign, submitted__gte=max(campaign.labels_per_item, 2))
        .annotate(
            n_labels=Count("labels", filter=current),
            n_answers=Count("labels__answers", filter=current, distinct=True),
        )
        .filter(n_labels__gte=2, n_answers__gte=2)
        .annotate(settled=Exists(Adjudication.objects.filter(item=OuterRef("pk"), is_current=True)))
        .order_by("position")
    )


@dataclass
class Dispute:
    item: Item
    labels: list[Label]
    keys: list[str]
    current: Adjudication | None = None
    history: list[Adjudication] = field(default_factory=list)


def dispute_get(item: Item) -> Dispute | None:
    """The item's current labels and where they differ; None if they agree."""
    labels = list(
        Label.objects.filter(item=item, is_current=True)
        .select_related("annotator", "assignment")
        .order_by("created_at")
    )
    keys = list(item.campaign.questions.values_list("key", flat=True))
    differ = disagreements([label.answers for label in labels], keys)
    if not differ:
        return None
    history = list(item.adjudications.select_related("adjudicator").order_by("-created_at"))
    current = next((a for a in history if a.is_current), None)
    return Dispute(item=item, labels=labels, keys=differ, current=current, history=history)


def adjudication_counts(campaign: Campaign) -> dict[str, int]:
    disputed = disputed_items(campaign)
    total = disputed.count()
    settled = disputed.filter(settled=True).count()
    return {"disputed": total, "settled": settled, "open": total - settled}


def adjudication_next(
    *, campaign: Campaign, adjudicator: Any, after: int | None = None
) -> Dispute | None:
    """The first disputed item not settled yet that the adjudicator did not label themselves
    (after a position, to pass over one)."""
    candidates = (
        disputed_items(campaign)
        .filter(settled=False)
        .exclude(
            Exists(
                Label.objects.filter(item=OuterRef("pk"), annotator=adjudicator, is_current=True)
            )
        )
        .select_related("campaign", "sample__benchmark", "tool", "prediction", "prediction_b")
    )
    if after is not None:
        candidates = candidates.filter(position__gt=after)
    for item in candidates.iterator(chunk_size=50):
        dispute = dispute_get(item)
        if dispute is not None:
            return dispute
    return None


def adjudication_submit(
    *,
    item: Item,
    adjudicator: Any,
    answers: dict[str, Any],
    note: str = "",
    replaces: int | None = None,
) -> Adjudication:
    """Settle an item. `replaces` is the adjudication the adjudicator saw as current (None if
    none): if another landed since, nothing is stored and AnnotationError says so, so that no
    one's decision is overwritten unseen. Earlier adjudications stay in the history."""
    campaign = item.campaign
    if not kind_of(campaign).adjudicable:
        raise AnnotationError("refinements are settled by review, not adjudication")
    if not campaign.adjudication_stage:
        raise AnnotationError("this campaign has no adjudication stage")
    with transaction.atomic():
        Item.objects.select_for_update().filter(pk=item.pk).first()
        if Label.objects.filter(item=item, annotator=adjudicator, is_current=True).exists():
            raise AnnotationError("you labeled this item: another adjudicator settles it")
        if dispute_get(item) is None:
            raise AnnotationError("the labels of this item agree now: nothing to settle")
        current = Adjudication.objects.filter(item=item, is_current=True).first()
        if (current.pk if current else None) != replaces:
            who = current.adjudicator.get_username() if current else "someone"
            raise AnnotationError(f"{who} settled this item meanwhile; see their answer")
        if current is not None:
            current.is_current = False
            current.save(update_fields=["is_current"])
        return Adjudication.objects.create(
            item=item, adjudicator=adjudicator, answers=answers, note=note
        )


def settled_answers(item: Item) -> dict[str, Any] | None:
    """The answers that count for an item: the adjudicator's if settled, else the labels' when
    they all agree; None while it is disputed or unlabeled."""
    current = item.adjudications.filter(is_current=True).first()
    if current is not None:
        return current.answers
    labels = list(
        Label.objects.filter(item=item, is_current=True).values_list("answers", flat=True)
    )
    if not labels:
        return None
    keys = list(item.campaign.questions.values_list("key", flat=True))
    return None if disagreements(labels, keys) else labels[0]


def shown_order(item: Item, adjudicator: Any) -> str:
    """The order a sided item's two sides are shown to an adjudicator ("AB": A on the left;
    "" for a kind without sides). An adjudicator of a blind campaign is as blind as its
    annotators: the canonical order would tell them which side is the real API response or
    which run is which, so each adjudicator gets an order of their own per item, as each
    annotator does ("AB" when the campaign does not randomise sides). It is derived from the
    secret key, the item and the adjudicator, so that it is the same on every visit and on
    the submit without being stored or sent."""
    campaign = item.campaign
    if not kind_of(campaign).sided:
        return ""
    if not campaign.randomize_sides:
        return "AB"
    digest = salted_hmac("annotation.adjudication.shown_order", f"{item.pk}:{adjudicator.pk}")
    return "BA" if digest.digest()[0] & 1 else "AB"


PAIRWISE_SHOWN = {"left": "left better", "tie": "tie", "right": "right better"}


def answer_text(question: Question, value: Any, order: str = "AB") -> str:
    """A stored answer as an adjudicator reads it (pairwise as the sides are shown to them:
    `order`, shown_order)."""
    if value is None or value == "" or value == []:
        return "—"
    if question.scale == Question.Scale.PAIRWISE:
        if value not in (1, 0, -1):
            return str(value)
        return PAIRWISE_SHOWN[side_shown(value, order)]
    labels = {str(c["value"]): c.get("label", str(c["value"])) for c in question.choices}
    values = value if isinstance(value, list) else [value]
    return ", ".join(
        f"{v} · {labels[str(v)]}" if str(v) in labels and labels[str(v)] != str(v) else str(v)
        for v in values
    )


def side_shown(value: int, order: str) -> str:
    """A stored pairwise answer (1 A better, 0 a tie, -1 B better) as the side it is on for
    someone shown the sides in `order`: "left", "tie" or "right"."""
    if value == 0:
        return "tie"
    return "left" if (value == 1) == (order != "BA") else "right"
