"""UltraTool import: plan trees from step numbers, calls read safely, six index-aligned task files.

UltraTool's repository has no licence, so the fixture in tests/benchmarks/fixtures/ultratool/ is
our own text in its format: four plans (one in Chinese), every task file, and the published
format's slips (an apostrophe inside a quoted value, a <placeholder> argument).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from benchmarks.kit.base import ImportFormatError, merge_tools, validate_bundle
from benchmarks.models import Benchmark, Sample, Tool
from benchmarks.services import benchmark_import
from benchmarks.suites import ultratool
from benchmarks.suites.ultratool import PlanError, build_plan
from tests.conftest import BENCHMARK_FIXTURES

FIXTURE = BENCHMARK_FIXTURES / "ultratool"
DEMO = Path(__file__).resolve().parents[3] / "benchmarks" / "demo" / "ultratool"


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), "utf-8")
    return path


def record(question: str = "Set an alarm for six.", plan: list[Any] | None = None) -> dict:
    return {
        "question": question + "\n",
        "plan": plan
        if plan is not None
        else [
            {"step": "1. Set the alarm", "tool": "null"},
            {"step": "1.1 Note the time (Time: 06:00)", "tool": "No tool required"},
            {"step": "1.2 Set it", "tool": "set_alarm(time='06:00')"},
        ],
        "tools": [
            {
                "name": "set_alarm",
                "description": "Set an alarm.",
                "arguments": {"type": "object", "properties": {"time": {"type": "string"}}},
                "results": {"type": "object", "properties": {"id": {"type": "string"}}},
            }
        ],
        "domain": "Alarm",
    }


def import_one(tmp_path: Path, rec: dict) -> Any:
    return ultratool.import_files([write_jsonl(tmp_path / "test.json", [rec])])


# --- the fixture, every task -------------------------------------------------------------------


def test_fixture_folder_imports_plans_tools_and_every_task() -> None:
    calls: list[int] = []
    bundle = ultratool.import_files([FIXTURE], progress=calls.append)
    validate_bundle(bundle)
    # 4 plans + task records (planning 4, creation awareness 4, creation 2, usage awareness 4,
    # selection 4, usage 4)
    assert sum(calls) == 26
    assert [(s.split, s.external_id, s.kind) for s in bundle.samples] == [
        ("test", "1", "plan"),
        ("test", "2", "plan"),
        ("test", "3", "plan"),
        ("test", "4", "plan"),
    ]
    tools = {tool.name: tool for tool in merge_tools(bundle.tools)}
    assert sorted(tools) == [
        "book_train_ticket",
        "check_bank_balance",
        "convert_units",
        "create_reminder",
        "find_bike_route",
        "get_weather_forecast",
        "search_trains",
        "send_email",
        "send_sms",
        "set_alarm",
        "translate_text",
    ]
    forecast = tools["get_weather_forecast"]
    assert forecast.category == "Weather"
    assert sorted(forecast.parameters["properties"]) == ["city", "day", "period"]
    assert forecast.returns["properties"]["rain_probability"]["type"] == "number"
    assert forecast.raw["name"] == "get_weather_forecast"
    assert tools["find_bike_route"].category == ""  # only ever offered as an interference tool

    first = bundle.samples[0]
    assert first.input["query"].startswith("Tomorrow I'm cycling from Leiden to Haarlem.")
    assert not first.input["query"].endswith("\n")
    assert first.candidate_tools == ["get_weather_forecast", "set_alarm"]
    published = first.metadata.pop("published")
    assert first.metadata == {"domain": "Weather", "line": 1}
    # each record's text as its file holds it, line end included (published.py)
    assert sorted(published) == sorted(["main", *ultratool.importer.TASK_FILES])
    main_lines = (FIXTURE / "test.json").read_text("utf-8").splitlines(keepends=True)
    assert published["main"] == main_lines[0]
    usage_lines = (FIXTURE / "test_set" / "tool_usage.json").read_text("utf-8")
    assert published["tool_usage"] == usage_lines.splitlines(keepends=True)[0]
    assert first.source == f"{FIXTURE / 'test.json'}, line 1"
    steps = first.reference["steps"]
    assert [(s["step"], s["tool"]) for s in steps] == [
        ("1", None),
        ("1.1", None),
        ("1.2", "get_weather_forecast"),
        ("1.3", None),
        ("2", None),
        ("2.1", "set_alarm"),
    ]
    assert steps[5]["arguments"] == {"time": "07:15", "label": "Cycle to Haarlem"}
    assert steps[5]["call"] == "set_alarm(time='07:15', label=\"Cycle to Haarlem\")"
    assert first.reference["planning"].splitlines()[0] == "1. Check the weather at the destination"
    assert first.reference["tool_usage_awareness"] == [
        {"step": "1.1", "value": 0},
        {"step": "1.2", "value": 1},
        {"step": "1.3", "value": 0},
        {"step": "2.1", "value": 1},
    ]
    # set_alarm is left out of the offered toolset, so step 2.1 is the one to create a tool for
    assert first.reference["tool_creation_awareness"] == [
        {"step": "1.2", "value": 0},
        {"step": "2.1", "value": 1},
    ]
    assert first.input["toolsets"]["tool_creation_awareness"] == [
        "get_weather_forecast",
        "find_bike_route",
        "translate_text",
    ]
    assert [(g["step"], g["tool"]["name"]) for g in first.reference["tool_creation"]] == [
        ("2.1", "set_alarm"),
    ]
    assert first.reference["tool_selection"] == [
        {"step": "1.2", "tool": "get_weather_forecast"},
        {"step": "2.1", "tool": "set_alarm"},
    ]
    assert first.input["toolsets"]["tool_selection"] == [
        "get_weather_forecast",
        "set_alarm",
        "find_bike_route",
        "translate_text",
    ]
    assert first.reference["tool_usage"][0] == {
        "step": "1.2",
        "tool": "get_weather_forecast",
        "arguments": {"city": "Haarlem", "day": "tomorrow", "period": "afternoon"},
    }


def test_three_level_tree_and_a_repaired_call() -> None:
    second = ultratool.import_files([FIXTURE]).samples[1]
    tree = second.reference["plan"]
    assert [node["step"] for node in tree] == ["1", "2"]
    assert [node["step"] for node in tree[0]["children"]] == ["1.1", "1.2"]
    leaf = tree[0]["children"][0]["children"][1]
    assert leaf["step"] == "1.1.2"
    assert leaf["text"] == "Search for trains"
    assert leaf["tool"] == "search_trains"
    assert leaf["children"] == []
    booking = tree[1]["children"][0]
    # the published slips: an apostrophe inside '...' and an earlier step's output as <...>
    assert booking["arguments"] == {
        "train_id": "<earliest train found>",
        "seat_class": "second",
        "passenger": "Ilse O'Neill",
    }
    assert second.metadata["repaired_calls"] == ["2.1"]
    assert [s["step"] for s in second.reference["steps"]] == [
        "1",
        "1.1",
        "1.1.1",
        "1.1.2",
        "1.2",
        "2",
        "2.1",
        "2.2",
    ]
    assert second.reference["tool_usage"][1]["arguments"]["passenger"] == "Ilse O'Neill"


def test_lists_booleans_chinese_markers_and_json_null() -> None:
    third, fourth = ultratool.import_files([FIXTURE]).samples[2:]
    email = third.reference["steps"][-1]
    assert email["tool"] == "send_email"
    assert email["arguments"] == {
        "to": ["sam@example.org"],
        "subject": "Shopping list",
        "body": "Flour and milk in ounces",
        "urgent": False,
    }
    assert "tool_creation" not in third.reference  # tool_creation.json has two records only
    assert [(s["step"], s["text"], s["tool"]) for s in fourth.reference["steps"]] == [
        ("1", "设置提醒", None),
        ("1.1", "确定提醒时间（时间：明天早上八点）", None),  # noqa: RUF001 (Chinese punctuation)
        ("1.2", "创建提醒", "create_reminder"),
    ]


def test_files_given_one_by_one_read_the_same_as_the_folder() -> None:
    files = [FIXTURE / "test.json", *sorted((FIXTURE / "test_set").glob("*.json"))]
    by_file = ultratool.import_files(files)
    by_folder = ultratool.import_files([FIXTURE])
    assert [s.reference for s in by_file.samples] == [s.reference for s in by_folder.samples]


# --- the plan tree -----------------------------------------------------------------------------


def steps(*numbers: str) -> list[dict]:
    return [{"step": f"{n} step {n}", "tool": "null"} for n in numbers]


def test_tree_from_1_11_12_2() -> None:
    plan = build_plan(steps("1.", "1.1", "1.2", "2."))
    assert [(n["step"], [c["step"] for c in n["children"]]) for n in plan.tree] == [
        ("1", ["1.1", "1.2"]),
        ("2", []),
    ]
    assert [s["step"] for s in plan.steps] == ["1", "1.1", "1.2", "2"]
    assert plan.tree[0]["text"] == "step 1."  # "1. step 1." : the number, then the text


@pytest.mark.parametrize(
    ("numbers", "field", "fragment"),
    [
        (("1", "1.2"), "plan[1].step", "step 1.2 cannot come after step 1: expected 1.1 or 2"),
        (("1", "1.1", "3"), "plan[2].step", "expected 1.1.1 or 1.2 or 2"),
        (("2", "2.1"), "plan[0].step", "step 2 cannot come as the first step: expected 1"),
        (("1.1", "1.2"), "plan[0].step", "expected 1"),
        (("1", "1.1", "1.1"), "plan[2].step", "step 1.1 cannot come after step 1.1"),
        (("1", "2", "1.1"), "plan[2].step", "step 1.1 cannot come after step 2"),
    ],
)
def test_out_of_order_or_gaps_name_the_step(
    numbers: tuple[str, ...], field: str, fragment: str
) -> None:
    with pytest.raises(PlanError) as err:
        build_plan(steps(*numbers))
    assert err.value.field == field
    assert fragment in err.value.message


def test_a_gap_in_the_file_names_file_line_and_field(tmp_path: Path) -> None:
    good = record()
    bad = record(plan=steps("1", "1.1", "1.3"))
    path = write_jsonl(tmp_path / "test.json", [good, bad])
    with pytest.raises(ImportFormatError) as err:
        ultratool.import_files([path])
    assert (err.value.file, err.value.line, err.value.field) == (str(path), 2, "plan[2].step")
    assert "step 1.3 cannot come after step 1.1" in str(err.value)


@pytest.mark.parametrize(
    ("plan", "field", "fragment"),
    [
        ([], "plan", "is empty"),
        (["1. a string"], "plan[0]", "expected an object"),
        ([{"tool": "null"}], "plan[0].step", "missing"),
        ([{"step": "Create the file", "tool": "null"}], "plan[0].step", "does not start with"),
        ([{"step": "1. a", "tool": 7}], "plan[0].tool", "expected a string or null"),
        (
            [{"step": "1. a", "tool": "null"}, {"step": "1.1 b", "tool": "use a calculator"}],
            "plan[1].tool",
            "is neither null, 'No tool required' nor a call",
        ),
    ],
)
def test_bad_plans_name_the_field(tmp_path: Path, plan: list, field: str, fragment: str) -> None:
    with pytest.raises(ImportFormatError) as err:
        import_one(tmp_path, record(plan=plan))
    assert err.value.line == 1
    assert err.value.field == field
    assert fragment in str(err.value)


def test_plausible_step_variants_are_read(tmp_path: Path) -> None:
    plan = [
        {"step": 1, "text": "Set the alarm", "tool": None},
        {"step": "1.1", "text": "Set it"},  # no tool key: a step without a tool
        {"step": "1.2 Set it", "tool": {"name": "set_alarm", "arguments": {"time": "06:00"}}},
        {"step": "1.3 Check it", "tool": "No tool required."},
        {"step": "1.4 Ring", "tool": "set_alarm"},  # a bare tool name, no arguments given
    ]
    sample = import_one(tmp_path, record(plan=plan)).samples[0]
    read = [(s["step"], s["text"], s["tool"], s["arguments"]) for s in sample.reference["steps"]]
    assert read == [
        ("1", "Set the alarm", None, None),
        ("1.1", "Set it", None, None),
        ("1.2", "Set it", "set_alarm", {"time": "06:00"}),
        ("1.3", "Check it", None, None),
        ("1.4", "Ring", "set_alarm", None),
    ]


def test_a_call_no_reader_accepts_is_kept_verbatim_never_run(tmp_path: Path) -> None:
    plan = [
        {"step": "1. Send", "tool": "null"},
        {"step": "1.1 Send it", "tool": "send(x=__import__('os').system('rm -rf /'))"},
    ]
    sample = import_one(tmp_path, record(plan=plan)).samples[0]
    step = sample.reference["steps"][1]
    assert step["tool"] == "send"
    assert step["arguments"] is None
    assert step["call"] == "send(x=__import__('os').system('rm -rf /'))"
    assert "function call" in step["call_error"]
    assert sample.metadata["unparsed_calls"] == ["1.1"]


# --- task files: alignment and gold ------------------------------------------------------------


def copy_fixture(tmp_path: Path) -> Path:
    target = tmp_path / "ultratool"
    shutil.copytree(FIXTURE, target)
    return target


def test_a_task_file_longer_than_test_json_is_refused(tmp_path: Path) -> None:
    folder = copy_fixture(tmp_path)
    planning = folder / "test_set" / "planning.json"
    with planning.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"input": "An extra question", "reference": "1. Do it"}) + "\n")
    with pytest.raises(ImportFormatError) as err:
        ultratool.import_files([folder])
    assert err.value.file == str(planning)
    assert err.value.line == 5
    assert "more records than" in str(err.value)
    assert "index-aligned" in str(err.value)


def test_a_task_record_about_another_question_is_refused(tmp_path: Path) -> None:
    folder = copy_fixture(tmp_path)
    planning = folder / "test_set" / "planning.json"
    rows = [json.loads(line) for line in planning.read_text("utf-8").splitlines()]
    rows[0], rows[1] = rows[1], rows[0]
    write_jsonl(planning, rows)
    with pytest.raises(ImportFormatError) as err:
        ultratool.import_files([folder])
    assert (err.value.file, err.value.line, err.value.field) == (str(planning), 1, "input")
    assert "not index-aligned" in str(err.value)


def test_a_gold_step_missing_from_the_plan_is_refused(tmp_path: Path) -> None:
    main = write_jsonl(tmp_path / "test.json", [record()])
    task = write_jsonl(
        tmp_path / "tool_selection.json", [{"reference": [{"step": "2.1 Ring", "tool": "x"}]}]
    )
    with pytest.raises(ImportFormatError) as err:
        ultratool.import_files([main, task])
    assert (err.value.line, err.value.field) == (1, "reference[0].step")
    assert "step 2.1 is not in the plan" in str(err.value)


@pytest.mark.parametrize(
    ("task", "reference", "field", "fragment"),
    [
        (
            "tool_usage_awareness",
            [{"step": "1.1", "tool": "yes"}],
            "reference[0].tool",
            '"0" or "1"',
        ),
        ("tool_usage_awareness", {"step": "1.1"}, "reference", "expected a list of steps"),
        ("tool_selection", [{"step": "1.2", "tool": ""}], "reference[0].tool", "tool's name"),
        (
            "tool_usage",
            [{"step": "1.2", "tool": "set_alarm", "param": "time=6"}],
            "reference[0].param",
            "expected the arguments as an object",
        ),
        (
            "tool_creation",
            [{"step": "1.2", "tool": "set_alarm"}],
            "reference[0].tool",
            "the tool to create",
        ),
        ("planning", 42, "reference", "expected the plan as text"),
        ("tool_selection", [{"tool": "set_alarm"}], "reference[0].step", "missing"),
    ],
)
def test_bad_gold_names_file_line_and_field(
    tmp_path: Path, task: str, reference: Any, field: str, fragment: str
) -> None:
    main = write_jsonl(tmp_path / "test.json", [record()])
    path = write_jsonl(tmp_path / f"{task}.json", [{"reference": reference}])
    with pytest.raises(ImportFormatError) as err:
        ultratool.import_files([main, path])
    assert (err.value.file, err.value.line, err.value.field) == (str(path), 1, field)
    assert fragment in str(err.value)


def test_bare_gold_records_and_a_shorter_task_file_are_read(tmp_path: Path) -> None:
    main = write_jsonl(tmp_path / "test.json", [record(), record("Wake me at six.")])
    task = write_jsonl(
        tmp_path / "tool_usage_awareness.json",
        [{"reference": [{"step": "1.1", "tool": 0}, {"step": "1.2", "tool": True}]}],
    )
    first, second = ultratool.import_files([main, task]).samples
    assert first.reference["tool_usage_awareness"] == [
        {"step": "1.1", "value": 0},
        {"step": "1.2", "value": 1},
    ]
    assert "tool_usage_awareness" not in second.reference


@pytest.mark.parametrize(
    ("rec", "field", "fragment"),
    [
        ({k: v for k, v in record().items() if k != "question"}, "question", "missing"),
        ({**record(), "plan": "1. Do it"}, "plan", "expected a list"),
        ({**record(), "tools": [{"description": "no name"}]}, "tools[0].name", "missing"),
        (
            {**record(), "tools": [{"name": "t", "arguments": "x"}]},
            "tools[0].arguments",
            "expected an object",
        ),
        ({**record(), "domain": 3}, "domain", "expected a string"),
    ],
)
def test_bad_records_name_the_field(tmp_path: Path, rec: dict, field: str, fragment: str) -> None:
    with pytest.raises(ImportFormatError) as err:
        import_one(tmp_path, rec)
    assert (err.value.line, err.value.field) == (1, field)
    assert fragment in str(err.value)


def test_files_the_suite_does_not_read(tmp_path: Path) -> None:
    mystery = tmp_path / "mystery.json"
    mystery.write_text('{"something": "else"}\n', "utf-8")
    with pytest.raises(ImportFormatError) as err:
        ultratool.import_files([mystery])
    assert err.value.file == str(mystery)
    assert "test.json" in str(err.value) and "tool_usage.json" in str(err.value)

    example = write_jsonl(tmp_path / "example" / "planning.json", [{"input": "q"}])
    with pytest.raises(ImportFormatError, match="few-shot examples"):
        ultratool.import_files([write_jsonl(tmp_path / "test.json", [record()]), example])

    alone = write_jsonl(tmp_path / "alone" / "planning.json", [{"reference": "1. x"}])
    with pytest.raises(ImportFormatError, match=r"give test\.json too"):
        ultratool.import_files([alone])


def test_any_stem_holding_ultratool_records_is_a_split(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "my_slice.jsonl", [record()])
    assert ultratool.import_files([path]).samples[0].split == "my_slice"


def test_two_languages_in_one_import_clash_on_ids(tmp_path: Path) -> None:
    english = write_jsonl(tmp_path / "en" / "test.json", [record()])
    chinese = write_jsonl(tmp_path / "zh" / "test.json", [record("六点叫醒我。")])
    bundle = ultratool.import_files([english, chinese])
    with pytest.raises(ImportFormatError) as err:
        validate_bundle(bundle)
    assert err.value.file == f"{chinese}, line 1"
    assert f"duplicate id '1' in split 'test'; first seen at {english}, line 1" in str(err.value)


def test_a_task_file_pairs_with_the_test_json_beside_it(tmp_path: Path) -> None:
    english = write_jsonl(tmp_path / "en" / "test.json", [record()])
    dev = write_jsonl(tmp_path / "en" / "dev.json", [record("Dev question.")])
    task = write_jsonl(
        tmp_path / "en" / "test_set" / "planning.json",
        [{"input": "Set an alarm for six.", "reference": "1. Set the alarm"}],
    )
    bundle = ultratool.import_files([english, dev, task])
    by_split = {s.split: s for s in bundle.samples}
    assert by_split["test"].reference["planning"] == "1. Set the alarm"
    assert "planning" not in by_split["dev"].reference


# --- database ----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_import_stores_totals_and_a_reimport_writes_nothing() -> None:
    summary = benchmark_import(suite="ultratool", paths=[FIXTURE])
    assert summary.benchmark == "UltraTool"
    assert summary.tools == 11
    assert summary.samples == {"test": 4}
    assert (summary.tools_written, summary.samples_written) == (11, 4)
    stored = Sample.objects.get(benchmark__name="UltraTool", split="test", external_id="2")
    assert stored.kind == "plan"
    assert stored.reference["tool_selection"] == [
        {"step": "1.1.2", "tool": "search_trains"},
        {"step": "2.1", "tool": "book_train_ticket"},
    ]
    assert Tool.objects.get(benchmark__name="UltraTool", name="set_alarm").category == "Weather"

    again = benchmark_import(suite="ultratool", paths=[FIXTURE])
    assert (again.tools_written, again.samples_written) == (0, 0)
    assert again.unchanged == 4
    assert (again.tools, again.samples) == (11, {"test": 4})


@pytest.mark.django_db
def test_demo_files_import() -> None:
    manifest = json.loads((DEMO / "manifest.json").read_text("utf-8"))
    assert manifest["suite"] == "ultratool"
    summary = benchmark_import(
        suite="ultratool",
        paths=[DEMO / name for name in manifest["files"]],
        benchmark_name=manifest["benchmark"],
        is_demo=True,
    )
    assert summary.benchmark == "UltraTool (demo)"
    assert summary.samples == {"test": 5}
    assert summary.tools == 10
    assert Benchmark.objects.get(name="UltraTool (demo)").is_demo
    sample = Sample.objects.get(benchmark__name="UltraTool (demo)", external_id="3")
    assert set(sample.reference) == {
        "plan",
        "steps",
        "planning",
        "tool_usage_awareness",
        "tool_usage",
    }


def test_each_record_keeps_its_text_and_a_changed_one_keeps_its_layout() -> None:
    from benchmarks.suites.ultratool.published import read_chunk, record_chunks, write_chunk

    # CRLF line ends, a blank line, a line of spaces, no line end after the last record
    text = '{"a": 1}\r\n\n{"b": "\u00e9"}\r\n  \n{"c": 2}'
    chunks = record_chunks(text, [1, 3, 5])
    assert chunks == ['{"a": 1}\r\n', '\n{"b": "\u00e9"}\r\n', '  \n{"c": 2}']
    assert "".join(chunks) == text
    kept = read_chunk(chunks[1])
    assert kept is not None
    assert write_chunk(kept, {"b": "\u00e9"}) == chunks[1]  # unchanged: the text itself
    assert write_chunk(kept, {"b": "\u00e8"}) == '\n{"b": "\u00e8"}\r\n'
    # a record written compactly with escapes is rewritten so
    escaped = read_chunk('{"b":"\\u00e9","n":[1,2]}\n')
    assert escaped is not None
    assert write_chunk(escaped, {"b": "\u00e8", "n": [1, 2]}) == '{"b":"\\u00e8","n":[1,2]}\n'
