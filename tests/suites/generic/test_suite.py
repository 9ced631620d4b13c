"""Generic JSON Lines import: a researcher's own questions and dialogues, checked line by line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.kit.base import ImportFormatError, merge_tools, validate_bundle
from benchmarks.models import Benchmark, Sample, Tool
from benchmarks.services import benchmark_import
from benchmarks.suites import generic

DEMO = Path(__file__).resolve().parents[3] / "benchmarks" / "demo" / "generic"

WEATHER = {
    "name": "get_weather",
    "description": "Forecast for a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}
GOOD = {
    "id": "q1",
    "query": "Will it rain in Ghent?",
    "tools": [WEATHER],
    "tool_calls": [{"name": "get_weather", "arguments": {"city": "Ghent"}}],
}


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), "utf-8")
    return path


def test_questions_and_dialogues(tmp_path: Path) -> None:
    dialogue = {
        "id": 7,
        "split": "chat",
        "turns": [
            {"role": "user", "content": "Rain in Ghent?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"name": "get_weather", "arguments": '{"city": "Ghent"}'}],
            },
            {"role": "tool", "name": "get_weather", "content": "showers"},
        ],
        "tools": [{"type": "function", "function": WEATHER}],
        "answer": "Yes, showers.",
        "metadata": {"author": "me"},
    }
    no_tools = {"id": "q2", "query": "Capital of Peru?", "answer": "Lima"}
    path = write_jsonl(tmp_path / "mine.jsonl", [GOOD, dialogue, no_tools])
    calls: list[int] = []
    bundle = generic.import_files([path], progress=calls.append)
    validate_bundle(bundle)
    assert sum(calls) == 3
    first, second, third = bundle.samples
    assert (first.split, first.external_id, first.kind) == ("default", "q1", "query")
    assert first.input == {"query": "Will it rain in Ghent?"}
    assert first.reference == {
        "tool_calls": [{"name": "get_weather", "arguments": {"city": "Ghent"}}]
    }
    assert first.candidate_tools == ["get_weather"]
    assert first.source == f"{path}, line 1"
    assert (second.split, second.external_id, second.kind) == ("chat", "7", "dialogue")
    assert second.input["turns"][1] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"name": "get_weather", "arguments": {"city": "Ghent"}}],
    }
    assert second.input["turns"][2] == {"role": "tool", "content": "showers", "name": "get_weather"}
    assert second.reference == {"answer": "Yes, showers."}
    assert second.metadata == {"author": "me"}
    assert third.reference == {"answer": "Lima"}
    assert third.candidate_tools == []
    tools = merge_tools(bundle.tools)
    assert [(t.name, t.description, t.parameters) for t in tools] == [
        ("get_weather", "Forecast for a city.", WEATHER["parameters"]),
    ]
    assert bundle.tools[1].raw == {"type": "function", "function": WEATHER}


def test_a_tool_without_parameters_gets_an_empty_object_schema(tmp_path: Path) -> None:
    line = {"id": 1, "query": "Time?", "tools": [{"name": "now"}]}
    path = write_jsonl(tmp_path / "q.jsonl", [line])
    tool = generic.import_files([path]).tools[0]
    assert (tool.name, tool.description, tool.parameters) == (
        "now",
        "",
        {"type": "object", "properties": {}},
    )
    assert generic.import_files([path]).samples[0].reference is None


@pytest.mark.parametrize(
    ("change", "field", "fragment"),
    [
        ({"id": None}, "id", "missing"),
        ({"id": ["q"]}, "id", "expected a string or a number"),
        ({"query": None}, None, "give exactly one of query"),
        ({"turns": [{"role": "user", "content": "hi"}]}, "query", "give exactly one of query"),
        ({"query": "  "}, "query", "is empty"),
        ({"qurey": "typo"}, None, "unknown key(s) qurey"),
        ({"split": 3}, "split", "expected a string"),
        ({"tools": {"name": "x"}}, "tools", "expected a list of tools"),
        ({"tools": [{"description": "no name"}]}, "tools[0].name", "expected a tool name"),
        ({"tools": [WEATHER | {"params": {}}]}, "tools[0]", "unknown key(s) params"),
        (
            {"tools": [WEATHER | {"parameters": {"type": "array"}}]},
            "tools[0].parameters.type",
            '"type": "object"',
        ),
        (
            {"tools": [WEATHER | {"parameters": {"properties": {}, "required": ["city"]}}]},
            "tools[0].parameters.required",
            "city that are not in properties",
        ),
        ({"tools": [WEATHER, WEATHER]}, "tools", "offers a tool name twice"),
        (
            {"tool_calls": [{"name": "get_time", "arguments": {}}]},
            "tool_calls[0].name",
            "not among this sample's tools (get_weather)",
        ),
        (
            {"tool_calls": [{"name": "get_weather", "arguments": [1]}]},
            "tool_calls[0].arguments",
            "expected an object",
        ),
        (
            {"tool_calls": [{"name": "get_weather", "arguments": "{oops"}]},
            "tool_calls[0].arguments",
            "not JSON",
        ),
        ({"tool_calls": {"name": "get_weather"}}, "tool_calls", "expected a list of calls"),
        ({"metadata": "note"}, "metadata", "expected an object"),
    ],
)
def test_bad_questions_name_file_line_and_field(
    tmp_path: Path, change: dict, field: str | None, fragment: str
) -> None:
    path = write_jsonl(tmp_path / "q.jsonl", [GOOD | {"id": "ok"}, GOOD | change])
    with pytest.raises(ImportFormatError) as err:
        generic.import_files([path])
    assert (err.value.file, err.value.line, err.value.field) == (str(path), 2, field)
    assert fragment in str(err.value)


@pytest.mark.parametrize(
    ("turns", "field", "fragment"),
    [
        ([], "turns", "non-empty list of turns"),
        ([{"role": "system", "content": "be nice"}], "turns[0].role", "must be one of user"),
        ([{"role": "user", "content": 5}], "turns[0].content", "expected a string"),
        ([{"role": "user", "content": ""}], "turns[0].content", "is empty"),
        (
            [{"role": "user", "content": "x", "tool_calls": []}],
            "turns[0].tool_calls",
            "only assistant turns",
        ),
        ([{"role": "user", "content": "x", "name": "t"}], "turns[0].name", "tool turns only"),
        ([{"role": "assistant", "content": "hello"}], "turns", "has no user turn"),
        ([{"role": "user", "content": "x", "mood": "calm"}], "turns[0]", "unknown key(s) mood"),
    ],
)
def test_bad_dialogues_name_the_turn(
    tmp_path: Path, turns: list, field: str, fragment: str
) -> None:
    path = write_jsonl(tmp_path / "q.jsonl", [{"id": 1, "turns": turns}])
    with pytest.raises(ImportFormatError) as err:
        generic.import_files([path])
    assert (err.value.line, err.value.field) == (1, field)
    assert fragment in str(err.value)


def test_one_tool_two_definitions_names_both_places(tmp_path: Path) -> None:
    other = WEATHER | {"description": "Something else."}
    path = write_jsonl(tmp_path / "q.jsonl", [GOOD, GOOD | {"id": "q2", "tools": [other]}])
    with pytest.raises(ImportFormatError) as err:
        generic.import_files([path])
    assert (err.value.line, err.value.field) == (2, "tools")
    assert f"tool 'get_weather' is defined differently at {path}, line 1" in str(err.value)


def test_duplicate_ids_within_a_split_name_the_first(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "q.jsonl",
        [GOOD, GOOD | {"split": "other"}, GOOD | {"query": "Again?"}],
    )
    bundle = generic.import_files([path])
    with pytest.raises(ImportFormatError) as err:
        validate_bundle(bundle)
    assert err.value.file == f"{path}, line 3"
    assert f"duplicate id 'q1' in split 'default'; first seen at {path}, line 1" in str(err.value)


def test_files_the_suite_does_not_read(tmp_path: Path) -> None:
    text = tmp_path / "questions.txt"
    text.write_text("What is 2 + 2?\n", "utf-8")
    with pytest.raises(ImportFormatError) as err:
        generic.import_files([text])
    assert err.value.file == str(text)
    assert "JSON Lines" in str(err.value)


@pytest.mark.django_db
def test_import_stores_totals_and_a_reimport_writes_nothing(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "mine.jsonl",
        [GOOD, GOOD | {"id": "q2", "split": "hard"}, {"id": "q3", "query": "Hi?", "answer": 1}],
    )
    summary = benchmark_import(suite="generic", paths=[path], benchmark_name="Mine")
    assert (summary.benchmark, summary.tools, summary.samples) == (
        "Mine",
        1,
        {"default": 2, "hard": 1},
    )
    assert Tool.objects.get(benchmark__name="Mine").parameters == WEATHER["parameters"]
    again = benchmark_import(suite="generic", paths=[path], benchmark_name="Mine")
    assert (again.tools_written, again.samples_written, again.unchanged) == (0, 0, 3)


@pytest.mark.django_db
def test_demo_files_import() -> None:
    manifest = json.loads((DEMO / "manifest.json").read_text("utf-8"))
    assert manifest["suite"] == "generic"
    summary = benchmark_import(
        suite="generic",
        paths=[DEMO / name for name in manifest["files"]],
        benchmark_name=manifest["benchmark"],
        is_demo=True,
    )
    assert summary.samples == {"default": 4, "dialogue": 2}
    assert summary.tools == 3
    assert Benchmark.objects.get(name="Generic (demo)").is_demo
    assert Sample.objects.get(benchmark__name="Generic (demo)", external_id="demo-4").kind == (
        "dialogue"
    )
