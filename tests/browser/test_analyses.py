"""A researcher reads the papers' analyses in the browser: one run's (a chart and a table per
analysis, from the run's page), and three runs' picked on the leaderboard with the keyboard (a
line per run), at 1366 px wide."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from benchmarks.kit.protocol import PublishedOutput
from benchmarks.models import Sample
from evaluation.services import outputs_import
from tests.evaluation.test_analyses_mtubench import m_s_output, mtubench
from tests.factories import make_researcher


def gold(sample: Sample) -> str:
    calls = sample.reference["calls"]
    if not calls:
        return "Thought: nothing to call.\nThe weather is fine."
    return f"Action: {calls[0]['name']}\nAction Input: {json.dumps(calls[0]['arguments'])}"


def test_analyses_of_one_run_and_of_three(
    transactional_db: None, login: Any, live_server: Any, screenshot: Any, seeddata: Path
) -> None:
    benchmark = mtubench(seeddata, "M-S")
    samples = list(Sample.objects.filter(benchmark=benchmark, split="M-S").order_by("id"))
    answers = {
        "gpt-like": gold,
        "rules <i>model</i>": m_s_output,
        "silent": lambda sample: "I cannot help with that.",
    }
    runs = [
        outputs_import(
            benchmark=benchmark,
            task="M-S",
            outputs=[PublishedOutput(s.external_id, answer(s), "M-S") for s in samples],
            name=name,
            model_name=name,
        )
        for name, answer in answers.items()
    ]
    page = login(make_researcher())
    page.set_viewport_size({"width": 1366, "height": 768})

    # one run: from its page, with the keyboard
    page.goto(f"{live_server.url}/runs/{runs[1].pk}/")
    link = page.get_by_role("link", name="Analyses")
    link.focus()
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/runs/{runs[1].pk}/analyses/")
    expect(page.get_by_role("heading", level=1)).to_contain_text("rules <i>model</i>")
    sections = page.locator("article.analysis-section")
    expect(sections).to_have_count(3)
    expect(page.locator("article#analysis-by_turn svg")).to_have_count(1)
    first_turn = page.locator("article#analysis-by_turn tbody tr").first
    expect(first_turn).to_contain_text("1")
    expect(first_turn.locator("td").nth(1)).to_have_text("100.00")
    errors = page.locator("article#analysis-error_types tbody th")
    expect(errors).to_have_text(["action: excessive", "action: incorrect", "parameter", "format"])
    # nothing wider than the page
    assert page.evaluate("document.documentElement.scrollWidth") <= 1366
    screenshot(page, "analyses-one-run")

    # three runs: ticked on the leaderboard
    page.goto(f"{live_server.url}/leaderboard/{benchmark.pk}/M-S/")
    for run in runs:
        page.locator(f"#analyses-{run.pk}").focus()
        page.keyboard.press("Space")
    page.get_by_role("button", name="Analyses of the chosen runs").focus()
    page.keyboard.press("Enter")
    page.wait_for_url("**/runs/analyses/?run=*")
    expect(page.locator("article.analysis-section")).to_have_count(3)
    turn_chart = page.locator("article#analysis-by_turn svg").first
    expect(turn_chart.locator("path.chart-series-line")).to_have_count(3)
    legend = turn_chart.locator("text.chart-legend-text")
    expect(legend).to_have_count(3)
    assert "rules <i>model</i>" in " ".join(legend.all_text_contents())
    assert page.evaluate("document.documentElement.scrollWidth") <= 1366
    screenshot(page, "analyses-three-runs")
