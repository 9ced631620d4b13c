"""UltraTool (Huang et al., 2024; papers/004): tree-structured plans with tool calls, in six tasks.

The published files (github.com/JoeYing1019/UltraTool, one folder per language; the repository
carries no licence, so none of its content ships here: demo and test data are our own):

`test.json` (and the optional `dev.json`): JSON Lines, one sample per line,
    {"question": str,
     "plan": [{"step": "1. Create file", "tool": "null"},
              {"step": "1.1 Get the file path (...)", "tool": "No tool required"},
              {"step": "1.2 Write the file", "tool": "file_write(file_path='a.txt', content='x')"},
              ...],
     "tools": [{"name", "description", "arguments": <JSON schema>, "results": <JSON schema>}],
     "domain": str}
  - A step string starts with its number: `1.` for an ancestral (top-level) step, `1.1`, `1.2.3`
    for child steps, then the step's text. Numbers make the tree; they must come in document
    order with no gap (1, 1.1, 1.2, 1.2.1, 2, ...), or the import stops naming the step.
    Also read: {"step": "1.1", "text": "..."} and an integer step, with the text beside it.
  - `tool` is "null" (the published files write the string; JSON null is read the same) for
    ancestral steps, "No tool required" (Chinese files: "不需要工具") for tool-free steps, or a
    call string `name(key='value', ...)`. Calls are read by `toolcall.parse_tool_call`, never
    evaluated. The published gold has slips the strict reader refuses (an apostrophe inside a
    single-quoted value; `flight_number=<obtained flight number>` for an earlier step's output);
    `toolcall.parse_tool_call_lenient` reads those, and the sample's metadata lists the steps it
    repaired (`repaired_calls`). A call neither reader accepts is kept as written with
    `arguments: null` and `call_error`, listed in `unparsed_calls`: published gold is imported,
    not rejected, but never run. Also read: a bare tool name (arguments null: not given) and
    {"name", "arguments"}. Any other value (prose, a number) is an error naming plan[i].tool.

Task files, index-aligned with test.json (record i of a task file is about record i of
test.json; the published `test_set/` holds planning, tool_creation, tool_usage and
tool_usage_awareness; tool_creation_awareness and tool_selection are published only as few-shot
examples, and are read in the same shape when a researcher builds them). JSON Lines of
    {"input": ..., "toolset"?: [tool], "question"?: str, "reference": <gold>}
  where the gold is, per task (step keys are matched on the step number, as the reference scorer
  does):
  - planning.json: "input" is the question, "reference" the plan as text, one step a line.
  - tool_usage_awareness.json, tool_creation_awareness.json: [{"step", "tool": "0" | "1"}] for the
    child steps (tool usage awareness: 1 = the step needs a tool; tool-creation awareness: 1 = no
    suitable tool in the offered toolset, as the published example file uses it).
  - tool_selection.json: [{"step", "tool": name}] over an augmented toolset.
  - tool_usage.json: [{"step", "tool": name, "param": {argument: value}}].
  - tool_creation.json: [{"step", "tool": {name, description, arguments, results}}]: the tool to
    create, missing from the offered toolset.
  Only "reference" is required, so a file of bare golds ({"reference": ...} a line) is read too.
  A task file longer than its test.json, a "question"/"input" that differs from test.json's
  question on the same record, or a gold step that is not in the record's plan means the files
  are not aligned: the import stops and names the file, line and field. A task file belongs to
  the test.json in its folder or the folder above (`test_set/` sits beside test.json), or to the
  only test.json given. The few-shot files in `example/` are single pretty-printed records, not
  test data, and are refused.

Records:
  - Sample: split = the main file's stem ("test", "dev"), external_id = the record's ordinal in
    that file ("1", "2", ...; blank lines are not counted), kind "plan",
    input = {"query": question, "toolsets"?: {task: [tool names offered by that task file]}},
    reference = {
        "plan": [{"step": "1", "text", "tool": name | None, "arguments": {...} | None,
                  "call"?: published call string, "call_error"?: str, "children": [...]}],
        "steps": the same steps as a flat list in plan order (without children),
        "planning": str, "tool_usage_awareness" / "tool_creation_awareness":
        [{"step", "value": 0 | 1}], "tool_selection": [{"step", "tool"}],
        "tool_usage": [{"step", "tool", "arguments"}], "tool_creation": [{"step", "tool": {...}}]
        (each task key only when its file was imported)},
    candidate_tools = the record's `tools` names, metadata = {"domain", "line", and
    "repaired_calls" / "unparsed_calls" step lists when there are any, and "gold_not_offered":
    the tools a gold step (plan, tool_selection, tool_usage) names that neither the record's
    `tools` nor that task's toolset offers, kept as published, when there are any, and
    "published": {"main": the record's text in test.json, "<task>": its text in each task file},
    as the file writes it, so that the export writes an unchanged sample back byte for byte and
    the reference scorer reads the gold's step texts as published (published.py)}.
  - Tool: one per name, from the records' `tools` (arguments -> parameters, results -> returns,
    domain -> category, the published record in raw) and from the task files' toolsets
    (interference tools; category ""). The first definition of a name wins.

The English and Chinese test.json share the split and ids: import each language as its own
benchmark (`--benchmark "UltraTool (zh)"`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.kit.base import (
    ImportBundle,
    ImportFormatError,
    Progress,
    SampleRecord,
    ToolRecord,
    check_file_name,
    check_record_size,
    check_value,
    iter_jsonl,
    read_text,
    require,
    type_name,
)
from benchmarks.kit.toolcall import (
    ToolCallError,
    looks_like_call,
    parse_tool_call,
    parse_tool_call_lenient,
)

name = "ultratool"
default_benchmark = "UltraTool"
# The task files of the release (<task>.json beside test.json and dev.json).
TASK_FILES = (
    "planning",
    "tool_creation_awareness",
    "tool_creation",
    "tool_usage_awareness",
    "tool_selection",
    "tool_usage",
)

MAIN_STEMS = ("test", "dev")
# metadata[PUBLISHED][MAIN or task name]: the sample's record in that file, as written there.
PUBLISHED = "published"
MAIN = "main"
EXTENSIONS = (".json", ".jsonl")
# What the published files write for "this step calls no tool", compared case-insensitively and
# without a final full stop.
NO_TOOL = {"", "null", "none", "no tool required", "no tool needed", "不需要工具", "无需工具"}

_STEP = re.compile(r"^\s*(\d+(?:\.\d+)*)\.?(?=\s|$)\s*(.*)$", re.DOTALL)
_NAME = re.compile(r"^[^\W\d][\w.\-]*$")


def accepted_names() -> str:
    mains = ", ".join(f"{stem}.json" for stem in MAIN_STEMS)
    task_files = ", ".join(f"{task}.json" for task in TASK_FILES)
    return (
        f"{mains} (or any JSON Lines file of {{question, plan, tools}} records), the task files "
        f"{task_files} (.jsonl also read), or a folder holding them"
    )


# --- the plan tree -----------------------------------------------------------------------------


class PlanError(ValueError):
    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


def step_number(value: Any) -> tuple[str, str] | None:
    """("1.2", "the step's text") from "1.2 Do it" or "1. Do it"; None when there is no number."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return str(value), ""
    if not isinstance(value, str):
        return None
    match = _STEP.match(value)
    if not match:
        return None
    number = ".".join(str(int(part)) for part in match.group(1).split("."))
    return number, match.group(2).strip()


