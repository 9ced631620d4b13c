"""UltraTool's records as its files write them: kept at import, written back by the exporter, and
read by the reference scorer for the step texts its gold steps are matched on.

The importer keeps, in each sample's metadata["published"], the text of the sample's record in
every file it was read from: "main" (its line of test.json) and each task ("tool_usage", ...: its
line of test_set/<task>.json). A record's text runs from just after the record before it to the
end of its own line, line end included: the blank lines before it, the record as written (key
order, spacing, escapes) and its line end; the last record of a file also keeps what follows it
(the file's last line end, or none). The files written from unchanged samples are so the files
imported, byte for byte.

A sample changed since (a refinement) is written from its record as published with only what
changed rewritten, in the record's own layout (`json.dumps` options found by writing the published
record again): the question, keeping the whitespace around it (the published questions end with
a newline); each plan step's text and number, and its tool; a task gold's entries. A step keeps
the tool marker its record wrote ("null", "No tool required", "不需要工具", JSON null) while it
has no tool, and its token as written ("2 Obtain ...", without a full stop) while its number is
unchanged; a renumbered step keeps its token's style at the same depth (with or without the
full stop). Which published step a stored step is comes from pairing them by content, as a
sample's revision history pairs two versions (golddiff.step_pairs). A step that was not
published is written as the exporter always did: "1." for a top-level step, "1.2" below, "null"
for a step with child steps and "No tool required" for another step without a tool, unless the
record writes one marker only for such steps (a Chinese record's "不需要工具"). A call changed by
a refinement is written with its arguments in the published call's order.

A sample without metadata["published"] (imported before it was kept) is written as that
fallback throughout, its task records as {"input", "toolset"?, "reference"}, the input being
the question (planning) or the plan's steps with the steps to answer marked as UltraTool's task
files mark them.

The reference scorer's gold step token is the first space-separated token of the step text that
this module writes for the gold entry (`gold_step_texts`): the published text for a published
sample, never rebuilt from a step number where a published text says it.

Pure Python, no Django.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.kit.export import ExportError
from benchmarks.kit.golddiff import plan_from_reference, step_pairs
from benchmarks.suites.ultratool.importer import (
    MAIN,
    PUBLISHED,
    PlanError,
    build_plan,
    record_chunks,
    step_number,
)

__all__ = [
    "MAIN",
    "PUBLISHED",
    "Chunk",
    "SamplePlan",
    "call_text",
    "default_step_text",
    "gold_step_texts",
    "literal",
    "main_record",
    "published_chunk",
    "read_chunk",
    "record_chunks",
    "rewrite_plan_text",
    "sample_plan",
    "step_text",
    "task_record",
    "write_chunk",
]

# What the exporter writes for a step without a tool when its record shows no marker to follow.
ANCESTRAL_MARKER = "null"
LEAF_MARKER = "No tool required"

ToolsFor = Callable[[Sequence[str]], list[Any]]

_TOKEN = re.compile(r"^(\s*)(\S+)(\s*)(.*?)(\s*)$", re.DOTALL)


# --- record texts ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Chunk:
    """One record's text: what stands before the record, the record, what follows it."""

    raw: str
    before: str
    text: str
    after: str
    value: Any


def read_chunk(raw: Any) -> Chunk | None:
    """The record kept at import, or None when there is none (or it no longer reads)."""
    if not isinstance(raw, str):
        return None
    start = next((i for i, c in enumerate(raw) if not c.isspace()), None)
    if start is None:
        return None
    end = len(raw.rstrip())
    try:
        value = json.loads(raw[start:end])
    except (ValueError, RecursionError):
        return None
    return Chunk(raw=raw, before=raw[:start], text=raw[start:end], after=raw[end:], value=value)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def write_chunk(chunk: Chunk, value: Any) -> str:
    """The record's text for `value`: the published text itself when `value` is the published
    record (same keys in the same order, same values), else `value` written as the published
    record was (its escapes and separators), between the same surroundings."""
    if _dumps(value) == _dumps(chunk.value):
        return chunk.raw
    for ensure_ascii in (False, True):
        for separators in ((", ", ": "), (",", ":")):
            options: dict[str, Any] = {"ensure_ascii": ensure_ascii, "separators": separators}
            if json.dumps(chunk.value, **options) == chunk.text:
                return chunk.before + json.dumps(value, **options) + chunk.after
    return chunk.before + _dumps(value) + chunk.after


