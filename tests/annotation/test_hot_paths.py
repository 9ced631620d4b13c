"""The requests every annotator makes all day: what they read does not grow with the campaign,
and the counts they are shown are right."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from annotation import services
from annotation.assign import item_next, label_undo
from annotation.selectors import annotator_progress, campaign_totals
from tests.annotation.conftest import motivation_campaign
from tests.factories import make_tool, store_label

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def clean_cache() -> None:
    cache.clear()


def answer_one(campaign: Any, user: Any) -> None:
    assignment = item_next(campaign=campaign, user=user)
    store_label(
        campaign=assignment.campaign,
        assignment_id=assignment.pk,
        user=user,
        answers={"reason": "A"},
        token=uuid.uuid4(),
    )


def test_the_campaign_list_counts_items_and_only_ones_own_answers(client: Client) -> None:
    # given a campaign of 5 items, 2 labels each; ann answers 3, the other annotator 2
    campaign, (ann, other) = motivation_campaign(tools=5, labels_per_item=2, annotators=2)
    for _ in range(3):
        answer_one(campaign, ann)
    for _ in range(2):
        answer_one(campaign, other)
    client.force_login(ann)
    # when ann lists their campaigns
    (listed,) = client.get("/api/campaigns/").json()
    # then the items are counted once each (not once per label), and only ann's answers
    assert (listed["items"], listed["mine"]) == (5, 3)
    page = client.get("/annotate/").content.decode()
    assert campaign.name in page


@pytest.mark.parametrize("tools", [3, 60])
def test_next_and_submit_read_the_same_few_queries_however_large_the_campaign(
    client: Client, django_assert_num_queries: Any, tools: int
) -> None:
    campaign, (ann,) = motivation_campaign(tools=tools, labels_per_item=1, annotators=1)
    client.force_login(ann)
    client.get("/annotate/")  # the session's first request
    answer_one(campaign, ann)  # an answer of theirs exists, as all day long
    campaign_totals(campaign)  # the campaign's counts are cached, as all day long
    # the session (in PostgreSQL, never in Redis), user, campaign and membership, held lease,
    # expired leases, the next item, its holder count with the new assignment, the annotator's
    # count, the item and its tool; and the test's savepoint around the transaction, twice
    with django_assert_num_queries(1 + 8 + 2):
        given = client.post(f"/api/campaigns/{campaign.pk}/next/").json()
    body = {"assignment": given["assignment"], "answers": {"reason": "B"}}
    # the session, user, campaign and membership, the assignment and its item, the questions,
    # labels with the token or undone on the assignment, the locked assignment, the label, the
    # assignment's status with the item's count; and the test's savepoint around the
    # transaction, twice
    with django_assert_num_queries(1 + 8 + 2):
        response = client.post(
            f"/api/campaigns/{campaign.pk}/submit/",
            {**body, "token": str(uuid.uuid4())},
            content_type="application/json",
        )
    assert response.status_code == 201


def test_building_more_items_shows_in_the_progress_at_once(
    django_capture_on_commit_callbacks: Any,
) -> None:
    campaign, (ann,) = motivation_campaign(tools=3, labels_per_item=2, annotators=1)
    answer_one(campaign, ann)
    assert annotator_progress(campaign, ann) == {
        "mine": 1,
        "items": 3,
        "labels": 1,
        "needed": 6,
        "percent": 17,
    }
    make_tool(benchmark=campaign.benchmark, name="extra", description="One more")
    # when the researcher builds the items again (every tool once more: 4 new items)
    with django_capture_on_commit_callbacks(execute=True):
        services.items_from_tools(campaign=campaign)
    # then the item count is exact at once; labels may be a few seconds old, not the items
    assert campaign_totals(campaign)[0] == 7
    assert annotator_progress(campaign, ann)["needed"] == 14


def test_the_campaigns_label_count_follows_each_answer_and_undo_at_once(
    django_capture_on_commit_callbacks: Any,
) -> None:
    # given a campaign whose counts are cached, as all day long
    campaign, (ann, other) = motivation_campaign(tools=3, labels_per_item=2, annotators=2)
    assert campaign_totals(campaign) == (3, 0)
    # when two annotators answer, one of them twice with the same form (a double click)
    with django_capture_on_commit_callbacks(execute=True):
        answer_one(campaign, ann)
        assignment = item_next(campaign=campaign, user=other)
        token = uuid.uuid4()
        for _ in range(2):
            store_label(
                campaign=campaign,
                assignment_id=assignment.pk,
                user=other,
                answers={"reason": "A"},
                token=token,
            )
    # then the count under everyone's progress says so at once, each answer counted once
    assert campaign_totals(campaign) == (3, 2)
    assert annotator_progress(campaign, other)["labels"] == 2
    # and an answer taken back is no longer counted
    with django_capture_on_commit_callbacks(execute=True):
        label_undo(campaign=campaign, user=ann)
    assert campaign_totals(campaign) == (3, 1)
    assert campaign.labels.filter(is_current=True).count() == 1


@pytest.mark.parametrize("tools", [3, 80])
def test_a_pairwise_item_with_its_suite_context_reads_the_same_few_queries(
    client: Client, django_assert_num_queries: Any, tools: int
) -> None:
    from tests.annotation.judge_items import metatool_pair

    # a MetaTool pair whose runs offered `tools` candidates, each described on the page
    campaign, ann = metatool_pair(extra_tools=tools - 3)
    client.force_login(ann)
    client.get("/annotate/")  # the session's first request
    campaign_totals(campaign)  # the campaign's counts are cached, as all day long
    # the session, user, campaign and membership, held lease, expired leases, the next item,
    # its holder count with the new assignment, the annotator's count, the item with its
    # sample, both predictions and their runs (one query), the offered tools (one query however
    # many); and the test's savepoint around the transaction, twice
    with django_assert_num_queries(1 + 9 + 2):
        given = client.post(f"/api/campaigns/{campaign.pk}/next/").json()
    assert len(given["item"]["tools"]) == tools


def test_next_and_submit_cost_no_more_python_than_two_one_query_pages(settings: Any) -> None:
    """CPU time is noisy on a shared machine; the number of Python function calls a request
    makes is not. A next+submit pair makes about 15,700 calls against 16,600 for two requests of
    the one-query page (an endpoint's detail); ORM compilation of the campaign, the locked
    assignment, the labels and the user, a Redis client built per cache call and a pickled
    throttle history on that path together took it to 38,000."""
    import cProfile
    import pstats

    from django.contrib.auth.models import Permission
    from rest_framework.throttling import ScopedRateThrottle

    from evaluation.models import Endpoint

    rates = {"annotation": "1000000/s", "annotation-submit": "1000000/s"}
    campaign, (ann,) = motivation_campaign(tools=80, labels_per_item=1, annotators=1)
    ann.user_permissions.add(Permission.objects.get(codename="view_endpoint"))
    endpoint = Endpoint.objects.create(name="e", base_url="http://127.0.0.1:9/v1", model="m")
    client = Client(enforce_csrf_checks=True)
    client.force_login(ann)
    client.get("/annotate/")
    token = client.cookies["csrftoken"].value

    def submit(body: dict[str, Any]) -> dict[str, Any]:
        response = client.post(
            f"/api/campaigns/{campaign.pk}/submit/",
            {**body, "answers": {"reason": "B"}, "token": str(uuid.uuid4())},
            content_type="application/json",
            HTTP_X_CSRFTOKEN=token,
        )
        assert response.status_code == 201, response.content
        return response.json()

    def pair() -> None:
        given = client.post(f"/api/campaigns/{campaign.pk}/next/", HTTP_X_CSRFTOKEN=token)
        submit({"assignment": given.json()["assignment"]})

    def pages() -> None:
        for _ in range(2):
            assert client.get(f"/api/endpoints/{endpoint.pk}/").status_code == 200

    def calls(work: Any, rounds: int = 20) -> float:
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(rounds):
            work()
        profile.disable()
        return pstats.Stats(profile).total_calls / rounds  # type: ignore[attr-defined]

    given: dict[str, Any] = {}

    def one_request_pair() -> None:
        # As the studio page (and --protocol one): the submit brings the next item.
        given.update(submit({"assignment": given["assignment"], "next": True})["next"])

    original = ScopedRateThrottle.THROTTLE_RATES
    ScopedRateThrottle.THROTTLE_RATES = rates
    try:
        for _ in range(5):  # warm: caches, the script's hash, the statements' text
            pair()
            pages()
        studio, baseline = calls(pair), calls(pages)
        given.update(
            client.post(f"/api/campaigns/{campaign.pk}/next/", HTTP_X_CSRFTOKEN=token).json()
        )
        one_request_pair()
        combined = calls(one_request_pair)
    finally:
        ScopedRateThrottle.THROTTLE_RATES = original
    assert studio <= 1.1 * baseline, (studio, baseline)
    # A submit that brings the next item costs about one page: under 0.6 of the two pages
    # (8,000 calls against 8,300 per page when written; 12,700 while four of its statements
    # were still compiled by the ORM, which fails this).
    assert combined <= 0.6 * baseline, (combined, baseline)


def test_a_submit_can_bring_the_next_item_as_the_studio_page_does(
    client: Client, django_assert_max_num_queries: Any
) -> None:
    """One request per item, as the browser's studio makes it: the submit stores the answer
    and answers with the annotator's next item, exactly what `next` would have given."""
    campaign, (ann,) = motivation_campaign(tools=4, labels_per_item=1, annotators=1)
    client.force_login(ann)
    client.get("/annotate/")  # the session's first request
    answer_one(campaign, ann)
    campaign_totals(campaign)
    given = client.post(f"/api/campaigns/{campaign.pk}/next/").json()
    seen = [given["item"]["id"]]
    for _ in range(3):
        body = {"assignment": given["assignment"], "answers": {"reason": "B"}, "next": True}
        # the session, the submit's 8 and the next item's 6 (no second user, campaign or
        # membership read); and the test's savepoints around each of the two transactions
        # (fewer when none is left: no lease taken, no item read)
        with django_assert_max_num_queries(1 + 8 + 6 + 4):
            response = client.post(
                f"/api/campaigns/{campaign.pk}/submit/",
                {**body, "token": str(uuid.uuid4())},
                content_type="application/json",
            )
        assert response.status_code == 201, response.content
        answer = response.json()
        assert answer["created"] is True and isinstance(answer["label"], int)
        given = answer["next"]
        if given["assignment"] is None:
            break
        # the next item is the one `next` gives now: the live lease it took
        assert client.post(f"/api/campaigns/{campaign.pk}/next/").json() == given
        seen.append(given["item"]["id"])
    # 4 items, one answered before: 3 more, each once, then none left
    assert len(seen) == len(set(seen)) == 3
    assert given == {
        "assignment": None,
        "item": None,
        "progress": given["progress"],
    }
    assert given["progress"]["mine"] == 4
    # without "next" the answer is as before
    campaign2, (ann2,) = motivation_campaign(tools=2, labels_per_item=1, annotators=1)
    client.force_login(ann2)
    first = client.post(f"/api/campaigns/{campaign2.pk}/next/").json()
    plain = client.post(
        f"/api/campaigns/{campaign2.pk}/submit/",
        {"assignment": first["assignment"], "answers": {"reason": "B"}, "token": str(uuid.uuid4())},
        content_type="application/json",
    ).json()
    assert set(plain) == {"label", "created"}


def test_a_repeated_submit_with_next_gives_the_same_next_item(client: Client) -> None:
    campaign, (ann,) = motivation_campaign(tools=3, labels_per_item=1, annotators=1)
    client.force_login(ann)
    given = client.post(f"/api/campaigns/{campaign.pk}/next/").json()
    body = {
        "assignment": given["assignment"],
        "answers": {"reason": "B"},
        "token": str(uuid.uuid4()),
        "next": True,
    }
    first = client.post(
        f"/api/campaigns/{campaign.pk}/submit/", body, content_type="application/json"
    )
    again = client.post(
        f"/api/campaigns/{campaign.pk}/submit/", body, content_type="application/json"
    )
    assert (first.status_code, again.status_code) == (201, 200)
    # the resent form stores nothing and hands out no second item
    assert again.json()["next"] == first.json()["next"]
    assert again.json()["label"] == first.json()["label"]
