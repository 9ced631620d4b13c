"""Native tool calling, the pure half: a benchmark's tools as OpenAI function-tool declarations,
and the server's `tool_calls` read back as the calls the suites already score.

Declarations. `declare(specs, document=..., preferred=...)` turns the tools an item may use
(`ToolSpec`s) into

    {"type": "function", "function": {"name", "description", "parameters": <JSON Schema>}}

one per tool, in the order given, with a `ToolNames` that maps the names sent to the API back to
the benchmark's own. `document(spec)` says what one tool's description and parameters are; the
default (`default_document`) reads `spec.parameters` as the JSON Schema the importers store, and a
suite whose tool documents say more (or less) passes its own (protocol.py's `declare_tools`).
Whatever a document returns goes through `clean_schema`, so the parameters are always a valid
draft 2020-12 schema of an object:

- types are mapped to JSON Schema's seven (`str`, `text` -> string, `int` -> integer, `float`,
  `double` -> number, `bool` -> boolean, `list` -> array, `dict` -> object ...); a type we cannot
  map (`DATE (YYYY-MM-DD)`, `ENUM`, a regex) gives no "type" constraint rather than a wrong one;
- descriptions, defaults, enums, examples (and `example`, made a list), formats, patterns,
  bounds, `items` and nested `properties` are kept when their shape is valid, dropped otherwise;
- `required` keeps the names listed (strings, once each); a property that says `"required": true`
  (an older style) is added to its object's list;
- a tool's parameters given as a plain mapping of name -> description (or -> schema), with no
  "type" or "properties", are read as those properties.

Names. The API accepts `^[a-zA-Z0-9_-]{1,64}$`. `ToolNames.of(names, preferred)` gives each name
one API name: the name itself when it fits; otherwise accents are dropped (é -> e), every run of
other characters becomes "_", and a name over 64 characters keeps its first 55 and adds "_" and
8 hex digits of its sha256; a name with nothing left is `tool_<hash>`. Names that still meet
(`a.b` and `a b`; `a.b` and a tool really called `a_b`) are told apart by the same hash suffix,
except the one whose own name is the API name, which keeps it. So the API name of a tool depends
only on its own name and on which other tools are offered with it, never on their order.
`preferred` gives a form to start from (StableToolBench's `<api>_for_<tool>` for its
`<category>/...` keys).

Calls. `read_tool_calls(tool_calls, names)` reads the `tool_calls` of a chat message (or the
`function_call` items of a Responses API output) as the server sent them: each an id, a function
name and the arguments as a JSON string, possibly malformed. Each becomes a `NativeCall` in the
order sent, named back with the benchmark's name; an unknown name or unreadable arguments are
reported on the call (`problem`), never raised. `NativeCalls.answer()` is the suite-neutral
answer the text parsers produce: `[{"name", "arguments"}, ...]` (toolcall.ToolCall.as_dict).

Leaked calls. A model whose chat template the server does not parse writes its calls into the
text instead (`<tool_call>{"name": ..., "arguments": ...}</tool_call>`, `[TOOL_CALLS][...]`, a
bare JSON object, `name(key=value)`). `leaked_calls(text, names)` finds those that name a
declared tool (by its API name or its own), so a native answer can be flagged when its calls
are only in the text; the suite's own text rules decide how such an answer scores.

Pure Python, no Django.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from benchmarks.kit.predictions import json_values
from benchmarks.kit.toolcall import ToolCallError, looks_like_call, parse_tool_call

if TYPE_CHECKING:
    from benchmarks.kit.protocol import ToolSpec

API_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_NAME = 64
_HASH_DIGITS = 8
_NOT_API = re.compile(r"[^a-zA-Z0-9_-]+")

# Published type words -> JSON Schema types. Anything else: no "type" constraint.
JSON_TYPES: dict[str, str] = {
    "string": "string",
    "str": "string",
    "text": "string",
    "char": "string",
    "url": "string",
    "uri": "string",
    "integer": "integer",
    "int": "integer",
    "long": "integer",
    "number": "number",
    "float": "number",
    "double": "number",
    "decimal": "number",
    "boolean": "boolean",
    "bool": "boolean",
    "array": "array",
    "list": "array",
    "tuple": "array",
    "object": "object",
    "dict": "object",
    "map": "object",
    "json": "object",
    "null": "null",
    "none": "null",
}
_FORMATS = {"url": "uri", "uri": "uri"}
_NUMBER_KEYS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_COUNT_KEYS = ("minLength", "maxLength", "minItems", "maxItems")
_MAX_DEPTH = 20


# --- schemas ------------------------------------------------------------------------------------


def json_type(word: Any) -> str | None:
    """The JSON Schema type a published type word means, or None when we cannot tell."""
    if not isinstance(word, str):
        return None
    return JSON_TYPES.get(word.strip().lower())


def _finite(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value)


def _type_of(value: Any) -> str | list[str] | None:
    words = value if isinstance(value, list) else [value]
    found = list(dict.fromkeys(t for t in map(json_type, words) if t is not None))
    if not found:
        return None
    return found[0] if len(found) == 1 else found


def clean_schema(value: Any, depth: int = 0) -> dict[str, Any]:
    """A valid draft 2020-12 schema from a schema-like document: what can be carried over is,
    the rest dropped (see the module docstring). Not a dict: {} (anything goes)."""
    if not isinstance(value, Mapping) or depth > _MAX_DEPTH:
        return {}
    schema: dict[str, Any] = {}
    kind = _type_of(value.get("type"))
    if kind is not None:
        schema["type"] = kind
    description = value.get("description")
    if isinstance(description, str) and description.strip():
        schema["description"] = description
    elif isinstance(description, int | float) and not isinstance(description, bool):
        schema["description"] = str(description)
    title = value.get("title")
    if isinstance(title, str) and title:
        schema["title"] = title
    if "default" in value:
        schema["default"] = value["default"]
    enum = value.get("enum")
    if isinstance(enum, list) and enum:
        schema["enum"] = enum
    if "const" in value:
        schema["const"] = value["const"]
    examples = value.get("examples")
    if isinstance(examples, list):
        schema["examples"] = examples
    elif "example" in value:
        schema["examples"] = [value["example"]]
    fmt = value.get("format")
    if isinstance(fmt, str) and fmt:
        schema["format"] = fmt
    elif isinstance(value.get("type"), str) and value["type"].strip().lower() in _FORMATS:
        schema["format"] = _FORMATS[value["type"].strip().lower()]
    pattern = value.get("pattern")
    if isinstance(pattern, str) and pattern and _compiles(pattern):
        schema["pattern"] = pattern
    for key in _NUMBER_KEYS:
        if _finite(value.get(key)) and not (key == "multipleOf" and value[key] <= 0):
            schema[key] = value[key]
    for key in _COUNT_KEYS:
        count = value.get(key)
        if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
            schema[key] = count
    items = value.get("items")
    if isinstance(items, Mapping):
        schema["items"] = clean_schema(items, depth + 1)
    properties = value.get("properties")
    if isinstance(properties, Mapping):
        schema["properties"] = {
            str(name): clean_schema(sub, depth + 1) for name, sub in properties.items()
        }
    required = _required(value, properties)
    if required:
        schema["required"] = required
    extra = value.get("additionalProperties")
    if isinstance(extra, bool):
        schema["additionalProperties"] = extra
    elif isinstance(extra, Mapping):
        schema["additionalProperties"] = clean_schema(extra, depth + 1)
    return schema


def _compiles(pattern: str) -> bool:
    # A published format hint may not be a regex at all; the meta-schema wants one.
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    return True


def _required(value: Mapping[str, Any], properties: Any) -> list[str]:
    listed = value.get("required")
    names = [r for r in listed if isinstance(r, str)] if isinstance(listed, list) else []
    if isinstance(properties, Mapping):
        # The older style: "required": true on the property itself.
        names += [str(n) for n, sub in properties.items() if _flagged_required(sub)]
    return list(dict.fromkeys(names))


def _flagged_required(sub: Any) -> bool:
    return isinstance(sub, Mapping) and sub.get("required") is True


# object_schema's results by the JSON text of their document: a run declares the same tools
# for item after item (and twice per item: its cache key, then its request), and cleaning a
# schema is a recursive walk in Python. Bounded; emptied when full.
_SCHEMAS: dict[str, str] = {}
_SCHEMAS_MAX = 4096


def object_schema(value: Any) -> dict[str, Any]:
    """The parameters of a function: `clean_schema` of the document as an object with
    `properties` (a document with no properties declares none); keywords that only fit other
    types are left out. A new object on every call (callers may change it)."""
    try:
        key = json.dumps(value, ensure_ascii=False)
        plain = json.loads(key) == value  # not when JSON would change it (e.g. int keys)
    except (TypeError, ValueError):
        plain = False
    if not plain:
        return _object_schema(value)
    known = _SCHEMAS.get(key)
    if known is not None:
        schema: dict[str, Any] = json.loads(known)
        return schema
    result = _object_schema(value)
    text = json.dumps(result, ensure_ascii=False)
    if json.loads(text) == result:  # kept only what JSON gives back as it was
        if len(_SCHEMAS) >= _SCHEMAS_MAX:
            _SCHEMAS.clear()
        _SCHEMAS[key] = text
    return result


def _object_schema(value: Any) -> dict[str, Any]:
    if _flat_parameters(value):
        # {"city": "the city", "day": {"type": "string"}}: the parameters themselves.
        value = {
            "properties": {
                name: doc if isinstance(doc, Mapping) else {"description": doc}
                for name, doc in value.items()
            }
        }
    schema = clean_schema(value)
    result: dict[str, Any] = {"type": "object"}
    for key in ("description", "title", "properties", "required", "additionalProperties"):
        if key in schema:
            result[key] = schema[key]
    result.setdefault("properties", {})
    return result


def _flat_parameters(value: Any) -> bool:
    """A plain mapping of parameter name -> description or schema, not a schema itself."""
    return (
        isinstance(value, Mapping)
        and bool(value)
        and "type" not in value
        and "properties" not in value
        and all(isinstance(doc, str | Mapping) for doc in value.values())
    )


# --- names --------------------------------------------------------------------------------------


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_DIGITS]


def _with_hash(stem: str, name: str) -> str:
    return f"{stem[: MAX_NAME - _HASH_DIGITS - 1]}_{_digest(name)}"


def sanitize_name(text: str) -> str:
    """The API form of one name, before collisions are settled (see the module docstring)."""
    if API_NAME.match(text):
        return text
    ascii_text = "".join(
        char for char in unicodedata.normalize("NFKD", text) if not unicodedata.combining(char)
    )
    stem = _NOT_API.sub("_", ascii_text).strip("_")
    if not stem:
        return _with_hash("tool", text)
    if len(stem) > MAX_NAME:
        return _with_hash(stem, text)
    return stem


@dataclass(frozen=True)
class ToolNames:
    """The names a set of tools is declared under: the benchmark's name <-> the API name."""

    _to_api: Mapping[str, str] = field(default_factory=dict)
    _from_api: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, names: Iterable[str], preferred: Mapping[str, str] | None = None) -> ToolNames:
        """One API name per distinct name, deterministic (see the module docstring)."""
        unique = list(dict.fromkeys(names))
        wanted = {name: (preferred or {}).get(name, name) for name in unique}
        first = {name: sanitize_name(wanted[name]) for name in unique}
        groups: dict[str, list[str]] = {}
        for name in unique:
            groups.setdefault(first[name], []).append(name)
        chosen: dict[str, str] = {}
        for api, members in groups.items():
            if len(members) == 1:
                chosen[members[0]] = api
                continue
            keeper = next((m for m in sorted(members) if wanted[m] == api), None)
            for member in members:
                chosen[member] = api if member == keeper else _with_hash(api, member)
        # A hashed name may (very rarely) meet another; number those, in name order.
        taken: dict[str, str] = {}
        for name in sorted(unique, key=lambda n: (chosen[n] != wanted[n], n)):
            api = chosen[name]
            number = 2
            while api in taken:
                suffix = f"_{number}"
                api = chosen[name][: MAX_NAME - len(suffix)] + suffix
                number += 1
            taken[api] = name
        to_api = {name: api for api, name in taken.items()}
        return cls({name: to_api[name] for name in unique}, taken)

    def to_api(self, name: str) -> str:
        """The API name of a declared tool; KeyError for a tool that was not declared."""
        try:
            return self._to_api[name]
        except KeyError:
            raise KeyError(f"tool {name!r} was not declared") from None

    def from_api(self, api_name: Any) -> str | None:
        """The benchmark's name of an API name; None for a name nobody declared."""
        return self._from_api.get(api_name) if isinstance(api_name, str) else None

    def __contains__(self, name: object) -> bool:
        return name in self._to_api

    def __len__(self) -> int:
        return len(self._to_api)

    def __iter__(self) -> Iterator[str]:
        return iter(self._to_api)

    def as_dict(self) -> dict[str, str]:
        """benchmark name -> API name (to store beside a prediction)."""
        return dict(self._to_api)

    @classmethod
    def from_dict(cls, stored: Mapping[str, str]) -> ToolNames:
        """The names as `as_dict` stored them (a stored prediction's calls read again later);
        ValueError when two tools share an API name or one does not fit the API's pattern."""
        to_api = {str(name): str(api) for name, api in stored.items()}
        from_api = {api: name for name, api in to_api.items()}
        if len(from_api) != len(to_api) or not all(map(API_NAME.match, from_api)):
            raise ValueError("stored tool names are not one valid API name per tool")
        return cls(to_api, from_api)