def published_chunk(metadata: Mapping[str, Any] | None, part: str) -> Chunk | None:
    kept = (metadata or {}).get(PUBLISHED)
    return read_chunk(kept.get(part)) if isinstance(kept, Mapping) else None


# --- calls ---------------------------------------------------------------------------------------


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


# --- steps ---------------------------------------------------------------------------------------


def default_step_text(number: str, text: str) -> str:
    """A step as the exporter writes one that was not published: "1. text", "1.2 text"."""
    label = f"{number}." if "." not in number else number
    return f"{label} {text}" if text else label


def _renumbered(token: str, old: str, new: str) -> str:
    if old.count(".") == new.count("."):
        return f"{new}." if token.endswith(".") else new
    return default_step_text(new, "")


def step_text(published: Any, old: tuple[str, str], new: tuple[str, str]) -> Any:
    """The step text to write for a step published as `published` that was step `old`
    (number, text) and is step `new` now: `published` itself while unchanged; else its token
    (renumbered in its own style when the number changed) and its text (the new text when
    the text changed), with its own spacing."""
    if old == new:
        return published
    number, text = new
    match = _TOKEN.match(published) if isinstance(published, str) else None
    parsed = step_number(published) if isinstance(published, str) else None
    if match is None or parsed is None:
        return default_step_text(number, text)
    lead, token, space, own_text, trail = match.groups()
    if old[0] != number:
        token = _renumbered(token, old[0], number)
    if old[1] != text:
        own_text = text
    return f"{lead}{token}{space or ' '}{own_text}{trail}" if own_text else f"{lead}{token}"


def rewrite_plan_text(
    text: str,
    old: Sequence[tuple[str, str]],
    new: Sequence[tuple[int | None, tuple[str, str]]],
) -> str | None:
    """UltraTool's planning gold (the plan as text, one step a line) after its plan changed.

    `old` is the plan it was written from, (number, text) per step; `new` the plan now, per
    step the index in `old` of the step it was (None: a new step) and its (number, text). None
    when the text is not the old plan's (its lines do not say the old steps in order, whatever
    the full stop after a number and the whitespace): it is then not the plan's to follow. A
    step's line is kept as written while the step is unchanged and rewritten as `step_text`
    rewrites a published step otherwise; a new step's line is "1. text" or "1.2 text"."""
    lines = [line for line in text.split("\n") if line.strip()]

    def said(line: str) -> tuple[str, str] | None:
        parsed = step_number(line)
        return None if parsed is None else (parsed[0], " ".join(parsed[1].split()))

    if [said(line) for line in lines] != [(n, " ".join(t.split())) for n, t in old]:
        return None
    written = [
        default_step_text(*now) if was is None else step_text(lines[was], old[was], now)
        for was, now in new
    ]
    core = text.strip()
    start = text.index(core) if core else 0
    return text[:start] + "\n".join(written) + text[start + len(core) :]


def align(
    current: Sequence[Mapping[str, Any]], published: Sequence[Mapping[str, Any]]
) -> list[Any]:
    """For each current step, the index of the published step it is, or None (a new step):
    paired as a sample's revision history pairs two versions (golddiff.step_pairs)."""
    keys = ("step", "text", "tool", "arguments")
    if len(current) == len(published) and all(
        all(c.get(k) == p.get(k) for k in keys) for c, p in zip(current, published, strict=True)
    ):
        return list(range(len(current)))  # the published steps, unchanged
    return step_pairs(
        plan_from_reference({"steps": list(published)}),
        plan_from_reference({"steps": list(current)}),
    )


