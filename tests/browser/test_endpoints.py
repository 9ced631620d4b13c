"""Endpoints in the browser (issue 29): a researcher adds one from the navigation with the
keyboard, its key shown only by its last four characters, and checks the connection in place
(htmx) against a local OpenAI-compatible server."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from tests.browser.conftest import Studio, posting
from tests.fake_openai import FakeOpenAI

KEY = "sk-proj-Zq8vT2mLk4Rx9wEy7uB3nC6dF1gH5jK0wxyz"


def test_a_researcher_adds_an_endpoint_and_checks_its_connection_in_place(
    studio: Studio, login: Any, live_server: Any, screenshot: Any
) -> None:
    with FakeOpenAI() as server:
        page = login(studio.users["researcher"])
        page.goto(f"{live_server.url}/")
        nav = page.locator('nav[aria-label="Main"]')
        expect(nav.locator('a[href^="/admin"]')).to_have_count(0)
        nav.get_by_role("link", name="Endpoints").focus()
        page.keyboard.press("Enter")
        expect(page.locator("h1")).to_have_text("Endpoints")
        expect(nav.locator('a[aria-current="page"]')).to_have_text("Endpoints")
        page.get_by_role("link", name="Add an endpoint").focus()
        page.keyboard.press("Enter")
        page.get_by_label("Name").fill("fake")
        page.get_by_label("Base URL").fill(server.base_url)
        page.get_by_label("Model").fill("fake-model")
        page.get_by_label("Key", exact=True).fill(KEY)
        page.get_by_label("Max concurrency").fill("3")
        page.get_by_role("button", name="Add the endpoint").focus()
        page.keyboard.press("Enter")
        expect(page.locator("h1")).to_have_text("Endpoint fake")
        expect(page.locator("#key-status")).to_have_text("stored, ends with …wxyz")
        expect(page.locator("body")).not_to_contain_text(KEY[:12])
        page.get_by_role("button", name="Check the connection").focus()
        with posting(page, "/check/"):
            page.keyboard.press("Enter")
        expect(page.locator("#check-result")).to_contain_text(
            "reachable; it offers model 'fake-model'"
        )
        expect(page.locator("h1")).to_have_text("Endpoint fake")  # in place, not a new page
        screenshot(page, "endpoint-checked")
