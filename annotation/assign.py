"""Giving items to annotators, and taking their answers, so that every item gets exactly N
distinct annotators, never the same one twice, however many work at once.

next item: an annotator with a live lease in the campaign gets that item again (a reload, a
second tab). Otherwise leases that ran out are returned to the pool, and the annotator takes the
first open item (fewer than N holders) they have never held, leased or skipped, locked with
SELECT ... FOR UPDATE SKIP LOCKED so that concurrent annotators never wait on each other or take
the same slot. An item's holder count (`active`) and `is_open` change only under its row lock.

submit: under the assignment's lock; a second submit of the same assignment (double click,
another tab) returns the label already stored. A submit after the lease ran out is taken if the
item still has room, and refused with a clear message if someone else took its place.

Each function runs in one transaction and raises AnnotationError for a request that cannot be
carried out, with a message for the annotator.
"""

from __future__ import annotations

import functools
import random
import uuid
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from annotation import rows
from annotation.errors import AnnotationError
from annotation.kinds import kind_of
from annotation.models import Assignment, Campaign, Item, Label
from annotation.selectors import campaign_labels_counted

__all__ = ["AnnotationError", "item_next", "item_skip", "label_undo"]

# OFFSET 0 keeps the NOT EXISTS a per-row probe of the (item, annotator) index. Without it the
# planner may turn it into an anti join, and with statistics taken while the annotator had few
# assignments (a new campaign) it chose one that compares every open item with every assignment
# of theirs: 76 ms, instead of 1.5 ms, for an annotator 1,500 items ahead of the others.
NEXT_SQL = """
SELECT i.id FROM annotation_item i
WHERE i.campaign_id = %s AND i.is_open
  AND NOT EXISTS (
      SELECT 1 FROM annotation_assignment a
      WHERE a.item_id = i.id AND a.annotator_id = %s
        AND a.status IN ('leased', 'submitted', 'skipped')
      OFFSET 0)
ORDER BY i.position
LIMIT 1
FOR UPDATE OF i SKIP LOCKED
"""

EXPIRE_SQL = """
WITH expired AS (
    UPDATE annotation_assignment SET status = 'expired'
    WHERE campaign_id = %s AND status = 'leased' AND lease_until < now()
    RETURNING item_id
), freed AS (
    SELECT item_id, count(*) AS n FROM expired GROUP BY item_id
)
UPDATE annotation_item i SET active = i.active - freed.n, is_open = true
FROM freed WHERE i.id = freed.item_id
"""


def leases_expire(campaign_id: int) -> int:
    """Return the items of leases that ran out to the pool; the number of items freed."""
    with connection.cursor() as cursor:
        cursor.execute(EXPIRE_SQL, [campaign_id])
        return cursor.rowcount


def campaign_closed(campaign: Campaign) -> str:
    """Why the campaign gives out no item ("" while it is active)."""
    if campaign.status != Campaign.Status.ACTIVE:
        return f"the campaign is {campaign.get_status_display().lower()}"
    return ""


def item_next(*, campaign: Campaign, user: Any) -> Assignment | None:
    """The annotator's current item in the campaign: their live lease, or a new one (None when
    no item is left for them). The campaign must be active."""
    closed = campaign_closed(campaign)
    if closed:
        raise AnnotationError(closed)
    now = timezone.now()
    with transaction.atomic():
        # The lease's end is checked here, not in SQL: with it, the planner may walk the
        # lease_until index, which holds an entry for every lease since the last vacuum
        # (each submit leaves one behind), instead of this annotator's few rows.
        row = rows.fetch(_held_sql(), [campaign.pk, user.pk])
        held = rows.instance(Assignment, row) if row is not None else None
        if held is not None and held.lease_until > now:
            return held
        leases_expire(campaign.pk)
        with connection.cursor() as cursor:
            cursor.execute(NEXT_SQL, [campaign.pk, user.pk])
            row = cursor.fetchone()
        if row is None:
            return None
        return _lease(campaign, row[0], user, now)


@functools.cache
def _held_sql() -> str:
    # The annotator's latest lease in the campaign (written once: on every next item's path).
    return rows.select(
        Assignment,
        "a",
        "WHERE a.campaign_id = %s AND a.annotator_id = %s AND a.status = 'leased'"
        " ORDER BY a.leased_at DESC LIMIT 1",
    )


