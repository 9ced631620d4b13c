"""StableToolBench (papers/002): ToolBench's solvable queries over RapidAPI tools, answered
against a virtual API server (response cache, then the real API, then an LLM simulator) and
judged by an LLM: pass rate (SoPR) and preference against a reference run (SoWR).

Published format (THUNLP-MT/StableToolBench, `solvable_queries/`):

- `test_instruction/<group>.json`, one file per test group (G1_instruction, G1_category,
  G1_tool, G2_instruction, G2_category, G3_instruction): a JSON list of queries
      {"query_id": int, "query": str,
       "api_list": [api, ...],                the APIs offered with the query, in prompt order
       "relevant APIs": [[tool_name, api_name], ...]}   the APIs the query was written for
  where an api is
      {"category_name": str, "tool_name": str, "api_name": str, "api_description": str,
       "required_parameters": [param, ...], "optional_parameters": [param, ...],
       "method": "GET", "template_response"?: sketch}
  and a param is {"name", "type", "description", "default"}. Types seen: STRING (also
  "string"), NUMBER, BOOLEAN, ENUM (no values published; the description names them),
  "DATE (YYYY-MM-DD)", OBJECT, ARRAY, BINARY. `default` is an example value, mostly a string
  even for numbers and booleans ("" when there is none). `template_response` sketches the
  response with type words ("str", "int", "float", "bool", "NoneType", "empty list",
  "list of str with length 8", lists of one element carrying "_list_length"); in 111 of the
  1,719 seed entries it is instead a JSON text cut off mid-way.
  The group is the file name up to its first dot (`G1_instruction.first50.json` ->
  "G1_instruction").
- `test_query_ids/<group>.json`: the ids StableToolBench's evaluation scripts select, an object
  {"<query_id>": 0, ...} (a plain list of ids is read too). Every query of the published
  test_instruction files is listed. Read only together with that group's query file: each
  query of the group gets metadata["in_test_query_ids"] (True / False); a list for a group
  whose queries are not in the same import is refused, since alone it holds nothing to store.
- A folder may be given: `solvable_queries/` (its test_instruction/ and test_query_ids/) or a
  folder holding such JSON files. Files are told apart by content (a list of query objects,
  or an id map / id list), so the names may carry suffixes.

Records:
- ToolRecord per API, de-duplicated across queries and files, keyed by (category, tool, api) as
  ToolBench keys them (its tools live in <category>/<tool>.json; its server's cache in
  <Category>/<tool>_for_<Category>/<api>.json). ToolBench's function name `<api>_for_<tool>`
  is not unique across categories: the published test files name some APIs alike in two
  categories ('👋 Demo Project' in Media and in Sports, 'Currency Converter_v2' in Finance
  and in Financial), and ToolBench tells them apart by the category of the query's api_list
  entry the name was offered from. So name = `<category_name>/<api>_for_<tool>` (`tool_key`;
  `key_parts` splits it at its last "/", which a function name never holds), e.g.
  `Data/songkick_concert_for_theclique`. The function name follows ToolBench's rules
  (toolbench/utils.py `standardize` and `change_name`): every character other than a-z, A-Z,
  0-9, "_", "^" and CJK becomes "_", runs of "_" collapse, lower case, no leading/trailing "_",
  a leading digit gets "get_", and an API named from/class/return/false/true/id/and gets "is_"
  (`Songkick concert` of `TheClique` -> `songkick_concert_for_theclique`). It is the name
  models see (`shown_names`, which qualifies a name two tools of one query share) and the name
  the published answers call. ToolBench cuts it to its last 64 characters for the OpenAI API;
  that is not done here because it makes two seed APIs collide. Two different (category,
  tool, api) triples with one key (two tool names of one category that standardize alike,
  which ToolBench's own files cannot hold either) are an error naming both places; the same
  API with a different document in a later query keeps the first document and lists the key
  in that sample's metadata["api_doc_differs"].
  description = api_description; category = category_name; raw = the api entry as published
  (it holds the category/tool/api triple the virtual API server needs, see `cache_path`).
  parameters = {"type": "object", "properties", "required"}: property names are ToolBench's
  (the same rules as above: `id` -> `is_id`, `orgId` -> `orgid`) because models saw those and
  the response cache is keyed by them; the published name stays in raw. Each property is
  {"type", "description", "examples"?: [default]} (no "examples" when default is "" or null).
  Types: STRING/string -> string, NUMBER -> number, BOOLEAN -> boolean, OBJECT -> object,
  ARRAY -> array, DATE (YYYY-MM-DD) -> string with format "date", BINARY -> string with format
  "binary", ENUM and anything else -> string (ToolBench's own prompt maps NUMBER to integer and
  every other type but STRING/BOOLEAN to string: the prompt builder's business). A name given
  twice (seed: "Riddle by ID" lists `id` as required and optional) keeps its first definition;
  required ones come first.
  returns = JSON Schema from template_response when it is an object (type words -> types,
  "_list_length" dropped, a list's schema from its one sketched element); {} otherwise.
- SampleRecord per query: split = group, external_id = str(query_id), kind "query",
  input = {"query"}, candidate_tools = the tool keys of its api_list in order,
  reference = {"relevant_apis": [[tool_name, api_name], ...] as published, "relevant_tools":
  [tool keys]}. A relevant API names no category: it is the api_list entry with its function
  name (the first, should the query offer it from two categories); one missing from the
  api_list gets the category of an entry of the same tool, or none (its bare function name),
  and is kept and named in metadata["relevant_not_offered"]. metadata["published"]: how the
  query's record is written in its file (key order and the file's json.dumps options, or its
  text: layout.record_layouts), under "ids" how its group's test_query_ids file is, under
  "docs" the query's own document of an API whose kept document differs (by its index in
  api_list), and under "apis" the api_list's tool keys when it lists one twice, for the export
  to write them back as they came in.

Response cache (the virtual API server's, `server/main.py`): a folder
`<Category>/<tool>_for_<Category>/<api>.json` (a plain `<tool>` folder is read too), each file a
JSON object from the call's arguments, written as `str(arguments)` (a Python dict repr such as
"{'query': 'x'}", sometimes JSON), to {"error": str, "response": any}. `load_response_cache`
reads it into CacheEntry values for the virtual API server; `import_files` refuses it because
an ImportBundle has no place for responses (the cache gets its own model in the virtual API
server issue). `cache_tool_name` maps an entry to the Tool name above (the folder's category
stands for category_name: they are equal for ToolBench's categories, which hold no space, comma
or slash); `cache_path` maps a Tool's raw entry to its cache file.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from collections import Counter, deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path, PurePosixPath
from typing import Any

from benchmarks.kit.base import (
    ImportBundle,
    ImportFormatError,
    Progress,
    RecordSpan,
    SampleRecord,
    ToolRecord,
    check_file_name,
    check_records,
    check_value,
    read_json,
    require,
    type_name,
    unstorable,
)
from benchmarks.kit.layout import indent_of, record_layout, record_layouts

name = "stabletoolbench"
default_benchmark = "StableToolBench"

ACCEPTED = (
    "solvable_queries/test_instruction/<group>.json (e.g. G1_instruction.json), "
    "solvable_queries/test_query_ids/<group>.json, or a folder holding them"
)
# metadata[PUBLISHED]: how the query's record is written in its file (layout.record_layouts), and
# "ids": how its group's test_query_ids file is.
PUBLISHED = "published"
GROUP = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]{0,99}$")

# --- ToolBench's names --------------------------------------------------------------------------

# ToolBench's character class is written [^\u4e00-\u9fa5^a-z^A-Z^0-9^_], which also keeps "^".
# Reproduced as is: the names must equal the ones its prompts and cache use.
_NOT_NAME = re.compile(r"[^\u4e00-\u9fa5a-zA-Z0-9_^]")
_UNDERSCORES = re.compile(r"_{2,}")
_RESERVED = frozenset({"from", "class", "return", "false", "true", "id", "and"})


def standardize(text: str) -> str:
    """ToolBench's `standardize`: the form of tool, API and parameter names its prompts use."""
    result = _UNDERSCORES.sub("_", _NOT_NAME.sub("_", text)).lower().strip("_")
    if result and result[0].isdigit():
        result = "get_" + result
    return result


