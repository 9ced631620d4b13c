"""BFCL's exporter (benchmarks/suites/bfcl/exporter.py): a benchmark written back as BFCL's data
folder and imported again gives the same samples and tools, on a folder of our own covering
every category family (test data in BFCL v4's format, not BFCL's), on the demo and on the real
wheel; the written lines are BFCL's records; `export_benchmark` writes a refined acceptable
value under --gold refined and the published one under --gold published; what cannot be
written is refused naming the sample and field."""

from __future__ import annotations

import copy
import io
import json
import zipfile
from dataclasses import replace
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from benchmarks.exports import benchmark_export
from benchmarks.kit.base import SampleRecord
from benchmarks.kit.export import ExportError
from benchmarks.models import Benchmark, Sample
from benchmarks.services import benchmark_import, sample_revise
from benchmarks.suites.bfcl.exporter import write
from benchmarks.suites.bfcl.importer import import_files
from tests.benchmarks.test_export_roundtrip import assert_identical, round_trip
from tests.factories import make_researcher
from tests.suites.bfcl.real_wheel import real_wheel  # noqa: F401 - a fixture

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "benchmarks" / "demo" / "bfcl"
NOT_CARRIED = ("provenance",)


def question(*texts: str) -> list[list[dict[str, str]]]:
    return [[{"role": "user", "content": text}] if text else [] for text in texts]


def doc(name: str, **properties: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"{name} (test doc)",
        "parameters": {
            "type": "dict",
            "properties": {key: {"type": kind} for key, kind in properties.items()},
            "required": list(properties)[:1],
        },
        "response": {"type": "dict", "properties": {}},
    }


AREA = {
    "name": "area",
    "description": "Area of a rectangle (test data).",
    "parameters": {
        "type": "dict",
        "properties": {"width": {"type": "float"}, "height": {"type": "integer"}},
        "required": ["width"],
    },
}
LIVE = {
    "name": "weather",
    "description": "Weather in a city (test data).",
    "parameters": {
        "type": "dict",
        "required": ["city"],
        "properties": {"city": {"type": "string", "default": "Zürich"}},
    },
}
CD, LS, MKDIR = doc("cd", folder="string"), doc("ls"), doc("mkdir", dir_name="string")
ADD = doc("add", a="float", b="float")
SEARCH = doc("search_engine_query", keywords="string")
MEMORY = {
    "kv": [doc("core_memory_add", key="string"), doc("core_memory_retrieve", key="string")],
    "vector": [doc("core_memory_add", text="string")],
    "rec_sum": [doc("memory_append", text="string")],
}
PREREQ = [
    {
        "id": "memory_prereq_0-customer-0",
        "topic": "A first visit",
        "question": question("My name is Ada.", "I live in Zürich."),
        "involved_classes": ["MemoryAPI"],
        "scenario": "customer",
    }
]

