"""Refining BFCL's gold through the refinement campaign's pages (editor, submit, review) and
scoring an existing run again under the refined gold (evaluation.gold_versions): an acceptable
value removed from one single-turn item's list changes exactly that item's verdict under the
refined gold and not under the published one; a multi-turn ground-truth call edited changes its
entry's verdict, the model's stored calls executed again with the pinned wheel's classes
(skipped, saying why, without the wheel). The editor refuses what BFCL's gold cannot hold, next
to the field; an annotator outside the campaign cannot edit."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client

from annotation import services
from annotation.models import Campaign, Label, Member, RefinementDraft
from benchmarks.models import Benchmark, Sample
from evaluation.gold_versions import PUBLISHED, REFINED, compare_golds
from evaluation.models import Run
from tests.factories import make_user
from tests.suites.bfcl.real_wheel import real_wheel  # noqa: F401 - a fixture
from tests.suites.bfcl.test_conversation_runs import run_category as run_conversation
from tests.suites.bfcl.test_runs import demo_benchmark, run_category

pytestmark = pytest.mark.django_db(transaction=True)


def refinement(benchmark: Benchmark, split: str) -> tuple[Campaign, object, object]:
    campaign = services.campaign_create(
        name=f"refine {split}", kind="refinement", benchmark=benchmark, review_stage=True
    )
    services.items_from_split(campaign=campaign, split=split)
    annotator, reviewer = make_user(username="expert"), make_user(username="reviewer")
    services.members_add(campaign=campaign, users=[annotator], role=Member.Role.ANNOTATOR)
    services.members_add(campaign=campaign, users=[reviewer], role=Member.Role.REVIEWER)
    services.campaign_activate(campaign=campaign)
    return campaign, annotator, reviewer


def open_item(client: Client, campaign: Campaign, external_id: str) -> tuple[str, str, str]:
    """The editor's and the submit's URLs and the token of the item of `external_id` (others
    are skipped)."""
    for _ in range(10):
        page = client.get(f"/annotate/{campaign.pk}/").content.decode()
        edit = re.search(r'hx-post="(/annotate/\d+/refine/\d+/)"', page).group(1)
        submit = re.search(r'hx-post="(/annotate/\d+/submit/\d+/)"', page).group(1)
        token = re.search(r'name="token" value="([^"]+)"', page).group(1)
        if f"/{external_id}</code>" in page:
            return edit, submit, token
        client.post(submit.replace("submit", "skip"), HTTP_HX_REQUEST="true")
    raise AssertionError(f"{external_id} was never offered")


def edit(client: Client, url: str, **data: str) -> str:
    response = client.post(url, data, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    return response.content.decode()


def submit_and_approve(
    client: Client, campaign: Campaign, submit: str, token: str, reviewer: object
) -> str:
    answer = client.post(submit, {"verdict": "fixed", "token": token}, HTTP_HX_REQUEST="true")
    assert "need fixing" not in answer.content.decode()
    label = Label.objects.get(campaign=campaign)
    client.force_login(reviewer)
    page = client.get(f"/review/{campaign.pk}/").content.decode()
    client.post(
        f"/review/{campaign.pk}/{label.pk}/", {"decision": "approve"}, HTTP_HX_REQUEST="true"
    )
    label.refresh_from_db()
    assert label.review == Label.Review.APPROVED
    return page


def test_one_acceptable_value_refined_changes_exactly_that_items_verdict(client: Client) -> None:
    benchmark = demo_benchmark()
    # the existing run: the oracle answers each item with its first acceptable values
    run, _ = run_category(benchmark, "simple_python", "native")
    assert run.status == Run.Status.DONE and run.metrics["accuracy"] == 100.0
    before = dict(run.metrics)
    campaign, annotator, reviewer = refinement(benchmark, "simple_python")
    client.force_login(annotator)
    edit_url, submit_url, token = open_item(client, campaign, "simple_python_demo_0")
    # the published list of height is [5]: the expert adds 6 and takes 5 out
    html = edit(client, edit_url, op="add_value", uid="c1", argument="height", value="6")
    assert "<code>6</code>" in html
    html = edit(client, edit_url, op="remove_value", uid="c1", argument="height", value="0")
    assert re.search(
        r"argument</span>.*?<code>height</code>.*?<del>\[5\]</del> <ins>\[6\]</ins>", html, re.S
    )
    page = submit_and_approve(client, campaign, submit_url, token, reviewer)
    # the reviewer reads the tool-call diff of the published and the edited gold
    assert re.search(r"<code>height</code>.*?<del>\[5\]</del> <ins>\[6\]</ins>", page, re.S)
    # and both golds side by side as calls, not as JSON
    now, refined = re.findall(r'<ol class="outline">(.*?)</ol>', page, re.S)
    assert "calculate_triangle_area" in now and "calculate_triangle_area" in refined
    sample = Sample.objects.get(benchmark=benchmark, external_id="simple_python_demo_0")
    assert sample.revision == 1
    assert sample.reference[0]["calculate_triangle_area"]["height"] == [6]
    comparison = compare_golds(run)
    assert [
        (c.external_id, c.published["accuracy"], c.refined["accuracy"]) for c in comparison.changed
    ] == [("simple_python_demo_0", 100.0, 0.0)]
    assert comparison.metrics[PUBLISHED] == before
    assert comparison.metrics[REFINED]["accuracy"] == 50.0  # 1 of the 2 demo items
    run.refresh_from_db()
    assert run.metrics == before


def test_the_editor_refuses_what_bfcls_gold_cannot_hold_next_to_the_field(client: Client) -> None:
    benchmark = demo_benchmark()
    campaign, annotator, _ = refinement(benchmark, "simple_python")
    client.force_login(annotator)
    edit_url, submit_url, token = open_item(client, campaign, "simple_python_demo_0")
    html = edit(client, edit_url, op="values", uid="c1", argument="base", value="10")
    assert "the acceptable values must be a JSON list" in html
    assert 'value="10"' in html  # what was typed stays in the field
    html = edit(client, edit_url, op="tool", uid="c1", value="<script>rm()</script>")
    assert "&lt;script&gt;rm()&lt;/script&gt; is not one of this item&#x27;s functions" in html
    assert "<script>rm()" not in html
    refused = client.post(submit_url, {"verdict": "fixed", "token": token}, HTTP_HX_REQUEST="true")
    assert "need fixing first" in refused.content.decode() and not Label.objects.exists()
    # another annotator, not in the campaign, cannot edit the draft
    outsider = make_user(username="outsider")
    client.force_login(outsider)
    saved = RefinementDraft.objects.get().data
    response = client.post(
        edit_url, {"op": "add_value", "uid": "c1", "argument": "height", "value": "7"}
    )
    assert response.status_code in (403, 404)
    assert RefinementDraft.objects.get().data == saved


def test_a_multi_turn_call_refined_changes_its_entrys_verdict_under_the_refined_gold(
    real_wheel: Path,  # noqa: F811
    client: Client,
) -> None:
    benchmark = demo_benchmark()
    run, _ = run_conversation(benchmark, "multi_turn_base", "text")
    assert run.status == Run.Status.DONE and run.metrics["accuracy"] == 100.0, run.error
    before = dict(run.metrics)
    campaign, annotator, reviewer = refinement(benchmark, "multi_turn_base")
    client.force_login(annotator)
    edit_url, submit_url, token = open_item(client, campaign, "multi_turn_base_demo_0")
    # a call that is not one literal call is refused, naming why
    html = edit(client, edit_url, op="call", uid="c1", value="mkdir(dir_name=name)")
    assert "argument &#x27;dir_name&#x27;" in html
    refused = client.post(submit_url, {"verdict": "fixed", "token": token}, HTTP_HX_REQUEST="true")
    assert "need fixing first" in refused.content.decode()
    html = edit(client, edit_url, op="call", uid="c1", value="mkdir(dir_name='archive')")
    assert re.search(r'<span class="num">1.1</span>.*?<code>dir_name</code>', html, re.S)
    page = submit_and_approve(client, campaign, submit_url, token, reviewer)
    assert "<del>reports</del> <ins>archive</ins>" in page
    sample = Sample.objects.get(benchmark=benchmark, external_id="multi_turn_base_demo_0")
    assert sample.reference[0] == ["mkdir(dir_name='archive')"]
    comparison = compare_golds(run)
    assert [
        (c.external_id, c.published["accuracy"], c.refined["accuracy"]) for c in comparison.changed
    ] == [("multi_turn_base_demo_0", 100.0, 0.0)]
    assert comparison.metrics[PUBLISHED] == before
