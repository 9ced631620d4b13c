"""BFCL's gold as an expert edits it (benchmarks/suites/bfcl/gold.py, annotation/draft_lists.py):
the two shapes read and written back, each edit of an acceptable-value list and of a turn's
calls, the errors that stop a draft being saved, and the diff an edit shows. Hand-made cases."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from annotation import draft_lists
from annotation.draft_editing import Call, RefineError
from benchmarks.kit.conformance import imported
from benchmarks.kit.golddiff import revision_diff
from benchmarks.kit.protocol import Context, Item, Outcome
from benchmarks.kit.registry import gold_editing
from benchmarks.selectors import gold_outline
from benchmarks.suites import bfcl
from benchmarks.suites.bfcl import conversation, gold, regold
from tests.suites.bfcl.real_wheel import real_wheel  # noqa: F401 - a fixture

SINGLE = [{"calculate_triangle_area": {"base": [10], "height": [5], "unit": ["units", ""]}}]
MULTI = [["mkdir(dir_name='reports')"], [], ["cd(folder='reports')", "sort('notes.txt')"]]
FUNCTIONS = {
    "calculate_triangle_area": {
        "type": "dict",
        "properties": {"base": {}, "height": {}, "unit": {}},
        "required": ["base", "height"],
    }
}
MT_FUNCTIONS = {
    "mkdir": {"properties": {"dir_name": {}}},
    "cd": {"properties": {"folder": {}}},
    "sort": {"properties": {"file_name": {}}},
}


def test_the_registry_finds_bfcls_two_shapes_and_not_its_other_references() -> None:
    assert gold_editing(SINGLE) is gold.SINGLE_TURN
    assert gold_editing(MULTI) is gold.MULTI_TURN
    assert gold_editing({"answer": None, "expected": "no_call"}) is None
    assert gold_editing({"answers": ["42"]}) is None
    assert gold_editing([]) is None


def test_single_turn_reads_and_writes_back_unchanged() -> None:
    calls = gold.read_acceptable(SINGLE)
    assert calls == [
        {"name": "calculate_triangle_area", "arguments": SINGLE[0]["calculate_triangle_area"]}
    ]
    assert gold.write_acceptable(calls, SINGLE) == SINGLE


@pytest.mark.parametrize(
    ("calls", "message"),
    [
        ([], "at least one call"),
        ([{"name": " ", "arguments": {}}], "call 1 names no function"),
        (
            [{"name": "f", "arguments": {"a": 5}}],
            "call 1 (f), parameter a: the acceptable values must be a JSON list",
        ),
    ],
)
def test_single_turn_write_refuses_what_bfcl_cannot_read(calls: list, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        gold.write_acceptable(calls, SINGLE)


def test_multi_turn_keeps_the_number_of_turns_and_only_literal_calls() -> None:
    assert gold.write_turns(gold.read_turns(MULTI), MULTI) == MULTI
    with pytest.raises(ValueError, match="3 turns, not 2"):
        gold.write_turns(MULTI[:2], MULTI)
    with pytest.raises(ValueError, match=r"turn 3, call 2: .*plain name"):
        gold.write_turns([[], [], ["cd(folder='x')", "os.remove('x')"]], MULTI)
    with pytest.raises(ValueError, match="turn 1, call 1: not a valid call"):
        gold.write_turns([["cd(folder='x'); ls()"], [], []], MULTI)
    with pytest.raises(ValueError, match="turn 1, call 1: argument 'folder'"):
        gold.write_turns([["cd(folder=open('x'))"], [], []], MULTI)


def _draft() -> list[Call]:
    return draft_lists.acceptable_from_reference(gold.SINGLE_TURN, SINGLE)


def test_an_acceptable_value_is_added_removed_and_the_argument_marked_optional() -> None:
    calls = _draft()
    calls = draft_lists.add_value(calls, "c1", "height", draft_lists.value_from_text("5.0"))
    calls = draft_lists.add_value(calls, "c1", "base", draft_lists.value_from_text("ten"))
    assert calls[0].arguments["height"] == [5, 5.0] and calls[0].arguments["base"] == [10, "ten"]
    with pytest.raises(RefineError, match="already an acceptable value"):
        draft_lists.add_value(calls, "c1", "height", 5)
    calls = draft_lists.remove_value(calls, "c1", "height", 0)
    assert calls[0].arguments["height"] == [5.0]
    calls = draft_lists.toggle_optional(calls, "c1", "unit")
    assert calls[0].arguments["unit"] == ["units"]
    calls = draft_lists.toggle_optional(calls, "c1", "unit")
    assert calls[0].arguments["unit"] == ["units", ""]
    written = draft_lists.acceptable_to_reference(gold.SINGLE_TURN, calls, SINGLE)
    assert written == [
        {"calculate_triangle_area": {"base": [10, "ten"], "height": [5.0], "unit": ["units", ""]}}
    ]
    assert SINGLE[0]["calculate_triangle_area"]["height"] == [5]  # the published one untouched
    # the diff: one argument change per edited list, old list and new
    diff = draft_lists.calls_diff(_draft(), calls)
    assert [(c.kind, c.key, c.old, c.new) for c in diff] == [
        ("argument_changed", "base", [10], [10, "ten"]),
        ("argument_changed", "height", [5], [5.0]),
    ]


def test_a_value_list_must_be_a_json_list() -> None:
    assert draft_lists.values_from_text('[1, "a", ""]') == [1, "a", ""]
    assert draft_lists.values_from_text("  ") is None
    with pytest.raises(RefineError, match="must be a JSON list"):
        draft_lists.values_from_text("5")
    with pytest.raises(RefineError, match="must be a JSON list"):
        draft_lists.values_from_text("[1,")
    with pytest.raises(RefineError, match="type a value"):
        draft_lists.value_from_text(" ")


def test_errors_name_the_function_and_argument() -> None:
    calls = _draft()
    assert draft_lists.acceptable_errors(calls, FUNCTIONS) == {}
    wrong = [
        Call("c1", "rm_rf", {}),
        Call("c2", "calculate_triangle_area", {"side": [1], "base": [], "unit": [""]}),
    ]
    assert draft_lists.acceptable_errors(wrong, FUNCTIONS) == {
        "c1": "rm_rf is not one of this item's functions (calculate_triangle_area)",
        "c2": "calculate_triangle_area has no argument side; argument base: no acceptable value, "
        'so no answer can pass (give one, or "" alone if it must be left out, or remove the '
        "argument)",
    }
    assert draft_lists.acceptable_errors([], FUNCTIONS) == {
        "": "a single-turn gold expects at least one call"
    }


def test_turn_calls_are_edited_checked_and_diffed_turn_by_turn() -> None:
    calls, turns = draft_lists.turns_from_reference(gold.MULTI_TURN, MULTI)
    assert turns == 3 and [c.uid for c in calls] == ["c1", "c2", "c3"]
    edited = draft_lists.turn_set(calls, "c3", "sort('todo.txt')")
    edited = draft_lists.turn_insert(edited, 1, None, turns, "ls()")
    edited = draft_lists.turn_insert(edited, 0, "c1", turns)  # empty: an error until written
    assert draft_lists.turns_errors(edited, MT_FUNCTIONS, gold.parse) == {
        "n1": "ls is not one of this item's functions",
        "n2": "the call is empty",
    }
    with pytest.raises(RefineError, match="turn 1, call 2: the call is empty"):
        draft_lists.turns_to_reference(gold.MULTI_TURN, edited, turns, MULTI)
    edited = draft_lists.turn_delete(edited, "n2")
    assert draft_lists.turns_to_reference(gold.MULTI_TURN, edited, turns, MULTI) == [
        ["mkdir(dir_name='reports')"],
        ["ls()"],
        ["cd(folder='reports')", "sort('todo.txt')"],
    ]
    # moving stays within a turn
    assert draft_lists.turn_move(edited, "c1", "down") == edited
    with pytest.raises(RefineError, match="no turn 4"):
        draft_lists.turn_insert(edited, 3, None, turns)
    diff = draft_lists.turns_diff(gold.MULTI_TURN, calls, edited, turns, MT_FUNCTIONS)
    assert [(c.kind, c.new_number, c.key, c.old, c.new) for c in diff] == [
        ("inserted", "2.1", None, None, {"name": "ls", "arguments": {}}),
        ("argument_changed", "3.2", "file_name", "notes.txt", "todo.txt"),
    ]


def test_a_samples_history_and_outline_read_bfcls_gold_as_calls() -> None:
    refined = [{"calculate_triangle_area": {"base": [10], "height": [6], "unit": ["units", ""]}}]
    assert [
        (c.kind, c.new_number, c.key, c.old, c.new) for c in revision_diff(SINGLE, refined)
    ] == [("argument_changed", "1", "height", [5], [6])]
    later = [["mkdir(dir_name='archive')"], [], ["cd(folder='reports')", "sort('notes.txt')"]]
    assert [(c.kind, c.new_number, c.key, c.old, c.new) for c in revision_diff(MULTI, later)] == [
        ("argument_changed", "1.1", "dir_name", "reports", "archive")
    ]
    # a different number of turns is shown as the whole gold changed
    assert [c.key for c in revision_diff(MULTI, MULTI[:2])] == ["gold"]
    outline = gold_outline(MULTI)
    assert [(r["number"], r["tool"], r["arguments"]) for r in outline["rows"]] == [
        ("1.1", "mkdir", {"dir_name": "reports"}),
        ("3.1", "cd", {"folder": "reports"}),
        ("3.2", "sort", {"argument 1": "notes.txt"}),
    ]
    assert gold_outline(SINGLE)["rows"][0]["arguments"]["unit"] == ["units", ""]


def test_a_multi_turn_verdict_is_checked_again_only_under_another_ground_truth() -> None:
    item = Item(split="multi_turn_base", external_id="e", input={}, reference=MULTI)
    answer = {"passed": True, "turn_accuracy": 1.0, "turns": [[], [], []]}
    done = Outcome(output="", answer=answer)
    assert not regold.rechecked(done, item, {})  # a launch that recorded no ground truth
    assert not regold.rechecked(done, item, {"ground_truth": MULTI})
    assert regold.rechecked(done, item, {"ground_truth": [["ls()"], [], []]})
    failed = Outcome(output="", answer={**answer, "worker_failed": True})
    assert not regold.rechecked(failed, item, {"ground_truth": [[], [], []]})
    # the stored verdict is what is read when the gold is the launch's
    ctx = Context(task=bfcl.SUITE.evaluator.task("multi_turn_base"), options={})
    assert regold.score_entry(done, item, ctx, {"ground_truth": MULTI}) == {
        "accuracy": 100.0,
        "turn_accuracy": 100.0,
    }


def test_every_real_entrys_gold_is_editable_and_writes_back_as_published(
    real_wheel: Path,  # noqa: F811
) -> None:
    items, _ = imported(bfcl.SUITE.import_files, [real_wheel])
    shapes: dict[str, set[str | None]] = {}
    for item in items:
        found = gold_editing(item.reference)
        shapes.setdefault(item.split, set()).add(found.shape if found else None)
        if found is gold.SINGLE_TURN:
            assert gold.write_acceptable(gold.read_acceptable(item.reference), item.reference) == (
                item.reference
            )
        elif found is gold.MULTI_TURN:
            turns = gold.read_turns(item.reference)
            assert gold.write_turns(turns, item.reference) == item.reference
            assert len(turns) == len(item.input["question"])
    for category in bfcl.AST_CATEGORIES:
        expected = {None} if "relevance" in category else {"acceptable"}
        assert shapes[category] == expected, category
    for category in conversation.MULTI_TURN_CATEGORIES:
        assert shapes[category] == {"turns"}, category
    others = set(shapes) - set(bfcl.AST_CATEGORIES) - set(conversation.MULTI_TURN_CATEGORIES)
    assert others and all(shapes[split] == {None} for split in others), others
