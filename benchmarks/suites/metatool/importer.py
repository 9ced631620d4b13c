"""MetaTool / ToolE (papers/000): does the model know when to use a tool, and which one?

Published files (HowieHwong/MetaTool, `dataset/`), recognised by name:

- `all_clean_data.csv` (any `*.csv`): the ToolE single-tool queries, header `Query,Tool`, one
  query and the one tool it needs per row (20,614 rows). The similar and scenario selection
  tasks draw their queries from these. A slice may carry a leading `row_index` column (the
  row's index in the full file, as the seed slices do); it is taken verbatim as the id.
- `multi_tool_query_golden.json`: list of `{"query", "tool": [two names]}` (497 queries).
- Tool descriptions: `plugin_des.json` (name -> description, 199 tools), `big_tool_des.json`
  (name -> description, 47 tools the authors merged from similar plugins; in the published
  files every one of these names is also in plugin_des.json) and `plugin_info.json` (list of
  plugin-store entries `{"name_for_model", "name_for_human", "description_for_model",
  "description_for_human"}`; 390 entries, 388 names).
- Scenario lists `scenario/<Name>.json`: `{"Tools": [names], "ref"?: [urls]}`, the fixed
  candidate list of the scenario task for one group of users (Students, elders, TopTool_top5...).
  The `scenario` folder itself may be given.
- Prebuilt test sets, recognised by their prefix (`Task1.json`, `Task1_awareness_sample200.json`):
  `Task1*.json` awareness: list of `{"thought_prompt", "label": "positive" | "negative",
  "tool" (positives only), "query", ...}`; `Task2-Subtask3*.json` reliability and
  `Task2-Subtask4*.json` multi-tool: list of `{"action_prompt", "thought_prompt"?, "tool",
  "query", ...}` (tool: one name for reliability, two for multi-tool). The candidate list is
  inside action_prompt, between "[List of Tools with Names and Descriptions Start]" and "...
  End]", one line per tool: `<n>. tool name: <name>, tool description: <text>`.

Records:
- ToolRecord per tool: plugin_des / big_tool_des entries as (name, description, raw={"name",
  "description", "source": file name, "published": its layout and place in the file});
  plugin_info entries keyed by name_for_model with description = description_for_model and
  raw = the store entry (with "published" likewise). `merge_tools` keeps the first definition
  of a name, so within one import the tools are listed plugin_des first, then big_tool_des, then
  plugin_info, whatever order the files are given in: the benchmark's own descriptions win over
  the store's (the seed files merge to 434 tools). An entry a later file (or plugin_info again)
  gives a name already defined is kept in the first tool's raw["also"], for the export to write
  each file whole.
- SampleRecord, kind "query" throughout, input = {"query": ...} unless said otherwise:
  - split "queries" (CSV): external_id = row_index when the column is there, else the 1-based
    data row number; reference = {"tool": name}; candidate_tools = [] (the similar task builds
    candidates from description embeddings at evaluation time).
  - split "multi_tool_golden": external_id = 0-based position; reference = {"tools": [a, b]};
    candidate_tools = [].
  - split "awareness" (Task1): input = {"query", "prompt": thought_prompt};
    reference = {"needs_tool": label == "positive", "tool": name or None}; candidate_tools = [].
  - split "reliability" (Task2-Subtask3): input = {"query", "prompt": action_prompt};
    candidate_tools = the names parsed from action_prompt; reference = {"tool": gold,
    "expected": []}: the gold tool is never offered, so the right answer is "None" (a file where
    the gold tool is among the candidates is refused).
  - split "multi_tool" (Task2-Subtask4): as reliability, reference = {"tools": [a, b]}; both
    gold tools must be among the candidates.
  - For the Task files every other key of the record (thought_prompt of Task2 files, index,
    source_index...) is kept in metadata. external_id = the record's `index` if every record has
    one and they are unique, else its `source_index` likewise, else the 0-based position (the
    published reliability file repeats `index` 9 for every record; source_index is unique).
  - split "scenario_lists": one row per scenario file, NOT a query: external_id = the scenario
    name (file stem), input = {"scenario": name}, candidate_tools = the fixed list,
    reference = None, metadata = {"ref": the file's ref list, or None}. Evaluation of the
    scenario task pairs these lists with queries of split "queries"; code that iterates queries
    must filter by split.
Queries are kept verbatim (the Task2-Subtask4 queries carry the quotes they were published with).
Every sample's metadata["published"] says how its record is written in its file, for the export
to write it back as it came in: the CSV's header line and line end, a JSON record's key order and
the file's json.dumps options or the record's text (layout.record_layouts), a scenario file's
layout (layout.document_layout).

Gold tools: every gold tool (a query's Tool, the golden and multi-tool pairs, an awareness
positive's tool, a reliability item's tool) must be described by a tool file of the same import
(`gold_tools`, checked by the service): a misspelt or missing tool would otherwise be
stored as a gold answer no model can give, and the similar task cannot build its candidates
without a description. `import_benchmark --allow-known-tools` also accepts a tool the benchmark
already has from an earlier import. Scenario lists are candidate lists, not gold, and are not
checked here (evaluation refuses a scenario whose tools have no description).
"""