def change_name(name: str) -> str:
    """ToolBench's `change_name`: words that are Python keywords (or `id`) get an `is_` prefix."""
    return "is_" + name if name in _RESERVED else name


def function_name(tool_name: str, api_name: str) -> str:
    """The Tool name of an API: ToolBench's `<api>_for_<tool>`, without its 64-character cut."""
    return f"{change_name(standardize(api_name))}_for_{standardize(tool_name)}"


def tool_key(category: str, tool_name: str, api_name: str) -> str:
    """The Tool name of a published API: `<category>/<api>_for_<tool>` (see the docstring)."""
    return f"{category}/{function_name(tool_name, api_name)}"


def key_parts(key: str) -> tuple[str, str]:
    """(category, function name) of a tool key; ("", key) for a name without a category."""
    category, separator, function = key.rpartition("/")
    return (category, function) if separator else ("", key)


def shown_names(keys: Sequence[str]) -> dict[str, str]:
    """key -> the name a model sees, for tools offered together: ToolBench's `<api>_for_<tool>`.
    Where two of them share it (one name in two categories), each is shown as
    `<api>_for_<tool>_for_<category>` (the category standardized like the rest of the name; the
    server's cache folders name tools `<tool>_for_<Category>` the same way), so each name the
    model sees means one API. ToolBench shows both under one name and calls the first that
    matches; here the model can call either. A name that is
    still not unique gets "_2", "_3"... (ToolBench's own names first, then in offer order). A
    name without a category is shown as it is."""
    keys = list(dict.fromkeys(keys))
    count = Counter(key_parts(key)[1] for key in keys)
    shown: dict[str, str] = {}
    qualified: list[str] = []
    for key in keys:
        category, function = key_parts(key)
        if count[function] > 1 and category:
            function = f"{function}_for_{standardize(category)}"
            qualified.append(key)
        shown[key] = function
    planned = set(shown.values())
    used: set[str] = set()
    # ToolBench's own names first: a qualified name never takes one from a tool offered under it.
    for key in [k for k in keys if k not in qualified] + qualified:
        name = shown[key]
        if name in used:
            number = 2
            while f"{name}_{number}" in used or f"{name}_{number}" in planned:
                number += 1
            name = f"{name}_{number}"
        used.add(name)
        shown[key] = name
    return shown


