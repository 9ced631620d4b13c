"""Export then import gives identical samples, per suite, on the published seed data (the
project's own demo files for the suites whose data is not public): import, export in the
suite's published format, import the export as a new benchmark, compare every sample and tool.

What a published format cannot carry is said in the test of that suite (and in the README)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.exports import ExportRefused, benchmark_export
from benchmarks.models import Benchmark, Sample
from benchmarks.services import benchmark_import, sample_revise
from benchmarks.suites.mtubench.gold import write_answer
from benchmarks.suites.registry import SUITE_MODULES, all_suites, get_suite

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
    provenance = benchmark_export(benchmark=Benchmark.objects.get(name=f"{suite} original"))
    assert b'"differs_when_read_back": []' in provenance.files["provenance.json"]
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


@pytest.mark.parametrize(
    "folder", [DEMO / "ultratool", ROOT / "tests/benchmarks/fixtures/ultratool"]
)
def test_ultratool_round_trip(tmp_path: Path, folder: Path) -> None:
    # UltraTool's data carries no licence, so the files are the project's own, in its format:
    # the plan of each sample (published call strings kept as written, the ones the strict
    # reader repairs and the ones no reader accepts among them) and the task files.
    paths = [folder / "test.json", *sorted((folder / "test_set").glob("*.json"))]
    out = round_trip("ultratool", paths, tmp_path / "out")
    assert_identical("ultratool", "metadata")
    assert (out / "test.json").exists() and (out / "test_set").is_dir()


def test_ultratool_writes_a_refined_call_as_the_call_reader_reads_it() -> None:
    from benchmarks.suites.toolcall import parse_tool_call
    from benchmarks.suites.ultratool.exporter import call_text

    arguments = {"time": "06:30", "n": 2, "x": [1.5, None], "o": {"it's": True}}
    text = call_text("set_alarm", arguments)
    assert text == "set_alarm(time='06:30', n=2, x=[1.5, None], o={\"it's\": True})"
    assert parse_tool_call(text).arguments == arguments
    with pytest.raises(ValueError, match="keyword argument"):
        call_text("set_alarm", {"start-time": "06:30"})


# --- refined samples: the published format carries the refinement -----------------------------


def export_and_reimport(suite: str, out: Path) -> None:
    export = benchmark_export(benchmark=Benchmark.objects.get(name=f"{suite} original"))
    export.write_to(out)
    exporter = get_suite(suite).exporter
    assert exporter is not None
    benchmark_import(
        suite=suite, paths=exporter.paths_to_import(out), benchmark_name=f"{suite} again"
    )


def revise(sample: Sample, *, input: dict[str, Any], reference: Any) -> None:
    sample_revise(
        sample_id=sample.pk, base_revision=sample.revision, input=input, reference=reference
    )
    sample.refresh_from_db()


def again(sample: Sample) -> Sample:
    return Sample.objects.get(
        benchmark__name=sample.benchmark.name.replace("original", "again"),
        split=sample.split,
        external_id=sample.external_id,
    )


def test_a_refined_mtubench_turn_is_exported_as_its_new_answer_and_query(
    tmp_path: Path, seeddata: Path
) -> None:
    benchmark_import(
        suite="mtubench",
        paths=[seeddata / "mtubench" / "S-M_eval.jsonl"],
        benchmark_name="mtubench original",
    )
    sample = next(
        s
        for s in Sample.objects.filter(benchmark__name="mtubench original").order_by("id")
        if len(s.reference["calls"]) >= 2
    )
    old = sample.reference
    calls = [*old["calls"][1:], {**old["calls"][0], "arguments": {"note": "edited"}}]
    reference = {**old, "calls": calls}
    write_answer(calls, old, reference, sample.split)
    revise(sample, input={**sample.input, "query": "A refined question?"}, reference=reference)

    export_and_reimport("mtubench", tmp_path / "out")
    # the platform keeps the dialogue's turns as published beside the refined query; read
    # back, the turns hold the refined query too, and provenance.json says so
    provenance = json.loads((tmp_path / "out" / "provenance.json").read_text())
    assert provenance["differs_when_read_back"] == [
        {"external_id": sample.external_id, "split": sample.split, "fields": ["input"]}
    ]
    read = again(sample)
    assert read.reference == sample.reference
    assert read.input["query"] == "A refined question?"
    # the prompt's current user turn is the refined one; the rest of the prompt is as published
    assert read.input["prompt"].endswith(
        sample.input["prompt"][sample.input["prompt"].rindex(old_query(sample)) :].replace(
            old_query(sample), "A refined question?"
        )
    )


def old_query(sample: Sample) -> str:
    return next(t["content"] for t in reversed(sample.input["turns"]) if t["role"] == "user")


def test_a_refined_ultratool_call_is_exported_as_a_call_the_importer_reads(
    tmp_path: Path,
) -> None:
    folder = DEMO / "ultratool"
    benchmark_import(
        suite="ultratool",
        paths=[folder / "test.json", *sorted((folder / "test_set").glob("*.json"))],
        benchmark_name="ultratool original",
    )
    sample = Sample.objects.get(benchmark__name="ultratool original", external_id="1")
    reference = json.loads(json.dumps(sample.reference))
    step = next(s for s in reference["steps"] if s["arguments"])
    # as the refinement editor writes a changed call: new arguments, the published text gone
    step["arguments"] = {**step["arguments"], "city": "Utrecht", "days": 2}
    step.pop("call", None)
    for node in walk(reference["plan"]):
        if node["step"] == step["step"]:
            node.update(arguments=step["arguments"])
            node.pop("call", None)
    revise(sample, input=sample.input, reference=reference)

    export_and_reimport("ultratool", tmp_path / "out")
    # read back, the step has the call text it was written as (stored as the published call),
    # which the refined step did not have: provenance.json names the field
    provenance = json.loads((tmp_path / "out" / "provenance.json").read_text())
    assert provenance["differs_when_read_back"] == [
        {"external_id": "1", "split": "test", "fields": ["reference"]}
    ]
    read = again(sample)
    written = next(s for s in read.reference["steps"] if s["step"] == step["step"])
    assert written["arguments"] == step["arguments"]
    assert written["call"].startswith(f"{step['tool']}(") and "city='Utrecht'" in written["call"]
    # every other step, and every task gold, as refined
    strip = [{k: v for k, v in s.items() if k != "call"} for s in read.reference["steps"]]
    assert strip == [{k: v for k, v in s.items() if k != "call"} for s in reference["steps"]]
    assert {k: v for k, v in read.reference.items() if k not in ("steps", "plan")} == {
        k: v for k, v in reference.items() if k not in ("steps", "plan")
    }


def walk(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [n for node in nodes for n in (node, *walk(node.get("children") or []))]


def test_refined_metatool_and_generic_golds_round_trip_exactly(
    tmp_path: Path, seeddata: Path
) -> None:
    metatool = seeddata / "metatool"
    benchmark_import(
        suite="metatool",
        paths=[metatool / "all_clean_data_sample200.csv", metatool / "plugin_des.json"],
        benchmark_name="metatool original",
    )
    query = Sample.objects.filter(benchmark__name="metatool original").order_by("id").first()
    other = next(
        t
        for t in Benchmark.objects.get(name="metatool original").tools.values_list(
            "name", flat=True
        )
        if t != query.reference["tool"]
    )
    revise(query, input={"query": "A clearer, refined query"}, reference={"tool": other})
    export_and_reimport("metatool", tmp_path / "metatool")
    read = again(query)
    assert (read.input, read.reference) == (query.input, query.reference)

    benchmark_import(
        suite="generic",
        paths=[DEMO / "generic" / "questions.jsonl"],
        benchmark_name="generic original",
    )
    question = Sample.objects.get(benchmark__name="generic original", external_id="demo-1")
    reference = {
        **question.reference,
        "tool_calls": [{"name": "get_weather", "arguments": {"city": "Gent"}}],
    }
    revise(question, input=question.input, reference=reference)
    export_and_reimport("generic", tmp_path / "generic")
    assert again(question).reference == reference


# --- every suite, and one without a published format ----------------------------------------


def test_every_registered_suite_declares_its_exporter() -> None:
    assert [s.name for s in all_suites() if s.exporter is None] == []


def test_a_suite_without_an_exporter_exports_as_jsonl_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(SUITE_MODULES, "toy", "tests.benchmarks.toy_suite")
    path = tmp_path / "parity.jsonl"
    path.write_text("".join(json.dumps({"id": i, "n": i}) + "\n" for i in range(3)))
    benchmark_import(suite="toy", paths=[path])
    benchmark = Benchmark.objects.get(suite="toy")
    with pytest.raises(ExportRefused, match="no published format") as refused:
        benchmark_export(benchmark=benchmark)
    assert refused.value.field == "format"
    export = benchmark_export(benchmark=benchmark, fmt="jsonl")
    lines = [json.loads(line) for line in export.files["samples.jsonl"].decode().splitlines()]
    stored = list(benchmark.samples.order_by("id").values(*SAMPLE_FIELDS, "metadata"))
    assert lines == stored


def test_an_export_that_would_not_import_back_is_refused_naming_file_line_and_field() -> None:
    # given a WTU-Eval gold refined as free JSON into an answer the format cannot hold
    benchmark_import(
        suite="wtueval",
        paths=[DEMO / "wtueval" / "questions.jsonl"],
        benchmark_name="wtueval original",
    )
    sample = Sample.objects.filter(benchmark__name="wtueval original").order_by("id")[1]
    revise(sample, input=sample.input, reference={**sample.reference, "answer": []})
    # when it is exported, then the importer's own error says where
    with pytest.raises(ExportRefused) as refused:
        benchmark_export(benchmark=Benchmark.objects.get(name="wtueval original"))
    message = str(refused.value)
    assert "would not import back: questions.jsonl, line 2, field 'answer'" in message
    assert refused.value.field == "answer"
    # the platform's JSON Lines still has it as stored
    assert benchmark_export(benchmark=Benchmark.objects.get(name="wtueval original"), fmt="jsonl")
