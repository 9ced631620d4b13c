"""Reading tool calls written as Python-style call strings, e.g.
`file_write(file_path='a.txt', content="x")`, without ever running them.

UltraTool's plans (and many models' answers) write a tool call this way. Such a string is data,
never code: `parse_tool_call` reads it with `ast.parse(mode="eval")` and accepts exactly one shape,

    name(key=literal, key=literal, ...)        name may be dotted: `maps.search(...)`

where a literal is a string, a number (with an optional sign), True/False/None (and the JSON
spellings true/false/null, which models often write), or a list, tuple or dict of literals
(dict keys are strings). Everything else is refused with a `ToolCallError` that says what is wrong
and in which argument: positional arguments, `*args` / `**kwargs`, calls inside arguments
(`open('a')`, `__import__('os')`), names, attribute access, subscripts, operators, lambdas,
comprehensions, f-strings, sets, bytes, non-finite numbers, texts over MAX_CALL_CHARS characters
and literals nested deeper than MAX_DEPTH.

`parse_tool_call_lenient` is a second, hand-written reader for the slips that published gold
data makes and that the strict reader rightly refuses: a quoted value that contains its own
quote character (`content='Tomorrow's meeting'`), and a placeholder for an earlier step's output
(`flight_number=<obtained flight number>`) or an unquoted phrase. It only ever returns strings and
literals; a value that looks like code (parentheses, brackets that do not hold a literal) is
refused. Use it only after the strict reader has refused, and say so where the result is kept.

Pure Python, no Django.
"""

from __future__ import annotations

import ast
import math
import re
import warnings
from dataclasses import dataclass
from typing import Any

MAX_CALL_CHARS = 10_000
MAX_DEPTH = 20

JSON_NAMES = {"true": True, "false": False, "null": None}


class ToolCallError(ValueError):
    """A call string that is not `name(key=literal, ...)`; the message says what is wrong."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": self.arguments}


# Words for the AST nodes a researcher may meet in a refused call, so the error reads as prose.
_NODE_WORDS: dict[type, str] = {
    ast.Call: "a function call",
    ast.Name: "a name",
    ast.Attribute: "attribute access",
    ast.Subscript: "a subscript",
    ast.Lambda: "a lambda",
    ast.ListComp: "a list comprehension",
    ast.SetComp: "a set comprehension",
    ast.DictComp: "a dict comprehension",
    ast.GeneratorExp: "a generator expression",
    ast.JoinedStr: "an f-string",
    ast.FormattedValue: "an f-string",
    ast.BinOp: "an arithmetic expression",
    ast.BoolOp: "a boolean expression",
    ast.Compare: "a comparison",
    ast.IfExp: "a conditional expression",
    ast.Set: "a set",
    ast.Starred: "* unpacking",
    ast.NamedExpr: "an assignment expression",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
    ast.Slice: "a slice",
}


def _describe(node: ast.AST) -> str:
    word = _NODE_WORDS.get(type(node), type(node).__name__)
    if isinstance(node, ast.Name):
        return f"{word} ({node.id})"
    if isinstance(node, ast.Call):
        try:
            return f"{word} ({ast.unparse(node.func)[:60]})"
        except Exception:  # unparse of an odd tree is only for the message
            return word
    if isinstance(node, ast.Attribute):
        return f"{word} (.{node.attr})"
    return word


def _check_size(text: Any) -> str:
    if not isinstance(text, str):
        raise ToolCallError(f"a tool call must be a string, got {type(text).__name__}")
    stripped = text.strip()
    if not stripped:
        raise ToolCallError("the tool call is empty")
    if len(stripped) > MAX_CALL_CHARS:
        raise ToolCallError(
            f"the tool call is {len(stripped):,} characters long; the limit is {MAX_CALL_CHARS:,}"
        )
    return stripped


def _dotted_name(node: ast.expr) -> str:
    """`a` or `a.b.c` where every part is a plain name; refuses `f().x`, `a[0].b` and the like."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        raise ToolCallError(
            f"the called tool must be a name such as tool or api.tool, got {_describe(node)}"
        )
    parts.append(node.id)
    return ".".join(reversed(parts))