def _allowed_after(previous: tuple[int, ...] | None) -> list[tuple[int, ...]]:
    if previous is None:
        return [(1,)]
    # Document order: the first child of the previous step, or the next sibling of it or of
    # any of its ancestors.
    options = [(*previous, 1)]
    for depth in range(len(previous), 0, -1):
        options.append((*previous[: depth - 1], previous[depth - 1] + 1))
    return options


def _dotted(number: tuple[int, ...]) -> str:
    return ".".join(map(str, number))


def read_step_tool(value: Any, where: str) -> dict[str, Any]:
    """The step's tool as {"tool", "arguments"} (+ "call", "call_error", "repaired")."""
    if value is None:
        return {"tool": None, "arguments": None}
    if isinstance(value, dict):
        tool = value.get("name")
        arguments = value.get("arguments", {})
        if not isinstance(tool, str) or not tool.strip() or not isinstance(arguments, dict):
            raise PlanError(
                'a tool object needs "name" (a string) and "arguments" (an object)', where
            )
        return {"tool": tool, "arguments": arguments}
    if not isinstance(value, str):
        raise PlanError(f"expected a string or null, got {type_name(value)}", where)
    text = value.strip()
    if text.rstrip(".。").strip().lower() in NO_TOOL:
        return {"tool": None, "arguments": None}
    try:
        call = parse_tool_call(text)
        return {"tool": call.name, "arguments": call.arguments, "call": text}
    except ToolCallError as strict_error:
        try:
            call = parse_tool_call_lenient(text)
            return {"tool": call.name, "arguments": call.arguments, "call": text, "repaired": True}
        except ToolCallError:
            pass
        tool = looks_like_call(text)
        if tool is not None:
            return {
                "tool": tool,
                "arguments": None,
                "call": text,
                "call_error": str(strict_error),
            }
        if _NAME.match(text) and len(text) <= 300:
            return {"tool": text, "arguments": None}  # a bare tool name with no arguments given
        raise PlanError(
            f"is neither null, 'No tool required' nor a call such as tool(key='value'): "
            f"{strict_error}",
            where,
        ) from None


