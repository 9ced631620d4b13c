"""UltraTool's analyses on hand-made items, counted here by hand."""

from __future__ import annotations

import math

import pytest

from benchmarks.kit.analyses import AnalysisInput
from benchmarks.kit.protocol import Context, Scored
from benchmarks.suites import ultratool
from benchmarks.suites.ultratool.analyses import ANALYSES, interval, plan_depth, tool_steps
from benchmarks.suites.ultratool.conformance import item


def by_name(task: str, name: str):  # type: ignore[no-untyped-def]
    return next(a for a in ANALYSES[task] if a.name == name)


def test_depth_and_tool_steps_of_the_hand_made_plans() -> None:
    # plan i: depth 1 + i % 3, tool steps 1 + i % 3
    assert [(plan_depth(item(i)), tool_steps(item(i))) for i in range(3)] == [
        (1, 1), (2, 2), (3, 3)
    ]  # fmt: skip


def test_the_interval_of_a_mean_by_hand() -> None:
    # values 0.6, 0.8, 1.0: mean 0.8, sd 0.2, half width 1.96 * 0.2 / sqrt(3)
    mean, low, high = interval([0.6, 0.8, 1.0])
    half = 1.96 * 0.2 / math.sqrt(3)
    assert mean == pytest.approx(0.8)
    assert (low, high) == (pytest.approx(0.8 - half), pytest.approx(0.8 + half))
    assert interval([0.5]) == (0.5, None, None)
    assert interval([]) == (None, None, None)


def test_judge_dimensions_mean_the_rounds_then_the_items() -> None:
    evaluator = ultratool.SUITE.evaluator
    ctx = Context(task=evaluator.task("planning"))
    records = [Scored(item=item(i), outcome=None, scores={"well_formed": 0.0}) for i in range(3)]
    judged = {
        # item 0: Accuracy 6 and 8 in two rounds -> 0.7; Overall 9 -> 0.9
        ("test/0", 0): [
            {"judge": "j", "value": 0.9, "values": {"Accuracy": 6, "Overall": 9}},
            {"judge": "j", "value": None, "values": {"Accuracy": 8}},
        ],
        # item 1: Accuracy 9 -> 0.9, no Overall
        ("test/1", 0): [{"judge": "j", "value": None, "values": {"Accuracy": 9}}],
        # item 2: not judged
    }
    data = AnalysisInput(records, ctx, inputs={"judgments": {"ultratool.planning": judged}})
    rows = by_name("planning", "judge_dimensions").run(data)
    half = 1.96 * math.sqrt(((0.7 - 0.8) ** 2 + (0.9 - 0.8) ** 2) / 1) / math.sqrt(2)
    assert rows == [
        {"group": "Accuracy", "n": 2, "mean": 0.8, "low": round(0.8 - half, 3),
         "high": round(0.8 + half, 3)},
        {"group": "Overall", "n": 1, "mean": 0.9, "low": None, "high": None},
    ]  # fmt: skip


def test_selection_accuracy_by_domain_by_hand() -> None:
    evaluator = ultratool.SUITE.evaluator
    ctx = Context(task=evaluator.task("tool_selection"))
    # items 0 and 3 are Weather, 1 Alarm; global 100/0/100, local 100/50/100
    scores = [(100.0, 100.0), (0.0, 50.0), (100.0, 100.0)]
    records = [
        Scored(item=item(i), outcome=None, scores={"accuracy_global": g, "accuracy_local": loc})
        for i, (g, loc) in zip((0, 1, 3), scores, strict=True)
    ]
    rows = by_name("tool_selection", "by_domain").run(AnalysisInput(records, ctx))
    assert rows == [
        {"group": "Alarm", "n": 1, "accuracy_global": 0.0, "accuracy_local": 50.0},
        {"group": "Weather", "n": 2, "accuracy_global": 100.0, "accuracy_local": 100.0},
    ]
