"""The demo researcher (never the superuser) sets up a pairwise campaign from two runs through
to opening it, keyboard only, starting from the run comparison's "Make a pairwise campaign from
these" (its link: `/campaigns/new/?kind=pairwise&runs=A,B`): create with a live guidelines
preview, questions, items, members, the preview of an item exactly as an annotator sees it
(nothing stored), open; then an annotator finds it in their list and annotates its first item.
Also: choices edited as rows, and a Turing campaign's pairs file. Screenshots at 1366 x 768."""

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

    # from the comparison of the two runs, "Make a pairwise campaign from these"
    page.goto(f"{live_server.url}/runs/compare/?a={run_a.pk}&b={run_b.pk}")
    press(page, "#make-campaign")
    page.wait_for_url(f"**/campaigns/new/?kind=pairwise&runs={run_a.pk},{run_b.pk}")
    expect(page.locator('input[name="kind"][value="pairwise"]')).to_be_checked()
    expect(page.locator(".prefilled")).to_contain_text(run_a.name)
    expect(page.locator('.stepper [aria-current="step"]')).to_contain_text("Create")
    # the demo has two annotators: a pairwise campaign asks two labels per item, not three
    expect(page.locator("label.kind-choice", has_text="Pairwise")).to_contain_text(
        "2 labels per item by default (the kind asks 3"
    )
    # and every option is on this step, the random order of the sides on by default
    expect(page.locator('input[name="randomize_sides"]')).to_be_checked()
    expect(page.locator('input[name="adjudication_stage"]')).to_have_count(1)
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
    assert (campaign.kind, campaign.labels_per_item) == ("pairwise", 2)
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

    # members: one annotator for two labels per item: this step again, with a warning
    expect(page.locator('.stepper [aria-current="step"]')).to_contain_text("Members")
    built = campaign.items.count()
    assert built > 0
    expect(page.locator("#labels_per_item")).to_have_value("2")
    press(page, 'input[aria-label="annotator1 as annotator"]', "Space")
    press(page, "form.setup-form button[type=submit]")
    expect(page.locator('.stepper [aria-current="step"]')).to_contain_text("Members")
    expect(page.locator(".setup-warnings")).to_contain_text("1 annotator for 2 labels per item")
    expect(page.locator('input[aria-label="annotator1 as annotator"]')).to_be_checked()
    fits(page)
    screenshot(page, "campaign-setup-4-members")
    # the second annotator, on the same step
    press(page, 'input[aria-label="annotator2 as annotator"]', "Space")
    press(page, "form.setup-form button[type=submit]")

    # preview: the studio's item, with the question, and nothing stored
    expect(page.locator('.stepper [aria-current="step"]')).to_contain_text("Preview")
    expect(page.locator(".setup-warnings")).to_have_count(0)
    expect(page.locator(".item-view .side")).to_have_count(2)
    expect(page.locator('input[name="better"]')).to_have_count(3)
    assert not Assignment.objects.filter(campaign=campaign).exists()
    assert not Label.objects.filter(campaign=campaign).exists()
    fits(page)
    screenshot(page, "campaign-setup-5-preview")

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

    # an annotator sees it in their list under its neutral name (a blind campaign's own name
    # may say which runs it compares) and gets its first item
    annotator = login(studio.users["annotator1"])
    annotator.set_viewport_size(WIDE)
    annotator.goto(f"{live_server.url}/annotate/")
    mine = annotator.locator("tr", has_text=campaign.shown_name)
    expect(mine).to_be_visible()
    expect(annotator.locator("main")).not_to_contain_text("Demo A vs B")
    press(annotator, f'a[href="/annotate/{campaign.pk}/"]')
    expect(annotator.locator(".item-view .side")).to_have_count(2)
    expect(annotator.locator('input[name="better"]')).to_have_count(3)
    assert Assignment.objects.filter(campaign=campaign, annotator__username="annotator1").exists()
    screenshot(annotator, "campaign-setup-annotator")


