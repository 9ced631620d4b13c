"""`--format published` gives back the files that came in (issue 28, section 2), for MetaTool,
StableToolBench and MTU-Bench (UltraTool's are in test_export_roundtrip.py): the project's own
fixture files in each published layout (tests/benchmarks/fixtures/<suite>_published/, with the
quirks of the real files: key orders no sort gives, indentation of 1, 2 or 4 spaces, escaped and
unescaped non-ASCII, files with and without a final line end, CRLF in the CSV, records written by
hand) import and export byte for byte, and each kind of refinement changes the exported files
exactly where it changed the sample. The real seed slices, when present, round-trip too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from annotation import draft_editing
from benchmarks.exports import DROPPED, benchmark_export
from benchmarks.kit.registry import get_suite
from benchmarks.models import Benchmark, Sample
from benchmarks.services import benchmark_import, sample_revise, samples_annotate

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "benchmarks" / "fixtures"
SEEDDATA = ROOT.parent / "shared" / "seeddata"

METATOOL = FIXTURES / "metatool_published"
STB = FIXTURES / "stabletoolbench_published"
MTU = FIXTURES / "mtubench_published"


def metatool_paths(folder: Path = METATOOL) -> list[Path]:
    return [
        *sorted(p for p in folder.iterdir() if p.suffix in (".csv", ".json")),
        folder / "scenario",
    ]


def published_files(suite: str) -> dict[str, Path]:
    """The fixture's files by the name the export writes them under."""
    if suite == "metatool":
        files = [p for p in METATOOL.rglob("*") if p.suffix in (".csv", ".json")]
        return {p.relative_to(METATOOL).as_posix(): p for p in files}
    if suite == "stabletoolbench":
        return {p.relative_to(STB).as_posix(): p for p in STB.rglob("*.json")}
    return {p.name: p for p in MTU.glob("*.jsonl")}


def import_paths(suite: str) -> list[Path]:
    if suite == "metatool":
        return metatool_paths()
    if suite == "stabletoolbench":
        return [STB / "solvable_queries"]
    return sorted(MTU.glob("*.jsonl"))


def load(suite: str) -> None:
    benchmark_import(suite=suite, paths=import_paths(suite), benchmark_name=f"{suite} original")


def export(suite: str, out: Path) -> dict[str, bytes]:
    """The benchmark "<suite> original" exported as published into `out`, then read back as
    "<suite> again"; the files written, provenance.json aside."""
    written = benchmark_export(benchmark=Benchmark.objects.get(name=f"{suite} original"))
    written.write_to(out)
    exporter = get_suite(suite).exporter
    assert exporter is not None
    benchmark_import(
        suite=suite, paths=exporter.paths_to_import(out), benchmark_name=f"{suite} again"
    )
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in out.rglob("*")
        if p.is_file() and p.name != "provenance.json"
    }


@pytest.mark.parametrize("suite", ["metatool", "stabletoolbench", "mtubench"])
def test_an_unrefined_benchmark_exports_its_published_files_byte_for_byte(
    tmp_path: Path, suite: str
) -> None:
    load(suite)
    written = export(suite, tmp_path / "out")
    expected = {name: path.read_bytes() for name, path in published_files(suite).items()}
    assert sorted(written) == sorted(expected)
    for name, data in expected.items():
        assert written[name] == data, name


# --- the real seed slices -----------------------------------------------------------------------

