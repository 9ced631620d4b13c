"""UltraTool's files written back (the inverse of importer.py): per split, the main file
(`test.json` at the top, as published; another split `<split>/<split>.json`) and beside it
`test_set/<task>.json` for each task gold the samples hold, index-aligned with the main file.

Each record is written by published.py: an unchanged sample as the text its file held (so an
unrefined benchmark is written back byte for byte), a refined one as its published record with
only what the refinement changed rewritten, in that record's layout. A step's tool changed by a
refinement is written as a call `name(key='value', ...)` from the stored arguments (the
published call string while its tool and arguments are unchanged: refinement drops "call" when
they change, annotation/draft_editing.py), a bare name when arguments were not given. A sample's
tools and a task's toolset are written as published, or, when the sample's tool names differ
from its record's, from the benchmark's tools (the first definition of a name, as the importer
keeps)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.kit.base import SampleRecord, ToolRecord
from benchmarks.kit.export import (
    ExportError,
    Files,
    by_split,
    file_part,
    sample_name,
)
from benchmarks.kit.registry import Exporter
from benchmarks.suites.ultratool.importer import MAIN, TASK_FILES
from benchmarks.suites.ultratool.published import (
    Chunk,
    call_text,
    literal,
    main_record,
    published_chunk,
    sample_plan,
    task_record,
    write_chunk,
)

__all__ = ["EXPORTER", "call_text", "literal", "write"]


def _tool(tool: ToolRecord) -> dict[str, Any]:
    raw = tool.raw if isinstance(tool.raw, dict) else {}
    return {
        **raw,
        "name": tool.name,
        "description": tool.description,
        "arguments": tool.parameters,
        "results": tool.returns,
    }


def _tools(names: Sequence[str], tools: dict[str, ToolRecord], sample: SampleRecord) -> list[Any]:
    missing = [name for name in names if name not in tools]
    if missing:
        raise ExportError(
            f"offers {', '.join(missing)}, which the benchmark does not have",
            sample=sample_name(sample),
            field="tools",
        )
    return [_tool(tools[name]) for name in names]


def _text(record: Any, chunk: Chunk | None) -> str:
    """The record as its file held it (published.write_chunk), or one compact JSON line."""
    if chunk is None:
        return json.dumps(record, ensure_ascii=False) + "\n"
    return write_chunk(chunk, record)


def _join(texts: list[str]) -> bytes:
    """The records' texts one after the other, each but the last ending its line (a record that
    was its file's last may have had no line end)."""
    last = len(texts) - 1
    return "".join(
        t if t.endswith("\n") or i == last else t + "\n" for i, t in enumerate(texts)
    ).encode()


def _split_files(split: str, samples: list[SampleRecord], tools: dict[str, ToolRecord]) -> Files:
    if split in TASK_FILES:
        raise ExportError(f"split {split!r} has the name of a task file")
    folder = "" if split == "test" else f"{file_part(split)}/"
    main = []
    plans = []  # each sample's plan paired with its published one, for all its files
    for s in samples:
        given = s.input if isinstance(s.input, dict) else {}
        chunk = published_chunk(s.metadata, MAIN)
        plans.append(sample_plan(s.reference, chunk))
        try:
            record = main_record(
                plans[-1],
                given.get("query"),
                s.metadata.get("domain", ""),
                s.candidate_tools,
                chunk,
                partial(_tools, tools=tools, sample=s),
            )
        except ExportError as exc:
            raise ExportError(exc.message, sample=sample_name(s), field=exc.field) from None
        if not record["plan"]:
            raise ExportError("has no plan steps", sample=sample_name(s), field="steps")
        main.append(_text(record, chunk))
    files = {f"{folder}{split}.json": _join(main)}
    for task in TASK_FILES:
        holding = [task in (s.reference or {}) for s in samples]
        if not any(holding):
            continue
        # Index-aligned: record i of the task file is about sample i, from the first on.
        count = len(holding) - holding[::-1].index(True)
        if not all(holding[:count]):
            gap = samples[holding.index(False)]
            raise ExportError(
                f"has no {task} gold while a later sample of its split has one; the task file "
                "is index-aligned with the main file",
                sample=sample_name(gap),
                field=task,
            )
        records = []
        for s, plan in zip(samples[:count], plans, strict=False):
            chunk = published_chunk(s.metadata, task)
            toolset = (s.input.get("toolsets") or {}).get(task)
            record = task_record(
                task,
                s.reference,
                s.input.get("query"),
                toolset,
                chunk,
                plan,
                partial(_tools, tools=tools, sample=s),
            )
            records.append(_text(record, chunk))
        files[f"{folder}test_set/{task}.json"] = _join(records)
    return files


def write(samples: Sequence[SampleRecord], tools: Sequence[ToolRecord]) -> Files:
    by_name = {tool.name: tool for tool in tools}
    files: Files = {}
    for split, group in by_split(samples).items():
        files.update(_split_files(split, group, by_name))
    return files


def _import_paths(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.json") if p.name != "provenance.json")


EXPORTER = Exporter(
    write=write,
    import_paths=_import_paths,
    cannot_carry=(
        "samples are identified by their position in the main file, so a dropped sample "
        "renumbers those after it; metadata 'line' is the line written; a leading byte-order "
        "mark is not written back; a sample imported before its records were kept "
        "(metadata 'published') is written from its fields, and a tool its record does not "
        "carry with its first definition"
    ),
)
