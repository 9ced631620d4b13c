"""Refining BFCL's gold in the browser, with the keyboard only: an expert adds an acceptable
value to an argument's list and takes the published one out (each saved as they go), sees the
tool-call diff, submits "fixed"; the reviewer sees the same diff of the published and the edited
gold and approves, and the sample's next revision holds the edited list."""

from __future__ import annotations

import json
from typing import Any

from django.utils.text import slugify
from playwright.sync_api import expect

from annotation import services
from annotation.models import Assignment, Member
from benchmarks.models import Sample
from tests.browser.conftest import focused, posting, tab_to
from tests.factories import make_user
from tests.suites.bfcl.test_runs import demo_benchmark


def test_an_expert_edits_an_acceptable_value_and_the_reviewer_sees_the_diff(
    transactional_db: None, login: Any, live_server: Any, screenshot: Any
) -> None:
    benchmark = demo_benchmark()
    campaign = services.campaign_create(
        name="BFCL gold", kind="refinement", benchmark=benchmark, review_stage=True
    )
    services.items_from_split(campaign=campaign, split="simple_python")
    expert, reviewer = make_user(username="expert"), make_user(username="reviewer")
    services.members_add(campaign=campaign, users=[expert], role=Member.Role.ANNOTATOR)
    services.members_add(campaign=campaign, users=[reviewer], role=Member.Role.REVIEWER)
    services.campaign_activate(campaign=campaign)

    page = login(expert)
    page.goto(f"{live_server.url}/annotate/{campaign.pk}/")
    assignment = Assignment.objects.get(campaign=campaign, annotator=expert)
    sample = Sample.objects.get(pk=assignment.item.sample_id)
    ((function, parameters),) = sample.reference[0].items()
    argument = next(iter(parameters))
    published = parameters[argument][0]
    expect(page.locator("[data-editor]")).to_contain_text(function)

    # type a new acceptable value and press Enter: it joins the list
    tab_to(page, f"#add-c1-{slugify(argument)}")
    page.keyboard.type("6")
    with posting(page, "/refine/"):
        page.keyboard.press("Enter")
    values = page.locator(f'[data-argument="{argument}"] .value code')
    expect(values).to_have_text([json.dumps(published), "6"])
    # the published value out, with its button
    tab_to(page, f'button[aria-label="Remove {json.dumps(published)} from {argument}"]')
    with posting(page, "/refine/"):
        page.keyboard.press("Enter")
    expect(values).to_have_text(["6"])
    change = page.locator(".diff .change-argument_changed")
    expect(change).to_have_count(1)
    expect(change).to_contain_text(argument)
    expect(change.locator("del")).to_have_text(f"[{published!r}]")
    expect(change.locator("ins")).to_have_text("[6]")
    screenshot(page, "refinement-bfcl")

    page.keyboard.press("Escape")
    page.keyboard.press("f")
    expect(focused(page)).to_have_attribute("value", "fixed")
    with posting(page, "/submit/"):
        page.keyboard.press("Enter")

    review = login(reviewer)
    review.goto(f"{live_server.url}/review/{campaign.pk}/")
    diff = review.locator(".changes .change-argument_changed")
    expect(diff).to_have_count(1)
    expect(diff).to_contain_text(argument)
    expect(diff.locator("ins")).to_have_text("[6]")
    review.keyboard.press("a")
    with posting(review, "/review/"):
        review.keyboard.press("Enter")
    sample.refresh_from_db()
    assert sample.revision == 1
    assert sample.reference[0][function][argument] == [6]


def test_an_expert_edits_a_multi_turn_call_and_adds_one_to_its_turn(
    transactional_db: None, login: Any, live_server: Any
) -> None:
    benchmark = demo_benchmark()
    campaign = services.campaign_create(
        name="BFCL multi-turn gold", kind="refinement", benchmark=benchmark, review_stage=True
    )
    services.items_from_split(campaign=campaign, split="multi_turn_base")
    expert = make_user(username="expert")
    services.members_add(campaign=campaign, users=[expert], role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=campaign)
    page = login(expert)
    page.goto(f"{live_server.url}/annotate/{campaign.pk}/")
    assignment = Assignment.objects.get(campaign=campaign, annotator=expert)
    sample = Sample.objects.get(pk=assignment.item.sample_id)
    first = sample.reference[0][0]  # turn 1's first call, e.g. mkdir(dir_name='reports')
    expect(page.locator("#call-c1")).to_have_value(first)

    # a call that is not one literal call: its error shows next to it
    tab_to(page, "#call-c1")
    with posting(page, "/refine/"):
        page.keyboard.press("Control+A")
        page.keyboard.type("rm(name)")
        page.keyboard.press("Tab")
    expect(page.locator('[data-uid="c1"] .field-error')).to_contain_text("argument 1")
    # Alt+Enter adds a call after it in the same turn, and the focus goes to it
    tab_to(page, "#call-c1", backwards=True)
    with posting(page, "/refine/"):
        page.keyboard.press("Alt+Enter")
    expect(page.locator('[data-uid="n1"] .num')).to_have_text("1.2")
    expect(focused(page)).to_have_attribute("id", "call-n1")
    with posting(page, "/refine/"):
        page.keyboard.type("pwd()")
        page.keyboard.press("Tab")
    # the first call put back: the diff is the one inserted call of turn 1
    tab_to(page, "#call-c1", backwards=True)
    with posting(page, "/refine/"):
        page.keyboard.press("Control+A")
        page.keyboard.type(first)
        page.keyboard.press("Tab")
    inserted = page.locator(".diff .change-inserted")
    expect(inserted).to_have_count(1)
    expect(inserted).to_contain_text("1.2")
    expect(inserted).to_contain_text("pwd")
