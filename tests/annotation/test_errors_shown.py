"""A refusal is shown to the person who asked, by one mechanism (config.errors.shows_errors and
DRF's exception handler), with the status and message each page showed before: the page drawn
again with the message next to the form, or the error partial."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client, RequestFactory

from annotation import services
from annotation.assign import AnnotationError
from annotation.models import Campaign, Label, Member
from config.errors import shows_errors
from tests.annotation.conftest import motivation_campaign
from tests.factories import make_researcher, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def clean_cache() -> None:
    cache.clear()


def hx(client: Client, url: str, data: dict[str, Any] | None = None) -> Any:
    return client.post(url, data or {}, HTTP_HX_REQUEST="true")


def test_the_workspace_shows_what_the_annotator_cannot_do(client: Client) -> None:
    campaign, (ann,) = motivation_campaign(tools=2, labels_per_item=1, annotators=1)
    client.force_login(ann)
    # nothing to undo yet
    undone = hx(client, f"/annotate/{campaign.pk}/undo/")
    assert undone.status_code == 200
    assert "there is no answer of yours to undo" in undone.content.decode()
    # skipping an item one does not hold
    held = client.post(f"/api/campaigns/{campaign.pk}/next/").json()["assignment"]
    hx(client, f"/annotate/{campaign.pk}/skip/{held}/")
    again = hx(client, f"/annotate/{campaign.pk}/skip/{held}/")
    assert again.status_code == 200
    assert "only an item you hold can be skipped" in again.content.decode()
    # a stale form keeps the item on screen
    stale = hx(client, f"/annotate/{campaign.pk}/submit/{held + 1}/", {"reason": "A"})
    assert stale.status_code == 200 and "the form is stale" in stale.content.decode()
    # a closed campaign says so, on the page and through the API
    services.campaign_close(campaign=campaign)
    page = client.get(f"/annotate/{campaign.pk}/")
    assert page.status_code == 200 and "the campaign is closed" in page.content.decode()
    refused = client.post(f"/api/campaigns/{campaign.pk}/next/")
    assert refused.status_code == 400
    assert refused.json() == {"detail": "the campaign is closed", "code": "invalid"}


def test_a_refused_edit_or_review_is_shown_in_place(client: Client) -> None:
    from tests.annotation.test_submit import open_item, refinement_campaign

    campaign, ann = refinement_campaign("refine", review_stage=True)
    client.force_login(ann)
    item = open_item(client, campaign)
    edited = hx(client, item["edit"], {"op": "teleport", "uid": "s1"})
    assert edited.status_code == 200 and "unknown edit" in edited.content.decode()
    hx(client, item["edit"], {"op": "text", "uid": "s1", "value": "Changed"})
    hx(client, item["submit"], {"verdict": "fixed", "token": item["token"]})
    label = Label.objects.get()
    reviewer = make_user()
    services.members_add(campaign=campaign, users=[reviewer], role=Member.Role.REVIEWER)
    client.force_login(reviewer)
    undecided = hx(client, f"/review/{campaign.pk}/{label.pk}/", {"decision": "maybe"})
    assert undecided.status_code == 200 and "approve or return" in undecided.content.decode()


def test_the_agreement_page_and_its_downloads_name_an_unknown_rater(client: Client) -> None:
    campaign, _ = motivation_campaign(tools=2, labels_per_item=1, annotators=1)
    client.force_login(make_researcher())
    url = f"/campaigns/{campaign.pk}/agreement/"
    page = client.get(url, {"judge": "nobody"})
    assert page.status_code == 200
    assert "judge &#x27;nobody&#x27; does not rate" in page.content.decode()
    for csv in ("summary.csv", "labels.csv"):
        download = client.get(f"{url}{csv}", {"judge": "nobody"})
        assert download.status_code == 400
        assert "judge &#x27;nobody&#x27; does not rate" in download.content.decode()
    too_many = client.get(url, {"resamples": "99999999"})
    assert too_many.status_code == 200 and "resamples must be between" in too_many.content.decode()


def test_without_a_redraw_the_error_partial_is_shown_with_the_errors_status() -> None:
    @shows_errors()
    def refuses(request: Any) -> Any:
        raise AnnotationError("not now <b>", status=409)

    factory = RequestFactory()
    page = factory.get("/x/")
    page.htmx = False
    page.user = make_user()
    full = refuses(page)
    assert full.status_code == 409
    html = full.content.decode()
    assert "not now &lt;b&gt;" in html and "<html" in html and 'role="alert"' in html
    fragment_request = factory.get("/x/", HTTP_HX_REQUEST="true")
    fragment_request.htmx = True
    fragment_request.user = page.user
    fragment = refuses(fragment_request)
    assert fragment.status_code == 409
    assert "<html" not in fragment.content.decode()
    assert "data-error-message" in fragment.content.decode()


def test_other_errors_are_not_swallowed() -> None:
    @shows_errors(lambda request, error: None)
    def breaks(request: Any) -> Any:
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        breaks(RequestFactory().get("/"))


def test_a_submit_with_a_token_already_used_elsewhere_is_refused_in_place(client: Client) -> None:
    campaign, (ann, other) = motivation_campaign(tools=2, labels_per_item=2, annotators=2)
    token = str(uuid.uuid4())
    client.force_login(other)
    held = client.post(f"/api/campaigns/{campaign.pk}/next/").json()["assignment"]
    hx(client, f"/annotate/{campaign.pk}/submit/{held}/", {"reason": "A", "token": token})
    client.force_login(ann)
    mine = client.post(f"/api/campaigns/{campaign.pk}/next/").json()["assignment"]
    html = hx(
        client, f"/annotate/{campaign.pk}/submit/{mine}/", {"reason": "B", "token": token}
    ).content.decode()
    assert "this form was not yours" in html and 'value="B"' in html
    assert Campaign.objects.get(pk=campaign.pk).labels.count() == 1