# The item's holder count and the new assignment in one statement (one round trip on the path
# every annotator takes for every item). The item row is locked by NEXT_SQL.
LEASE_SQL = """
WITH slot AS (
    UPDATE annotation_item SET active = active + 1, is_open = active + 1 < %(n)s
    WHERE id = %(item)s RETURNING id
)
INSERT INTO annotation_assignment
    (campaign_id, item_id, annotator_id, status, shown_order, leased_at, lease_until)
SELECT %(campaign)s, slot.id, %(user)s, 'leased', %(shown)s, %(now)s, %(until)s FROM slot
RETURNING id
"""


def _lease(campaign: Campaign, item_id: int, user: Any, now: Any) -> Assignment:
    shown = ""
    if kind_of(campaign).sided:
        shown = random.choice(("AB", "BA")) if campaign.randomize_sides else "AB"
    assignment = Assignment(
        campaign=campaign,
        item_id=item_id,
        annotator=user,
        status=Assignment.Status.LEASED,
        shown_order=shown,
        leased_at=now,
        lease_until=now + timedelta(seconds=campaign.lease_seconds),
    )
    with connection.cursor() as cursor:
        cursor.execute(
            LEASE_SQL,
            {
                "n": campaign.labels_per_item,
                "item": item_id,
                "campaign": campaign.pk,
                "user": user.pk,
                "shown": shown,
                "now": now,
                "until": assignment.lease_until,
            },
        )
        assignment.pk = cursor.fetchone()[0]
    assignment._state.adding = False
    return assignment


def _locked_assignment(campaign: Campaign, assignment_id: int, user: Any) -> Assignment:
    """The user's assignment in this campaign, locked: a studio action names the campaign in
    its URL, and an assignment of theirs in another campaign (one they were removed from) is
    no item of theirs here. Written once (on every submit's path); its campaign and item are
    read only if asked for."""
    row = rows.fetch(_locked_sql(), [assignment_id, campaign.pk, user.pk])
    if row is None:
        raise AnnotationError("no such item for you")
    return rows.instance(Assignment, row)


@functools.cache
def _locked_sql() -> str:
    return rows.select(
        Assignment,
        "a",
        "WHERE a.id = %s AND a.campaign_id = %s AND a.annotator_id = %s FOR UPDATE",
    )


def item_skip(*, campaign: Campaign, assignment_id: int, user: Any) -> None:
    """The annotator passes on their item in the campaign: it returns to the pool (for
    others)."""
    with transaction.atomic():
        assignment = _locked_assignment(campaign, assignment_id, user)
        if assignment.status != Assignment.Status.LEASED:
            raise AnnotationError("only an item you hold can be skipped")
        assignment.status = Assignment.Status.SKIPPED
        assignment.save(update_fields=["status"])
        _release_slot(assignment.item_id)


def _release_slot(item_id: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE annotation_item SET active = active - 1, is_open = true WHERE id = %s",
            [item_id],
        )


def _retake_slot(assignment: Assignment) -> None:
    """A submit after the lease ran out: take the item back if it still has room."""
    item = Item.objects.select_for_update().get(pk=assignment.item_id)
    if item.active >= assignment.campaign.labels_per_item:
        raise AnnotationError(
            "your time on this item ran out and it went to another annotator; your answer "
            "was not stored"
        )
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE annotation_item SET active = active + 1, is_open = active + 1 < %s "
            "WHERE id = %s",
            [assignment.campaign.labels_per_item, item.pk],
        )


