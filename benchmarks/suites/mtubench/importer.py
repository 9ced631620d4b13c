"""MTU-Bench (papers/001): single/multi-turn x single/multi-tool dialogues, scored by MTU-Eval.

Published format (MTU-Eval test files, MTU-Bench-Team/MTU-Bench, `MTU-Eval/benchmark/`): one
JSON Lines file per split, named after it: `S-S_eval.jsonl`, `S-M_eval.jsonl`, `M-S_eval.jsonl`,
`M-M_eval.jsonl`, `OOD_eval.jsonl` (the split is the name's prefix; `S-M.jsonl` works too, and a
folder holding such files may be given). Each line is `{"id", "question", "answer"}`:

- `id`: `S-S_<n>` / `S-M_<n>` for single-turn splits; `<split>_<dialogue>_<turn>` for M-S, M-M
  and OOD, one record per turn of a dialogue (records of a dialogue are not in turn order).
- `question`: the whole prompt, reused verbatim at evaluation: the rules (with the date line
  "Today is Monday, January 4, 2024."), then after "The following is a list of APIs and their
  parameters that you can use:" the API list, then the dialogue. The API list is a Python
  literal (single quotes; S-S, M-S) or JSON (S-M, M-M, OOD), sometimes wrapped as
  `{"apis": [...], "available_parameters": [...]}` (APIs with only a name and a description
  sharing one parameter pool). Each API is `{"name", "description", "required_parameters",
  "optional_parameters", "result_parameters"}` in one of three styles, mixed within one list:
  required as a list of names + optional as an object name -> default value; both as lists of
  `{"name", "type", "description", "default"?, "enum"?, "options"?, "items"?, "properties"?,
  "format"?, "pattern"?}`; or required as an object name -> format hint ("" or a regex or
  "HH:MM"). Results are a list of names or of such parameter objects. One published S-S record
  (S-S_17) lists only the placeholder `['api_descriptions']`.
  The dialogue: single-turn `User: ...`; multi-turn, after `History Dialog:` (OOD omits the
  header), either the M-S style
      user: ... / function: / Thought: ... / Action: Name / Action Input: {...} /
      observation: : {...} / assistant: : ...
  or the M-M style
      User: ... / Action: {"Name": {...}, ...} (or {}) / Assistant: ...
  and finally the current `User: ...` turn.
- `answer`: the gold calls, an object tool name -> arguments, in call order. No call is
  `{"": {}}` (S-S, M-S), `{}` (M-M, OOD) or `{"": "{}"}` (OOD); OOD arguments are sometimes a
  JSON string of the object; names sometimes carry a leading space (" ShareLocation"); S-M and
  M-M arguments can name an earlier call's output as the string "ToolName.field".

Records:
- ToolRecord per API name (first definition in the import wins, as `merge_tools` does):
  parameters = JSON Schema `{"type": "object", "properties", "required"}` with defaults
  (`default`), enums (`enum`; `options` becomes `enum`, or `items.enum` for arrays), nested
  `items`/`properties`, format hints (`pattern` for a regex, `format` otherwise; "url" types are
  `{"type": "string", "format": "uri"}`); published types int/float/Dict map to integer/number/
  object; an API of the pooled form takes every pool parameter, none required. returns =
  `{"type": "object", "properties"}` from result_parameters. raw = the API as published. The
  same name has up to seven different definitions across samples (and sometimes two in one
  prompt), so every sample also keeps its own parsed list, in prompt order, in input["tools"].
- SampleRecord: split = the file's prefix; kind "query" for S-S and S-M, "dialogue" for M-S,
  M-M and OOD; input = {"prompt": question verbatim, "query": the current user turn, "turns":
  [...], "tools": [{"name", "description", "parameters", "returns"}, ...]}. Turns are
  `{"role": "user", "content"}`; a `function:` block is `{"role": "assistant", "content":
  <Thought>, "tool_calls": [{"name", "arguments"}]}` followed, when it called a tool, by
  `{"role": "tool", "name", "content": <observation text>}` (a block without a call keeps the
  repeated observation as "observation" on the assistant turn); an M-M `Action: {...}` line is an
  assistant turn with tool_calls (`Action: {}` adds no turn); replies are assistant turns.
  "query" is the last user turn, which ends the dialogue except in two OOD records (copies 5
  and 6 of OOD_0_0) where an assistant line follows it.
  reference = {"calls": [{"name", "arguments"}, ...] in answer order (names stripped, JSON-string
  arguments decoded, the no-call entry "" dropped, so a no-call turn has calls == []),
  "answer": the published answer object unchanged (it tells `{"": {}}` from `{}`)}.
  candidate_tools = the API names in the sample's own list, in order, without repeats.
  metadata = {"id": published id, "copy": k, "today"?: date line text}, for multi-turn ids
  {"dialogue": "M-S_<d>", "turn": <int>, "conversation": ...}, "unparsed_apis" (entries of
  the API list that are not API objects, e.g. S-S_17's placeholder) when there are any, and
  "gold_not_offered" (the gold calls' tool names that the sample's API list lacks, kept as
  published) when there are any, and "published" (published_line): the order of the record's
  keys, json.dumps' options or the line itself, so that the export writes the line back as it
  came in.
  A folder is read in the paper's split order (S-S first), so shared tools take their first
  definition from the simplest split.
- Duplicate ids: the published M-M and OOD files reuse ids (M-M_19 holds two different
  dialogues, OOD_0_0 is 23 different single-turn questions, OOD_5 is one dialogue written
  twice). The k-th record with an id is its copy k: external_id is the id for copy 1 and
  "<id>#<k>" after, and "conversation" is the dialogue for copy 1 and "<dialogue>#<k>" after,
  which in these files is the real conversation. MTU-Eval's cal_score.py groups by "dialogue"
  only (and ignores OOD); `group_dialogues` offers both groupings, turns ordered as integers.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.kit.base import (
    ImportBundle,
    ImportFormatError,
    Progress,
    SampleRecord,
    ToolRecord,
    check_value,
    iter_jsonl,
    read_text,
    require,
    type_name,
)
from benchmarks.kit.layout import key_order, record_layout

name = "mtubench"
default_benchmark = "MTU-Bench"
SPLITS = ("S-S", "S-M", "M-S", "M-M", "OOD")

SINGLE_TURN = ("S-S", "S-M")
FILE_NAME = re.compile(r"^(S-S|S-M|M-S|M-M|OOD)(?:[_.\-].*)?\.jsonl$", re.IGNORECASE)
# metadata[PUBLISHED]: how the record's line is written (published_line).
PUBLISHED = "published"
ACCEPTED = "S-S_eval.jsonl, S-M_eval.jsonl, M-S_eval.jsonl, M-M_eval.jsonl, OOD_eval.jsonl"
API_LIST_MARKER = re.compile(r"list of APIs and their parameters that you can use:\s*")
TODAY = re.compile(r"Today is ([^\n]*?)\.?[ \t]*$", re.MULTILINE)
# Python-literal strings and brackets, to find where a single-quoted API list ends without
# evaluating anything.
LITERAL_TOKEN = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|[\[\]{}()]""")
PYTHON_TOKEN = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|\b(?:True|False|None)\b""")
PYTHON_WORDS = {"True": "true", "False": "false", "None": "null"}
DIALOGUE_LINE = re.compile(
    r"^(History Dialog|user|function|thought|action input|action|observation|assistant)"
    r"[ \t]*:(.*)$",
    re.IGNORECASE,
)

# Published type words -> JSON Schema types.
TYPES = {
    "string": "string",
    "str": "string",
    "text": "string",
    "integer": "integer",
    "int": "integer",
    "number": "number",
    "float": "number",
    "double": "number",
    "boolean": "boolean",
    "bool": "boolean",
    "array": "array",
    "list": "array",
    "object": "object",
    "dict": "object",
}
SCHEMA_KEYS = ("enum", "default", "format", "pattern", "minimum", "maximum", "example")


# --- files --------------------------------------------------------------------------------------


def _files(paths: Sequence[Path]) -> list[tuple[Path, str]]:
    files: list[tuple[Path, str]] = []
    for path in paths:
        if path.is_dir():
            found = [p for p in path.iterdir() if p.is_file() and FILE_NAME.match(p.name)]
            # The paper's order, so the first definition of a tool comes from the simplest split.
            found.sort(key=lambda p: (SPLITS.index(split_of(p)), p.name))
            if not found:
                raise ImportFormatError(
                    f"holds no MTU-Eval test files; this suite reads {ACCEPTED}", file=path
                )
            files.extend((p, split_of(p)) for p in found)
        else:
            files.append((path, split_of(path)))
    return files


def split_of(path: Path) -> str:
    """The split a file holds, from its name: `S-M_eval.jsonl` -> "S-M"."""
    match = FILE_NAME.match(path.name)
    if not match:
        raise ImportFormatError(
            f"is not an MTU-Eval test file; this suite reads {ACCEPTED} (the name starts with "
            f"the split: S-S, S-M, M-S, M-M or OOD)",
            file=path,
        )
    return match.group(1).upper()


# --- API lists ----------------------------------------------------------------------------------


class _ApiError(ValueError):
    """A problem in the API list; the caller adds file, line and field."""


def _literal_end(text: str, start: int) -> int:
    depth = 0
    for token in LITERAL_TOKEN.finditer(text, start):
        char = token.group()
        if char in "[{(":
            depth += 1
        elif char in "]})":
            depth -= 1
            if depth == 0:
                return token.end()
    raise _ApiError("the API list's brackets are not closed")


class _NotJsonValue(ValueError):
    pass


def _no_constant(word: str) -> Any:
    # json accepts NaN and Infinity, which neither Python literals nor PostgreSQL's jsonb do.
    raise _NotJsonValue(f"{word} is not a JSON value")


JSON_DECODER = json.JSONDecoder(parse_constant=_no_constant)
_json_string = json.JSONEncoder(ensure_ascii=False).encode


def _python_token_as_json(match: re.Match[str]) -> str:
    token = match.group()
    if token[0] not in "'\"":
        return PYTHON_WORDS[token]
    if "\\" in token:
        # Escapes differ between Python and JSON (\x41, \'); let Python read this one string.
        return _json_string(ast.literal_eval(token))
    return _json_string(token[1:-1]) if token[0] == "'" else token


def _python_line_as_json(text: str) -> Any:
    """A one-line Python literal of dicts, lists, strings, numbers, True/False/None, read as
    JSON after rewriting its strings and words: several times faster than ast.literal_eval on
    the large API lists. Raises ValueError when the line is anything else (the caller then
    falls back to ast.literal_eval, which decides)."""
    return json.loads(PYTHON_TOKEN.sub(_python_token_as_json, text), parse_constant=_no_constant)


def _literal_at(text: str, start: int) -> tuple[Any, int]:
    """The JSON or Python literal starting at `start`, and where it ends. Never evaluates code."""
    try:
        return JSON_DECODER.raw_decode(text, start)
    except _NotJsonValue as exc:
        raise _ApiError(f"the API list holds {exc}") from None
    except ValueError:
        pass
    except RecursionError:
        raise _ApiError("the API list is nested too deeply") from None
    line_end = text.find("\n", start)
    line_end = len(text) if line_end < 0 else line_end
    try:
        return _python_line_as_json(text[start:line_end]), line_end
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        pass
    end = _literal_end(text, start)
    try:
        return ast.literal_eval(text[start:end]), end
    except (ValueError, TypeError, SyntaxError, MemoryError) as exc:
        raise _ApiError(f"the API list is neither JSON nor a Python literal ({exc})") from None
    except RecursionError:
        raise _ApiError("the API list is nested too deeply") from None


def _schema(spec: dict[str, Any]) -> dict[str, Any]:
    """A published parameter (or nested property) description as JSON Schema."""
    schema: dict[str, Any] = {}
    published = spec.get("type")
    if isinstance(published, str):
        word = published.strip().lower()
        if word in ("url", "uri"):
            schema["type"], schema["format"] = "string", "uri"
        elif word in TYPES:
            schema["type"] = TYPES[word]
    description = spec.get("description")
    if isinstance(description, str) and description:
        schema["description"] = description
    for key in SCHEMA_KEYS:
        if key in spec and key not in schema:
            schema[key] = spec[key]
    options = spec.get("options")
    if isinstance(options, list) and "enum" not in schema:
        if schema.get("type") == "array":
            schema["items"] = {"enum": options}
        else:
            schema["enum"] = options
    items = spec.get("items")
    if isinstance(items, dict):
        schema["items"] = {**_schema(items), **schema.get("items", {})}
    properties = spec.get("properties")
    if isinstance(properties, dict):
        schema["properties"] = {
            str(key): _schema(value) if isinstance(value, dict) else {}
            for key, value in properties.items()
        }
    return schema


def _params(value: Any, where: str) -> list[tuple[str, dict[str, Any]]]:
    """(name, schema) pairs from any of the published parameter styles."""
    if value is None:
        return []
    if isinstance(value, dict):
        return [(str(key), {"default": default}) for key, default in value.items()]
    if not isinstance(value, list):
        raise _ApiError(f"{where} must be a list or an object, got {type_name(value)}")
    pairs: list[Any] = []
    for index, item in enumerate(value):
        if isinstance(item, str) and item.strip():
            pairs.append((item.strip(), {}))
        elif isinstance(item, dict) and isinstance(item.get("name"), str) and item["name"].strip():
            pairs.append((item["name"].strip(), _schema(item)))
        else:
            raise _ApiError(f"{where}[{index}] must be a parameter name or an object with a name")
    return pairs


def _required_params(value: Any, where: str) -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(value, dict):
        return _params(value, where)
    # The object style of required parameters maps a name to a format hint, not a default.
    pairs = []
    for key, hint in value.items():
        schema: dict[str, Any] = {}
        if isinstance(hint, str) and hint:
            schema["pattern" if hint.startswith("^") else "format"] = hint
        pairs.append((str(key), schema))
    return pairs


def _tool(api: dict[str, Any]) -> tuple[str, str, dict[str, Any], dict[str, Any]]:
    """(name, description, parameters, returns) of one published API."""
    tool_name = api.get("name")
    if not isinstance(tool_name, str) or not tool_name.strip():
        raise _ApiError("has no 'name'")
    label = f"API {tool_name.strip()!r}"
    description = api.get("description")
    if description is not None and not isinstance(description, str):
        raise _ApiError(f"{label}: description must be text, got {type_name(description)}")
    properties: dict[str, dict[str, Any]] = {}
    required: list[str] = []
    for param, schema in _required_params(
        api.get("required_parameters"), f"{label}: required_parameters"
    ):
        properties.setdefault(param, schema)
        if param not in required:
            required.append(param)
    for param, schema in _params(api.get("optional_parameters"), f"{label}: optional_parameters"):
        if param in properties:
            if "default" in schema:
                properties[param].setdefault("default", schema["default"])
        else:
            properties[param] = schema
    parameters = {"type": "object", "properties": properties, "required": required}
    returns: dict[str, Any] = {}
    if api.get("result_parameters") is not None:
        results = _params(api["result_parameters"], f"{label}: result_parameters")
        returns = {"type": "object", "properties": dict(results)}
    return tool_name.strip(), description or "", parameters, returns


class _ApiList:
    """One parsed API list: the tools in prompt order and entries that are not API objects."""

    __slots__ = ("apis", "names", "tools", "unparsed")

    def __init__(self, value: Any) -> None:
        pool: list[tuple[str, dict[str, Any]]] = []
        if isinstance(value, dict):
            if not isinstance(value.get("apis"), list):
                raise _ApiError("the API list is an object without an 'apis' list")
            pool = _params(value.get("available_parameters"), "available_parameters")
            value = value["apis"]
        if not isinstance(value, list):
            raise _ApiError(f"the API list must be a list, got {type_name(value)}")
        self.apis: list[dict[str, Any]] = []
        self.tools: list[dict[str, Any]] = []
        self.unparsed: list[Any] = []
        for index, api in enumerate(value):
            if not isinstance(api, dict):
                # S-S_17 as published lists the placeholder 'api_descriptions': keep the sample
                # (its gold answer is what it is) and say so in its metadata.
                self.unparsed.append(api)
                continue
            try:
                tool_name, description, parameters, returns = _tool(api)
            except _ApiError as exc:
                raise _ApiError(f"API list entry {index}: {exc}") from None
            if pool and "required_parameters" not in api and "optional_parameters" not in api:
                # The {"apis", "available_parameters"} form gives one parameter pool for all
                # its APIs: each may take any of them.
                parameters["properties"] = {param: dict(schema) for param, schema in pool}
            self.apis.append(api)
            self.tools.append(
                {
                    "name": tool_name,
                    "description": description,
                    "parameters": parameters,
                    "returns": returns,
                }
            )
        self.names = list(dict.fromkeys(tool["name"] for tool in self.tools))


# --- dialogue -----------------------------------------------------------------------------------


def _object(text: str) -> dict[str, Any] | None:
    """A JSON or Python-literal object written in a history line; None if it is not one."""
    text = text.strip()
    if not text or text == "None":
        return {}
    if not text.startswith("{"):
        return None
    try:
        value = JSON_DECODER.decode(text)
    except ValueError:
        try:
            value = ast.literal_eval(text)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
    except RecursionError:
        return None
    return value if isinstance(value, dict) else None


def _calls(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """Calls in published order from an object name -> arguments (or their JSON text)."""
    calls = []
    for tool_name, arguments in answer.items():
        if isinstance(arguments, str):
            try:
                arguments = JSON_DECODER.decode(arguments) if arguments.strip() else {}
            except _NotJsonValue as exc:
                raise _ApiError(f"the arguments of {tool_name!r} hold {exc}") from None
            except ValueError:
                raise _ApiError(
                    f"the arguments of {tool_name!r} are text that is not a JSON object"
                ) from None
            except RecursionError:
                raise _ApiError(f"the arguments of {tool_name!r} are nested too deeply") from None
        if not isinstance(arguments, dict):
            raise _ApiError(
                f"the arguments of {tool_name!r} must be an object (or its JSON text), "
                f"got {type_name(arguments)}"
            )
        stripped = tool_name.strip()
        if not stripped:
            if arguments:
                raise _ApiError(
                    "an empty tool name marks a turn with no call and must have no arguments"
                )
            continue
        calls.append({"name": stripped, "arguments": arguments})
    return calls


def _after_colon(text: str) -> str:
    # "observation: : {...}" and "assistant: : ..." carry a second colon.
    text = text.strip()
    return text[1:].strip() if text.startswith(":") else text


def parse_dialogue(text: str) -> list[dict[str, Any]]:
    """The turns of the dialogue that follows the API list (see the module docstring).

    Raises ValueError (with a message) on a history it cannot read.
    """
    turns: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None  # the turn a continuation line belongs to
    block: dict[str, Any] | None = None  # the assistant turn of an open `function:` block
    pending_blank = 0
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            pending_blank += 1
            continue
        match = DIALOGUE_LINE.match(line)
        if not match:
            if current is None:
                raise ValueError(f"dialogue line {number} is not a turn: {line[:80]!r}")
            # A text that runs over several lines (blank lines inside it kept).
            current["content"] += "\n" * (pending_blank + 1) + line.rstrip()
            pending_blank = 0
            continue
        pending_blank = 0
        tag, rest = match.group(1).lower(), match.group(2)
        if tag == "history dialog":
            if turns:
                raise ValueError(f"dialogue line {number}: a second 'History Dialog:' header")
            continue
        if tag == "user":
            current = {"role": "user", "content": rest.strip()}
            turns.append(current)
            block = None
        elif tag == "function":
            block = current = {"role": "assistant", "content": _after_colon(rest)}
            turns.append(block)
        elif tag == "thought":
            if block is None:
                block = {"role": "assistant", "content": ""}
                turns.append(block)
            block["content"] = (block["content"] + "\n" + rest.strip()).strip()
            current = block
        elif tag == "action":
            value = rest.strip()
            if value.startswith("{"):
                # M-M style: the calls of this turn as one object.
                calls_object = _object(value)
                if calls_object is None:
                    raise ValueError(f"dialogue line {number}: Action is not a readable object")
                try:
                    calls = _calls(calls_object)
                except _ApiError as exc:
                    raise ValueError(f"dialogue line {number}: Action: {exc}") from None
                block = None
                if calls:
                    current = {"role": "assistant", "content": "", "tool_calls": calls}
                    turns.append(current)
                continue
            if block is None:
                block = {"role": "assistant", "content": ""}
                turns.append(block)
            block.setdefault("tool_calls", []).append(
                {"name": value.strip('"').strip(), "arguments": {}}
            )
            current = block
        elif tag == "action input":
            if block is None or not block.get("tool_calls"):
                raise ValueError(f"dialogue line {number}: Action Input without an Action")
            arguments = _object(rest)
            if arguments is None:
                raise ValueError(
                    f"dialogue line {number}: Action Input is not a JSON or Python object"
                )
            block["tool_calls"][-1]["arguments"] = arguments
        elif tag == "observation":
            observation = _after_colon(rest)
            if block is not None and block.get("tool_calls"):
                current = {
                    "role": "tool",
                    "name": block["tool_calls"][-1]["name"],
                    "content": observation,
                }
                turns.append(current)
            elif observation:
                target = block if block is not None else current
                if target is None:
                    raise ValueError(f"dialogue line {number}: an observation before any turn")
                target["observation"] = observation
        else:  # assistant
            current = {"role": "assistant", "content": _after_colon(rest)}
            turns.append(current)
            block = None
    if not any(turn["role"] == "user" for turn in turns):
        raise ValueError("the dialogue has no user turn ('User: ...') after the API list")
    return turns


# --- records ------------------------------------------------------------------------------------


def _id_parts(split: str, sample_id: str) -> tuple[str | None, int | None]:
    """(dialogue, turn) of a multi-turn id, (None, None) for a single-turn one; ValueError if
    the id does not have its split's shape."""
    parts = sample_id.split("_")
    prefix = f"{split}_"
    if not sample_id.startswith(prefix):
        raise ValueError(f"expected an id starting with {prefix!r} in a {split} file")
    numbers = parts[1:]
    if split in SINGLE_TURN:
        if len(numbers) == 1 and numbers[0].isdigit() and numbers[0].isascii():
            return None, None
        raise ValueError(f"expected an id like {split}_<number>")
    if len(numbers) == 2 and all(n.isdigit() and n.isascii() and len(n) <= 9 for n in numbers):
        return f"{split}_{numbers[0]}", int(numbers[1])
    raise ValueError(f"expected an id like {split}_<dialogue>_<turn> with two numbers")


