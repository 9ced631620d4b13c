"""Gold tools must be described: a MetaTool query whose gold tool no tool file of the same import
describes is an error naming the file, line and tool (it used to be stored with an unknown gold
tool); `--allow-known-tools` accepts a tool the target benchmark already has from an earlier
import, and only that. Suites whose samples carry their own tools keep the published gold and
name the tools it calls that the sample does not offer."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from benchmarks.kit.base import ImportFormatError
from benchmarks.models import Benchmark, Sample, Tool
from benchmarks.services import benchmark_import
from benchmarks.suites import mtubench, ultratool

pytestmark = pytest.mark.django_db

TOOLS = {"WeatherTool": "Weather forecasts.", "BookTool": "Find books."}
LIST_START = "[List of Tools with Names and Descriptions Start]"
LIST_END = "[List of Tools with Names and Descriptions End]"


def write(path: Path, content: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = content if isinstance(content, str) else json.dumps(content, indent=1)
    path.write_text(text, "utf-8")
    return path


def queries(
    folder: Path, *rows: tuple[str, str], name: str = "all_clean_data.csv", first: int = 1
) -> Path:
    """A ToolE query file; ids from `first` on (a later import adds queries, not replaces)."""
    lines = "".join(f"{first + n},{q},{t}\n" for n, (q, t) in enumerate(rows))
    return write(folder / name, "row_index,Query,Tool\n" + lines)


def action_prompt(*tools: str) -> str:
    listed = "".join(
        f"{n}. tool name: {tool}, tool description: does things\n"
        for n, tool in enumerate(tools, start=1)
    )
    return f"Choose.\n{LIST_START}\n{listed}{LIST_END}\nAnswer:"


def state() -> tuple[list[Any], list[Any], list[Any]]:
    return (
        list(Benchmark.objects.values_list("name", "updated_at")),
        list(Tool.objects.values_list("benchmark__name", "name", "updated_at")),
        list(Sample.objects.values_list("benchmark__name", "split", "external_id", "updated_at")),
    )


def command(*args: str) -> str:
    out = io.StringIO()
    call_command("import_benchmark", *args, "--json", stdout=out)
    return out.getvalue()


# --- MetaTool: the gold tool of every kind of sample ---------------------------------------------


def test_a_query_whose_gold_tool_is_not_described_is_refused(tmp_path: Path) -> None:
    des = write(tmp_path / "plugin_des.json", TOOLS)
    csv = queries(tmp_path, ("Will it rain?", "WeatherTool"), ("Play some jazz.", "MusicTool"))
    with pytest.raises(ImportFormatError) as err:
        benchmark_import(suite="metatool", paths=[csv, des])
    assert str(err.value).startswith(f"{csv}, line 3, field 'Tool': gold tool 'MusicTool' is ")
    assert "--allow-known-tools" in err.value.message
    with pytest.raises(CommandError) as command_err:
        command("metatool", str(csv), str(des))
    assert f"Nothing imported. {csv}, line 3, field 'Tool'" in str(command_err.value)
    assert "'MusicTool'" in str(command_err.value)
    assert state() == ([], [], [])


def test_queries_without_any_tool_file_are_refused(tmp_path: Path) -> None:
    csv = queries(tmp_path, ("Will it rain?", "WeatherTool"))
    with pytest.raises(ImportFormatError) as err:
        benchmark_import(suite="metatool", paths=[csv])
    assert (err.value.field, "'WeatherTool'" in err.value.message) == ("Tool", True)


@pytest.mark.parametrize(
    ("name", "records", "record", "field"),
    [
        (
            "multi_tool_query_golden.json",
            [{"query": "Rain and a book?", "tool": ["WeatherTool", "MusicTool"]}],
            "0",
            "tool[1]",
        ),
        (
            "Task1_awareness.json",
            [
                {"query": "2+2?", "thought_prompt": "p", "label": "negative", "index": 1},
                {"query": "Jazz?", "thought_prompt": "p", "label": "positive", "tool": "MusicTool",
                 "index": 2},
            ],
            "2",
            "tool",
        ),
        (
            "Task2-Subtask3_reliability.json",
            [
                {"query": "Jazz?", "action_prompt": action_prompt("WeatherTool", "BookTool"),
                 "tool": "MusicTool"}
            ],
            "0",
            "tool",
        ),
        (
            "Task2-Subtask4_multi_tool.json",
            [
                {"query": "Jazz and rain?",
                 "action_prompt": action_prompt("WeatherTool", "MusicTool", "BookTool"),
                 "tool": ["MusicTool", "WeatherTool"]}
            ],
            "0",
            "tool[0]",
        ),
    ],
)  # fmt: skip
def test_every_kind_of_metatool_sample_has_its_gold_tools_checked(
    tmp_path: Path, name: str, records: list[Any], record: str, field: str
) -> None:
    des = write(tmp_path / "plugin_des.json", TOOLS)
    path = write(tmp_path / name, records)
    with pytest.raises(ImportFormatError) as err:
        benchmark_import(suite="metatool", paths=[des, path])
    assert str(err.value).startswith(f"{path}, record {record}, field {field!r}: gold tool ")
    assert "'MusicTool'" in err.value.message
    assert state() == ([], [], [])
    # described by any tool file of the import, it is accepted
    write(tmp_path / "big_tool_des.json", {"MusicTool": "Plays music."})
    summary = benchmark_import(suite="metatool", paths=[des, tmp_path / "big_tool_des.json", path])
    assert summary.tools == 3


def test_a_gold_tool_described_by_plugin_info_is_accepted(tmp_path: Path) -> None:
    info = write(
        tmp_path / "plugin_info.json",
        [{"name_for_model": "MusicTool", "description_for_model": "Plays music."}],
    )
    csv = queries(tmp_path, ("Play some jazz.", "MusicTool"))
    assert benchmark_import(suite="metatool", paths=[csv, info]).samples == {"queries": 1}


# --- --allow-known-tools ------------------------------------------------------------------------


@pytest.fixture
def imported(tmp_path: Path) -> Path:
    """MetaTool imported once with its tool descriptions; returns a folder for more files."""
    first = tmp_path / "first"
    command(
        "metatool",
        str(write(first / "plugin_des.json", TOOLS)),
        str(queries(first, ("Will it rain?", "WeatherTool"))),
    )
    later = tmp_path / "later"
    later.mkdir()
    return later


def test_later_queries_may_use_tools_the_benchmark_has(imported: Path) -> None:
    csv = queries(imported, ("Find me a novel.", "BookTool"), name="more.csv", first=100)
    before = state()
    with pytest.raises(CommandError, match="field 'Tool': gold tool 'BookTool'"):
        command("metatool", str(csv))
    assert state() == before
    totals = json.loads(command("metatool", str(csv), "--allow-known-tools"))
    assert totals == {"benchmark": "MetaTool", "tools": 2, "samples": {"queries": 2}}


def test_a_tool_the_benchmark_does_not_have_is_still_refused(imported: Path) -> None:
    csv = queries(
        imported,
        ("Find me a novel.", "BookTool"),
        ("Play jazz.", "MusicTool"),
        name="more.csv",
        first=100,
    )
    before = state()
    with pytest.raises(CommandError) as err:
        command("metatool", str(csv), "--allow-known-tools")
    message = str(err.value)
    assert f"{csv}, line 3, field 'Tool': gold tool 'MusicTool' is described neither" in message
    assert "benchmark 'MetaTool' already has" in message
    assert state() == before


def test_known_means_known_to_the_target_benchmark(imported: Path) -> None:
    # MetaTool has BookTool; a benchmark of another name does not.
    csv = queries(imported, ("Find me a novel.", "BookTool"), name="more.csv", first=100)
    before = state()
    with pytest.raises(ImportFormatError, match="benchmark 'Mine' already has"):
        benchmark_import(
            suite="metatool", paths=[csv], benchmark_name="Mine", allow_known_tools=True
        )
    assert state() == before


def test_the_tools_of_the_same_import_need_no_option(imported: Path) -> None:
    des = write(imported / "plugin_des.json", {"MusicTool": "Plays music."})
    csv = queries(
        imported, ("Play jazz.", "MusicTool"), ("A novel?", "BookTool"), name="more.csv", first=100
    )
    summary = benchmark_import(suite="metatool", paths=[csv, des], allow_known_tools=True)
    assert (summary.tools, summary.samples) == (3, {"queries": 3})


def test_the_readme_and_seed_files_import_without_the_option(seeddata: Path) -> None:
    folder = seeddata / "metatool"
    names = (
        "all_clean_data_sample200.csv",
        "multi_tool_query_golden.json",
        "Task1_awareness_sample200.json",
        "Task2-Subtask3_reliability_sample100.json",
        "Task2-Subtask4_multi_tool_sample100.json",
        "plugin_des.json",
    )
    summary = benchmark_import(suite="metatool", paths=[folder / name for name in names])
    assert sum(summary.samples.values()) == 200 + 497 + 200 + 100 + 100


# --- suites whose samples carry their tools: the published gold is kept and named ---------------

MTU_RULES = "Rules.\nThe following is a list of APIs and their parameters that you can use:\n"
TIDE = {"name": "GetTide", "description": "Tides.", "required_parameters": ["harbour"]}


def test_mtubench_names_gold_calls_to_tools_the_sample_does_not_offer(tmp_path: Path) -> None:
    path = tmp_path / "S-S_eval.jsonl"
    prompt = f"{MTU_RULES}{[TIDE]!r}\nUser: "
    rows = [
        {"id": "S-S_0", "question": prompt + "Tide?", "answer": {"GetTide": {}}},
        {
            "id": "S-S_1",
            "question": prompt + "Rain, then tide?",
            "answer": {"GetWeather": {"city": "Oban"}, "GetTide": {}},
        },
    ]
    write(path, "".join(json.dumps(row) + "\n" for row in rows))
    first, second = mtubench.import_files([path]).samples
    assert "gold_not_offered" not in first.metadata
    assert second.metadata["gold_not_offered"] == ["GetWeather"]
    assert [call["name"] for call in second.reference["calls"]] == ["GetWeather", "GetTide"]


def test_mtubench_seed_gold_calls_not_offered(seeddata: Path) -> None:
    folder = seeddata / "mtubench"
    samples = mtubench.import_files(sorted(folder.glob("*.jsonl"))).samples
    flagged = {s.external_id: s.metadata["gold_not_offered"] for s in samples
               if "gold_not_offered" in s.metadata}  # fmt: skip
    assert len(flagged) == 18
    assert flagged["S-S_17"] == ["qqq"]  # its API list is the placeholder ['api_descriptions']
    assert flagged["M-M_27_2"] == ["SearchOnewayFlight."]


def test_ultratool_names_gold_steps_calling_tools_not_offered(tmp_path: Path) -> None:
    tool = {"name": "file_write", "description": "Writes.", "arguments": {}, "results": {}}
    record = {
        "question": "Write and mail a.txt.",
        "plan": [
            {"step": "1. Do it", "tool": "null"},
            {"step": "1.1 Write", "tool": "file_write(path='a.txt')"},
            {"step": "1.2 Mail", "tool": "send_mail(to='x@example.org')"},
        ],
        "tools": [tool],
        "domain": "Document",
    }
    main = write(tmp_path / "test.json", json.dumps(record) + "\n")
    usage = {
        "toolset": [tool],
        "reference": [{"step": "1.2", "tool": "send_fax", "param": {"to": "x"}}],
    }
    task = write(tmp_path / "test_set" / "tool_usage.json", json.dumps(usage) + "\n")
    (sample,) = ultratool.import_files([main, task]).samples
    assert sample.metadata["gold_not_offered"] == ["send_mail", "send_fax"]