def standard_category(category: str) -> str:
    """The virtual API server's folder name for a category (spaces, commas, slashes -> "_")."""
    result = re.sub(r"[ ,]", "_", category.replace("/", "_"))
    # The server collapses one level of doubled underscores only; so does this.
    return result.replace("__", "_")


def cache_path(api: dict[str, Any]) -> PurePosixPath:
    """Where the virtual API server keeps responses of a published api entry (a Tool's raw)."""
    category = standard_category(api["category_name"])
    tool_folder = f"{standardize(api['tool_name'])}_for_{category}"
    return PurePosixPath(category, tool_folder, f"{change_name(standardize(api['api_name']))}.json")


# --- schemas ------------------------------------------------------------------------------------

PARAM_TYPES: dict[str, dict[str, str]] = {
    "STRING": {"type": "string"},
    "NUMBER": {"type": "number"},
    "INTEGER": {"type": "integer"},
    "BOOLEAN": {"type": "boolean"},
    "OBJECT": {"type": "object"},
    "ARRAY": {"type": "array"},
    "ENUM": {"type": "string"},
    "DATE (YYYY-MM-DD)": {"type": "string", "format": "date"},
    "BINARY": {"type": "string", "format": "binary"},
}
SKETCH_TYPES = {
    "str": "string",
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "NoneType": "null",
    "dict": "object",
    "list": "array",
}
SKETCH_LIST = re.compile(r"^list of (\w+) with length \d+$")