@dataclass
class SamplePlan:
    """A sample's plan against its record as published."""

    steps: list[dict[str, Any]]  # as stored now
    items: list[Any]  # the published plan items (None: not published)
    was: list[dict[str, Any]]  # the published steps, read as the importer reads them
    match: list[int | None]  # per current step, its published step

    def old(self, index: int) -> tuple[str, str] | None:
        at = self.match[index]
        return None if at is None else (self.was[at]["step"], self.was[at]["text"])

    @property
    def unchanged(self) -> bool:
        """Whether the plan has the published steps, numbers and texts (tools aside)."""
        return len(self.steps) == len(self.was) and all(
            self.match[i] == i and self.old(i) == (str(s.get("step")), str(s.get("text") or ""))
            for i, s in enumerate(self.steps)
        )

    def by_number(self) -> dict[str, int]:
        return {str(step.get("step")): index for index, step in enumerate(self.steps)}


def _steps_of(reference: Any) -> list[dict[str, Any]]:
    steps = reference.get("steps") if isinstance(reference, Mapping) else None
    return [s for s in steps if isinstance(s, dict)] if isinstance(steps, list) else []


def sample_plan(reference: Any, main: Chunk | None) -> SamplePlan:
    """The sample's plan paired with its published record's (`main`: the kept test.json record)."""
    steps = _steps_of(reference)
    items = main.value.get("plan") if main and isinstance(main.value, dict) else None
    try:
        was = build_plan(items).steps if isinstance(items, list) else None
    except PlanError:
        was = None
    if not isinstance(items, list) or was is None:
        return SamplePlan(steps=steps, items=[], was=[], match=[None] * len(steps))
    return SamplePlan(steps=steps, items=items, was=was, match=align(steps, was))


def _has_children(steps: Sequence[Mapping[str, Any]], index: int) -> bool:
    following = steps[index + 1] if index + 1 < len(steps) else {}
    return str(following.get("step", "")).startswith(f"{steps[index].get('step')}.")


def _markers(plan: SamplePlan) -> dict[bool, Any]:
    """The marker the record writes for a step without a tool, by whether the step has child
    steps: the record's own when it writes one only (a Chinese record's "不需要工具")."""
    seen: dict[bool, list[Any]] = {True: [], False: []}
    for index, (item, step) in enumerate(zip(plan.items, plan.was, strict=True)):
        if step.get("tool") is None and isinstance(item, dict):
            markers = seen[_has_children(plan.was, index)]
            if item.get("tool") not in markers:
                markers.append(item.get("tool"))
    return {kind: markers[0] for kind, markers in seen.items() if len(markers) == 1}


def _step_tool(
    step: Mapping[str, Any],
    has_children: bool,
    markers: Mapping[bool, Any],
    was: Mapping[str, Any] | None = None,
) -> Any:
    if "call" in step:
        return step["call"]
    tool, arguments = step.get("tool"), step.get("arguments")
    if tool is None:
        return markers.get(has_children, ANCESTRAL_MARKER if has_children else LEAF_MARKER)
    if arguments is None:
        return tool
    if was is not None and was.get("tool") == tool:
        arguments = _ordered_like(was.get("arguments"), arguments)
    try:
        return call_text(tool, arguments)
    except ValueError as exc:
        raise ExportError(str(exc), field=f"step {step.get('step')}") from None


def _same_tool(step: Mapping[str, Any], was: Mapping[str, Any]) -> bool:
    return all(step.get(key) == was.get(key) for key in ("tool", "arguments", "call"))


def _plan_items(plan: SamplePlan) -> list[Any]:
    markers = _markers(plan)
    written = []
    for index, step in enumerate(plan.steps):
        number, text = str(step.get("step", "")), str(step.get("text") or "")
        children = _has_children(plan.steps, index)
        at = plan.match[index]
        if at is None or not isinstance(plan.items[at], dict):
            written.append(
                {
                    "step": default_step_text(number, text),
                    "tool": _step_tool(step, children, markers),
                }
            )
            continue
        item = dict(plan.items[at])
        was = plan.was[at]
        item["step"] = step_text(item.get("step"), (was["step"], was["text"]), (number, text))
        still_without_tool = step.get("tool") is None and was.get("tool") is None
        if not _same_tool(step, was) and not still_without_tool:
            item["tool"] = _step_tool(step, children, markers, was)
        written.append(item)
    return written


