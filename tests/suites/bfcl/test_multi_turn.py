"""Multi-turn entries executed with BFCL's own classes from the pinned wheel. The entry below is
ours (test data written in BFCL's format); the states it expects were worked out by hand from
what each call does (mkdir adds an empty folder, mv moves a file into a folder, cd and sort
leave the file system as it is, add changes no state)."""

from __future__ import annotations

import json
import os
import resource
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from benchmarks.kit.protocol import Item
from benchmarks.suites.bfcl.importer import import_files
from benchmarks.suites.bfcl.multi_turn import (
    LoadError,
    MultiTurnEntry,
    WorkerLimits,
    WorkerSession,
    WorkerStopped,
    entry_of,
    functions_at,
    load_classes,
    run_entry,
    run_isolated,
)
from tests.suites.bfcl.real_wheel import real_wheel  # noqa: F401 - a fixture

ENTRY = MultiTurnEntry(
    id="multi_turn_base_9001",
    category="multi_turn_base",
    involved_classes=("GorillaFileSystem", "MathAPI"),
    initial_config={
        "GorillaFileSystem": {
            "root": {
                "alice": {
                    "type": "directory",
                    "contents": {
                        "notes.txt": {"type": "file", "content": "b\na"},
                        "old": {"type": "directory", "contents": {}},
                    },
                }
            }
        }
    },
    ground_truth=(
        ("mkdir(dir_name='reports')",),
        ("mv(source='notes.txt', destination='reports')",),
        ("cd(folder='reports')", "sort('notes.txt')"),
        (),
        ("add(a=2, b=3)",),
    ),
)
GOLD = [list(turn) for turn in ENTRY.ground_truth]

NOTES = {"name": "notes.txt", "content": "b\na"}
OLD = {"name": "old", "contents": {}}
# The file system's public state after each turn (Directory.parent is a link back up, left out).
AFTER = [
    {
        "name": "alice",
        "contents": {
            "notes.txt": NOTES,
            "old": OLD,
            "reports": {"name": "reports", "contents": {}},
        },
    },
    {
        "name": "alice",
        "contents": {"old": OLD, "reports": {"name": "reports", "contents": {"notes.txt": NOTES}}},
    },
]


@pytest.fixture(scope="module")
def classes(real_wheel: Path) -> dict[str, type]:  # noqa: F811
    return load_classes(real_wheel)


def turn(result: dict[str, Any], index: int) -> dict[str, Any]:
    return result["turns"][index]


def test_the_classes_load_from_the_wheel_alone(real_wheel: Path, classes: dict[str, type]) -> None:  # noqa: F811
    assert sorted(classes) == [
        "GorillaFileSystem",
        "MathAPI",
        "MessageAPI",
        "TicketAPI",
        "TradingBot",
        "TravelAPI",
        "TwitterAPI",
        "VehicleControlAPI",
    ]
    module = sys.modules[classes["GorillaFileSystem"].__module__]
    assert str(real_wheel.resolve()) in str(module.__file__)
    # bfcl_eval's own package modules never ran: they are stand-ins without a file
    assert getattr(sys.modules["bfcl_eval"], "__file__", None) is None
    assert "bfcl_eval.eval_checker.eval_runner" not in sys.modules
    assert "bfcl_eval.utils" not in sys.modules


def test_the_ground_truth_replayed_passes_every_turn(classes: dict[str, type]) -> None:
    result = run_entry(classes, ENTRY, GOLD)
    assert result["passed"] is True and result["turn_accuracy"] == 1.0
    assert [t["kind"] for t in result["turns"]] == [
        "passed",
        "passed",
        "passed",
        "no_gold_calls",
        "passed",
    ]
    gold_turns = result["gold"]["turns"]
    assert [gold_turns[i]["after"]["GorillaFileSystem"]["root"] for i in (0, 1)] == AFTER
    assert gold_turns[0]["after"]["GorillaFileSystem"]["long_context"] is False
    assert gold_turns[0]["after"]["MathAPI"] == {}
    # results as BFCL writes them: None as "None", a dict as json.dumps
    observations = [[c["observation"] for c in t["calls"]] for t in gold_turns]
    assert observations[0] == ["None"]
    assert observations[1] == ["{\"result\": \"'notes.txt' moved to 'reports/notes.txt'\"}"]
    assert observations[2][1] == '{"sorted_content": "a\\nb"}'
    assert observations[4] == ['{"result": 5}']
    # the positional argument was bound to its parameter
    assert gold_turns[2]["calls"][1]["arguments"] == {"file_name": "notes.txt"}
    assert all(t["state_diff"] == [] and t["bfcl_equal"] is True for t in result["turns"][:3])


