"""The demo researcher works with runs in the browser, keyboard only: launches a run from the page
against the fake OpenAI server and watches its prediction rows settle with a real Celery worker,
without reloading; then compares two runs of one task, filters to their disagreements and takes
the button to a pairwise campaign."""

from __future__ import annotations

import io
import threading
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management import call_command
from playwright.sync_api import Page, expect

from evaluation import services
from evaluation.models import Endpoint, Run
from tests.evaluation.conftest import (
    counting_answer,
    execute_run,
    flush_test_broker,
    make_counting_benchmark,
    make_endpoint,
)
from tests.fake_openai import FakeOpenAI
from tests.workers import celery_worker

WIDE = {"width": 1366, "height": 768}


def demo_researcher() -> Any:
    call_command("seed_demo", stdout=io.StringIO())
    return get_user_model().objects.get(username="researcher")


def press(page: Page, selector: str) -> None:
    """Enter on an element (focused by script: the pages must not see the mouse)."""
    page.locator(selector).focus()
    page.keyboard.press("Enter")


def test_a_run_launched_from_the_page_settles_row_by_row_without_reloading(
    transactional_db: None, login: Any, live_server: Any, screenshot: Any, tmp_path: Path
) -> None:
    flush_test_broker()
    researcher = demo_researcher()
    benchmark = make_counting_benchmark(tmp_path, 12)
    # one request at a time, each taking a while: the rows settle one after another
    with (
        FakeOpenAI(responder=counting_answer, latency_ms=700) as server,
        celery_worker(tmp_path, concurrency=1),
    ):
        make_endpoint(server.base_url, name="slow fake", max_concurrency=1)
        page = login(researcher)
        page.set_viewport_size(WIDE)
        page.goto(f"{live_server.url}/runs/new/")
        # picking the benchmark redraws the form with its tasks and splits
        page.locator("#id_benchmark").select_option(label=benchmark.name)
        expect(page.locator('#id_task option[value="generic:answer"]')).to_have_count(1)
        expect(page.locator("#id_task optgroup")).to_have_count(1)
        page.locator("#id_task").select_option("generic:answer")
        page.locator("#id_split").select_option("default")
        endpoint = Endpoint.objects.get(name="slow fake")
        page.locator("#id_endpoint").select_option(str(endpoint.pk))
        page.locator("#id_name").fill("watched")
        page.locator("#id_item_limit").fill("8")
        screenshot(page, "runs-launch-form")
        press(page, "#launch-form button[type=submit]")
        expect(page.locator("h1")).to_contain_text("watched")
        run = Run.objects.get(name="watched")
        assert page.url.endswith(f"/runs/{run.pk}/")
        # a mark that a reload would wipe
        page.evaluate("window.notReloaded = true")
        rows = page.locator("#predictions tbody tr")
        expect(rows).to_have_count(8)
        # some rows settled while others are still to go, on the same page
        expect(page.locator("#predictions .status-done").first).to_be_visible(timeout=30_000)
        assert page.locator("#predictions .status-pending, #predictions .status-running").count()
        screenshot(page, "runs-rows-settling")
        expect(page.locator("#predictions .status-done")).to_have_count(8, timeout=60_000)
        assert page.evaluate("window.notReloaded") is True
        # every row shows its answer, and the page stopped polling for rows
        expect(rows.filter(has_text="Answer:")).to_have_count(8)
        expect(page.locator("#rows-poll[hx-get]")).to_have_count(0, timeout=10_000)
        expect(page.locator("#progress .status-done")).to_be_visible(timeout=30_000)
        screenshot(page, "runs-rows-settled")
    flush_test_broker()


def test_two_runs_compared_filtered_to_disagreements_make_a_campaign(
    transactional_db: None, login: Any, live_server: Any, screenshot: Any, tmp_path: Path
) -> None:
    researcher = demo_researcher()
    benchmark = make_counting_benchmark(tmp_path, 6)
    runs: list[Run] = []

    def two_runs() -> None:
        # right on even numbers; the other always says 0, and right on item 1 by copying A
        with FakeOpenAI(responder=counting_answer) as server:
            first = services.run_launch(
                benchmark=benchmark,
                task="answer",
                split="default",
                endpoint=make_endpoint(server.base_url, name="counting"),
                name="counter",
            )
            execute_run(first)
        with FakeOpenAI(responder=lambda request: "Answer: 0") as server:
            second = services.run_launch(
                benchmark=benchmark,
                task="answer",
                split="default",
                endpoint=make_endpoint(server.base_url, name="zero", model="zero-model"),
                name="zero",
            )
            execute_run(second)
        runs.extend([first, second])

    # Playwright's loop runs in this thread; the engine runs its own in another.
    worker = threading.Thread(target=two_runs)
    worker.start()
    worker.join(60)
    first, second = runs
    page = login(researcher)
    page.set_viewport_size(WIDE)
    page.goto(f"{live_server.url}/leaderboard/{benchmark.pk}/answer/")
    expect(page.locator('#compare-runs select[name="a"]')).to_have_value(str(first.pk))
    expect(page.locator('#compare-runs select[name="b"]')).to_have_value(str(second.pk))
    screenshot(page, "runs-leaderboard-compare")
    press(page, "#compare-runs button")
    expect(page.locator("h1")).to_have_text(f"Run #{first.pk} and run #{second.pk}, item by item")
    counts = page.locator("#compare-counts")
    expect(counts).to_contain_text("6 shared items")
    expect(counts).to_contain_text("0 agree")
    expect(counts).to_contain_text("6 disagree")
    expect(page.locator(".compare-table tbody tr")).to_have_count(6)
    expect(page.locator(".compare-table")).to_contain_text("What number comes after 0?")
    screenshot(page, "runs-compare-all")
    press(page, 'nav.filters a:text-is("Disagreements")')
    expect(page.locator('nav.filters a[aria-current="true"]')).to_have_text("Disagreements")
    expect(page.locator(".compare-table tbody tr.differs")).to_have_count(6)
    press(page, 'nav.filters a:text-is("Agreements")')
    expect(page.locator(".compare-table tbody")).to_contain_text("No item here.")
    press(page, 'nav.filters a:text-is("Disagreements")')
    screenshot(page, "runs-compare-disagreements")
    # the run page leads here too
    page.goto(f"{live_server.url}/runs/{second.pk}/")
    expect(page.locator('form[aria-label="Compare with another run"] select')).to_have_value(
        str(first.pk)
    )
    press(page, 'form[aria-label="Compare with another run"] button')
    expect(page.locator("h1")).to_have_text(f"Run #{second.pk} and run #{first.pk}, item by item")
    with page.expect_navigation():
        press(page, "#make-campaign")
    assert page.url.endswith(f"/campaigns/new/?kind=pairwise&runs={second.pk},{first.pk}")
