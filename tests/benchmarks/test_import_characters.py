"""Characters PostgreSQL cannot store (NUL, lone surrogates U+D800-U+DFFF), in every file kind
each suite reads, in values and in keys: each import stops naming the file, the line or record
and the field, through the service and through `import_benchmark`, and imports nothing.

A JSON file writes a lone surrogate as the escape "\\ud800"; CSV has no escapes, so there it is
the bytes a lenient encoder writes for one (ED A0 80), which are not UTF-8. Values that a suite
builds after reading (a Python literal's escape, a JSON string inside a string, a file name's
undecodable byte) are covered too, and so is the last check before the rows are sent.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction

from benchmarks.kit.base import ImportFormatError, SampleRecord, ToolRecord
from benchmarks.models import Benchmark, Sample, Tool
from benchmarks.services import _upsert_samples, _upsert_tools, benchmark_import

pytestmark = pytest.mark.django_db

LONE = "\\ud800"  # a lone surrogate as a JSON file writes it: the escape, six characters
MARK = "@@"  # where a case puts LONE (or another escape) in a file written with json.dumps
LONE_CHAR = "\ud800"  # ... and the character json.loads makes of it
CESU_SURROGATE = b"\xed\xa0\x80"  # U+D800 as CESU-8 / WTF-8 write it: not UTF-8


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def one_per_line(value: list[Any] | dict[str, Any]) -> str:
    """A JSON document with one record a line from line 2 on, so that lines are known."""
    if isinstance(value, list):
        return "[\n" + ",\n".join(dumps(item) for item in value) + "\n]\n"
    return "{\n" + ",\n".join(f"{dumps(k)}: {dumps(v)}" for k, v in value.items()) + "\n}\n"


def jsonl(*rows: Any) -> str:
    return "".join(dumps(row) + "\n" for row in rows)


# --- one small valid import per suite, in each benchmark's format --------------------------------

PLUGIN_DES = {"WeatherTool": "Weather forecasts.", "BookTool": "Find books."}
QUERIES_CSV = "Query,Tool\nWill it rain tomorrow?,WeatherTool\nFind me a novel.,BookTool\n"
PLUGIN_INFO = [
    {
        "name_for_model": "WeatherTool",
        "name_for_human": "Weather",
        "description_for_model": "Weather forecasts.",
        "description_for_human": "Forecasts.",
    }
]
AWARENESS = [
    {"query": "Will it rain?", "thought_prompt": "p", "label": "positive", "tool": "WeatherTool"},
    {"query": "What is 2+2?", "thought_prompt": "p", "label": "negative"},
]
GOLDEN = [{"query": "Rain, then a book?", "tool": ["WeatherTool", "BookTool"]}]

MTU_RULES = (
    "Answer with Thought / Action / Action Input.\n7. Today is Monday, January 4, 2024.\n"
    "The following is a list of APIs and their parameters that you can use:\n"
)
MTU_API = {
    "name": "GetTide",
    "description": "Tide times for a harbour.",
    "required_parameters": ["harbour"],
    "optional_parameters": {"date": "2024-01-04"},
    "result_parameters": ["high_tide"],
}


def mtu_question(description: str = "Tide times for a harbour.") -> str:
    # The API list is a Python literal, as S-S publishes it.
    return f"{MTU_RULES}{[{**MTU_API, 'description': description}]!r}\nUser: High tide at Oban?"


MTU_RECORD = {"id": "S-S_0", "question": mtu_question(), "answer": {"GetTide": {"harbour": "Oban"}}}

STB_API = {
    "category_name": "Food",
    "tool_name": "Kettle Club",
    "api_name": "Boil water",
    "api_description": "Boils water for tea.",
    "required_parameters": [
        {"name": "litres", "type": "NUMBER", "description": "How much.", "default": "1"}
    ],
    "optional_parameters": [],
    "method": "GET",
}
STB_QUERY = {
    "query_id": 7,
    "query": "Boil a litre, please.",
    "api_list": [STB_API],
    "relevant APIs": [["Kettle Club", "Boil water"]],
}

ULTRA_TOOL = {
    "name": "file_write",
    "description": "Writes a file.",
    "arguments": {"type": "object", "properties": {"path": {"type": "string"}}},
    "results": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
}


def ultra_record(call: str = "file_write(path='a.txt')") -> dict[str, Any]:
    return {
        "question": "Write a.txt, please.",
        "plan": [
            {"step": "1. Write the file", "tool": "null"},
            {"step": "1.1 Get the path", "tool": "No tool required"},
            {"step": "1.2 Write it", "tool": call},
        ],
        "tools": [ULTRA_TOOL],
        "domain": "Document",
    }


WTU_RECORD = {"id": 1, "dataset": "GSM8K", "question": "2+2?", "answer": "4", "kind": "tool"}
GENERIC_TOOL = {
    "name": "get_weather",
    "description": "Forecast for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
GENERIC_RECORD = {
    "id": "q1",
    "query": "Rain in Ghent?",
    "tools": [GENERIC_TOOL],
    "tool_calls": [{"name": "get_weather", "arguments": {"city": "Ghent"}}],
}


# --- the cases ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    suite: str
    files: dict[str, str | bytes]  # path in the import folder -> content
    file: str  # the file the error names
    line: int | None
    field: str | None
    record: Any = None
    says: str = "lone surrogate U+D800"


def marked(text: str, escape: str = LONE) -> str:
    return text.replace(MARK, escape)


METATOOL_BASE: dict[str, str | bytes] = {
    "plugin_des.json": one_per_line(PLUGIN_DES),
    "all_clean_data.csv": QUERIES_CSV,
}

CASES: dict[str, Callable[[], Case]] = {
    # MetaTool: the queries CSV
    "metatool csv value": lambda: Case(
        "metatool",
        {
            **METATOOL_BASE,
            "all_clean_data.csv": b"Query,Tool\nRain?,WeatherTool\nA nov"
            + CESU_SURROGATE
            + b"el.,BookTool\n",
        },
        "all_clean_data.csv",
        3,
        "Query",
        says="not valid UTF-8 (byte 0xed at column 6)",
    ),
    "metatool csv key": lambda: Case(
        "metatool",
        {**METATOOL_BASE, "all_clean_data.csv": b"Query,To" + CESU_SURROGATE + b"ol\nx,y\n"},
        "all_clean_data.csv",
        1,
        "column 2",
        says="not valid UTF-8",
    ),
    "metatool csv nul value": lambda: Case(
        "metatool",
        {**METATOOL_BASE, "all_clean_data.csv": "Query,Tool\nRain?,Weather\x00Tool\n"},
        "all_clean_data.csv",
        2,
        "Tool",
        says="NUL character (U+0000)",
    ),
    "metatool csv nul key": lambda: Case(
        "metatool",
        {**METATOOL_BASE, "all_clean_data.csv": "Query,Tool,no\x00te\nRain?,WeatherTool,x\n"},
        "all_clean_data.csv",
        1,
        "column 3",
        says="NUL character (U+0000)",
    ),
    # MetaTool: the tool description files
    "metatool plugin_des value": lambda: Case(
        "metatool",
        {
            **METATOOL_BASE,
            "plugin_des.json": marked(one_per_line({**PLUGIN_DES, "BookTool": "Find @@ books."})),
        },
        "plugin_des.json",
        3,
        "BookTool",
    ),
    "metatool plugin_des key": lambda: Case(
        "metatool",
        {
            **METATOOL_BASE,
            "plugin_des.json": marked(one_per_line({"Weather@@Tool": "x", "BookTool": "y"})),
        },
        "plugin_des.json",
        2,
        f"Weather{LONE_CHAR}Tool",
    ),
    "metatool plugin_info value": lambda: Case(
        "metatool",
        {
            **METATOOL_BASE,
            "plugin_info.json": marked(
                one_per_line([{**PLUGIN_INFO[0], "description_for_human": "Fore@@casts."}])
            ),
        },
        "plugin_info.json",
        2,
        "[0].description_for_human",
    ),
    "metatool plugin_info key": lambda: Case(
        "metatool",
        {
            **METATOOL_BASE,
            "plugin_info.json": marked(one_per_line([{**PLUGIN_INFO[0], "lo@@go": "x.png"}])),
        },
        "plugin_info.json",
        2,
        f"[0].lo{LONE_CHAR}go",
    ),
    # MetaTool: the JSON sample files
    "metatool awareness value": lambda: Case(
        "metatool",
        {
            **METATOOL_BASE,
            "Task1_awareness.json": marked(
                one_per_line([AWARENESS[0], {**AWARENESS[1], "query": "What is 2@@2?"}])
            ),
        },
        "Task1_awareness.json",
        3,
        "[1].query",
    ),
    "metatool awareness key": lambda: Case(
        "metatool",
        {
            **METATOOL_BASE,
            "Task1_awareness.json": marked(one_per_line([{**AWARENESS[0], "no@@te": 1}])),
        },
        "Task1_awareness.json",
        2,
        f"[0].no{LONE_CHAR}te",
    ),
    "metatool golden value": lambda: Case(
        "metatool",
        {
            **METATOOL_BASE,
            "multi_tool_query_golden.json": marked(
                one_per_line([{**GOLDEN[0], "query": "Rain@@?"}])
            ),
        },
        "multi_tool_query_golden.json",
        2,
        "[0].query",
    ),
    "metatool scenario value": lambda: Case(
        "metatool",
        {
            **METATOOL_BASE,
            "scenario/Hikers.json": marked(one_per_line({"Tools": ["WeatherTool", "Bo@@ok"]})),
        },
        "Hikers.json",
        2,
        "Tools[1]",
    ),
    "metatool scenario key": lambda: Case(
        "metatool",
        {
            **METATOOL_BASE,
            "scenario/Hikers.json": marked(one_per_line({"Tools": ["WeatherTool"], "r@@ef": []})),
        },
        "Hikers.json",
        3,
        f"r{LONE_CHAR}ef",
    ),
    # NUL as a JSON escape: refused the same way
    "metatool plugin_des nul": lambda: Case(
        "metatool",
        {
            **METATOOL_BASE,
            "plugin_des.json": marked(one_per_line(PLUGIN_DES | {"X": "@@"}), "\\u0000"),
        },
        "plugin_des.json",
        4,
        "X",
        says="NUL character (U+0000)",
    ),
    # MTU-Bench
    "mtubench value": lambda: Case(
        "mtubench",
        {
            "S-S_eval.jsonl": marked(
                jsonl(
                    MTU_RECORD,
                    {**MTU_RECORD, "id": "S-S_1", "question": MTU_RECORD["question"] + " @@"},
                )
            )
        },
        "S-S_eval.jsonl",
        2,
        "question",
    ),
    "mtubench key": lambda: Case(
        "mtubench",
        {
            "S-S_eval.jsonl": marked(
                jsonl({**MTU_RECORD, "answer": {"GetTide": {"har@@bour": "Oban"}}})
            )
        },
        "S-S_eval.jsonl",
        1,
        f"answer.GetTide.har{LONE_CHAR}bour",
    ),
    # The API list is a Python literal inside the question: repr() writes the escape \ud800
    # there, and reading the literal makes the character again.
    "mtubench python literal escape": lambda: Case(
        "mtubench",
        {"S-S_eval.jsonl": jsonl({**MTU_RECORD, "question": mtu_question(f"Tides {LONE_CHAR}.")})},
        "S-S_eval.jsonl",
        1,
        "question",
    ),
    # StableToolBench
    "stabletoolbench query value": lambda: Case(
        "stabletoolbench",
        {
            "G1_instruction.json": marked(
                one_per_line([STB_QUERY, {**STB_QUERY, "query_id": 8, "query": "Tea @@"}])
            )
        },
        "G1_instruction.json",
        3,
        "query",
        record=2,
    ),
    "stabletoolbench query key": lambda: Case(
        "stabletoolbench",
        {
            "G1_instruction.json": marked(
                one_per_line([{**STB_QUERY, "api_list": [{**STB_API, "no@@te": "x"}]}])
            )
        },
        "G1_instruction.json",
        2,
        f"api_list[0].no{LONE_CHAR}te",
        record=1,
    ),
    "stabletoolbench query ids key": lambda: Case(
        "stabletoolbench",
        {
            "test_instruction/G1_instruction.json": one_per_line([STB_QUERY]),
            "test_query_ids/G1_instruction.json": marked(one_per_line({"7": 0, "8@@": 0})),
        },
        "G1_instruction.json",
        3,
        f"8{LONE_CHAR}",
    ),
    # UltraTool
    "ultratool value": lambda: Case(
        "ultratool",
        {"test.json": marked(jsonl({**ultra_record(), "question": "Write @@"}))},
        "test.json",
        1,
        "question",
    ),
    "ultratool key": lambda: Case(
        "ultratool",
        {
            "test.json": marked(
                jsonl(
                    ultra_record(),
                    {
                        **ultra_record(),
                        "tools": [{**ULTRA_TOOL, "arguments": {"properties": {"pa@@th": {}}}}],
                    },
                )
            )
        },
        "test.json",
        2,
        f"tools[0].arguments.properties.pa{LONE_CHAR}th",
    ),
    # A plan step's call is read as Python: its escape becomes the character.
    "ultratool call escape": lambda: Case(
        "ultratool",
        {"test.json": jsonl(ultra_record("file_write(path='\\ud800.txt')"))},
        "test.json",
        1,
        "plan[2].arguments.path",
    ),
    "ultratool task file value": lambda: Case(
        "ultratool",
        {
            "test.json": jsonl(ultra_record()),
            "test_set/tool_usage.json": marked(
                jsonl(
                    {"reference": [{"step": "1.2", "tool": "file_write", "param": {"path": "@@"}}]}
                )
            ),
        },
        "tool_usage.json",
        1,
        "reference[0].param.path",
    ),
    # WTU-Eval
    "wtueval value": lambda: Case(
        "wtueval",
        {"questions.jsonl": marked(jsonl(WTU_RECORD, {**WTU_RECORD, "id": 2, "question": "@@"}))},
        "questions.jsonl",
        2,
        "question",
    ),
    "wtueval key": lambda: Case(
        "wtueval",
        {"questions.jsonl": marked(jsonl({**WTU_RECORD, "sour@@ce": "x"}))},
        "questions.jsonl",
        1,
        f"sour{LONE_CHAR}ce",
    ),
    # Generic JSON Lines
    "generic value": lambda: Case(
        "generic",
        {"mine.jsonl": marked(jsonl({**GENERIC_RECORD, "query": "Rain @@?"}))},
        "mine.jsonl",
        1,
        "query",
    ),
    "generic key": lambda: Case(
        "generic",
        {"mine.jsonl": marked(jsonl({**GENERIC_RECORD, "metadata": {"k@@": 1}}))},
        "mine.jsonl",
        1,
        f"metadata.k{LONE_CHAR}",
    ),
    # Arguments given as JSON text: the escape inside that text becomes the character.
    "generic arguments text": lambda: Case(
        "generic",
        {
            "mine.jsonl": jsonl(
                {
                    **GENERIC_RECORD,
                    "tool_calls": [{"name": "get_weather", "arguments": '{"city": "\\ud800"}'}],
                }
            )
        },
        "mine.jsonl",
        1,
        "tool_calls[0].arguments.city",
    ),
    "generic bytes that are not utf-8": lambda: Case(
        "generic",
        {"mine.jsonl": jsonl(GENERIC_RECORD).encode() + b'{"id": 2, "query": "\xff"}\n'},
        "mine.jsonl",
        2,
        "query",
        says="not valid UTF-8 (byte 0xff",
    ),
}


def write(folder: Path, files: dict[str, str | bytes]) -> list[Path]:
    paths = []
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        paths.append(path)
    return paths


def nothing_stored() -> bool:
    return not (Benchmark.objects.exists() or Tool.objects.exists() or Sample.objects.exists())


@pytest.mark.parametrize("name", list(CASES))
def test_the_service_names_file_line_and_field(tmp_path: Path, name: str) -> None:
    case = CASES[name]()
    paths = write(tmp_path, case.files)
    with pytest.raises(ImportFormatError) as err:
        benchmark_import(suite=case.suite, paths=paths)
    error = err.value
    assert case.says in error.message
    assert error.file is not None and Path(error.file).name == case.file
    assert (error.line, error.field) == (case.line, case.field)
    assert error.record == case.record
    assert nothing_stored()


@pytest.mark.parametrize("name", list(CASES))
def test_the_command_says_where_and_imports_nothing(tmp_path: Path, name: str) -> None:
    case = CASES[name]()
    paths = write(tmp_path, case.files)
    with pytest.raises(CommandError) as err:
        call_command("import_benchmark", case.suite, *map(str, paths), stdout=io.StringIO())
    message = str(err.value)
    assert message.startswith("Nothing imported.")
    assert case.file in message and case.says in message
    if case.line is not None:
        assert f"line {case.line}," in message
    assert f"field {case.field!r}" in message
    # The message itself can be printed and stored: the character is written as an escape.
    message.encode("utf-8")
    assert nothing_stored()


def test_a_good_import_with_storable_oddities_still_imports(tmp_path: Path) -> None:
    # Noncharacters, the last code point, a backslash before "u0000" and a surrogate pair are
    # all storable: only NUL and lone surrogates are refused.
    text = "\ufffe \uffff \U0010ffff \\u0000 \U0001f600 \u2028"
    path = tmp_path / "mine.jsonl"
    path.write_text(jsonl({**GENERIC_RECORD, "query": text, "metadata": {text: text}}), "utf-8")
    benchmark_import(suite="generic", paths=[path])
    stored = Sample.objects.get()
    assert stored.input == {"query": text}
    assert stored.metadata == {text: text}


def non_utf8_name(folder: Path, stem: bytes, suffix: str) -> Path:
    # On Linux a name's bytes that are not UTF-8 reach Python as U+DC80-U+DCFF.
    return folder / os.fsdecode(stem + suffix.encode())


def test_a_scenario_file_name_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    # The scenario's name is its file's, and is stored as the sample's id.
    write(tmp_path, METATOOL_BASE)
    (tmp_path / "scenario").mkdir()
    scenario = non_utf8_name(tmp_path / "scenario", b"Hik\xffers", ".json")
    scenario.write_text(json.dumps({"Tools": ["WeatherTool"]}), "utf-8")
    paths = [tmp_path / "plugin_des.json", tmp_path / "all_clean_data.csv", scenario]
    with pytest.raises(ImportFormatError) as err:
        benchmark_import(suite="metatool", paths=paths)
    assert err.value.field == "file name"
    assert "U+DCFF" in err.value.message
    with pytest.raises(CommandError) as command_err:
        call_command("import_benchmark", "metatool", *map(str, paths))
    assert "Hik\\udcffers.json" in str(command_err.value)
    assert nothing_stored()


def test_an_ultratool_split_from_a_file_name_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    main = non_utf8_name(tmp_path, b"te\xe9st", ".json")
    main.write_text(jsonl(ultra_record()), "utf-8")
    with pytest.raises(ImportFormatError) as err:
        benchmark_import(suite="ultratool", paths=[main])
    assert (err.value.field, Path(err.value.file or "").name) == ("file name", main.name)
    assert nothing_stored()


# --- the last check, before rows are sent -------------------------------------------------------


def test_the_rows_are_checked_as_they_are_sent() -> None:
    # Records a suite built itself (no file was read for them) go through the same check, which
    # names the record's place and the stored field; the transaction leaves nothing behind.
    benchmark = Benchmark.objects.create(name="B", suite="generic")
    sample = SampleRecord(
        split="s",
        external_id="1",
        input={"query": "ok"},
        metadata={"note": ["fine", f"bad {LONE_CHAR}"]},
        source="made.jsonl, line 4",
    )
    with pytest.raises(ImportFormatError) as err, transaction.atomic():
        _upsert_samples(benchmark.pk, [sample])
    assert str(err.value).startswith("made.jsonl, line 4, field 'metadata.note[1]': ")
    tool = ToolRecord(name="t", raw={"k\x00": 1}, source="tools.json, record 2")
    with pytest.raises(ImportFormatError) as err, transaction.atomic():
        _upsert_tools(benchmark.pk, [tool])
    assert (err.value.field, "NUL" in err.value.message) == ("raw.k\x00", True)
    assert not Sample.objects.exists() and not Tool.objects.exists()


def test_a_written_backslash_u0000_is_not_mistaken_for_nul() -> None:
    benchmark = Benchmark.objects.create(name="B", suite="generic")
    sample = SampleRecord(split="s", external_id="1", input={"query": "C:\\u0000dir"})
    with transaction.atomic():
        _upsert_samples(benchmark.pk, [sample])
    assert Sample.objects.get().input == {"query": "C:\\u0000dir"}


# Every character COPY's text format escapes (and the sequences it reads as escapes), in every
# column the samples' COPY writes, through the first import (straight into the table) and a
# second one (through the temporary table): stored exactly as given.
COPY_ODDITIES = "a\\b \t \n \r\n \\N \\. \\t \b \v \f \x1f \\\\ end\\"


def test_what_copy_escapes_is_stored_as_given() -> None:
    benchmark = Benchmark.objects.create(name="B", suite="generic")

    def records(note: str) -> list[SampleRecord]:
        return [
            SampleRecord(
                split=f"split {COPY_ODDITIES}",
                external_id=COPY_ODDITIES,
                input={"query": COPY_ODDITIES, COPY_ODDITIES: [COPY_ODDITIES]},
                reference={"tool": COPY_ODDITIES},
                candidate_tools=[COPY_ODDITIES],
                metadata={"note": note},
            ),
            SampleRecord(split="s", external_id="\\N", input={"query": "\\N"}, reference=None),
        ]

    with transaction.atomic():
        _upsert_samples(benchmark.pk, records("first"))
    with transaction.atomic():
        _upsert_samples(benchmark.pk, records(f"second {COPY_ODDITIES}"))
    odd = Sample.objects.get(external_id=COPY_ODDITIES)
    assert odd.split == f"split {COPY_ODDITIES}"
    assert odd.input == {"query": COPY_ODDITIES, COPY_ODDITIES: [COPY_ODDITIES]}
    assert odd.reference == {"tool": COPY_ODDITIES}
    assert odd.candidate_tools == [COPY_ODDITIES]
    assert odd.metadata == {"note": f"second {COPY_ODDITIES}"}
    plain = Sample.objects.get(external_id="\\N")
    assert (plain.split, plain.input, plain.reference) == ("s", {"query": "\\N"}, None)
