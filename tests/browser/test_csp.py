"""The Content-Security-Policy in a real browser: the main pages (a researcher's, the admin's,
the API's) and the studio load and work with no violation reported (the login fixture fails a
test on any, in every browser test), the keyboard annotation goes on as before, the indented
rows of a refinement are indented by the stylesheet, and what the policy exists to stop is
stopped."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from annotation.models import Label
from benchmarks.models import Benchmark
from evaluation.models import Run
from tests.browser.conftest import Studio, posting


def test_the_watch_sees_what_the_policy_blocks(
    studio: Studio, login: Any, live_server: Any
) -> None:
    page = login(studio.users["researcher"])
    response = page.goto(f"{live_server.url}/")
    assert response is not None
    assert "script-src 'self'" in response.headers["content-security-policy"]
    # text that escaped escaping: an inline script, a handler, a style attribute
    page.evaluate(
        """() => {
          const script = document.createElement("script");
          script.textContent = "window.injected = true";
          document.body.append(script);
          document.body.insertAdjacentHTML(
            "beforeend", '<p style="color: red">x</p><img src="data:," onload="window.ran=1">'
          );
        }"""
    )
    page.wait_for_timeout(300)
    assert page.evaluate("window.injected === undefined && window.ran === undefined")
    blocked = " ".join(login.violations)
    assert "script-src" in blocked and "style-src" in blocked, login.violations
    login.violations.clear()


def test_the_main_pages_load_with_no_violation(
    studio: Studio, login: Any, live_server: Any
) -> None:
    benchmark = Benchmark.objects.order_by("pk").first()
    run = Run.objects.order_by("pk").first()
    assert benchmark is not None and run is not None
    sample = benchmark.samples.order_by("pk").first()
    campaign = studio.campaigns["pairwise"]
    paths = [
        "/",
        "/benchmarks/",
        f"/benchmarks/{benchmark.pk}/",
        f"/benchmarks/{benchmark.pk}/samples/{sample.pk}/",
        "/benchmarks/import/",
        "/runs/",
        f"/runs/{run.pk}/",
        f"/runs/{run.pk}/analyses/",
        "/runs/new/",
        "/judging/",
        "/campaigns/",
        "/campaigns/new/",
        f"/campaigns/{campaign.pk}/progress/",
        f"/campaigns/{campaign.pk}/agreement/",
        f"/campaigns/{campaign.pk}/setup/",
        "/annotate/",
        "/admin/",
        "/admin/evaluation/run/",
        f"/admin/evaluation/run/{run.pk}/change/",
        "/admin/annotation/campaign/add/",
        "/api/",
        "/api/runs/",
    ]
    page = login(studio.users["researcher"])
    for path in paths:
        response = page.goto(f"{live_server.url}{path}")
        assert response is not None and response.ok, path
        assert response.headers.get("content-security-policy"), path
        page.wait_for_load_state("load")
    # htmx works within it: a filter of the benchmark's samples swaps the list in place
    page.goto(f"{live_server.url}/benchmarks/{benchmark.pk}/")
    with page.expect_response(lambda r: "part=samples" in r.url):
        page.locator("form.filters select").first.select_option(index=1)
    assert not login.violations, login.violations


def test_annotating_by_keyboard_and_refining_work_within_it(
    studio: Studio, login: Any, live_server: Any
) -> None:
    annotator = studio.users["annotator1"]
    page = login(annotator)
    motivation = studio.campaigns["motivation"]
    page.goto(f"{live_server.url}/annotate/{motivation.pk}/")
    page.keyboard.press("2")
    expect(page.locator('input[name="reason"][value="B"]')).to_be_checked()
    with posting(page, "/submit/"):
        page.keyboard.press("Enter")
    expect(page.locator(".workspace-meta strong").first).to_have_text("1")
    assert Label.objects.get(campaign=motivation, annotator=annotator).answers == {"reason": "B"}
    # the refinement editor's rows are indented by class (no style attribute)
    refinement = studio.campaigns["refinement"]
    page.goto(f"{live_server.url}/annotate/{refinement.pk}/")
    rows = page.locator(".plan-rows > li.row")
    expect(rows.first).to_be_visible()
    indents = page.evaluate(
        """() => [...document.querySelectorAll('.plan-rows > li.row')].map(row => [
              [...row.classList].find(c => c.startsWith('indent-')),
              parseFloat(getComputedStyle(row).marginLeft),
          ])"""
    )
    rem = page.evaluate("parseFloat(getComputedStyle(document.documentElement).fontSize)")
    for name, margin in indents:
        assert margin == float(name.removeprefix("indent-")) * 1.6 * rem, (name, margin)
    assert not login.violations, login.violations
