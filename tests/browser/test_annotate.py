"""An annotator answers each kind of campaign with the keyboard only: the keys marked on
screen choose, Enter submits, and the answers stored are the ones chosen (pairwise sides
against the canonical order, whatever order the annotator was shown). The refinement
interface, with its editor and review, is in test_refinement.py."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, expect

from annotation.models import Assignment, Campaign, Label
from tests.browser.conftest import Studio, focused, posting


def open_workspace(
    studio: Studio, login: Any, live_server: Any, kind: str
) -> tuple[Campaign, Any, Page]:
    """annotator1's workspace in the demo campaign of this kind."""
    campaign, annotator = studio.campaigns[kind], studio.users["annotator1"]
    page = login(annotator)
    page.goto(f"{live_server.url}/annotate/{campaign.pk}/")
    return campaign, annotator, page


def leased(campaign: Campaign, user: Any) -> Assignment:
    return Assignment.objects.select_related("item").get(
        campaign=campaign, annotator=user, status=Assignment.Status.LEASED
    )


def submit(page: Page, key: str = "Enter") -> None:
    with posting(page, "/submit/"):
        page.keyboard.press(key)


def answered(page: Page, count: int) -> None:
    """The workspace now counts `count` answers of the annotator's (the next item is in)."""
    expect(page.locator(".workspace-meta strong").first).to_have_text(str(count))


def a_first(assignment: Assignment) -> bool:
    assert assignment.shown_order in ("AB", "BA")
    return assignment.shown_order == "AB"


def test_motivation_with_the_guidelines_and_an_undo(
    studio: Studio, login: Any, live_server: Any, screenshot: Any
) -> None:
    campaign, annotator, page = open_workspace(studio, login, live_server, "motivation")
    # the keyboard starts on the form
    expect(focused(page)).to_have_attribute("name", "reason")
    first = leased(campaign, annotator)

    # g opens the guidelines, Esc closes them
    page.keyboard.press("g")
    panel = page.locator("#guidelines-panel")
    expect(panel).to_be_visible()
    expect(panel).to_contain_text("Why would a model need this tool?")
    screenshot(page, "motivation-guidelines")
    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()

    page.keyboard.press("3")
    expect(page.locator('input[name="reason"][value="C"]')).to_be_checked()
    submit(page)
    answered(page, 1)
    assert Label.objects.get(annotator=annotator).answers == {"reason": "C"}
    assert leased(campaign, annotator).item_id != first.item_id

    # u takes the answer back: the same tool again, with its answer chosen
    with posting(page, "/undo/"):
        page.keyboard.press("u")
    answered(page, 0)
    expect(page.locator(".tool-name")).to_have_text(first.item.tool.name)
    expect(page.locator('input[name="reason"][value="C"]')).to_be_checked()
    page.keyboard.press("1")
    expect(page.locator('input[name="reason"][value="A"]')).to_be_checked()
    screenshot(page, "motivation")
    submit(page)
    answered(page, 1)

    labels = Label.objects.filter(annotator=annotator).order_by("created_at")
    assert [(lb.item_id, lb.answers, lb.is_current, bool(lb.revoked_at)) for lb in labels] == [
        (first.item_id, {"reason": "C"}, False, True),
        (first.item_id, {"reason": "A"}, True, False),
    ]


def test_turing_three_questions_and_the_shortcut_list(
    studio: Studio, login: Any, live_server: Any, screenshot: Any
) -> None:
    campaign, annotator, page = open_workspace(studio, login, live_server, "turing")
    assignment = leased(campaign, annotator)

    page.keyboard.press("?")
    expect(page.locator("#shortcuts")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#shortcuts")).to_be_hidden()

    # left overall, a tie on format, right on relevance (keys 1-3, 4-6, 7-9)
    for key in "159":
        page.keyboard.press(key)
    for question, side in (("overall", "left"), ("format", "tie"), ("relevance", "right")):
        expect(page.locator(f'input[name="{question}"][value="{side}"]')).to_be_checked()
    screenshot(page, "turing")
    submit(page)
    answered(page, 1)

    left = 1 if a_first(assignment) else -1
    label = Label.objects.get(annotator=annotator)
    assert label.item_id == assignment.item_id
    assert label.answers == {"overall": left, "format": 0, "relevance": -left}


def test_pairwise_with_a_note(
    studio: Studio, login: Any, live_server: Any, screenshot: Any
) -> None:
    campaign, annotator, page = open_workspace(studio, login, live_server, "pairwise")
    assignment = leased(campaign, annotator)

    page.keyboard.press("3")
    expect(page.locator('input[name="better"][value="right"]')).to_be_checked()
    # n writes a note; Ctrl+Enter submits from it
    page.keyboard.press("n")
    expect(focused(page)).to_have_attribute("name", "note")
    page.keyboard.type("Asks for the audiobook, as the user said.")
    screenshot(page, "pairwise")
    submit(page, "Control+Enter")
    answered(page, 1)

    label = Label.objects.get(annotator=annotator)
    assert label.item_id == assignment.item_id
    # right is B when A was shown first, A otherwise
    assert label.answers == {"better": -1 if a_first(assignment) else 1}
    assert label.note == "Asks for the audiobook, as the user said."


def test_baseline_two_tools_then_none(
    studio: Studio, login: Any, live_server: Any, screenshot: Any
) -> None:
    campaign, annotator, page = open_workspace(studio, login, live_server, "baseline")
    first = leased(campaign, annotator)
    choices = first.item.payload["choices"]
    boxes = page.locator('input[name="tools"]')

    # three tools is one too many: refused next to the form, the choices kept
    for key in "124":
        page.keyboard.press(key)
    submit(page)
    expect(page.locator("#form-error")).to_contain_text("choose at most 2")
    expect(page.locator("#form-error")).to_be_focused()
    for index, checked in enumerate((True, True, False, True)):
        box = expect(boxes.nth(index))
        box.to_be_checked() if checked else box.not_to_be_checked()
    # 1 again takes the first tool off
    page.keyboard.press("1")
    expect(boxes.first).not_to_be_checked()
    screenshot(page, "baseline")
    submit(page)
    answered(page, 1)
    assert Label.objects.get(item=first.item).answers == {"tools": [choices[1], choices[3]]}

    # the next item: a tool chosen, then 0 clears it (no tool is needed)
    second = leased(campaign, annotator)
    page.keyboard.press("2")
    expect(boxes.nth(1)).to_be_checked()
    page.keyboard.press("0")
    for index in range(4):
        expect(boxes.nth(index)).not_to_be_checked()
    submit(page)
    expect(page.locator(".done")).to_contain_text("Nothing left for you here")
    assert Label.objects.get(item=second.item).answers == {"tools": []}


def test_error_types_several_at_once(
    studio: Studio, login: Any, live_server: Any, screenshot: Any
) -> None:
    campaign, annotator, page = open_workspace(studio, login, live_server, "error_types")
    assignment = leased(campaign, annotator)

    # four chosen, the second taken back by its key
    for key in "12352":
        page.keyboard.press(key)
    checked = page.locator('input[name="types"]:checked')
    expect(checked).to_have_count(3)
    screenshot(page, "error_types")
    submit(page)
    expect(page.locator(".done")).to_contain_text("Nothing left for you here")

    label = Label.objects.get(annotator=annotator)
    assert label.item_id == assignment.item_id
    assert label.answers == {"types": ["incorrect_invocation", "no_reasoning", "endless_retry"]}