SEED_FILES = {
    # suite: (what to import, {exported name: seed file}); StableToolBench's test_query_ids
    # slices list the ids of the whole group, more than the 50 queries sliced, so only the
    # query files can come back whole.
    "metatool": (
        [
            "metatool/all_clean_data_sample200.csv",
            "metatool/multi_tool_query_golden.json",
            "metatool/plugin_des.json",
            "metatool/big_tool_des.json",
            "metatool/plugin_info.json",
            "metatool/Task1_awareness_sample200.json",
            "metatool/Task2-Subtask3_reliability_sample100.json",
            "metatool/Task2-Subtask4_multi_tool_sample100.json",
            "metatool/scenario",
        ],
        {
            "all_clean_data.csv": "metatool/all_clean_data_sample200.csv",
            "multi_tool_query_golden.json": "metatool/multi_tool_query_golden.json",
            "plugin_des.json": "metatool/plugin_des.json",
            "big_tool_des.json": "metatool/big_tool_des.json",
            "plugin_info.json": "metatool/plugin_info.json",
            "Task1.json": "metatool/Task1_awareness_sample200.json",
            "Task2-Subtask3.json": "metatool/Task2-Subtask3_reliability_sample100.json",
            "Task2-Subtask4.json": "metatool/Task2-Subtask4_multi_tool_sample100.json",
            **{
                f"scenario/{name}.json": f"metatool/scenario/{name}.json"
                for name in (
                    "Finance Staff",
                    "Housewife",
                    "Software Engineer",
                    "Students",
                    "TopTool_top10",
                    "TopTool_top15",
                    "TopTool_top5",
                    "artists&designers",
                    "elders",
                )
            },
        },
    ),
    "stabletoolbench": (
        [
            f"stabletoolbench/solvable_queries/test_instruction/{group}.first50.json"
            for group in (
                "G1_category",
                "G1_instruction",
                "G1_tool",
                "G2_category",
                "G2_instruction",
                "G3_instruction",
            )
        ],
        {
            f"solvable_queries/test_instruction/{group}.json": (
                f"stabletoolbench/solvable_queries/test_instruction/{group}.first50.json"
            )
            for group in (
                "G1_category",
                "G1_instruction",
                "G1_tool",
                "G2_category",
                "G2_instruction",
                "G3_instruction",
            )
        },
    ),
    "mtubench": (
        [f"mtubench/{split}_eval.jsonl" for split in ("S-S", "S-M", "M-S", "M-M", "OOD")],
        {
            f"{split}_eval.jsonl": f"mtubench/{split}_eval.jsonl"
            for split in ("S-S", "S-M", "M-S", "M-M", "OOD")
        },
    ),
}


@pytest.mark.parametrize("suite", sorted(SEED_FILES))
def test_the_seed_slices_export_byte_for_byte(tmp_path: Path, suite: str) -> None:
    given, compared = SEED_FILES[suite]
    missing = [name for name in given if not (SEEDDATA / name).exists()]
    if missing:
        pytest.skip(f"the shared seed data is not beside the checkout: no {missing[0]}")
    benchmark_import(
        suite=suite, paths=[SEEDDATA / name for name in given], benchmark_name=f"{suite} original"
    )
    written = export(suite, tmp_path / "out")
    for name, seed in compared.items():
        assert written[name] == (SEEDDATA / seed).read_bytes(), seed


# --- a refinement changes the files only where it changed the sample -----------------------------


def sample(suite: str, split: str, external_id: str) -> Sample:
    return Sample.objects.get(
        benchmark__name=f"{suite} original", split=split, external_id=external_id
    )


def revise(target: Sample, *, input: Any = None, reference: Any = None) -> None:
    sample_revise(
        sample_id=target.pk,
        base_revision=target.revision,
        input=target.input if input is None else input,
        reference=target.reference if reference is None else reference,
    )


def drop(target: Sample) -> None:
    samples_annotate(values={target.pk: {DROPPED: 1}})


def assert_exported_with(
    suite: str, tmp_path: Path, edits: dict[str, list[tuple[str, str]]]
) -> None:
    """The export is the published files with, per file, each (old, new) text replaced: each
    old text found exactly once; every other file as published."""
    written = export(suite, tmp_path / "out")
    for name, path in published_files(suite).items():
        expected = path.read_bytes().decode()  # CRLF kept
        for old, new in edits.get(name, []):
            assert expected.count(old) == 1, (name, old)
            expected = expected.replace(old, new)
        assert written[name].decode() == expected, name


def record_text(path: Path, index: int) -> str:
    """The text of record `index` of a JSON list file written by json.dumps(indent=1)."""
    records = json.loads(path.read_text("utf-8"))
    return json.dumps(records[index], indent=1, ensure_ascii=False).replace("\n", "\n ")


METATOOL_KINDS = ("query", "query of a test set", "gold", "gold of a test set", "drop")