@dataclass
class Plan:
    tree: list[dict[str, Any]]
    steps: list[dict[str, Any]]
    repaired: list[str] = field(default_factory=list)
    unparsed: list[str] = field(default_factory=list)

    def numbers(self) -> set[str]:
        return {step["step"] for step in self.steps}


def build_plan(items: list[Any]) -> Plan:
    """The published flat step list as a tree, checking that numbers come in document order.

    Raises PlanError naming the field, e.g. plan[3].step.
    """
    if not items:
        raise PlanError("is empty; a plan has at least one step", "plan")
    tree: list[dict[str, Any]] = []
    flat: list[dict[str, Any]] = []
    plan = Plan(tree=tree, steps=flat)
    # (number, node) for the current path from the root to the previous step.
    path: list[tuple[tuple[int, ...], dict[str, Any]]] = []
    previous: tuple[int, ...] | None = None
    for index, item in enumerate(items):
        where = f"plan[{index}]"
        if not isinstance(item, dict):
            raise PlanError(f"expected an object, got {type_name(item)}", where)
        if "step" not in item:
            raise PlanError("missing", f"{where}.step")
        parsed = step_number(item["step"])
        if parsed is None:
            raise PlanError(
                f"{str(item['step'])[:80]!r} does not start with a step number such as 1 or 1.2",
                f"{where}.step",
            )
        number_text, text = parsed
        if not text:
            extra = item.get("text", item.get("description"))
            if isinstance(extra, str):
                text = extra.strip()
        number = tuple(int(part) for part in number_text.split("."))
        allowed = _allowed_after(previous)
        if number not in allowed or 0 in number:
            after = f"after step {_dotted(previous)}" if previous else "as the first step"
            raise PlanError(
                f"step {number_text} cannot come {after}: expected "
                f"{' or '.join(_dotted(option) for option in allowed)} (steps must be numbered "
                "in order, without gaps)",
                f"{where}.step",
            )
        tool = read_step_tool(item.get("tool"), f"{where}.tool")
        step: dict[str, Any] = {"step": number_text, "text": text, **tool}
        if step.pop("repaired", False):
            plan.repaired.append(number_text)
        if "call_error" in step:
            plan.unparsed.append(number_text)
        flat.append(step)
        node = {**step, "children": []}
        while path and len(path[-1][0]) >= len(number):
            path.pop()
        (path[-1][1]["children"] if path else tree).append(node)
        path.append((number, node))
        previous = number
    return plan


# --- tools -------------------------------------------------------------------------------------


