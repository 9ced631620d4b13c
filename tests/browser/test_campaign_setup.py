"""The demo researcher (never the superuser) sets up a pairwise campaign from two runs through
to opening it, keyboard only, starting from the run comparison's link
(`/campaigns/new/?kind=pairwise&runs=A,B`): create with a live guidelines preview, questions,
items, members, the preview of an item exactly as an annotator sees it (nothing stored), open;
then an annotator finds it in their list and annotates its first item. Screenshots at
1366 x 768."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, expect

from annotation.models import Assignment, Campaign, Label, Member
from evaluation.models import Run
from tests.browser.conftest import Studio

WIDE = {"width": 1366, "height": 768}


def press(page: Page, selector: str, key: str = "Enter") -> None:
    """Focus a control and press a key on it (no pointer: the fixture fails a test that
    uses the mouse)."""
    control = page.locator(selector)
    control.focus()
    control.press(key)


def fits(page: Page) -> None:
    """Nothing is wider than the window: no sideways scrolling at 1366 px."""
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= WIDE["width"], f"{page.url} is {width} px wide"


def test_a_researcher_sets_up_a_pairwise_campaign_from_two_runs_and_opens_it(
    studio: Studio, login: Any, live_server: Any, screenshot: Any
) -> None:
    run_a = Run.objects.get(name="Demo model A (MTU-Bench S-S)")
    run_b = Run.objects.get(name="Demo model B (MTU-Bench S-S)")
    researcher = studio.users["researcher"]
    assert not researcher.is_superuser
    page = login(researcher)
    page.set_viewport_size(WIDE)

    # the comparison's link: kind pairwise, runs A and B
    page.goto(f"{live_server.url}/campaigns/new/?kind=pairwise&runs={run_a.pk},{run_b.pk}")
    expect(page.locator('input[name="kind"][value="pairwise"]')).to_be_checked()
    expect(page.locator(".prefilled")).to_contain_text(run_a.name)
    expect(page.locator('.stepper [aria-current="step"]')).to_contain_text("Create")
    page.locator("#name").fill("Demo A vs B, from the browser")
    # the guidelines' preview follows the typing (htmx, the safe Markdown renderer)
    with page.expect_response(lambda r: "/campaigns/guidelines-preview/" in r.url):
        page.locator("#guidelines").fill(
            "# Which answer is better?\n\n- the right **tool**\n- the right arguments\n\n<b>x</b>"
        )
    preview = page.locator("#guidelines-preview")
    expect(preview.locator("strong")).to_have_text("tool")
    expect(preview).to_contain_text("<b>x</b>")  # shown as text, never as markup
    fits(page)
    screenshot(page, "campaign-setup-1-create")
    press(page, "form.setup-form button[type=submit]")

    # questions: the pairwise kind's own question, saved as it is
    expect(page.locator('.stepper [aria-current="step"]')).to_contain_text("Questions")
    campaign = Campaign.objects.get(name="Demo A vs B, from the browser")
    assert (campaign.kind, campaign.labels_per_item) == ("pairwise", 3)
    expect(page.locator('input[name="q-0-key"]')).to_have_value("better")
    fits(page)
    screenshot(page, "campaign-setup-2-questions")
    press(page, 'button[value="save"]:not(.visually-hidden)')

    # items: runs A and B chosen already
    expect(page.locator('.stepper [aria-current="step"]')).to_contain_text("Items")
    expect(page.locator("#run")).to_have_value(str(run_a.pk))
    expect(page.locator("#run_b")).to_have_value(str(run_b.pk))
    fits(page)
    screenshot(page, "campaign-setup-3-items")
    press(page, "form.setup-form button[type=submit]")

    # members: two annotators for three labels per item, and a warning says so
    expect(page.locator('.stepper [aria-current="step"]')).to_contain_text("Members")
    built = campaign.items.count()
    assert built > 0
    for name in ("annotator1", "annotator2"):
        press(page, f'input[aria-label="{name} as annotator"]', "Space")
    press(page, "form.setup-form button[type=submit]")

    # preview: the studio's item, with the question, and nothing stored
    expect(page.locator('.stepper [aria-current="step"]')).to_contain_text("Preview")
    expect(page.locator(".setup-warnings")).to_contain_text("2 annotators for 3 labels per item")
    expect(page.locator(".item-view .side")).to_have_count(2)
    expect(page.locator('input[name="better"]')).to_have_count(3)
    assert not Assignment.objects.filter(campaign=campaign).exists()
    assert not Label.objects.filter(campaign=campaign).exists()
    fits(page)
    screenshot(page, "campaign-setup-5-preview")

    # back to the members step (a draft's steps can be revisited): the warning is there too
    press(page, '.stepper a:has-text("Members and roles")')
    expect(page.locator(".setup-warnings")).to_be_visible()
    expect(page.locator('input[aria-label="annotator1 as annotator"]')).to_be_checked()
    fits(page)
    screenshot(page, "campaign-setup-4-members")

    # open
    press(page, '.stepper a:has-text("Open")')
    expect(page.locator(".facts")).to_contain_text(str(built))
    fits(page)
    screenshot(page, "campaign-setup-6-open")
    press(page, 'form[action$="/setup/open/"] button')
    page.wait_for_url(f"**/campaigns/{campaign.pk}/progress/")
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.ACTIVE
    assert set(
        Member.objects.filter(campaign=campaign).values_list("user__username", flat=True)
    ) == {"annotator1", "annotator2"}

    # the researcher's list: the campaign is open, no longer a draft to continue
    page.goto(f"{live_server.url}/campaigns/")
    row = page.locator("tr", has_text="Demo A vs B, from the browser")
    expect(row).to_contain_text("Active")
    expect(row.locator("a", has_text="Progress")).to_be_visible()
    fits(page)
    screenshot(page, "campaign-setup-list")

    # an annotator sees it in their list and gets its first item
    annotator = login(studio.users["annotator1"])
    annotator.set_viewport_size(WIDE)
    annotator.goto(f"{live_server.url}/annotate/")
    mine = annotator.locator("tr", has_text="Demo A vs B, from the browser")
    expect(mine).to_be_visible()
    press(annotator, f'a[href="/annotate/{campaign.pk}/"]')
    expect(annotator.locator(".item-view .side")).to_have_count(2)
    expect(annotator.locator('input[name="better"]')).to_have_count(3)
    assert Assignment.objects.filter(campaign=campaign, annotator__username="annotator1").exists()
    screenshot(annotator, "campaign-setup-annotator")
