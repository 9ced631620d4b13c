"""The next-item service and submits against real PostgreSQL: exactly N distinct annotators per
item under concurrency, leases, skips, double submits, undo with history."""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from annotation.assign import AnnotationError, item_next, item_skip, label_undo
from annotation.models import Assignment, Item, Label
from tests.annotation.conftest import motivation_campaign
from tests.factories import store_label


def answer(assignment: Assignment, user, choice: str = "A") -> Label:  # type: ignore[no-untyped-def]
    label, _ = store_label(
        campaign=assignment.campaign,
        assignment_id=assignment.pk,
        user=user,
        answers={"reason": choice},
        token=uuid.uuid4(),
    )
    return label


@pytest.mark.django_db(transaction=True)
def test_twenty_annotators_at_once_give_every_item_exactly_n_distinct_labels() -> None:
    # given 60 items that need 3 labels each, and 20 annotators working in parallel threads
    campaign, users = motivation_campaign(tools=60, labels_per_item=3, annotators=20)
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(users))
    # An annotator told "nothing for you now" stops only when nobody else is between asking and
    # answering and nobody skipped since they asked: a skip reopens an item, and an annotator who
    # had stopped before it (all items held by others at that moment) could no longer take it,
    # leaving it one label short whatever the service does.
    lock = threading.Lock()
    state = {"busy": 0, "skips": 0}

    def work(user) -> None:  # type: ignore[no-untyped-def]
        try:
            barrier.wait()
            rng = random.Random(user.pk)
            while True:
                with lock:
                    state["busy"] += 1
                    skips_seen = state["skips"]
                assignment = item_next(campaign=campaign, user=user)
                if assignment is None:
                    with lock:
                        state["busy"] -= 1
                        if errors or (state["busy"] == 0 and state["skips"] == skips_seen):
                            return
                    time.sleep(0.01)
                    continue
                if rng.random() < 0.1:
                    item_skip(campaign=assignment.campaign, assignment_id=assignment.pk, user=user)
                    with lock:
                        state["skips"] += 1
                        state["busy"] -= 1
                    continue
                token = uuid.uuid4()
                answer_once = {"reason": rng.choice("ABCD")}
                # a double click: the same form sent twice
                for _ in range(2 if rng.random() < 0.2 else 1):
                    store_label(
                        campaign=assignment.campaign,
                        assignment_id=assignment.pk,
                        user=user,
                        answers=answer_once,
                        token=token,
                    )
                with lock:
                    state["busy"] -= 1
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(user,)) for user in users]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    # then
    assert not errors, errors
    labels = list(Label.objects.filter(campaign=campaign, is_current=True))
    per_item = Counter(label.item_id for label in labels)
    assert set(per_item.values()) == {3} and len(per_item) == 60
    pairs = Counter((label.item_id, label.annotator_id) for label in labels)
    assert max(pairs.values()) == 1  # never the same (item, annotator) twice
    assert Label.objects.filter(campaign=campaign).count() == 180  # double clicks stored once
    items = Item.objects.filter(campaign=campaign)
    assert {(i.active, i.submitted, i.is_open) for i in items} == {(3, 3, False)}


@pytest.mark.django_db
def test_an_expired_lease_returns_the_item_to_the_pool() -> None:
    campaign, (ann1, ann2) = motivation_campaign(tools=1, labels_per_item=1, annotators=2)
    first = item_next(campaign=campaign, user=ann1)
    assert first is not None
    assert item_next(campaign=campaign, user=ann2) is None  # held by ann1
    Assignment.objects.filter(pk=first.pk).update(lease_until=timezone.now() - timedelta(1))
    second = item_next(campaign=campaign, user=ann2)
    assert second is not None and second.item_id == first.item_id
    # ann1's late answer is refused: the item went to ann2
    with pytest.raises(AnnotationError, match="went to another annotator"):
        answer(first, ann1)
    answer(second, ann2)
    assert Label.objects.filter(item_id=first.item_id).count() == 1


@pytest.mark.django_db
def test_a_late_answer_is_taken_while_the_item_still_has_room() -> None:
    campaign, (ann1,) = motivation_campaign(tools=1, labels_per_item=1, annotators=1)
    first = item_next(campaign=campaign, user=ann1)
    assert first is not None
    Assignment.objects.filter(pk=first.pk).update(lease_until=timezone.now() - timedelta(1))
    # the sweep runs when someone asks for an item
    assert item_next(campaign=campaign, user=ann1) is not None
    label = answer(first, ann1)
    assert label.is_current and Item.objects.get().submitted == 1


@pytest.mark.django_db
def test_a_reload_gives_the_same_item_and_a_skip_never_comes_back() -> None:
    campaign, (ann,) = motivation_campaign(tools=2, labels_per_item=1, annotators=1)
    first = item_next(campaign=campaign, user=ann)
    assert item_next(campaign=campaign, user=ann) == first
    item_skip(campaign=first.campaign, assignment_id=first.pk, user=ann)
    second = item_next(campaign=campaign, user=ann)
    assert second.item_id != first.item_id
    answer(second, ann)
    assert item_next(campaign=campaign, user=ann) is None  # the skipped one is not offered again


@pytest.mark.django_db
def test_undo_keeps_the_history_and_gives_the_item_back() -> None:
    campaign, (ann,) = motivation_campaign(tools=2, labels_per_item=1, annotators=1)
    first = item_next(campaign=campaign, user=ann)
    wrong = answer(first, ann, "A")
    holding = item_next(campaign=campaign, user=ann)  # already on the next item
    # when
    again = label_undo(campaign=campaign, user=ann)
    # then the first item is theirs again, the second back in the pool
    assert again.pk == first.pk and again.status == Assignment.Status.LEASED
    assert Assignment.objects.get(pk=holding.pk).status == Assignment.Status.EXPIRED
    right = answer(again, ann, "C")
    wrong.refresh_from_db()
    assert (wrong.is_current, wrong.revoked_at is not None) == (False, True)
    assert right.supersedes_id == wrong.pk and right.answers == {"reason": "C"}
    assert Label.objects.filter(item_id=first.item_id).count() == 2  # nothing overwritten
    assert Item.objects.get(pk=first.item_id).submitted == 1


@pytest.mark.django_db
def test_someone_elses_assignment_is_not_found() -> None:
    campaign, (ann1, ann2) = motivation_campaign(tools=2, labels_per_item=1, annotators=2)
    first = item_next(campaign=campaign, user=ann1)
    with pytest.raises(AnnotationError, match="no such item"):
        answer(first, ann2)
