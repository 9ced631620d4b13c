"""A researcher reads the analyses of the other suites in the browser at 1366 px: WTU-Eval's
error types, automatic beside the human labels of an error-type campaign, and a MetaTool run
repeated on rewritten tool descriptions, each gold tool's CSR beside the run it repeats."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from annotation import services
from annotation.assign import item_next
from benchmarks.models import Benchmark, Sample, ToolRevision
from benchmarks.services import benchmark_import
from evaluation.models import Prediction, Run
from tests.factories import make_researcher, make_user, store_label

FIXTURE = Path(__file__).resolve().parents[1] / "benchmarks" / "fixtures" / "wtueval"


def wtueval_run_with_labels() -> Run:
    benchmark_import(suite="wtueval", paths=[FIXTURE / "questions.jsonl"])
    benchmark = Benchmark.objects.get(name="WTU-Eval")
    # the same model without the tool pool (R3): right on boolq and race
    without = Run.objects.create(
        name="R3", model_name="m", benchmark=benchmark, task="R3",
        source=Run.Source.IMPORTED, status=Run.Status.DONE,
    )  # fmt: skip
    for position, split in enumerate(("boolq-mini", "piqa-mini", "race-mini")):
        Prediction.objects.create(
            run=without,
            sample=Sample.objects.get(benchmark=benchmark, split=split),
            position=position,
            status=Prediction.Status.DONE,
            output="...",
            scores={"accuracy": float(split != "piqa-mini"), "unparsed": 0.0},
        )
    run = Run.objects.create(
        name="R4 <b>zero-shot</b>",
        model_name="m",
        benchmark=benchmark,
        task="R4",
        source=Run.Source.IMPORTED,
        status=Run.Status.DONE,
    )
    scores = {
        "boolq-mini": {"accuracy": 0.0, "call_rate": 1.0, "tool_errors": 1.0,
                       "errors[unnecessary_tool]": 1.0},
        "piqa-mini": {"accuracy": 0.0, "call_rate": 0.0, "tool_errors": 0.0,
                      "errors[null_content]": 1.0},
        "race-mini": {"accuracy": 1.0, "call_rate": 0.0, "tool_errors": 0.0},
    }  # fmt: skip
    for position, (split, values) in enumerate(scores.items()):
        Prediction.objects.create(
            run=run,
            sample=Sample.objects.get(benchmark=benchmark, split=split),
            position=position,
            status=Prediction.Status.DONE,
            output="...",
            scores={"unparsed": 0.0, **values},
        )
    campaign = services.campaign_create(name="errors", kind="error_types")
    services.items_from_failures(campaign=campaign, run=run)
    user = make_user()
    services.members_add(campaign=campaign, users=[user], role="annotator")
    services.campaign_activate(campaign=campaign)
    answers = {"boolq-mini": ["incorrect_invocation"], "piqa-mini": ["endless_retry"]}
    for _ in range(2):
        assignment = item_next(campaign=campaign, user=user)
        split = assignment.item.prediction.sample.split
        store_label(
            campaign=assignment.campaign,
            assignment_id=assignment.pk,
            user=user,
            answers={"types": answers[split]},
            token=uuid.uuid4(),
        )
    return run


def metatool_rerun(seeddata: Path) -> Run:
    metatool = seeddata / "metatool"
    benchmark_import(
        suite="metatool",
        paths=[metatool / "all_clean_data_sample200.csv", metatool / "plugin_des.json"],
    )
    benchmark = Benchmark.objects.get(name="MetaTool")
    samples = list(Sample.objects.filter(benchmark=benchmark, split="queries").order_by("id"))[:8]
    revision = ToolRevision.objects.create(benchmark=benchmark, number=1, note="by hand")
    runs = []
    for index, name in enumerate(("imported descriptions", "rewritten descriptions")):
        run = Run.objects.create(
            name=name,
            benchmark=benchmark,
            task="similar",
            source=Run.Source.IMPORTED,
            status=Run.Status.DONE,
            tool_revision=revision if index else None,
            rerun_of=runs[0] if index else None,
        )
        for position, sample in enumerate(samples):
            # before: the first half right; after: all but the last right
            right = position < 4 if index == 0 else position < 7
            Prediction.objects.create(
                run=run,
                sample=sample,
                position=position,
                status=Prediction.Status.DONE,
                output="...",
                context={"candidates": [sample.reference["tool"], "Other"]},
                scores={"correct": float(right), "unparsed": 0.0, "failed": 0.0},
            )
        runs.append(run)
    return runs[1]


def test_error_types_beside_human_labels_and_a_rewritten_rerun(
    transactional_db: None, login: Any, live_server: Any, screenshot: Any, seeddata: Path
) -> None:
    wtu = wtueval_run_with_labels()
    rerun = metatool_rerun(seeddata)
    page = login(make_researcher())
    page.set_viewport_size({"width": 1366, "height": 768})

    page.goto(f"{live_server.url}/runs/{wtu.pk}/analyses/")
    expect(page.get_by_role("heading", level=1)).to_contain_text("R4 <b>zero-shot</b>")
    rows = page.locator("article#analysis-error_types tbody tr")
    expect(rows).to_have_count(2)
    # incorrect invocation: 1 of 2 wrong items, humans gave it to 1 of 2, and agree on it
    expect(rows.first.locator("th")).to_have_text("incorrect_invocation")
    expect(rows.first.locator("td")).to_have_text(["1", "50.00", "50.00", "100.00"])
    expect(page.locator("article#analysis-by_dataset svg")).to_have_count(1)
    # beside the model's R3 run: boolq 100 without the pool, 0 with it
    pair = page.locator("article#analysis-with_and_without_tools tbody tr").first
    expect(pair.locator("td")).to_have_text(["1", "100.00", "0.00", "100.00"])
    assert page.evaluate("document.documentElement.scrollWidth") <= 1366
    screenshot(page, "analyses-wtueval-error-types")

    # the rerun's page says which descriptions it showed and which run it repeats
    page.goto(f"{live_server.url}/runs/{rerun.pk}/")
    expect(page.get_by_text("revision 1 (by hand); repeats")).to_be_visible()
    page.get_by_role("link", name="Analyses").first.focus()
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/runs/{rerun.pk}/analyses/")
    section = page.locator("article#analysis-rewriting_by_tool")
    expect(section.locator("svg")).to_have_count(1)
    golds = {p.sample.reference["tool"] for p in rerun.predictions.select_related("sample")}
    expect(section.locator("tbody tr")).to_have_count(len(golds))
    assert page.evaluate("document.documentElement.scrollWidth") <= 1366
    screenshot(page, "analyses-metatool-rewritten")