from __future__ import annotations

import gc
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.kit.base import (
    ImportBundle,
    ImportFormatError,
    Progress,
    SampleRecord,
    ToolRecord,
    check_file_name,
    check_records,
    iter_csv,
    read_json,
    require,
    type_name,
)
from benchmarks.kit.layout import document_layout, record_layouts

name = "metatool"
default_benchmark = "MetaTool"

TOOL_FILES = ("plugin_des.json", "big_tool_des.json", "plugin_info.json")
GOLDEN_PREFIX = "multi_tool_query_golden"
# The repository names its test sets Task1.json etc.; slices add a suffix (Task1_awareness_...).
TASK_PREFIXES = {
    "Task1": "awareness",
    "Task2-Subtask3": "reliability",
    "Task2-Subtask4": "multi_tool",
}
ACCEPTED = (
    "*.csv (all_clean_data.csv: Query,Tool), multi_tool_query_golden.json, plugin_des.json, "
    "big_tool_des.json, plugin_info.json, Task1*.json, Task2-Subtask3*.json, "
    "Task2-Subtask4*.json, scenario/<Name>.json or the scenario folder"
)
LIST_START = "[List of Tools with Names and Descriptions Start]"
LIST_END = "[List of Tools with Names and Descriptions End]"
CANDIDATE_LINE = re.compile(r"^(\d+)\. tool name: (.*?), tool description: ", re.MULTILINE)
PROGRESS_EVERY = 4096
# metadata[PUBLISHED] (and a described tool's raw[PUBLISHED]): how the record is written in its
# file (layout.record_layouts; the CSV's header line and line end) and its place there; a
# tool's raw[ALSO]: the entries a later tool file (or plugin_info.json again) gives the same name,
# which merge_tools drops ({file: [{"position", "description" or the store "entry",
# PUBLISHED}]}).
PUBLISHED = "published"
ALSO = "also"


def _classify(path: Path) -> list[tuple[str, Path]]:
    """(kind, file) pairs for one given path; a scenario folder expands to its files."""
    if path.is_dir():
        if path.name == "scenario":
            found = sorted(p for p in path.iterdir() if p.is_file() and p.suffix == ".json")
            if not found:
                raise ImportFormatError("holds no scenario .json files", file=path)
            return [("scenario", p) for p in found]
        raise ImportFormatError(
            f"is a folder; MetaTool files are given one by one (except the scenario folder): "
            f"{ACCEPTED}",
            file=path,
        )
    file_name = path.name
    if path.suffix.lower() == ".csv":
        return [("queries", path)]
    if file_name in TOOL_FILES:
        return [(file_name, path)]
    if path.suffix == ".json":
        if file_name.startswith(GOLDEN_PREFIX):
            return [("golden", path)]
        for prefix, split in TASK_PREFIXES.items():
            if file_name.startswith(prefix):
                return [(split, path)]
        if path.parent.name == "scenario":
            return [("scenario", path)]
    raise ImportFormatError(f"is not a MetaTool file; this suite reads {ACCEPTED}", file=path)


def import_files(paths: Sequence[Path], progress: Progress | None = None) -> ImportBundle:
    files = [pair for path in paths for pair in _classify(path)]
    bundle = ImportBundle()
    tools_by_file: dict[str, list[ToolRecord]] = {kind: [] for kind in TOOL_FILES}
    for kind, path in files:
        if kind == "queries":
            _read_queries(path, bundle, progress)
        elif kind == "plugin_info.json":
            tools_by_file[kind].extend(_read_plugin_info(path, progress))
        elif kind in TOOL_FILES:
            tools_by_file[kind].extend(_read_descriptions(path, progress))
        elif kind == "golden":
            _read_golden(path, bundle, progress)
        elif kind == "scenario":
            _read_scenario(path, bundle, progress)
        else:
            _read_task(path, kind, bundle, progress)
    first: dict[str, ToolRecord] = {}
    for kind in TOOL_FILES:
        for position, tool in enumerate(tools_by_file[kind]):
            kept = first.setdefault(tool.name, tool)
            if kept is not tool and isinstance(kept.raw, dict) and isinstance(tool.raw, dict):
                # merge_tools keeps the first definition of a name: the entries a later one
                # (or the same store list again) gives it are kept with it, for the export to
                # write each file whole
                entry = {k: v for k, v in tool.raw.items() if k not in (PUBLISHED, ALSO)}
                kept.raw.setdefault(ALSO, {}).setdefault(kind, []).append(
                    {
                        "position": position,
                        **(
                            {"entry": entry}
                            if kind == "plugin_info.json"
                            else {"description": tool.description}
                        ),
                        PUBLISHED: tool.raw.get(PUBLISHED, {}),
                    }
                )
        bundle.tools.extend(tools_by_file[kind])
    return bundle


