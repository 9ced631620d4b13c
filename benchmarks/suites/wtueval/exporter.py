"""WTU-Eval's JSON Lines written back (the inverse of importer.py): one question a line with
its dataset, kind, answer, options and the extra keys it was imported with."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchmarks.kit.base import SampleRecord, ToolRecord
from benchmarks.kit.export import Files, jsonl_bytes
from benchmarks.kit.registry import Exporter


def _line(sample: SampleRecord) -> dict[str, Any]:
    given = sample.input if isinstance(sample.input, dict) else {}
    reference = sample.reference if isinstance(sample.reference, dict) else {}
    line: dict[str, Any] = {
        "id": sample.external_id,
        "dataset": sample.split,
        "question": given.get("query"),
        "answer": reference.get("answer"),
        "kind": reference.get("kind"),
    }
    if given.get("options") is not None:
        line["options"] = given["options"]
    # The regions follow from the kind; every other key was the record's own.
    line.update((k, v) for k, v in sample.metadata.items() if k != "regions")
    return line


def write(samples: Sequence[SampleRecord], tools: Sequence[ToolRecord]) -> Files:
    return {"questions.jsonl": jsonl_bytes(_line(sample) for sample in samples)}


EXPORTER = Exporter(
    write=write,
    cannot_carry="the tool pool, which is not part of the benchmark's files (evaluation adds it)",
)
