"""BFCL's multi-turn outputs read step by step (benchmarks/suites/bfcl/traces.py): the demo
entries (ours, in BFCL's format) answered through the tasks' own solve loops by a scripted model,
their calls executed with BFCL's classes from the pinned wheel (skipped, saying why, when it
cannot be had), and the states recomputed by the suite's worker."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.kit.context import JudgedOutput, ShownCall
from benchmarks.kit.protocol import Item, Outcome
from benchmarks.kit.registry import get_suite
from benchmarks.kit.traces import NotATrace, Trace
from benchmarks.suites import bfcl
from benchmarks.suites.bfcl import conversation
from benchmarks.suites.bfcl.conformance import converse, silent_script
from benchmarks.suites.bfcl.decode import Call
from benchmarks.suites.bfcl.traces import stored_states, trace, turn_states
from tests.suites.bfcl.real_wheel import real_wheel  # noqa: F401 - a fixture
from tests.suites.bfcl.test_conversation import ctx_for, demo


def judged(outcome: Outcome, item: Item, mode: str = "text") -> JudgedOutput:
    ctx = ctx_for(item.split, mode)
    return JudgedOutput(
        task=item.split,
        text=outcome.output,
        answer=outcome.answer,
        parsed=outcome.parsed,
        trace=outcome.trace,
        note=outcome.note,
        scores=bfcl.SUITE.evaluator.score(outcome, item, ctx, {}),
        tool_calls=outcome.tool_calls,
    )


def test_a_wrong_move_reads_as_its_turns_with_states_and_verdicts(real_wheel: Path) -> None:  # noqa: F811
    # given: multi_turn_base_demo_0 with turn 1 moving the wrong file
    item = demo("multi_turn_base_demo_0")
    script = conversation.gold_steps(item)
    script[1] = [[Call("mv", {"source": "todo.txt", "destination": "reports"})], []]
    outcome = converse(item, ctx_for("multi_turn_base", "text"), script)

    # when
    got = trace(item, judged(outcome, item))

    # then: four turns, the user's words from the entry, the verdicts mapped
    assert [s.label for s in got.steps] == ["turn 1", "turn 2", "turn 3", "turn 4"]
    assert [s.auto_error for s in got.steps] == ["", "wrong_state", "wrong_state", "wrong_state"]
    assert got.auto_verdict is False
    wrong = got.steps[1]
    assert wrong.user == item.input["question"][1][0]["content"]
    assert wrong.calls == (
        ShownCall("mv", {"source": "todo.txt", "destination": "reports"}, "turn 2, step 1"),
    )
    row = next(r for r in outcome.trace if r.get("turn") == 1 and r.get("action"))
    assert wrong.results == ({"result": "'todo.txt' moved to 'reports/todo.txt'"},)
    assert row["observation"] == json.dumps(wrong.results[0])
    # the state around the turn, recomputed: todo.txt leaves the working directory
    assert wrong.state_before is not None and wrong.state_after is not None
    assert wrong.state_before != wrong.state_after
    assert "todo.txt" in str(wrong.state_before["GorillaFileSystem"])
    assert got.steps[0].state_after == wrong.state_before
    assert set(got.schemas) >= {"mv", "ls", "cat"}


def test_the_states_are_kept_when_scored_and_read_without_executing_again(
    monkeypatch: pytest.MonkeyPatch,
    real_wheel: Path,  # noqa: F811
) -> None:
    # given: an entry answered and scored (its calls executed again for the verdict)
    item = demo("multi_turn_base_demo_0")
    script = conversation.gold_steps(item)
    script[1] = [[Call("mv", {"source": "todo.txt", "destination": "reports"})], []]
    outcome = converse(item, ctx_for("multi_turn_base", "text"), script)
    # then: each turn's verdict row keeps the states around the turn, as a recomputation has them
    kept = [row for row in outcome.trace if "verdict" in row]
    assert [row["turn"] for row in kept] == [0, 1, 2, 3]
    assert all("state_before" in row and "state_after" in row for row in kept)
    assert [(row["state_before"], row["state_after"]) for row in kept] == turn_states(
        item, outcome.answer["turns"]
    )
    assert "todo.txt" in str(kept[1]["state_before"]["GorillaFileSystem"])
    # and the trace reads them from there: no worker is needed (the wheel gone)
    recomputed = trace(item, judged(outcome, item))

    def missing(directory: Path | None = None) -> Path:
        raise ValueError("run manage.py fetch_bfcl")

    monkeypatch.setattr(conversation, "wheel_source", missing)
    got = trace(item, judged(outcome, item))
    assert got.steps[1].state_before == kept[1]["state_before"]
    assert [(s.state_before, s.state_after) for s in got.steps] == [
        (s.state_before, s.state_after) for s in recomputed.steps
    ]


def test_an_answer_scored_before_the_states_were_kept_has_them_recomputed(
    real_wheel: Path,  # noqa: F811
) -> None:
    item = demo("multi_turn_base_demo_0")
    outcome = converse(item, ctx_for(item.split, "text"), conversation.gold_steps(item))
    stored = trace(item, judged(outcome, item))
    # the verdict rows as they were stored before: no states
    outcome.trace = [
        {k: v for k, v in row.items() if k not in ("state_before", "state_after")}
        for row in outcome.trace
    ]
    assert stored_states(outcome.trace, len(outcome.answer["turns"])) is None
    got = trace(item, judged(outcome, item))
    assert got.steps[0].state_after is not None
    assert [(s.state_before, s.state_after) for s in got.steps] == [
        (s.state_before, s.state_after) for s in stored.steps
    ]


def test_the_ground_truth_replayed_passes_every_turn(real_wheel: Path) -> None:  # noqa: F811
    item = demo("multi_turn_base_demo_1")
    for mode in ("text", "native"):
        outcome = converse(item, ctx_for(item.split, mode), conversation.gold_steps(item))
        got = trace(item, judged(outcome, item, mode))
        assert [s.auto_error for s in got.steps] == ["", ""]
        assert got.auto_verdict is True
        assert [c.name for s in got.steps for c in s.calls] == ["ls", "cat"]


def test_a_model_that_never_calls_misses_its_calls(real_wheel: Path) -> None:  # noqa: F811
    item = demo("multi_turn_miss_param_demo_0")
    outcome = converse(item, ctx_for(item.split, "text"), silent_script(item))
    got = trace(item, judged(outcome, item))
    # turn 1's ground truth calls nothing: passed; the others miss their calls
    assert [s.auto_error for s in got.steps] == ["", "missed_call", "missed_call"]
    assert all(s.calls == () for s in got.steps)


def test_without_the_wheel_the_states_are_none(
    monkeypatch: pytest.MonkeyPatch,
    real_wheel: Path,  # noqa: F811
) -> None:
    # given: an answer scored before its verdict rows kept the states (they are recomputed)
    item = demo("multi_turn_base_demo_1")
    outcome = converse(item, ctx_for(item.split, "text"), conversation.gold_steps(item))
    outcome.trace = [
        {k: v for k, v in row.items() if k not in ("state_before", "state_after")}
        for row in outcome.trace
    ]

    def missing(directory: Path | None = None) -> Path:
        raise ValueError("run manage.py fetch_bfcl")

    # The edge the hook reaches out to (the wheel on disk), not the hook itself.
    monkeypatch.setattr(conversation, "wheel_source", missing)
    got = trace(item, judged(outcome, item))
    assert all(s.state_before is None and s.state_after is None for s in got.steps)
    assert [s.auto_error for s in got.steps] == ["", ""]


def test_a_forced_quit_leaves_later_turns_not_reached() -> None:
    item = demo("multi_turn_base_demo_0")
    answer: dict[str, Any] = {
        "passed": False,
        "turn_accuracy": 0.0,
        "force_quit": True,
        "turns": [[["ls()"]]],
        "verdicts": [{"turn": 0, "passed": False, "kind": "state", "refused": []}],
    }
    output = JudgedOutput(text="", answer=answer, trace=[{"turn": 0, "step": 0, "action": "ls"}])
    read = _without_states(item, output)
    assert [s.label for s in read.steps] == [
        "turn 1",
        "turn 2 (not reached)",
        "turn 3 (not reached)",
        "turn 4 (not reached)",
    ]
    assert [s.auto_error for s in read.steps] == ["wrong_state", None, None, None]
    assert read.auto_verdict is False


def _without_states(item: Item, output: JudgedOutput) -> Trace:
    # One turn reached (force quit), with no call: the states are those of the entry untouched.
    answer = {**output.answer, "turns": [[]]}
    return trace(item, JudgedOutput(text=output.text, answer=answer, trace=output.trace))


@pytest.mark.parametrize(
    "output",
    [
        None,
        JudgedOutput(text="[ls()]", parsed=False),
        JudgedOutput(answer={"turns": "x"}),
        JudgedOutput(answer=["not", "a", "mapping"]),
    ],
)
def test_outputs_without_a_conversation_are_not_traces(output: JudgedOutput | None) -> None:
    with pytest.raises(NotATrace):
        trace(demo("multi_turn_base_demo_0"), output)


def test_hostile_rows_still_read() -> None:
    item = demo("multi_turn_base_demo_0")
    answer = {"turns": [], "verdicts": ["x", {"turn": "0", "kind": 5}, None]}
    rows = ["junk", {"turn": 0, "action": 3}, {"turn": 0, "step": "s", "action": "ls"}, None]
    got = trace(item, JudgedOutput(answer=answer, trace=rows))
    assert isinstance(got, Trace)
    assert got.steps[0].calls == (ShownCall("ls", None, "turn 1"),)


def test_a_single_turn_category_is_not_a_trace() -> None:
    item = Item(split="simple_python", external_id="simple_python_0", input={})
    with pytest.raises(NotATrace, match="multi-turn"):
        trace(item, JudgedOutput(answer={"turns": []}))


def test_the_suite_declares_its_trace_and_own_errors() -> None:
    suite = get_suite("bfcl")
    assert suite.trace is trace
    assert [e.key for e in suite.own_step_errors] == ["wrong_state", "missing_result"]
