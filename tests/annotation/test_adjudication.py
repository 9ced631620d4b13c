"""Adjudication: disputed items found, settled by someone who did not label them, with the
history kept and no decision overwritten unseen."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.test import Client

from annotation.adjudication import (
    adjudication_counts,
    adjudication_next,
    adjudication_submit,
    disagreements,
    settled_answers,
)
from annotation.assign import AnnotationError, item_next
from annotation.models import Adjudication, Campaign, Item, Member
from annotation.services import answers_clean, members_add
from tests.annotation.conftest import motivation_campaign
from tests.factories import make_user, store_label

pytestmark = pytest.mark.django_db


# --- the pure check -----------------------------------------------------------------------------


def test_answers_that_differ_on_a_question_are_a_disagreement() -> None:
    a = {"reason": ["A", "B"], "ok": 1}
    b = {"reason": ["B", "A"], "ok": 1}  # the same choices in another order agree
    c = {"reason": ["A"], "ok": 1}
    assert disagreements([a, b], ["reason", "ok"]) == []
    assert disagreements([a, b, c], ["reason", "ok"]) == ["reason"]
    assert disagreements([{"ok": 1}, {"ok": -1}], ["ok"]) == ["ok"]
    # a missing answer is an answer of its own; one label never disagrees
    assert disagreements([{"ok": 1}, {}], ["ok"]) == ["ok"]
    assert disagreements([{"ok": 1}], ["ok"]) == []


# --- the service --------------------------------------------------------------------------------


def label(campaign: Campaign, user: Any, categories: list[str]) -> Item:
    assignment = item_next(campaign=campaign, user=user)
    assert assignment is not None
    answers = answers_clean(
        questions=list(campaign.questions.all()),
        item=assignment.item,
        raw={"reason": categories},
        shown_order="",
    )
    store_label(
        campaign=assignment.campaign,
        assignment_id=assignment.pk,
        user=user,
        answers=answers,
        token=uuid.uuid4(),
    )
    return assignment.item


def disputed_campaign() -> tuple[Campaign, list[Any], Any]:
    """Three tools, two annotators: they agree on the first tool (choosing in another order:
    answers are stored in the order of the choices, so the database compares them), disagree
    on the second, and the third has one label only."""
    campaign, users = motivation_campaign(tools=3, labels_per_item=2, annotators=2)
    Campaign.objects.filter(pk=campaign.pk).update(adjudication_stage=True)
    # A researcher let several reasons apply.
    campaign.questions.update(multiple=True)
    campaign.refresh_from_db()
    first, second = users
    for user, answers in ((first, ["A", "B"]), (second, ["B", "A"])):
        label(campaign, user, answers)
    label(campaign, first, ["C"])
    label(campaign, second, ["D"])
    label(campaign, first, ["A"])
    judge = make_user()
    members_add(campaign=campaign, users=[judge], role=Member.Role.ADJUDICATOR)
    return campaign, users, judge


def test_only_complete_items_whose_labels_differ_are_disputed() -> None:
    campaign, _, judge = disputed_campaign()
    assert adjudication_counts(campaign) == {"disputed": 1, "settled": 0, "open": 1}
    dispute = adjudication_next(campaign=campaign, adjudicator=judge)
    assert dispute is not None and dispute.item.position == 1
    assert dispute.keys == ["reason"]
    assert sorted(lab.answers["reason"][0] for lab in dispute.labels) == ["C", "D"]
    assert settled_answers(dispute.item) is None
    agreed = Item.objects.get(campaign=campaign, position=0)
    assert settled_answers(agreed) == {"reason": ["A", "B"]}


def test_an_annotator_of_the_item_does_not_settle_it() -> None:
    campaign, (first, _), judge = disputed_campaign()
    members_add(campaign=campaign, users=[first], role=Member.Role.ADJUDICATOR)
    assert adjudication_next(campaign=campaign, adjudicator=first) is None
    assert adjudication_next(campaign=campaign, adjudicator=judge) is not None
    item = Item.objects.get(campaign=campaign, position=1)
    with pytest.raises(AnnotationError, match="you labeled this item"):
        adjudication_submit(item=item, adjudicator=first, answers={"reason": ["C"]})


def test_a_settlement_is_kept_in_history_and_not_overwritten_unseen() -> None:
    campaign, _, judge = disputed_campaign()
    other = make_user()
    item = Item.objects.select_related("campaign").get(campaign=campaign, position=1)
    first = adjudication_submit(item=item, adjudicator=judge, answers={"reason": ["C"]})
    assert settled_answers(item) == {"reason": ["C"]}
    assert adjudication_counts(campaign)["open"] == 0
    assert adjudication_next(campaign=campaign, adjudicator=judge) is None
    # Another adjudicator who saw no settlement is told, and nothing is stored.
    with pytest.raises(AnnotationError, match="settled this item meanwhile"):
        adjudication_submit(item=item, adjudicator=other, answers={"reason": ["D"]})
    # Replacing what one saw keeps the earlier decision in the history.
    adjudication_submit(
        item=item, adjudicator=other, answers={"reason": ["C", "D"]}, replaces=first.pk
    )
    history = list(Adjudication.objects.filter(item=item).order_by("created_at"))
    assert [(a.answers["reason"], a.is_current) for a in history] == [
        (["C"], False),
        (["C", "D"], True),
    ]
    assert settled_answers(item) == {"reason": ["C", "D"]}


# --- the page -----------------------------------------------------------------------------------


def test_the_adjudicator_settles_on_the_page_and_others_get_404(client: Client) -> None:
    campaign, (first, _), judge = disputed_campaign()
    client.force_login(first)  # an annotator, not an adjudicator
    assert client.get(f"/adjudicate/{campaign.pk}/").status_code == 404
    client.force_login(judge)
    page = client.get(f"/adjudicate/{campaign.pk}/").content.decode()
    assert "1</strong> disputed items open" in page
    assert "differs" in page
    item = Item.objects.get(campaign=campaign, position=1)
    other_campaign, _ = motivation_campaign(tools=1, labels_per_item=1, annotators=1)
    foreign = Item.objects.get(campaign=other_campaign)
    assert (
        client.post(f"/adjudicate/{campaign.pk}/{foreign.pk}/", {"reason": "C"}).status_code == 404
    )
    response = client.post(
        f"/adjudicate/{campaign.pk}/{item.pk}/",
        {"reason": ["D", "C"], "note": "both apply"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert "Nothing to settle" in response.content.decode()
    settled = Adjudication.objects.get(item=item)
    # several choices are stored in the order of the question's choices
    assert (settled.answers, settled.note, settled.adjudicator) == (
        {"reason": ["C", "D"]},
        "both apply",
        judge,
    )
    # reopened, the form shows the settled answer; a stale form is refused, losing nothing
    reopened = client.get(f"/adjudicate/{campaign.pk}/?item={item.pk}").content.decode()
    assert f'name="replaces" value="{settled.pk}"' in reopened
    stale = client.post(f"/adjudicate/{campaign.pk}/{item.pk}/", {"reason": ["A"]})
    assert "settled this item meanwhile" in stale.content.decode()
    assert Adjudication.objects.filter(item=item).count() == 1


def test_a_campaign_without_the_stage_has_no_adjudication_page(client: Client) -> None:
    campaign, _ = motivation_campaign(tools=1, labels_per_item=1, annotators=1)
    judge = make_user()
    members_add(campaign=campaign, users=[judge], role=Member.Role.ADJUDICATOR)
    client.force_login(judge)
    assert client.get(f"/adjudicate/{campaign.pk}/").status_code == 404


def test_a_refinement_campaign_is_settled_by_review_not_adjudication() -> None:
    from annotation.services import campaign_create

    with pytest.raises(
        AnnotationError, match=r"adjudication_stage: .* no adjudication stage: a reviewer settles"
    ):
        campaign_create(name="r", kind="refinement", adjudication_stage=True)
    assert not Campaign.objects.filter(name="r").exists()