def _parse_file(
    path: Path,
    split: str,
    bundle: ImportBundle,
    seen_tools: set[str],
    api_cache: dict[str, _ApiList],
    progress: Progress | None,
) -> None:
    copies: dict[str, int] = {}
    kind = "query" if split in SINGLE_TURN else "dialogue"
    lines: list[str] | None = None
    for line, record in iter_jsonl(path):
        if lines is None:  # the file is read (and checked) by iter_jsonl first
            lines = read_text(path).split("\n")
        sample_id = require(record, "id", str, file=path, line=line)
        question = require(record, "question", str, file=path, line=line)
        answer = require(record, "answer", dict, file=path, line=line)
        try:
            dialogue, turn = _id_parts(split, sample_id)
        except ValueError as exc:
            raise ImportFormatError(
                f"{exc}, got {sample_id[:80]!r}", file=path, line=line, field="id"
            ) from None

        marker = API_LIST_MARKER.search(question)
        if marker is None or question[marker.end() : marker.end() + 1] not in ("[", "{"):
            raise ImportFormatError(
                "has no API list: expected 'The following is a list of APIs and their "
                "parameters that you can use:' followed by a [...] list",
                file=path,
                line=line,
                field="question",
            )
        start = marker.end()
        try:
            # Published lists sit on one line: a list seen before is found without parsing it.
            end = question.find("\n", start)
            api_list = api_cache.get(question[start:end]) if end > 0 else None
            if api_list is None:
                value, end = _literal_at(question, start)
                check_value(value, file=path, line=line)
                api_list = api_cache[question[start:end]] = _ApiList(value)
        except _ApiError as exc:
            raise ImportFormatError(str(exc), file=path, line=line, field="question") from None
        except ImportFormatError as exc:
            raise ImportFormatError(
                f"API list: {exc.message}", file=path, line=line, field="question"
            ) from None
        try:
            turns = parse_dialogue(question[end:])
            check_value(turns, file=path, line=line)
        except ValueError as exc:
            message = exc.message if isinstance(exc, ImportFormatError) else str(exc)
            raise ImportFormatError(
                f"dialogue: {message}", file=path, line=line, field="question"
            ) from None
        try:
            calls = _calls(answer)
            # Decoded argument text and history calls are new values: same limits as the file's.
            check_value(calls, file=path, line=line)
        except _ApiError as exc:
            raise ImportFormatError(str(exc), file=path, line=line, field="answer") from None
        except ImportFormatError as exc:
            raise ImportFormatError(
                f"decoded arguments: {exc.message}", file=path, line=line, field="answer"
            ) from None

        source = f"{path}, line {line}"
        for api, tool in zip(api_list.apis, api_list.tools, strict=True):
            if tool["name"] not in seen_tools:
                seen_tools.add(tool["name"])
                bundle.tools.append(
                    ToolRecord(
                        name=tool["name"],
                        description=tool["description"],
                        parameters=tool["parameters"],
                        returns=tool["returns"],
                        raw=api,
                        source=source,
                    )
                )

        copy = copies[sample_id] = copies.get(sample_id, 0) + 1
        metadata: dict[str, Any] = {"id": sample_id, "copy": copy}
        today = TODAY.search(question, 0, start)
        if today:
            metadata["today"] = today.group(1).strip()
        if dialogue is not None:
            metadata["dialogue"] = dialogue
            metadata["turn"] = turn
            metadata["conversation"] = dialogue if copy == 1 else f"{dialogue}#{copy}"
        if api_list.unparsed:
            metadata["unparsed_apis"] = api_list.unparsed
        # The published gold sometimes calls a tool the sample's own API list does not offer
        # (18 of the 512 seed records: S-S_17's placeholder list, "SearchOnewayFlight." with a
        # full stop, OOD turns answered with another domain's API). Refusing them would refuse
        # the benchmark, so they are kept as published and named here.
        not_offered = [call["name"] for call in calls if call["name"] not in api_list.names]
        if not_offered:
            metadata["gold_not_offered"] = list(dict.fromkeys(not_offered))
        bundle.samples.append(
            SampleRecord(
                split=split,
                external_id=sample_id if copy == 1 else f"{sample_id}#{copy}",
                kind=kind,
                input={
                    "prompt": question,
                    "query": next(t["content"] for t in reversed(turns) if t["role"] == "user"),
                    "turns": turns,
                    "tools": api_list.tools,
                },
                reference={"calls": calls, "answer": answer},
                candidate_tools=list(api_list.names),
                metadata={**metadata, PUBLISHED: published_line(lines, line, record)},
                source=source,
            )
        )
        if progress:
            progress(1)


