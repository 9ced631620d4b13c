"""Two annotators review agent traces step by step with the keyboard only (issue 32's
acceptance): a StableToolBench run's traces (tests/annotation/agent_traces.py: two queries, a
call and its Finish each) and an MTU-Bench dialogue (M-S_1, two of its turns), read by their
suites' own trace hooks. j/k move between steps, r/w mark, a number key picks the error type,
e opens the call editor (the refinement editor's argument fields), Ctrl+Enter keeps the call,
Shift+R/W gives the trace's verdict and Enter submits. Then the agreement report's per-step
kappa is the hand-computed one.

StableToolBench, four steps (trace 1: step 1, Finish; trace 2: step 1, Finish):
    annotator1  R  wrong_argument  R  R
    annotator2  R  wrong_argument  unnecessary_call  R
    agreement 3/4; annotator1 marks 3 right and 1 wrong, annotator2 2 and 2:
    p_e = (3/4)(2/4) + (1/4)(2/4) = 1/2, kappa = (3/4 - 1/2) / (1 - 1/2) = 0.5.
MTU-Bench, two steps (M-S_1_0: its turn; M-S_1_1: the model's turn 2, shown after the given
turn 1, which is not reviewed):
    both mark R W (annotator1: wrong_argument, with the call it should have made;
    annotator2: missed_call): right or wrong agree on every step, kappa = 1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from annotation.agreement.services import report_params, report_request
from annotation.models import Campaign, Label
from tests.annotation.agent_traces import agent_runs, review_campaign
from tests.browser.conftest import focused, posting, tab_to
from tests.factories import make_superuser, make_user

Marks = list[str]  # per step: "r", or "w<n>" (wrong, error type n)


def review(page: Page, marks: Marks, verdict: str, *, fix: Any = None) -> None:
    """Marks every step from the first with the keyboard, gives the verdict and submits."""
    steps = page.locator(".trace-step[data-step]")
    expect(steps).to_have_count(len(marks))
    expect(focused(page)).to_have_attribute("data-step", "0")
    for i, mark in enumerate(marks):
        if i:
            page.keyboard.press("j")
            expect(focused(page)).to_have_attribute("data-step", str(i))
        step = steps.nth(i)
        page.keyboard.press(mark[0])
        if mark[0] == "w":
            expect(step.locator("[data-step-errors]")).to_be_visible()
            page.keyboard.press(mark[1:])
            expect(step.locator("input[data-error]").nth(int(mark[1:]) - 1)).to_be_checked()
            if fix is not None and fix[0] == i:
                fix[1](page, step)
        else:
            expect(step.locator('input[data-mark="right"]')).to_be_checked()
    page.keyboard.press(f"Shift+{verdict}")
    expect(page.locator(f'input[name="verdict"][data-key="{verdict}"]')).to_be_checked()
    with posting(page, "/submit/"):
        page.keyboard.press("Enter")


def write_the_call(page: Page, step: Any) -> None:
    """The MTU-Bench turn's call as it should have been: the right date, and the whiteboard."""
    page.keyboard.press("e")
    editor = page.locator("[data-call-editor]")
    expect(editor).to_be_visible()
    # the editor opens on the step's own call, its arguments in the tool's fields
    expect(page.locator("[data-editor-tool]")).to_have_value("ReserveStudyRoom")
    fields = editor.locator('[data-tool-fields="ReserveStudyRoom"]')
    expect(fields.locator('[data-arg="branch"]')).to_have_value("Riverside")
    tab_to(page, '[data-tool-fields="ReserveStudyRoom"] [data-arg="date"]')
    page.keyboard.press("Control+a")
    page.keyboard.type("2024-01-09")
    tab_to(page, '[data-tool-fields="ReserveStudyRoom"] [data-arg="needs_whiteboard"]')
    page.keyboard.press("t")  # the select's type-ahead: true
    expect(fields.locator('[data-arg="needs_whiteboard"]')).to_have_value("true")
    page.keyboard.press("Control+Enter")
    expect(editor).to_be_hidden()
    expect(step.locator("[data-call-summary]")).to_contain_text(
        "ReserveStudyRoom(date=2024-01-09, branch=Riverside, start_time=09:30, "
        "needs_whiteboard=true)"
    )
    # the keyboard is back on the step
    expect(focused(page)).to_have_attribute("data-step", "0")


