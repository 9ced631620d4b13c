"""A benchmark as a Hugging Face dataset folder, read back by the real `datasets`: every field
of every sample and tool equal to what is stored, under either gold version; the card's YAML
declares what `datasets` finds; hostile text and split names `datasets` refuses survive."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from benchmarks.exports import ExportRefused
from benchmarks.hf import SAMPLE_COLUMNS, TOOL_COLUMNS, benchmark_hf_export
from benchmarks.models import Benchmark, Sample, Tool
from benchmarks.services import benchmark_import, sample_revise
from tests.factories import make_researcher
from tests.hf_load import card, decoded, features_yaml, load, load_by_card

pytestmark = pytest.mark.django_db

HOSTILE = (
    '=HYPERLINK("http://x")\t+1 -2 @SUM(A1)\r\n\x01\x1b[31m naïve 日本 😀 \u2028\u0085 \\ "q" \''
)
JSON_SAMPLE = {c.name for c in SAMPLE_COLUMNS if c.kind == "json"}
JSON_TOOL = {c.name for c in TOOL_COLUMNS if c.kind == "json"}


def generic(tmp_path: Path) -> Benchmark:
    """A generic benchmark of three samples over two splits, one named as `datasets` refuses,
    with hostile text in its query, answer, metadata and tool."""
    tool = {
        "name": "look_up",
        "description": HOSTILE,
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
    }
    records = [
        {"id": "a-1", "query": HOSTILE, "tools": [tool], "answer": {"z": 1, "a": [1.5, None]}},
        {
            "id": "a-2",
            "query": "Plain?",
            "tools": [tool],
            "answer": "=1+1",
            "metadata": {"note": HOSTILE, "n": -0.0, "big": 12345678901234567},
        },
        {"id": "b-1", "query": "Other split", "tools": [tool], "split": "dev set/é"},
    ]
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    benchmark_import(suite="generic", paths=[path], benchmark_name="Hostile")
    return Benchmark.objects.get(name="Hostile")


def stored_rows(benchmark: Benchmark) -> dict[str, dict[str, Any]]:
    return {
        s.external_id: {
            "split": s.split,
            "external_id": s.external_id,
            "sample_id": s.pk,
            "kind": s.kind,
            "input": s.input,
            "reference": s.reference,
            "candidate_tools": list(s.candidate_tools or []),
            "metadata": s.metadata,
            "revision": s.revision,
        }
        for s in Sample.objects.filter(benchmark=benchmark)
    }


def test_every_field_of_every_sample_and_tool_comes_back_equal(tmp_path: Path) -> None:
    benchmark = generic(tmp_path)
    out = tmp_path / "hf"
    export = benchmark_hf_export(benchmark=benchmark, folder=out)
    assert export.rows == {"default": 2, "dev_set__": 1}
    assert export.renamed == {"dev set/é": "dev_set__"}
    assert sorted(p.name for p in (out / "data").iterdir()) == [
        "default-00000-of-00001.parquet",
        "dev_set__-00000-of-00001.parquet",
    ]

    loaded = load(out, tmp_path / "cache")
    assert set(loaded) == {"default", "dev_set__"}
    stored = stored_rows(benchmark)
    seen = []
    for split in loaded.values():
        assert split.column_names == [c.name for c in SAMPLE_COLUMNS]
        for row in split:
            row = decoded(row, JSON_SAMPLE)
            assert row == stored[row["external_id"]]
            seen.append(row["external_id"])
    assert sorted(seen) == ["a-1", "a-2", "b-1"]
    assert loaded["default"][0]["input"] == json.dumps({"query": HOSTILE}, ensure_ascii=False)
    assert json.loads(loaded["default"][0]["input"])["query"] == HOSTILE

    tools = load_by_card(out, tmp_path / "cache2", "tools")
    [tool] = Tool.objects.filter(benchmark=benchmark)
    assert [decoded(row, JSON_TOOL) for row in tools["tools"]] == [
        {
            "name": tool.name,
            "description": HOSTILE,
            "parameters": tool.parameters,
            "returns": tool.returns,
            "category": tool.category,
            "raw": tool.raw,
        }
    ]
    # the card's configs read the same samples as data_dir does
    by_card = load_by_card(out, tmp_path / "cache3")
    assert {k: v.to_list() for k, v in by_card.items()} == {
        k: v.to_list() for k, v in loaded.items()
    }


def test_the_card_declares_what_datasets_finds(tmp_path: Path) -> None:
    benchmark = generic(tmp_path)
    out = tmp_path / "hf"
    benchmark_hf_export(benchmark=benchmark, folder=out, license="cc-by-4.0")
    header, body = card(out)
    loaded = load(out, tmp_path / "cache")
    tools = load_by_card(out, tmp_path / "cache2", "tools")
    assert header["license"] == "cc-by-4.0"
    assert header["pretty_name"] == "Hostile (refined gold)"
    assert header["configs"] == [
        {
            "config_name": "default",
            "data_files": [
                {"split": "default", "path": "data/default-*"},
                {"split": "dev_set__", "path": "data/dev_set__-*"},
            ],
        },
        {"config_name": "tools", "data_files": [{"split": "tools", "path": "tools/tools-*"}]},
    ]
    default, tool_info = header["dataset_info"]
    assert default["features"] == features_yaml(loaded["default"])
    assert tool_info["features"] == features_yaml(tools["tools"])
    assert default["splits"] == [
        {"name": "default", "num_examples": 2},
        {"name": "dev_set__", "num_examples": 1},
    ]
    provenance = header["provenance"]
    assert provenance["benchmark"] == "Hostile" and provenance["suite"] == "generic"
    assert provenance["gold"] == "refined" and provenance["kind"] == "benchmark"
    assert provenance["version"] == "0.1.0"
    assert "`dev set/é` is written as `dev_set__`" in body
    assert "huggingface-cli upload" in body and "load_dataset" in body


def test_a_refined_gold_differs_from_the_published_in_the_refined_sample_only(
    tmp_path: Path,
) -> None:
    benchmark = generic(tmp_path)
    sample = Sample.objects.get(benchmark=benchmark, external_id="a-2")
    sample_revise(
        sample_id=sample.pk,
        base_revision=0,
        input={"query": "Plain, refined?"},
        reference={"answer": "=2+2"},
        note="clearer",
    )
    rows = {}
    for gold in ("published", "refined"):
        benchmark_hf_export(benchmark=benchmark, folder=tmp_path / gold, gold=gold)
        loaded = load(tmp_path / gold, tmp_path / f"cache-{gold}")
        rows[gold] = {
            row["external_id"]: decoded(row, JSON_SAMPLE)
            for split in loaded.values()
            for row in split
        }
    published, refined = rows["published"], rows["refined"]
    assert published.keys() == refined.keys() == {"a-1", "a-2", "b-1"}
    assert [k for k in published if published[k] != refined[k]] == ["a-2"]
    assert published["a-2"]["input"] == {"query": "Plain?"}
    assert published["a-2"]["reference"] == {"answer": "=1+1"}
    assert published["a-2"]["revision"] == 0
    assert refined["a-2"]["input"] == {"query": "Plain, refined?"}
    assert refined["a-2"]["reference"] == {"answer": "=2+2"}
    assert refined["a-2"]["revision"] == 1
    assert card(tmp_path / "published")[0]["provenance"]["gold"] == "published"


def test_one_split_and_refusals(tmp_path: Path) -> None:
    benchmark = generic(tmp_path)
    export = benchmark_hf_export(benchmark=benchmark, folder=tmp_path / "one", split="dev set/é")
    assert export.rows == {"dev_set__": 1}
    with pytest.raises(ExportRefused, match="has no split 'nope'"):
        benchmark_hf_export(benchmark=benchmark, folder=tmp_path / "x", split="nope")
    with pytest.raises(ExportRefused, match="unknown gold version 'best'"):
        benchmark_hf_export(benchmark=benchmark, folder=tmp_path / "x", gold="best")


def test_the_command_writes_the_folder(tmp_path: Path) -> None:
    generic(tmp_path)
    stdout = io.StringIO()
    out = tmp_path / "out"
    call_command(
        "export_benchmark", "Hostile", "--format", "hf", "--gold", "published",
        "--out", str(out), stdout=stdout, verbosity=0,
    )  # fmt: skip
    said = stdout.getvalue()
    assert "Hostile (published gold): 3 samples in splits default (2), dev_set__ (1), 1 tools" in (
        said
    )
    assert "split 'dev set/é' is written as 'dev_set__'" in said
    assert len(load(out, tmp_path / "cache")["default"]) == 2
    with pytest.raises(CommandError, match="is not empty"):
        call_command("export_benchmark", "Hostile", "--format", "hf", "--out", str(out))


def test_the_export_page_downloads_the_folder_as_a_zip(tmp_path: Path, client: Client) -> None:
    benchmark = generic(tmp_path)
    client.force_login(make_researcher())
    page = client.get(f"/benchmarks/{benchmark.pk}/export/")
    assert b'value="hf"' in page.content
    response = client.get(f"/benchmarks/{benchmark.pk}/export/?format=hf&gold=published")
    assert response.status_code == 200
    assert 'filename="Hostile-published-hf.zip"' in response["Content-Disposition"]
    with zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))) as archive:
        names = sorted(archive.namelist())
        archive.extractall(tmp_path / "zip")
    assert names == [
        "Hostile-published-hf/README.md",
        "Hostile-published-hf/data/default-00000-of-00001.parquet",
        "Hostile-published-hf/data/dev_set__-00000-of-00001.parquet",
        "Hostile-published-hf/tools/tools-00000-of-00001.parquet",
    ]
    loaded = load(tmp_path / "zip" / "Hostile-published-hf", tmp_path / "cache")
    assert sorted(row["external_id"] for s in loaded.values() for row in s) == ["a-1", "a-2", "b-1"]
    # a refusal is the page again with its message, not a broken zip
    refused = client.get(f"/benchmarks/{benchmark.pk}/export/?format=hf&split=nope")
    assert refused.status_code == 400
    assert b"has no split" in refused.content