def test_one_wrong_call_fails_its_turn_naming_the_attribute(classes: dict[str, type]) -> None:
    model = [list(t) for t in GOLD]
    model[1] = ["mv(source='notes.txt', destination='old')"]
    result = run_entry(classes, ENTRY, model)
    assert result["passed"] is False
    first, second = turn(result, 0), turn(result, 1)
    assert first["passed"] is True
    assert second["passed"] is False and second["kind"] == "state"
    assert "GorillaFileSystem.root" in second["reason"]
    # the stored diff names the two files that differ, not the whole tree
    file = {"name": "notes.txt", "content": "b\na"}
    assert second["state_diff"] == [
        {
            "instance": "GorillaFileSystem",
            "attribute": "root",
            "path": ["contents", "old", "contents", "notes.txt"],
            "model": file,
            "gold": None,
            "absent": "gold",
        },
        {
            "instance": "GorillaFileSystem",
            "attribute": "root",
            "path": ["contents", "reports", "contents", "notes.txt"],
            "model": None,
            "gold": file,
            "absent": "model",
        },
    ]
    assert second["state_diff_omitted"] == 0
    assert second["bfcl_equal"] is False
    assert result["reason"].startswith("turn 1:")
    # per-turn credit: the first turn and the no-call turn; the later ones see the moved file
    assert [t["passed"] for t in result["turns"]] == [True, False, False, True, False]
    assert result["turn_accuracy"] == pytest.approx(2 / 5)


def test_a_result_the_model_never_got_fails_the_turn(classes: dict[str, type]) -> None:
    model = [list(t) for t in GOLD]
    model[4] = ["add(a=2.0, b=3.0)"]  # the same state, but the result is {"result": 5.0}
    result = run_entry(classes, ENTRY, model)
    last = turn(result, 4)
    assert last["passed"] is False and last["kind"] == "results"
    assert last["missing"] == ['{"result": 5}']
    assert result["turn_accuracy"] == pytest.approx(4 / 5)


def test_keywords_for_positionals_and_another_order_still_pass(classes: dict[str, type]) -> None:
    model = [list(t) for t in GOLD]
    model[2] = [["cd(folder='reports')"], ["sort(file_name='notes.txt')"]]  # two steps
    model[4] = [{"name": "add", "arguments": {"b": 2, "a": 3}}]
    assert run_entry(classes, ENTRY, model)["passed"] is True


def test_silence_where_the_gold_calls_and_missing_turns_fail(classes: dict[str, type]) -> None:
    model = [list(t) for t in GOLD]
    model[0] = []
    result = run_entry(classes, ENTRY, model)
    assert turn(result, 0)["kind"] == "no_calls" and result["passed"] is False
    short = run_entry(classes, ENTRY, GOLD[:3])
    assert short["force_terminated"] is True and short["passed"] is False
    assert [t["passed"] for t in short["turns"]] == [True, True, True, True, False]


def test_calls_that_are_not_literal_are_refused_not_run(classes: dict[str, type]) -> None:
    model = [list(t) for t in GOLD]
    model[0] = ["mkdir(dir_name='reports')", "mkdir(dir_name=__import__('os').getcwd())"]
    result = run_entry(classes, ENTRY, model)
    refused = turn(result, 0)["refused"]
    assert len(refused) == 1 and "not a literal" in refused[0]["why"]
    assert result["passed"] is True


def test_a_worker_gives_the_same_verdicts(real_wheel: Path, classes: dict[str, type]) -> None:  # noqa: F811
    model = [list(t) for t in GOLD]
    model[1] = ["mv(source='notes.txt', destination='old')"]
    isolated = run_isolated(real_wheel, ENTRY, model)
    here = json.loads(json.dumps(run_entry(classes, ENTRY, model)))
    assert isolated == here


LOOP_API = '''
"""Test data: a class that never returns, for the worker's limits."""


class LoopAPI:
    def __init__(self):
        self.count = 0

    def _load_scenario(self, scenario, long_context=False):
        self.count = scenario.get("count", 0)

    def spin(self):
        while True:
            self.count += 1

    def hog(self):
        self.hoard = bytearray(8 << 30)
        return "held"
'''


def loop_package(root: Path) -> Path:
    package = root / "bfcl_eval" / "eval_checker" / "multi_turn_eval" / "func_source_code"
    package.mkdir(parents=True)
    (package / "loop_api.py").write_text(textwrap.dedent(LOOP_API), "utf-8")
    return root


def loop_entry(call: str) -> MultiTurnEntry:
    return MultiTurnEntry(
        id="multi_turn_base_9002",
        category="multi_turn_base",
        involved_classes=("LoopAPI",),
        initial_config={"LoopAPI": {"count": 1}},
        ground_truth=((call,),),
    )


def test_a_runaway_call_is_stopped(tmp_path: Path) -> None:
    source = loop_package(tmp_path)
    result = run_isolated(
        source,
        loop_entry("spin()"),
        [["spin()"]],
        WorkerLimits(seconds=1, memory_bytes=1 << 30),
        modules={"LoopAPI": "loop_api"},
    )
    assert result["passed"] is False and result["worker_failed"] is True
    assert "CPU time" in result["reason"]


