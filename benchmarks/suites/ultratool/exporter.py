"""UltraTool's files written back (the inverse of importer.py): per split, the main file
(`test.json` at the top, as published; another split `<split>/<split>.json`) and beside it
`test_set/<task>.json` for each task gold the samples hold, index-aligned with the main file.

A step is written as `"1. text"` (top level) or `"1.2 text"`, its tool as the call string
published for it while its tool and arguments are unchanged (refinement drops "call" when they
change, annotation/refine.py), else as a call `name(key='value', ...)` written from the stored
arguments, a bare name when arguments were not given, "null" for a step with child steps and
"No tool required" for another step without a tool. A sample's tools and a task's toolset are
written from the benchmark's tools (the first definition of a name, as the importer keeps)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.suites.base import SampleRecord, ToolRecord
from benchmarks.suites.export import (
    ExportError,
    Files,
    by_split,
    file_part,
    jsonl_bytes,
    sample_name,
)
from benchmarks.suites.registry import Exporter
from benchmarks.suites.ultratool.importer import TASK_FILES


def literal(value: Any, where: str) -> str:
    """`value` as the Python literal the call reader reads back to it."""
    if value is None or isinstance(value, bool | int | str):
        return repr(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"{where}: {value!r} has no literal")
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(literal(v, f"{where}[{i}]") for i, v in enumerate(value)) + "]"
    if isinstance(value, dict):
        items = (f"{k!r}: {literal(v, f'{where}[{k!r}]')}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    raise ValueError(f"{where}: a {type(value).__name__} has no literal")


def call_text(tool: str, arguments: dict[str, Any]) -> str:
    """`tool(key=literal, ...)`; ValueError when a name cannot be written as one."""
    if not all(part.isidentifier() for part in tool.split(".")):
        raise ValueError(f"tool name {tool!r} cannot be written as a call")
    parts = []
    for key, value in arguments.items():
        if not key.isidentifier():
            raise ValueError(f"argument name {key!r} cannot be written as a keyword argument")
        parts.append(f"{key}={literal(value, key)}")
    return f"{tool}({', '.join(parts)})"


def _step_tool(step: dict[str, Any], has_children: bool, sample: SampleRecord) -> Any:
    if "call" in step:
        return step["call"]
    tool, arguments = step.get("tool"), step.get("arguments")
    if tool is None:
        return "null" if has_children else "No tool required"
    if arguments is None:
        return tool
    try:
        return call_text(tool, arguments)
    except ValueError as exc:
        raise ExportError(
            str(exc), sample=sample_name(sample), field=f"step {step.get('step')}"
        ) from None


def _plan(sample: SampleRecord) -> list[dict[str, Any]]:
    reference = sample.reference if isinstance(sample.reference, dict) else {}
    steps = reference.get("steps")
    if not isinstance(steps, list) or not steps:
        raise ExportError("has no plan steps", sample=sample_name(sample), field="steps")
    written = []
    for index, step in enumerate(steps):
        number = str(step.get("step", ""))
        following = steps[index + 1] if index + 1 < len(steps) else {}
        has_children = str(following.get("step", "")).startswith(number + ".")
        label = f"{number}." if "." not in number else number
        text = step.get("text") or ""
        written.append(
            {
                "step": f"{label} {text}" if text else label,
                "tool": _step_tool(step, has_children, sample),
            }
        )
    return written


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


def _task_gold(task: str, gold: Any) -> Any:
    if task == "planning":
        return gold
    if task in ("tool_usage_awareness", "tool_creation_awareness"):
        return [{"step": g["step"], "tool": str(g["value"])} for g in gold]
    if task == "tool_usage":
        return [{"step": g["step"], "tool": g["tool"], "param": g["arguments"]} for g in gold]
    return [{"step": g["step"], "tool": g["tool"]} for g in gold]


def _split_files(split: str, samples: list[SampleRecord], tools: dict[str, ToolRecord]) -> Files:
    if split in TASK_FILES:
        raise ExportError(f"split {split!r} has the name of a task file")
    folder = "" if split == "test" else f"{file_part(split)}/"
    main = []
    for s in samples:
        given = s.input if isinstance(s.input, dict) else {}
        main.append(
            {
                "question": given.get("query"),
                "plan": _plan(s),
                "tools": _tools(s.candidate_tools, tools, s),
                "domain": s.metadata.get("domain", ""),
            }
        )
    files = {f"{folder}{split}.json": jsonl_bytes(main)}
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
        for s in samples[:count]:
            record: dict[str, Any] = {"question": s.input.get("query")}
            toolset = (s.input.get("toolsets") or {}).get(task)
            if toolset is not None:
                record["toolset"] = _tools(toolset, tools, s)
            record["reference"] = _task_gold(task, s.reference[task])
            records.append(record)
        files[f"{folder}test_set/{task}.json"] = jsonl_bytes(records)
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
        "renumbers those after it; metadata 'line' is the line written, which differs from the "
        "published file's where that had blank lines; a tool defined differently in two "
        "records is written with its first definition"
    ),
)