def _keep_around(published: Any, text: Any) -> Any:
    """`text` with the whitespace `published` had around the same text (the importer strips
    it): the published value itself while the text is unchanged."""
    if not isinstance(published, str) or not isinstance(text, str):
        return text
    if published.strip() == text:
        return published
    core = published.strip()
    if not core:
        return text
    start = published.index(core)
    return published[:start] + text + published[start + len(core) :]


# --- records -----------------------------------------------------------------------------------


def main_record(
    plan: SamplePlan,
    query: Any,
    domain: str,
    candidate_tools: Sequence[str],
    main: Chunk | None,
    tools_for: ToolsFor,
) -> dict[str, Any]:
    """The sample's record of test.json: the published record with what changed rewritten, or
    {"question", "plan", "tools", "domain"} when none was kept."""
    if main is None or not isinstance(main.value, dict):
        return {
            "question": query,
            "plan": _plan_items(plan),
            "tools": tools_for(candidate_tools),
            "domain": domain,
        }
    record = dict(main.value)
    record["question"] = _keep_around(record.get("question"), query)
    record["plan"] = _plan_items(plan)
    published_tools = record.get("tools") or []
    names = [t.get("name", "").strip() for t in published_tools if isinstance(t, dict)]
    if list(dict.fromkeys(names)) != list(candidate_tools):
        record["tools"] = tools_for(candidate_tools)
    if str(record.get("domain", "")).strip() != domain:
        record["domain"] = domain
    return record


