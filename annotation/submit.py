"""Submitting an annotator's answers: the one use case the page and the API both call, so that an
answer is checked, stored and acted on the same way whichever way it came in."""

from __future__ import annotations

import uuid
from contextlib import nullcontext
from typing import Any

from django.db import transaction

# The locked storage step of a submit; this module is its only caller (the public one is
# answers_submit).
from annotation.assign import _label_store
from annotation.kinds import kind_of
from annotation.models import Assignment, Campaign, Label
from annotation.selectors import campaign_questions
from annotation.services import answers_clean


def answers_submit(
    *,
    campaign: Campaign,
    assignment: Assignment,
    user: Any,
    raw: dict[str, Any],
    token: uuid.UUID,
    note: str = "",
    time_ms: int | None = None,
) -> tuple[Label, bool]:
    """Check the answers as sent (`raw`: pairwise as the side shown) against the campaign's
    questions, store them as the annotator's label for their assignment, and do what the
    campaign's kind does on a submit (CampaignKind.on_submit): a refinement carries the
    refined sample, awaits review when the campaign has a review stage, and otherwise becomes
    the sample's next revision at once. (label, created); a second submit of the same form
    stores nothing (created False).

    Raises AnnotationError naming the question (or "verdict") when an answer is refused, or
    when the item is no longer the annotator's; nothing is stored then."""
    answers = answers_clean(
        questions=campaign_questions(campaign),
        item=assignment.item,
        raw=raw,
        shown_order=assignment.shown_order,
    )
    kind = kind_of(campaign)
    # The kind's own answers, as sent: its on_submit checks them.
    extra = {name: raw.get(name) for name in kind.extra_fields}
    submission = kind.on_submit(
        campaign=campaign, assignment=assignment, answers={**answers, **extra}
    )
    # Only a submit that acts on what it stored needs the outer transaction (a submit is on
    # every annotator's path all day: no savepoints it does not need).
    with transaction.atomic() if submission.then else nullcontext():
        label, created = _label_store(
            campaign=campaign,
            assignment_id=assignment.pk,
            user=user,
            answers=submission.answers,
            token=token,
            note=note,
            time_ms=time_ms,
            review=submission.review,
        )
        if created and submission.then is not None:
            # An error here (a refinement that landed first) undoes the label too.
            submission.then(label)
    return label, created