FILES: dict[str, list[dict[str, Any]]] = {
    "BFCL_v4_simple_python.json": [
        {
            "id": "simple_python_0",
            "question": question("Area of 2 by 3 in Zürich?"),
            "function": [AREA],
        },
        {"id": "simple_python_1", "question": question("Area of 4?"), "function": [AREA]},
    ],
    "possible_answer/BFCL_v4_simple_python.json": [
        {"id": "simple_python_0", "ground_truth": [{"area": {"width": [2.0], "height": [3]}}]},
        {"id": "simple_python_1", "ground_truth": [{"area": {"width": [4.0], "height": ["", 1]}}]},
    ],
    "BFCL_v4_irrelevance.json": [
        {"id": "irrelevance_0", "question": question("Who wrote Hamlet?"), "function": [AREA]}
    ],
    "BFCL_v4_live_simple.json": [
        {"id": "live_simple_0-0-0", "question": question("Weather in Bern?"), "function": [LIVE]}
    ],
    "possible_answer/BFCL_v4_live_simple.json": [
        {"id": "live_simple_0-0-0", "ground_truth": [{"weather": {"city": ["Bern", "bern"]}}]}
    ],
    "BFCL_v4_live_relevance.json": [
        {"id": "live_relevance_0-0-0", "question": question("Weather?"), "function": [LIVE]}
    ],
    "BFCL_v4_multi_turn_miss_func.json": [
        {
            "id": "multi_turn_miss_func_0",
            "question": question("Go to docs.", "", "List it, café."),
            "initial_config": {"GorillaFileSystem": {"root": {"docs": {"type": "directory"}}}},
            "path": ["GorillaFileSystem.cd", "GorillaFileSystem.ls"],
            "involved_classes": ["GorillaFileSystem", "MathAPI"],
            "missed_function": {"1": ["ls"]},
            "excluded_function": ["mkdir"],
        }
    ],
    "possible_answer/BFCL_v4_multi_turn_miss_func.json": [
        {"id": "multi_turn_miss_func_0", "ground_truth": [["cd(folder='docs')"], [], ["ls()"]]}
    ],
    "BFCL_v4_multi_turn_long_context.json": [
        {
            "id": "multi_turn_long_context_0",
            "question": question("Add 1 and 2."),
            "initial_config": {"MathAPI": {}},
            "path": ["MathAPI.add"],
            "involved_classes": ["MathAPI"],
        }
    ],
    "possible_answer/BFCL_v4_multi_turn_long_context.json": [
        {"id": "multi_turn_long_context_0", "ground_truth": [["add(a=1, b=2)"]]}
    ],
    "BFCL_v4_web_search.json": [
        {
            "id": "web_search_0",
            "question": question("Who founded the café?"),
            "involved_classes": ["WebSearchAPI"],
        }
    ],
    "possible_answer/BFCL_v4_web_search.json": [
        {
            "id": "web_search_0",
            "ground_truth": ["Ada", "Ada L."],
            "source": [{"subquestion": "Which café?", "answer": "Café A", "source": "https://x"}],
            "num_hops": 2,
        }
    ],
    "BFCL_v4_memory.json": [
        {
            "id": f"memory_{n}-customer-{n}",
            "question": question(text),
            "involved_classes": ["MemoryAPI"],
            "scenario": "customer",
        }
        for n, text in enumerate(("What is my name?", "Where do I live?"))
    ],
    "possible_answer/BFCL_v4_memory.json": [
        {"id": "memory_0-customer-0", "ground_truth": ["Ada"], "source": "My name is Ada."},
        {"id": "memory_1-customer-1", "ground_truth": ["Zürich"], "source": "I live in Zürich."},
    ],
    "memory_prereq_conversation/memory_customer.json": PREREQ,
    "multi_turn_func_doc/gorilla_file_system.json": [CD, LS, MKDIR],
    "multi_turn_func_doc/math_api.json": [ADD],
    "multi_turn_func_doc/web_search.json": [SEARCH],
    "multi_turn_func_doc/memory_kv.json": MEMORY["kv"],
    "multi_turn_func_doc/memory_vector.json": MEMORY["vector"],
    "multi_turn_func_doc/memory_rec_sum.json": MEMORY["rec_sum"],
}
# As the wheel writes them: non-ASCII as text in the multi-turn and web_search files only.
AS_TEXT = {
    "BFCL_v4_multi_turn_miss_func.json",
    "BFCL_v4_multi_turn_long_context.json",
    "BFCL_v4_web_search.json",
    "possible_answer/BFCL_v4_web_search.json",
}


def write_folder(folder: Path) -> Path:
    for name, records in FILES.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        text = "".join(json.dumps(r, ensure_ascii=name not in AS_TEXT) + "\n" for r in records)
        path.write_text(text, "utf-8")
    return folder


def written(samples: list[SampleRecord], tools: Any, folder: Path) -> Path:
    for name, data in write(samples, tools).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    return folder


def assert_same_bundles(before: Any, after: Any) -> None:
    assert [(s.split, s.external_id) for s in after.samples] == [
        (s.split, s.external_id) for s in before.samples
    ]
    for one, two in zip(before.samples, after.samples, strict=True):
        for name in ("kind", "input", "reference", "candidate_tools"):
            assert getattr(two, name) == getattr(one, name), (one.external_id, name)
        assert {k: v for k, v in two.metadata.items() if k not in NOT_CARRIED} == {
            k: v for k, v in one.metadata.items() if k not in NOT_CARRIED
        }, one.external_id
    assert [(t.name, t.description, t.parameters, t.category, t.raw) for t in after.tools] == [
        (t.name, t.description, t.parameters, t.category, t.raw) for t in before.tools
    ]


