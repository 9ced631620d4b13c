"""Writing a benchmark back out: what every suite's exporter shares.

Pure Python, no Django. An exporter is the inverse of its suite's importer: it takes the stored
samples and tools, as the records the importer made (`SampleRecord`, `ToolRecord`; a refined
sample holds its current revision), and returns the files of the suite's published format,
{relative path: bytes}, so that importing them gives the same samples. The service
(benchmarks/exports.py) adds provenance.json beside them and writes a folder or a zip.

The other format every benchmark has is the platform's JSON Lines: one JSON object a line with
every stored field of a sample (PLATFORM_SAMPLE_KEYS, in that order, in PLATFORM_SAMPLES; written
by benchmarks.exports.samples_jsonl straight from the database) and of a tool
(`platform_tools_jsonl`, in PLATFORM_TOOLS); lossless, for analysis, and read by no importer.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from benchmarks.kit.base import SampleRecord, ToolRecord

Files = dict[str, bytes]


class ExportError(ValueError):
    """A benchmark cannot be written in a format (a split that cannot be a file name, a value
    the format has no place for). Says which sample and field."""

    def __init__(self, message: str, *, sample: str | None = None, field: str | None = None):
        self.message = message
        self.sample = sample
        self.field = field
        where = ", ".join(
            part
            for part in (f"sample {sample}" if sample else "", f"field {field!r}" if field else "")
            if part
        )
        super().__init__(f"{where}: {message}" if where else message)


def json_bytes(value: Any) -> bytes:
    """One JSON document, indented as the published files are, non-ASCII kept as text."""
    return (json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode()


def jsonl_bytes(records: Iterable[Any]) -> bytes:
    """JSON Lines: one compact object a line."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()


def by_split(samples: Iterable[SampleRecord]) -> dict[str, list[SampleRecord]]:
    """The samples grouped by split, splits and samples in the order given."""
    groups: dict[str, list[SampleRecord]] = {}
    for sample in samples:
        groups.setdefault(sample.split, []).append(sample)
    return groups


def file_part(split: str, what: str = "split") -> str:
    """`split` as part of a file name, where the format names a split by its file; refuses a
    name that is not one (a path separator, a leading dot, an empty name)."""
    if (
        not split
        or split.strip() != split
        or split.startswith(".")
        or any(c in split for c in '/\\:*?"<>|\x00')
    ):
        raise ExportError(
            f"{what} {split!r} cannot be a file name, and this format names the {what} by its file"
        )
    return split


def sample_name(sample: SampleRecord) -> str:
    return f"{sample.split}/{sample.external_id}"


PLATFORM_SAMPLES = "samples.jsonl"
PLATFORM_TOOLS = "tools.jsonl"
# The keys of a line of PLATFORM_SAMPLES, in the order written.
PLATFORM_SAMPLE_KEYS = (
    "split",
    "external_id",
    "kind",
    "input",
    "reference",
    "candidate_tools",
    "metadata",
)


def platform_tools_jsonl(tools: Sequence[ToolRecord]) -> bytes:
    """Every stored field of every tool, one JSON object a line."""
    return jsonl_bytes(
        {
            "name": t.name,
            "description": t.description,
            "parameters": t.parameters,
            "returns": t.returns,
            "category": t.category,
            "raw": t.raw,
        }
        for t in tools
    )
