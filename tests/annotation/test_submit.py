"""One submit for the page and the API: a refinement submitted through either is checked the same
way, stored with the same answers and review state, and (without a review stage) becomes the
sample's next revision the same way."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from annotation import services
from annotation.models import Campaign, Label, Member
from benchmarks.models import Benchmark, Sample
from benchmarks.services import benchmark_import
from tests.factories import make_user

pytestmark = pytest.mark.django_db
DEMO = Path(__file__).resolve().parents[2] / "benchmarks" / "demo" / "ultratool"


def refinement_campaign(name: str, *, review_stage: bool) -> tuple[Campaign, Any]:
    """A refinement campaign over its own copy of the UltraTool demo (so that two campaigns
    revise two samples that start alike)."""
    benchmark_import(
        suite="ultratool",
        paths=[DEMO / "test.json", *sorted((DEMO / "test_set").glob("*.json"))],
        benchmark_name=name,
    )
    campaign = services.campaign_create(
        name=name,
        kind="refinement",
        benchmark=Benchmark.objects.get(name=name),
        review_stage=review_stage,
    )
    services.items_from_split(campaign=campaign, split="test", limit=1)
    annotator = make_user()
    services.members_add(campaign=campaign, users=[annotator], role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=campaign)
    return campaign, annotator


def open_item(client: Client, campaign: Campaign) -> dict[str, str]:
    page = client.get(f"/annotate/{campaign.pk}/").content.decode()
    return {
        "edit": re.search(r'hx-post="(/annotate/\d+/refine/\d+/)"', page).group(1),
        "submit": re.search(r'hx-post="(/annotate/\d+/submit/\d+/)"', page).group(1),
        "assignment": re.search(r"/submit/(\d+)/", page).group(1),
        "token": re.search(r'name="token" value="([^"]+)"', page).group(1),
    }


def edit_first_step(client: Client, url: str) -> None:
    client.post(
        url, {"op": "text", "uid": "s1", "value": "Look up the weather"}, HTTP_HX_REQUEST="1"
    )


def api_submit(client: Client, campaign: Campaign, assignment: str, answers: dict) -> Any:
    body = {"assignment": int(assignment), "answers": answers, "token": str(uuid.uuid4())}
    return client.post(
        f"/api/campaigns/{campaign.pk}/submit/", json.dumps(body), content_type="application/json"
    )


def outcome(campaign: Campaign) -> tuple[dict, str, int, Any]:
    label = Label.objects.get(campaign=campaign)
    sample = Sample.objects.get(pk=label.item.sample_id)
    return label.answers, label.review, sample.revision, sample.reference


@pytest.mark.parametrize("review_stage", [False, True])
def test_a_refinement_through_the_api_is_stored_and_applied_as_through_the_page(
    client: Client, review_stage: bool
) -> None:
    # given two campaigns over two copies of the same sample, edited alike in the editor
    by_page, page_annotator = refinement_campaign("by page", review_stage=review_stage)
    by_api, api_annotator = refinement_campaign("by api", review_stage=review_stage)
    client.force_login(page_annotator)
    page = open_item(client, by_page)
    edit_first_step(client, page["edit"])
    client.force_login(api_annotator)
    api = open_item(client, by_api)
    edit_first_step(client, api["edit"])
    # when one is submitted through the page and the other through the API
    client.force_login(page_annotator)
    client.post(page["submit"], {"verdict": "fixed", "token": page["token"]}, HTTP_HX_REQUEST="1")
    client.force_login(api_annotator)
    response = api_submit(client, by_api, api["assignment"], {"verdict": "fixed"})
    # then both give the same label, review state and revision
    assert response.status_code == 201
    assert outcome(by_api) == outcome(by_page)
    answers, review, revision, reference = outcome(by_api)
    assert answers["verdict"] == "fixed" and "refined" in answers
    if review_stage:
        assert (review, revision) == (Label.Review.PENDING, 0)
    else:
        assert (review, revision) == (Label.Review.APPROVED, 1)
        assert reference["steps"][0]["text"] == "Look up the weather"


def test_a_bad_refinement_is_refused_alike_by_the_page_and_the_api(client: Client) -> None:
    by_page, page_annotator = refinement_campaign("by page", review_stage=False)
    by_api, api_annotator = refinement_campaign("by api", review_stage=False)
    client.force_login(page_annotator)
    page = open_item(client, by_page)
    edit_first_step(client, page["edit"])
    client.force_login(api_annotator)
    api = open_item(client, by_api)
    edit_first_step(client, api["edit"])
    # "keep" on a changed sample
    client.force_login(page_annotator)
    html = client.post(
        page["submit"], {"verdict": "keep", "token": page["token"]}, HTTP_HX_REQUEST="1"
    ).content.decode()
    assert "you changed the sample" in html
    client.force_login(api_annotator)
    refused = api_submit(client, by_api, api["assignment"], {"verdict": "keep"})
    assert refused.status_code == 400
    assert "you changed the sample" in refused.json()["detail"]
    assert refused.json()["field"] == "verdict"
    # "fixed" on an untouched sample, through the API: nothing to apply
    untouched, annotator = refinement_campaign("untouched", review_stage=False)
    client.force_login(annotator)
    item = open_item(client, untouched)
    refused = api_submit(client, untouched, item["assignment"], {"verdict": "fixed"})
    assert refused.status_code == 400 and "nothing was changed" in refused.json()["detail"]
    assert not Label.objects.exists()
    assert set(Sample.objects.values_list("revision", flat=True)) == {0}