def literal_value(node: ast.AST, where: str, depth: int = 1) -> Any:
    """A JSON value written as a Python literal (numbers, strings, True/False/None and their
    JSON spellings, lists, tuples as lists, dicts with string keys), at most MAX_DEPTH deep;
    ToolCallError naming `where` for anything else. Nothing is evaluated."""
    if depth > MAX_DEPTH:
        raise ToolCallError(f"{where}: nested more than {MAX_DEPTH} levels deep")
    if isinstance(node, ast.Constant):
        value: Any = node.value
        if value is None or isinstance(value, bool | str | int):
            return value
        if isinstance(value, float):
            if not math.isfinite(value):
                raise ToolCallError(f"{where}: {value!r} is not a finite number")
            return value
        raise ToolCallError(f"{where}: a {type(value).__name__} literal is not allowed")
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub | ast.UAdd)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) in (int, float)
    ):
        number: Any = node.operand.value
        return -number if isinstance(node.op, ast.USub) else number
    if isinstance(node, ast.Name) and node.id in JSON_NAMES:
        return JSON_NAMES[node.id]
    if isinstance(node, ast.List | ast.Tuple):
        return [literal_value(item, f"{where}[{i}]", depth + 1) for i, item in enumerate(node.elts)]
    if isinstance(node, ast.Dict):
        result: dict[str, Any] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:
                raise ToolCallError(f"{where}: ** unpacking inside a dict is not allowed")
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                raise ToolCallError(f"{where}: dict keys must be strings, got {_describe(key)}")
            result[key.value] = literal_value(value, f"{where}[{key.value!r}]", depth + 1)
        return result
    raise ToolCallError(f"{where}: {_describe(node)} is not a literal value")


def _parse_expression(source: str) -> ast.expr:
    # Windows paths such as 'D:\\Docs' carry invalid escapes; Python keeps them as written but
    # warns, and a warning per gold step is noise, not news.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(source, mode="eval").body


def parse_tool_call(text: str) -> ToolCall:
    """`name(key=literal, ...)` → ToolCall; anything else raises ToolCallError. Never evaluates."""
    source = _check_size(text)
    try:
        call = _parse_expression(source)
    except SyntaxError as exc:
        raise ToolCallError(f"not a valid call: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ToolCallError(f"not a valid call: {type(exc).__name__}") from None
    if not isinstance(call, ast.Call):
        raise ToolCallError(f"expected a call such as tool(key='value'), got {_describe(call)}")
    name = _dotted_name(call.func)
    if call.args:
        first = call.args[0]
        if isinstance(first, ast.Starred):
            raise ToolCallError("*args unpacking is not allowed")
        raise ToolCallError(
            f"positional arguments are not allowed ({len(call.args)} given); "
            "write every argument as key=value"
        )
    arguments: dict[str, Any] = {}
    for keyword in call.keywords:
        if keyword.arg is None:
            raise ToolCallError("**kwargs unpacking is not allowed")
        if keyword.arg in arguments:
            raise ToolCallError(f"argument {keyword.arg!r} is given twice")
        arguments[keyword.arg] = literal_value(keyword.value, f"argument {keyword.arg!r}", 1)
    return ToolCall(name=name, arguments=arguments)


# --- the lenient reader ------------------------------------------------------------------------

_IDENT = r"[^\W\d]\w*"
_CALL_SHAPE = re.compile(rf"^({_IDENT}(?:\s*\.\s*{_IDENT})*)\s*\((.*)\)$", re.DOTALL)
_KEY = re.compile(rf"\s*({_IDENT})\s*=(?!=)\s*")
# Where a value may end: before `, key=` or at the end of the argument list.
_VALUE_END = re.compile(rf"\s*(?:,\s*{_IDENT}\s*=(?!=)|,?\s*$)")
_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t", "r": "\r"}


def looks_like_call(text: str) -> str | None:
    """The tool name if `text` has the shape `name(...)`, else None. Says nothing about safety."""
    match = _CALL_SHAPE.match(text.strip()) if isinstance(text, str) else None
    return re.sub(r"\s+", "", match.group(1)) if match else None


def _unescape(raw: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)), raw)


def _ends_value(inner: str, pos: int) -> re.Match[str] | None:
    return _VALUE_END.match(inner, pos)


def _quoted(inner: str, start: int, where: str) -> tuple[str, int]:
    """A value opened by a quote: it closes at the first unescaped same quote that is followed by
    the end of the value, so an apostrophe inside ('Tomorrow's') stays part of the text."""
    quote = inner[start]
    pos = start + 1
    while True:
        pos = inner.find(quote, pos)
        if pos < 0:
            raise ToolCallError(f"{where}: the quoted value is never closed")
        backslashes = len(inner[start + 1 : pos]) - len(inner[start + 1 : pos].rstrip("\\"))
        if backslashes % 2 == 0 and _ends_value(inner, pos + 1):
            return _unescape(inner[start + 1 : pos]), pos + 1
        pos += 1


