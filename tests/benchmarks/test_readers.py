"""The careful readers every importer uses: each bad input gives an error naming file and line."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from benchmarks.kit import base
from benchmarks.kit.base import (
    ImportBundle,
    ImportFormatError,
    SampleRecord,
    ToolRecord,
    iter_csv,
    iter_jsonl,
    load_json,
    read_text,
    validate_bundle,
)


def write(tmp_path: Path, name: str, data: bytes | str) -> Path:
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


def test_invalid_utf8_names_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, "q.jsonl", b'{"a": 1}\n{"a": "caf\xe9"}\n')
    with pytest.raises(ImportFormatError) as err:
        read_text(path)
    assert err.value.line == 2
    assert "not valid UTF-8" in str(err.value)
    assert "0xe9" in str(err.value)
    assert str(path) in str(err.value)


def test_leading_bom_is_dropped_but_a_bom_inside_is_refused(tmp_path: Path) -> None:
    assert read_text(write(tmp_path, "a.csv", "\ufeffQuery,Tool\nx,y\n")) == "Query,Tool\nx,y\n"
    joined = write(tmp_path, "b.jsonl", '{"a": 1}\n\ufeff{"a": 2}\n')
    with pytest.raises(ImportFormatError) as err:
        list(iter_jsonl(joined))
    assert err.value.line == 2
    assert "byte-order mark" in str(err.value)


@pytest.mark.parametrize("content", [b"", b"\n\n  \n", b"\xef\xbb\xbf"])
def test_empty_file(tmp_path: Path, content: bytes) -> None:
    path = write(tmp_path, "empty.json", content)
    with pytest.raises(ImportFormatError, match="is empty") as err:
        load_json(path)
    assert err.value.file == str(path)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(ImportFormatError, match="no such file"):
        read_text(tmp_path / "nope.json")
    with pytest.raises(ImportFormatError, match="directory"):
        read_text(tmp_path)


def test_invalid_json_line_is_named(tmp_path: Path) -> None:
    path = write(tmp_path, "x.jsonl", '{"id": 1}\n\n{"id": 2,}\n')
    with pytest.raises(ImportFormatError) as err:
        list(iter_jsonl(path))
    assert err.value.line == 3
    assert "not valid JSON" in str(err.value)


def test_deeply_nested_json_is_refused_not_crashed(tmp_path: Path) -> None:
    # Deep enough to blow Python's recursion limit inside json.loads.
    path = write(tmp_path, "deep.json", "[" * 100_000 + "]" * 100_000)
    with pytest.raises(ImportFormatError, match="nested"):
        load_json(path)
    # Shallow enough for json, deeper than our limit: refused by the walk, with the field path.
    moderate = {"a": json.loads("[" * 70 + "]" * 70)}
    path = write(tmp_path, "moderate.jsonl", json.dumps(moderate) + "\n")
    with pytest.raises(ImportFormatError) as err:
        list(iter_jsonl(path))
    assert err.value.line == 1
    assert err.value.field is not None and err.value.field.startswith("a[0]")


def test_oversized_field_is_refused_with_its_name(tmp_path: Path) -> None:
    big = "x" * (base.MAX_FIELD_BYTES + 1)
    path = write(tmp_path, "big.jsonl", '{"id": 1}\n' + json.dumps({"id": 2, "query": big}) + "\n")
    with pytest.raises(ImportFormatError) as err:
        list(iter_jsonl(path))
    assert (err.value.line, err.value.field) == (2, "query")
    assert "limit" in str(err.value)
    csv_path = write(tmp_path, "big.csv", f"Query,Tool\nshort,T\n{big},T\n")
    with pytest.raises(ImportFormatError) as err:
        list(iter_csv(csv_path, ["Query", "Tool"]))
    assert (err.value.line, err.value.field) == (3, "Query")


def test_fifty_megabyte_field(tmp_path: Path) -> None:
    # Over the record limit as well: the line is refused whole, before json.loads parses it.
    path = write(tmp_path, "huge.jsonl", b'{"query": "' + b"a" * (50 << 20) + b'"}\n')
    with pytest.raises(ImportFormatError) as err:
        list(iter_jsonl(path))
    assert err.value.line == 1
    assert "52,428,813 bytes" in str(err.value)
    assert "per record" in str(err.value)


def test_nul_character_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "nul.jsonl", '{"query": "a\\u0000b"}\n')
    with pytest.raises(ImportFormatError, match="NUL") as err:
        list(iter_jsonl(path))
    assert err.value.field == "query"


def test_csv_header_and_ragged_rows(tmp_path: Path) -> None:
    with pytest.raises(ImportFormatError) as err:
        list(iter_csv(write(tmp_path, "h.csv", "Query\nx\n"), ["Query", "Tool"]))
    assert err.value.line == 1
    assert "Tool" in str(err.value)
    with pytest.raises(ImportFormatError) as err:
        list(iter_csv(write(tmp_path, "r.csv", "Query,Tool\na,b\nc,d,e\n"), ["Query", "Tool"]))
    assert err.value.line == 3
    with pytest.raises(ImportFormatError) as err:
        list(iter_csv(write(tmp_path, "s.csv", "Query,Tool\na,b\nc\n"), ["Query", "Tool"]))
    assert (err.value.line, err.value.field) == (3, "Tool")


def test_csv_rows_keep_line_numbers_across_quoted_newlines(tmp_path: Path) -> None:
    path = write(tmp_path, "q.csv", 'Query,Tool\n"two\nlines",A\nthird,B\n')
    assert [(line, row["Tool"]) for line, row in iter_csv(path, ["Query", "Tool"])] == [
        (3, "A"),
        (4, "B"),
    ]


def test_csv_rows_are_the_rows_dictreader_makes(tmp_path: Path) -> None:
    # Blank lines skipped, a repeated column keeping its last cell, quoted separators, quotes
    # and newlines, CRLF and LF: what csv.DictReader gave, which the reader used to be.
    text = (
        'Query,Tool,Query\r\n"a, b",T1,last\r\n\r\n"say ""hi""\nthen",T2,y\n\nz,T3,\n'
        "\u00e9\u6f22,T4,w"
    )
    reader = csv.DictReader(io.StringIO(text, newline=""))
    expected = [(reader.line_num, row) for row in reader]
    assert len(expected) == 4
    rows = list(iter_csv(write(tmp_path, "d.csv", text), ["Query", "Tool"]))
    assert rows == expected
    assert [line for line, _ in rows] == [2, 5, 7, 8]


def test_a_short_csv_row_reports_a_bad_cell_before_it_first(tmp_path: Path) -> None:
    path = write(tmp_path, "n.csv", "Query,Tool,Extra\nok,T,e\na\x00b,T\n")
    with pytest.raises(ImportFormatError, match="NUL") as err:
        list(iter_csv(path, ["Query", "Tool"]))
    assert (err.value.line, err.value.field) == (3, "Query")


def test_require_names_missing_and_mistyped_fields() -> None:
    with pytest.raises(ImportFormatError) as err:
        base.require({"id": 1}, "query", str, file="f.jsonl", line=4)
    assert str(err.value) == "f.jsonl, line 4, field 'query': missing"
    with pytest.raises(ImportFormatError) as err:
        base.require({"query": ["a"]}, "query", str, file="f.jsonl", line=5)
    assert str(err.value) == "f.jsonl, line 5, field 'query': expected a string, got a list"
    with pytest.raises(ImportFormatError, match="boolean"):
        base.require({"id": True}, "id", (str, int), file="f.jsonl", line=6)
    assert base.require({"id": 7}, "id", (str, int), file="f.jsonl") == 7


def test_validate_bundle_reports_duplicates_with_both_places() -> None:
    bundle = ImportBundle(
        samples=[
            SampleRecord(split="s", external_id="1", input={}, source="a.jsonl, line 1"),
            SampleRecord(split="t", external_id="1", input={}, source="a.jsonl, line 2"),
            SampleRecord(split="s", external_id="1", input={}, source="a.jsonl, line 3"),
        ]
    )
    with pytest.raises(ImportFormatError) as err:
        validate_bundle(bundle)
    message = str(err.value)
    assert "a.jsonl, line 3" in message
    assert "first seen at a.jsonl, line 1" in message


def test_validate_bundle_checks_column_sizes() -> None:
    with pytest.raises(ImportFormatError, match="id must be"):
        validate_bundle(ImportBundle(samples=[SampleRecord(split="s", external_id="", input={})]))
    with pytest.raises(ImportFormatError, match="kind must be"):
        validate_bundle(
            ImportBundle(samples=[SampleRecord(split="s", external_id="1", input={}, kind="x")])
        )
    with pytest.raises(ImportFormatError, match="tool name"):
        validate_bundle(ImportBundle(tools=[ToolRecord(name="t" * 301)]))


def test_validate_bundle_limits_are_inclusive_and_the_first_bad_sample_is_named() -> None:
    def sample(split: str, external_id: str, line: int, kind: str = "query") -> SampleRecord:
        return SampleRecord(
            split=split, external_id=external_id, input={}, kind=kind, source=f"f, line {line}"
        )

    longest = [sample("s" * base.MAX_SPLIT_CHARS, "i" * base.MAX_ID_CHARS, 1), sample("s", "2", 2)]
    validate_bundle(ImportBundle(samples=longest))
    cases = [
        (sample("s" * (base.MAX_SPLIT_CHARS + 1), "3", 3), "split must be"),
        (sample("", "3", 3), "split must be"),
        (sample("s", "i" * (base.MAX_ID_CHARS + 1), 3), "id must be"),
        (sample("s", "3", 3, kind="plan "), "kind must be"),
        (sample("s", "2", 3), "duplicate id '2'"),
    ]
    for bad, message in cases:
        # A later sample breaks another rule: the error is about the first one, in order.
        later = sample("s", "", 4)
        with pytest.raises(ImportFormatError, match=message) as err:
            validate_bundle(ImportBundle(samples=[*longest, bad, later]))
        assert "f, line 3" in str(err.value)


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_are_refused(tmp_path: Path, number: str) -> None:
    path = write(tmp_path, "n.jsonl", '{"a": 1}\n{"score": ' + number + "}\n")
    with pytest.raises(ImportFormatError, match="cannot store") as err:
        list(iter_jsonl(path))
    assert err.value.line == 2
