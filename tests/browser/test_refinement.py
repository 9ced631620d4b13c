"""The refinement editor and its review, with the keyboard only: an annotator moves a step,
rewrites one, adds one and changes an argument (each saved as they go), sees the tool-call-aware
diff, submits "fixed", and keeps the next sample; a reviewer approves the first, which becomes
the sample's next revision, and returns the second with a comment that its author then sees."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, expect

from annotation.models import Assignment, Label
from benchmarks.models import Sample, SampleRevision
from tests.browser.conftest import Studio, focused, posting, tab_to


def rows(page: Page) -> list[str]:
    return page.locator("[data-editor] [data-uid]").evaluate_all(
        "rows => rows.map(row => row.dataset.uid)"
    )


def retype(page: Page, text: str) -> None:
    """Replace the focused field's text by typing, and wait for the autosave it sends."""
    with posting(page, "/refine/"):
        page.keyboard.press("Control+A")
        page.keyboard.type(text)


def test_refine_by_keyboard_then_review(
    studio: Studio, login: Any, live_server: Any, screenshot: Any
) -> None:
    campaign = studio.campaigns["refinement"]
    annotator, reviewer = studio.users["annotator1"], studio.users["researcher"]
    page = login(annotator)
    page.goto(f"{live_server.url}/annotate/{campaign.pk}/")
    first = Assignment.objects.get(campaign=campaign, annotator=annotator)
    sample = Sample.objects.get(pk=first.item.sample_id)
    # the keyboard starts on the verdict
    expect(focused(page)).to_have_attribute("value", "keep")
    assert rows(page) == ["s1", "s2", "s3", "s4", "s5", "s6"]

    # Alt+Up moves step 1.3 above 1.2; the focus stays on its text
    tab_to(page, "#text-s4", backwards=True)
    with posting(page, "/refine/"):
        page.keyboard.press("Alt+ArrowUp")
    assert rows(page) == ["s1", "s2", "s4", "s3", "s5", "s6"]
    expect(focused(page)).to_have_attribute("id", "text-s4")
    expect(page.locator('[data-uid="s4"] .num')).to_have_text("1.2")
    retype(page, "Decide whether it will be windy (Windy: gusts above 40 km/h)")

    # Alt+Enter adds a step after 2.1, and the focus goes to its text
    tab_to(page, "#text-s6")
    with posting(page, "/refine/"):
        page.keyboard.press("Alt+Enter")
    new = [uid for uid in rows(page) if not uid.startswith("s")]
    assert len(new) == 1
    expect(focused(page)).to_have_attribute("id", f"text-{new[0]}")
    expect(page.locator(f'[data-uid="{new[0]}"] .num')).to_have_text("2.2")
    retype(page, "Tell the user whether to take the tram")

    # an argument of the alarm, from the form generated from set_alarm's schema
    tab_to(page, "#arg-s6-label", backwards=True)
    page.keyboard.press("Control+A")
    page.keyboard.type("Windy: take the tram")
    with posting(page, "/refine/"):
        page.keyboard.press("Tab")  # leaving the field saves the step's arguments

    changes = page.locator(".diff .change")
    expect(changes).to_have_count(4)
    expect(page.locator(".diff .change-moved")).to_contain_text("from 1.3")
    expect(page.locator(".diff .change-text")).to_contain_text("gusts above 40 km/h")
    expect(page.locator(".diff .change-inserted")).to_contain_text("Tell the user")
    argument = page.locator(".diff .change-argument_changed")
    expect(argument).to_contain_text("label")
    expect(argument).to_contain_text("Windy: take the tram")
    screenshot(page, "refinement")

    # Esc leaves the editor; f chooses "fixed", Enter submits
    page.keyboard.press("Escape")
    page.keyboard.press("f")
    expect(page.locator('input[name="verdict"][value="fixed"]')).to_be_checked()
    with posting(page, "/submit/"):
        page.keyboard.press("Enter")
    expect(page.locator(".workspace-meta strong").first).to_have_text("1")
    fixed = Label.objects.get(annotator=annotator, item=first.item)
    assert fixed.answers["verdict"] == "fixed" and fixed.review == Label.Review.PENDING
    assert sorted(c["kind"] for c in fixed.answers["diff"]) == [
        "argument_changed",
        "inserted",
        "moved",
        "text",
    ]
    # the next sample is kept as it is
    second = Assignment.objects.get(
        campaign=campaign, annotator=annotator, status=Assignment.Status.LEASED
    )
    page.keyboard.press("k")
    with posting(page, "/submit/"):
        page.keyboard.press("Enter")
    expect(page.locator(".workspace-meta strong").first).to_have_text("2")

    # the reviewer approves the first with a and Enter
    review = login(reviewer)
    review.goto(f"{live_server.url}/review/{campaign.pk}/")
    expect(review.locator(".workspace-meta strong")).to_have_text("2")
    expect(review.locator(".changes .change")).to_have_count(4)
    expect(review.locator(".changes")).to_contain_text("Tell the user whether to take the tram")
    screenshot(review, "refinement-review")
    review.keyboard.press("a")
    expect(review.locator('input[name="decision"][value="approve"]')).to_be_checked()
    with posting(review, "/review/"):
        review.keyboard.press("Enter")
    sample.refresh_from_db()
    assert sample.revision == 1
    texts = [step["text"] for step in sample.reference["steps"]]
    assert texts.index("Decide whether it will be windy (Windy: gusts above 40 km/h)") == 2
    assert texts[-1] == "Tell the user whether to take the tram"
    assert [r.number for r in SampleRevision.objects.filter(sample=sample)] == [0, 1]

    # and returns the second: r, n for the comment, Ctrl+Enter from it
    expect(review.locator(".workspace-meta strong")).to_have_text("1")
    review.keyboard.press("r")
    review.keyboard.press("n")
    expect(focused(review)).to_have_attribute("name", "comment")
    review.keyboard.type("Step 2.1 books nothing: say which train.")
    with posting(review, "/review/"):
        review.keyboard.press("Control+Enter")
    expect(review.locator(".done")).to_contain_text("Nothing to review")
    returned = Label.objects.get(assignment=second)
    assert (returned.review, returned.is_current) == (Label.Review.RETURNED, False)

    # its author finds it back, with the comment
    page.goto(f"{live_server.url}/annotate/{campaign.pk}/")
    expect(page.locator(".item-card .form-errors")).to_contain_text(
        "Step 2.1 books nothing: say which train."
    )
    screenshot(page, "refinement-returned")