# --- every family, through the platform ---------------------------------------------------------


@pytest.mark.django_db
def test_every_family_round_trips_through_the_platform(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "data")
    out = round_trip("bfcl", [folder], tmp_path / "out")
    assert_identical("bfcl", "metadata", not_carried=NOT_CARRIED)
    # exactly the layout the importer read: the same files, and provenance.json beside them
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.json"))
    assert files == sorted([*FILES, "provenance.json"])
    again = Sample.objects.get(benchmark__name="bfcl again", external_id="multi_turn_miss_func_0")
    assert again.input["missed_functions"] == {"1": [LS]}
    assert [d["name"] for d in again.input["functions"]] == ["cd", "mkdir", "add"]
    memory = Sample.objects.get(benchmark__name="bfcl again", external_id="memory_1-customer-1")
    assert memory.input["prereq_conversation"] == PREREQ
    assert memory.input["functions_by_backend"] == MEMORY
    assert memory.reference == {"answers": ["Zürich"]}
    web = Sample.objects.get(benchmark__name="bfcl again", external_id="web_search_0")
    assert web.metadata["num_hops"] == 2 and web.metadata["source"][0]["answer"] == "Café A"
    # what an import records anew: the written files' own hashes, from a data folder
    provenance = again.metadata["provenance"]
    assert provenance["origin"] == "data folder"
    assert set(provenance["files"]) == {
        "BFCL_v4_multi_turn_miss_func.json",
        "possible_answer/BFCL_v4_multi_turn_miss_func.json",
        "multi_turn_func_doc/gorilla_file_system.json",
        "multi_turn_func_doc/math_api.json",
    }


@pytest.mark.django_db
def test_the_written_lines_are_bfcls_records(tmp_path: Path) -> None:
    # Key order through PostgreSQL's jsonb is its own: the records', messages' and docs' keys
    # are written in BFCL's order anyway, and each line equals the published one as JSON.
    folder = write_folder(tmp_path / "data")
    benchmark_import(suite="bfcl", paths=[folder], benchmark_name="B")
    export = benchmark_export(benchmark=Benchmark.objects.get(name="B"))
    for name, records in FILES.items():
        lines = export.files[name].decode("utf-8").splitlines()
        assert [json.loads(line) for line in lines] == records, name
        for line, record in zip(lines, records, strict=True):
            value = json.loads(line)
            assert list(value) == list(record), name
            for message in (m for turn in value.get("question", []) for m in turn):
                assert list(message) == ["role", "content"]
            for function in value.get("function", []):
                assert list(function) == list(AREA if function["name"] == "area" else LIVE)
    simple = export.files["BFCL_v4_simple_python.json"].decode().splitlines()[0]
    assert simple.startswith('{"id": "simple_python_0", "question": [[{"role": "user", ')
    assert "Z\\u00fcrich" in simple
    assert "café" in export.files["BFCL_v4_multi_turn_miss_func.json"].decode()
    answer = export.files["possible_answer/BFCL_v4_simple_python.json"].decode().splitlines()[0]
    assert answer == (
        '{"id": "simple_python_0", "ground_truth": [{"area": {"width": [2.0], "height": [3]}}]}'
    )
    # no answer files for the categories BFCL publishes none of
    assert "possible_answer/BFCL_v4_irrelevance.json" not in export.files
    assert "possible_answer/BFCL_v4_live_relevance.json" not in export.files


# --- the demo, and refinements through export_benchmark -----------------------------------------


def demo_files() -> list[Path]:
    return sorted(DEMO.glob("BFCL_v4_*.json"))


@pytest.mark.django_db
def test_the_demo_round_trips(tmp_path: Path) -> None:
    round_trip("bfcl", demo_files(), tmp_path / "out")
    assert_identical("bfcl", "metadata", not_carried=NOT_CARRIED)


