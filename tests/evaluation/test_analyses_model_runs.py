"""The model_runs input on stored runs: WTU-Eval's table of the four regions reads, for the run
shown, the same model's newest finished run of each other region in the same tool mode, and is
computed again when a newer one finishes. Figures counted by hand."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from evaluation.analyses import run_analyses_get
from evaluation.models import Prediction, Run
from tests.factories import make_benchmark, make_researcher, make_sample

pytestmark = pytest.mark.django_db


def region_run(benchmark, samples, task, model, scores, **fields):  # type: ignore[no-untyped-def]
    run = Run.objects.create(
        name=f"{model} {task}",
        model_name=model,
        benchmark=benchmark,
        task=task,
        source=Run.Source.IMPORTED,
        status=fields.pop("status", Run.Status.DONE),
        **fields,
    )
    for position, (sample, score) in enumerate(zip(samples, scores, strict=True)):
        Prediction.objects.create(
            run=run,
            sample=sample,
            position=position,
            status=Prediction.Status.DONE,
            output="",
            scores=score,
        )
    return run


def table(run: Run) -> list[dict[str, Any]]:
    stored = run_analyses_get(run, inline=True)
    assert stored.status == stored.Status.DONE, stored.error
    rows: list[dict[str, Any]] = stored.data["analyses"]["all_regions"]["rows"]
    return rows


def test_the_four_regions_read_the_models_newest_runs_and_no_other_models() -> None:
    benchmark = make_benchmark(suite="wtueval")
    math = [
        make_sample(
            benchmark=benchmark,
            split="gsm8k-mini",
            input={"question": f"{n} + 1?"},
            reference={"kind": "tool", "answer": str(n + 1)},
        )
        for n in range(2)
    ]
    yes_no = [
        make_sample(
            benchmark=benchmark,
            split="boolq-mini",
            input={"question": "Is a tomato a fruit?"},
            reference={"kind": "general", "answer": True},
        )
    ]
    right, wrong = {"accuracy": 1.0}, {"accuracy": 0.0}
    # with the tool pool: the first step called a tool or not
    called_right, plain_wrong = {**right, "call_rate": 1.0}, {**wrong, "call_rate": 0.0}
    shown = region_run(benchmark, math, "R1", "model-a", [right, wrong])
    region_run(benchmark, math, "R2", "model-a", [plain_wrong, plain_wrong])
    # another model's R3 run, model-a's R4 run in native tool mode and its unfinished R3 run:
    # none is this model's table (in text mode)
    region_run(benchmark, yes_no, "R3", "model-b", [right])
    region_run(benchmark, yes_no, "R4", "model-a", [right], tool_mode="native")
    region_run(benchmark, yes_no, "R3", "model-a", [right], status=Run.Status.RUNNING)
    empty = {"accuracy_r3": None, "accuracy_r4": None, "call_rate_r4": None}
    assert table(shown) == [
        {"group": "gsm8k-mini", "n": 2, "accuracy_r1": 50.0, "accuracy_r2": 0.0,
         "call_rate_r2": 0.0, **empty},
    ]  # fmt: skip
    # a newer R2 run of the model replaces the older one, and the stored table is redone
    region_run(benchmark, math, "R2", "model-a", [called_right, plain_wrong])
    assert table(shown) == [
        {"group": "gsm8k-mini", "n": 2, "accuracy_r1": 50.0, "accuracy_r2": 50.0,
         "call_rate_r2": 50.0, **empty},
    ]  # fmt: skip


def test_the_page_shows_a_missing_region_as_missing_and_counts_no_items_twice() -> None:
    benchmark = make_benchmark(suite="wtueval")
    math = make_sample(
        benchmark=benchmark,
        split="gsm8k-mini",
        input={"question": "1 + 1?"},
        reference={"kind": "tool", "answer": "2"},
    )
    shown = region_run(benchmark, [math], "R1", "model-a", [{"accuracy": 1.0}])
    region_run(benchmark, [math], "R2", "model-a", [{"accuracy": 0.0, "call_rate": 1.0}])
    client = Client()
    client.force_login(make_researcher())
    page = client.get(reverse("evaluation:run-analyses", args=[shown.pk])).content.decode()
    section = page[page.index('id="analysis-all_regions"') :]
    section = section[: section.index("</article>")]
    # R1 100, R2 0 and call rate 100; R3, R4 and R4's call rate missing, not zero
    body = section[section.index("<tbody>") : section.index("</tbody>")]
    missing = '<span class="muted">—</span>'
    assert re.findall(r'<td class="num">(.*?)\s*</td>', body) == [
        "1", "100.00", "0.00", "100.00", missing, missing, missing,
    ]  # fmt: skip
    # the one item is behind both runs' figures: the caption claims no total of items
    assert "items by dataset" not in section and "groups may share items" in section
