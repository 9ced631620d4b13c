"""BFCL's importer on entries written for these tests in BFCL v4's format (test data, not BFCL's:
the names and values are ours), read as a data folder, as a wheel and as single files; and on
the real wheel, whose counts per category are the issue's."""

from __future__ import annotations

import json
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from benchmarks.kit.base import ImportFormatError, validate_bundle
from benchmarks.suites.bfcl.importer import import_files
from benchmarks.suites.bfcl.multi_turn import functions_at
from tests.suites.bfcl.real_wheel import real_wheel  # noqa: F401 - a fixture

DOC = {
    "name": "area",
    "description": "Area of a rectangle (test data).",
    "parameters": {
        "type": "dict",
        "properties": {"width": {"type": "float"}, "height": {"type": "integer"}},
        "required": ["width"],
    },
}
CD_DOC = {"name": "cd", "description": "test doc", "parameters": {"type": "dict", "properties": {}}}
LS_DOC = {"name": "ls", "description": "test doc", "parameters": {"type": "dict", "properties": {}}}


def lines(*records: dict[str, Any]) -> str:
    return "\n".join(json.dumps(r) for r in records)


def question(text: str) -> list[list[dict[str, str]]]:
    return [[{"role": "user", "content": text}]]


def write_data(folder: Path) -> Path:
    """A data folder of our own in BFCL v4's layout (test data)."""
    data = folder / "bfcl_eval" / "data"
    (data / "possible_answer").mkdir(parents=True)
    (data / "multi_turn_func_doc").mkdir()
    files = {
        "BFCL_v4_simple_python.json": lines(
            {"id": "simple_python_0", "question": question("Area of 2 by 3?"), "function": [DOC]},
            {"id": "simple_python_1", "question": question("Area of 4?"), "function": [DOC]},
        ),
        "possible_answer/BFCL_v4_simple_python.json": lines(
            {"id": "simple_python_0", "ground_truth": [{"area": {"width": [2.0], "height": [3]}}]},
            {"id": "simple_python_1", "ground_truth": [{"area": {"width": [4.0], "height": [""]}}]},
        ),
        "BFCL_v4_irrelevance.json": lines(
            {"id": "irrelevance_0", "question": question("Who wrote Hamlet?"), "function": [DOC]}
        ),
        "BFCL_v4_multi_turn_miss_func.json": lines(
            {
                "id": "multi_turn_miss_func_0",
                "question": [*question("Go to docs."), [], *question("List it.")],
                "initial_config": {"GorillaFileSystem": {"root": {}}},
                "path": ["GorillaFileSystem.cd", "GorillaFileSystem.ls"],
                "involved_classes": ["GorillaFileSystem"],
                "missed_function": {"1": ["ls"]},
            }
        ),
        "possible_answer/BFCL_v4_multi_turn_miss_func.json": lines(
            {"id": "multi_turn_miss_func_0", "ground_truth": [["cd(folder='docs')"], [], ["ls()"]]}
        ),
        "multi_turn_func_doc/gorilla_file_system.json": lines(CD_DOC, LS_DOC),
        "README.md": "**_Latest Version Release Date_**: 01/02/2026\n",
    }
    for name, text in files.items():
        (data / name).write_text(text, "utf-8")
    return data


def as_wheel(data: Path, target: Path) -> Path:
    """The folder as a bfcl-eval wheel would hold it (a zip with bfcl_eval/data/ and METADATA)."""
    wheel = target / "bfcl_eval-9.9.9-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path in sorted(data.rglob("*")):
            if path.is_file():
                archive.write(path, f"bfcl_eval/data/{path.relative_to(data).as_posix()}")
        archive.writestr("bfcl_eval-9.9.9.dist-info/METADATA", "Name: bfcl_eval\nVersion: 9.9.9\n")
    return wheel


def by_id(bundle: Any) -> dict[str, Any]:
    return {s.external_id: s for s in bundle.samples}