# --- declarations -------------------------------------------------------------------------------

Document = Callable[["ToolSpec"], tuple[str, Any]]


def default_document(spec: ToolSpec) -> tuple[str, Any]:
    """A tool's description and parameters as the importers store them (JSON Schema)."""
    return spec.description or "", spec.parameters


@dataclass(frozen=True)
class ToolDeclarations:
    """The `tools` of a request and the names they were declared under."""

    tools: list[dict[str, Any]]
    names: ToolNames

    def for_responses(self) -> list[dict[str, Any]]:
        """The same tools as the Responses API takes them (name etc. beside "type")."""
        return [{"type": "function", **tool["function"]} for tool in self.tools]


def declare(
    specs: Sequence[ToolSpec],
    document: Document = default_document,
    preferred: Mapping[str, str] | None = None,
) -> ToolDeclarations:
    """OpenAI function tools for `specs` (one per distinct name, first kept), in order."""
    distinct: dict[str, ToolSpec] = {}
    for spec in specs:
        distinct.setdefault(spec.name, spec)
    names = ToolNames.of(distinct, preferred)
    tools = []
    for name, spec in distinct.items():
        description, parameters = document(spec)
        function: dict[str, Any] = {"name": names.to_api(name)}
        if description:
            function["description"] = description
        function["parameters"] = object_schema(parameters)
        tools.append({"type": "function", "function": function})
    return ToolDeclarations(tools, names)


