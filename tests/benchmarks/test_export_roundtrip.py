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
