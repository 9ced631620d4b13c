"""Export then import gives identical samples, per suite, on the published seed data (the
project's own demo files for the suites whose data is not public): import, export in the
suite's published format, import the export as a new benchmark, compare every sample and tool.

What a published format cannot carry is said in the test of that suite (and in the README)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.exports import benchmark_export
from benchmarks.models import Benchmark
from benchmarks.services import benchmark_import
from benchmarks.suites.registry import get_suite

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "benchmarks" / "demo"

SAMPLE_FIELDS = ("split", "external_id", "kind", "input", "reference", "candidate_tools")


def samples_of(name: str, *fields: str) -> dict[tuple[str, str], dict[str, Any]]:
    rows = Benchmark.objects.get(name=name).samples.values(*SAMPLE_FIELDS, *fields)
    return {(row["split"], row["external_id"]): row for row in rows}


def tools_of(name: str) -> dict[str, tuple[str, Any]]:
    rows = Benchmark.objects.get(name=name).tools.values_list("name", "description", "parameters")
    return {tool: (description, parameters) for tool, description, parameters in rows}


def round_trip(suite: str, paths: list[Path], out: Path, **import_options: Any) -> Path:
    """Import `paths` as "<suite> original", export it to `out`, import that as
    "<suite> again"; returns the folder written."""
    benchmark_import(suite=suite, paths=paths, benchmark_name=f"{suite} original", **import_options)
    export = benchmark_export(benchmark=Benchmark.objects.get(name=f"{suite} original"))
    export.write_to(out)
    exporter = get_suite(suite).exporter
    assert exporter is not None
    benchmark_import(
        suite=suite,
        paths=exporter.paths_to_import(out),
        benchmark_name=f"{suite} again",
    )
    return out


def assert_identical(suite: str, *fields: str) -> None:
    before, after = samples_of(f"{suite} original", *fields), samples_of(f"{suite} again", *fields)
    assert before, "nothing was imported"
    assert sorted(before) == sorted(after)
    for key, row in before.items():
        assert after[key] == row, key
    assert tools_of(f"{suite} original") == tools_of(f"{suite} again")


def test_generic_round_trip(tmp_path: Path) -> None:
    out = round_trip("generic", [DEMO / "generic" / "questions.jsonl"], tmp_path / "out")
    assert_identical("generic", "metadata")
    assert sorted(p.name for p in out.iterdir()) == ["provenance.json", "questions.jsonl"]


def test_wtueval_round_trip(tmp_path: Path) -> None:
    # The tool pool is not in WTU-Eval's files (evaluation adds it): there is none to carry.
    round_trip("wtueval", [DEMO / "wtueval" / "questions.jsonl"], tmp_path / "out")
    assert_identical("wtueval", "metadata")


def test_provenance_lists_no_change_for_an_unrefined_benchmark(tmp_path: Path) -> None:
    out = round_trip("wtueval", [DEMO / "wtueval" / "questions.jsonl"], tmp_path / "out")
    provenance = json.loads((out / "provenance.json").read_text())
    assert provenance["benchmark"] == "wtueval original" and provenance["format"] == "published"
    assert provenance["changed"] == [] and provenance["dropped"] == []
    assert provenance["samples"] == Benchmark.objects.get(name="wtueval original").samples.count()


def test_mtubench_round_trip(tmp_path: Path, seeddata: Path) -> None:
    # Every published record: its prompt verbatim, its answer object as published (it tells
    # {"": {}} from {}), the copies of a repeated id in their order.
    out = round_trip("mtubench", [seeddata / "mtubench"], tmp_path / "out")
    assert_identical("mtubench", "metadata")
    assert sorted(p.name for p in out.iterdir()) == [
        "M-M_eval.jsonl",
        "M-S_eval.jsonl",
        "OOD_eval.jsonl",
        "S-M_eval.jsonl",
        "S-S_eval.jsonl",
        "provenance.json",
    ]
    published = (seeddata / "mtubench" / "S-S_eval.jsonl").read_text().splitlines()
    written = (out / "S-S_eval.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in written] == [json.loads(line) for line in published]


def test_metatool_round_trip(tmp_path: Path, seeddata: Path) -> None:
    # Every seed file: the queries CSV, the golden pairs, the three test sets with the keys
    # they were published with, the scenario lists and the three tool files. The tool files
    # merge on import (the first description of a name wins), so the export writes each tool
    # once, into the file it was read from: the merged tools are identical, and the store
    # entries a plugin_des.json description shadowed are not written again.
    metatool = seeddata / "metatool"
    paths = [
        metatool / "all_clean_data_sample200.csv",
        metatool / "multi_tool_query_golden.json",
        metatool / "plugin_des.json",
        metatool / "big_tool_des.json",
        metatool / "plugin_info.json",
        metatool / "Task1_awareness_sample200.json",
        metatool / "Task2-Subtask3_reliability_sample100.json",
        metatool / "Task2-Subtask4_multi_tool_sample100.json",
        metatool / "scenario",
    ]
    out = round_trip("metatool", paths, tmp_path / "out")
    assert_identical("metatool", "metadata")
    assert (out / "Task1.json").exists() and (out / "scenario" / "Students.json").exists()
    header = (out / "all_clean_data.csv").read_text().splitlines()[0]
    assert header == "row_index,Query,Tool"


def test_stabletoolbench_round_trip(tmp_path: Path, seeddata: Path) -> None:
    # The six seed groups with their test_query_ids. Not carried: a second, different document
    # of an API that an earlier query published otherwise (the platform keeps the first), so
    # api_doc_differs is the one metadata key compared on its own.
    out = round_trip(
        "stabletoolbench", [seeddata / "stabletoolbench" / "solvable_queries"], tmp_path / "out"
    )
    assert_identical("stabletoolbench")
    before = samples_of("stabletoolbench original", "metadata")
    after = samples_of("stabletoolbench again", "metadata")
    for key, row in before.items():
        differs = row["metadata"].pop("api_doc_differs", None)
        assert after[key]["metadata"] == row["metadata"], key
        assert "api_doc_differs" not in after[key]["metadata"] or differs
    first = json.loads((out / "solvable_queries/test_instruction/G1_instruction.json").read_text())
    assert isinstance(first[0]["query_id"], int) and "relevant APIs" in first[0]
