"""StableToolBench's analyses on three hand-made items, counted here by hand."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.kit.analyses import AnalysisInput
from benchmarks.kit.protocol import Context, Item, Outcome, Scored, ToolSpec
from benchmarks.suites import stabletoolbench
from benchmarks.suites.stabletoolbench.analyses import ANALYSES


def scored(index: int, calls: list[tuple[str, str]] | None, context: dict[str, Any]) -> Scored:
    item = Item("G1_instruction", str(index), {"query": "q"}, {}, candidate_tools=("a", "b"))
    trace = [{"action": t, "tool": t, "source": s} for t, s in calls or []]
    outcome = None if calls is None else Outcome(output="", answer="x", trace=trace)
    return Scored(item=item, outcome=outcome, scores={}, context=context)


def entry(judge: str, label: str, value: float | None = None) -> dict[str, Any]:
    return {"judge": judge, "value": value, "values": {"label": label}}


@pytest.fixture
def data() -> AnalysisInput:
    ctx = Context(
        task=stabletoolbench.SUITE.evaluator.task("pass_rate"),
        tools={"w": ToolSpec("w", category="Weather"), "f": ToolSpec("f", category="Travel")},
    )
    records = [
        scored(0, [("w", "cache"), ("f", "simulated")], {}),
        scored(1, [("w", "cache"), ("w", "real")], {"tools_down": 50.0}),
        scored(2, None, {}),  # the endpoint failed: no call
    ]
    judgments = {
        "stabletoolbench.pass": {
            ("G1_instruction/0", 0): [entry("p", "Solved", 1.0), entry("p", "Unsure", 0.5)],
            ("G1_instruction/1", 0): [entry("p", "Solved", 1.0)],
            ("G1_instruction/2", 0): [entry("p", "Unsolved", 0.0)],
        },
        "stabletoolbench.solvability": {
            ("G1_instruction/0", 0): [entry("A", "Solvable"), entry("B", "Solvable")],
            ("G1_instruction/1", 0): [
                entry("A", "Unsolvable"),
                entry("A", "Unsolvable"),
                entry("A", "Solvable"),
                entry("B", "Solvable"),
            ],
            ("G1_instruction/2", 0): [entry("A", "Unsure")],
        },
    }
    return AnalysisInput(records, ctx, inputs={"judgments": judgments})


def rows(name: str, data: AnalysisInput) -> list[dict[str, Any]]:
    return next(a for a in ANALYSES["pass_rate"] if a.name == name).run(data)


def test_calls_by_source(data: AnalysisInput) -> None:
    # four calls: two from the cache (two items), one real, one simulated
    assert rows("calls_by_source", data) == [
        {"group": "cache", "n": 2, "share": 50.0, "calls": 2.0},
        {"group": "real", "n": 1, "share": 25.0, "calls": 1.0},
        {"group": "simulated", "n": 1, "share": 25.0, "calls": 1.0},
    ]


def test_cache_hit_rate_per_category(data: AnalysisInput) -> None:
    assert rows("cache_by_category", data) == [
        {"group": "Travel", "n": 1, "cache_hit_rate": 0.0, "calls": 1.0},
        # three Weather calls by two items, two from the cache
        {"group": "Weather", "n": 2, "cache_hit_rate": 66.67, "calls": 3.0},
    ]


def test_sopr_against_the_share_of_tools_down(data: AnalysisInput) -> None:
    # no tool down: items 0 (1 and 0.5: 0.75) and 2 (0): 37.5; 50% down: item 1 solved
    assert rows("sopr_by_tools_down", data) == [
        {"group": 0.0, "n": 2, "SoPR": 37.5, "judged": 2.0},
        {"group": 50.0, "n": 1, "SoPR": 100.0, "judged": 1.0},
    ]


def test_solvability_votes_and_agreement(data: AnalysisInput) -> None:
    # A votes Solvable, Unsolvable (2 of 3 rounds), Unsure; B Solvable twice; they share items
    # 0 (agree) and 1 (disagree)
    assert rows("solvability_votes", data) == [
        {"group": "A", "n": 3, "solvable": 33.33, "unsolvable": 33.33, "unsure": 33.33,
         "agreement": 50.0},
        {"group": "B", "n": 2, "solvable": 100.0, "unsolvable": 0.0, "unsure": 0.0,
         "agreement": 50.0},
    ]  # fmt: skip


def test_a_stability_run_keeps_its_share_with_each_item() -> None:
    evaluator = stabletoolbench.SUITE.evaluator
    items = [Item("G1", str(i), {}, {}, candidate_tools=("a", "b")) for i in range(2)]
    items.append(Item("G1", "2", {}, {}, candidate_tools=("c", "d")))
    down = Context(task=evaluator.task("pass_rate"), options={"down_tools": ["a", "z"]})
    assert evaluator.prepare(items, down) == [{"tools_down": 25.0}] * 3
    none = Context(task=evaluator.task("pass_rate"))
    assert evaluator.prepare(items, none) == [{}, {}, {}]
