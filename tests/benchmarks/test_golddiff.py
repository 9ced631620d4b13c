"""The revision history's diff: two stored versions paired by content, then the editor's diff.
Hand-computed cases."""

from __future__ import annotations

from benchmarks.kit.golddiff import Change, align, gold_shape, revision_diff


def test_align_pairs_equal_items_in_order_then_moves_then_edits_by_gap() -> None:
    # a b c d -> a X c d: b edited into X (same gap), the rest kept
    assert align(["a", "b", "c", "d"], ["a", "X", "c", "d"]) == [0, 1, 2, 3]
    # a b c -> n a b c: an insertion in front is new, nothing else moves
    assert align(["a", "b", "c"], ["n", "a", "b", "c"]) == [None, 0, 1, 2]
    # a b c -> c a b: c moved to the front (found by content)
    assert align(["a", "b", "c"], ["c", "a", "b"]) == [2, 0, 1]
    # a b -> a: b deleted
    assert align(["a", "b"], ["a"]) == [0]
    # a b -> a Y Z: b edited into Y, Z new
    assert align(["a", "b"], ["a", "Y", "Z"]) == [0, 1, None]
    assert align([], ["a"]) == [None]


def calls(*pairs: tuple[str, dict]) -> dict:
    return {"tool_calls": [{"name": name, "arguments": args} for name, args in pairs]}


def test_an_inserted_call_in_front_is_one_insertion_not_a_change_of_every_call() -> None:
    old = calls(("weather", {"city": "Oban"}), ("news", {}))
    new = calls(("clock", {}), ("weather", {"city": "Oban"}), ("news", {}))
    assert revision_diff(old, new) == [
        Change("inserted", "n1", None, "1", new={"name": "clock", "arguments": {}})
    ]


def test_an_edited_argument_reads_as_an_argument_change() -> None:
    old = calls(("weather", {"city": "Oban", "days": 1}), ("news", {}))
    new = calls(("weather", {"city": "Obann", "days": 1}), ("news", {}))
    assert revision_diff(old, new) == [
        Change("argument_changed", "c1", "1", "1", key="city", old="Oban", new="Obann")
    ]


def test_a_moved_call_is_one_move() -> None:
    old = calls(("a", {}), ("b", {}), ("c", {}))
    new = calls(("c", {}), ("a", {}), ("b", {}))
    assert revision_diff(old, new) == [Change("moved", "c3", "3", "1")]


def test_a_plan_step_deleted_and_one_reworded() -> None:
    old = {
        "steps": [
            {"step": "1", "text": "find a flight"},
            {"step": "1.1", "text": "search", "tool": "flights", "arguments": {"to": "Oslo"}},
            {"step": "2", "text": "book it"},
        ]
    }
    new = {
        "steps": [
            {"step": "1", "text": "find a cheap flight"},
            {"step": "1.1", "text": "search", "tool": "flights", "arguments": {"to": "Oslo"}},
        ]
    }
    assert revision_diff(old, new) == [
        Change("text", "s1", "1", "1", old="find a flight", new="find a cheap flight"),
        Change(
            "deleted",
            "s3",
            "2",
            None,
            old={"text": "book it", "tool": None, "arguments": None, "depth": 0},
        ),
    ]


def test_the_query_and_a_gold_of_another_shape() -> None:
    assert gold_shape({"tool": "weather"}) == "json"
    assert revision_diff(
        {"tool": "weather", "why": "x"},
        {"tool": "climate", "why": "x"},
        old_query="Rain?",
        new_query="Rain tomorrow?",
    ) == [
        Change("text", "query", key="query", old="Rain?", new="Rain tomorrow?"),
        Change("argument_changed", "gold", key="tool", old="weather", new="climate"),
    ]
    assert revision_diff("None", "weather") == [
        Change("argument_changed", "gold", key="gold", old="None", new="weather")
    ]
    assert revision_diff({"a": 1}, {"a": 1}, old_query="q", new_query="q") == []


def test_in_a_gap_a_call_pairs_with_the_old_call_of_its_tool_before_position() -> None:
    # weather(Oban) -> clock, weather(Oban, days 2): the weather call gained an argument and a
    # clock call came in front; by position alone weather would read as renamed to clock
    assert align(["w1"], ["c", "w2"], ["weather"], ["clock", "weather"]) == [None, 0]
    old = calls(("weather", {"city": "Oban"}))
    new = calls(("clock", {}), ("weather", {"city": "Oban", "days": 2}))
    assert revision_diff(old, new) == [
        Change("inserted", "n1", None, "1", new={"name": "clock", "arguments": {}}),
        Change("argument_added", "c1", "1", "2", key="days", new=2),
    ]