def _gold_value(task: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    """A stored gold entry's keys as the task file writes them (beside "step")."""
    if task in ("tool_usage_awareness", "tool_creation_awareness"):
        return {"tool": str(entry.get("value"))}
    if task == "tool_usage":
        return {"tool": entry.get("tool"), "param": entry.get("arguments")}
    return {"tool": entry.get("tool")}


def _same_gold(task: str, item: Mapping[str, Any], entry: Mapping[str, Any]) -> dict[str, bool]:
    """Per written key, whether the published item still says what the stored entry says."""
    tool = item.get("tool")
    if task in ("tool_usage_awareness", "tool_creation_awareness"):
        value = int(tool) if isinstance(tool, bool) else tool
        if isinstance(value, str) and value.strip() in ("0", "1"):
            value = int(value.strip())
        return {"tool": value == entry.get("value")}
    if task in ("tool_selection", "tool_usage"):
        same = {"tool": isinstance(tool, str) and tool.strip() == entry.get("tool")}
        if task == "tool_usage":
            key = "param" if "param" in item else "arguments"
            same[key] = item.get(key) == entry.get("arguments")
        return same
    return {"tool": tool == entry.get("tool")}


def _ordered_like(published: Any, value: Any) -> Any:
    """`value` (an object) with the keys `published` shares first, in its order."""
    if not isinstance(published, dict) or not isinstance(value, dict):
        return value
    keys = [k for k in published if k in value] + [k for k in value if k not in published]
    return {k: value[k] for k in keys}


def _reference_items(
    task: str, gold: Sequence[Any], plan: SamplePlan, published: Sequence[Any] | None = None
) -> list[Any]:
    # A step's entries in their order: the k-th gold entry of a step is its k-th published one.
    by_number: dict[str, list[Mapping[str, Any]]] = {}
    for item in published or ():
        parsed = step_number(item.get("step")) if isinstance(item, dict) else None
        if parsed is not None:
            by_number.setdefault(parsed[0], []).append(item)
    positions = plan.by_number()
    written: list[Any] = []
    for entry in gold:
        if not isinstance(entry, dict):
            written.append(entry)
            continue
        number = str(entry.get("step"))
        index = positions.get(number)
        text = str(plan.steps[index].get("text") or "") if index is not None else ""
        old = plan.old(index) if index is not None else None
        same_step = by_number.get(old[0]) if old is not None else None
        item = same_step.pop(0) if same_step else None
        if item is None or old is None:
            written.append({"step": default_step_text(number, text), **_gold_value(task, entry)})
            continue
        out = dict(item)
        out["step"] = step_text(item.get("step"), old, (number, text))
        fresh = _gold_value(task, entry)
        for key, same in _same_gold(task, item, entry).items():
            if not same:
                value = fresh["param" if key == "arguments" else key]
                out[key] = _ordered_like(item.get(key), value)
        written.append(out)
    return written


def _input_items(task: str, gold: Sequence[Any], plan: SamplePlan, published: Any) -> Any:
    """The task record's "input": the plan's steps, those to answer marked as the task file
    marks them ("tool": "" and, for tool usage, the step's tool and "param": ""); as published
    while the plan's steps are."""
    if published is not None and plan.unchanged:
        return published
    by_number: dict[str, Mapping[str, Any]] = {}
    for item in published if isinstance(published, list) else []:
        parsed = step_number(item.get("step")) if isinstance(item, dict) else None
        if parsed is None:
            return published  # not a list of steps: kept as published
        by_number.setdefault(parsed[0], item)
    marked = {str(e.get("step")): e for e in gold if isinstance(e, dict)}
    written = []
    for index, step in enumerate(plan.steps):
        number, text = str(step.get("step", "")), str(step.get("text") or "")
        old = plan.old(index)
        item = by_number.get(old[0]) if old is not None else None
        if item is not None and old is not None:
            written.append({**item, "step": step_text(item.get("step"), old, (number, text))})
            continue
        fresh: dict[str, Any] = {"step": default_step_text(number, text)}
        if number in marked:
            if task == "tool_usage":
                fresh.update(tool=marked[number].get("tool"), param="")
            else:
                fresh["tool"] = ""
        written.append(fresh)
    return written


def task_record(
    task: str,
    reference: Any,
    query: Any,
    toolset: Sequence[str] | None,
    chunk: Chunk | None,
    plan: SamplePlan,
    tools_for: ToolsFor,
) -> dict[str, Any]:
    """The sample's record of test_set/<task>.json: the published record with what changed
    rewritten, or {"input", "toolset"?, "reference"} when none was kept."""
    gold = reference[task]
    published = chunk.value if chunk and isinstance(chunk.value, dict) else None
    if published is None:
        record: dict[str, Any] = {
            "input": query if task == "planning" else _input_items(task, gold, plan, None)
        }
        if toolset is not None:
            record["toolset"] = tools_for(toolset)
        record["reference"] = gold if task == "planning" else _reference_items(task, gold, plan)
        return record
    record = dict(published)
    if "question" in record:
        record["question"] = _keep_around(record["question"], query)
    if "input" in record:
        if task == "planning" or isinstance(record["input"], str):
            record["input"] = _keep_around(record["input"], query)
        else:
            record["input"] = _input_items(task, gold, plan, record["input"])
    if toolset is not None:
        names = [
            t.get("name", "").strip() for t in record.get("toolset") or [] if isinstance(t, dict)
        ]
        if list(dict.fromkeys(names)) != list(toolset):
            record["toolset"] = tools_for(toolset)
    kept = record.get("reference")
    if task == "planning":
        as_text = "\n".join(kept) if isinstance(kept, list) else kept
        record["reference"] = kept if as_text == gold else gold
    else:
        record["reference"] = _reference_items(
            task, gold, plan, kept if isinstance(kept, list) else None
        )
    return record


def gold_step_texts(
    task: str, reference: Any, metadata: Mapping[str, Any] | None
) -> dict[str, Any]:
    """Step number -> the step text the task file writes for that gold entry: as published,
    for a published sample (see the module docstring)."""
    gold = reference.get(task) if isinstance(reference, Mapping) else None
    if not isinstance(gold, list):
        return {}
    chunk = published_chunk(metadata, task)
    published = chunk.value.get("reference") if chunk and isinstance(chunk.value, dict) else None
    plan = sample_plan(reference, published_chunk(metadata, MAIN))
    items = _reference_items(task, gold, plan, published if isinstance(published, list) else None)
    texts: dict[str, Any] = {}
    for entry, item in zip(gold, items, strict=True):
        if isinstance(entry, dict) and isinstance(item, dict):
            texts.setdefault(str(entry.get("step")), item.get("step"))
    return texts