def test_a_call_over_the_memory_limit_fails_without_stopping_the_entry(tmp_path: Path) -> None:
    source = loop_package(tmp_path)
    result = run_isolated(
        source,
        loop_entry("hog()"),
        [["hog()"]],
        WorkerLimits(seconds=20, memory_bytes=1 << 30),
        modules={"LoopAPI": "loop_api"},
    )
    calls = result["model"]["turns"][0]["calls"]
    assert calls[0]["observation"].startswith("Error during execution")
    assert "worker_failed" not in result


def test_an_unknown_source_is_named(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="no bfcl_eval"):
        load_classes(tmp_path)


def test_every_real_entry_replayed_passes(real_wheel: Path, classes: dict[str, type]) -> None:  # noqa: F811
    bundle = import_files([real_wheel])
    replayed = compared = 0
    for sample in bundle.samples:
        if sample.metadata["family"] != "multi_turn":
            continue
        item = Item(
            split=sample.split,
            external_id=sample.external_id,
            input=sample.input,
            reference=sample.reference,
            metadata=sample.metadata,
        )
        entry = entry_of(item)
        result = run_entry(classes, entry, [list(t) for t in entry.ground_truth])
        assert result["passed"], (sample.external_id, result["reason"])
        assert all(t["bfcl_equal"] in (True, None) for t in result["turns"])
        replayed += 1
        # One call left out: wherever the state is compared, the snapshots' verdict is BFCL's
        # (== on the live instances).
        model = [list(t) for t in entry.ground_truth]
        first = next(i for i, t in enumerate(model) if t)
        model[first] = model[first][:-1] or ["pwd()"]
        for verdict in run_entry(classes, entry, model)["turns"]:
            if verdict["kind"] in ("passed", "state", "results"):
                assert (verdict["kind"] == "state") == (verdict["bfcl_equal"] is False), (
                    sample.external_id,
                    verdict["turn"],
                )
                compared += 1
    assert replayed == 800 and compared > 800
    base = next(s for s in bundle.samples if s.external_id == "multi_turn_base_0")
    entry = entry_of(
        Item(
            split=base.split,
            external_id="multi_turn_base_0",
            input={},
            reference=base.reference,
            metadata=base.metadata,
        )
    )
    assert run_isolated(real_wheel, entry, [list(t) for t in entry.ground_truth])["passed"] is True


def test_an_interactive_worker_answers_each_step_and_scores(
    real_wheel: Path,  # noqa: F811
    classes: dict[str, type],
) -> None:
    with WorkerSession(real_wheel, ENTRY) as session:
        seen = []
        for calls in GOLD:
            session.begin_turn()
            if calls:
                seen.append(session.call(calls))
            session.end_turn()
        result = session.score()
    assert result["passed"] is True
    assert seen[1] == ["{\"result\": \"'notes.txt' moved to 'reports/notes.txt'\"}"]
    assert seen[3] == ['{"result": 5}']
    with WorkerSession(real_wheel, ENTRY) as session:
        session.begin_turn()
        assert session.call(["mkdir(dir_name=open('x'))"])[0].startswith("Error: ")


def test_a_worker_answers_when_this_process_has_over_1024_files_open(
    real_wheel: Path,  # noqa: F811
) -> None:
    # select() cannot watch a descriptor numbered 1024 or more: a long-lived process (a test
    # session, a worker) with many files open met "filedescriptor out of range in select()".
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"this process may open only {hard} files")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        with WorkerSession(real_wheel, ENTRY) as session:
            assert session._process.stdout is not None
            assert session._process.stdout.fileno() >= 1024
            session.begin_turn()
            assert session.call(list(GOLD[0])) == ["None"]
            session.end_turn()
    finally:
        for descriptor in held:
            os.close(descriptor)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_an_interactive_runaway_is_stopped(tmp_path: Path) -> None:
    source = loop_package(tmp_path)
    limits = WorkerLimits(seconds=1, memory_bytes=1 << 30)
    entry = loop_entry("spin()")
    with WorkerSession(source, entry, limits, modules={"LoopAPI": "loop_api"}) as session:
        session.begin_turn()
        with pytest.raises(WorkerStopped, match="CPU time"):
            session.call(["spin()"])
        result = session.score()
    assert result["passed"] is False and "CPU time" in result["reason"]


def test_held_out_functions_are_offered_from_their_turn_on() -> None:
    a, b, c, d = ({"name": n} for n in "abcd")
    sample_input = {"functions": [a, b], "missed_functions": {"3": [d], "1": [c]}}
    assert functions_at(sample_input, 0) == [a, b]
    assert functions_at(sample_input, 1) == [a, b, c]
    assert functions_at(sample_input, 2) == [a, b, c]
    assert functions_at(sample_input, 5) == [a, b, c, d]
    assert functions_at({"functions": [a]}, 4) == [a]