def gold_tools(sample: SampleRecord) -> list[tuple[str, str]]:
    """(field, tool) of each gold tool of a sample, as its file names the field: these must be
    described by a tool file of the same import (base.check_gold_tools)."""
    reference = sample.reference
    if sample.split == "queries":
        return [("Tool", reference["tool"])]
    if sample.split in ("multi_tool_golden", "multi_tool"):
        return [(f"tool[{index}]", tool) for index, tool in enumerate(reference["tools"])]
    if sample.split == "reliability" or (sample.split == "awareness" and reference["needs_tool"]):
        return [("tool", reference["tool"])]
    return []  # negative awareness items, scenario lists


# --- queries (CSV) -------------------------------------------------------------------------------


def _read_queries(path: Path, bundle: ImportBundle, progress: Progress | None) -> None:
    # The hot path: 20,614 rows in the published file, ten times that in perf/import_speed.py.
    # Every row allocates a few containers, and the cyclic garbage collector, triggered by
    # allocation counts, would rescan the growing list of records again and again (about 40% of
    # the parsing time). Nothing built here forms a cycle, so it is paused for the loop and
    # restored after, error or not.
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        _read_query_rows(path, bundle, progress)
    finally:
        if paused:
            gc.enable()


def _csv_layout(path: Path) -> tuple[dict[str, Any], bool]:
    """How the CSV file is written: its header line and line end ({"header", "eol"}, shared by
    its samples' metadata[PUBLISHED]), and whether its last row ends with that line end."""
    with path.open("rb") as file:
        first = file.readline()
        file.seek(0, 2)
        size = file.tell()
        file.seek(max(size - 2, 0))
        last = file.read()
    eol = "\r\n" if first.endswith(b"\r\n") else "\n"
    header = first.decode("utf-8", "replace").removeprefix("\ufeff").rstrip("\r\n")
    return {"header": header, "eol": eol}, last.endswith(eol.encode())


def _read_query_rows(path: Path, bundle: ImportBundle, progress: Progress | None) -> None:
    # One dict lookup per column, no regex, no JSON; progress is reported in batches.
    src = str(path)
    layout, ends = _csv_layout(path)
    first_sample = len(bundle.samples)
    append = bundle.samples.append
    has_index: bool | None = None
    seen: dict[str, int] = {}
    number = 0
    for line, row in iter_csv(path, ("Query", "Tool")):
        number += 1
        if has_index is None:
            has_index = "row_index" in row
        query = row["Query"]
        if not query or query.isspace():
            raise ImportFormatError("is empty", file=path, line=line, field="Query")
        tool = row["Tool"].strip()
        if not tool:
            raise ImportFormatError("is empty", file=path, line=line, field="Tool")
        if has_index:
            external_id = row["row_index"].strip()
            if not external_id:
                raise ImportFormatError("is empty", file=path, line=line, field="row_index")
            # Row numbers cannot repeat, published indexes can: name both lines here, where the
            # file is known, rather than leave it to the bundle-wide check.
            first = seen.setdefault(external_id, line)
            if first != line:
                raise ImportFormatError(
                    f"duplicate id {external_id!r} in split 'queries'; first seen at line {first}",
                    file=path,
                    line=line,
                    field="row_index",
                )
        else:
            external_id = str(number)
        append(
            SampleRecord(
                split="queries",
                external_id=external_id,
                input={"query": query},
                reference={"tool": tool},
                metadata={PUBLISHED: layout},
                source=f"{src}, line {line}",
            )
        )
        if progress and number % PROGRESS_EVERY == 0:
            progress(PROGRESS_EVERY)
    if progress and number % PROGRESS_EVERY:
        progress(number % PROGRESS_EVERY)
    if not ends and len(bundle.samples) > first_sample:
        last = bundle.samples[-1]
        last.metadata = {PUBLISHED: {**layout, "end": ""}}


