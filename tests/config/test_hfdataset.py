"""The Hugging Face dataset writer on its own: rows in row groups as they come, a long split
in several files named -0000i-of-0000N, split names `datasets` accepts, and a card whose YAML
reads back as written whatever the texts hold; read back by the real `datasets`."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from config import hfdataset
from config.hfdataset import (
    CardText,
    Column,
    DatasetWriter,
    HFDatasetError,
    hf_split_names,
    yaml_lines,
)
from tests.hf_load import card, load

COLUMNS = (
    Column("n", "int64", "a number"),
    Column("text", "string", "a text"),
    Column("value", "json", "any JSON"),
    Column("names", "strings", "texts"),
    Column("x", "float64", "a float"),
    Column("ok", "bool", "a flag"),
)
CARD = CardText(pretty_name="t", license="mit", summary="s", provenance={"a": 1})


def test_split_names_that_datasets_accepts() -> None:
    assert hf_split_names(["test", "dev set", "dev-set", "", "ünï", "a.b", "test"]) == {
        "test": "test",
        "dev set": "dev_set",
        "dev-set": "dev_set_2",
        "": "split",
        "ünï": "_n_",
        "a.b": "a_b",
    }


def test_a_long_split_in_groups_and_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hfdataset, "ROWS_PER_GROUP", 4)
    monkeypatch.setattr(hfdataset, "ROWS_PER_FILE", 10)
    writer = DatasetWriter(tmp_path / "out", COLUMNS)
    rows = [
        (i, f"=t{i}", {"i": i, "l": [None, True]} if i % 3 else None, [str(i)] * (i % 2),
         i / 7 if i % 5 else None, i % 2 == 0 if i % 4 else None)
        for i in range(25)
    ]  # fmt: skip
    for row in rows:
        writer.add("long", row)
    writer.add("short", rows[0])
    assert writer.close(CARD) == {"default": {"long": 25, "short": 1}}
    files = sorted(p.name for p in (tmp_path / "out" / "data").iterdir())
    assert files == [
        "long-00000-of-00003.parquet",
        "long-00001-of-00003.parquet",
        "long-00002-of-00003.parquet",
        "short-00000-of-00001.parquet",
    ]
    first = pq.ParquetFile(tmp_path / "out" / "data" / files[0])
    # 12 rows: groups of 4 until the file holds ROWS_PER_FILE or more
    assert [first.metadata.row_group(i).num_rows for i in range(first.num_row_groups)] == [4, 4, 4]
    loaded = load(tmp_path / "out", tmp_path / "cache")
    assert [r["n"] for r in loaded["long"]] == list(range(25))
    for row, (n, text, value, names, x, ok) in zip(loaded["long"], rows, strict=True):
        assert row == {
            "n": n,
            "text": text,
            "value": None if value is None else json.dumps(value),
            "names": names,
            "x": x,
            "ok": ok,
        }


def test_refusals(tmp_path: Path) -> None:
    with pytest.raises(HFDatasetError, match="unknown kind 'date'"):
        Column("d", "date", "")
    writer = DatasetWriter(tmp_path, COLUMNS)
    with pytest.raises(HFDatasetError, match="split name 'a-b': use hf_split_names"):
        writer.add("a-b", (1, "", None, [], None, None))
    with pytest.raises(HFDatasetError, match="no rows to write"):
        DatasetWriter(tmp_path / "empty", COLUMNS).close(CARD)
    bad = DatasetWriter(tmp_path / "bad", COLUMNS)
    bad.add("s", ("not a number", "", None, [], None, None))
    with pytest.raises(HFDatasetError, match="split 's': a value does not fit"):
        bad.close(CARD)


HOSTILE = [
    "plain",
    "=1+1",
    "- a list?",
    "key: value # comment",
    "---",
    "'single' \"double\" \\ back",
    "\x01\x1b[31m\t\r\n",
    "ünïcødé 表 😀 \u2028 \u0085 \ufeff",
    "",
    "null",
    "true",
    "1e3",
    "{a: [b]}",
    "&anchor *alias !tag %",
]


def test_the_yaml_reads_back_as_written(tmp_path: Path) -> None:
    value = {
        "texts": HOSTILE,
        "nested": {"a": [1, 2.5, None, True, {"b": []}], "": {}, "=x": HOSTILE[6]},
        "numbers": [1e-05, 1e20, -0.0, 3.25e-300, 12345678901234567, -7, 0.1],
        **{text: text for text in HOSTILE},
    }
    assert yaml.safe_load("\n".join(yaml_lines(value))) == value
    writer = DatasetWriter(tmp_path, COLUMNS)
    writer.add("s", (1, "", None, [], None, None))
    writer.close(
        CardText(pretty_name=HOSTILE[3], license="other", summary=HOSTILE[5], provenance=value)
    )
    header, body = card(tmp_path)
    assert header["provenance"] == value and header["pretty_name"] == HOSTILE[3]
    assert body.lstrip("\n").startswith("# key: value # comment\n")
