"""A researcher reads an agreement report: tables and plots, a filter that swaps the report in
place (keyboard only, as everywhere in the studio)."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

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