def _label_store(
    *,
    campaign: Campaign,
    assignment_id: int,
    user: Any,
    answers: dict[str, Any],
    token: uuid.UUID,
    note: str = "",
    time_ms: int | None = None,
    review: str = "",
) -> tuple[Label, bool]:
    """Store the annotator's (already validated) answers for their item in the campaign;
    (label, created). Private: its one caller is annotation.submit.answers_submit, which checks
    the answers and does what the campaign's kind does on a submit (CampaignKind.on_submit),
    so that no way in stores a label without them.

    Idempotent: the same token, or a second submit of an assignment already submitted, returns
    the stored label with created=False. Raises AnnotationError when the item is not theirs in
    this campaign, was skipped, or went to someone else after the lease ran out."""
    # One read for both: a label already stored with this form's token (a double click, a
    # second tab), and an earlier, undone label of this assignment (the new one supersedes it).
    known = [
        rows.instance(Label, row) for row in rows.fetch_all(_known_sql(), [token, assignment_id])
    ]
    same = next((label for label in known if label.token == token), None)
    if same is not None:
        if same.annotator_id != user.pk or same.campaign_id != campaign.pk:
            raise AnnotationError("this form was not yours")
        return same, False
    try:
        with transaction.atomic():
            assignment = _locked_assignment(campaign, assignment_id, user)
            if assignment.status == Assignment.Status.SUBMITTED:
                current = Label.objects.get(assignment=assignment, is_current=True)
                return current, False
            if assignment.status == Assignment.Status.SKIPPED:
                raise AnnotationError("you skipped this item")
            if assignment.status == Assignment.Status.EXPIRED:
                again = (
                    Assignment.objects.select_for_update(of=("self",))
                    .select_related("campaign", "item")
                    .filter(
                        item_id=assignment.item_id, annotator=user, status=Assignment.Status.LEASED
                    )
                    .first()
                )
                if again is not None:
                    # The item came back to them under a new lease (a reload): answer that one.
                    assignment = again
                    known = list(
                        Label.objects.filter(assignment=assignment, is_current=False).order_by(
                            "-created_at"
                        )
                    )
                else:
                    _retake_slot(assignment)
            previous = next((lb for lb in known if lb.assignment_id == assignment.pk), None)
            label = rows.insert(
                Label(
                    campaign_id=assignment.campaign_id,
                    item_id=assignment.item_id,
                    assignment=assignment,
                    annotator=user,
                    answers=answers,
                    note=note,
                    token=token,
                    time_ms=time_ms,
                    review=review,
                    supersedes_id=previous.pk if previous else None,
                )
            )
            assignment.status = Assignment.Status.SUBMITTED
            assignment.submitted_at = timezone.now()
            with connection.cursor() as cursor:
                cursor.execute(SUBMITTED_SQL, [assignment.submitted_at, assignment.pk])
            counted = assignment.campaign_id
            transaction.on_commit(lambda: campaign_labels_counted(counted, 1))
    except IntegrityError:
        # Not reached by a second submit of the same form (the assignment's lock orders them,
        # and the second finds it submitted): a label of theirs for this item under another
        # assignment. The transaction is undone whole.
        raise AnnotationError("this item already has your answer") from None
    return label, True


@functools.cache
def _known_sql() -> str:
    return rows.select(
        Label,
        "l",
        "WHERE l.token = %s OR (l.assignment_id = %s AND NOT l.is_current)"
        " ORDER BY l.created_at DESC",
    )


# The assignment's status and the item's count of answers, in one round trip.
SUBMITTED_SQL = """
WITH a AS (
    UPDATE annotation_assignment SET status = 'submitted', submitted_at = %s
    WHERE id = %s RETURNING item_id
)
UPDATE annotation_item SET submitted = submitted + 1 WHERE id = (SELECT item_id FROM a)
"""


def label_undo(*, campaign: Campaign, user: Any) -> Assignment:
    """Take back the annotator's last answer in the campaign: the label stays in the history
    (no longer current, marked revoked) and the item is theirs again, under a fresh lease.
    An answer already approved by a reviewer cannot be taken back."""
    with transaction.atomic():
        label = (
            Label.objects.select_for_update()
            .filter(campaign=campaign, annotator=user, is_current=True)
            .order_by("-created_at")
            .first()
        )
        if label is None:
            raise AnnotationError("there is no answer of yours to undo")
        if label.review == Label.Review.APPROVED:
            raise AnnotationError("your last answer was already approved by a reviewer")
        # Holding a lease on another item: give it back first (one item at a time).
        for held in Assignment.objects.select_for_update().filter(
            campaign=campaign, annotator=user, status=Assignment.Status.LEASED
        ):
            held.status = Assignment.Status.EXPIRED
            held.save(update_fields=["status"])
            _release_slot(held.item_id)
        label.is_current = False
        label.revoked_at = timezone.now()
        label.save(update_fields=["is_current", "revoked_at"])
        assignment = Assignment.objects.select_for_update().get(pk=label.assignment_id)
        assignment.status = Assignment.Status.LEASED
        assignment.submitted_at = None
        assignment.lease_until = timezone.now() + timedelta(seconds=campaign.lease_seconds)
        assignment.save(update_fields=["status", "submitted_at", "lease_until"])
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE annotation_item SET submitted = submitted - 1 WHERE id = %s",
                [assignment.item_id],
            )
        transaction.on_commit(lambda: campaign_labels_counted(campaign.pk, -1))
    return assignment
