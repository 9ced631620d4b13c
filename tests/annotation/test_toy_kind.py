"""A new campaign kind without touching the studio: a kind defined in the test tree (one module,
tests/annotation/toy_kind.py, and its templates under tests/annotation/templates: the item's,
and its report section's), registered by the test, goes through the setup flow and building
items, annotation through the API and the page, and the agreement report, its page and its
summary CSV."""

from __future__ import annotations

import copy
import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.test import Client

from annotation import services
from annotation.agreement.services import report_params, report_request
from annotation.assign import AnnotationError
from annotation.kinds import kinds, register, unregister
from annotation.models import Campaign, Label, Member
from tests.annotation.toy_kind import KIND
from tests.factories import make_benchmark, make_researcher, make_sample, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def toy(settings: Any) -> Iterator[Any]:
    cache.clear()
    # The kind's template, from the test tree.
    templates = copy.deepcopy(settings.TEMPLATES)
    templates[0]["DIRS"] = [*templates[0]["DIRS"], Path(__file__).parent / "templates"]
    settings.TEMPLATES = templates
    register(KIND)
    yield KIND
    unregister(KIND.name)


def test_a_kind_registered_by_a_test_goes_from_items_to_the_agreement_report(
    client: Client, toy: Any
) -> None:
    # given a benchmark split and a campaign of the toy kind over it
    benchmark = make_benchmark()
    for i in range(6):
        make_sample(benchmark=benchmark, reference={"answer": i})
    campaign = services.campaign_create(
        name="gold check", kind=toy.name, benchmark=benchmark, labels_per_item=2
    )
    assert [q.key for q in campaign.questions.all()] == ["right"]
    # the setup flow offers it, and its items step asks what its item source needs
    client.force_login(make_researcher())
    assert toy.label in client.get("/campaigns/new/").content.decode()
    items_step = client.get(f"/campaigns/{campaign.pk}/setup/items/").content.decode()
    assert 'name="split"' in items_step and 'name="run"' not in items_step
    built = client.post(f"/campaigns/{campaign.pk}/setup/items/", {"split": "test"})
    assert built.status_code == 302
    assert campaign.items.count() == 6
    annotators = [make_user(), make_user()]
    services.members_add(campaign=campaign, users=annotators, role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=campaign)
    # when both annotate every item through the API (agreeing on all but item 5)
    for j, annotator in enumerate(annotators):
        client.force_login(annotator)
        for _ in range(6):
            got = client.post(f"/api/campaigns/{campaign.pk}/next/").json()
            assert got["item"]["kind"] == toy.name
            position = (
                Campaign.objects.get(pk=campaign.pk)
                .items.get(assignments__pk=got["assignment"])
                .position
            )
            answer = "no" if position == 5 and j == 1 else "yes"
            body = {
                "assignment": got["assignment"],
                "answers": {"right": answer},
                "token": str(uuid.uuid4()),
            }
            response = client.post(
                f"/api/campaigns/{campaign.pk}/submit/",
                json.dumps(body),
                content_type="application/json",
            )
            assert response.status_code == 201
    assert Label.objects.filter(campaign=campaign, is_current=True).count() == 12
    # then the agreement report compares the two annotators on the toy kind's question
    report = report_request(campaign, report_params(resamples=20), inline=True)
    (question,) = report.data["questions"]
    assert question["key"] == "right" and report.data["kind"] == toy.name
    (pair,) = question["pairs"]
    assert pair["stats"]["agreement"]["value"] == pytest.approx(5 / 6)
    # and the report section the toy kind declares: its data, its CSV rows and its template
    (votes,) = report.data["toy_gold_votes"]
    assert votes["votes"] == {"Yes": 11, "No": 1}
    client.force_login(make_researcher())
    page = client.get(f"/campaigns/{campaign.pk}/agreement/").content.decode()
    assert "Votes on the gold (toy kind), 12 in all" in page and "right No: 1" in page
    summary = client.get(f"/campaigns/{campaign.pk}/agreement/summary.csv")
    assert "right,humans,,votes No,1,1,," in b"".join(summary.streaming_content).decode()


def test_a_campaign_of_an_unregistered_kind_is_refused(toy: Any) -> None:
    unregister(toy.name)
    assert toy.name not in kinds()
    with pytest.raises(AnnotationError, match="unknown kind"):
        services.campaign_create(name="nope", kind=toy.name)
    campaign = Campaign(name="nope", kind=toy.name)
    with pytest.raises(ValidationError, match="unknown kind"):
        campaign.clean()


def test_the_toy_kind_is_annotated_on_the_page_with_its_own_template(
    client: Client, toy: Any
) -> None:
    benchmark = make_benchmark()
    make_sample(benchmark=benchmark, input={"query": "How far is the moon?"}, reference=384400)
    campaign = services.campaign_create(name="gold check", kind=toy.name, benchmark=benchmark)
    services.items_from_split(campaign=campaign, split="test")
    annotator = make_user()
    services.members_add(campaign=campaign, users=[annotator], role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=campaign)
    client.force_login(annotator)
    listed = client.get("/annotate/").content.decode()
    assert "Is the gold answer right? (toy)" in listed
    page = client.get(f"/annotate/{campaign.pk}/").content.decode()
    assert "Gold answer (toy kind)" in page and "384400" in page and "How far is the moon?" in page
    action = re.search(r'hx-post="(/annotate/\d+/submit/\d+/)"', page).group(1)
    token = re.search(r'name="token" value="([^"]+)"', page).group(1)
    refused = client.post(action, {"right": "perhaps", "token": token}, HTTP_HX_REQUEST="true")
    assert "perhaps is not a choice" in refused.content.decode()
    client.post(action, {"right": "no", "token": token}, HTTP_HX_REQUEST="true")
    assert Label.objects.get(campaign=campaign).answers == {"right": "no"}
