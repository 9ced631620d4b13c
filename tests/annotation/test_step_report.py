"""The step-level review's section of the agreement report (annotation.agreement.steps),
against hand-computed values, and end to end from the annotators' labels to the report's page
and its summary CSV.

The hand-computed case: two annotators, three traces of two steps (six steps, u1..u6 in the
items' order):

    step      u1  u2          u3      u4              u5           u6
    alice     R   wrong_tool  format  wrong_argument  R            wrong_argument
    bob       R   wrong_tool  R       wrong_argument  missed_call  wrong_tool
    suite     format wrong_tool ""    wrong_argument  missed_call  loop

Right or wrong: agreement 4/6; each marks 2 right and 4 wrong, so p_e = (2/6)^2 + (4/6)^2 =
20/36 and Cohen's kappa = (24/36 - 20/36) / (16/36) = 0.25; Fleiss' kappa (two raters, equal
marginals) is the same 0.25; Krippendorff's alpha (nominal): 12 values, 4 right and 8 wrong,
2 disagreeing steps giving 4 disagreeing ordered pairs: 1 - 11 * 4 / (2 * 4 * 8) = 0.3125.
Wrong tool, over the steps both judged wrong (u2, u4, u6): alice 1 0 0, bob 1 0 1; agreement
2/3, p_e = (1/3)(2/3) + (2/3)(1/3) = 4/9, kappa = (6/9 - 4/9) / (5/9) = 0.4.
The suite against the human majority (steps both annotators classify alike: u1 right, u2 wrong
tool, u4 wrong argument): it agrees on 2 of 3; kappa = (2/3 - 2/9) / (1 - 2/9) = 4/7, and its
confusion table puts u1 at (format, right).
Disagreement by position: first steps u1 u3 u5: 2 of 3 judged apart; second steps: none.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import numpy as np
import pytest
from django.test import Client

from annotation.agreement.ratings import CampaignRatings, Rater
from annotation.agreement.services import report_params, report_request
from annotation.agreement.steps import step_report
from annotation.assign import item_next
from annotation.models import Item
from annotation.submit import answers_submit
from benchmarks.kit.traces import COMMON_STEP_ERRORS
from tests.annotation.trace_items import step_campaign
from tests.factories import make_researcher

R = {"right": True}


def W(error: str) -> dict[str, Any]:
    return {"right": False, "error": error, "call": None}


ALICE = [[R, W("wrong_tool")], [W("format"), W("wrong_argument")], [R, W("wrong_argument")]]
BOB = [[R, W("wrong_tool")], [R, W("wrong_argument")], [W("missed_call"), W("wrong_tool")]]
SUITE = [["format", "wrong_tool"], ["", "wrong_argument"], ["missed_call", "loop"]]
TYPES = [[e.key, e.label] for e in COMMON_STEP_ERRORS] + [["loop", "Loop"]]


def _ratings() -> CampaignRatings:
    items = {
        10 + i: {"auto": SUITE[i], "labels": {"alice": ALICE[i], "bob": BOB[i]}} for i in range(3)
    }
    return CampaignRatings(
        campaign_id=1,
        campaign_name="hand",
        kind="step_review",
        items=[10, 11, 12],
        questions=[],
        humans=[Rater("human", "alice"), Rater("human", "bob")],
        section_inputs={"step_review": {"suite": "toy", "error_types": TYPES, "items": items}},
    )


def _question(section: dict[str, Any], key: str) -> dict[str, Any]:
    return next(q for q in section["questions"] if q["key"] == key)


def _pair(q: dict[str, Any], a: str, b: str) -> dict[str, Any]:
    return next(p["stats"] for p in q["pairs"] if (p["a"], p["b"]) == (a, b))


def test_per_step_agreement_against_hand_computed_values() -> None:
    section = step_report(_ratings(), resamples=50, seed=1, level=0.95)
    right = _question(section, "steps:right")
    assert right["n_items"] == 6
    pair = _pair(right, "human:alice", "human:bob")
    assert pair["agreement"]["value"] == pytest.approx(4 / 6)
    assert pair["cohen_kappa"]["value"] == pytest.approx(0.25)
    assert right["humans"]["mean_cohen_kappa"]["value"] == pytest.approx(0.25)
    assert right["humans"]["fleiss_kappa"]["value"] == pytest.approx(0.25)
    assert right["humans"]["krippendorff_alpha"]["value"] == pytest.approx(0.3125)


def test_per_error_type_kappa_over_the_steps_judged_wrong() -> None:
    section = step_report(_ratings(), resamples=50, seed=1, level=0.95)
    tool = _pair(_question(section, "steps:error:wrong_tool"), "human:alice", "human:bob")
    assert tool["agreement"]["value"] == pytest.approx(2 / 3)
    assert tool["agreement"]["n"] == 3
    assert tool["cohen_kappa"]["value"] == pytest.approx(0.4)
    # one question per type of the suite's taxonomy, its own type included
    keys = [q["key"] for q in section["questions"]]
    errors = [f"steps:error:{k}" for k, _ in TYPES]
    assert keys == ["steps:right", *errors, "steps:classification", "traces:right"]


def test_the_suites_classification_against_the_human_majority() -> None:
    section = step_report(_ratings(), resamples=50, seed=1, level=0.95)
    classes = _question(section, "steps:classification")
    (suite,) = classes["automatic"]
    assert suite["rater"] == "suite:toy"
    assert suite["accuracy"]["value"] == pytest.approx(2 / 3) and suite["accuracy"]["n"] == 3
    assert suite["cohen_kappa"]["value"] == pytest.approx(4 / 7)
    labels = classes["confusion"]["labels"]
    table = np.array(classes["confusion"]["automatic"]["suite:toy"])
    assert table.sum() == 3
    assert table[labels.index("Format"), labels.index("right")] == 1
    assert table[labels.index("Wrong tool"), labels.index("Wrong tool")] == 1
    # on right or wrong alone the suite agrees with every majority (u1: both say right, it
    # says wrong: no; so 3 of 4)
    right = _question(section, "steps:right")
    assert right["automatic"][0]["accuracy"]["value"] == pytest.approx(3 / 4)


def test_the_suites_verdict_on_whole_traces_against_the_annotators() -> None:
    # given verdicts on the three traces: alice right, wrong, wrong; bob right, wrong, right;
    # the suite right, wrong and none on the third
    ratings = _ratings()
    items = ratings.section_inputs["step_review"]["items"]
    for i, (alice, bob, auto) in enumerate(
        [("right", "right", True), ("wrong", "wrong", False), ("wrong", "right", None)]
    ):
        items[10 + i].update(verdicts={"alice": alice, "bob": bob}, auto_verdict=auto)
    # when
    traces = _question(step_report(ratings, resamples=50, seed=1, level=0.95), "traces:right")
    # then the annotators agree on 2 of 3; alice says right once, bob twice: p_e = (1/3)(2/3)
    # + (2/3)(1/3) = 4/9, kappa = (6/9 - 4/9) / (5/9) = 0.4
    assert traces["n_items"] == 3
    assert _pair(traces, "human:alice", "human:bob")["cohen_kappa"]["value"] == pytest.approx(0.4)
    # and the suite meets the majority on the two traces that have one, both alike
    (suite,) = traces["automatic"]
    assert suite["accuracy"]["value"] == pytest.approx(1.0) and suite["accuracy"]["n"] == 2


def test_where_in_the_trace_annotators_disagree() -> None:
    section = step_report(_ratings(), resamples=50, seed=1, level=0.95)
    first, second = section["positions"]
    assert (first["position"], first["steps"]) == (1, 3)
    assert first["disagreement"]["value"] == pytest.approx(2 / 3)
    assert second["disagreement"]["value"] == pytest.approx(0.0)


def test_a_suite_with_no_verdicts_of_its_own_is_no_rater() -> None:
    ratings = _ratings()
    for entry in ratings.section_inputs["step_review"]["items"].values():
        entry["auto"] = [None, None]
    section = step_report(ratings, resamples=20, seed=1, level=0.95)
    assert all(q["automatic"] == [] for q in section["questions"])


@pytest.mark.django_db
def test_the_report_from_the_labels_to_the_page_and_the_csv(
    client: Client, monkeypatch: Any
) -> None:
    # given two annotators who review the three traces as in the hand-computed case
    campaign, (alice, bob) = step_campaign(monkeypatch)
    for user, marks in ((alice, ALICE), (bob, BOB)):
        for _ in range(3):
            assignment = item_next(campaign=campaign, user=user)
            position = Item.objects.get(pk=assignment.item_id).position
            answers_submit(
                campaign=campaign,
                assignment=assignment,
                user=user,
                raw={"verdict": "wrong", "steps": json.dumps(marks[position])},
                token=uuid.uuid4(),
            )
    # when the report is computed
    report = report_request(campaign, report_params(resamples=20), inline=True)
    section = report.data["step_review"]
    # then its per-step kappa is the hand-computed one (the usernames are the annotators')
    right = _question(section, "steps:right")
    assert right["humans"]["mean_cohen_kappa"]["value"] == pytest.approx(0.25)
    assert section["suite"] == "trace_toy"
    # the suite's verdicts are those its hook froze in the items (tests/annotation/trace_items)
    assert _question(section, "steps:classification")["automatic"][0]["rater"] == "suite:trace_toy"
    # the trace verdict is a question like any other
    assert [q["key"] for q in report.data["questions"]] == ["verdict"]
    client.force_login(make_researcher())
    page = client.get(f"/campaigns/{campaign.pk}/agreement/").content.decode()
    assert "Steps of the traces" in page and "Where in the trace annotators disagree" in page
    assert "0.250" in page
    summary = client.get(f"/campaigns/{campaign.pk}/agreement/summary.csv")
    text = b"".join(summary.streaming_content).decode()
    rows = [line.split(",") for line in text.splitlines()]
    kappa = next(
        r for r in rows if r[:4] == ["steps:right", "humans", "humans", "mean_cohen_kappa"]
    )
    assert kappa[4] == "6" and float(kappa[5]) == pytest.approx(0.25)
    first = next(
        r for r in rows if r[:4] == ["steps:position", "humans", "humans", "disagreement at step 1"]
    )
    assert first[4] == "3" and float(first[5]) == pytest.approx(2 / 3)