# --- tools --------------------------------------------------------------------------------------


def _read_descriptions(path: Path, progress: Progress | None) -> list[ToolRecord]:
    check_file_name(path)  # kept in each tool's raw "source"
    text, data, spans = read_json(path)
    check_records(data, spans, file=path)
    if not isinstance(data, dict):
        raise ImportFormatError(
            f"expected a JSON object tool name -> description, got {type_name(data)}", file=path
        )
    layouts = record_layouts(text, data, [(span.start, span.end) for span in spans])
    if len(layouts) != len(data):  # a name given twice: json.loads keeps its last value
        layouts = [{} for _ in data]
    tools = []
    for position, (tool_name, description) in enumerate(data.items(), start=1):
        if not tool_name.strip():
            raise ImportFormatError(
                "a tool has an empty name", file=path, record=position, field="name"
            )
        if not isinstance(description, str):
            raise ImportFormatError(
                f"the description of {tool_name!r} must be a string, got {type_name(description)}",
                file=path,
                record=tool_name,
                field="description",
            )
        tools.append(
            ToolRecord(
                name=tool_name,
                description=description,
                raw={
                    "name": tool_name,
                    "description": description,
                    "source": path.name,
                    PUBLISHED: {**layouts[position - 1], "position": position - 1},
                },
                source=f"{path}, record {tool_name}",
            )
        )
        if progress:
            progress(1)
    return tools


def _read_plugin_info(path: Path, progress: Progress | None) -> list[ToolRecord]:
    text, data, spans = read_json(path)
    check_records(data, spans, file=path)
    if not isinstance(data, list):
        raise ImportFormatError(
            f"expected a list of plugin-store entries, got {type_name(data)}", file=path
        )
    layouts = record_layouts(text, data, [(span.start, span.end) for span in spans])
    if len(layouts) != len(data):
        layouts = [{} for _ in data]
    tools = []
    for position, entry in enumerate(data):
        tool_name = require(entry, "name_for_model", str, file=path, record=position)
        where = f"{position} ({tool_name})"
        description = entry.get("description_for_model")
        if not isinstance(description, str):
            raise ImportFormatError(
                f"the description of {tool_name!r} must be a string, got {type_name(description)}",
                file=path,
                record=where,
                field="description_for_model",
            )
        tools.append(
            ToolRecord(
                name=tool_name,
                description=description,
                raw={**entry, PUBLISHED: {**layouts[position], "position": position}},
                source=f"{path}, record {where}",
            )
        )
        if progress:
            progress(1)
    return tools


# --- JSON sample files ---------------------------------------------------------------------------


def _load_list(path: Path, what: str) -> tuple[list[Any], list[dict[str, Any]]]:
    """The file's records and how each is written (layout.record_layouts)."""
    text, data, spans = read_json(path)
    check_records(data, spans, file=path)
    if not isinstance(data, list):
        raise ImportFormatError(f"expected a list of {what}, got {type_name(data)}", file=path)
    layouts = record_layouts(text, data, [(span.start, span.end) for span in spans])
    if len(layouts) != len(data):
        layouts = [{} for _ in data]
    return data, layouts


def _tool_pair(record: Any, *, path: Path, record_id: Any) -> list[str]:
    pair = require(record, "tool", list, file=path, record=record_id)
    if len(pair) != 2 or not all(isinstance(t, str) and t.strip() for t in pair):
        raise ImportFormatError(
            f"expected a list of two tool names, got {pair!r:.200}",
            file=path,
            record=record_id,
            field="tool",
        )
    if pair[0] == pair[1]:
        raise ImportFormatError(
            f"names the same tool twice ({pair[0]!r})", file=path, record=record_id, field="tool"
        )
    return list(pair)


def _read_golden(path: Path, bundle: ImportBundle, progress: Progress | None) -> None:
    records, layouts = _load_list(path, "multi-tool queries")
    for position, record in enumerate(records):
        query = require(record, "query", str, file=path, record=position)
        pair = _tool_pair(record, path=path, record_id=position)
        extra = {k: v for k, v in record.items() if k not in ("query", "tool")}
        bundle.samples.append(
            SampleRecord(
                split="multi_tool_golden",
                external_id=str(position),
                input={"query": query},
                reference={"tools": pair},
                metadata={**extra, PUBLISHED: layouts[position]},
                source=f"{path}, record {position}",
            )
        )
        if progress:
            progress(1)