def response_schema(sketch: Any) -> dict[str, Any]:
    """JSON Schema of a template_response sketch; {} (anything) where the sketch says nothing."""
    if isinstance(sketch, dict):
        return {
            "type": "object",
            "properties": {
                key: response_schema(value)
                for key, value in sketch.items()
                if key != "_list_length"
            },
        }
    if isinstance(sketch, list):
        schema: dict[str, Any] = {"type": "array"}
        if sketch:
            schema["items"] = response_schema(sketch[0])
        return schema
    if isinstance(sketch, str):
        if sketch in SKETCH_TYPES:
            return {"type": SKETCH_TYPES[sketch]}
        if sketch == "empty list":
            return {"type": "array"}
        match = SKETCH_LIST.match(sketch)
        if match:
            items = SKETCH_TYPES.get(match.group(1))
            return {"type": "array", "items": {"type": items}} if items else {"type": "array"}
    return {}


@dataclass(slots=True)
class _Where:
    """Where a record sits, for errors: file, line of the record's start, record, field prefix."""

    file: Path
    line: int | None
    record: str | int | None

    def error(self, message: str, field: str | None = None) -> ImportFormatError:
        return ImportFormatError(
            message, file=self.file, line=self.line, record=self.record, field=field
        )

    def get(
        self,
        obj: Any,
        key: str,
        kind: type | tuple[type, ...],
        prefix: str = "",
        *,
        optional: bool = False,
        default: Any = None,
    ) -> Any:
        try:
            return require(
                obj,
                key,
                kind,
                file=self.file,
                line=self.line,
                record=self.record,
                optional=optional,
                default=default,
            )
        except ImportFormatError as exc:
            # require() names the key alone; the path inside the query is what a reader needs.
            path = f"{prefix}.{exc.field}" if prefix and exc.field else (exc.field or prefix)
            raise self.error(exc.message, path or None) from None


def _parameters(api: dict[str, Any], where: _Where, prefix: str) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for key in ("required_parameters", "optional_parameters"):
        params = where.get(api, key, list, prefix, optional=True, default=[])
        for index, param in enumerate(params):
            at = f"{prefix}.{key}[{index}]"
            published = where.get(param, "name", str, at)
            kind = where.get(param, "type", str, at)
            description = where.get(param, "description", str, at, optional=True, default="")
            # A name with no letter or digit standardizes to ""; keep the published one then.
            name = change_name(standardize(published)) or published
            if name in properties:
                continue
            schema: dict[str, Any] = dict(PARAM_TYPES.get(kind.strip().upper(), {"type": "string"}))
            schema["description"] = description
            example = param.get("default")
            if example is not None and example != "":
                schema["examples"] = [example]
            properties[name] = schema
            if key == "required_parameters":
                required.append(name)
    return {"type": "object", "properties": properties, "required": required}


def _tool(api: Any, where: _Where, prefix: str) -> tuple[ToolRecord, tuple[str, str, str]]:
    category = where.get(api, "category_name", str, prefix)
    tool_name = where.get(api, "tool_name", str, prefix)
    api_name = where.get(api, "api_name", str, prefix)
    description = where.get(api, "api_description", str, prefix, optional=True, default="")
    where.get(api, "method", str, prefix, optional=True)
    sketch = api.get("template_response")
    record = ToolRecord(
        name=tool_key(category, tool_name, api_name),
        description=description.strip(),
        parameters=_parameters(api, where, prefix),
        returns=response_schema(sketch) if isinstance(sketch, dict) else {},
        category=category,
        raw=api,
        source=f"{where.file}, line {where.line}",
    )
    return record, (category, tool_name, api_name)