def answer_line(folder: Path, category: str, entry: str) -> dict[str, Any]:
    path = folder / "possible_answer" / f"BFCL_v4_{category}.json"
    return next(
        record
        for record in map(json.loads, path.read_text("utf-8").splitlines())
        if record["id"] == entry
    )


@pytest.mark.django_db
def test_export_benchmark_writes_the_gold_version_asked(tmp_path: Path) -> None:
    benchmark_import(suite="bfcl", paths=demo_files(), benchmark_name="BFCL demo")
    sample = Sample.objects.get(external_id="simple_python_demo_1")
    published = copy.deepcopy(sample.reference)
    assert published == [{"geometry.circle_area": {"radius": [3.0]}}]
    # a refinement accepts the radius given as an integer too
    refined = [{"geometry.circle_area": {"radius": [3.0, 3]}}]
    sample_revise(
        sample_id=sample.pk, base_revision=sample.revision, input=sample.input, reference=refined
    )

    out = StringIO()
    call_command("export_benchmark", "BFCL demo", "--out", str(tmp_path / "refined"), stdout=out)
    assert "1 refined" in out.getvalue()
    assert "import_benchmark bfcl " + str(tmp_path / "refined") in out.getvalue()
    line = answer_line(tmp_path / "refined", "simple_python", "simple_python_demo_1")
    assert line == {"id": "simple_python_demo_1", "ground_truth": refined}
    provenance = json.loads((tmp_path / "refined" / "provenance.json").read_text())
    assert provenance["gold"] == "refined" and provenance["differs_when_read_back"] == []
    assert [c["external_id"] for c in provenance["changed"]] == ["simple_python_demo_1"]
    # the other entries of the file are as published
    other = answer_line(tmp_path / "refined", "simple_python", "simple_python_demo_0")
    assert other == json.loads(
        (DEMO / "possible_answer" / "BFCL_v4_simple_python.json").read_text().splitlines()[0]
    )

    call_command(
        "export_benchmark",
        "BFCL demo",
        "--gold",
        "published",
        "--out",
        str(tmp_path / "published"),
        stdout=StringIO(),
    )
    line = answer_line(tmp_path / "published", "simple_python", "simple_python_demo_1")
    assert line == {"id": "simple_python_demo_1", "ground_truth": published}
    provenance = json.loads((tmp_path / "published" / "provenance.json").read_text())
    assert provenance["gold"] == "published" and provenance["changed"] == []

    # read back, the refined export gives the refined gold
    benchmark_import(suite="bfcl", paths=[tmp_path / "refined"], benchmark_name="read back")
    again = Sample.objects.get(benchmark__name="read back", external_id="simple_python_demo_1")
    assert again.reference == refined


@pytest.mark.django_db
def test_a_refined_query_replaces_the_first_user_message(tmp_path: Path) -> None:
    benchmark_import(suite="bfcl", paths=demo_files(), benchmark_name="bfcl original")
    sample = Sample.objects.get(external_id="simple_python_demo_0")
    sample_revise(
        sample_id=sample.pk,
        base_revision=sample.revision,
        input={**sample.input, "query": "Area of a triangle, base 10, height 5?"},
        reference=sample.reference,
    )
    export = benchmark_export(benchmark=Benchmark.objects.get(name="bfcl original"))
    first = json.loads(export.files["BFCL_v4_simple_python.json"].decode().splitlines()[0])
    assert first["question"] == [
        [{"role": "user", "content": "Area of a triangle, base 10, height 5?"}]
    ]
    # the question the platform keeps beside the refined query is as imported: read back, it
    # holds the refined query, and provenance.json says so
    provenance = json.loads(export.files["provenance.json"])
    assert provenance["differs_when_read_back"] == [
        {"external_id": "simple_python_demo_0", "split": "simple_python", "fields": ["input"]}
    ]


# --- the real wheel -----------------------------------------------------------------------------


