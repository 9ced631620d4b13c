"""MetaTool (ToolE) import: the published files, hand-checked, and the errors bad files raise."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from benchmarks.kit.base import ImportFormatError, merge_tools, validate_bundle
from benchmarks.models import Benchmark, Sample, Tool
from benchmarks.services import benchmark_import
from benchmarks.suites import metatool

DEMO = Path(__file__).resolve().parents[3] / "benchmarks" / "demo" / "metatool"

FILES = (
    "all_clean_data_sample200.csv",
    "multi_tool_query_golden.json",
    "plugin_des.json",
    "big_tool_des.json",
    "plugin_info.json",
    "Task1_awareness_sample200.json",
    "Task2-Subtask3_reliability_sample100.json",
    "Task2-Subtask4_multi_tool_sample100.json",
    "scenario",
)
SPLITS = {
    "queries": 200,
    "multi_tool_golden": 497,
    "awareness": 200,
    "reliability": 100,
    "multi_tool": 100,
    "scenario_lists": 9,
}
# plugin_des 199 + plugin_info's 388 distinct names - 153 names in both; big_tool_des's 47
# names are all in plugin_des already.
MERGED_TOOLS = 434


def bare(metadata: dict[str, Any]) -> dict[str, Any]:
    """Metadata without "published", the layout the exporter writes the record back in
    (test_export_published.py tests it)."""
    return {k: v for k, v in metadata.items() if k != "published"}


def seed(seeddata: Path, name: str) -> Path:
    return seeddata / "metatool" / name


def of_split(samples: list[Any], split: str) -> list[Any]:
    return [s for s in samples if s.split == split]


@pytest.fixture(scope="module")
def everything(seeddata: Path) -> Any:
    bundle = metatool.import_files([seed(seeddata, name) for name in FILES])
    validate_bundle(bundle)
    return bundle


# --- the real files -----------------------------------------------------------------------------


def test_counts_per_split_and_tools(everything: Any) -> None:
    assert Counter(s.split for s in everything.samples) == SPLITS
    assert len(everything.tools) == 199 + 47 + 390
    assert len(merge_tools(everything.tools)) == MERGED_TOOLS
    assert all(s.kind == "query" for s in everything.samples)


def test_csv_row_with_row_index(everything: Any, seeddata: Path) -> None:
    queries = of_split(everything.samples, "queries")
    row = queries[9]  # line 11 of the file
    assert row.external_id == "1651"
    assert row.input == {
        "query": "Hey, I'm currently facing financial constraints, but I'm still interested in "
        "indulging in the experience of online shopping and exploring various options within "
        "my limited budget."
    }
    assert row.reference == {"tool": "Discount"}
    assert row.candidate_tools == [] and bare(row.metadata) == {}
    assert row.source == f"{seed(seeddata, 'all_clean_data_sample200.csv')}, line 11"
    last = queries[-1]
    assert (last.external_id, last.input["query"], last.reference) == (
        "20473",
        "Is there any chance of snow in Moscow tomorrow?",
        {"tool": "WeatherTool"},
    )


def test_csv_without_row_index_numbers_data_rows(tmp_path: Path) -> None:
    path = tmp_path / "all_clean_data.csv"
    path.write_text('Query,Tool\n"Rain, or not?",WeatherTool\nA book.,BookTool\n', "utf-8")
    calls: list[int] = []
    bundle = metatool.import_files([path], progress=calls.append)
    assert [(s.external_id, s.input["query"], s.reference["tool"]) for s in bundle.samples] == [
        ("1", "Rain, or not?", "WeatherTool"),
        ("2", "A book.", "BookTool"),
    ]
    assert sum(calls) == 2


def test_multi_tool_golden(everything: Any) -> None:
    golden = of_split(everything.samples, "multi_tool_golden")
    assert golden[0].external_id == "0"
    assert golden[0].input == {
        "query": "I want to know the latest news about Tesla and how it has impacted the stock "
        "market."
    }
    assert golden[0].reference == {"tools": ["FinanceTool", "NewsTool"]}
    assert golden[496].reference == {"tools": ["Discount", "ProductSearch"]}
    assert all(len(s.reference["tools"]) == 2 for s in golden)


def test_awareness(everything: Any) -> None:
    items = of_split(everything.samples, "awareness")
    assert Counter(s.reference["needs_tool"] for s in items) == {True: 100, False: 100}
    first = items[0]
    assert first.external_id == "16"  # source_index: the file has no `index`
    assert first.reference == {"needs_tool": True, "tool": "ArtCollection"}
    assert first.input["query"] == (
        "I want to see abstract paintings from the 20th century. "
        "Can you find any in the museum's database?"
    )
    assert first.input["prompt"].startswith("You are an intelligent agent")
    assert bare(first.metadata) == {"source_index": 16}
    negative = next(s for s in items if not s.reference["needs_tool"])
    assert negative.external_id == "17"
    assert negative.input["query"] == "If a square has a diagonal of length 10, what is its area?"
    assert negative.reference == {"needs_tool": False, "tool": None}
    assert all(s.candidate_tools == [] for s in items)


def test_reliability_never_offers_the_gold_tool(everything: Any) -> None:
    items = of_split(everything.samples, "reliability")
    for item in items:
        assert item.candidate_tools, item.external_id
        assert item.reference["tool"] not in item.candidate_tools, item.external_id
        assert item.reference["expected"] == []
    first = items[0]
    # `index` is 9 in every record, so the unique source_index is the id.
    assert first.external_id == "10"
    assert first.metadata["index"] == 9
    assert first.reference == {"tool": "copilot", "expected": []}
    assert first.candidate_tools == [
        "PolishTool",
        "locator",
        "ApexMap",
        "MapTool",
        "Zapier",
        "tailor_erp",
        "recipe_retrieval",
        "storybird_stories",
        "hubbubworld_hubbub_1",
        "Man_of_Many",
    ]
    assert "thought_prompt" in first.metadata
    assert first.input["prompt"].startswith('"You are a helpful AI assistant.')
    assert all(len(s.candidate_tools) == 10 for s in items)


def test_multi_tool_items_offer_both_gold_tools(everything: Any) -> None:
    items = of_split(everything.samples, "multi_tool")
    for item in items:
        assert len(item.candidate_tools) == 10
        assert set(item.reference["tools"]) <= set(item.candidate_tools), item.external_id
    first = items[0]
    assert first.external_id == "13"
    assert first.reference == {"tools": ["FinanceTool", "TripTool"]}
    assert first.candidate_tools[:3] == ["dart", "haulingbuddies", "web_scraper"]
    assert first.input["query"].startswith('"What is the price of Apple stock right now?')


def test_scenario_lists(everything: Any, seeddata: Path) -> None:
    lists = {s.external_id: s for s in of_split(everything.samples, "scenario_lists")}
    assert sorted(lists) == [
        "Finance Staff",
        "Housewife",
        "Software Engineer",
        "Students",
        "TopTool_top10",
        "TopTool_top15",
        "TopTool_top5",
        "artists&designers",
        "elders",
    ]
    top5 = lists["TopTool_top5"]
    assert top5.input == {"scenario": "TopTool_top5"}
    assert top5.candidate_tools == [
        "FinanceTool",
        "ProductSearch",
        "JobTool",
        "TripTool",
        "PDF&URLTool",
    ]
    assert top5.reference is None and bare(top5.metadata) == {"ref": None}
    assert lists["Finance Staff"].metadata["ref"][0].startswith("https://etfdb.com/")
    # One file can be given alone too.
    alone = metatool.import_files([seed(seeddata, "scenario/elders.json")])
    assert alone.samples[0].candidate_tools[0] == "NewsTool"


def test_every_offered_tool_is_described(everything: Any) -> None:
    names = {t.name for t in everything.tools}
    for sample in everything.samples:
        assert set(sample.candidate_tools) <= names, sample.external_id
        ref = sample.reference or {}
        assert {ref.get("tool")} - {None} <= names
        assert set(ref.get("tools", [])) <= names


def test_tool_records_and_their_precedence(seeddata: Path) -> None:
    # given the store listing first, the benchmark's own descriptions still win
    names = ("plugin_info.json", "big_tool_des.json", "plugin_des.json")
    paths = [seed(seeddata, n) for n in names]
    tools = merge_tools(metatool.import_files(paths).tools)
    by_name = {t.name: t for t in tools}
    assert len(tools) == MERGED_TOOLS
    assert {k: v for k, v in by_name["local"].raw.items() if k not in ("published", "also")} == {
        "name": "local",
        "description": "Discover and support restaurants, shops & services near you.",
        "source": "plugin_des.json",
    }
    assert by_name["FinanceTool"].raw["source"] == "plugin_des.json"
    vio = by_name["vio_com"]
    assert vio.description.startswith("Search for hotels or other accommodations in any place.")
    assert vio.raw["name_for_human"] == "Vio.com"
    # plugin_info lists SEO twice: the first entry is kept
    assert by_name["SEO"].description.startswith("Send a URL and keyword")


# --- bad input ----------------------------------------------------------------------------------


def error_for(paths: list[Path]) -> ImportFormatError:
    with pytest.raises(ImportFormatError) as caught:
        metatool.import_files(paths)
    return caught.value


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), "utf-8")
    return path


def test_csv_missing_tool_column(tmp_path: Path) -> None:
    error = error_for([write(tmp_path / "all_clean_data.csv", "Query\nWill it rain?\n")])
    assert error.file == str(tmp_path / "all_clean_data.csv") and error.line == 1
    assert "Tool" in error.message


@pytest.mark.parametrize(
    ("body", "line", "field"),
    [
        ("Query,Tool\nok,WeatherTool\n,BookTool\n", 3, "Query"),
        ("Query,Tool\nok,WeatherTool\nhi,  \n", 3, "Tool"),
        ("row_index,Query,Tool\n,ok,WeatherTool\n", 2, "row_index"),
        ("row_index,Query,Tool\n7,a,WeatherTool\n8,b,BookTool\n7,c,BookTool\n", 4, "row_index"),
    ],
)
def test_csv_empty_cells_and_repeated_index(
    tmp_path: Path, body: str, line: int, field: str
) -> None:
    error = error_for([write(tmp_path / "q.csv", body)])
    assert (error.file, error.line, error.field) == (str(tmp_path / "q.csv"), line, field)


def test_repeated_row_index_names_both_lines(tmp_path: Path) -> None:
    body = "row_index,Query,Tool\n7,a,WeatherTool\n8,b,BookTool\n7,c,BookTool\n"
    error = error_for([write(tmp_path / "q.csv", body)])
    assert "duplicate id '7'" in error.message and "line 2" in error.message


TASK1_GOOD = {"thought_prompt": "Need a tool?", "label": "positive", "tool": "T", "query": "q"}


def test_task1_record_without_label(tmp_path: Path) -> None:
    records = [
        TASK1_GOOD | {"source_index": 5},
        {"thought_prompt": "p", "query": "q", "source_index": 6},
    ]
    error = error_for([write(tmp_path / "Task1.json", records)])
    assert (error.file, error.record, error.field) == (str(tmp_path / "Task1.json"), "6", "label")
    assert "missing" in error.message


def test_task1_label_must_be_positive_or_negative(tmp_path: Path) -> None:
    error = error_for([write(tmp_path / "Task1.json", [TASK1_GOOD | {"label": "yes"}])])
    assert (error.record, error.field) == ("0", "label")
    assert "'yes'" in error.message and "positive" in error.message


def test_task1_positive_needs_its_tool(tmp_path: Path) -> None:
    record = {k: v for k, v in TASK1_GOOD.items() if k != "tool"}
    error = error_for([write(tmp_path / "Task1.json", [record])])
    assert (error.record, error.field) == ("0", "tool")


def action_prompt(*names: str) -> str:
    lines = "".join(f"{n}. tool name: {t}, tool description: d\n" for n, t in enumerate(names, 1))
    return (
        f"Pick one.\n{metatool.LIST_START}\n{lines}\n{metatool.LIST_END}\nHere are some examples:"
    )


def test_reliability_item_offering_its_gold_tool_is_refused(tmp_path: Path) -> None:
    records = [{"action_prompt": action_prompt("A", "B"), "tool": "B", "query": "q"}]
    error = error_for([write(tmp_path / "Task2-Subtask3.json", records)])
    assert (error.record, error.field) == ("0", "tool")
    assert "'B'" in error.message


def test_multi_tool_item_must_offer_both_gold_tools(tmp_path: Path) -> None:
    records = [{"action_prompt": action_prompt("A", "B"), "tool": ["A", "C"], "query": "q"}]
    error = error_for([write(tmp_path / "Task2-Subtask4.json", records)])
    assert (error.record, error.field) == ("0", "tool") and "C" in error.message


def test_action_prompt_without_tool_list(tmp_path: Path) -> None:
    records = [{"action_prompt": "Pick a tool.", "tool": "B", "query": "q"}]
    error = error_for([write(tmp_path / "Task2-Subtask3_x.json", records)])
    assert (error.record, error.field) == ("0", "action_prompt")


def test_golden_needs_two_tools(tmp_path: Path) -> None:
    records = [{"query": "q", "tool": ["A", "B"]}, {"query": "q", "tool": ["A"]}]
    error = error_for([write(tmp_path / "multi_tool_query_golden.json", records)])
    assert (error.record, error.field) == (1, "tool")


def test_tool_description_not_a_string(tmp_path: Path) -> None:
    error = error_for([write(tmp_path / "big_tool_des.json", {"Good": "x", "MapTool": 3})])
    assert (error.record, error.field) == ("MapTool", "description")
    assert "MapTool" in str(error) and "big_tool_des.json" in str(error)
    info = [{"name_for_model": "shop", "description_for_model": ["x"]}]
    error = error_for([write(tmp_path / "plugin_info.json", info)])
    assert "shop" in str(error) and error.field == "description_for_model"


def test_scenario_without_tools(tmp_path: Path) -> None:
    error = error_for([write(tmp_path / "scenario" / "Pilots.json", {"ref": []})])
    assert (error.record, error.field) == ("Pilots", "Tools")


def test_unknown_file_names_accepted_ones(tmp_path: Path) -> None:
    error = error_for([write(tmp_path / "Task3.json", [])])
    assert error.file == str(tmp_path / "Task3.json")
    assert "plugin_des.json" in error.message and "Task2-Subtask4" in error.message


# --- the demo and the database ------------------------------------------------------------------


def demo_paths() -> tuple[dict[str, Any], list[Path]]:
    manifest = json.loads((DEMO / "manifest.json").read_text(encoding="utf-8"))
    return manifest, [DEMO / name for name in manifest["files"]]


def test_demo_files_parse() -> None:
    manifest, paths = demo_paths()
    assert manifest["suite"] == "metatool" and manifest["benchmark"] == "MetaTool (demo)"
    bundle = metatool.import_files(paths)
    validate_bundle(bundle)
    assert Counter(s.split for s in bundle.samples) == {
        "queries": 12,
        "awareness": 6,
        "reliability": 2,
        "scenario_lists": 1,
    }
    names = {t.name for t in bundle.tools}
    assert len(names) == 8
    for sample in bundle.samples:
        assert set(sample.candidate_tools) <= names
        assert sample.external_id.startswith("demo-") or sample.split == "scenario_lists"
        if "prompt" in sample.input:
            assert sample.input["prompt"].startswith("[Demo prompt written for this platform]")
        if sample.split == "reliability":
            assert sample.reference["tool"] in names - set(sample.candidate_tools)


@pytest.mark.django_db
def test_import_all_seed_files_then_reimport_writes_nothing(seeddata: Path) -> None:
    paths = [seed(seeddata, name) for name in FILES]
    summary = benchmark_import(suite="metatool", paths=paths)
    assert summary.benchmark == "MetaTool"
    assert summary.samples == SPLITS
    assert summary.tools == MERGED_TOOLS
    assert (summary.samples_written, summary.tools_written) == (1106, MERGED_TOOLS)
    stored = Sample.objects.get(benchmark__name="MetaTool", split="reliability", external_id="10")
    assert stored.reference == {"tool": "copilot", "expected": []}
    assert stored.candidate_tools[0] == "PolishTool"
    assert Tool.objects.get(benchmark__name="MetaTool", name="vio_com").raw["name_for_human"] == (
        "Vio.com"
    )

    again = benchmark_import(suite="metatool", paths=paths)
    assert (again.samples_written, again.tools_written) == (0, 0)
    assert again.unchanged == 1106


@pytest.mark.django_db
def test_demo_imports() -> None:
    manifest, paths = demo_paths()
    summary = benchmark_import(
        suite="metatool", paths=paths, benchmark_name=manifest["benchmark"], is_demo=True
    )
    assert summary.samples == {
        "queries": 12,
        "awareness": 6,
        "reliability": 2,
        "scenario_lists": 1,
    }
    assert summary.tools == 8
    assert Benchmark.objects.get(name="MetaTool (demo)").is_demo
