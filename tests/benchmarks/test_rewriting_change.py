"""The change a description rewriting makes, hand-computed (benchmarks/kit/rewriting.py), and
MetaTool's reading of a rewriter's answer."""

from __future__ import annotations

import pytest

from benchmarks.kit.protocol import Item, ToolSpec
from benchmarks.kit.rewriting import description_change
from benchmarks.suites.metatool.rewriting import credited_tools, read_rewrite, rewrite_prompt


def test_the_change_overall_and_per_tool_by_hand() -> None:
    # before: A right twice of 3, B right 1 of 1, the pair (A, C) wrong, one unparsed left out
    before = [(("A",), 1.0), (("A",), 1.0), (("A",), 0.0), (("B",), 1.0), (("A", "C"), 0.0)]
    before.append((("B",), None))
    # after: A right 3 of 3, B wrong, the pair right
    after = [(("A",), 1.0), (("A",), 1.0), (("A",), 1.0), (("B",), 0.0), (("A", "C"), 1.0)]
    total, tools = description_change(before, after)
    # overall: 3 of 5 = 60% -> 4 of 5 = 80%: +20 points, +33.33% of 60
    assert (total.n_before, total.n_after) == (5, 5)
    assert (total.before, total.after) == (60.0, 80.0)
    assert total.points == pytest.approx(20.0)
    assert total.percent_change == pytest.approx(100 / 3)
    rows = {change.group: change for change in tools}
    assert list(rows) == ["A", "B", "C"]
    # A: 2 of 4 (the pair counts for A) = 50% -> 4 of 4 = 100%: +100%
    assert (rows["A"].n_before, rows["A"].before, rows["A"].after) == (4, 50.0, 100.0)
    assert rows["A"].percent_change == pytest.approx(100.0)
    # B: 1 of 1 -> 0 of 1: -100%; C: 0 -> 100, a change in points but no percentage of 0
    assert rows["B"].percent_change == pytest.approx(-100.0)
    assert (rows["C"].before, rows["C"].after, rows["C"].percent_change) == (0.0, 100.0, None)
    assert rows["C"].row()["change_points"] == 100.0


def test_no_items_give_no_rate() -> None:
    total, tools = description_change([], [((("A",)), 1.0)])
    assert (total.before, total.after, total.points, total.percent_change) == (
        None,
        100.0,
        None,
        None,
    )
    assert [t.group for t in tools] == ["A"]


def test_reading_a_rewriters_answer() -> None:
    assert read_rewrite('New description: "Finds  flights\nby date."\n\nMore text') == (
        "Finds flights by date."
    )
    assert read_rewrite("\n\n  \n") == ""
    assert read_rewrite("x" * 5000) == "x" * 2000


def test_the_prompt_fills_the_tool_once_and_a_base_model_continues_its_cue() -> None:
    prompt = rewrite_prompt(ToolSpec("Weather", "Weather for {tool_name} lovers"))
    text = prompt.messages[0]["content"]
    assert "Tool name: Weather\nOriginal description: Weather for {tool_name} lovers\n" in text
    assert text.startswith("Here is a tool for ChatGPT, which can help it solve users'")
    assert prompt.completion_text().endswith("New description: ")
    assert prompt.stop == ("\n\n",)


def test_an_items_score_is_credited_to_its_gold_tools() -> None:
    query = Item("queries", "1", {"query": "q"}, {"tool": "Weather"})
    pair = Item("multi_tool", "2", {"query": "q"}, {"tools": ["A", "B"]})
    reliability = Item("reliability", "3", {"query": "q"}, {"tool": "Gone"})
    assert credited_tools(query) == ("Weather",)
    assert credited_tools(pair) == ("A", "B")
    assert credited_tools(reliability) == ()
