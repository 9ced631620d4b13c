"""Transcripts written back (the inverse of importer.py): one line a sample, its id and split,
its messages and the tools it was offered as they were imported, and its metadata. A sample
revised since its import is written as its current revision."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchmarks.kit.base import SampleRecord, ToolRecord
from benchmarks.kit.export import Files, jsonl_bytes
from benchmarks.kit.registry import Exporter


def _line(sample: SampleRecord) -> dict[str, Any]:
    given = sample.input if isinstance(sample.input, dict) else {}
    line: dict[str, Any] = {
        "id": sample.external_id,
        "split": sample.split,
        "messages": given.get("messages"),
    }
    if given.get("tools") is not None:
        line["tools"] = given["tools"]
    if sample.metadata:
        line["metadata"] = sample.metadata
    return line


def write(samples: Sequence[SampleRecord], tools: Sequence[ToolRecord]) -> Files:
    return {"transcripts.jsonl": jsonl_bytes(_line(sample) for sample in samples)}


EXPORTER = Exporter(write=write)
