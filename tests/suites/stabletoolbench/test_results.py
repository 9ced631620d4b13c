"""StableToolBench's published pass-rate results read as labels and answers (results.py). Pure.

The published example (seeddata, StableToolBench @aa4ed9f data_example/) judges three
G1_instruction queries three times for two methods; the expectations are read off its files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.kit.base import ImportFormatError
from benchmarks.suites import stabletoolbench
from benchmarks.suites.stabletoolbench.results import (
    answer_from_steps,
    pass_results_group,
    read_pass_results,
)


def example(seeddata: Path) -> Path:
    return seeddata / "stabletoolbench" / "data_example"


def results_file(seeddata: Path, method: str) -> Path:
    return example(seeddata) / "pass_rate_results" / method / f"G1_instruction_{method}.json"


def tool_messages(record: dict[str, Any]) -> list[Any]:
    nodes, chain = [], record["answer_details"]
    while chain:
        nodes.append(chain[0])
        chain = chain[0]["next"]
    return [n["message"] for n in nodes if n["role"] == "tool"]


def test_the_published_example_labels_and_answers(seeddata: Path) -> None:
    results = read_pass_results(results_file(seeddata, "virtual_chatgpt_cot"))
    assert [(r.split, r.external_id) for r in results] == [
        ("G1_instruction", "588"),
        ("G1_instruction", "1073"),
        ("G1_instruction", "608"),
    ]
    # is_solved is written {"2": ..., "1": ..., "0": ...}: read by round number.
    assert [r.labels for r in results] == [
        {0: "Unsolved", 1: "Unsolved", 2: "Unsolved"},
        {0: "Solved", 1: "Solved", 2: "Solved"},
        {0: "Solved", 1: "Solved", 2: "Solved"},
    ]
    assert results[0].published[0] == "AnswerStatus.Unsolved"
    assert results[0].query.startswith("I'm a football enthusiast")
    # The answers rebuilt from the steps call what the converted answers call, in order.
    converted = json.loads(
        (
            example(seeddata)
            / "model_predictions_converted/virtual_chatgpt_cot/G1_instruction.json"
        ).read_text("utf-8")
    )
    for result in results:
        rebuilt = json.loads(result.output)
        published = converted[result.external_id]["answer"]
        assert tool_messages(rebuilt) == tool_messages(published)
        assert rebuilt["final_answer"] == published["final_answer"]
        assert rebuilt["method"] == "virtual_chatgpt_cot"
    # 588 ends without Finish: Unsolved without a judge, as the reference's precheck has it.
    messi = json.loads(results[0].output)
    assert messi["final_answer"] == "" and messi["total_steps"] == 8
    assert stabletoolbench.no_answer_reason(messi) == "no Finish call at the end of the answer"
    assert stabletoolbench.no_answer_reason(json.loads(results[1].output)) is None


def test_the_dfs_example_is_solved_throughout(seeddata: Path) -> None:
    results = read_pass_results(results_file(seeddata, "virtual_chatgpt_dfs"))
    assert [r.external_id for r in results] == ["1073", "608", "588"]
    assert all(set(r.labels.values()) == {"Solved"} for r in results)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("cot/G1_instruction_cot.json", ("G1_instruction", "cot")),
        ("m/G9_custom_m.json", ("G9_custom", "m")),  # any group inside its method's folder
        ("elsewhere/G2_category_toolllama_dfs.json", ("G2_category", "toolllama_dfs")),
    ],
)
def test_group_and_method_come_from_the_path(path: str, expected: tuple[str, str]) -> None:
    assert pass_results_group(Path(path)) == expected


@pytest.mark.parametrize(
    ("path", "fragment"),
    [
        ("m/G1_instruction_m.csv", "the .json beside this tab-separated copy"),
        ("m/results.json", "<group>_<method>.json"),
        ("m/G1_instruction.json", "<group>_<method>.json"),
    ],
)
def test_other_names_are_refused(path: str, fragment: str) -> None:
    with pytest.raises(ImportFormatError, match="is not") as exc:
        pass_results_group(Path(path))
    assert fragment in exc.value.message


def steps(*calls: dict[str, Any]) -> str:
    # The published steps: Python reprs of the tool messages, one "Step N: " line each.
    return "\n".join(f"Step {n}: {call!r}" for n, call in enumerate(calls, start=1))


FINISH = {
    "name": "Finish",
    "arguments": '{\n  "return_type": "give_answer",\n  "final_answer": "Two kettles."\n}',
    "response": "",
}
CALL = {"name": "count_for_kettles", "arguments": '{\n  "q": "all"\n}', "response": '{"n": 2}'}


def test_answers_rebuilt_from_steps() -> None:
    record = answer_from_steps(steps(CALL, FINISH), f"Final step: {FINISH!r}", "m")
    assert tool_messages(record) == [CALL, FINISH]
    assert record["final_answer"] == FINISH["arguments"] and record["total_steps"] == 4
    # No steps but a final one; a step that is no literal is kept as its text.
    alone = answer_from_steps("", f"Final step: {FINISH!r}")
    assert tool_messages(alone) == [FINISH]
    odd = answer_from_steps("Step 1: {'name': 'count_for_kettles', 'arguments': oops}", "")
    assert tool_messages(odd) == ["{'name': 'count_for_kettles', 'arguments': oops}"]
    assert stabletoolbench.last_tool_name(odd) == "count_for_kettles"
    empty = answer_from_steps("", "")
    assert tool_messages(empty) == [] and empty["final_answer"] == ""


def write(tmp_path: Path, records: Any, name: str = "m/G1_tool_m.json") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records, indent=1), encoding="utf-8")
    return path


def record(**changes: Any) -> dict[str, Any]:
    base = {
        "query": "How many kettles?",
        "tool_names": ["count_for_kettles", "Finish"],
        "answer_steps": steps(CALL, FINISH),
        "final_step": f"Final step: {FINISH!r}",
        "is_solved": {"0": "AnswerStatus.Solved", "1": "AnswerStatus.Unsure"},
    }
    base.update(changes)
    return {k: v for k, v in base.items() if v is not None}


@pytest.mark.parametrize(
    ("changes", "field", "fragment"),
    [
        ({"is_solved": None}, "is_solved", "expected an object of labels by round"),
        ({"is_solved": {}}, "is_solved", "got an empty object"),
        ({"is_solved": {"first": "AnswerStatus.Solved"}}, "is_solved.first", "round number"),
        ({"is_solved": {"0": "AnswerStatus.Maybe"}}, "is_solved.0", "not a pass label"),
        ({"is_solved": {"0": True}}, "is_solved.0", "expected a label, got a boolean"),
        ({"query": None}, "query", "missing"),
        ({"answer_steps": ["Step 1"]}, "answer_steps", "expected text, got a list"),
    ],
)
def test_bad_records_name_the_query_and_field(
    tmp_path: Path, changes: dict[str, Any], field: str, fragment: str
) -> None:
    path = write(tmp_path, {"7": record(), "8": record(**changes)})
    with pytest.raises(ImportFormatError) as exc:
        read_pass_results(path)
    assert (exc.value.file, exc.value.record, exc.value.field) == (str(path), "8", field)
    assert fragment in exc.value.message


def test_a_query_judged_in_other_rounds_is_refused(tmp_path: Path) -> None:
    late = record(is_solved={"0": "AnswerStatus.Solved"})
    path = write(tmp_path, {"7": record(), "8": late})
    with pytest.raises(ImportFormatError, match=r"rounds \[0\], query 7 for rounds \[0, 1\]"):
        read_pass_results(path)


def test_files_that_hold_no_results(tmp_path: Path) -> None:
    with pytest.raises(ImportFormatError, match="holds no query"):
        read_pass_results(write(tmp_path, {}))
    with pytest.raises(ImportFormatError, match="expected an object keyed by query id"):
        read_pass_results(write(tmp_path, [record()]))
    with pytest.raises(ImportFormatError, match=r"expected an object \{query"):
        read_pass_results(write(tmp_path, {"7": "Solved"}))


def test_the_reason_of_later_versions_is_the_reasoning(tmp_path: Path) -> None:
    path = write(tmp_path, {"7": record(reason="Is solved: it counts them", passed=2, failed=0)})
    (result,) = read_pass_results(path)
    assert result.verdict(1).values == {"label": "Unsure"}
    assert result.verdict(0).reasoning == "Is solved: it counts them"
