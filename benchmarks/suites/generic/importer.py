"""Generic JSON Lines: a researcher's own tool-use questions, in a format of this platform.

One sample a line:
    {"id": str | int,                        unique within its split
     "query": str                            a single question ...
       or "turns": [turn, ...],              ... or a dialogue so far (exactly one of the two)
     "tools"?: [tool, ...],                  the tools offered with this sample
     "answer"?: any JSON,                    the expected final answer, if there is one
     "tool_calls"?: [{"name", "arguments"}], the expected tool calls, in order
     "split"?: str,                          default "default"
     "metadata"?: {...}}                     kept as given
A turn is {"role": "user" | "assistant" | "tool", "content": str, "tool_calls"?: [{"name",
"arguments"}] (assistant turns only), "name"?: str (tool turns: which tool answered)}.
A tool is {"name", "description"?, "parameters"?: JSON schema of the arguments} or the OpenAI form
{"type": "function", "function": {"name", "description", "parameters"}}. `parameters`, when
given, is a JSON Schema object: {"type": "object", "properties": {...}, "required": [...]}.

Checked on import, each error naming the file, line and field: the keys are only those above
(a misspelt key is an error, not silently dropped); ids are strings or integers; the expected
tool calls name tools this sample offers and give arguments as an object; a tool defined on two
lines has the same definition on both (say so once, differently, and the import stops naming
both places); ids are unique within a split (checked before anything is stored).

Tasks: "answer" (the final answer against `answer`) and "tool_calls" (the calls made against
`tool_calls`; an empty list means the right move is to call no tool).

Records: Sample(split, external_id = str(id), kind "query" with input {"query"} or "dialogue"
with input {"turns"}, reference = {"answer"?, "tool_calls"?} (None when neither is given),
candidate_tools = the names of the sample's tools, metadata as given). Tool(name, description,
parameters, raw = the tool as written).
Files: any `*.jsonl` (or `*.json` holding JSON Lines), or a folder of them (manifest.json is
skipped).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.kit.base import (
    ImportBundle,
    ImportFormatError,
    Progress,
    SampleRecord,
    ToolRecord,
    UnstorableNumber,
    check_value,
    iter_jsonl,
    json_loads_numbers_checked,
    jsonl_files,
    require,
    type_name,
)

name = "generic"
default_benchmark = "Generic"

KEYS = {"id", "query", "turns", "tools", "answer", "tool_calls", "split", "metadata"}
ROLES = ("user", "assistant", "tool")
DEFAULT_SPLIT = "default"


class _Where:
    """The file and line every error of one record names."""

    def __init__(self, path: Path, line: int) -> None:
        self.path = path
        self.line = line

    def error(self, message: str, field: str | None = None) -> ImportFormatError:
        return ImportFormatError(message, file=self.path, line=self.line, field=field)


def _files(paths: Sequence[Path]) -> list[Path]:
    return jsonl_files(paths, what="the generic suite's samples")


def _calls(value: Any, key: str, at: _Where) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise at.error(f"expected a list of calls, got {type_name(value)}", key)
    calls = []
    for index, call in enumerate(value):
        where = f"{key}[{index}]"
        if not isinstance(call, dict):
            raise at.error(f"expected an object, got {type_name(call)}", where)
        unknown = set(call) - {"name", "arguments"}
        if unknown:
            raise at.error(f"unknown key(s) {', '.join(sorted(unknown))}", where)
        tool = call.get("name")
        if not isinstance(tool, str) or not tool.strip():
            raise at.error("expected a tool name", f"{where}.name")
        arguments = call.get("arguments", {})
        if isinstance(arguments, str):
            # OpenAI's wire format carries arguments as a JSON string.
            try:
                arguments = json_loads_numbers_checked(arguments)
            except UnstorableNumber as exc:
                raise at.error(
                    f"holds {exc}, which JSON (and PostgreSQL) cannot store", f"{where}.arguments"
                ) from None
            except (json.JSONDecodeError, RecursionError):
                raise at.error("is a string that is not JSON", f"{where}.arguments") from None
        if not isinstance(arguments, dict):
            raise at.error(f"expected an object, got {type_name(arguments)}", f"{where}.arguments")
        # Decoded argument text is new JSON ("\ud800" inside it is a lone surrogate now).
        check_value(arguments, file=at.path, line=at.line, path=f"{where}.arguments")
        calls.append({"name": tool.strip(), "arguments": arguments})
    return calls


def _turns(value: Any, at: _Where) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not value:
        raise at.error(f"expected a non-empty list of turns, got {type_name(value)}", "turns")
    turns = []
    for index, turn in enumerate(value):
        where = f"turns[{index}]"
        if not isinstance(turn, dict):
            raise at.error(f"expected an object, got {type_name(turn)}", where)
        unknown = set(turn) - {"role", "content", "tool_calls", "name"}
        if unknown:
            raise at.error(f"unknown key(s) {', '.join(sorted(unknown))}", where)
        role = turn.get("role")
        if role not in ROLES:
            raise at.error(f"must be one of {', '.join(ROLES)}, got {role!r}", f"{where}.role")
        content = turn.get("content", "")
        if not isinstance(content, str):
            raise at.error(f"expected a string, got {type_name(content)}", f"{where}.content")
        cleaned: dict[str, Any] = {"role": role, "content": content}
        if turn.get("tool_calls") is not None:
            if role != "assistant":
                raise at.error("only assistant turns make tool calls", f"{where}.tool_calls")
            cleaned["tool_calls"] = _calls(turn["tool_calls"], f"{where}.tool_calls", at)
        if turn.get("name") is not None:
            if role != "tool" or not isinstance(turn["name"], str):
                raise at.error("is the answering tool's name, on tool turns only", f"{where}.name")
            cleaned["name"] = turn["name"]
        if not content.strip() and "tool_calls" not in cleaned:
            raise at.error("is empty", f"{where}.content")
        turns.append(cleaned)
    if not any(turn["role"] == "user" for turn in turns):
        raise at.error("has no user turn", "turns")
    return turns


def _schema(value: Any, where: str, at: _Where) -> dict[str, Any]:
    if value is None:
        return {"type": "object", "properties": {}}
    if not isinstance(value, dict):
        raise at.error(f"expected a JSON schema object, got {type_name(value)}", where)
    if value.get("type", "object") != "object":
        raise at.error(
            f'the arguments schema must have "type": "object", got {value["type"]!r}',
            f"{where}.type",
        )
    properties = value.get("properties", {})
    if not isinstance(properties, dict):
        raise at.error(f"expected an object, got {type_name(properties)}", f"{where}.properties")
    required = value.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise at.error("expected a list of argument names", f"{where}.required")
    missing = [r for r in required if r not in properties]
    if missing:
        raise at.error(
            f"names argument(s) {', '.join(missing)} that are not in properties",
            f"{where}.required",
        )
    return value


def _tools(value: Any, at: _Where) -> list[ToolRecord]:
    if not isinstance(value, list):
        raise at.error(f"expected a list of tools, got {type_name(value)}", "tools")
    tools = []
    for index, tool in enumerate(value):
        where = f"tools[{index}]"
        if not isinstance(tool, dict):
            raise at.error(f"expected an object, got {type_name(tool)}", where)
        spec = tool
        if tool.get("type") == "function" and isinstance(tool.get("function"), dict):
            spec, where = tool["function"], f"{where}.function"
        unknown = set(spec) - {"name", "description", "parameters"}
        if unknown:
            raise at.error(f"unknown key(s) {', '.join(sorted(unknown))}", where)
        tool_name = spec.get("name")
        if not isinstance(tool_name, str) or not tool_name.strip():
            raise at.error("expected a tool name", f"{where}.name")
        description = spec.get("description", "")
        if not isinstance(description, str):
            raise at.error(
                f"expected a string, got {type_name(description)}", f"{where}.description"
            )
        tools.append(
            ToolRecord(
                name=tool_name.strip(),
                description=description,
                parameters=_schema(spec.get("parameters"), f"{where}.parameters", at),
                raw=tool,
                source=f"{at.path}, line {at.line}",
            )
        )
    return tools


def record_tools(value: Any, at: _Where, defined: dict[str, ToolRecord]) -> list[ToolRecord]:
    """A record's tools (none when it gives none), each name once, and each defined as every
    earlier record of the import defined it (`defined`: name -> its first definition)."""
    tools = _tools(value, at) if value is not None else []
    names = [tool.name for tool in tools]
    if len(set(names)) != len(names):
        raise at.error("offers a tool name twice", "tools")
    for tool in tools:
        first = defined.setdefault(tool.name, tool)
        if (first.description, first.parameters) != (tool.description, tool.parameters):
            raise at.error(
                f"tool {tool.name!r} is defined differently at {first.source}; "
                "give one definition per tool name",
                "tools",
            )
    return tools


def import_files(paths: Sequence[Path], progress: Progress | None = None) -> ImportBundle:
    bundle = ImportBundle()
    defined: dict[str, ToolRecord] = {}
    for path in _files(paths):
        for line, record in iter_jsonl(path):
            at = _Where(path, line)
            if not isinstance(record, dict):
                raise at.error(f"expected a JSON object, got {type_name(record)}")
            unknown = set(record) - KEYS
            if unknown:
                raise at.error(
                    f"unknown key(s) {', '.join(sorted(unknown))}; a line has "
                    f"{', '.join(sorted(KEYS))}"
                )
            raw_id = require(record, "id", (str, int), file=path, line=line)
            split = (
                require(
                    record, "split", str, file=path, line=line, optional=True, default=DEFAULT_SPLIT
                ).strip()
                or DEFAULT_SPLIT
            )
            has_query, has_turns = record.get("query") is not None, record.get("turns") is not None
            if has_query == has_turns:
                raise at.error(
                    "give exactly one of query (a question) and turns (a dialogue)",
                    "query" if has_query else None,
                )
            if has_query:
                kind = "query"
                sample_input: dict[str, Any] = {
                    "query": require(record, "query", str, file=path, line=line)
                }
            else:
                kind = "dialogue"
                sample_input = {"turns": _turns(record["turns"], at)}
            tools = record_tools(record.get("tools"), at, defined)
            names = [tool.name for tool in tools]
            reference: dict[str, Any] = {}
            if "answer" in record:
                reference["answer"] = record["answer"]
            if record.get("tool_calls") is not None:
                calls = _calls(record["tool_calls"], "tool_calls", at)
                for index, call in enumerate(calls):
                    if call["name"] not in names:
                        raise at.error(
                            f"calls {call['name']!r}, which is not among this sample's tools "
                            f"({', '.join(names) or 'none'})",
                            f"tool_calls[{index}].name",
                        )
                reference["tool_calls"] = calls
            metadata = record.get("metadata")
            if metadata is not None and not isinstance(metadata, dict):
                raise at.error(f"expected an object, got {type_name(metadata)}", "metadata")
            bundle.tools.extend(tools)
            bundle.samples.append(
                SampleRecord(
                    split=split,
                    external_id=str(raw_id).strip(),
                    input=sample_input,
                    reference=reference or None,
                    kind=kind,
                    candidate_tools=names,
                    metadata=metadata or {},
                    source=f"{path}, line {line}",
                )
            )
            if progress:
                progress(1)
    return bundle