def read_tools(items: Any, *, key: str, path: Path, line: int, category: str) -> list[ToolRecord]:
    if not isinstance(items, list):
        raise ImportFormatError(
            f"expected a list of tools, got {type_name(items)}", file=path, line=line, field=key
        )
    records = []
    for index, tool in enumerate(items):
        where = f"{key}[{index}]"
        if not isinstance(tool, dict):
            raise ImportFormatError(
                f"expected a tool object, got {type_name(tool)}", file=path, line=line, field=where
            )
        tool_name = _tool_field(tool, "name", str, path, line, where, optional=False)
        description = _tool_field(tool, "description", str, path, line, where) or ""
        parameters = _tool_field(tool, "arguments", dict, path, line, where) or {}
        returns = _tool_field(tool, "results", dict, path, line, where) or {}
        records.append(
            ToolRecord(
                name=tool_name.strip(),
                description=description,
                parameters=parameters,
                returns=returns,
                category=category,
                raw=tool,
                source=f"{path}, line {line}",
            )
        )
    return records


def _tool_field(
    tool: dict[str, Any],
    key: str,
    kind: type,
    path: Path,
    line: int,
    where: str,
    *,
    optional: bool = True,
) -> Any:
    try:
        return require(tool, key, kind, file=path, line=line, optional=optional)
    except ImportFormatError as exc:
        raise ImportFormatError(exc.message, file=path, line=line, field=f"{where}.{key}") from None


# --- files -------------------------------------------------------------------------------------


@dataclass
class MainFile:
    path: Path
    split: str
    samples: list[SampleRecord] = field(default_factory=list)
    plans: list[Plan] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    tasks_seen: dict[str, Path] = field(default_factory=dict)


def _classify(path: Path) -> tuple[str, str]:
    """("main", split) or ("task", task name) for a file; ImportFormatError otherwise."""
    if path.suffix.lower() not in EXTENSIONS:
        raise ImportFormatError(
            f"is not a file UltraTool publishes; the suite reads {accepted_names()}", file=path
        )
    stem = path.stem
    if stem in TASK_FILES:
        if path.parent.name == "example":
            raise ImportFormatError(
                "is one of UltraTool's few-shot examples (one pretty-printed record), not test "
                "data; import test.json and the task files in test_set/",
                file=path,
            )
        return "task", stem
    if stem in MAIN_STEMS or _looks_like_main(path):
        return "main", stem
    raise ImportFormatError(
        f"is not a file UltraTool publishes; the suite reads {accepted_names()}", file=path
    )


def _looks_like_main(path: Path) -> bool:
    text = read_text(path)
    number, first = next(
        ((n, line) for n, line in enumerate(text.split("\n"), start=1) if line.strip()), (1, "")
    )
    # Peeked at before iter_jsonl reads the file: the same limit, before parsing.
    check_record_size(first, file=path, line=number)
    try:
        record = json.loads(first)
    except (json.JSONDecodeError, RecursionError):
        return False
    return isinstance(record, dict) and "question" in record and "plan" in record


