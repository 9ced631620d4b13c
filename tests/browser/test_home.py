"""Home in the browser: the demo researcher sees the open campaigns with their progress and a
run that is running; annotator1 sees their own campaigns and goes to work from there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from evaluation import services
from tests.browser.conftest import Studio
from tests.evaluation.conftest import make_counting_benchmark, make_endpoint
from tests.workers import flush_test_broker

WIDE = {"width": 1366, "height": 768}


def test_home_shows_each_user_what_needs_their_attention(
    studio: Studio, login: Any, live_server: Any, screenshot: Any, tmp_path: Path
) -> None:
    flush_test_broker()
    # a run launched with no worker to answer it: running, nothing settled
    run = services.run_launch(
        benchmark=make_counting_benchmark(tmp_path, 4),
        task="answer",
        split="default",
        endpoint=make_endpoint("http://127.0.0.1:9/v1"),
        name="waiting",
    )
    page = login(studio.users["researcher"])
    page.set_viewport_size(WIDE)
    page.goto(f"{live_server.url}/")
    expect(page.locator("h1")).to_have_text("What needs attention")
    campaigns = page.locator("#campaigns tbody tr")
    expect(campaigns).to_have_count(len(studio.campaigns))
    running = page.locator("#running")
    expect(running).to_contain_text(f"Run #{run.pk} waiting")
    expect(running).to_contain_text("0/4")
    expect(page.locator("#recent-runs")).to_contain_text("waiting")
    expect(page.locator('nav[aria-label="Main"] a[aria-current="page"]')).to_have_text("Home")
    screenshot(page, "home-researcher")

    page = login(studio.users["annotator1"])
    page.set_viewport_size(WIDE)
    page.goto(f"{live_server.url}/")
    mine = page.locator("#my-campaigns tbody tr")
    expect(mine).to_have_count(len(studio.campaigns))
    expect(page.locator("#campaigns, #running, #recent-runs")).to_have_count(0)
    expect(page.locator("body")).not_to_contain_text("waiting")
    screenshot(page, "home-annotator")
    first = page.locator("#my-campaigns a", has_text="Annotate").first
    href = first.get_attribute("href")
    first.focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(f"{live_server.url}{href}")
    flush_test_broker()