def _bracketed(inner: str, start: int, where: str) -> tuple[Any, int]:
    """A list or dict: the shortest prefix up to a value end that the strict reader accepts."""
    for match in _VALUE_END.finditer(inner, start + 1):
        candidate = inner[start : match.start()]
        try:
            node = _parse_expression(candidate)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        return literal_value(node, where, 1), match.start()
    raise ToolCallError(f"{where}: the bracketed value is not a list or dict of literals")


def _bare(inner: str, start: int, where: str) -> tuple[Any, int]:
    match = _VALUE_END.search(inner, start)
    end = match.start() if match else len(inner)
    raw = inner[start:end].strip()
    if not raw:
        raise ToolCallError(f"{where}: the value is missing")
    if raw.startswith("<") and raw.endswith(">"):
        return raw, end  # a placeholder for an earlier step's output, kept as written
    try:
        node = _parse_expression(raw)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        node = None  # a phrase such as `obtained flight number`
    if isinstance(node, ast.Name) and node.id not in JSON_NAMES:
        return raw, end  # a single unquoted word: the text itself
    if node is not None:
        return literal_value(node, where, 1), end  # refuses expressions that are not literals
    if re.search(r"[()\[\]{}]", raw) or re.search(rf"{_IDENT}\s*\.\s*{_IDENT}", raw):
        raise ToolCallError(f"{where}: {raw[:60]!r} looks like code, not a value")
    return raw, end


def parse_tool_call_lenient(text: str) -> ToolCall:
    """Read the call slips of published gold data (see the module docstring). Never evaluates;
    refuses anything that is not `name(key=value, ...)` with string or literal values."""
    source = _check_size(text)
    match = _CALL_SHAPE.match(source)
    if not match:
        raise ToolCallError("expected a call such as tool(key='value')")
    name = re.sub(r"\s+", "", match.group(1))
    inner = match.group(2)
    arguments: dict[str, Any] = {}
    pos = 0
    while inner[pos:].strip():
        key_match = _KEY.match(inner, pos)
        if not key_match:
            raise ToolCallError(
                f"expected key=value at {inner[pos : pos + 40].strip()!r}; "
                "positional arguments are not allowed"
            )
        key = key_match.group(1)
        where = f"argument {key!r}"
        if key in arguments:
            raise ToolCallError(f"{where} is given twice")
        start = key_match.end()
        opener = inner[start : start + 1]
        value: Any
        if opener in ("'", '"'):
            value, end = _quoted(inner, start, where)
        elif opener in ("[", "{"):
            value, end = _bracketed(inner, start, where)
        else:
            value, end = _bare(inner, start, where)
        arguments[key] = value
        tail = _VALUE_END.match(inner, end)
        if tail is None:
            raise ToolCallError(f"{where}: unexpected text after the value")
        pos = tail.end()
        if tail.group(0).rstrip().endswith("="):
            # The separator swallowed the next `key=`; step back to the key itself.
            pos = inner.rfind(",", end, pos) + 1
    return ToolCall(name=name, arguments=arguments)


# --- ReAct replies ------------------------------------------------------------------------------

# "Action: some_tool Action Input: {...}" on one line.
INLINE_ACTION_INPUT = re.compile(r"\s+action[ \t_]*input\s*:\s*", re.IGNORECASE)


def react_marker(*names: str) -> re.Pattern[str]:
    """The pattern `marked_sections` cuts at: a line opening with one of `names` ("Thought",
    "Action Input" ...; a longer name before a shorter one it starts with) and a colon, however
    a model decorates it: a bullet, quote or heading mark, bold, backticks, a step number
    ("Thought 2:"), an underscore or no space between the words."""
    alternatives = "|".join(
        r"[ \t_]*".join(re.escape(word) for word in name.lower().split()) for name in names
    )
    return re.compile(
        rf"^[ \t>*_#`-]*(?P<name>{alternatives})(?:[ \t]*\d+)?[ \t]*\**[ \t]*:\**[ \t]*",
        re.IGNORECASE | re.MULTILINE,
    )


def marked_sections(text: str, marker: re.Pattern[str]) -> tuple[str, list[tuple[str, str]]]:
    """A ReAct reply cut at its markers ("Thought:", "Action:", "Action Input:" ...): the text
    before the first marker, and (marker name, content) pairs in order. `marker` matches one
    marker with a group `name`; the name comes back lower-cased, without spaces or underscores
    ("actioninput")."""
    found = list(marker.finditer(text))
    if not found:
        return text, []
    pairs = []
    for index, match in enumerate(found):
        end = found[index + 1].start() if index + 1 < len(found) else len(text)
        name = re.sub(r"[\s_]", "", match.group("name").lower())
        pairs.append((name, text[match.end() : end]))
    return text[: found[0].start()], pairs
