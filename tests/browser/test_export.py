"""A researcher exports a refined benchmark from the browser, with the keyboard: from the
benchmark list to the export page, the published format, the zip; the refined sample is in it
as approved, and provenance.json names its author, reviewer and verdict."""

from __future__ import annotations

import io
import json
import uuid
import zipfile
from typing import Any

from playwright.sync_api import expect

from annotation.assign import item_next
from annotation.refinement_workflow import draft_apply, review_decide
from annotation.submit import answers_submit
from tests.browser.conftest import Studio, tab_to


def test_a_researcher_exports_a_refined_benchmark(
    studio: Studio, login: Any, live_server: Any, screenshot: Any
) -> None:
    # given a refinement of the demo UltraTool plans, written and approved in the studio
    campaign = studio.campaigns["refinement"]
    annotator, researcher = studio.users["annotator1"], studio.users["researcher"]
    assignment = item_next(campaign=campaign, user=annotator)
    assert assignment is not None
    draft_apply(
        assignment=assignment,
        op="text",
        params={"uid": "s1", "value": "Check the weekend forecast first"},
    )
    label, _ = answers_submit(
        campaign=campaign,
        assignment=assignment,
        user=annotator,
        raw={"verdict": "fixed"},
        token=uuid.uuid4(),
        note="names the weekend",
    )
    review_decide(label_id=label.pk, reviewer=researcher, approve=True)
    sample = assignment.item.sample
    sample.refresh_from_db()
    assert sample.revision == 1
    benchmark = sample.benchmark

    # when the researcher goes from the benchmark list to the benchmark, then to its export
    page = login(researcher)
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(f"{live_server.url}/benchmarks/")
    tab_to(page, f'a[href="/benchmarks/{benchmark.pk}/"]')
    page.keyboard.press("Enter")
    expect(page.locator("h1")).to_contain_text(benchmark.name)
    tab_to(page, "#export-link")
    screenshot(page, "export-from-the-benchmark-page")
    page.keyboard.press("Enter")
    expect(page.locator("h1")).to_have_text(f"Export {benchmark.name}")
    expect(page.locator("body")).to_contain_text("1 refined")
    expect(page.locator('input[name="format"][value="published"]')).to_be_checked()
    screenshot(page, "export-page")
    # and downloads the zip in the published format
    tab_to(page, "#export-download")
    with page.expect_download() as download:
        page.keyboard.press("Enter")
    archive = zipfile.ZipFile(io.BytesIO(download.value.path().read_bytes()))

    # then the refined sample is in test.json as approved
    lines = [json.loads(line) for line in archive.read("test.json").decode().splitlines()]
    refined = lines[int(sample.external_id) - 1]
    # (its question unchanged, as published: UltraTool's questions end in a newline, which the
    # stored query does not keep)
    assert refined["question"] == sample.input["query"] + "\n"
    assert refined["plan"][0]["step"] == "1. Check the weekend forecast first"
    # and provenance.json says who wrote it, who approved it, and how
    provenance = json.loads(archive.read("provenance.json"))
    [entry] = provenance["changed"]
    assert (entry["external_id"], entry["split"], entry["revision"]) == (
        sample.external_id,
        "test",
        1,
    )
    assert (entry["author"], entry["reviewer"], entry["verdict"]) == (
        "annotator1",
        "researcher",
        "approved",
    )
    assert "names the weekend" in entry["note"]
    assert download.value.suggested_filename.endswith("-published.zip")
