"""Chat transcripts: a researcher's own agent logs, in OpenAI's chat message format, brought in
to be reviewed step by step (the step_review campaign kind), without a benchmark around them.

One transcript a line (JSON Lines), either the messages alone

    [message, ...]

or an object

    {"id"?: str | int,            unique within its split (default: "line-<N>")
     "messages": [message, ...],
     "tools"?: [tool, ...],       the tools the agent was offered
     "split"?: str,               default "default"
     "metadata"?: {...}}          kept as given

where a message is OpenAI's:

    {"role": "system" | "developer" | "user", "content": str | [part, ...]}
    {"role": "assistant", "content": str | [part, ...] | null,
     "tool_calls"?: [{"id": str, "type": "function",
                      "function": {"name": str, "arguments": a JSON text of an object}}]}
    {"role": "tool", "tool_call_id": str, "content": str | [part, ...]}

(a content part is {"type": "text", "text": str}; other keys of a message, such as "name" or
"refusal", are kept as they are). A tool is {"name", "description"?, "parameters"?} or OpenAI's
{"type": "function", "function": {...}}, read as the generic suite reads tools.

Checked on import, each error naming the file, the line and the field
(`messages[3].tool_calls[0].function.arguments`): a line is a list or an object with only the
keys above; messages are a non-empty list of objects with a known role, at least one of them
the user's and one the assistant's; contents are text (or text parts); a call has a function
name and arguments that are a JSON text (or an object) of an object; a call's id is a string,
given once in the transcript; a tool message says which call it answers (tool_call_id, a
string); ids are unique within a split. The import is all or nothing: one bad line and
nothing is stored. What the lines hold is stored as it is (nothing escaped: pages escape it).
A tool message answering no call of the transcript, or a call no tool message answers, is not
refused: logs have them (a cut conversation, a crashed tool); the review shows them, flagged
(traces.py).

Records: Sample(split, external_id, kind "dialogue", input {"messages": the messages as given,
"query": the first user message's text (what lists show), "tools"?: the tools as given},
reference None, candidate_tools = the tools' names, metadata as given). Tool(name,
description, parameters, raw).
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
    Progress,
    SampleRecord,
    ToolRecord,
    UnstorableNumber,
    check_value,
    iter_jsonl,
    json_loads_numbers_checked,
    jsonl_files,
    type_name,
)
from benchmarks.kit.traces import message_text
from benchmarks.suites.generic.importer import _Where, record_tools

__all__ = ["default_benchmark", "import_files", "name"]

name = "transcripts"
default_benchmark = "Transcripts"

KEYS = ("id", "messages", "tools", "split", "metadata")
ROLES = ("system", "developer", "user", "assistant", "tool")
DEFAULT_SPLIT = "default"


def _files(paths: Sequence[Path]) -> list[Path]:
    return jsonl_files(paths, what="transcripts")


def _content(message: dict[str, Any], where: str, at: _Where) -> None:
    content = message.get("content")
    if content is None or isinstance(content, str):
        return
    if not isinstance(content, list):
        raise at.error(
            f"expected a text or a list of content parts, got {type_name(content)}",
            f"{where}.content",
        )
    for index, part in enumerate(content):
        if not isinstance(part, dict) or not isinstance(part.get("text"), str):
            raise at.error(
                'expected a text part {"type": "text", "text": ...}', f"{where}.content[{index}]"
            )


def _arguments(value: Any, where: str, at: _Where) -> None:
    if isinstance(value, str):
        try:
            value = json_loads_numbers_checked(value)
        except UnstorableNumber as exc:
            raise at.error(
                f"holds {exc}, which JSON (and PostgreSQL) cannot store", where
            ) from None
        except (json.JSONDecodeError, RecursionError):
            raise at.error("is not JSON (a call's arguments are a JSON object)", where) from None
        # Decoded argument text is new JSON ("\ud800" inside it is a lone surrogate now).
        check_value(value, file=at.path, line=at.line, path=where)
    if not isinstance(value, dict):
        raise at.error(f"expected a JSON object of arguments, got {type_name(value)}", where)


def _calls(message: dict[str, Any], where: str, at: _Where, ids: dict[str, str]) -> None:
    calls = message.get("tool_calls")
    if calls is None:
        return
    if not isinstance(calls, list):
        raise at.error(f"expected a list of calls, got {type_name(calls)}", f"{where}.tool_calls")
    for index, call in enumerate(calls):
        place = f"{where}.tool_calls[{index}]"
        if not isinstance(call, dict):
            raise at.error(f"expected an object, got {type_name(call)}", place)
        ident = call.get("id")
        if ident is not None:
            if not isinstance(ident, str) or not ident:
                raise at.error("expected the call's id, a non-empty string", f"{place}.id")
            if ident in ids:
                raise at.error(f"the call id {ident!r} is given twice (also {ids[ident]})", place)
            ids[ident] = place
        function = call.get("function")
        if not isinstance(function, dict):
            raise at.error(
                'expected {"name", "arguments"}, got ' + type_name(function), f"{place}.function"
            )
        tool = function.get("name")
        if not isinstance(tool, str) or not tool.strip():
            raise at.error("expected a tool name", f"{place}.function.name")
        _arguments(function.get("arguments", "{}"), f"{place}.function.arguments", at)


def _messages(value: Any, at: _Where) -> list[Any]:
    if not isinstance(value, list) or not value:
        raise at.error(f"expected a non-empty list of messages, got {type_name(value)}", "messages")
    ids: dict[str, str] = {}
    roles: set[str] = set()
    for index, message in enumerate(value):
        where = f"messages[{index}]"
        if not isinstance(message, dict):
            raise at.error(f"expected a message object, got {type_name(message)}", where)
        role = message.get("role")
        if role not in ROLES:
            raise at.error(
                f"must be one of {', '.join(ROLES)}, got {json.dumps(role)[:80]}", f"{where}.role"
            )
        roles.add(role)
        _content(message, where, at)
        if message.get("tool_calls") is not None and role != "assistant":
            raise at.error("only assistant messages make tool calls", f"{where}.tool_calls")
        _calls(message, where, at, ids)
        if role == "tool":
            answers = message.get("tool_call_id")
            if not isinstance(answers, str) or not answers:
                raise at.error(
                    "expected the id of the call this result answers, a non-empty string",
                    f"{where}.tool_call_id",
                )
    for needed in ("user", "assistant"):
        if needed not in roles:
            raise at.error(f"has no {needed} message", "messages")
    return value


def _first_user(messages: list[Any]) -> str:
    for message in messages:
        if message.get("role") == "user":
            return message_text(message.get("content"))
    return ""


def _record(record: Any, at: _Where) -> dict[str, Any]:
    if isinstance(record, list):
        return {"messages": record}
    if not isinstance(record, dict):
        raise at.error(f"expected a list of messages or an object, got {type_name(record)}")
    unknown = sorted(set(record) - set(KEYS))
    if unknown:
        raise at.error(
            f"unknown key(s) {', '.join(unknown)}; a transcript object has {', '.join(KEYS)}"
        )
    return record


def import_files(paths: Sequence[Path], progress: Progress | None = None) -> ImportBundle:
    bundle = ImportBundle()
    defined: dict[str, ToolRecord] = {}
    seen: dict[tuple[str, str], str] = {}
    for path in _files(paths):
        for line, raw in iter_jsonl(path):
            at = _Where(path, line)
            record = _record(raw, at)
            ident = record.get("id")
            if ident is None:
                ident = f"line-{line}"
            elif isinstance(ident, bool) or not isinstance(ident, str | int):
                raise at.error(f"expected a string or a number, got {type_name(ident)}", "id")
            external_id = str(ident).strip()
            if not external_id:
                raise at.error("is empty", "id")
            split = record.get("split", DEFAULT_SPLIT)
            if not isinstance(split, str):
                raise at.error(f"expected a string, got {type_name(split)}", "split")
            split = split.strip() or DEFAULT_SPLIT
            if (split, external_id) in seen:
                raise at.error(
                    f"the id {external_id!r} is given twice in split {split!r} (also "
                    f"{seen[(split, external_id)]})",
                    "id",
                )
            seen[(split, external_id)] = f"{path}, line {line}"
            messages = _messages(record.get("messages"), at)
            tools = record_tools(record.get("tools"), at, defined)
            metadata = record.get("metadata")
            if metadata is not None and not isinstance(metadata, dict):
                raise at.error(f"expected an object, got {type_name(metadata)}", "metadata")
            sample_input: dict[str, Any] = {
                "messages": messages,
                "query": _first_user(messages),
            }
            if record.get("tools") is not None:
                sample_input["tools"] = record["tools"]
            bundle.tools.extend(tools)
            bundle.samples.append(
                SampleRecord(
                    split=split,
                    external_id=external_id,
                    input=sample_input,
                    kind="dialogue",
                    candidate_tools=[tool.name for tool in tools],
                    metadata=metadata or {},
                    source=f"{path}, line {line}",
                )
            )
            if progress:
                progress(1)
    return bundle
