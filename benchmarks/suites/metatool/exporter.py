"""MetaTool's files written back (the inverse of importer.py), under the repository's names:

- `all_clean_data.csv`, with the header and line end it was imported with
  (metadata["published"]; `row_index,Query,Tool` for queries imported before): without
  `row_index` when the ids are the row numbers,
- `multi_tool_query_golden.json`, `Task1.json` (awareness), `Task2-Subtask3.json`
  (reliability), `Task2-Subtask4.json` (multi-tool), each record with the keys it was imported
  with (metadata) besides the ones the platform reads, in their published order and the file's
  layout (metadata["published"], layout.write_records),
- `scenario/<Name>.json` ({"Tools", "ref"}, as published while unchanged),
- the tool descriptions: `plugin_des.json` and `big_tool_des.json` (name -> description) for
  the tools read from those files, each at its place there, with the descriptions a later file
  gave a name already described (raw["also"]); `plugin_info.json` (the store entries, those
  of a name defined earlier among them, from raw["also"]) likewise.

A refined query is written as the record's query; the prompts built around it
(thought_prompt, action_prompt) are written as published, since they are the benchmark's
own text and the candidate list is read from action_prompt."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from benchmarks.kit.base import SampleRecord, ToolRecord
from benchmarks.kit.export import (
    ExportError,
    Files,
    by_split,
    file_part,
    sample_name,
)
from benchmarks.kit.layout import write_document, write_records
from benchmarks.kit.registry import Exporter
from benchmarks.suites.metatool.importer import ALSO, PUBLISHED

TASK_FILES = {
    "awareness": "Task1.json",
    "reliability": "Task2-Subtask3.json",
    "multi_tool": "Task2-Subtask4.json",
}


def _get(sample: SampleRecord, where: str, key: str, kind: type | tuple[type, ...]) -> Any:
    holder = sample.input if where == "input" else sample.reference
    value = holder.get(key) if isinstance(holder, dict) else None
    if not isinstance(value, kind):
        raise ExportError(
            f"expected {where}[{key!r}] to be {getattr(kind, '__name__', 'a value')}, got "
            f"{type(value).__name__}",
            sample=sample_name(sample),
            field=key,
        )
    return value


def _queries(samples: list[SampleRecord]) -> bytes:
    """The CSV as imported: its header (with row_index or without, when the ids are the row
    numbers) and line end; `row_index,Query,Tool` and "\\n" for queries imported before."""
    layout = samples[0].metadata.get(PUBLISHED) or {"header": "row_index,Query,Tool", "eol": "\n"}
    columns = next(csv.reader([layout["header"]]))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator=layout["eol"])
    buffer.write(layout["header"] + layout["eol"])
    for s in samples:
        row = {
            "row_index": s.external_id,
            "Query": _get(s, "input", "query", str),
            "Tool": _get(s, "reference", "tool", str),
        }
        writer.writerow([row.get(column, "") for column in columns])
    text = buffer.getvalue()
    if (samples[-1].metadata.get(PUBLISHED) or {}).get("end") == "":
        text = text.removesuffix(layout["eol"])
    return text.encode()


def _fields(sample: SampleRecord) -> dict[str, Any]:
    """The record's keys kept in metadata, without the platform's own."""
    return {k: v for k, v in sample.metadata.items() if k != PUBLISHED}


def _records(records: list[tuple[SampleRecord, dict[str, Any]]]) -> bytes:
    return write_records(
        [(None, record, sample.metadata.get(PUBLISHED)) for sample, record in records]
    ).encode()


def _golden(samples: list[SampleRecord]) -> bytes:
    return _records(
        [
            (
                s,
                {
                    **_fields(s),
                    "query": _get(s, "input", "query", str),
                    "tool": _get(s, "reference", "tools", list),
                },
            )
            for s in samples
        ]
    )


def _task(split: str, samples: list[SampleRecord]) -> bytes:
    records = []
    for s in samples:
        record: dict[str, Any] = {**_fields(s), "query": _get(s, "input", "query", str)}
        prompt = _get(s, "input", "prompt", str)
        if split == "awareness":
            needs_tool = _get(s, "reference", "needs_tool", bool)
            record["thought_prompt"] = prompt
            record["label"] = "positive" if needs_tool else "negative"
            tool = s.reference.get("tool")
            if tool is not None:
                record["tool"] = tool
        else:
            record["action_prompt"] = prompt
            if split == "reliability":
                record["tool"] = _get(s, "reference", "tool", str)
            else:
                record["tool"] = _get(s, "reference", "tools", list)
        records.append((s, record))
    return _records(records)


def _tools(tools: Sequence[ToolRecord]) -> Files:
    """Each tool into the file it was read from, at its place there, and the entries a later
    file (or plugin_info.json again) gave a name defined first (raw[ALSO]) into theirs."""
    # per file: (place, key or None, record, layout)
    files: dict[str, list[tuple[int, str | None, Any, dict[str, Any] | None]]] = {
        name: [] for name in ("plugin_des.json", "big_tool_des.json", "plugin_info.json")
    }
    for number, tool in enumerate(tools):
        raw = tool.raw if isinstance(tool.raw, dict) else {}
        layout = raw.get(PUBLISHED) if isinstance(raw.get(PUBLISHED), dict) else None
        place = layout.get("position", number) if layout else number
        if "name_for_model" in raw:
            entry = {k: v for k, v in raw.items() if k not in (PUBLISHED, ALSO)}
            entry.update(name_for_model=tool.name, description_for_model=tool.description)
            files["plugin_info.json"].append((place, None, entry, layout))
        else:
            source = raw.get("source")
            name = source if source in ("plugin_des.json", "big_tool_des.json") else None
            files[name or "plugin_des.json"].append((place, tool.name, tool.description, layout))
        also = raw.get(ALSO)
        for name, entries in (also if isinstance(also, dict) else {}).items():
            for kept in entries if name in files and isinstance(entries, list) else []:
                where = kept.get("position", len(files[name]))
                key = None if name == "plugin_info.json" else tool.name
                value = kept.get("entry") if key is None else kept.get("description")
                files[name].append((where, key, value, kept.get(PUBLISHED)))
    return {
        name: write_records(
            [(key, record, layout) for _, key, record, layout in sorted(rows, key=lambda r: r[0])]
        ).encode()
        for name, rows in files.items()
        if rows
    }


def write(samples: Sequence[SampleRecord], tools: Sequence[ToolRecord]) -> Files:
    files = _tools(tools)
    for split, group in by_split(samples).items():
        if split == "queries":
            files["all_clean_data.csv"] = _queries(group)
        elif split == "multi_tool_golden":
            files["multi_tool_query_golden.json"] = _golden(group)
        elif split in TASK_FILES:
            files[TASK_FILES[split]] = _task(split, group)
        elif split == "scenario_lists":
            for s in group:
                scenario: dict[str, Any] = {"Tools": s.candidate_tools}
                if s.metadata.get("ref") is not None:
                    scenario["ref"] = s.metadata["ref"]
                files[f"scenario/{file_part(s.external_id, 'scenario')}.json"] = write_document(
                    scenario, s.metadata.get(PUBLISHED)
                ).encode()
        else:
            raise ExportError(f"split {split!r} is none of MetaTool's files")
    return files


EXPORTER = Exporter(
    write=write,
    cannot_carry=(
        "the multi-tool golden queries are identified by their position, so a dropped one "
        "renumbers those after it; a refined query is not written into the published prompts "
        "(thought_prompt, action_prompt) built around it"
    ),
)
