"""Refinement through the pages: the editor saves as it goes, refuses what breaks the tools'
schemas next to the field, and a refinement becomes the sample's next revision once a reviewer
approves it (or comes back to its author with a comment)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from annotation import services
from annotation.models import Campaign, Label, Member, RefinementDraft
from annotation.refinement_workflow import reference_outline
from benchmarks.models import Benchmark, Sample, SampleRevision
from benchmarks.services import benchmark_import
from tests.factories import make_user

pytestmark = pytest.mark.django_db
DEMO = Path(__file__).resolve().parents[2] / "benchmarks" / "demo" / "ultratool"


def campaign(review_stage: bool = True, labels_per_item: int = 1) -> tuple[Campaign, Any, Any]:
    benchmark_import(
        suite="ultratool",
        paths=[DEMO / "test.json", *sorted((DEMO / "test_set").glob("*.json"))],
        benchmark_name="UltraTool refine",
    )
    c = services.campaign_create(
        name="refine",
        kind="refinement",
        benchmark=Benchmark.objects.get(name="UltraTool refine"),
        review_stage=review_stage,
        labels_per_item=labels_per_item,
    )
    services.items_from_split(campaign=c, split="test")
    annotator, reviewer = make_user(username="ann"), make_user(username="rev")
    services.members_add(campaign=c, users=[annotator], role=Member.Role.ANNOTATOR)
    services.members_add(campaign=c, users=[reviewer], role=Member.Role.REVIEWER)
    services.campaign_activate(campaign=c)
    return c, annotator, reviewer


def open_item(client: Client, c: Campaign) -> tuple[str, str, str]:
    page = client.get(f"/annotate/{c.pk}/").content.decode()
    edit = re.search(r'hx-post="(/annotate/\d+/refine/\d+/)"', page).group(1)
    submit = re.search(r'hx-post="(/annotate/\d+/submit/\d+/)"', page).group(1)
    token = re.search(r'name="token" value="([^"]+)"', page).group(1)
    return edit, submit, token


def edit(client: Client, url: str, **data: str) -> str:
    return client.post(url, data, HTTP_HX_REQUEST="true").content.decode()


def test_a_refinement_becomes_the_next_revision_once_approved(client: Client) -> None:
    c, annotator, reviewer = campaign()
    client.force_login(annotator)
    edit_url, submit_url, token = open_item(client, c)
    sample = Sample.objects.get(benchmark__name="UltraTool refine", external_id="1")
    old_reference = sample.reference
    # when the annotator edits the first step's text and adds a step (saved as they go)
    html = edit(client, edit_url, op="text", uid="s1", value="Look up Saturday's weather")
    assert "Look up Saturday&#x27;s weather" in html
    edit(client, edit_url, op="insert", uid="s1", value="")
    inserted = [s for s in RefinementDraft.objects.get().data["steps"] if s["uid"].startswith("n")]
    assert len(inserted) == 1
    # an empty step is refused on submit
    refused = client.post(submit_url, {"verdict": "fixed", "token": token}, HTTP_HX_REQUEST="true")
    assert "need fixing first" in refused.content.decode() and not Label.objects.exists()
    new_uid = inserted[0]["uid"]
    edit(client, edit_url, op="text", uid=new_uid, value="Tell the user")
    # keep is refused on a changed sample, fixed is taken
    kept = client.post(submit_url, {"verdict": "keep", "token": token}, HTTP_HX_REQUEST="true")
    assert "you changed the sample" in kept.content.decode()
    client.post(
        submit_url, {"verdict": "fixed", "token": token, "note": "clearer"}, HTTP_HX_REQUEST="true"
    )
    label = Label.objects.get()
    assert label.review == Label.Review.PENDING
    sample.refresh_from_db()
    assert sample.revision == 0 and sample.reference == old_reference  # not before review
    assert [c["kind"] for c in label.answers["diff"]] == ["text", "inserted"]
    # then the reviewer sees the changes and approves
    client.force_login(reviewer)
    page = client.get(f"/review/{c.pk}/").content.decode()
    assert "Look up Saturday" in page and "Tell the user" in page
    # both versions as numbered plans with their calls written as calls (not Python's repr)
    now, refined = re.findall(r'<ol class="outline">(.*?)</ol>', page, re.S)
    assert "Look up Saturday" not in now and "Look up Saturday" in refined
    assert "get_weather_forecast(day=&quot;Saturday&quot;" in now
    assert "None" not in now and "&#x27;Saturday&#x27;" not in now
    client.post(f"/review/{c.pk}/{label.pk}/", {"decision": "approve"}, HTTP_HX_REQUEST="true")
    sample.refresh_from_db()
    assert sample.revision == 1
    steps = [s["text"] for s in sample.reference["steps"]]
    assert steps[0] == "Look up Saturday's weather" and "Tell the user" in steps
    revisions = list(SampleRevision.objects.filter(sample=sample).order_by("number"))
    assert [r.number for r in revisions] == [0, 1]
    assert revisions[0].reference == old_reference  # the history is kept
    assert revisions[1].author == annotator and "clearer" in revisions[1].note
    label.refresh_from_db()
    assert label.review == Label.Review.APPROVED


def test_arguments_that_break_the_schema_are_refused_next_to_the_field(client: Client) -> None:
    c, annotator, _ = campaign()
    client.force_login(annotator)
    # the item whose plan calls add_calendar_event
    for _ in range(5):
        edit_url, submit_url, token = open_item(client, c)
        draft = RefinementDraft.objects.order_by("-id").first()
        step = next((s for s in draft.data["steps"] if s["tool"] == "add_calendar_event"), None)
        if step:
            break
        client.post(submit_url.replace("submit", "skip"), HTTP_HX_REQUEST="true")
    assert step is not None
    html = edit(
        client,
        edit_url,
        op="arguments",
        uid=step["uid"],
        **{
            "arg:title": "Budget review",
            "arg:start": "Monday 10:00",
            "arg:duration_minutes": "an hour",
        },
    )
    assert re.search(r'class="arg has-error".*?duration_minutes.*?field-error', html, re.S)
    assert 'value="an hour"' in html  # what was typed stays in the field
    # and a step pointing at a tool the sample does not offer
    html = edit(client, edit_url, op="tool", uid=step["uid"], value="launch_rocket")
    assert (
        "launch_rocket is not in this sample&#x27;s toolset" in html or "not in this sample" in html
    )
    refused = client.post(submit_url, {"verdict": "fixed", "token": token}, HTTP_HX_REQUEST="true")
    assert "need fixing first" in refused.content.decode()


def test_a_returned_refinement_comes_back_with_its_comment_and_draft(client: Client) -> None:
    c, annotator, reviewer = campaign()
    client.force_login(annotator)
    edit_url, submit_url, token = open_item(client, c)
    edit(client, edit_url, op="text", uid="s1", value="First draft")
    client.post(submit_url, {"verdict": "fixed", "token": token}, HTTP_HX_REQUEST="true")
    label = Label.objects.get()
    client.force_login(reviewer)
    no_comment = client.post(
        f"/review/{c.pk}/{label.pk}/", {"decision": "return"}, HTTP_HX_REQUEST="true"
    )
    assert "needs a comment" in no_comment.content.decode()
    client.post(
        f"/review/{c.pk}/{label.pk}/",
        {"decision": "return", "comment": "Say where the weather is for"},
        HTTP_HX_REQUEST="true",
    )
    label.refresh_from_db()
    assert (label.review, label.is_current) == (Label.Review.RETURNED, False)
    client.force_login(annotator)
    page = client.get(f"/annotate/{c.pk}/").content.decode()
    assert "Say where the weather is for" in page and 'value="First draft"' in page


def test_without_a_review_stage_the_refinement_applies_at_once(client: Client) -> None:
    c, annotator, _ = campaign(review_stage=False)
    client.force_login(annotator)
    edit_url, submit_url, token = open_item(client, c)
    edit(client, edit_url, op="query", value="Will it be windy in Rotterdam on Sunday?")
    client.post(submit_url, {"verdict": "fixed", "token": token}, HTTP_HX_REQUEST="true")
    sample = Sample.objects.get(benchmark__name="UltraTool refine", external_id="1")
    assert (
        sample.revision == 1 and sample.input["query"] == "Will it be windy in Rotterdam on Sunday?"
    )


def test_a_reviewer_cannot_approve_a_refinement_overtaken_by_another(client: Client) -> None:
    c, annotator, reviewer = campaign(labels_per_item=2)
    second = make_user(username="ann2")
    services.members_add(campaign=c, users=[second], role=Member.Role.ANNOTATOR)
    labels = []
    for user, text in ((annotator, "One"), (second, "Two")):
        client.force_login(user)
        edit_url, submit_url, token = open_item(client, c)
        edit(client, edit_url, op="text", uid="s1", value=text)
        client.post(submit_url, {"verdict": "fixed", "token": token}, HTTP_HX_REQUEST="true")
        labels.append(Label.objects.get(annotator=user))
    client.force_login(reviewer)
    client.post(f"/review/{c.pk}/{labels[0].pk}/", {"decision": "approve"}, HTTP_HX_REQUEST="true")
    html = client.post(
        f"/review/{c.pk}/{labels[1].pk}/", {"decision": "approve"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "refine it again from the current version" in html
    sample = Sample.objects.get(benchmark__name="UltraTool refine", external_id="1")
    assert sample.revision == 1 and sample.reference["steps"][0]["text"] == "One"


def test_the_reviewer_reads_plans_and_calls_as_outlines() -> None:
    plan = {
        "steps": [
            {"step": "1", "text": "Find the weather", "tool": None},
            {"step": "1.1", "text": "Ask the service", "tool": "forecast"}
            | {"arguments": {"city": "Delft"}},
        ]
    }
    assert reference_outline(plan) == {
        "mode": "plan",
        "rows": [
            {"number": "1", "depth": 0, "text": "Find the weather", "tool": "", "arguments": None},
            {
                "number": "1.1",
                "depth": 1,
                "text": "Ask the service",
                "tool": "forecast",
                "arguments": {"city": "Delft"},
            },
        ],
    }
    calls = {"calls": [{"name": "book", "arguments": {"seats": 2}}], "answer": "ok"}
    assert reference_outline(calls)["rows"] == [
        {"number": "1", "depth": 0, "text": "", "tool": "book", "arguments": {"seats": 2}}
    ]
    assert reference_outline({"label": "yes"}) == {"mode": "json", "json": '{\n  "label": "yes"\n}'}


def test_markup_in_steps_and_notes_is_inert_for_the_reviewer(client: Client) -> None:
    c, annotator, reviewer = campaign()
    client.force_login(annotator)
    edit_url, submit_url, token = open_item(client, c)
    payload = '<img src=x onerror="alert(1)">'
    html = edit(client, edit_url, op="text", uid="s1", value=payload)
    assert "<img src=x" not in html
    client.post(
        submit_url,
        {"verdict": "fixed", "token": token, "note": "<script>alert(2)</script>"},
        HTTP_HX_REQUEST="true",
    )
    assert Label.objects.get().note == "<script>alert(2)</script>"
    client.force_login(reviewer)
    page = client.get(f"/review/{c.pk}/").content.decode()
    assert "<img src=x" not in page and "<script>alert" not in page
    # in the diff and in the refined plan, as text
    assert page.count("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;") >= 2
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in page
