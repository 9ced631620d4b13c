"""--format jsonl: every stored field of every sample, one JSON object a line, byte for byte what
json.dumps (ensure_ascii=False) writes of the fields as Django reads them, though PostgreSQL
builds each line; under either gold, for one split, with refined and dropped samples."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from benchmarks.exports import DROPPED, benchmark_export
from benchmarks.models import Benchmark, Sample, SampleRevision, Tool
from benchmarks.selectors import PUBLISHED_GOLD, REFINED_GOLD
from benchmarks.services import sample_revise, samples_annotate

pytestmark = pytest.mark.django_db

# Every ASCII character (the control characters among them), quotes, backslashes, and text
# beyond ASCII: what the escaping of PostgreSQL and of json.dumps must agree on.
AWKWARD = "".join(chr(i) for i in range(1, 128)) + " é € 😀 \u2028 \ufeff \\u0041 \\\" '"


def line(fields: dict[str, Any]) -> bytes:
    """A sample's line as the platform's JSON Lines defines it, written by Python."""
    return (json.dumps(fields, ensure_ascii=False) + "\n").encode()


def expected(benchmark: Benchmark, split: str | None = None) -> bytes:
    """Every stored sample's line, in the order of split and id, from the fields as Django
    reads them."""
    samples = benchmark.samples.order_by("split", "id")
    if split:
        samples = samples.filter(split=split)
    return b"".join(
        line(
            {
                "split": s.split,
                "external_id": s.external_id,
                "kind": s.kind,
                "input": s.input,
                "reference": s.reference,
                "candidate_tools": list(s.candidate_tools or []),
                "metadata": dict(s.metadata or {}),
            }
        )
        for s in samples
    )


@pytest.fixture
def benchmark() -> Benchmark:
    benchmark = Benchmark.objects.create(name="awkward", suite="generic")
    contents: list[dict[str, Any]] = [
        {
            "external_id": "plain",
            "input": {"query": "What is 2 plus 2?"},
            "reference": {"answer": "4"},
        },
        {
            "external_id": f"id {AWKWARD}",
            "kind": Sample.Kind.DIALOGUE,
            # keys in an order that is not jsonb's (which sorts them by length, then bytes)
            "input": {"zeta": [AWKWARD, {"b": 1, "a": [True, False, None]}], "q": AWKWARD},
            "reference": {
                "calls": [{"name": "f", "arguments": {"x": 1.5, "y": -3, "big": 2**70}}],
                "ratio": 0.30000000000000004,
                "whole": 3.0,
                "nested": {"": {}, "empty": [], AWKWARD: "key"},
            },
            "candidate_tools": ["f", AWKWARD],
            "metadata": {"source": AWKWARD, "n": 0, "flags": [None, 0.0]},
        },
        # no gold (SQL NULL), and fields Python holds false
        {"external_id": "sparse", "input": {}, "reference": None, "metadata": {}},
        {"external_id": "scalar gold", "input": {"query": ""}, "reference": "just text"},
        {"external_id": "list gold", "input": {"turns": []}, "reference": [1, "two", [3]]},
    ]
    for split in ("test", "dev", "Dev", "ä"):
        for content in contents:
            Sample.objects.create(benchmark=benchmark, split=split, **content)
    Tool.objects.create(
        benchmark=benchmark, name="f", description=AWKWARD, parameters={"type": "object"}
    )
    return benchmark


def samples_file(benchmark: Benchmark, **options: Any) -> bytes:
    return benchmark_export(benchmark=benchmark, fmt="jsonl", **options).files["samples.jsonl"]


def test_the_lines_are_what_json_dumps_writes_of_the_stored_fields(benchmark: Benchmark) -> None:
    written = samples_file(benchmark)
    assert written == expected(benchmark)
    assert len(written.splitlines()) == 20
    assert samples_file(benchmark, split="Dev") == expected(benchmark, split="Dev")
    assert samples_file(benchmark, gold=PUBLISHED_GOLD) == expected(benchmark)


def test_refined_and_dropped_samples_under_either_gold(benchmark: Benchmark) -> None:
    refined = benchmark.samples.get(split="dev", external_id="plain")
    imported = line(
        {
            "split": "dev",
            "external_id": "plain",
            "kind": "query",
            "input": {"query": "What is 2 plus 2?"},
            "reference": {"answer": "4"},
            "candidate_tools": [],
            "metadata": {},
        }
    )
    sample_revise(
        sample_id=refined.pk,
        base_revision=0,
        input={"query": "What is two plus two?", "unit": "é"},
        reference={"answer": "four"},
        note="in words",
    )
    dropped = benchmark.samples.get(split="test", external_id="sparse")
    samples_annotate(values={dropped.pk: {DROPPED: 7}})
    dropped_line = expected(benchmark, split="test").splitlines(keepends=True)[2]
    assert b'"dropped_by_refinement": 7' in dropped_line

    seen: list[int] = []
    export = benchmark_export(benchmark=benchmark, fmt="jsonl", progress=seen.append)
    written = export.files["samples.jsonl"]
    # the refined gold: the sample as refined, the dropped one left out and named
    assert written == expected(benchmark).replace(dropped_line, b"")
    # (keys in jsonb's order, as Django reads them too)
    assert '"input": {"unit": "é", "query": "What is two plus two?"}'.encode() in written
    assert sum(seen) == 20 and export.samples == 19
    provenance = json.loads(export.files["provenance.json"])
    assert [(c["external_id"], c["revision"]) for c in provenance["changed"]] == [("plain", 1)]
    assert provenance["dropped"] == [{"external_id": "sparse", "split": "test"}]
    assert provenance["samples"] == 19

    # the published gold: every sample as imported, the dropped mark left out
    published = benchmark_export(benchmark=benchmark, fmt="jsonl", gold=PUBLISHED_GOLD)
    as_imported = (
        expected(benchmark)
        .replace(expected(benchmark, split="dev").splitlines(keepends=True)[0], imported)
        .replace(dropped_line, dropped_line.replace(b'"dropped_by_refinement": 7', b""))
    )
    assert published.files["samples.jsonl"] == as_imported
    assert b'"metadata": {}}\n' in as_imported
    assert published.samples == 20 and published.changed == 0 and published.dropped == 0
    assert SampleRevision.objects.get(sample=refined, number=0).reference == {"answer": "4"}
    assert samples_file(benchmark, gold=REFINED_GOLD, split="dev") == expected(
        benchmark, split="dev"
    )


def test_numbers_are_written_as_postgresql_writes_them(benchmark: Benchmark) -> None:
    Sample.objects.create(
        benchmark=benchmark,
        split="numbers",
        external_id="small",
        input={"tiny": 1e-07, "huge": 1e20},
        reference={"answer": 0.1},
    )
    written = samples_file(benchmark, split="numbers")
    assert b'"input": {"huge": 100000000000000000000, "tiny": 0.0000001}' in written
    # the same values, read back
    assert json.loads(written) == json.loads(expected(benchmark, split="numbers"))


def test_the_command_writes_the_lines(benchmark: Benchmark, tmp_path: Path) -> None:
    call_command(
        "export_benchmark",
        "awkward",
        "--format",
        "jsonl",
        "--out",
        str(tmp_path),
        stdout=io.StringIO(),
        verbosity=0,
    )
    assert (tmp_path / "samples.jsonl").read_bytes() == expected(benchmark)
    # (split at \n alone: a line holds U+2028 as it is, which str.splitlines would split at)
    tools = [json.loads(text) for text in (tmp_path / "tools.jsonl").read_bytes().split(b"\n")[:-1]]
    assert [(t["name"], t["description"]) for t in tools] == [("f", AWKWARD)]