@pytest.mark.parametrize("kind", METATOOL_KINDS)
def test_a_metatool_refinement_changes_only_its_record(tmp_path: Path, kind: str) -> None:
    load("metatool")
    edits: dict[str, list[tuple[str, str]]]
    if kind == "query":
        target = sample("metatool", "queries", "2")
        query = 'Will it snow in Gent tomorrow, or is it "just cloudy"?'
        revise(target, input={"query": query})
        edits = {
            "all_clean_data.csv": [
                ('"Will it rain in Gent', '"Will it snow in Gent'),
            ]
        }
    elif kind == "query of a test set":
        # the record's query only: its thought_prompt is the benchmark's text, as published
        target = sample("metatool", "awareness", "1")
        revise(target, input={**target.input, "query": "Tell me a joke about bakeries"})
        edits = {
            "Task1.json": [
                (
                    '"query": "Tell me a joke about caf\u00e9s"',
                    '"query": "Tell me a joke about bakeries"',
                )
            ]
        }
    elif kind == "gold":
        target = sample("metatool", "queries", "3")
        revise(target, reference={"tool": "NoteKeeper"})
        edits = {"all_clean_data.csv": [('cheese?",RecipeBox\r\n', 'cheese?",NoteKeeper\r\n')]}
    elif kind == "gold of a test set":
        target = sample("metatool", "reliability", "31")
        revise(target, reference={**target.reference, "tool": "CurrencyDemo"})
        edits = {
            "Task2-Subtask3.json": [
                (
                    '"source_index": 31,\n  "tool": "RecipeBox"',
                    '"source_index": 31,\n  "tool": "CurrencyDemo"',
                )
            ]
        }
    else:
        target = sample("metatool", "awareness", "0")
        drop(target)
        edits = {"Task1.json": [(record_text(METATOOL / "Task1.json", 0) + ",\n ", "")]}
    assert_exported_with("metatool", tmp_path, edits)
    if kind != "drop":
        read = Sample.objects.get(
            benchmark__name="metatool again", split=target.split, external_id=target.external_id
        )
        target.refresh_from_db()
        assert (read.input, read.reference) == (target.input, target.reference)


STB_KINDS = ("query", "gold", "drop")
FERRY_PAIR = '[\n                "Ferry Demo",\n                "Departures"\n            ]'
ROUTE_PAIR = '[\n                "Ferry Demo",\n                "Route by id"\n            ]'


@pytest.mark.parametrize("kind", STB_KINDS)
def test_a_stabletoolbench_refinement_changes_only_its_record(tmp_path: Path, kind: str) -> None:
    load("stabletoolbench")
    target = sample("stabletoolbench", "G1_instruction", "101")
    instruction = "solvable_queries/test_instruction/G1_instruction.json"
    if kind == "query":
        revise(target, input={"query": "When does the first ferry leave Harlingen?"})
        edits = {
            instruction: [
                (
                    '"query": "When does the next ferry leave Harlingen, and which route is 12?"',
                    '"query": "When does the first ferry leave Harlingen?"',
                )
            ]
        }
    elif kind == "gold":
        reference = target.reference
        revise(
            target,
            reference={
                "relevant_apis": reference["relevant_apis"][:1],
                "relevant_tools": reference["relevant_tools"][:1],
            },
        )
        edits = {instruction: [(f"{FERRY_PAIR},\n            {ROUTE_PAIR}", FERRY_PAIR)]}
    else:
        drop(target)
        published = json.loads((STB / instruction).read_text())
        first = json.dumps(published[0], indent=4).replace("\n", "\n    ")
        edits = {
            instruction: [(first + ",\n    ", "")],
            "solvable_queries/test_query_ids/G1_instruction.json": [('    "101": 0,\n', "")],
        }
    assert_exported_with("stabletoolbench", tmp_path, edits)
    if kind != "drop":
        read = Sample.objects.get(
            benchmark__name="stabletoolbench again", split="G1_instruction", external_id="101"
        )
        target.refresh_from_db()
        assert (read.input, read.reference) == (target.input, target.reference)


def calls_edit(target: Sample, edit: Any) -> None:
    """A calls refinement as the editor applies it: the draft, one operation, written back."""
    calls = edit(draft_editing.calls_from_reference(target.reference))
    revise(
        target,
        reference=draft_editing.calls_to_reference(calls, target.reference, split=target.split),
    )


MTU_KINDS = (
    "query",
    "arguments",
    "arguments, escaped",
    "tool",
    "insert",
    "delete",
    "move",
    "drop",
)
LEIDEN = (
    '{"FindProvider": {"offers_cosmetic_services": "true", "city": "Leiden"}, '
    '"BookAppointment": {"appointment_time": "14:00", "dentist_name": '
    '"FindProvider.dentist_name", "appointment_date": "2024-06-15"}}'
)


