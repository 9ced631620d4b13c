"""The generic suite's JSON Lines written back (the inverse of importer.py): one line a sample,
its split and id, its query or turns, the tools it offers with their full definitions, its
expected answer and tool calls, its metadata."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchmarks.kit.base import SampleRecord, ToolRecord
from benchmarks.kit.export import ExportError, Files, jsonl_bytes, sample_name
from benchmarks.kit.registry import Exporter


def _tool(tool: ToolRecord) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "parameters": tool.parameters}


def _line(sample: SampleRecord, tools: dict[str, ToolRecord]) -> dict[str, Any]:
    line: dict[str, Any] = {"id": sample.external_id, "split": sample.split}
    given = sample.input if isinstance(sample.input, dict) else {}
    if sample.kind == "dialogue":
        line["turns"] = given.get("turns")
    else:
        line["query"] = given.get("query")
    offered = []
    for name in sample.candidate_tools:
        if name not in tools:
            raise ExportError(
                f"offers tool {name!r}, which the benchmark does not have",
                sample=sample_name(sample),
                field="candidate_tools",
            )
        offered.append(_tool(tools[name]))
    if offered:
        line["tools"] = offered
    reference = sample.reference if isinstance(sample.reference, dict) else {}
    if "answer" in reference:
        line["answer"] = reference["answer"]
    if reference.get("tool_calls") is not None:
        line["tool_calls"] = reference["tool_calls"]
    if sample.metadata:
        line["metadata"] = sample.metadata
    return line


def write(samples: Sequence[SampleRecord], tools: Sequence[ToolRecord]) -> Files:
    by_name = {tool.name: tool for tool in tools}
    return {"questions.jsonl": jsonl_bytes(_line(sample, by_name) for sample in samples)}


EXPORTER = Exporter(write=write)
