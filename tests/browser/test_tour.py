"""The README's tour, walked as the demo researcher on a fresh database (keyboard only, real
Celery worker, the fake OpenAI server at the edge): a benchmark imported in the browser, an
endpoint set up on its page, a text and a native run of one task, their comparison, a pairwise
campaign made from them, two annotators answering in the studio, the agreement report, its CSVs
and the predictions CSV, and the benchmark exported.

Its screenshots are the README's pictures: with TOUR_SCREENSHOTS=docs/images/tour the test
writes them there as well (the window as seen, not the whole page, to keep them small)."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from playwright.sync_api import Page, expect

from annotation.models import Campaign, Label
from benchmarks.models import Benchmark
from evaluation.models import Endpoint, Run
from tests.browser.conftest import posting
from tests.fake_openai import FakeOpenAI, ToolRequest, oracle
from tests.workers import celery_worker, flush_test_broker

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
DEMO_FILE = ROOT / "benchmarks" / "demo" / "mtubench" / "S-S_eval.jsonl"
WIDE = {"width": 1366, "height": 768}
SLOW_MS = 90_000  # a worker on a loaded machine
ITEMS = 3  # of the campaign


def answer(request: ToolRequest) -> Any:
    """Native requests: a call of the first tool declared; text requests: a sentence."""
    if request.tools:
        return [(request.tools[0], {})]
    return "I would look that up first."


@pytest.fixture
def shot(screenshot: Callable[[Page, str], Path]) -> Iterator[Callable[[Page, str], None]]:
    folder = os.environ.get("TOUR_SCREENSHOTS", "")

    def take(page: Page, name: str) -> None:
        screenshot(page, f"tour-{name}")
        if folder:
            Path(folder).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(folder) / f"{name}.png"), animations="disabled")

    yield take


def press(page: Page, selector: str) -> None:
    page.locator(selector).focus()
    page.keyboard.press("Enter")


def finished(run: Run) -> Run:
    deadline = time.monotonic() + SLOW_MS / 1000
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if run.status != Run.Status.RUNNING:
            return run
        time.sleep(0.5)
    raise AssertionError(f"run #{run.pk} still running")


def launch(page: Page, url: str, benchmark: Benchmark, mode: str, name: str) -> Run:
    page.goto(f"{url}/runs/new/")
    page.locator("#id_benchmark").select_option(label=benchmark.name)
    # the form is drawn again with the benchmark's own tasks (one suite's group)
    expect(page.locator("#id_task optgroup")).to_have_count(1)
    expect(page.locator('#id_task option[value="mtubench:S-S"]')).to_have_count(1)
    page.locator("#id_task").select_option("mtubench:S-S")
    endpoint = Endpoint.objects.get(name="tour model")
    page.locator("#id_endpoint").select_option(str(endpoint.pk))
    page.locator("#id_tool_mode").select_option(mode)
    page.locator("#id_name").fill(name)
    page.locator("#id_item_limit").fill("6")
    with page.expect_navigation():
        press(page, "#launch-form button[type=submit]")
    refused = page.locator(".form-errors, .field-error")
    assert not refused.count(), refused.all_inner_texts()
    expect(page.locator("h1")).to_contain_text(name)
    run = finished(Run.objects.get(name=name))
    assert run.status == Run.Status.DONE, run.error
    page.reload()
    return run


def csv_rows(page: Page, url: str) -> list[list[str]]:
    response = page.request.get(url)
    assert response.ok, f"{response.status} from {url}"
    return list(csv.reader(io.StringIO(response.text())))


def test_the_researchers_tour(
    settings: Any, tmp_path: Path, login: Any, live_server: Any, shot: Any
) -> None:
    uploads = tmp_path / "uploads"
    settings.BENCHMARK_UPLOAD_DIR = uploads
    flush_test_broker()
    call_command("seed_demo", stdout=io.StringIO())
    users = {u.username: u for u in get_user_model().objects.all()}
    url = live_server.url
    with (
        FakeOpenAI(responder=oracle(answer)) as server,
        celery_worker(tmp_path, BENCHMARK_UPLOAD_DIR=str(uploads)),
    ):
        page = login(users["researcher"])
        page.set_viewport_size(WIDE)

        # 1. a benchmark's published file, imported in the browser
        page.goto(f"{url}/benchmarks/import/")
        page.select_option("#id_suite", "mtubench")
        page.set_input_files("#id_files", str(DEMO_FILE))
        page.focus("#id_benchmark_name")
        page.keyboard.type("MTU-Bench (tour)")
        page.keyboard.press("Enter")
        page.wait_for_url("**/benchmarks/import/*/")
        expect(page.locator("#import-status")).to_have_text("Done", timeout=SLOW_MS)
        benchmark = Benchmark.objects.get(name="MTU-Bench (tour)")
        shot(page, "01-import")

        # 2. an endpoint, on its page, its connection checked in place
        page.goto(f"{url}/endpoints/new/")
        page.get_by_label("Name").fill("tour model")
        page.get_by_label("Base URL").fill(server.base_url)
        page.get_by_label("Model").fill("fake-model")
        page.get_by_label("Max concurrency").fill("4")
        page.get_by_role("button", name="Add the endpoint").focus()
        page.keyboard.press("Enter")
        expect(page.locator("h1")).to_have_text("Endpoint tour model")
        page.get_by_role("button", name="Check the connection").focus()
        with posting(page, "/check/"):
            page.keyboard.press("Enter")
        expect(page.locator("#check-result")).to_contain_text("reachable")
        shot(page, "02-endpoint")

        # 3. and 4. a text run and a native run of one task, each to its metrics
        text = launch(page, url, benchmark, "text", "tour, text")
        shot(page, "03-run")
        native = launch(page, url, benchmark, "native", "tour, native")
        page.goto(f"{url}/leaderboard/{benchmark.pk}/S-S/")
        expect(page.locator("table.leaderboard-table tbody tr")).to_have_count(2)
        shot(page, "04-leaderboard")

        # 5. the two compared, from the leaderboard
        press(page, "#compare-runs button")
        page.wait_for_url("**/runs/compare/?a=*")
        expect(page.locator("#compare-counts")).to_contain_text(re.compile(r"[1-6] shared items"))
        shot(page, "05-compare")

        # 6. a pairwise campaign made from them
        press(page, "#make-campaign")
        page.wait_for_url("**/campaigns/new/?kind=pairwise*")
        page.locator("#name").fill("Text or native?")
        press(page, "form.setup-form button[type=submit]")
        press(page, 'button[value="save"]:not(.visually-hidden)')
        page.locator("#limit").fill(str(ITEMS))
        shot(page, "06-campaign-items")
        press(page, "form.setup-form button[type=submit]")
        campaign = Campaign.objects.get(name="Text or native?")
        assert {campaign.run_a_id, campaign.run_b_id} == {text.pk, native.pk}

        # 7. two annotators: the demo's two, asked two labels each item by default
        expect(page.locator("#labels_per_item")).to_have_value("2")
        for name in ("annotator1", "annotator2"):
            page.locator(f'input[aria-label="{name} as annotator"]').focus()
            page.keyboard.press("Space")
        shot(page, "07-members")
        press(page, "form.setup-form button[type=submit]")
        expect(page.locator(".setup-warnings")).to_have_count(0)
        page.goto(f"{url}/campaigns/{campaign.pk}/setup/open/")
        press(page, 'form[action$="/setup/open/"] button')
        page.wait_for_url(f"**/campaigns/{campaign.pk}/progress/")
        for name, key in (("annotator1", "1"), ("annotator2", "3")):
            studio = login(users[name])
            studio.set_viewport_size(WIDE)
            studio.goto(f"{url}/annotate/{campaign.pk}/")
            for done in range(1, ITEMS + 1):
                studio.keyboard.press(key)
                if name == "annotator2" and done == 1:
                    shot(studio, "07-studio")
                with posting(studio, "/submit/"):
                    studio.keyboard.press("Enter")
                expect(studio.locator(".workspace-meta strong").first).to_have_text(str(done))
        assert Label.objects.filter(campaign=campaign, is_current=True).count() == 2 * ITEMS

        # 8. the agreement report, from the campaign's progress
        page.goto(f"{url}/campaigns/{campaign.pk}/progress/")
        press(page, f'a[href="/campaigns/{campaign.pk}/agreement/"]')
        report = page.locator("#report")
        expect(report).to_contain_text("annotator1", timeout=SLOW_MS)
        shot(page, "08-agreement")

        # 9. its CSVs, and a run's predictions
        summary = csv_rows(page, f"{url}/campaigns/{campaign.pk}/agreement/summary.csv")
        assert len(summary) > 1
        labels = csv_rows(page, f"{url}/campaigns/{campaign.pk}/agreement/labels.csv")
        assert len(labels) == 1 + 2 * ITEMS
        # the calls the native run's model sent, one JSON cell per item; none in text mode
        for run, least in ((native, 4), (text, 0)):
            predictions = csv_rows(page, f"{url}/runs/{run.pk}/predictions.csv")
            column = predictions[0].index("tool_calls")
            calls = [json.loads(row[column]) for row in predictions[1:] if row[column]]
            assert len(predictions) > 1 and len(calls) >= least, (run.name, calls)
            assert all(call[0]["type"] == "function" for call in calls)
            if not least:
                assert calls == []

        # 10. the benchmark exported in its published format
        page.goto(f"{url}/benchmarks/{benchmark.pk}/")
        press(page, "#export-link")
        expect(page.locator("h1")).to_have_text(f"Export {benchmark.name}")
        shot(page, "10-export")
        page.locator("#export-download").focus()
        with page.expect_download() as download:
            page.keyboard.press("Enter")
        archive = zipfile.ZipFile(io.BytesIO(download.value.path().read_bytes()))
        assert archive.read("S-S_eval.jsonl") == DEMO_FILE.read_bytes()