@pytest.mark.parametrize("kind", MTU_KINDS)
def test_an_mtubench_refinement_changes_only_its_record(tmp_path: Path, kind: str) -> None:
    load("mtubench")
    edits: dict[str, list[tuple[str, str]]]
    if kind == "query":
        target = sample("mtubench", "S-S", "S-S_1")
        revise(target, input={**target.input, "query": "A cheap Thai place in Gent?"})
        edits = {
            "S-S_eval.jsonl": [
                (
                    "User: A cheap Thai place in Gent, caf\u00e9 style?",
                    "User: A cheap Thai place in Gent?",
                )
            ]
        }
    elif kind == "arguments":
        # a changed value and an added argument: the others keep their published order
        target = sample("mtubench", "S-S", "S-S_0")
        arguments = {"time": "06:30", "sound": "birds", "recurrence": "weekdays", "label": "gym"}
        calls_edit(target, lambda calls: draft_editing.call_set(calls, "c1", arguments=arguments))
        edits = {
            "S-S_eval.jsonl": [
                (
                    '{"time": "06:30", "sound": "waves", "recurrence": "weekdays"}',
                    '{"time": "06:30", "sound": "birds", "recurrence": "weekdays", "label": "gym"}',
                )
            ]
        }
    elif kind == "arguments, escaped":
        # the line escapes non-ASCII: so does the rewritten line, where it still has some
        target = sample("mtubench", "S-S", "S-S_2")
        arguments = {"cuisine": "galette", "city": "Lille"}
        calls_edit(target, lambda calls: draft_editing.call_set(calls, "c1", arguments=arguments))
        edits = {"S-S_eval.jsonl": [('"cuisine": "cr\\u00eape"', '"cuisine": "galette"')]}
    elif kind == "tool":
        target = sample("mtubench", "S-S", "S-S_1")
        calls_edit(
            target,
            lambda calls: draft_editing.call_set(calls, "c1", name="set_alarm", arguments={}),
        )
        edits = {
            "S-S_eval.jsonl": [
                (
                    '{"FindRestaurants": {"price_range": "cheap", "cuisine": "Thai", '
                    '"city": "Gent"}}',
                    '{"set_alarm": {}}',
                )
            ]
        }
    elif kind == "insert":
        target = sample("mtubench", "S-M", "S-M_0")

        def insert(calls: list[Any]) -> list[Any]:
            calls = draft_editing.call_insert(calls, "c1")
            new = calls[1].uid
            return draft_editing.call_set(calls, new, name="set_alarm", arguments={"time": "15:00"})

        calls_edit(target, insert)
        edits = {
            "S-M_eval.jsonl": [
                (
                    '"city": "Leiden"}, "BookAppointment"',
                    '"city": "Leiden"}, "set_alarm": {"time": "15:00"}, "BookAppointment"',
                )
            ]
        }
    elif kind == "delete":
        target = sample("mtubench", "S-M", "S-M_0")
        calls_edit(target, lambda calls: draft_editing.call_delete(calls, "c2"))
        edits = {
            "S-M_eval.jsonl": [
                (LEIDEN, '{"FindProvider": {"offers_cosmetic_services": "true", "city": "Leiden"}}')
            ]
        }
    elif kind == "move":
        target = sample("mtubench", "S-M", "S-M_0")
        calls_edit(target, lambda calls: draft_editing.call_move(calls, "c2", "up"))
        edits = {
            "S-M_eval.jsonl": [
                (
                    LEIDEN,
                    '{"BookAppointment": {"appointment_time": "14:00", "dentist_name": '
                    '"FindProvider.dentist_name", "appointment_date": "2024-06-15"}, '
                    '"FindProvider": {"offers_cosmetic_services": "true", "city": "Leiden"}}',
                )
            ]
        }
    else:
        target = sample("mtubench", "S-S", "S-S_1")
        drop(target)
        line = (MTU / "S-S_eval.jsonl").read_text("utf-8").split("\n")[1]
        edits = {"S-S_eval.jsonl": [(line + "\n", "")]}
    assert_exported_with("mtubench", tmp_path, edits)
    if kind != "drop":
        read = Sample.objects.get(
            benchmark__name="mtubench again", split=target.split, external_id=target.external_id
        )
        target.refresh_from_db()
        assert read.reference == target.reference
        assert read.input["query"] == target.input["query"]