# --- files --------------------------------------------------------------------------------------


def group_of(path: Path) -> str:
    """The group a file holds, from its name: `G1_instruction.first50.json` -> G1_instruction."""
    group = path.name.split(".", 1)[0]
    if not path.name.lower().endswith(".json") or not GROUP.match(group):
        raise ImportFormatError(
            f"is not a StableToolBench file; this suite reads {ACCEPTED} (the group is the name "
            f"up to its first dot, letters, digits, '_' or '-')",
            file=path,
        )
    return group


def _looks_like_cache(folder: Path) -> bool:
    return next(folder.glob("*/*/*.json"), None) is not None


def _json_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() == ".json")


def _files(paths: Sequence[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if not path.is_dir():
            files.append(path)
            continue
        # The repository's layout: <folder>/solvable_queries/{test_instruction,test_query_ids}.
        base = path / "solvable_queries" if (path / "solvable_queries").is_dir() else path
        if (base / "test_instruction").is_dir():
            found = _json_files(base / "test_instruction")
            if (base / "test_query_ids").is_dir():
                found += _json_files(base / "test_query_ids")
        else:
            found = [p for p in _json_files(path) if p.name != "manifest.json"]
        if not found:
            if _looks_like_cache(path):
                raise ImportFormatError(
                    "is a response cache (<Category>/<tool>/<api>.json): the virtual API server "
                    f"reads it (load_response_cache); import_files reads {ACCEPTED}",
                    file=path,
                )
            raise ImportFormatError(
                f"holds no StableToolBench files; this suite reads {ACCEPTED}", file=path
            )
        files.extend(found)
    return files


def _is_cache_file(value: dict[str, Any]) -> bool:
    return bool(value) and all(
        isinstance(v, dict) and ("response" in v or "error" in v) for v in value.values()
    )


def _query_ids(value: Any, path: Path) -> set[str]:
    """The ids of a test_query_ids file: an object id -> number, or a list of ids."""
    if isinstance(value, dict):
        for key, number in value.items():
            if isinstance(number, bool) or not isinstance(number, int):
                raise ImportFormatError(
                    f"expected a number after each query id, got {type_name(number)}",
                    file=path,
                    record=key,
                )
            if not key.strip():
                raise ImportFormatError("a query id is empty", file=path)
        return set(value)
    ids: set[str] = set()
    for index, item in enumerate(value, start=1):
        if isinstance(item, bool) or not isinstance(item, int | str) or not str(item).strip():
            raise ImportFormatError(
                f"expected a query id (a number or a string), got {type_name(item)}",
                file=path,
                record=index,
            )
        ids.add(str(item))
    return ids


def import_files(paths: Sequence[Path], progress: Progress | None = None) -> ImportBundle:
    bundle = ImportBundle()
    tools: dict[str, tuple[ToolRecord, tuple[str, str, str]]] = {}
    samples_by_group: dict[str, list[SampleRecord]] = {}
    id_files: list[tuple[Path, str, set[str], dict[str, Any]]] = []

    for path in _files(paths):
        group = group_of(path)
        # Each query's size is checked before the file is parsed (base.json_records).
        text, value, spans = read_json(path, check=partial(_check_file, path))
        # A list of objects is a query file; its bad records are reported one by one below.
        if isinstance(value, list) and value and isinstance(value[0], dict):
            samples = _read_queries(path, group, spans, value, tools, progress)
            if len(spans) == len(samples):
                layouts = record_layouts(text, value, [(s.start, s.end) for s in spans])
                for sample, layout in zip(samples, layouts, strict=True):
                    sample.metadata[PUBLISHED] = {**layout, **sample.metadata.get(PUBLISHED, {})}
            samples_by_group.setdefault(group, []).extend(samples)
            bundle.samples.extend(samples)
        elif isinstance(value, dict) and _is_cache_file(value):
            raise ImportFormatError(
                "is a response-cache file (arguments -> {error, response}); the virtual API "
                "server reads the cache folder (load_response_cache); import_files reads "
                f"{ACCEPTED}",
                file=path,
            )
        elif isinstance(value, dict | list) and value:
            check_records(value, spans, file=path)
            id_files.append((path, group, _query_ids(value, path), _ids_layout(text, value)))
        elif isinstance(value, dict | list):
            raise ImportFormatError("holds no queries (an empty JSON list or object)", file=path)
        else:
            raise ImportFormatError(
                f"expected a JSON list of queries or a test_query_ids object, got "
                f"{type_name(value)}; this suite reads {ACCEPTED}",
                file=path,
                line=1,
            )

    for path, group, ids, ids_layout in id_files:
        samples = samples_by_group.get(group) or []
        if not samples:
            raise ImportFormatError(
                f"lists the query ids of group {group!r}, but no {group} query file is in this "
                f"import; give test_instruction/{group}.json with it",
                file=path,
            )
        for sample in samples:
            sample.metadata["in_test_query_ids"] = sample.external_id in ids
            if PUBLISHED in sample.metadata:
                sample.metadata[PUBLISHED]["ids"] = ids_layout

    bundle.tools = [tool for tool, _ in tools.values()]
    return bundle


def _ids_layout(text: str, value: Any) -> dict[str, Any]:
    """How a test_query_ids file is written: json.dumps' options ({"indent"?, "ascii"?}), "end"
    (what follows the closing bracket) when not empty, and "list": true for a plain id list."""
    body = text.rstrip()
    layout = record_layout(body, value, 0, indent_of(body))
    if layout is None:
        layout = {"indent": indent_of(body)}
    if text[len(body) :]:
        layout["end"] = text[len(body) :]
    if isinstance(value, list):
        layout["list"] = True
    return layout


def _check_file(path: Path, value: Any, spans: list[RecordSpan]) -> None:
    """The checks import_files makes of a file's values, naming places as it does."""
    if isinstance(value, list) and value and isinstance(value[0], dict):
        lines = [span.line for span in spans] if len(spans) == len(value) else []
        for index, query in enumerate(value):
            check_value(query, file=path, line=lines[index] if lines else None, record=index + 1)
    else:
        check_records(value, spans, file=path)


def _read_queries(
    path: Path,
    group: str,
    spans: list[RecordSpan],
    queries: list[Any],
    tools: dict[str, tuple[ToolRecord, tuple[str, str, str]]],
    progress: Progress | None,
) -> list[SampleRecord]:
    samples: list[SampleRecord] = []
    # One span per element of a parsed list: json_records and json.loads read the same text
    # (were they ever to disagree, the errors would name the record without its line).
    lines: list[int | None] = [span.line for span in spans]
    if len(lines) != len(queries):
        lines = [None] * len(queries)
    for index, query in enumerate(queries):
        line = lines[index]
        where = _Where(path, line, index + 1)
        check_value(query, file=path, line=line, record=index + 1)
        query_id = where.get(query, "query_id", (int, str))
        if isinstance(query_id, str):
            query_id = query_id.strip()
        where.record = f"{index + 1} (query_id {query_id})"
        question = where.get(query, "query", str)
        api_list = where.get(query, "api_list", list)
        if not api_list:
            raise where.error("is empty; a query offers at least one API", "api_list")
        metadata: dict[str, Any] = {}
        candidates: list[str] = []
        listed: list[str] = []
        own_docs: dict[str, Any] = {}
        for number, api in enumerate(api_list):
            tool, triple = _tool(api, where, f"api_list[{number}]")
            first = tools.setdefault(tool.name, (tool, triple))
            if first[1] != triple:
                raise where.error(
                    f"API {triple[1]!r} / {triple[2]!r} (category {triple[0]!r}) gets the tool "
                    f"name {tool.name!r}, which {first[1][1]!r} / {first[1][2]!r} (category "
                    f"{first[1][0]!r}, {first[0].source}) already has",
                    f"api_list[{number}]",
                )
            if first[0] is not tool and first[0].raw != tool.raw:
                metadata.setdefault("api_doc_differs", []).append(tool.name)
                # the query's own document, for the export to write the record as published
                own_docs[str(number)] = api
            listed.append(tool.name)
            if tool.name not in candidates:
                candidates.append(tool.name)
        if own_docs or len(listed) != len(candidates):
            metadata[PUBLISHED] = {"docs": own_docs} if own_docs else {}
            if len(listed) != len(candidates):  # an API listed twice
                metadata[PUBLISHED]["apis"] = listed
        relevant = where.get(query, "relevant APIs", list)
        relevant_tools: list[str] = []
        offered = {key_parts(key)[1]: key for key in reversed(candidates)}  # the first wins
        categories = {
            standardize(api["tool_name"]): api["category_name"] for api in reversed(api_list)
        }
        for number, pair in enumerate(relevant):
            if (
                not isinstance(pair, list)
                or len(pair) != 2
                or not all(isinstance(part, str) and part.strip() for part in pair)
            ):
                raise where.error(
                    "expected [tool_name, api_name], two non-empty strings, got "
                    f"{json.dumps(pair, ensure_ascii=False)[:200]}",
                    f"relevant APIs[{number}]",
                )
            function = function_name(pair[0], pair[1])
            category = categories.get(standardize(pair[0]))
            fallback = function if category is None else f"{category}/{function}"
            relevant_tools.append(offered.get(function, fallback))
        missing = [tool for tool in relevant_tools if tool not in candidates]
        if missing:
            metadata["relevant_not_offered"] = missing
        samples.append(
            SampleRecord(
                split=group,
                external_id=str(query_id),
                input={"query": question},
                reference={"relevant_apis": relevant, "relevant_tools": relevant_tools},
                kind="query",
                candidate_tools=candidates,
                metadata=metadata,
                source=f"{path}, line {line}",
            )
        )
        if progress is not None:
            progress(1)
    return samples


# --- the response cache -------------------------------------------------------------------------

MAX_KEY_CHARS = 100_000


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """One cached call: the API (folder names as stored) and its arguments, error and response."""

    category: str
    tool: str
    api: str
    arguments: dict[str, Any] | str  # the parsed key, or the key itself when it is no dict
    raw_key: str  # as stored; key order and quoting differ between equal argument dicts
    error: str
    response: Any
    source: str = field(default="")


def _json_safe(value: Any) -> bool:
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_safe(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_json_safe(v) for v in value)
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    return value is None or isinstance(value, str | int | bool)


def parse_cache_key(key: str) -> dict[str, Any] | str:
    """The arguments of a cache key: a dict when the key is a JSON object or a Python dict repr
    (the server writes `str(arguments)`), else the key unchanged. Never evaluates code."""
    text = key.strip()
    if not text.startswith("{") or len(text) > MAX_KEY_CHARS:
        return key
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        try:
            with warnings.catch_warnings():
                # Python reprs of scraped text carry escapes like "\d" that warn when re-read.
                warnings.simplefilter("ignore")
                value = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
            return key
    if isinstance(value, dict) and _json_safe(value):
        return value
    return key


def cache_tool_name(entry: CacheEntry) -> str:
    """The Tool name a cache entry belongs to (`<category>/<api>_for_<tool>`, as import_files
    names tools; the category as the cache folder spells it)."""
    tool = entry.tool
    suffix = f"_for_{entry.category}"
    if tool.endswith(suffix) and len(tool) > len(suffix):
        tool = tool[: -len(suffix)]
    return f"{entry.category}/{function_name(tool, entry.api)}"


def _children(folder: Path) -> list[Path]:
    # Hidden entries (.DS_Store, .git) are file-system litter, not part of the cache.
    return sorted(p for p in folder.iterdir() if not p.name.startswith("."))


def load_response_cache(root: Path) -> Iterator[CacheEntry]:
    """Every entry of a response-cache folder `<Category>/<tool>/<api>.json`, in path order.

    Pure: reads files, writes nothing. Raises ImportFormatError naming the file (and line,
    record key and field) for anything that is not the layout or a file's JSON format.
    """
    if not root.is_dir():
        raise ImportFormatError(
            "is not a folder; a response cache is a folder <Category>/<tool>/<api>.json",
            file=root,
        )
    files = 0
    for category in _children(root):
        if not category.is_dir():
            raise ImportFormatError(
                "expected a category folder here (<Category>/<tool>/<api>.json)", file=category
            )
        # The three names are stored: the virtual API server looks calls up by them.
        check_file_name(category)
        for tool in _children(category):
            if not tool.is_dir():
                raise ImportFormatError(
                    "expected a tool folder here (<Category>/<tool>/<api>.json)", file=tool
                )
            check_file_name(tool)
            for api in _children(tool):
                if not api.is_file() or api.suffix.lower() != ".json":
                    raise ImportFormatError(
                        "expected an <api>.json file here (<Category>/<tool>/<api>.json)",
                        file=api,
                    )
                check_file_name(api)
                files += 1
                yield from _cache_file(api, category.name, tool.name, api.stem)
    if not files:
        raise ImportFormatError(
            "holds no cache files; expected <Category>/<tool>/<api>.json", file=root
        )


def _cache_entries(
    path: Path, records: Any, spans: list[RecordSpan]
) -> Iterator[tuple[str, Any, int | None]]:
    """(key, value, line) of each entry of a cache file, its key and value checked."""
    if not isinstance(records, dict):
        raise ImportFormatError(
            f"expected a JSON object from call arguments to {{error, response}}, got "
            f"{type_name(records)}",
            file=path,
            line=1,
        )
    # A key written twice keeps its last value, as json.loads does, and so its last line.
    line_of = {span.key: span.line for span in spans if span.key is not None}
    for key, value in records.items():
        line = line_of.get(key)
        # The key is stored as written (raw_key) and as the arguments it parses to.
        problem = unstorable(key)
        if problem:
            raise ImportFormatError(
                f"the key (the call's arguments) {problem}",
                file=path,
                line=line,
                record=key,
                field="key",
            )
        check_value(value, file=path, line=line, record=key)
        yield key, value, line


def _cache_file(path: Path, category: str, tool: str, api: str) -> Iterator[CacheEntry]:
    # Each entry's size is checked before the file is parsed (base.json_records).
    _, records, spans = read_json(
        path, check=lambda value, found: deque(_cache_entries(path, value, found), maxlen=0)
    )
    for key, value, line in _cache_entries(path, records, spans):
        if not isinstance(value, dict):
            raise ImportFormatError(
                f"expected an object {{error, response}}, got {type_name(value)}",
                file=path,
                line=line,
                record=key,
            )
        if "response" not in value:
            raise ImportFormatError("missing", file=path, line=line, record=key, field="response")
        error = value.get("error")
        if error is None:
            error = ""
        if not isinstance(error, str):
            raise ImportFormatError(
                f"expected a string, got {type_name(error)}",
                file=path,
                line=line,
                record=key,
                field="error",
            )
        arguments = parse_cache_key(key)
        if isinstance(arguments, dict):
            # A Python repr's escapes ('\ud800', '\x00') make new characters: check them too.
            check_value(arguments, file=path, line=line, record=key, path="arguments")
        yield CacheEntry(
            category=category,
            tool=tool,
            api=api,
            arguments=arguments,
            raw_key=key,
            error=error,
            response=value["response"],
            source=f"{path}, line {line}" if line else f"{path}, record {key!r}",
        )