# --- calls --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NativeCall:
    """One call as the server sent it, read. `name` is the benchmark's (None: the model named a
    tool nobody declared); `arguments` None: they are not a JSON object (`raw_arguments` keeps
    what came); `problem` says what is wrong ("" when nothing is)."""

    id: str
    api_name: str
    name: str | None
    arguments: dict[str, Any] | None
    raw_arguments: str
    problem: str = ""

    @property
    def ok(self) -> bool:
        return not self.problem

    def as_dict(self) -> dict[str, Any]:
        """{"name", "arguments"} as the text parsers give a call: an unknown tool keeps the
        name the model wrote, unreadable arguments are {}."""
        return {
            "name": self.name if self.name is not None else self.api_name,
            "arguments": self.arguments if self.arguments is not None else {},
        }


@dataclass(frozen=True)
class NativeCalls:
    calls: tuple[NativeCall, ...] = ()

    def __iter__(self) -> Iterator[NativeCall]:
        return iter(self.calls)

    def __len__(self) -> int:
        return len(self.calls)

    @property
    def problems(self) -> list[str]:
        return [f"call {i + 1}: {c.problem}" for i, c in enumerate(self.calls) if c.problem]

    @property
    def malformed(self) -> list[NativeCall]:
        return [c for c in self.calls if c.arguments is None]

    @property
    def unknown(self) -> list[NativeCall]:
        return [c for c in self.calls if c.name is None]

    def answer(self, *, keep_problems: bool = False) -> list[dict[str, Any]]:
        """The calls as [{"name", "arguments"}] in order: the well-formed ones, or every call
        with `keep_problems` (a suite that scores a malformed call as a wrong call)."""
        return [c.as_dict() for c in self.calls if keep_problems or c.ok]