def test_the_real_wheel_round_trips_whole(real_wheel: Path, tmp_path: Path) -> None:  # noqa: F811
    # Every entry of every category, written and read back (no database, so each record's keys
    # keep their published order): the same samples and tools, and every written line equals
    # BFCL's as JSON.
    before = import_files([real_wheel])
    out = written(before.samples, before.tools, tmp_path / "out")
    after = import_files([out])
    assert_same_bundles(before, after)
    assert len(after.samples) == 4696
    with zipfile.ZipFile(real_wheel) as archive:
        for path in sorted(out.rglob("*.json")):
            name = path.relative_to(out).as_posix()
            data = archive.read(f"bfcl_eval/data/{name}").decode("utf-8")
            assert [json.loads(line) for line in path.read_text("utf-8").splitlines()] == [
                json.loads(line) for line in data.splitlines() if line.strip()
            ], name


@pytest.mark.django_db
def test_the_real_wheel_round_trips_through_the_platform(
    real_wheel: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    # All 4,696 entries imported, exported, imported again (some 20 s).
    out = round_trip("bfcl", [real_wheel], tmp_path / "out")
    assert_identical("bfcl", "metadata", not_carried=NOT_CARRIED)
    assert Benchmark.objects.get(name="bfcl again").samples.count() == 4696
    assert (out / "memory_prereq_conversation" / "memory_customer.json").is_file()
    again = Sample.objects.get(benchmark__name="bfcl again", external_id="multi_turn_base_0")
    assert again.metadata["provenance"]["bfcl_version"] == "unknown"


# --- refused, naming the sample and field -------------------------------------------------------


def records(tmp_path: Path) -> tuple[dict[str, SampleRecord], Any]:
    bundle = import_files([write_folder(tmp_path / "data")])
    return {s.external_id: s for s in bundle.samples}, bundle.tools


def refused(samples: dict[str, SampleRecord], tools: Any, message: str) -> ExportError:
    with pytest.raises(ExportError, match=message) as caught:
        write(list(samples.values()), tools)
    return caught.value


def test_one_entrys_own_class_docs_are_refused(tmp_path: Path) -> None:
    samples, tools = records(tmp_path)
    entry = samples["multi_turn_long_context_0"]
    edited = copy.deepcopy(entry.input)
    edited["functions"][0]["description"] = "an entry's own description"
    samples[entry.external_id] = replace(entry, input=edited)
    error = refused(samples, tools, "differ from its classes' docs")
    assert error.sample == "multi_turn_long_context/multi_turn_long_context_0"
    assert error.field == "functions"


def test_a_held_out_function_no_class_documents_is_refused(tmp_path: Path) -> None:
    samples, tools = records(tmp_path)
    entry = samples["multi_turn_miss_func_0"]
    metadata = {**entry.metadata, "missed_function": {"1": ["rm"]}}
    samples[entry.external_id] = replace(entry, metadata=metadata)
    error = refused(samples, tools, "holds out 'rm'")
    assert error.field == "missed_function.1"


def test_an_answer_for_a_category_without_answers_is_refused(tmp_path: Path) -> None:
    samples, tools = records(tmp_path)
    entry = samples["irrelevance_0"]
    samples[entry.external_id] = replace(entry, reference=[{"area": {"width": [1.0]}}])
    error = refused(samples, tools, "BFCL publishes no answers for irrelevance")
    assert (error.sample, error.field) == ("irrelevance/irrelevance_0", "reference")


@pytest.mark.parametrize(
    ("entry", "reference", "field", "message"),
    [
        ("simple_python_0", [{"area": {"width": 2.0}}], "reference[0]", "acceptable values"),
        ("simple_python_0", {"area": {}}, "reference", "expected a list"),
        ("multi_turn_long_context_0", [["add(a=x)"]], "reference[0][0]", "literal arguments"),
        ("multi_turn_long_context_0", [[], []], "reference", "has 2 turns of calls"),
        ("web_search_0", ["Ada"], "reference", "answers"),
    ],
)
def test_a_gold_of_the_wrong_shape_is_refused(
    tmp_path: Path, entry: str, reference: Any, field: str, message: str
) -> None:
    samples, tools = records(tmp_path)
    samples[entry] = replace(samples[entry], reference=reference)
    error = refused(samples, tools, message)
    assert error.sample == f"{samples[entry].split}/{entry}" and error.field == field


def test_memory_entries_that_disagree_on_what_they_share_are_refused(tmp_path: Path) -> None:
    samples, tools = records(tmp_path)
    entry = samples["memory_1-customer-1"]
    conversation = copy.deepcopy(entry.input["prereq_conversation"])
    conversation[0]["topic"] = "another topic"
    samples[entry.external_id] = replace(
        entry, input={**entry.input, "prereq_conversation": conversation}
    )
    error = refused(samples, tools, "differs from that of sample memory/memory_0-customer-0")
    assert (error.sample, error.field) == ("memory/memory_1-customer-1", "prereq_conversation")


def test_a_split_that_is_no_category_is_refused(tmp_path: Path) -> None:
    samples, tools = records(tmp_path)
    samples["simple_python_0"] = replace(samples["simple_python_0"], split="simple_cobol")
    refused(samples, tools, "split 'simple_cobol' is none of BFCL v4's categories")


# --- the export page ----------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_page_downloads_a_split_as_bfcls_files(client: Client, tmp_path: Path) -> None:
    benchmark_import(suite="bfcl", paths=[write_folder(tmp_path / "data")], benchmark_name="B")
    benchmark = Benchmark.objects.get(name="B")
    client.force_login(make_researcher())
    page = client.get(f"/benchmarks/{benchmark.pk}/export/").content.decode()
    assert 'value="published"' in page and "metadata provenance" in page
    response = client.get(
        f"/benchmarks/{benchmark.pk}/export/",
        {"format": "published", "split": "multi_turn_miss_func"},
    )
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    assert sorted(archive.namelist()) == [
        "BFCL_v4_multi_turn_miss_func.json",
        "multi_turn_func_doc/gorilla_file_system.json",
        "multi_turn_func_doc/math_api.json",
        "multi_turn_func_doc/web_search.json",
        "possible_answer/BFCL_v4_multi_turn_miss_func.json",
        "provenance.json",
    ]
    entry = json.loads(archive.read("BFCL_v4_multi_turn_miss_func.json"))
    assert entry == FILES["BFCL_v4_multi_turn_miss_func.json"][0]


@pytest.mark.django_db
def test_an_export_that_cannot_be_written_is_answered_on_the_page(
    client: Client, tmp_path: Path
) -> None:
    # One entry's own class docs (a refinement of its functions) have no place in BFCL's files.
    benchmark_import(suite="bfcl", paths=[write_folder(tmp_path / "data")], benchmark_name="B")
    sample = Sample.objects.get(external_id="multi_turn_long_context_0")
    edited = copy.deepcopy(sample.input)
    edited["functions"][0]["description"] = "an entry's own description"
    sample_revise(
        sample_id=sample.pk, base_revision=sample.revision, input=edited, reference=sample.reference
    )
    client.force_login(make_researcher())
    response = client.get(f"/benchmarks/{sample.benchmark_id}/export/", {"format": "published"})
    assert response.status_code == 400
    html = response.content.decode()
    assert "sample multi_turn_long_context/multi_turn_long_context_0" in html
    assert "differ from its classes" in html
    # the published gold has no such edit
    response = client.get(
        f"/benchmarks/{sample.benchmark_id}/export/", {"format": "published", "gold": "published"}
    )
    assert response.status_code == 200


def test_a_tools_changed_description_is_written_in_its_class_doc(tmp_path: Path) -> None:
    samples, tools = records(tmp_path)
    tools = [
        replace(t, description="Add two numbers (changed).") if t.name == "add" else t
        for t in tools
    ]
    files = write(list(samples.values()), tools)
    (add,) = map(json.loads, files["multi_turn_func_doc/math_api.json"].decode().splitlines())
    assert add == {**ADD, "description": "Add two numbers (changed)."}
    # the entries keep what they were offered; read back, they are offered the changed doc
    entry = json.loads(files["BFCL_v4_multi_turn_long_context.json"])
    assert entry == FILES["BFCL_v4_multi_turn_long_context.json"][0]