def published_line(lines: list[str], line: int, record: Any) -> dict[str, Any]:
    """What the exporter needs to write the record's line back as published: the order of every
    object's keys (the stored answer loses its arguments' order) and json.dumps' options, or the
    line itself when json.dumps does not write it so; "end": "" on a file's last line when no
    line end follows it."""
    text = lines[line - 1]
    layout = record_layout(text, record)
    kept: dict[str, Any] = {
        "keys": key_order(record),
        **({"text": text} if layout is None else layout),
    }
    if line == len(lines):
        kept["end"] = ""
    return kept


def import_files(paths: Sequence[Path], progress: Progress | None = None) -> ImportBundle:
    """Parse MTU-Eval test files (or folders of them) into tool and sample records."""
    bundle = ImportBundle()
    seen_tools: set[str] = set()
    # Turns of one dialogue (and many single-turn samples) repeat the same API list verbatim.
    api_cache: dict[str, _ApiList] = {}
    for path, split in _files(paths):
        _parse_file(path, split, bundle, seen_tools, api_cache, progress)
    return bundle


def group_dialogues(samples: Iterable[Any], *, by: str = "dialogue") -> dict[str, list[Any]]:
    """Samples (anything with `.metadata`, or metadata dicts) grouped into dialogues, each in
    turn order: by the integer turn (turn 10 after turn 9), then by copy.

    by="dialogue" groups by the id prefix, as MTU-Eval's cal_score.py does; by="conversation"
    keeps apart the different dialogues the published files give the same ids (see the module
    docstring). Samples without a turn (S-S, S-M) are left out.
    """
    if by not in ("dialogue", "conversation"):
        raise ValueError(f"by must be 'dialogue' or 'conversation', got {by!r}")
    groups: dict[str, list[Any]] = {}
    for sample in samples:
        metadata = sample if isinstance(sample, dict) else sample.metadata
        if metadata.get("turn") is None:
            continue
        groups.setdefault(metadata[by], []).append(sample)

    def order(sample: Any) -> tuple[int, int]:
        metadata = sample if isinstance(sample, dict) else sample.metadata
        return int(metadata["turn"]), int(metadata.get("copy", 1))

    for members in groups.values():
        members.sort(key=order)
    return groups