def _read_scenario(path: Path, bundle: ImportBundle, progress: Progress | None) -> None:
    check_file_name(path)  # the scenario's name is the file's
    text, data, spans = read_json(path)
    check_records(data, spans, file=path)
    scenario = path.stem
    tools = require(data, "Tools", list, file=path, record=scenario)
    if not tools:
        raise ImportFormatError("is an empty list", file=path, record=scenario, field="Tools")
    for index, tool in enumerate(tools):
        if not isinstance(tool, str) or not tool.strip():
            raise ImportFormatError(
                f"expected a tool name, got {type_name(tool)}",
                file=path,
                record=scenario,
                field=f"Tools[{index}]",
            )
    bundle.samples.append(
        SampleRecord(
            split="scenario_lists",
            external_id=scenario,
            input={"scenario": scenario},
            candidate_tools=list(tools),
            metadata={"ref": data.get("ref"), PUBLISHED: document_layout(text, data)},
            source=f"{path}, record {scenario}",
        )
    )
    if progress:
        progress(1)


def _record_ids(records: list[Any]) -> list[str]:
    """The published `index`, else `source_index`, when every record has one and none repeat."""
    for key in ("index", "source_index"):
        values = [r.get(key) if isinstance(r, dict) else None for r in records]
        if all(isinstance(v, (int, str)) and not isinstance(v, bool) for v in values):
            ids = [str(v).strip() for v in values]
            if all(ids) and len(set(ids)) == len(ids):
                return ids
    return [str(position) for position in range(len(records))]


def _candidates(prompt: str, *, path: Path, record_id: str) -> list[str]:
    start = prompt.find(LIST_START)
    end = prompt.find(LIST_END, start + 1)
    if start < 0 or end < 0:
        raise ImportFormatError(
            f"holds no tool list between {LIST_START!r} and {LIST_END!r}",
            file=path,
            record=record_id,
            field="action_prompt",
        )
    entries = CANDIDATE_LINE.findall(prompt, start + len(LIST_START), end)
    names = [tool.strip() for _, tool in entries]
    numbers = [int(n) for n, _ in entries]
    if not names or numbers != list(range(1, len(names) + 1)) or not all(names):
        raise ImportFormatError(
            "tool list is not numbered lines '<n>. tool name: <name>, tool description: ...' "
            "from 1",
            file=path,
            record=record_id,
            field="action_prompt",
        )
    return names


def _read_task(path: Path, split: str, bundle: ImportBundle, progress: Progress | None) -> None:
    records, layouts = _load_list(path, f"{split} test items")
    ids = _record_ids(records)
    for record, record_id, layout in zip(records, ids, layouts, strict=True):
        query = require(record, "query", str, file=path, record=record_id)
        reference: dict[str, Any]
        candidates: list[str] = []
        if split == "awareness":
            prompt = require(record, "thought_prompt", str, file=path, record=record_id)
            label = require(record, "label", str, file=path, record=record_id)
            if label not in ("positive", "negative"):
                raise ImportFormatError(
                    f'must be "positive" (needs a tool) or "negative", got {label!r:.100}',
                    file=path,
                    record=record_id,
                    field="label",
                )
            needs_tool = label == "positive"
            tool = require(
                record, "tool", str, file=path, record=record_id, optional=not needs_tool
            )
            reference = {"needs_tool": needs_tool, "tool": tool or None}
            used: tuple[str, ...] = ("query", "thought_prompt", "label", "tool")
        else:
            prompt = require(record, "action_prompt", str, file=path, record=record_id)
            candidates = _candidates(prompt, path=path, record_id=record_id)
            if split == "reliability":
                gold = require(record, "tool", str, file=path, record=record_id).strip()
                if gold in candidates:
                    raise ImportFormatError(
                        f"the gold tool {gold!r} is among the candidates; a reliability item "
                        "must not offer it (the right answer is None)",
                        file=path,
                        record=record_id,
                        field="tool",
                    )
                reference = {"tool": gold, "expected": []}
            else:
                pair = _tool_pair(record, path=path, record_id=record_id)
                missing = [t for t in pair if t not in candidates]
                if missing:
                    raise ImportFormatError(
                        f"gold tool(s) {', '.join(missing)} not among the candidates in "
                        "action_prompt",
                        file=path,
                        record=record_id,
                        field="tool",
                    )
                reference = {"tools": pair}
            used = ("query", "action_prompt", "tool")
        bundle.samples.append(
            SampleRecord(
                split=split,
                external_id=record_id,
                input={"query": query, "prompt": prompt},
                reference=reference,
                candidate_tools=candidates,
                metadata={
                    **{k: v for k, v in record.items() if k not in used},
                    PUBLISHED: layout,
                },
                source=f"{path}, record {record_id}",
            )
        )
        if progress:
            progress(1)