def _expand(paths: Sequence[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if not path.is_dir():
            files.append(path)
            continue
        found = []
        for folder in (path, path / "test_set"):
            for stem in (*MAIN_STEMS, *TASK_FILES):
                for ext in EXTENSIONS:
                    candidate = folder / f"{stem}{ext}"
                    if candidate.is_file() and not (folder != path and stem in MAIN_STEMS):
                        found.append(candidate)
        if not found:
            raise ImportFormatError(
                f"holds none of the files the suite reads ({accepted_names()})", file=path
            )
        files.extend(found)
    return files


def _owner(task_path: Path, mains: list[MainFile]) -> MainFile:
    if len(mains) == 1:
        return mains[0]
    folders = {task_path.parent.resolve(), task_path.parent.parent.resolve()}
    near = [main for main in mains if main.path.parent.resolve() in folders]
    near_test = [main for main in near if main.split == "test"]
    for group in (near_test, near):
        if len(group) == 1:
            return group[0]
    given = ", ".join(str(main.path) for main in mains) or "none"
    raise ImportFormatError(
        "cannot tell which test.json this task file is aligned with (it belongs to the test.json "
        f"in its folder or the folder above, or to the only one given); given: {given}",
        file=task_path,
    )


def import_files(paths: Sequence[Path], progress: Progress | None = None) -> ImportBundle:
    bundle = ImportBundle()
    mains: list[MainFile] = []
    task_files: list[tuple[Path, str]] = []
    for path in _expand(paths):
        role, value = _classify(path)
        if role == "main":
            mains.append(MainFile(path=path, split=value))
        else:
            task_files.append((path, value))
    if task_files and not mains:
        raise ImportFormatError(
            "a task file is read together with the test.json it is index-aligned with; "
            "give test.json too",
            file=task_files[0][0],
        )
    for main in mains:
        _read_main(main, bundle, progress)
    for task_path, task in task_files:
        owner = _owner(task_path, mains)
        if task in owner.tasks_seen:
            raise ImportFormatError(
                f"is a second {task} file for {owner.path} (the first: "
                f"{owner.tasks_seen[task]}); import each language as its own benchmark",
                file=task_path,
            )
        owner.tasks_seen[task] = task_path
        _read_task(task_path, task, owner, bundle, progress)
    for main in mains:
        bundle.samples.extend(main.samples)
    return bundle


def _read_main(main: MainFile, bundle: ImportBundle, progress: Progress | None) -> None:
    path = main.path
    check_file_name(path)  # its stem is the split
    for line, record in iter_jsonl(path):
        question = require(record, "question", str, file=path, line=line)
        items = require(record, "plan", list, file=path, line=line)
        domain = require(record, "domain", str, file=path, line=line, optional=True, default="")
        tools = read_tools(
            record.get("tools") or [], key="tools", path=path, line=line, category=domain.strip()
        )
        try:
            plan = build_plan(items)
        except PlanError as exc:
            raise ImportFormatError(exc.message, file=path, line=line, field=exc.field) from None
        # A call's Python escapes ('\ud800', '\x00') make characters the file did not hold.
        check_value(plan.steps, file=path, line=line, path="plan")
        metadata: dict[str, Any] = {"domain": domain.strip(), "line": line}
        if plan.repaired:
            metadata["repaired_calls"] = plan.repaired
        if plan.unparsed:
            metadata["unparsed_calls"] = plan.unparsed
        offered = {tool.name for tool in tools}
        not_offered = [step["tool"] for step in plan.steps if step["tool"] not in (None, *offered)]
        if not_offered:
            # Published gold is imported, not refused (see above): named, as unparsed calls are.
            metadata["gold_not_offered"] = list(dict.fromkeys(not_offered))
        bundle.tools.extend(tools)
        main.plans.append(plan)
        main.lines.append(line)
        main.samples.append(
            SampleRecord(
                split=main.split,
                external_id=str(len(main.samples) + 1),
                input={"query": question.strip()},
                reference={"plan": plan.tree, "steps": plan.steps},
                kind="plan",
                candidate_tools=list(dict.fromkeys(tool.name for tool in tools)),
                metadata=metadata,
                source=f"{path}, line {line}",
            )
        )
        if progress:
            progress(1)
    _keep_published(path, main.samples, main.lines, MAIN)


def _keep_published(
    path: Path, samples: Sequence[SampleRecord], lines: Sequence[int], part: str
) -> None:
    """Each record's text as the file holds it, in its sample's metadata (published.py)."""
    chunks = record_chunks(read_text(path), lines)
    for sample, chunk in zip(samples, chunks, strict=True):
        sample.metadata.setdefault(PUBLISHED, {})[part] = chunk


def record_chunks(text: str, lines: Sequence[int]) -> list[str]:
    """The text of each record of a JSON Lines file, given the line number of each record in
    file order: from just after the previous record's line end to the end of its own line, line
    end included; the last record's runs to the end of the file. Joined, they are the file."""
    segments = text.split("\n")
    chunks = []
    previous = 0
    for index, line in enumerate(lines):
        if index == len(lines) - 1:
            chunks.append("\n".join(segments[previous:]))
        else:
            chunks.append("\n".join(segments[previous:line]) + "\n")
        previous = line
    return chunks


def _same_text(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


def _read_task(
    path: Path, task: str, main: MainFile, bundle: ImportBundle, progress: Progress | None
) -> None:
    lines: list[int] = []
    for ordinal, (line, record) in enumerate(iter_jsonl(path), start=1):
        lines.append(line)
        if ordinal > len(main.samples):
            raise ImportFormatError(
                f"has more records than {main.path} ({len(main.samples)}): task files are "
                "index-aligned with test.json, record i about record i",
                file=path,
                line=line,
            )
        sample = main.samples[ordinal - 1]
        main_line = main.lines[ordinal - 1]
        if not isinstance(record, dict):
            raise ImportFormatError(
                f"expected a JSON object, got {type_name(record)}", file=path, line=line
            )
        question = sample.input["query"]
        for key in ("question", "input"):
            value = record.get(key)
            if isinstance(value, str) and not _same_text(value, question):
                raise ImportFormatError(
                    f"is about another question than {main.path}, line {main_line} "
                    f"({question[:60]!r}); the files are not index-aligned",
                    file=path,
                    line=line,
                    field=key,
                )
        if "toolset" in record and record["toolset"] is not None:
            toolset = read_tools(
                record["toolset"], key="toolset", path=path, line=line, category=""
            )
            bundle.tools.extend(toolset)
            sample.input.setdefault("toolsets", {})[task] = list(
                dict.fromkeys(tool.name for tool in toolset)
            )
        if "reference" not in record or record["reference"] is None:
            raise ImportFormatError("missing", file=path, line=line, field="reference")
        gold = _read_gold(
            task, record["reference"], main.plans[ordinal - 1], path, line, main_line, main.path
        )
        sample.reference[task] = gold
        if task in ("tool_selection", "tool_usage"):
            offered = set(sample.candidate_tools) | set(
                sample.input.get("toolsets", {}).get(task, ())
            )
            not_offered = [item["tool"] for item in gold if item["tool"] not in offered]
            if not_offered:
                known = sample.metadata.get("gold_not_offered", [])
                sample.metadata["gold_not_offered"] = list(dict.fromkeys([*known, *not_offered]))
        if progress:
            progress(1)
    _keep_published(path, main.samples[: len(lines)], lines, task)


def _read_gold(
    task: str, reference: Any, plan: Plan, path: Path, line: int, main_line: int, main_path: Path
) -> Any:
    if task == "planning":
        if isinstance(reference, str) and reference.strip():
            return reference
        if isinstance(reference, list) and all(isinstance(s, str) for s in reference):
            return "\n".join(reference)
        raise ImportFormatError(
            f"expected the plan as text, got {type_name(reference)}",
            file=path,
            line=line,
            field="reference",
        )
    if not isinstance(reference, list):
        raise ImportFormatError(
            f"expected a list of steps, got {type_name(reference)}",
            file=path,
            line=line,
            field="reference",
        )
    numbers = plan.numbers()
    gold: list[dict[str, Any]] = []
    for index, item in enumerate(reference):
        where = f"reference[{index}]"

        def fail(message: str, key: str | None = None, where: str = where) -> ImportFormatError:
            return ImportFormatError(
                message, file=path, line=line, field=f"{where}.{key}" if key else where
            )

        if not isinstance(item, dict):
            raise fail(f"expected an object, got {type_name(item)}")
        parsed = step_number(item.get("step"))
        if parsed is None:
            raise fail("missing or without a step number such as 1.2", "step")
        number = parsed[0]
        if number not in numbers:
            raise fail(
                f"step {number} is not in the plan of {main_path}, line {main_line}; "
                "the files are not index-aligned",
                "step",
            )
        value = item.get("tool")
        if task in ("tool_usage_awareness", "tool_creation_awareness"):
            if isinstance(value, bool):
                value = int(value)
            if isinstance(value, str) and value.strip() in ("0", "1"):
                value = int(value.strip())
            if value not in (0, 1):
                raise fail(f'expected "0" or "1", got {json.dumps(value)[:40]}', "tool")
            gold.append({"step": number, "value": value})
        elif task == "tool_selection":
            if not isinstance(value, str) or not value.strip():
                raise fail("expected the selected tool's name", "tool")
            gold.append({"step": number, "tool": value.strip()})
        elif task == "tool_usage":
            if not isinstance(value, str) or not value.strip():
                raise fail("expected the tool's name", "tool")
            key = "param" if "param" in item else "arguments"
            arguments = item.get(key)
            if not isinstance(arguments, dict):
                raise fail(f"expected the arguments as an object, got {type_name(arguments)}", key)
            gold.append({"step": number, "tool": value.strip(), "arguments": arguments})
        else:  # tool_creation
            if not isinstance(value, dict) or not isinstance(value.get("name"), str):
                raise fail('expected the tool to create, an object with a "name"', "tool")
            gold.append({"step": number, "tool": value})
    return gold