def test_a_researcher_edits_choices_as_rows_with_the_keyboard(
    studio: Studio, login: Any, live_server: Any, screenshot: Any
) -> None:
    from annotation import services
    from benchmarks.models import Benchmark
    from tests.browser.conftest import focused

    researcher = studio.users["researcher"]
    campaign = services.campaign_create(
        name="Why tools, again",
        kind="motivation",
        benchmark=Benchmark.objects.get(name="MetaTool (demo)"),
        user=researcher,
    )
    page = login(researcher)
    page.set_viewport_size(WIDE)
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/setup/questions/")
    rows = page.locator("table.choice-rows tbody tr")
    expect(rows).to_have_count(4)

    # add a row: the form comes back with it, the keyboard on its value
    with page.expect_response(lambda r: "/setup/questions/" in r.url):
        press(page, "#q-0-add-choice")
    expect(rows).to_have_count(5)
    expect(focused(page)).to_have_attribute("name", "q-0-choice-4-value")
    page.keyboard.type("E")
    page.keyboard.press("Tab")
    page.keyboard.type("Other <reasons>")
    # remove the first row (what was typed in the others stays)
    with page.expect_response(lambda r: "/setup/questions/" in r.url):
        press(page, 'button[value="remove-choice:0:0"]')
    expect(rows).to_have_count(4)
    expect(page.locator('input[name="q-0-choice-3-label"]')).to_have_value("Other <reasons>")
    # htmx is done with the swap (it settles the new form's attributes for a moment after the
    # rows are in: typing into it before then was undone once in CI)
    expect(page.locator(".htmx-request, .htmx-swapping, .htmx-settling")).to_have_count(0)
    # a label left empty: refused, the row's field marked
    page.locator('input[name="q-0-choice-1-label"]').fill("")
    expect(page.locator('input[name="q-0-choice-1-label"]')).to_have_value("")
    with page.expect_response(lambda r: "/setup/questions/" in r.url) as refused:
        press(page, 'button[value="save"]:not(.visually-hidden)')
    assert refused.value.status == 400
    expect(page.locator("#form-error")).to_contain_text("question 1, choice 2: give its label")
    expect(page.locator('input[name="q-0-choice-1-label"]')).to_have_attribute(
        "aria-invalid", "true"
    )
    fits(page)
    screenshot(page, "campaign-setup-questions-rows")
    page.locator('input[name="q-0-choice-1-label"]').fill("Special inputs or outputs")
    press(page, 'button[value="save"]:not(.visually-hidden)')
    expect(page.locator('.stepper [aria-current="step"]')).to_contain_text("Items")
    question = campaign.questions.get()
    assert [c["value"] for c in question.choices] == ["B", "C", "D", "E"]
    assert question.choices[3]["label"] == "Other <reasons>"

    # the researcher's list: the draft first, with a link that continues at its next step
    page.goto(f"{live_server.url}/campaigns/")
    first = page.locator("tbody tr").first
    expect(first).to_contain_text("Why tools, again")
    expect(first).to_contain_text("Draft")
    press(page, "tbody tr:first-child a.button")
    expect(page.locator('.stepper [aria-current="step"]')).to_contain_text("Items")
    page.goto(f"{live_server.url}/campaigns/")
    fits(page)
    screenshot(page, "campaign-setup-list-draft")

    # its first step again: the details of a draft, the stages its kind has
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/setup/")
    expect(page.locator('input[name="adjudication_stage"]')).to_have_count(1)
    expect(page.locator('input[name="review_stage"]')).to_have_count(0)
    expect(page.locator('input[name="show_gold"]')).to_have_count(0)  # tools have no gold
    expect(page.locator("#labels_per_item")).to_have_value("2")
    fits(page)
    screenshot(page, "campaign-setup-details")


def test_a_turing_campaigns_items_come_from_an_uploaded_pairs_file(
    studio: Studio, login: Any, live_server: Any, screenshot: Any, tmp_path: Any
) -> None:
    import json

    from annotation import services

    researcher = studio.users["researcher"]
    campaign = services.campaign_create(name="Real or simulated, again", kind="turing")
    assert campaign.labels_per_item == 2  # the demo's two annotators
    page = login(researcher)
    page.set_viewport_size(WIDE)
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/setup/items/")
    # only what a Turing campaign is built from: a pairs file and a limit
    expect(page.locator("#run")).to_have_count(0)
    expect(page.locator("#split")).to_have_count(0)
    broken = tmp_path / "my pairs.json"
    broken.write_text(json.dumps([{"documentation": "d", "real": 1}]), encoding="utf-8")
    page.locator("#pairs").set_input_files(str(broken))
    press(page, "form.setup-form button[type=submit]")
    expect(page.locator("#form-error")).to_contain_text(
        "my pairs.json, record 0: missing arguments, simulated"
    )
    expect(page.locator("#pairs")).to_have_attribute("aria-invalid", "true")
    fits(page)
    screenshot(page, "campaign-setup-items-pairs-error")
    record = {"documentation": "Weather today", "arguments": {"city": "Oban"}}
    good = tmp_path / "pairs.json"
    good.write_text(
        json.dumps([{**record, "real": {"t": i}, "simulated": {"t": -i}} for i in range(4)]),
        encoding="utf-8",
    )
    page.locator("#pairs").set_input_files(str(good))
    page.locator("#limit").fill("3")
    press(page, "form.setup-form button[type=submit]")
    expect(page.locator('.stepper [aria-current="step"]')).to_contain_text("Members")
    assert campaign.items.count() == 3
