"""BFCL's multi-turn tasks (conversation.py): the pure parts on hand-computed cases, then the
conversation run through the tasks' own solve loops on the demo entries (ours, in BFCL's format,
benchmarks/demo/bfcl/), their calls executed with BFCL's classes from the pinned wheel (skipped,
saying why, when it cannot be had)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from benchmarks.kit.conformance import imported
from benchmarks.kit.protocol import Context, Item, Outcome, Scored
from benchmarks.suites import bfcl
from benchmarks.suites.bfcl import conversation
from benchmarks.suites.bfcl.conformance import ScriptedModel, converse, silent_script
from benchmarks.suites.bfcl.decode import Call
from tests.suites.bfcl.real_wheel import real_wheel  # noqa: F401 - a fixture

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "benchmarks" / "demo" / "bfcl"
CATEGORIES = conversation.MULTI_TURN_CATEGORIES


def demo_items() -> list[Item]:
    files = [DEMO / f"BFCL_v4_{category}.json" for category in CATEGORIES]
    items, _ = imported(bfcl.SUITE.import_files, files)
    return items


def demo(entry_id: str) -> Item:
    return next(item for item in demo_items() if item.external_id == entry_id)


def ctx_for(category: str, mode: str) -> Context:
    evaluator = bfcl.SUITE.evaluator
    return Context(task=evaluator.task(category), options={"tool_mode": mode})


# --- pure parts ---------------------------------------------------------------------------------


def test_a_call_is_written_as_bfcl_writes_it_to_execute_it() -> None:
    call = Call("mv", {"source": "a.txt", "destination": "it's"})
    assert conversation.call_text(call) == "mv(source='a.txt',destination=\"it's\")"
    assert conversation.call_text(Call("ls", {})) == "ls()"


def test_the_gold_steps_call_then_stop_and_name_positional_arguments() -> None:
    item = demo("multi_turn_base_demo_1")
    # ground truth [["ls()"], ["cat('todo.txt')"]]: cat's one parameter is file_name
    assert conversation.gold_steps(item) == [
        [[Call("ls", {})], []],
        [[Call("cat", {"file_name": "todo.txt"})], []],
    ]
    missing_parameter = demo("multi_turn_miss_param_demo_0")
    assert conversation.gold_steps(missing_parameter)[0] == [[]]
    assert conversation.gold_text_of([Call("add", {"a": 2, "b": 3})]) == "[add(a=2,b=3)]"
    assert conversation.gold_text_of([]) == ""


def test_the_score_reads_the_stored_verdict() -> None:
    item = demo("multi_turn_base_demo_0")
    ctx = ctx_for("multi_turn_base", "text")
    passed = Outcome("", answer={"passed": True, "turn_accuracy": 1.0})
    one_of_four = Outcome("", answer={"passed": False, "turn_accuracy": 0.25})
    score = conversation.score_entry
    assert score(passed, item, ctx, {}) == {"accuracy": 100.0, "turn_accuracy": 100.0}
    assert score(one_of_four, item, ctx, {}) == {"accuracy": 0.0, "turn_accuracy": 25.0}
    assert score(None, item, ctx, {}) == {"accuracy": 0.0, "turn_accuracy": 0.0}
    lone = conversation.parse_text("[mkdir(dir_name='x')]", item, ctx, {})
    assert not lone.parsed and score(lone, item, ctx, {})["accuracy"] == 0.0
    scored = [
        Scored(item, passed, {"accuracy": 100.0, "turn_accuracy": 100.0}),
        Scored(item, one_of_four, {"accuracy": 0.0, "turn_accuracy": 25.0}),
        Scored(item, None, {"accuracy": 0.0, "turn_accuracy": 0.0}),
    ]
    # (100 + 0 + 0) / 3 and (100 + 25 + 0) / 3
    assert conversation.aggregate_entries(scored, ctx) == {
        "accuracy": 33.33,
        "turn_accuracy": 41.67,
        "n": 3.0,
    }


def test_a_launch_without_the_wheel_is_refused_naming_fetch_bfcl(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"manage\.py fetch_bfcl"):
        conversation.wheel_source(tmp_path)


def test_the_multi_turn_tasks_are_declared_native_agents() -> None:
    evaluator = bfcl.SUITE.evaluator
    for category in CATEGORIES:
        spec = evaluator.task(category)
        assert spec.splits == (category,) and spec.native and spec.agent
        assert spec.metrics == ("accuracy", "turn_accuracy", "n")


# --- the conversation, executed -----------------------------------------------------------------


@pytest.mark.parametrize("mode", ["text", "native"])
def test_the_ground_truth_replayed_passes_every_demo_entry(
    real_wheel: Path,  # noqa: F811
    mode: str,
) -> None:
    for item in demo_items():
        outcome = converse(item, ctx_for(item.split, mode), conversation.gold_steps(item))
        answer = outcome.answer
        assert answer["passed"], (item.external_id, mode, answer["reason"], answer["verdicts"])
        assert answer["turn_accuracy"] == 1.0
        assert [v["passed"] for v in answer["verdicts"]] == [True] * len(item.reference)
        if mode == "native":
            assert outcome.tool_calls


def test_one_wrong_call_fails_its_turn_and_keeps_the_state_diff(real_wheel: Path) -> None:  # noqa: F811
    item = demo("multi_turn_base_demo_0")
    script = conversation.gold_steps(item)
    # turn 1: move the wrong file (todo.txt instead of notes.txt)
    script[1] = [[Call("mv", {"source": "todo.txt", "destination": "reports"})], []]
    for mode in ("text", "native"):
        outcome = converse(item, ctx_for("multi_turn_base", mode), script)
        answer = outcome.answer
        assert not answer["passed"]
        verdicts = answer["verdicts"]
        # turn 2 cannot sort notes.txt where it is not; turn 3 adds, but the files still differ
        assert [v["passed"] for v in verdicts] == [True, False, False, False]
        failed = verdicts[1]
        assert failed["kind"] == "state" and "turn 1" in failed["reason"]
        assert failed["state_diff"] and failed["state_diff"][0]["instance"] == "GorillaFileSystem"
        assert answer["turn_accuracy"] == 0.25
        assert outcome.note.startswith("turn 1:")
        scores = bfcl.SUITE.evaluator.score(outcome, item, ctx_for("multi_turn_base", mode), {})
        assert scores == {"accuracy": 0.0, "turn_accuracy": 25.0}
        turn_1 = [row for row in outcome.trace if row["turn"] == 1]
        assert turn_1[0]["call"] == "mv(source='todo.txt',destination='reports')"
        assert turn_1[0]["action"] == "mv"
        assert turn_1[0]["arguments"] == {"source": "todo.txt", "destination": "reports"}
        assert turn_1[1]["stop"] == "no call: the turn ends"
        assert turn_1[2]["verdict"] is False and turn_1[2]["error"].startswith("turn 1 failed:")
        assert outcome.trace[-1]["turn"] == 3 and "error" in outcome.trace[-1]


def test_a_model_that_never_calls_fails_every_turn_with_calls(real_wheel: Path) -> None:  # noqa: F811
    item = demo("multi_turn_miss_param_demo_0")
    outcome = converse(item, ctx_for(item.split, "text"), silent_script(item))
    kinds = [v["kind"] for v in outcome.answer["verdicts"]]
    # turn 0's ground truth calls nothing (the model must ask for the name): not compared
    assert kinds == ["no_gold_calls", "no_calls", "no_calls"]
    assert outcome.answer["turn_accuracy"] == pytest.approx(1 / 3)


def _declared(prompt: Any) -> list[str]:
    return [tool["function"]["name"] for tool in prompt.tools]


def test_a_held_out_function_comes_back_at_its_turn(real_wheel: Path) -> None:  # noqa: F811
    item = demo("multi_turn_miss_func_demo_0")  # mv held out until turn 2
    for mode in ("text", "native"):
        model = ScriptedModel(conversation.gold_steps(item))
        evaluator = bfcl.SUITE.evaluator
        ctx = ctx_for(item.split, mode)
        if mode == "native":
            outcome = _run(evaluator.native_solve(item, ctx, {}, model.ask))
        else:
            outcome = _run(evaluator.solve(item, ctx, {}, model.complete))
        assert outcome.answer["passed"], outcome.answer
        # requests: turn 0 (call, stop), turn 1 (stop), turn 2 (call, stop)
        assert len(model.requests) == 5
        last_user = [m for m in model.requests[3].messages if m["role"] == "user"][-1]
        if mode == "native":
            assert "mv" not in _declared(model.requests[2])
            assert "mv" in _declared(model.requests[3])
            assert last_user["content"] == (
                "I have updated some more functions you can choose from. What about now?"
            )
        else:
            assert not model.requests[3].tools
            listed = last_user["content"].split("\n")[0]
            assert [doc["name"] for doc in ast.literal_eval(listed)] == ["mv"]
            assert '"name": "mkdir"' in model.requests[0].messages[0]["content"]
            assert '"name": "mv"' not in model.requests[0].messages[0]["content"]


def test_results_go_back_as_bfcl_writes_them(real_wheel: Path) -> None:  # noqa: F811
    item = demo("multi_turn_base_demo_0")
    for mode in ("text", "native"):
        model = ScriptedModel(conversation.gold_steps(item))
        evaluator = bfcl.SUITE.evaluator
        ctx = ctx_for(item.split, mode)
        if mode == "native":
            _run(evaluator.native_solve(item, ctx, {}, model.ask))
            after = model.requests[1].messages
            assert after[-2]["role"] == "assistant" and after[-2]["tool_calls"]
            assert after[-1]["role"] == "tool"
            assert after[-1]["tool_call_id"] == after[-2]["tool_calls"][0]["id"]
        else:
            _run(evaluator.solve(item, ctx, {}, model.complete))
            first = model.requests[0].messages
            assert first[0]["role"] == "system" and "Python 3 syntax" in first[0]["content"]
            after = model.requests[1].messages
            assert after[-2] == {"role": "assistant", "content": "[mkdir(dir_name='reports')]"}
            rows = ast.literal_eval(after[-1]["content"])
            assert rows == [
                {"role": "tool", "name": "mkdir(dir_name='reports')", "content": "None"}
            ]


def test_more_than_20_steps_in_a_turn_force_the_model_to_quit(real_wheel: Path) -> None:  # noqa: F811
    item = demo("multi_turn_base_demo_1")
    looping = [[[Call("ls", {})] for _ in range(30)]]
    model = ScriptedModel(looping)
    outcome = _run(
        bfcl.SUITE.evaluator.solve(item, ctx_for(item.split, "text"), {}, model.complete)
    )
    # 21 steps that called something: the 21st is over BFCL's limit of 20
    assert len(model.requests) == conversation.STEP_LIMIT + 1
    assert outcome.answer["force_quit"] and not outcome.answer["passed"]
    assert "forced to quit after 20 steps" in outcome.note


def _run(coroutine: Any) -> Outcome:
    import asyncio

    result: Outcome = asyncio.run(coroutine)
    return result


def test_a_call_the_worker_cannot_read_keeps_its_place_among_the_results(
    real_wheel: Path,  # noqa: F811
) -> None:
    item = demo("multi_turn_base_demo_1")
    # an argument that is bytes (decoded, as BFCL decodes it, but not a JSON value the worker
    # reads), then ls
    script = [[[Call("cat", {"file_name": b"a"}), Call("ls", {})], []], [[]]]
    model = ScriptedModel(script)
    _run(bfcl.SUITE.evaluator.solve(item, ctx_for(item.split, "text"), {}, model.complete))
    rows = ast.literal_eval(model.requests[1].messages[-1]["content"])
    assert [row["name"] for row in rows] == ["cat(file_name=b'a')", "ls()"]
    assert rows[0]["content"].startswith("Error") and "todo.txt" in rows[1]["content"]