def test_a_data_folder_gives_each_entry_as_a_sample(tmp_path: Path) -> None:
    data = write_data(tmp_path)
    bundle = import_files([data])
    validate_bundle(bundle)
    samples = by_id(bundle)
    assert sorted(samples) == [
        "irrelevance_0",
        "multi_turn_miss_func_0",
        "simple_python_0",
        "simple_python_1",
    ]
    simple = samples["simple_python_0"]
    assert simple.split == "simple_python" and simple.kind == "query"
    assert simple.input["question"] == question("Area of 2 by 3?")
    assert simple.input["functions"] == [DOC] and simple.candidate_tools == ["area"]
    assert simple.reference == [{"area": {"width": [2.0], "height": [3]}}]
    assert simple.metadata["family"] == "non_live" and simple.metadata["language"] == "python"
    irrelevance = samples["irrelevance_0"].reference
    assert irrelevance["answer"] is None and irrelevance["expected"] == "no_call"
    multi = samples["multi_turn_miss_func_0"]
    assert multi.kind == "dialogue" and multi.metadata["family"] == "multi_turn"
    # the held-out doc leaves the offer and waits for its turn
    assert multi.input["functions"] == [CD_DOC]
    assert multi.input["missed_functions"] == {"1": [LS_DOC]}
    assert multi.reference == [["cd(folder='docs')"], [], ["ls()"]]
    assert multi.metadata["initial_config"] == {"GorillaFileSystem": {"root": {}}}
    assert multi.metadata["involved_classes"] == ["GorillaFileSystem"]
    assert [t.name for t in bundle.tools] == ["cd", "ls"]
    # the version from the README when no package metadata is there; every file's sha256
    provenance = multi.metadata["provenance"]
    assert provenance["bfcl_version"] == "data released 01/02/2026"
    assert set(provenance["files"]) == {
        "BFCL_v4_multi_turn_miss_func.json",
        "possible_answer/BFCL_v4_multi_turn_miss_func.json",
        "multi_turn_func_doc/gorilla_file_system.json",
    }
    import hashlib

    expected = hashlib.sha256((data / "BFCL_v4_multi_turn_miss_func.json").read_bytes()).hexdigest()
    assert provenance["files"]["BFCL_v4_multi_turn_miss_func.json"] == expected


def test_a_wheel_and_single_files_read_as_the_folder(tmp_path: Path) -> None:
    data = write_data(tmp_path / "repo")
    folder = by_id(import_files([data]))
    wheel = by_id(import_files([as_wheel(data, tmp_path)]))
    assert wheel.keys() == folder.keys()
    for key, sample in folder.items():
        other = wheel[key]
        assert (other.input, other.reference, other.split) == (
            sample.input,
            sample.reference,
            sample.split,
        )
        assert other.metadata["provenance"]["files"] == sample.metadata["provenance"]["files"]
        assert other.metadata["provenance"]["bfcl_version"] == "9.9.9"
    # one category file alone takes its answers and docs from beside it
    single = by_id(import_files([data / "BFCL_v4_multi_turn_miss_func.json"]))
    assert list(single) == ["multi_turn_miss_func_0"]
    assert single["multi_turn_miss_func_0"].input == folder["multi_turn_miss_func_0"].input