def annotate(page: Page, url: str, items: list[tuple[Marks, str, Any]]) -> None:
    page.goto(url)
    for done, (marks, verdict, fix) in enumerate(items):
        review(page, marks, verdict, fix=fix)
        expect(page.locator(".workspace-meta strong").first).to_have_text(str(done + 1))
    expect(page.locator(".done")).to_contain_text("Nothing left for you here")


@pytest.fixture
def campaigns(transactional_db: None, tmp_path: Path) -> tuple[Campaign, Campaign, list[Any]]:
    stb, mtu = agent_runs(tmp_path)
    annotators = [make_user(username="annotator1"), make_user(username="annotator2")]
    return (
        review_campaign(stb, annotators, "StableToolBench steps"),
        review_campaign(mtu, annotators, "MTU-Bench steps"),
        annotators,
    )


def test_two_annotators_review_steps_and_the_report_has_the_hand_computed_kappa(
    campaigns: tuple[Campaign, Campaign, list[Any]],
    login: Any,
    live_server: Any,
    screenshot: Any,
) -> None:
    stb, mtu, (first, second) = campaigns
    one, two = login(first), login(second)
    # StableToolBench: the first annotator's screen shows each step's call, result and schema
    one.goto(f"{live_server.url}/annotate/{stb.pk}/")
    expect(one.locator(".trace-step").first).to_contain_text("Called")
    expect(one.locator(".step-schema").first).to_be_attached()
    screenshot(one, "step-review-stabletoolbench")
    annotate(
        one,
        f"{live_server.url}/annotate/{stb.pk}/",
        [(["r", "w2"], "W", None), (["r", "r"], "R", None)],
    )
    annotate(
        two,
        f"{live_server.url}/annotate/{stb.pk}/",
        [(["r", "w2"], "W", None), (["w4", "r"], "R", None)],
    )
    # MTU-Bench: the dialogue's turns, the first annotator writes the call it should have made
    one.goto(f"{live_server.url}/annotate/{mtu.pk}/")
    expect(one.locator(".trace-step").first).to_contain_text("I need a room to study in")
    annotate(
        one,
        f"{live_server.url}/annotate/{mtu.pk}/",
        [(["r"], "R", None), (["w2"], "W", (0, write_the_call))],
    )
    annotate(
        two,
        f"{live_server.url}/annotate/{mtu.pk}/",
        [(["r"], "R", None), (["w5"], "W", None)],
    )
    # the labels hold every step, and the call written in the editor, typed by its schema
    fixed = Label.objects.get(campaign=mtu, annotator=first, item__position=1).answers
    assert fixed["verdict"] == "wrong"
    assert fixed["steps"][0] == {
        "right": False,
        "error": "wrong_argument",
        "call": {
            "name": "ReserveStudyRoom",
            "arguments": {
                "branch": "Riverside",
                "date": "2024-01-09",
                "start_time": "09:30",
                "needs_whiteboard": True,
            },
        },
    }
    assert Label.objects.get(campaign=stb, annotator=second, item__position=1).answers == {
        "verdict": "right",
        "steps": [{"right": False, "error": "unnecessary_call", "call": None}, {"right": True}],
    }
    # the report: per-step kappa as computed by hand (the module's docstring)
    for campaign, kappa in ((stb, 0.5), (mtu, 1.0)):
        report = report_request(campaign, report_params(resamples=50), inline=True)
        right = next(
            q for q in report.data["step_review"]["questions"] if q["key"] == "steps:right"
        )
        assert right["humans"]["mean_cohen_kappa"]["value"] == pytest.approx(kappa)
    researcher = login(make_superuser())
    researcher.goto(f"{live_server.url}/campaigns/{stb.pk}/agreement/")
    steps = researcher.locator("#steps")
    expect(steps).to_contain_text("Steps of the traces")
    expect(steps.locator('tr[data-question="steps:right"]')).to_contain_text("0.500")
    screenshot(researcher, "step-review-report")
