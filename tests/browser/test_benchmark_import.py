"""Importing a benchmark from the browser, as the demo researcher would (never the superuser),
with the keyboard and the file input, and by dropping files on the page: a real Celery worker
imports the seed data's MTU-Bench S-S file while the page polls the job's progress to done, then
the benchmark's page and a sample's; a broken file ends in the CLI's located error. Screenshots
at 1366 x 768."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from benchmarks.models import Benchmark, ImportJob, Sample
from benchmarks.services import sample_revise
from tests.factories import make_researcher
from tests.workers import celery_worker, flush_test_broker

pytestmark = pytest.mark.django_db(transaction=True)

SEED = Path(__file__).resolve().parents[2].parent / "shared" / "seeddata"
SS = SEED / "mtubench" / "S-S_eval.jsonl"
SS_LINES = 104
DONE_MS = 60_000  # a worker on a loaded machine


@pytest.fixture
def worker(settings: Any, tmp_path: Path) -> Iterator[Path]:
    uploads = tmp_path / "uploads"
    settings.BENCHMARK_UPLOAD_DIR = uploads
    flush_test_broker()
    with celery_worker(tmp_path, queues="default", BENCHMARK_UPLOAD_DIR=str(uploads)):
        yield uploads


def open_import(page: Page, url: str) -> None:
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(f"{url}/benchmarks/import/")
    page.select_option("#id_suite", "mtubench")


def submit(page: Page, name: str) -> None:
    page.focus("#id_benchmark_name")
    page.keyboard.type(name)
    page.keyboard.press("Enter")
    page.wait_for_url("**/benchmarks/import/*/")


def test_upload_by_the_file_input_and_by_a_drop_then_the_benchmark(
    worker: Path, login: Any, live_server: Any, screenshot: Any
) -> None:
    researcher = make_researcher(username="researcher")
    page = login(researcher)

    # the file input, with the keyboard
    open_import(page, live_server.url)
    page.set_input_files("#id_files", str(SS))
    expect(page.locator("#chosen-files li")).to_have_text(
        [f"S-S_eval.jsonl ({SS.stat().st_size / 1024:.1f} KB)"]
    )
    screenshot(page, "benchmark-import-form")
    submit(page, "MTU by input")
    expect(page.locator("#import-status")).to_have_text("Done", timeout=DONE_MS)
    expect(page.locator("#rows-read")).to_have_text(str(SS_LINES))
    expect(page.locator("#import-done")).to_contain_text(f"S-S {SS_LINES}")
    screenshot(page, "benchmark-import-done")

    # on to the benchmark's page, then a sample's
    page.focus("#import-done a.button")
    page.keyboard.press("Enter")
    benchmark = Benchmark.objects.get(name="MTU by input")
    page.wait_for_url(f"**/benchmarks/{benchmark.pk}/")
    expect(page.locator("h1")).to_contain_text("MTU by input")
    expect(page.locator("#samples")).to_contain_text(f"{SS_LINES} samples")
    screenshot(page, "benchmark-page")
    # the text search, answered in place by htmx
    page.focus('input[name="q"]')
    page.keyboard.type("Brazilian")
    with page.expect_response(lambda r: "part=samples" in r.url):
        page.keyboard.press("Enter")
    expect(page.locator("#samples")).to_contain_text("matching “Brazilian”")
    assert "q=Brazilian" in page.url
    screenshot(page, "benchmark-page-search")
    first = Sample.objects.filter(benchmark=benchmark).order_by("split", "id").first()
    assert first is not None
    page.focus(f'a[href="/benchmarks/{benchmark.pk}/samples/{first.pk}/"]')
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/samples/{first.pk}/")
    expect(page.locator("#gold-h")).to_be_visible()
    expect(page.locator("#history-h")).to_be_visible()
    screenshot(page, "benchmark-sample")

    # a drop of two files on the drop zone: single- and multi-turn dialogues together
    open_import(page, live_server.url)
    ms = SEED / "mtubench" / "M-S_eval.jsonl"
    dropped = page.evaluate_handle(
        """(files) => {
            const data = new DataTransfer();
            for (const [name, text] of files) {
                data.items.add(new File([text], name, {type: "application/jsonl"}));
            }
            return data;
        }""",
        [[path.name, path.read_text(encoding="utf-8")] for path in (SS, ms)],
    )
    page.dispatch_event("#drop-zone", "dragover", {"dataTransfer": dropped})
    page.dispatch_event("#drop-zone", "drop", {"dataTransfer": dropped})
    expect(page.locator("#chosen-files li")).to_have_count(2)
    assert page.eval_on_selector("#id_files", "input => input.files.length") == 2
    submit(page, "MTU by drop")
    expect(page.locator("#import-status")).to_have_text("Done", timeout=DONE_MS)
    dropped_benchmark = Benchmark.objects.get(name="MTU by drop")
    splits = set(dropped_benchmark.samples.values_list("split", flat=True))
    assert splits == {"S-S", "M-S"}
    assert dropped_benchmark.samples.filter(split="S-S").count() == SS_LINES
    assert ImportJob.objects.filter(status="done").count() == 2

    # a dialogue refined once (through the service the studio's review calls): its page shows
    # the turns and the history with the diff
    dialogue = next(
        s
        for s in dropped_benchmark.samples.filter(split="M-S").order_by("id")
        if (s.reference or {}).get("calls") and len(s.input.get("turns") or []) > 2
    )
    calls = [dict(call) for call in dialogue.reference["calls"]]
    first = dict(calls[0], arguments={**calls[0]["arguments"], "note": "refined"})
    refined = {**dialogue.reference, "calls": [first, *calls[1:]]}
    sample_revise(
        sample_id=dialogue.pk,
        base_revision=0,
        input=dialogue.input,
        reference=refined,
        author=researcher,
        note="a note argument",
    )
    page.goto(f"{live_server.url}/benchmarks/{dropped_benchmark.pk}/samples/{dialogue.pk}/")
    expect(page.locator(".dialogue .turn")).to_have_count(len(dialogue.input["turns"]))
    expect(page.locator(".revisions .change-argument_added")).to_contain_text("note")
    screenshot(page, "benchmark-sample-revised")


def test_a_broken_file_shows_the_located_error(
    worker: Path, login: Any, live_server: Any, screenshot: Any
) -> None:
    page = login(make_researcher(username="researcher"))
    open_import(page, live_server.url)
    lines = SS.read_text(encoding="utf-8").splitlines()
    broken = "\n".join([*lines[:2], '{"id": "S-S_x", "question": "q"}']) + "\n"
    page.set_input_files(
        "#id_files",
        {"name": "S-S_eval.jsonl", "mimeType": "application/jsonl", "buffer": broken.encode()},
    )
    submit(page, "Broken MTU")
    expect(page.locator("#import-status")).to_have_text("Failed", timeout=DONE_MS)
    error = page.locator("#import-error")
    expect(error).to_contain_text(
        "Nothing imported. S-S_eval.jsonl, line 3, field 'answer': missing"
    )
    expect(error.locator("dd")).to_have_text(["S-S_eval.jsonl", "3", "answer"])
    screenshot(page, "benchmark-import-error")
    assert not Benchmark.objects.filter(name="Broken MTU").exists()
