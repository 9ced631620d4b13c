"""A researcher reads a run's metrics and a leaderboard in the browser: counts as whole numbers
without intervals, scores with theirs and the way they point, the runs best first in the
headline's own direction."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from benchmarks.kit import registry as suites
from evaluation.models import Run
from tests.evaluation.test_metric_display import similar_run
from tests.factories import make_benchmark, make_researcher


def test_run_page_and_leaderboards_show_what_each_metric_is(
    transactional_db: None,
    login: Any,
    live_server: Any,
    screenshot: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run = similar_run()
    page = login(make_researcher())
    page.goto(f"{live_server.url}/runs/{run.pk}/")
    metrics = page.locator("table.metrics")

    def row(name: str) -> Any:
        return metrics.locator("tr").filter(
            has=page.locator("code", has_text=re.compile(f"^{re.escape(name)}$"))
        )

    n_row = row("n")
    expect(n_row.locator("td").nth(0)).to_have_text("20")
    expect(n_row.locator("td").nth(1)).to_have_text("")
    csr = row("CSR")
    expect(csr.locator("td").nth(0)).to_have_text("8.33")
    expect(csr.locator("td").nth(1)).to_have_text("0.00 \N{EN DASH} 20.50")
    screenshot(page, "run-metrics")

    # a task whose headline is better lower: its leaderboard lists the lowest first
    monkeypatch.setitem(suites.SUITE_MODULES, "errors_test", "tests.evaluation.errors_suite")
    calls = make_benchmark(name="Calls", suite="errors_test")
    for name, rate in (("middling", 30.0), ("best", 5.0), ("good", 10.0)):
        Run.objects.create(
            benchmark=calls,
            task="calls",
            status=Run.Status.DONE,
            name=name,
            metrics={"error_rate": rate, "accuracy": 100 - rate, "n": 40.0},
            intervals={"error_rate": [rate - 2, rate + 2], "n": [40.0, 40.0]},
        )
    page.goto(f"{live_server.url}/leaderboard/{calls.pk}/calls/")
    rows = page.locator("table.data-table tbody th[scope=row]")
    expect(rows).to_have_text(
        [re.compile(rf"#\d+ {name}$") for name in ("best", "good", "middling")]
    )
    expect(page.locator("table.data-table caption")).to_contain_text("(lower is better)")
    screenshot(page, "leaderboard-lower-is-better")


@pytest.mark.parametrize(("suite", "task"), [("wtueval", "R4"), ("mtubench", "M-S")])
def test_a_wide_leaderboard_shows_its_cost_without_scrolling_at_1366_px(
    transactional_db: None, login: Any, live_server: Any, screenshot: Any, suite: str, task: str
) -> None:
    # given a task with many metrics (WTU-Eval R4 has 12) and two finished runs with intervals
    spec = suites.get_suite(suite).evaluator.task(task)
    benchmark = make_benchmark(name=f"Wide {suite}", suite=suite)
    for name in ("a model with a long name, run one", "another model, run two"):
        Run.objects.create(
            benchmark=benchmark,
            task=task,
            status=Run.Status.DONE,
            name=name,
            model_name="org/some-model-7b-instruct",
            metrics={metric: 55.55 for metric in spec.metrics},
            intervals={metric: [44.44, 66.66] for metric in spec.metrics},
        )
    page = login(make_researcher())
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(f"{live_server.url}/leaderboard/{benchmark.pk}/{task}/")
    # then the cost and tokens are in the window, beside the run they belong to
    cost = page.locator("table.leaderboard-table thead th", has_text="Cost")
    box = cost.bounding_box()
    assert box is not None and box["x"] + box["width"] <= 1366
    # and a task of up to seven metrics fits whole: nothing to scroll sideways
    if len(spec.metrics) <= 7:
        wrap = page.locator(".table-wrap").first
        assert wrap.evaluate("e => e.scrollWidth <= e.clientWidth")
    screenshot(page, f"leaderboard-wide-{suite}")
