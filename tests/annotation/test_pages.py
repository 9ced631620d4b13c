"""The studio's pages and API: who sees what, untrusted text rendered inert, CSRF, canonical
pairwise answers, throttled logins, and the human baseline scored as a run."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from annotation import services
from annotation.models import Campaign, Label, Member
from benchmarks.models import Benchmark, Sample
from evaluation.models import Endpoint, Prediction, Run
from tests.annotation.conftest import motivation_campaign
from tests.factories import make_benchmark, make_sample, make_superuser, make_tool, make_user

pytestmark = pytest.mark.django_db

PAYLOADS = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(2)">',
    "<svg onload=alert(3)>",
    '<a href="javascript:alert(4)">x</a>',
]


@pytest.fixture(autouse=True)
def clean_cache() -> None:
    cache.clear()


def assert_inert(html: str) -> None:
    for tag in ("<script>alert", "<img src=x", "<svg onload", '<a href="javascript'):
        assert tag not in html, tag
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html or "&lt;svg" in html or "&lt;img" in html


def hx(client: Client, url: str, data: dict[str, Any] | None = None) -> Any:
    return client.post(url, data or {}, HTTP_HX_REQUEST="true")


def test_an_annotator_sees_only_their_campaigns(client: Client) -> None:
    mine, (ann,) = motivation_campaign(tools=2, labels_per_item=1, annotators=1)
    other, _ = motivation_campaign(tools=2, labels_per_item=1, annotators=1)
    client.force_login(ann)
    assert client.get(f"/annotate/{mine.pk}/").status_code == 200
    assert client.get(f"/annotate/{other.pk}/").status_code == 404
    assert client.get(f"/annotate/{other.pk}/guidelines/").status_code == 404
    assert client.post(f"/annotate/{other.pk}/undo/").status_code == 404
    names = [c["name"] for c in client.get("/api/campaigns/").json()]
    assert names == [mine.name]
    assert client.post(f"/api/campaigns/{other.pk}/next/").status_code == 404
    # another campaign's assignment id is not found either, in one's own campaign
    other_member = Member.objects.filter(campaign=other).first().user
    from annotation.assign import item_next

    foreign = item_next(campaign=other, user=other_member)
    response = hx(client, f"/annotate/{mine.pk}/submit/{foreign.pk}/", {"reason": "A"})
    assert response.status_code == 404
    assert client.get(f"/campaigns/{mine.pk}/progress/").status_code == 403


def test_untrusted_text_is_rendered_inert_in_every_interface(client: Client) -> None:
    benchmark = make_benchmark(name="xss")
    for i, payload in enumerate(PAYLOADS):
        make_tool(benchmark=benchmark, name=f"tool{i}", description=payload)
    campaign = services.campaign_create(
        name="xss", kind="motivation", benchmark=benchmark, guidelines=PAYLOADS[0]
    )
    services.items_from_tools(campaign=campaign)
    ann = make_user()
    services.members_add(campaign=campaign, users=[ann], role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=campaign)
    client.force_login(ann)
    page = client.get(f"/annotate/{campaign.pk}/").content.decode()
    assert_inert(page)
    assert_inert(client.get(f"/annotate/{campaign.pk}/guidelines/").content.decode())
    # a note with markup, then the annotator's campaign list and the admin's label page
    form = re.search(r'name="token" value="([^"]+)"', page).group(1)
    action = re.search(r'hx-post="(/annotate/\d+/submit/\d+/)"', page).group(1)
    hx(client, action, {"reason": "A", "token": form, "note": PAYLOADS[1]})
    label = Label.objects.get()
    assert label.note == PAYLOADS[1]
    from tests.factories import make_superuser

    client.force_login(make_superuser())
    assert_inert(client.get(f"/admin/annotation/label/{label.pk}/change/").content.decode())


def pairwise_campaign(payload: str) -> tuple[Campaign, Any]:
    benchmark = make_benchmark(name="pair", suite="generic")
    endpoint = Endpoint.objects.create(name="e", base_url="http://127.0.0.1:9/v1", model="m")
    runs = [
        Run.objects.create(
            benchmark=benchmark,
            task="answer",
            endpoint=endpoint,
            status=Run.Status.DONE,
            model_name=f"m{i}",
        )
        for i in range(2)
    ]
    sample = make_sample(benchmark=benchmark, input={"query": payload})
    for i, run in enumerate(runs):
        Prediction.objects.create(
            run=run,
            sample=sample,
            position=0,
            status=Prediction.Status.DONE,
            output=f"{payload} from run {i}",
        )
    campaign = services.campaign_create(name="pairwise", kind="pairwise")
    services.items_from_runs(campaign=campaign, run_a=runs[0], run_b=runs[1])
    ann = make_user()
    services.members_add(campaign=campaign, users=[ann], role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=campaign)
    return campaign, ann


@pytest.mark.parametrize("payload", PAYLOADS)
def test_queries_and_model_outputs_are_inert_in_the_pairwise_view(
    client: Client, payload: str
) -> None:
    campaign, ann = pairwise_campaign(payload)
    client.force_login(ann)
    html = client.get(f"/annotate/{campaign.pk}/").content.decode()
    for tag in ("<script>alert", "<img src=x", "<svg onload", '<a href="javascript'):
        assert tag not in html
    assert html.count("&lt;") >= 3  # the query and both outputs, escaped


def test_api_responses_and_failed_traces_are_inert(client: Client, tmp_path: Any) -> None:
    # a Turing pair whose documentation, arguments and both responses carry markup
    pairs = tmp_path / "pairs.json"
    pairs.write_text(
        json.dumps(
            [
                {
                    "api": PAYLOADS[2],
                    "documentation": {"name": "x", "description": PAYLOADS[0]},
                    "arguments": {"q": PAYLOADS[3]},
                    "real": PAYLOADS[1],
                    "simulated": {"text": PAYLOADS[2]},
                }
            ]
        )
    )
    turing = services.campaign_create(name="turing-xss", kind="turing")
    services.items_from_pairs_file(campaign=turing, path=pairs)
    # a failed prediction whose output, error and trace carry markup
    benchmark = make_benchmark(name="failures", suite="generic")
    endpoint = Endpoint.objects.create(name="e", base_url="http://127.0.0.1:9/v1", model="m")
    run = Run.objects.create(
        benchmark=benchmark, task="answer", endpoint=endpoint, status=Run.Status.DONE
    )
    Prediction.objects.create(
        run=run,
        sample=make_sample(benchmark=benchmark, input={"query": PAYLOADS[3]}),
        position=0,
        status=Prediction.Status.FAILED,
        output=PAYLOADS[0],
        error=PAYLOADS[1],
        trace=[{"thought": PAYLOADS[2], "action": "Search", "observation": PAYLOADS[3]}],
    )
    failures = services.campaign_create(name="errors-xss", kind="error_types")
    services.items_from_failures(campaign=failures, run=run)
    ann = make_user()
    for campaign in (turing, failures):
        services.members_add(campaign=campaign, users=[ann], role=Member.Role.ANNOTATOR)
        services.campaign_activate(campaign=campaign)
    client.force_login(ann)
    for campaign in (turing, failures):
        html = client.get(f"/annotate/{campaign.pk}/").content.decode()
        for tag in ("<script>alert", "<img src=x", "<svg onload", '<a href="javascript'):
            assert tag not in html, (campaign.kind, tag)
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html or "&lt;svg" in html
        assert "&lt;svg onload=alert(3)&gt;" in html  # shown as text, not dropped


@pytest.mark.parametrize("shown", ["AB", "BA"])
def test_pairwise_answers_are_stored_against_the_canonical_order(
    client: Client, shown: str
) -> None:
    campaign, ann = pairwise_campaign("Which is better?")
    Campaign.objects.filter(pk=campaign.pk).update(randomize_sides=False)
    client.force_login(ann)
    got = client.post(f"/api/campaigns/{campaign.pk}/next/").json()
    from annotation.models import Assignment

    Assignment.objects.filter(pk=got["assignment"]).update(shown_order=shown)
    body = {
        "assignment": got["assignment"],
        "answers": {"better": "left"},
        "token": str(uuid.uuid4()),
    }
    response = client.post(
        f"/api/campaigns/{campaign.pk}/submit/", json.dumps(body), content_type="application/json"
    )
    assert response.status_code == 201
    # "left" is A when A was shown first, B otherwise
    assert Label.objects.get().answers == {"better": 1 if shown == "AB" else -1}
    again = client.post(
        f"/api/campaigns/{campaign.pk}/submit/", json.dumps(body), content_type="application/json"
    )
    assert again.status_code == 200 and again.json()["created"] is False
    assert Label.objects.count() == 1


def test_an_htmx_post_without_a_csrf_token_is_refused() -> None:
    campaign, (ann,) = motivation_campaign(tools=1, labels_per_item=1, annotators=1)
    client = Client(enforce_csrf_checks=True)
    client.force_login(ann)
    page = client.get(f"/annotate/{campaign.pk}/").content.decode()
    action = re.search(r'hx-post="(/annotate/\d+/submit/\d+/)"', page).group(1)
    token = re.search(r'name="token" value="([^"]+)"', page).group(1)
    refused = client.post(action, {"reason": "A", "token": token}, HTTP_HX_REQUEST="true")
    assert refused.status_code == 403 and not Label.objects.exists()
    csrf = client.cookies["csrftoken"].value
    # the page puts the token in hx-headers on <body>; htmx sends it as X-CSRFToken
    assert '"X-CSRFToken"' in page
    accepted = client.post(
        action, {"reason": "A", "token": token}, HTTP_HX_REQUEST="true", HTTP_X_CSRFTOKEN=csrf
    )
    assert accepted.status_code == 200 and Label.objects.count() == 1


def test_an_invalid_answer_is_refused_next_to_the_form_and_kept(client: Client) -> None:
    campaign, (ann,) = motivation_campaign(tools=1, labels_per_item=1, annotators=1)
    client.force_login(ann)
    page = client.get(f"/annotate/{campaign.pk}/").content.decode()
    action = re.search(r'hx-post="(/annotate/\d+/submit/\d+/)"', page).group(1)
    token = re.search(r'name="token" value="([^"]+)"', page).group(1)
    html = hx(client, action, {"reason": "Z", "token": token, "note": "my note"}).content.decode()
    assert "Z is not a choice" in html and 'role="alert"' in html
    assert "my note" in html  # nothing typed is lost
    assert not Label.objects.exists()


def test_logins_pause_after_repeated_failures(client: Client, settings: Any) -> None:
    settings.LOGIN_MAX_FAILURES = 3
    make_user(username="victim", password="right-password")
    for _ in range(3):
        response = client.post("/accounts/login/", {"username": "victim", "password": "nope"})
        assert response.status_code == 200
    blocked = client.post("/accounts/login/", {"username": "victim", "password": "right-password"})
    assert blocked.status_code == 429
    assert "Too many failed attempts" in blocked.content.decode()


def test_submits_share_one_budget_across_the_page_and_the_api(
    client: Client, monkeypatch: Any
) -> None:
    from rest_framework.throttling import ScopedRateThrottle

    monkeypatch.setattr(
        ScopedRateThrottle,
        "THROTTLE_RATES",
        {"annotation": "1000/min", "annotation-submit": "2/min"},
    )
    campaign, (ann,) = motivation_campaign(tools=4, labels_per_item=1, annotators=1)
    client.force_login(ann)
    from annotation.assign import item_next

    def page_submit() -> Any:
        assignment = item_next(campaign=campaign, user=ann)
        return hx(
            client,
            f"/annotate/{campaign.pk}/submit/{assignment.pk}/",
            {"reason": "A", "token": str(uuid.uuid4())},
        )

    assert page_submit().status_code == 200
    api = client.post(
        f"/api/campaigns/{campaign.pk}/submit/",
        json.dumps(
            {
                "assignment": item_next(campaign=campaign, user=ann).pk,
                "answers": {"reason": "B"},
                "token": str(uuid.uuid4()),
            }
        ),
        content_type="application/json",
    )
    assert api.status_code == 201
    blocked = page_submit()
    assert blocked.status_code == 429 and int(blocked["Retry-After"]) > 0
    assert "Too many requests" in blocked.content.decode()
    assert Label.objects.filter(campaign=campaign).count() == 2  # the refused one stored nothing


def test_the_human_baseline_is_scored_like_a_model(client: Client, seeddata: Any) -> None:
    from benchmarks.services import benchmark_import

    metatool = seeddata / "metatool"
    benchmark_import(
        suite="metatool",
        paths=[
            metatool / "Task2-Subtask3_reliability_sample100.json",
            metatool / "plugin_des.json",
        ],
    )
    benchmark = Benchmark.objects.get(name="MetaTool")
    campaign = services.campaign_create(
        name="baseline", kind="baseline", benchmark=benchmark, task="reliability"
    )
    services.items_from_split(campaign=campaign, split="reliability", limit=4)
    ann = make_user(username="human1")
    services.members_add(campaign=campaign, users=[ann], role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=campaign)
    from annotation.assign import item_next
    from tests.factories import store_label

    # the right answer on reliability is no tool; the annotator gets 3 of 4 right
    for n in range(4):
        assignment = item_next(campaign=campaign, user=ann)
        choices = assignment.item.payload["choices"]
        store_label(
            campaign=assignment.campaign,
            assignment_id=assignment.pk,
            user=ann,
            token=uuid.uuid4(),
            answers={"tools": [choices[0]] if n == 0 else []},
        )
    # the researcher scores it from the admin's campaign list
    client.force_login(make_superuser())
    response = client.post(
        "/admin/annotation/campaign/",
        {"action": "score_baseline", "_selected_action": [campaign.pk]},
        follow=True,
    )
    assert "1 run(s) scored" in response.content.decode()
    run = Run.objects.get(name__startswith="Human baseline")
    assert run.model_name == "human:human1" and run.source == Run.Source.IMPORTED
    assert run.metrics["CSR"] == 75.0
    assert set(Sample.objects.filter(predictions__run=run).values_list("split", flat=True)) == {
        "reliability"
    }