def _refuse_constant(word: str) -> Any:
    raise ValueError(f"{word} is not JSON")


def _arguments(raw: Any) -> tuple[dict[str, Any] | None, str, str]:
    """(arguments, the text kept, problem)."""
    if isinstance(raw, Mapping):  # some servers (Ollama) send the object itself
        return dict(raw), json.dumps(raw, ensure_ascii=False, default=str), ""
    if raw is None:
        return {}, "", ""
    if not isinstance(raw, str):
        return None, str(raw), f"arguments are a {type(raw).__name__}, not a JSON object"
    if not raw.strip():
        return {}, raw, ""  # a call without arguments
    try:
        value = json.loads(raw, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:
        return None, raw, f"arguments are not valid JSON ({str(exc)[:80]})"
    if not isinstance(value, dict):
        return None, raw, f"arguments are a JSON {type(value).__name__}, not an object"
    return value, raw, ""


def _field(value: Any, key: str) -> Any:
    if isinstance(value, Mapping):
        return value.get(key)
    return getattr(value, key, None)  # an openai client object


def read_tool_call(call: Any, names: ToolNames) -> NativeCall:
    """One chat `tool_calls` entry ({"id", "type": "function", "function": {"name",
    "arguments"}}) or Responses API `function_call` item ({"call_id", "name", "arguments"})."""
    if not isinstance(call, Mapping) and not hasattr(call, "model_dump"):
        text = str(call)[:200]
        return NativeCall("", "", None, None, text, f"not a tool call: {type(call).__name__}")
    function = _field(call, "function")
    source = function if function is not None else call
    call_id = _field(call, "id") if function is not None else _field(call, "call_id")
    if call_id is None:
        call_id = _field(call, "id")
    api_name = _field(source, "name")
    api_text = api_name if isinstance(api_name, str) else ""
    arguments, raw, problem = _arguments(_field(source, "arguments"))
    name = names.from_api(api_text)
    if name is None:
        unknown = f"unknown tool {api_text!r}" if api_text else "a call without a tool name"
        problem = f"{unknown}; {problem}" if problem else unknown
    return NativeCall(
        id=str(call_id) if call_id is not None else "",
        api_name=api_text,
        name=name,
        arguments=arguments,
        raw_arguments=raw,
        problem=problem,
    )


# Entries of a list that are not calls: a Responses API output's message and reasoning items.
_CALL_TYPES = (None, "function", "function_call")


def read_tool_calls(tool_calls: Any, names: ToolNames) -> NativeCalls:
    """Every call of a message's `tool_calls` (or of a Responses API `output`: its
    function_call items; messages and other items are not calls), in the order sent; None or
    [] is no call. Never raises on what a model sent."""
    if not isinstance(tool_calls, list | tuple):
        return NativeCalls()
    return NativeCalls(tuple(read_tool_call(c, names) for c in tool_calls if _is_call_entry(c)))


def _is_call_entry(entry: Any) -> bool:
    if isinstance(entry, Mapping) or hasattr(entry, "model_dump"):
        return _field(entry, "type") in _CALL_TYPES
    return True  # junk is read, and reported as not a call


# --- calls leaked into the text -----------------------------------------------------------------


def _declared(names: ToolNames, name: Any) -> str | None:
    if not isinstance(name, str):
        return None
    return names.from_api(name) or (name if name in names else None)


def _json_calls(value: Any, names: ToolNames, depth: int = 0) -> list[dict[str, Any]]:
    """Calls in a JSON value: {"name", "arguments" | "parameters"}, OpenAI's {"function": {...}},
    lists of them and {"tool_calls": [...]}."""
    if depth > 3:
        return []
    if isinstance(value, list):
        return [call for item in value for call in _json_calls(item, names, depth + 1)]
    if not isinstance(value, Mapping):
        return []
    if isinstance(value.get("tool_calls"), list):
        return _json_calls(value["tool_calls"], names, depth + 1)
    function = value.get("function")
    source: Mapping[str, Any] = function if isinstance(function, Mapping) else value
    name = _declared(names, source.get("name"))
    if name is None:
        return []
    raw = source.get("arguments", source.get("parameters"))
    arguments, _, _ = _arguments(raw)
    return [{"name": name, "arguments": arguments if arguments is not None else {}}]


def leaked_calls(text: Any, names: ToolNames) -> list[dict[str, Any]]:
    """The calls of declared tools written into `text` (see the module docstring), as
    [{"name", "arguments"}] in order; [] when there are none. Never evaluates the text."""
    if not isinstance(text, str) or not text.strip():
        return []
    found = [call for value in json_values(text) for call in _json_calls(value, names)]
    if found:
        return found
    for line in text.splitlines():
        candidate = line.strip().strip("`").strip()
        if _declared(names, looks_like_call(candidate)) is None:
            continue
        try:
            call = parse_tool_call(candidate)
        except ToolCallError:
            continue
        name = _declared(names, call.name)
        if name is not None:
            found.append({"name": name, "arguments": call.arguments})
    return found
