"""Export then import gives identical samples, per suite, on the published seed data (the
project's own demo files for the suites whose data is not public): import, export in the
suite's published format, import the export as a new benchmark, compare every sample and tool.

What a published format cannot carry is said in the test of that suite (and on the suite's docs
page)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.exports import ExportRefused, benchmark_export
from benchmarks.kit.registry import SUITE_MODULES, get_suite
from benchmarks.models import Benchmark, Sample
from benchmarks.services import benchmark_import, sample_revise
from benchmarks.suites.mtubench.gold import write_answer
from benchmarks.suites.ultratool.importer import TASK_FILES

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


def assert_identical(suite: str, *fields: str, not_carried: tuple[str, ...] = ()) -> None:
    """Every sample and tool of "<suite> again" is its "<suite> original" twin's, but for the
    metadata keys `not_carried` (what an import of the written files records anew)."""
    provenance = benchmark_export(benchmark=Benchmark.objects.get(name=f"{suite} original"))
    assert b'"differs_when_read_back": []' in provenance.files["provenance.json"]
    before, after = samples_of(f"{suite} original", *fields), samples_of(f"{suite} again", *fields)
    assert before, "nothing was imported"
    for rows in (before, after):
        for row in rows.values():
            if "metadata" in row:
                kept = {k: v for k, v in row["metadata"].items() if k not in not_carried}
                assert len(kept) == len(row["metadata"]) - len(set(not_carried)), row
                row["metadata"] = kept
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
    # merge on import (the first description of a name wins): the merged tools are identical,
    # and the entries the merge drops are written back into their files
    # (test_export_published.py compares the bytes).
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
    # The six seed groups with their test_query_ids, metadata included (a query's own document
    # of an API whose kept one differs is carried too: test_export_published.py).
    out = round_trip(
        "stabletoolbench", [seeddata / "stabletoolbench" / "solvable_queries"], tmp_path / "out"
    )
    assert_identical("stabletoolbench", "metadata")
    first = json.loads((out / "solvable_queries/test_instruction/G1_instruction.json").read_text())
    assert isinstance(first[0]["query_id"], int) and "relevant APIs" in first[0]


ULTRATOOL_PUBLISHED = ROOT / "tests/benchmarks/fixtures/ultratool_published"


def ultratool_files(folder: Path) -> list[Path]:
    return [folder / "test.json", *sorted((folder / "test_set").glob("*.json"))]


@pytest.mark.parametrize(
    "folder",
    [DEMO / "ultratool", ROOT / "tests/benchmarks/fixtures/ultratool", ULTRATOOL_PUBLISHED],
)
def test_ultratool_round_trip_gives_the_files_back_byte_for_byte(
    tmp_path: Path, folder: Path
) -> None:
    # UltraTool's data carries no licence, so the files are the project's own, in its format:
    # the plan of each sample (published call strings kept as written, the ones the strict
    # reader repairs and the ones no reader accepts among them) and the task files.
    # ultratool_published/ has the published files' quirks: questions ending in a newline (one
    # not), the tool markers "null" and "No tool required" each where the other is usual and
    # "不需要工具", top-level steps written "2 Log in ..." without a full stop, task records of
    # {"input", "toolset", "reference"} without "question", key orders no sort gives (records,
    # tools, schemas), escaped and unescaped non-ASCII, a blank line after a file's last record
    # and a file without a line end after it.
    paths = ultratool_files(folder)
    out = round_trip("ultratool", paths, tmp_path / "out")
    assert_identical("ultratool", "metadata")
    written = sorted(p.relative_to(out) for p in out.rglob("*.json") if p.name != "provenance.json")
    assert written == sorted(p.relative_to(folder) for p in paths)
    for path in paths:
        assert (out / path.relative_to(folder)).read_bytes() == path.read_bytes(), path


def test_ultratool_writes_a_refined_call_as_the_call_reader_reads_it() -> None:
    from benchmarks.kit.toolcall import parse_tool_call
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


# --- UltraTool: a refinement changes the published files only where it changed the sample -----

TRAIN = "1"  # ultratool_published/'s first sample: a train booking, in every file
STEP = {  # its steps as the refinement editor names them (uid by position)
    "find": "s1",
    "note": "s2",
    "search": "s3",
    "login": "s4",
    "book": "s5",
    "confirm": "s6",
}
LOGIN = "2 Log in to the rail account (User: ilse, Password: Pwd2023#)"
LOGIN_CALL = "rail_login(user='ilse', password='Pwd2023#')"
SEARCH_CALL = (
    "search_trains(origin='Utrecht', destination='Zwolle', date='Friday', period='morning')"
)
BOOK_CALL = "book_train_ticket(train_id=<first train found>, token=<login token>)"
NOTE = "1.1 Note the trip (From: Utrecht, To: Zwolle, Date: Friday morning)"
TASKS_OF_TRAIN = ("tool_usage_awareness", "tool_usage", "tool_selection")


def item_text(step: str, tool: str) -> str:
    """One plan item as test.json writes it."""
    return json.dumps({"step": step, "tool": tool}, ensure_ascii=False)


def plan_edit(sample: Sample, edit: Any) -> None:
    """A plan refinement as the editor applies it: the draft, one operation, written back."""
    from annotation import draft_editing

    steps = edit(draft_editing.plan_from_reference(sample.reference))
    revise(
        sample,
        input=sample.input,
        reference=draft_editing.plan_to_reference(steps, sample.reference),
    )


def _refine(kind: str, sample: Sample) -> None:
    from annotation import draft_editing

    if kind == "query":
        query = sample.input["query"].replace("the first train", "the earliest train")
        revise(sample, input={**sample.input, "query": query}, reference=sample.reference)
    elif kind == "text":
        plan_edit(
            sample, lambda s: draft_editing.step_set(s, STEP["book"], text="Book the train ticket")
        )
    elif kind == "text, escaped":
        plan_edit(
            sample,
            lambda s: draft_editing.step_set(s, "s3", text="\u521b\u5efa\u4e00\u4e2a\u63d0\u9192"),
        )
    elif kind == "arguments":
        arguments = {"origin": "Utrecht", "destination": "Zwolle", "date": "Friday"}
        arguments["period"] = "evening"
        plan_edit(sample, lambda s: draft_editing.step_set(s, STEP["search"], arguments=arguments))
    elif kind == "tool":
        plan_edit(
            sample,
            lambda s: draft_editing.step_set(
                s, STEP["confirm"], tool="book_train_ticket", arguments={}
            ),
        )
    elif kind == "tool removed":
        plan_edit(sample, lambda s: draft_editing.step_set(s, STEP["login"], tool=None))
    elif kind == "insert":
        plan_edit(
            sample,
            lambda s: draft_editing.step_insert(s, STEP["search"], text="Pick the earliest train"),
        )
    elif kind == "delete":
        plan_edit(sample, lambda s: draft_editing.step_delete(s, STEP["confirm"]))
    elif kind == "move":
        plan_edit(sample, lambda s: draft_editing.step_move(s, STEP["login"], "up"))
    elif kind == "indent":
        plan_edit(sample, lambda s: draft_editing.step_indent(s, STEP["confirm"]))
    elif kind == "outdent":
        plan_edit(sample, lambda s: draft_editing.step_outdent(s, STEP["search"]))
    elif kind == "drop":
        from benchmarks.exports import DROPPED
        from benchmarks.services import samples_annotate

        samples_annotate(values={sample.pk: {DROPPED: 1}})
    else:
        raise AssertionError(kind)


def _expected_edits(kind: str) -> dict[str, list[tuple[str, str]]]:
    """Per file, the (published text, exported text) replacements the refinement makes: every
    occurrence of the first becomes the second; nothing else changes."""
    usage_input_search = '{"step": "1.2 Search for trains", "tool": "search_trains", "param": ""}'
    if kind == "query":
        edit = [("Book me the first train", "Book me the earliest train")]
        return {"test.json": edit, "test_set/planning.json": edit}
    if kind == "text":
        edit = [('"3 Book train ticket"', '"3 Book the train ticket"')]
        return {
            "test.json": edit,
            **{f"test_set/{t}.json": edit for t in TASKS_OF_TRAIN},
            # the planning gold (the plan as text) follows: that line only
            "test_set/planning.json": [
                ("\\n3 Book train ticket\\n", "\\n3 Book the train ticket\\n")
            ],
        }
    if kind == "text, escaped":
        # tool_usage.json escapes non-ASCII (json.dumps' default): so is the rewritten record
        old, new = "1.2 \u521b\u5efa\u63d0\u9192", "1.2 \u521b\u5efa\u4e00\u4e2a\u63d0\u9192"
        plain = [(json.dumps(old, ensure_ascii=False), json.dumps(new, ensure_ascii=False))]
        escaped = [(json.dumps(old), json.dumps(new))]
        assert "\\u521b" in escaped[0][0]
        return {
            "test.json": plain,
            "test_set/tool_usage_awareness.json": plain,
            "test_set/tool_selection.json": plain,
            "test_set/tool_usage.json": escaped,
            "test_set/planning.json": [(f'\\n{old}"', f'\\n{new}"')],
        }
    if kind == "arguments":
        # the call is written from the new arguments, in the published call's argument order
        return {"test.json": [(SEARCH_CALL, SEARCH_CALL.replace("morning", "evening"))]}
    if kind == "tool":
        return {
            "test.json": [
                (
                    item_text("4. Confirm the booking", "No tool required"),
                    item_text("4. Confirm the booking", "book_train_ticket()"),
                )
            ]
        }
    if kind == "tool removed":
        # the record writes both markers for a step without child steps: the usual one
        return {"test.json": [(item_text(LOGIN, LOGIN_CALL), item_text(LOGIN, "No tool required"))]}
    if kind == "insert":
        new = '{"step": "1.3 Pick the earliest train"}'
        marked = '{"step": "1.2 Search for trains", "tool": ""}'
        search = item_text("1.2 Search for trains", SEARCH_CALL)
        return {
            "test.json": [
                (
                    search,
                    f"{search}, {item_text('1.3 Pick the earliest train', 'No tool required')}",
                )
            ],
            "test_set/tool_usage_awareness.json": [(marked, f"{marked}, {new}")],
            "test_set/tool_selection.json": [(marked, f"{marked}, {new}")],
            "test_set/tool_usage.json": [(usage_input_search, f"{usage_input_search}, {new}")],
            "test_set/planning.json": [
                (
                    "\\n1.2 Search for trains\\n",
                    "\\n1.2 Search for trains\\n1.3 Pick the earliest train\\n",
                )
            ],
        }
    if kind == "delete":
        return {
            "test.json": [(", " + item_text("4. Confirm the booking", "No tool required"), "")],
            "test_set/tool_usage_awareness.json": [
                (', {"step": "4. Confirm the booking", "tool": ""}', ""),
                (', {"step": "4. Confirm the booking", "tool": "0"}', ""),
            ],
            "test_set/tool_selection.json": [(', {"step": "4. Confirm the booking"}', "")],
            "test_set/tool_usage.json": [(', {"step": "4. Confirm the booking"}', "")],
            "test_set/planning.json": [('\\n4. Confirm the booking"', '"')],
        }
    if kind == "move":
        # "2 Log in" moves before step 1's subtree: it becomes "1 Log in" (its token keeps having
        # no full stop), 1., 1.1, 1.2 become 2., 2.1, 2.2, and the golds follow their steps
        login = LOGIN.replace("2 Log", "1 Log")
        plan_old = ", ".join(
            [
                item_text("1. Find the train", "No tool required"),
                item_text(NOTE, "null"),
                item_text("1.2 Search for trains", SEARCH_CALL),
                item_text(LOGIN, LOGIN_CALL),
            ]
        )
        plan_new = ", ".join(
            [
                item_text(login, LOGIN_CALL),
                item_text("2. Find the train", "No tool required"),
                item_text(NOTE.replace("1.1", "2.1"), "null"),
                item_text("2.2 Search for trains", SEARCH_CALL),
            ]
        )

        def steps(*items: dict[str, Any]) -> str:
            return ", ".join(json.dumps(i, ensure_ascii=False) for i in items)

        def moved(marks: dict[str, dict[str, Any]], gold: dict[str, dict[str, Any]]) -> list:
            """The input list's first four items and the reference's first three, reordered."""
            old_input = steps(
                {"step": "1. Find the train"},
                {"step": NOTE, **marks["note"]},
                {"step": "1.2 Search for trains", **marks["search"]},
                {"step": LOGIN, **marks["login"]},
            )
            new_input = steps(
                {"step": login, **marks["login"]},
                {"step": "2. Find the train"},
                {"step": NOTE.replace("1.1", "2.1"), **marks["note"]},
                {"step": "2.2 Search for trains", **marks["search"]},
            )
            edits = [(old_input, new_input)]
            numbers = [n for n in ("note", "search", "login") if n in gold]
            label = {"note": NOTE, "search": "1.2 Search for trains", "login": LOGIN}
            new_label = {
                "note": NOTE.replace("1.1", "2.1"),
                "search": "2.2 Search for trains",
                "login": login,
            }
            old_ref = steps(*({"step": label[n], **gold[n]} for n in numbers))
            order = [n for n in ("login", "note", "search") if n in gold]
            new_ref = steps(*({"step": new_label[n], **gold[n]} for n in order))
            edits.append((old_ref, new_ref))
            return edits

        blank: dict[str, Any] = {}
        lines_old = "\\n".join(["1. Find the train", NOTE, "1.2 Search for trains", LOGIN])
        lines_new = "\\n".join(
            [login, "2. Find the train", NOTE.replace("1.1", "2.1"), "2.2 Search for trains"]
        )
        return {
            "test.json": [(plan_old, plan_new)],
            "test_set/planning.json": [(lines_old, lines_new)],
            "test_set/tool_usage_awareness.json": moved(
                {"note": {"tool": ""}, "search": {"tool": ""}, "login": {"tool": ""}},
                {"note": {"tool": "0"}, "search": {"tool": "1"}, "login": {"tool": "1"}},
            ),
            "test_set/tool_selection.json": moved(
                {"note": blank, "search": {"tool": ""}, "login": {"tool": ""}},
                {"search": {"tool": "search_trains"}, "login": {"tool": "rail_login"}},
            ),
            "test_set/tool_usage.json": moved(
                {
                    "note": blank,
                    "search": {"tool": "search_trains", "param": ""},
                    "login": {"tool": "rail_login", "param": ""},
                },
                {
                    "search": {
                        "tool": "search_trains",
                        "param": {
                            "origin": "Utrecht",
                            "destination": "Zwolle",
                            "date": "Friday",
                            "period": "morning",
                        },
                    },
                    "login": {
                        "tool": "rail_login",
                        "param": {"user": "ilse", "password": "Pwd2023#"},
                    },
                },
            ),
        }
    if kind == "indent":
        # "4. Confirm" becomes the child 3.1 of "3 Book train ticket": a child's token
        edit = [('"4. Confirm the booking"', '"3.1 Confirm the booking"')]
        return {
            "test.json": edit,
            **{f"test_set/{t}.json": edit for t in TASKS_OF_TRAIN},
            "test_set/planning.json": [
                ('\\n4. Confirm the booking"', '\\n3.1 Confirm the booking"')
            ],
        }
    if kind == "outdent":
        # 1.2 becomes top-level step 2 (written as the exporter writes a top-level step, "2."),
        # and the top-level steps after it are renumbered in their own style
        edit = [
            ('"1.2 Search for trains"', '"2. Search for trains"'),
            (f'"{LOGIN}"', json.dumps(LOGIN.replace("2 Log", "3 Log"))),
            ('"3 Book train ticket"', '"4 Book train ticket"'),
            ('"4. Confirm the booking"', '"5. Confirm the booking"'),
        ]
        return {
            "test.json": edit,
            **{f"test_set/{t}.json": edit for t in TASKS_OF_TRAIN},
            "test_set/planning.json": [
                ("\\n1.2 Search for trains\\n2 Log", "\\n2. Search for trains\\n3 Log"),
                ("\\n3 Book train ticket\\n4. Confirm", "\\n4 Book train ticket\\n5. Confirm"),
            ],
        }
    raise AssertionError(kind)


REFINEMENT_KINDS = (
    "query",
    "text",
    "text, escaped",
    "arguments",
    "tool",
    "tool removed",
    "insert",
    "delete",
    "move",
    "indent",
    "outdent",
    "drop",
)


@pytest.mark.parametrize("kind", REFINEMENT_KINDS)
def test_an_ultratool_refinement_changes_the_published_files_only_where_it_changed(
    tmp_path: Path, kind: str
) -> None:
    paths = ultratool_files(ULTRATOOL_PUBLISHED)
    benchmark_import(suite="ultratool", paths=paths, benchmark_name="ultratool original")
    external_id = "2" if kind == "text, escaped" else TRAIN
    sample = Sample.objects.get(benchmark__name="ultratool original", external_id=external_id)
    _refine(kind, sample)

    export_and_reimport("ultratool", tmp_path / "out")
    for path in paths:
        name = path.relative_to(ULTRATOOL_PUBLISHED).as_posix()
        published = path.read_text("utf-8")
        if kind == "drop":  # the sample's record goes from every file, nothing else changes
            expected = published.split("\n", 1)[1]
        else:  # the edits, on the sample's own line
            lines = published.split("\n")
            at = int(external_id) - 1
            for old, new in _expected_edits(kind).get(name, []):
                assert old in lines[at], (name, old)
                lines[at] = lines[at].replace(old, new)
            expected = "\n".join(lines)
        written = (tmp_path / "out" / name).read_text("utf-8")
        assert written == expected, name
    # the refined sample reads back as refined
    read = again(sample)
    if kind != "drop":
        assert read.input == Sample.objects.get(pk=sample.pk).input
        steps = [
            {k: v for k, v in s.items() if k not in ("call", "call_error")}
            for s in read.reference["steps"]
        ]
        refined = Sample.objects.get(pk=sample.pk).reference
        assert steps == [
            {k: v for k, v in s.items() if k not in ("call", "call_error")}
            for s in refined["steps"]
        ]
        for task in TASK_FILES:
            assert read.reference.get(task) == refined.get(task), task
