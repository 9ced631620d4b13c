"""A researcher reads an agreement report: tables and plots, a filter that swaps the report in
place (keyboard only, as everywhere in the studio)."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from tests.annotation.test_agreement_directions import r4_campaign
from tests.annotation.test_agreement_report import pairwise_campaign
from tests.browser.conftest import tab_to
from tests.factories import make_superuser


def test_a_metric_chosen_in_the_filters_joins_the_report(
    transactional_db: None, login: Any, live_server: Any, screenshot: Any
) -> None:
    campaign, *_ = pairwise_campaign()
    page = login(make_superuser())
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/agreement/")
    report = page.locator("#report")
    expect(report).to_contain_text("Leaderboard of the runs")
    expect(report.locator("svg")).not_to_have_count(0)
    expect(report).not_to_contain_text("accuracy (metric)")
    # Space on the metric's checkbox: the report is computed again, with the metric
    tab_to(page, 'input[name="metric"][value="accuracy"]')
    with page.expect_response(lambda r: "/agreement/" in r.url and "metric=accuracy" in r.url):
        page.keyboard.press("Space")
    expect(report).to_contain_text("accuracy (metric)")
    expect(report).to_contain_text("against the mean human answer")
    assert "metric=accuracy" in page.url  # the address keeps the choice
    screenshot(page, "agreement")


def test_a_lower_is_better_metric_is_marked_and_counts_are_kept_apart(
    transactional_db: None, login: Any, live_server: Any, screenshot: Any
) -> None:
    campaign, *_ = r4_campaign()
    page = login(make_superuser())
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/agreement/")
    # flags and undeclared names are listed apart, never as checkboxes
    expect(page.locator('input[name="metric"]')).to_have_count(2)
    expect(page.locator("details.not-raters summary")).to_contain_text("3 other per-item values")
    tab_to(page, 'input[name="metric"][value="tool_errors"]')
    with page.expect_response(lambda r: "metric=tool_errors" in r.url):
        page.keyboard.press("Space")
    report = page.locator("#report")
    expect(report).to_contain_text("compared with its sign turned")
    expect(report).to_contain_text("the run with the lower value wins")
    expect(report.locator("svg text", has_text="\N{MINUS SIGN}tool_errors")).to_have_count(1)
    screenshot(page, "agreement-lower-is-better")