def _break(data: Path, name: str, old: str, new: str) -> None:
    path = data / name
    text = path.read_text("utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), "utf-8")


@pytest.mark.parametrize(
    ("name", "old", "new", "file", "line", "words"),
    [
        (
            "BFCL_v4_simple_python.json",
            '"id": "simple_python_1", "question"',
            '"id": "simple_python_1" "question"',
            "BFCL_v4_simple_python.json",
            2,
            "not valid JSON",
        ),
        (
            "BFCL_v4_simple_python.json",
            '"id": "simple_python_1"',
            '"id": "simple_python_0"',
            "BFCL_v4_simple_python.json",
            2,
            "duplicate id",
        ),
        (
            "possible_answer/BFCL_v4_simple_python.json",
            '"id": "simple_python_1"',
            '"id": "simple_python_7"',
            "possible_answer/BFCL_v4_simple_python.json",
            2,
            "does not have",
        ),
        (
            "possible_answer/BFCL_v4_simple_python.json",
            '"width": [4.0]',
            '"width": 4.0',
            "possible_answer/BFCL_v4_simple_python.json",
            2,
            "list of acceptable values",
        ),
        (
            "possible_answer/BFCL_v4_multi_turn_miss_func.json",
            "ls()",
            "ls(x=open('a'))",
            "possible_answer/BFCL_v4_multi_turn_miss_func.json",
            1,
            "literal",
        ),
        (
            "BFCL_v4_multi_turn_miss_func.json",
            '"missed_function": {"1": ["ls"]}',
            '"missed_function": {"1": ["rmdir"]}',
            "BFCL_v4_multi_turn_miss_func.json",
            1,
            "no involved class documents",
        ),
        (
            "BFCL_v4_multi_turn_miss_func.json",
            '"involved_classes": ["GorillaFileSystem"]',
            '"involved_classes": ["NoSuchAPI"]',
            "BFCL_v4_multi_turn_miss_func.json",
            1,
            "unknown involved class",
        ),
    ],
)
def test_bad_input_names_the_file_and_line(
    tmp_path: Path, name: str, old: str, new: str, file: str, line: int, words: str
) -> None:
    data = write_data(tmp_path)
    _break(data, name, old, new)
    for given in (data, as_wheel(data, tmp_path)):
        with pytest.raises(ImportFormatError) as caught:
            import_files([given])
        assert caught.value.file is not None and caught.value.file.endswith(file)
        assert caught.value.line == line
        assert words in str(caught.value)


def test_missing_answers_and_non_entry_files_are_refused(tmp_path: Path) -> None:
    data = write_data(tmp_path)
    (data / "possible_answer" / "BFCL_v4_simple_python.json").unlink()
    with pytest.raises(ImportFormatError, match=r"possible_answer/BFCL_v4_simple_python\.json"):
        import_files([data])
    selection = data / "BFCL_v4_format_sensitivity.json"
    selection.write_text('{"simple_python": ["simple_python_0"]}', "utf-8")
    with pytest.raises(ImportFormatError, match="not entries"):
        import_files([selection])
    with pytest.raises(ImportFormatError, match="not a BFCL v4 category"):
        import_files([tmp_path / "bfcl_eval" / "data" / "README.md"])


EXPECTED = {
    "simple_python": 400,
    "simple_java": 100,
    "simple_javascript": 50,
    "multiple": 200,
    "parallel": 200,
    "parallel_multiple": 200,
    "irrelevance": 240,
    "live_simple": 258,
    "live_multiple": 1053,
    "live_parallel": 16,
    "live_parallel_multiple": 24,
    "live_irrelevance": 884,
    "live_relevance": 16,
    "multi_turn_base": 200,
    "multi_turn_miss_func": 200,
    "multi_turn_miss_param": 200,
    "multi_turn_long_context": 200,
    "web_search": 100,
    "memory": 155,
}


def test_the_real_wheel_imports_every_category(real_wheel: Path) -> None:  # noqa: F811
    bundle = import_files([real_wheel])
    validate_bundle(bundle)
    assert Counter(s.split for s in bundle.samples) == EXPECTED
    samples = by_id(bundle)
    assert samples["simple_python_0"].reference[0]["calculate_triangle_area"]["base"] == [10]
    assert samples["multi_turn_base_0"].reference[0][0] == "cd(folder='document')"
    assert samples["multi_turn_base_0"].metadata["provenance"]["bfcl_version"] == "2026.3.23"
    assert samples["web_search_0"].metadata["needs_backend"] == "web_search"
    memory = samples["memory_0-customer-0"]
    assert memory.metadata["needs_backend"] == "memory"
    assert set(memory.input["functions_by_backend"]) == {"kv", "vector", "rec_sum"}
    assert memory.input["prereq_conversation"][0]["id"].startswith("memory_prereq_")
    assert samples["live_relevance_0-0-0"].reference["expected"] == "call"
    # multi_turn_miss_func_0 holds sort out until turn 3
    held = samples["multi_turn_miss_func_0"].input
    assert "sort" not in [doc["name"] for doc in functions_at(held, 2)]
    assert "sort" in [doc["name"] for doc in functions_at(held, 3)]


def test_a_file_given_replaces_the_one_beside(tmp_path: Path) -> None:
    data = write_data(tmp_path / "repo")
    elsewhere = tmp_path / "fixed" / "possible_answer"
    elsewhere.mkdir(parents=True)
    fixed = elsewhere / "BFCL_v4_simple_python.json"
    fixed.write_text(
        lines(
            {"id": "simple_python_0", "ground_truth": [{"area": {"width": [2.5], "height": [3]}}]},
            {"id": "simple_python_1", "ground_truth": [{"area": {"width": [4.0], "height": [""]}}]},
        ),
        "utf-8",
    )
    for paths in (
        [data / "BFCL_v4_simple_python.json", fixed],
        [fixed, data / "BFCL_v4_simple_python.json"],
    ):
        samples = by_id(import_files(paths))
        assert samples["simple_python_0"].reference == [{"area": {"width": [2.5], "height": [3]}}]
