"""An annotator judges a pair with what they need in view (issue 17): a MetaTool selection pair
shows the query, the candidate tools with their descriptions and each side's parsed pick; an
MTU-Bench pair shows the dialogue so far and each side's calls written as calls. Screenshots at
1,366 x 768 in .artifacts/browser/."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from tests.annotation.judge_items import metatool_pair, mtubench_pair

SCREEN = {"width": 1366, "height": 768}


def test_a_metatool_pair_with_its_candidates_and_picks(
    transactional_db: None, login: Any, live_server: Any, screenshot: Any
) -> None:
    campaign, annotator = metatool_pair()
    page = login(annotator)
    page.set_viewport_size(SCREEN)
    page.goto(f"{live_server.url}/annotate/{campaign.pk}/")
    item = page.locator(".item-view")
    expect(item.locator(".query")).to_have_text("Will it rain in Paris tomorrow?")
    tools = item.locator(".tool-list")
    expect(tools).to_be_visible()  # open: a judge reads three candidates at once
    expect(tools).to_contain_text("Current weather and forecasts for any city.")
    left, right = item.locator("article.side").all()
    expect(left.locator(".facts")).to_contain_text("PickWeatherTool")
    expect(right.locator(".facts")).to_contain_text("not read from the text")
    # the text that could not be read is open to read; its markup is text, not an element
    expect(right.locator("details pre.output")).to_be_visible()
    expect(right.locator("details pre.output")).to_contain_text('<script>alert("judge")</script>')
    expect(left.locator("details pre.output")).not_to_be_visible()
    assert page.locator(".item-view script").count() == 0
    expect(item).not_to_contain_text("Gold")
    # nothing is wider than the screen
    assert page.evaluate("document.documentElement.scrollWidth") <= SCREEN["width"]
    screenshot(page, "judge-metatool-pair")
    # the keys still answer: 1 chooses the left side, Enter submits
    page.keyboard.press("1")
    with page.expect_response(lambda r: "/submit/" in r.url and r.request.method == "POST"):
        page.keyboard.press("Enter")
    expect(page.locator(".workspace-meta strong").first).to_have_text("1")


def test_an_mtubench_pair_with_the_dialogue_and_calls(
    transactional_db: None, login: Any, live_server: Any, screenshot: Any
) -> None:
    campaign, annotator = mtubench_pair(show_gold=True)
    page = login(annotator)
    page.set_viewport_size(SCREEN)
    page.goto(f"{live_server.url}/annotate/{campaign.pk}/")
    item = page.locator(".item-view")
    dialogue = item.locator(".dialogue")
    expect(dialogue).to_contain_text("What's the weather like in Ghent on Friday?")
    expect(dialogue.locator(".call-text")).to_have_text('GetWeather(city="Ghent", date="Friday")')
    left, right = item.locator("article.side").all()
    # a long call: its keys on the call line, the values in a table under it
    expect(left.locator(".call-text")).to_have_text(
        "PlayMedia(genre, artist, device, playlist_note)"
    )
    expect(left.locator(".call-args")).to_contain_text('the one called "Let\'s get lost"')
    expect(right.locator(".call-text")).to_contain_text('LookupMusic(artist="<script>')
    assert page.locator(".item-view script").count() == 0
    # the campaign shows the gold: as a call too
    expect(item.locator(".gold .call-text")).to_have_text('PlayMedia(artist="Chet Baker")')
    assert page.evaluate("document.documentElement.scrollWidth") <= SCREEN["width"]
    screenshot(page, "judge-mtubench-pair")
