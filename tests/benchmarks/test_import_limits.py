"""The per-record limits of imports: a record over IMPORT_MAX_RECORD_BYTES is refused before it is
parsed (a 55 MB line of a million keys used to take 563 MB), one holding more than
IMPORT_MAX_RECORD_ITEMS values is refused after; each error names the file and the line or
record, and nothing is imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from benchmarks.kit import base
from benchmarks.kit.base import ImportFormatError, iter_csv, iter_jsonl, load_json
from benchmarks.models import Benchmark
from benchmarks.services import benchmark_import

ROOT = Path(__file__).resolve().parents[2]


def many_keys(size: int) -> str:
    """A JSON object of about `size` bytes made of small keys: the shape whose parse costs the
    most memory for its size."""
    count = size // 12 + 1
    return "{" + ",".join(f'"k{i:07d}":0' for i in range(count)) + "}"


def peak_bytes(read: Callable[[], Any]) -> tuple[int, BaseException | None]:
    tracemalloc.start()
    try:
        read()
        caught = None
    except ImportFormatError as exc:
        caught = exc
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak, caught


def test_the_default_limits() -> None:
    # 4 MiB a record (the largest seed record is 45 KB), 200,000 values (the most in a seed
    # record is 1,263); the Django settings mirror the same environment variables.
    assert base.MAX_RECORD_BYTES == settings.IMPORT_MAX_RECORD_BYTES == 4 << 20
    assert base.MAX_RECORD_ITEMS == settings.IMPORT_MAX_RECORD_ITEMS == 200_000


def test_a_jsonl_line_over_the_limit_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    line = many_keys(base.MAX_RECORD_BYTES + 1000)
    path = tmp_path / "mine.jsonl"
    path.write_text('{"id": 1, "query": "fine"}\n' + line + "\n", "utf-8")
    peak, error = peak_bytes(lambda: list(iter_jsonl(path)))
    assert isinstance(error, ImportFormatError)
    assert (error.file, error.line) == (str(path), 2)
    assert f"record is {len(line):,} bytes" in error.message
    assert "IMPORT_MAX_RECORD_BYTES" in error.message
    # The text of the file (bytes, then str) is all there is: parsing the line would have built
    # ~350,000 keys, several times this.
    assert peak < 4 * path.stat().st_size


def test_a_json_list_element_over_the_limit_names_its_line_and_record(tmp_path: Path) -> None:
    big = many_keys(base.MAX_RECORD_BYTES + 1000)
    path = tmp_path / "Task1_awareness.json"
    fine = {"query": "Rain?", "thought_prompt": "p", "label": "negative"}
    path.write_text(f"[\n{json.dumps(fine)},\n{json.dumps(fine)},\n{big}\n]\n", "utf-8")
    peak, error = peak_bytes(lambda: load_json(path))
    assert isinstance(error, ImportFormatError)
    assert (error.line, error.record) == (4, 2)
    assert "per record" in error.message
    assert peak < 4 * path.stat().st_size


@pytest.mark.django_db
def test_a_json_object_member_over_the_limit_names_its_key(tmp_path: Path) -> None:
    path = tmp_path / "plugin_des.json"
    big = "x" * (base.MAX_RECORD_BYTES + 10)
    path.write_text(json.dumps({"WeatherTool": "fine", "BookTool": big}, indent=1), "utf-8")
    with pytest.raises(ImportFormatError) as err:
        benchmark_import(suite="metatool", paths=[path])
    assert (Path(err.value.file or "").name, err.value.line, err.value.record) == (
        "plugin_des.json",
        3,
        "BookTool",
    )
    assert not Benchmark.objects.exists()


def test_a_record_far_over_the_limit_is_refused_without_scanning_to_its_end(
    tmp_path: Path,
) -> None:
    # Its size is not known yet ("at least") when it is refused.
    path = tmp_path / "G1_instruction.json"
    path.write_text("[" + "[" * 1000 + "0," * (base.MAX_RECORD_BYTES) + "0" + "]" * 1001, "utf-8")
    with pytest.raises(ImportFormatError) as err:
        load_json(path)
    assert (err.value.line, err.value.record) == (1, 0)
    assert "record is at least 4,194,30" in err.value.message


def test_a_csv_row_over_the_limit_names_its_first_line(tmp_path: Path) -> None:
    # A quoted cell spreads the record over several lines, each under the limit.
    piece = "x" * (base.MAX_RECORD_BYTES // 3)
    cell = '"' + "\n".join([piece] * 4) + '"'
    path = tmp_path / "all_clean_data.csv"
    path.write_text(f"Query,Tool\nRain?,WeatherTool\n{cell},BookTool\n", "utf-8")
    with pytest.raises(ImportFormatError) as err:
        list(iter_csv(path, ["Query", "Tool"]))
    assert err.value.line == 3
    assert "per record" in err.value.message


def test_many_small_rows_are_not_one_record(tmp_path: Path) -> None:
    # The count starts again at every row: a file far over the limit, of small rows, is read.
    path = tmp_path / "all_clean_data.csv"
    row = "q" * 1000 + ",T\n"
    path.write_text("Query,Tool\n" + row * (base.MAX_RECORD_BYTES // 1000 + 10), "utf-8")
    assert path.stat().st_size > base.MAX_RECORD_BYTES
    assert sum(1 for _ in iter_csv(path, ["Query", "Tool"])) == base.MAX_RECORD_BYTES // 1000 + 10


@pytest.mark.django_db
def test_too_many_values_in_one_record(tmp_path: Path) -> None:
    # Well under the byte limit, but a list of this many values takes ~20 times its text.
    path = tmp_path / "questions.jsonl"
    values = json.dumps([0] * (base.MAX_RECORD_ITEMS + 1))
    fine = {"id": 1, "dataset": "GSM8K", "question": "2+2?", "answer": "4", "kind": "tool"}
    path.write_text(
        json.dumps(fine) + "\n" + json.dumps({**fine, "id": 2})[:-1] + f', "extra": {values}}}\n',
        "utf-8",
    )
    with pytest.raises(ImportFormatError) as err:
        benchmark_import(suite="wtueval", paths=[path])
    assert err.value.line == 2
    assert "IMPORT_MAX_RECORD_ITEMS" in err.value.message
    assert not Benchmark.objects.exists()


def test_the_values_are_counted_per_record_of_a_json_file(tmp_path: Path) -> None:
    # Together the records hold more values than the limit; each alone is far under it.
    per_record = base.MAX_RECORD_ITEMS // 4
    path = tmp_path / "Task1_awareness.json"
    records = [
        {"query": "Rain?", "thought_prompt": "p", "label": "negative", "n": [0] * per_record}
        for _ in range(5)
    ]
    path.write_text(json.dumps(records), "utf-8")
    assert len(load_json(path)) == 5


def test_the_limit_is_read_from_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "mine.jsonl"
    second = json.dumps({"id": 2, "query": "x" * 400})
    path.write_text(json.dumps({"id": 1, "query": "fine"}) + "\n" + second + "\n", "utf-8")
    env = {**os.environ, "IMPORT_MAX_RECORD_BYTES": "300", "DEBUG": "1"}
    done = subprocess.run(
        [sys.executable, "manage.py", "import_benchmark", "generic", str(path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    expected = f"{path}, line 2: record is {len(second)} bytes; the limit is 300 bytes per record"
    assert expected in done.stderr


@pytest.mark.django_db
def test_a_file_peeked_at_to_classify_it_is_held_to_the_limit(tmp_path: Path) -> None:
    # UltraTool reads the first line of a file with another name to tell whether it is a
    # test.json: that read is held to the same limit, before json.loads.
    path = tmp_path / "mine.json"
    path.write_text("\n" + many_keys(base.MAX_RECORD_BYTES + 10) + "\n", "utf-8")
    with pytest.raises(ImportFormatError) as err:
        benchmark_import(suite="ultratool", paths=[path])
    assert (err.value.file, err.value.line) == (str(path), 2)
    assert "per record" in err.value.message


def test_a_csv_row_is_measured_in_utf8_bytes(tmp_path: Path) -> None:
    # Under the limit in characters, over it in bytes: "é" is two bytes.
    path = tmp_path / "all_clean_data.csv"
    path.write_text(f"Query,Tool\n{'é' * (base.MAX_RECORD_BYTES // 2 + 10)},T\n", "utf-8")
    with pytest.raises(ImportFormatError) as err:
        list(iter_csv(path, ["Query", "Tool"]))
    assert err.value.line == 2
    assert "per record" in err.value.message
