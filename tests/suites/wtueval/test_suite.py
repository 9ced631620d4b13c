"""WTU-Eval import: one sample per question, split by dataset, kind and options checked.

WTU-Eval published no data; tests/benchmarks/fixtures/wtueval/ is our own file in the suite's
documented format.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.kit.base import ImportFormatError, validate_bundle
from benchmarks.models import Benchmark, Sample
from benchmarks.services import benchmark_import
from benchmarks.suites import wtueval
from tests.conftest import BENCHMARK_FIXTURES

FIXTURE = BENCHMARK_FIXTURES / "wtueval" / "questions.jsonl"
DEMO = Path(__file__).resolve().parents[3] / "benchmarks" / "demo" / "wtueval"

GOOD = {"id": 1, "dataset": "gsm8k", "kind": "tool", "question": "What is 6 x 7?", "answer": 42}


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), "utf-8")
    return path


def test_fixture_imports_one_sample_per_question() -> None:
    calls: list[int] = []
    bundle = wtueval.import_files([FIXTURE], progress=calls.append)
    validate_bundle(bundle)
    assert sum(calls) == 6
    assert bundle.tools == []
    assert [(s.split, s.external_id) for s in bundle.samples] == [
        ("gsm8k-mini", "1"),
        ("gsm8k-mini", "2"),
        ("realtime-mini", "q-7"),
        ("boolq-mini", "1"),
        ("piqa-mini", "2"),
        ("race-mini", "3"),
    ]
    first = bundle.samples[0]
    assert first.kind == "query"
    assert first.input == {
        "query": "Tom has 3 crates of 48 apples and eats 5. How many apples are left?"
    }
    assert first.reference == {"answer": 139, "kind": "tool"}
    assert first.metadata == {"regions": ["R1", "R2"]}
    assert first.candidate_tools == []
    assert first.source == f"{FIXTURE}, line 1"
    realtime = bundle.samples[2]
    assert realtime.reference["answer"] == ["Unknown rider", "the stage winner"]
    assert realtime.metadata == {"source_id": "rt-2024-07-01", "regions": ["R1", "R2"]}
    boolq = bundle.samples[3]
    assert boolq.reference == {"answer": True, "kind": "general"}
    assert boolq.metadata["regions"] == ["R3", "R4"]
    piqa, race = bundle.samples[4:]
    assert piqa.input["options"] == [
        "stuff them with newspaper",
        "put them in a sealed plastic bag",
    ]
    assert race.input["options"]["B"] == "At six"
    assert race.reference["answer"] == "B"


@pytest.mark.parametrize(
    ("change", "field", "fragment"),
    [
        ({"question": None}, "question", "missing"),
        ({"dataset": ""}, "dataset", "is empty"),
        ({"kind": "calculator"}, "kind", 'must be "tool" or "general", got \'calculator\''),
        ({"kind": None}, "kind", "missing"),
        ({"id": True}, "id", "got a boolean"),
        ({"id": 1.5}, "id", "expected a string or a number"),
        ({"answer": None}, "answer", "missing"),
        ({"answer": {"value": 42}}, "answer", "expected a string, number or boolean"),
        ({"answer": []}, "answer", "expected a string, number or boolean"),
        ({"options": "A or B"}, "options", "expected a list of options"),
        ({"options": []}, "options", "is an empty list"),
        ({"options": ["yes", 3]}, "options[1]", "expected a non-empty string"),
        ({"options": {"A": "x", "B": ""}}, "options.B", "label mapped to a non-empty string"),
        ({"options": ["40", "41"]}, "answer", "none of the options' labels or texts"),
        ({"options": {"A": "40", "B": "41"}, "answer": "C"}, "answer", "none of the options"),
    ],
)
def test_bad_records_name_file_line_and_field(
    tmp_path: Path, change: dict, field: str, fragment: str
) -> None:
    # null is how a JSON file leaves a field out as often as omitting it
    path = write_jsonl(tmp_path / "q.jsonl", [GOOD | {"id": 99}, GOOD | change])
    with pytest.raises(ImportFormatError) as err:
        wtueval.import_files([path])
    assert (err.value.file, err.value.line, err.value.field) == (str(path), 2, field)
    assert fragment in str(err.value)


def test_an_absent_field_is_missing(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "q.jsonl", [{k: v for k, v in GOOD.items() if k != "dataset"}])
    with pytest.raises(ImportFormatError) as err:
        wtueval.import_files([path])
    assert (err.value.line, err.value.field, err.value.message) == (1, "dataset", "missing")


@pytest.mark.parametrize(
    ("options", "answer"),
    [
        (["forty", "forty-two"], "B"),
        (["forty", "forty-two"], 2),
        (["forty", "forty-two"], "forty-two"),
        ({"x": "forty", "y": "forty-two"}, "y"),
        ({"x": "forty", "y": "forty-two"}, "forty-two"),
    ],
)
def test_an_answer_may_name_an_option_by_label_number_or_text(
    tmp_path: Path, options: Any, answer: Any
) -> None:
    path = write_jsonl(tmp_path / "q.jsonl", [GOOD | {"options": options, "answer": answer}])
    sample = wtueval.import_files([path]).samples[0]
    assert sample.input["options"] == options
    assert sample.reference["answer"] == answer


def test_a_dataset_keeps_one_kind_across_files(tmp_path: Path) -> None:
    first = write_jsonl(tmp_path / "a.jsonl", [GOOD])
    second = write_jsonl(tmp_path / "b.jsonl", [GOOD | {"id": 2, "kind": "general"}])
    with pytest.raises(ImportFormatError) as err:
        wtueval.import_files([first, second])
    assert (err.value.file, err.value.line, err.value.field) == (str(second), 1, "kind")
    assert f"dataset 'gsm8k' is 'tool' at {first}, line 1" in str(err.value)


def test_duplicate_ids_within_a_dataset_name_the_first(tmp_path: Path) -> None:
    # the same id in two datasets is fine: they are two splits
    path = write_jsonl(
        tmp_path / "q.jsonl",
        [GOOD, GOOD | {"dataset": "asdiv"}, GOOD | {"id": "1", "question": "Again?"}],
    )
    bundle = wtueval.import_files([path])
    with pytest.raises(ImportFormatError) as err:
        validate_bundle(bundle)
    assert err.value.file == f"{path}, line 3"
    assert err.value.field == "id"
    assert f"duplicate id '1' in split 'gsm8k'; first seen at {path}, line 1" in str(err.value)


def test_files_the_suite_does_not_read(tmp_path: Path) -> None:
    csv = tmp_path / "questions.csv"
    csv.write_text("id,question\n1,x\n", "utf-8")
    with pytest.raises(ImportFormatError) as err:
        wtueval.import_files([csv])
    assert err.value.file == str(csv)
    assert "*.jsonl" in str(err.value)
    empty_folder = tmp_path / "empty"
    empty_folder.mkdir()
    with pytest.raises(ImportFormatError, match=r"holds no \.jsonl files"):
        wtueval.import_files([empty_folder])
    not_object = write_jsonl(tmp_path / "list.jsonl", [[1, 2]])
    with pytest.raises(ImportFormatError, match="expected a JSON object, got a list"):
        wtueval.import_files([not_object])


@pytest.mark.django_db
def test_import_stores_totals_and_a_reimport_writes_nothing() -> None:
    summary = benchmark_import(suite="wtueval", paths=[FIXTURE])
    assert summary.benchmark == "WTU-Eval"
    assert summary.tools == 0
    assert summary.samples == {
        "boolq-mini": 1,
        "gsm8k-mini": 2,
        "piqa-mini": 1,
        "race-mini": 1,
        "realtime-mini": 1,
    }
    assert summary.samples_written == 6
    stored = Sample.objects.get(benchmark__name="WTU-Eval", split="boolq-mini", external_id="1")
    assert stored.reference == {"answer": True, "kind": "general"}
    again = benchmark_import(suite="wtueval", paths=[FIXTURE])
    assert (again.tools_written, again.samples_written, again.unchanged) == (0, 0, 6)


@pytest.mark.django_db
def test_demo_files_import() -> None:
    manifest = json.loads((DEMO / "manifest.json").read_text("utf-8"))
    assert manifest["suite"] == "wtueval"
    summary = benchmark_import(
        suite="wtueval",
        paths=[DEMO / name for name in manifest["files"]],
        benchmark_name=manifest["benchmark"],
        is_demo=True,
    )
    assert summary.samples == {"arithmetic": 5, "multiple-choice": 5}
    assert Benchmark.objects.get(name="WTU-Eval (demo)").is_demo
    ids = Sample.objects.filter(benchmark__name="WTU-Eval (demo)").values_list(
        "external_id", flat=True
    )
    assert all(external_id.startswith("demo-") for external_id in ids)
