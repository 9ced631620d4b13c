"""BFCL's multi-turn analyses (benchmarks/suites/bfcl/analyses.py) on entries built here, their
stored verdicts as conversation.py keeps them, every figure counted by hand."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.kit.analyses import AnalysisInput
from benchmarks.kit.conformance import context_for
from benchmarks.kit.protocol import Item, Outcome, Scored
from benchmarks.suites import bfcl
from benchmarks.suites.bfcl.analyses import ANALYSES, entry_error

TASK = "multi_turn_base"
CTX = context_for(bfcl.SUITE.evaluator, TASK)


def turn(index: int, passed: bool, kind: str = "") -> dict[str, Any]:
    return {"turn": index, "passed": passed, "kind": kind or ("passed" if passed else "state")}


def entry(
    name: str,
    classes: list[str],
    verdicts: list[dict[str, Any]] | None,
    **answer: Any,
) -> Scored:
    item = Item(split=TASK, external_id=name, input={}, metadata={"involved_classes": classes})
    if verdicts is None:  # the endpoint gave no answer
        return Scored(item, None, {"accuracy": 0.0, "turn_accuracy": 0.0})
    passed = all(v["passed"] for v in verdicts) and not answer.get("force_quit")
    share = sum(v["passed"] for v in verdicts) / len(verdicts) if verdicts else 0.0
    stored = {"passed": passed, "turn_accuracy": share, "verdicts": verdicts, **answer}
    scores = {"accuracy": 100.0 if passed else 0.0, "turn_accuracy": round(100.0 * share, 2)}
    return Scored(item, Outcome(output="", answer=stored), scores)


FS, MATH, TWITTER = "GorillaFileSystem", "MathAPI", "TwitterAPI"
RECORDS = [
    # a: every turn passes
    entry("a", [FS], [turn(0, True), turn(1, True), turn(2, True)]),
    # b: turn 1 fails on the state; turn 2 passes again
    entry("b", [FS, MATH], [turn(0, True), turn(1, False, "state"), turn(2, True)]),
    # c: the first turn calls nothing where the ground truth calls
    entry("c", [MATH], [turn(0, False, "no_calls"), turn(1, True)]),
    # d: forced to quit in turn 1: its turns after it are missing
    entry(
        "d",
        [TWITTER, FS],
        [turn(0, True), turn(1, False, "results"), turn(2, False, "missing_turn")],
        force_quit=True,
    ),
    # e: the endpoint gave no answer
    entry("e", [FS], None),
    # f: a lone text, no conversation
    Scored(
        Item(split=TASK, external_id="f", input={}, metadata={"involved_classes": [MATH]}),
        Outcome(output="hello", answer=None, parsed=False),
        {"accuracy": 0.0, "turn_accuracy": 0.0},
    ),
]


def rows(name: str) -> list[dict[str, Any]]:
    (analysis,) = [a for a in ANALYSES[TASK] if a.name == name]
    return analysis.run(AnalysisInput(RECORDS, CTX))


def test_turns_passed_by_turn_index_over_the_entries_that_have_the_turn() -> None:
    # turn 0: a b c d have it; a b d passed (3/4); all so far: a b d (3/4)
    # turn 1: a b c d; a c passed (2/4); all so far: a (1/4)
    # turn 2: a b d; a b passed (2/3); all so far: a (1/3)
    assert rows("turns") == [
        {"group": 0, "n": 4, "passed": 75.0, "all_passed": 75.0},
        {"group": 1, "n": 4, "passed": 50.0, "all_passed": 25.0},
        {"group": 2, "n": 3, "passed": 66.67, "all_passed": 33.33},
    ]


def test_accuracy_by_involved_class_counts_an_entry_under_each_of_its_classes() -> None:
    # FS: a (100, 100), b (0, 66.67), d (0, 33.33), e (0, 0): accuracy 25, turns 200/4 = 50
    # MATH: b (0, 66.67), c (0, 50), f (0, 0): accuracy 0, turns 116.67/3 = 38.89
    # TWITTER: d (0, 33.33)
    assert rows("classes") == [
        {"group": FS, "n": 4, "accuracy": 25.0, "turn_accuracy": 50.0},
        {"group": MATH, "n": 3, "accuracy": 0.0, "turn_accuracy": 38.89},
        {"group": TWITTER, "n": 1, "accuracy": 0.0, "turn_accuracy": 33.33},
    ]


def test_error_types_of_failed_entries_by_their_first_failed_turn() -> None:
    # failed: b (state), c (no_calls), d (step_limit, whatever its turns say), e (failed_call),
    # f (unparsed): 5, each 20%, in the declared order
    assert rows("turn_errors") == [
        {"group": "step_limit", "n": 1, "share": 20.0},
        {"group": "no_calls", "n": 1, "share": 20.0},
        {"group": "state", "n": 1, "share": 20.0},
        {"group": "unparsed", "n": 1, "share": 20.0},
        {"group": "failed_call", "n": 1, "share": 20.0},
    ]


def test_failed_turns_by_verdict_kind_count_every_failed_turn() -> None:
    # failed turns: b1 state, c0 no_calls, d1 results, d2 missing_turn: 4 turns, 25% each;
    # e and f have no verdicts
    assert rows("failed_turns") == [
        {"group": "no_calls", "n": 1, "turns": 1, "share": 25.0},
        {"group": "state", "n": 1, "turns": 1, "share": 25.0},
        {"group": "results", "n": 1, "turns": 1, "share": 25.0},
        {"group": "missing_turn", "n": 1, "turns": 1, "share": 25.0},
    ]


def test_failed_turns_of_one_kind_in_one_entry_count_once_in_n() -> None:
    records = [
        entry("g", [FS], [turn(0, False, "state"), turn(1, False, "state"), turn(2, True)]),
        entry("h", [FS], [turn(0, True), turn(1, False, "state")]),
        entry("i", [FS], [turn(0, False, "no_calls")]),
    ]
    (analysis,) = [a for a in ANALYSES[TASK] if a.name == "failed_turns"]
    # state: 3 turns in 2 entries; no_calls: 1 turn in 1 entry; 4 failed turns
    assert analysis.run(AnalysisInput(records, CTX)) == [
        {"group": "no_calls", "n": 1, "turns": 1, "share": 25.0},
        {"group": "state", "n": 2, "turns": 3, "share": 75.0},
    ]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ({"passed": False, "verdicts": [], "worker_failed": True}, "worker_failed"),
        ({"passed": False, "verdicts": [turn(0, True), turn(1, False, "results")]}, "results"),
        # verdicts out of order: the first failed turn is the lowest index
        (
            {"passed": False, "verdicts": [turn(1, False, "state"), turn(0, False, "no_calls")]},
            "no_calls",
        ),
        # every turn passed, yet the entry failed: its turns are not the ground truth's
        ({"passed": False, "verdicts": [turn(0, True)]}, "missing_turn"),
    ],
)
def test_an_entry_s_error(answer: dict[str, Any], expected: str) -> None:
    item = Item(split=TASK, external_id="x", input={})
    record = Scored(item, Outcome(output="", answer=answer), {"accuracy": 0.0})
    assert entry_error(record, CTX) == expected


def test_the_ast_tasks_keep_their_error_types_and_the_multi_turn_ones_have_theirs() -> None:
    assert [a.name for a in ANALYSES["simple_python"]] == ["error_types"]
    for task in ("multi_turn_base", "multi_turn_miss_func", "multi_turn_long_context"):
        assert [a.name for a in ANALYSES[task]] == [
            "turns",
            "classes",
            "turn_errors",
            "failed_turns",
        ]
