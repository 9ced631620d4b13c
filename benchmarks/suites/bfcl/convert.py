"""Java and JavaScript argument values, which BFCL's models give as source text, read into Python
values before they are checked, the way BFCL's checker reads them (pure; regular expressions
only, nothing evaluated).

What BFCL's readers do, and these do too, including where they are loose:

- Java: `byte`, `short`, `integer` read `-?digits`; `long` needs the `L` suffix, `float` the `f`
  suffix, `double` none; `boolean` reads `true`/`false`; `char`, `String` and `any` stay text.
  `Array` reads the first `new T[]{a, b}` in the text, `ArrayList` `new ArrayList<T>(Arrays
  .asList(a, b))`, `new ArrayList<T>() {{ add(a); add(b); }}` or an empty `new ArrayList<>()`,
  `HashMap` `new HashMap<K, V>() {{ put("k", v); }}`. Elements are read as their declared item
  type (a String or char element of an ArrayList loses its first and last character; of an
  Array it stays as written, quotes included), or, without one, by their look.
- JavaScript: `String` drops one pair of surrounding quotes, `integer` reads `-?digits`, `float`
  `-?digits[.digits]`, `Bigint` `digitsn`, `Boolean` `true`/`false`; `array` reads `[a, b]`,
  `new Array(a, b)` or a two-level `[[a], [b]]`, `dict` `{k: v, ...}` up to its first `}` (so
  a nested object is cut there; a nested array is read), splitting at commas without regard
  to quotes.
- Text that does not have the expected shape stays text (the checker then finds its type
  wrong), never an error. A type these readers do not know (Set, Queue, ...) raises
  `UnsupportedType`: a property of the function's declaration, not of the model's answer.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "JAVASCRIPT_TYPES",
    "JAVA_TYPES",
    "UnsupportedType",
    "java_value",
    "javascript_value",
]


class UnsupportedType(ValueError):
    """A declared type that BFCL's value readers do not read."""


# The Python type each declared type must read as (BFCL's type words for Java and JavaScript).
JAVA_TYPES: dict[str, type] = {
    "byte": int,
    "short": int,
    "integer": int,
    "long": int,
    "float": float,
    "double": float,
    "boolean": bool,
    "char": str,
    "String": str,
    "any": str,
    "Array": list,
    "ArrayList": list,
    "Queue": list,
    "Stack": list,
    "HashMap": dict,
    "Hashtable": dict,
    "Set": set,
}

JAVASCRIPT_TYPES: dict[str, type] = {
    "String": str,
    "any": str,
    "integer": int,
    "Bigint": int,
    "float": float,
    "Boolean": bool,
    "array": list,
    "dict": dict,
}

_INTEGER = re.compile(r"-?\d+$")
_JAVA_LONG = re.compile(r"-?\d+[lL]$")
_JAVA_FLOAT = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]$")
_JAVA_DOUBLE = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?$")
_JAVA_ARRAY = re.compile(r"new\s+\w+\[\]\s*\{(.*?)\}")
_JAVA_AS_LIST = re.compile(r"new\s+ArrayList<\w*>\(Arrays\.asList\((.+?)\)\)")
_JAVA_ADDS = re.compile(r"new\s+ArrayList<\w*>\(\)\s*\{\{\s*(.+?)\s*\}\}", re.DOTALL)
_JAVA_ADD = re.compile(r"add\((.+?)\)")
_JAVA_EMPTY_LIST = re.compile(r"new\s+ArrayList<\w*>\(\)")
_JAVA_MAP = re.compile(r"new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*(.*?)\s*\}?\s*\}", re.DOTALL)
_JAVA_PUT = re.compile(r"put\(\"(.*?)\",\s*(.*?)\)")
_JAVA_EMPTY_MAP = re.compile(r"new\s+HashMap<.*?>\s*\(\)")


def _number_by_look(text: str) -> Any:
    """Python's own reading of a number (int() then float()), else the text."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def _java_by_look(text: str) -> Any:
    """A Java element without a declared type, read by its look."""
    if text in ("true", "false"):
        return text == "true"
    if text.startswith('"') and text.endswith('"'):
        return text[1:-1]
    if _JAVA_LONG.match(text):
        return int(text[:-1])
    if _JAVA_FLOAT.match(text):
        return float(text[:-1])
    return _number_by_look(text)


def java_value(text: str, declared: str, item: str | None = None) -> Any:
    """A Java value's text read as `declared` (`item`: an Array's or ArrayList's element type)."""
    if declared not in JAVA_TYPES:
        raise UnsupportedType(f"Java type {declared!r}")
    if declared in ("byte", "short", "integer"):
        return int(text) if _INTEGER.match(text) else text
    if declared == "long":
        return int(text[:-1]) if _JAVA_LONG.match(text) else text
    if declared == "float":
        return float(text[:-1]) if _JAVA_FLOAT.match(text) else text
    if declared == "double":
        return float(text) if _JAVA_DOUBLE.match(text) else text
    if declared == "boolean":
        return text == "true" if text in ("true", "false") else text
    if declared in ("char", "String", "any"):
        return text
    if declared == "Array":
        return _java_array(text, item)
    if declared == "ArrayList":
        return _java_array_list(text, item)
    if declared == "HashMap":
        return _java_map(text)
    raise UnsupportedType(f"Java type {declared!r} is not read by BFCL's checker")


def _java_element(text: str, item: str | None, *, unquote: bool) -> Any:
    if unquote and item in ("char", "String"):
        return text[1:-1]
    if item is None:
        return _java_by_look(text)
    return java_value(text, item)


def _java_array(text: str, item: str | None) -> Any:
    found = _JAVA_ARRAY.search(text)
    if found is None:
        return text
    parts = (part.strip() for part in found.group(1).split(","))
    return [_java_element(part, item, unquote=False) for part in parts if part]


def _java_array_list(text: str, item: str | None) -> Any:
    found = _JAVA_AS_LIST.search(text)
    if found is not None:
        parts = [part.strip() for part in found.group(1).split(",")]
        return [_java_element(part, item, unquote=True) for part in parts]
    found = _JAVA_ADDS.search(text)
    if found is not None:
        parts = [part.strip() for part in _JAVA_ADD.findall(found.group(1))]
        return [_java_element(part, item, unquote=True) for part in parts]
    if _JAVA_EMPTY_LIST.search(text):
        return []
    return text


def _java_map(text: str) -> Any:
    found = _JAVA_MAP.search(text)
    if found is not None:
        entries = found.group(1)
        result: dict[str, Any] = {}
        if entries.strip():
            for key, value in _JAVA_PUT.findall(entries):
                result[key] = _java_by_look(value.strip())
        return result
    if _JAVA_EMPTY_MAP.search(text):
        return {}
    return text


_JS_FLOAT = re.compile(r"-?\d+(\.\d+)?$")
_JS_BIGINT = re.compile(r"-?\d+n$")
_JS_TWO_LEVELS = re.compile(
    r"\[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\)"
)
_JS_INNER = re.compile(r"\[(.*?)\]")
_JS_ONE_LEVEL = re.compile(r"\[(.*?)\]|\bnew\s+Array\((.*?)\)")
_JS_OBJECT = re.compile(r"\{(.*?)\}")
_JS_ENTRY = re.compile(r"([^:]+):\s*(.*?)(?:,\s*(?=[^,]+:)|$)")


def _quoted(text: str) -> bool:
    return (text.startswith('"') and text.endswith('"')) or (
        text.startswith("'") and text.endswith("'")
    )


def _js_by_look(text: str) -> Any:
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    if _quoted(text):
        return text[1:-1]
    return _number_by_look(text)


def javascript_value(text: str, declared: str, item: str | None = None) -> Any:
    """A JavaScript value's text read as `declared` (`item`: an array's element type)."""
    if declared not in JAVASCRIPT_TYPES:
        raise UnsupportedType(f"JavaScript type {declared!r}")
    if declared == "String":
        return text[1:-1] if _quoted(text) else text
    if declared == "any":
        return text
    if declared == "integer":
        return int(text) if _INTEGER.match(text) else text
    if declared == "float":
        return float(text) if _JS_FLOAT.match(text) else text
    if declared == "Bigint":
        return int(text[:-1]) if _JS_BIGINT.match(text) else text
    if declared == "Boolean":
        return text == "true" if text in ("true", "false") else text
    if declared == "array":
        return _js_array(text.strip(), item)
    return _js_object(text.strip())


def _js_array(code: str, item: str | None) -> Any:
    # BFCL's reader gives the text back on any error inside an array: so does this one.
    try:
        if _JS_TWO_LEVELS.match(code):
            whole = _JS_TWO_LEVELS.match(code)
            assert whole is not None
            rows = []
            for index, inner in enumerate(_JS_INNER.findall(whole.group(0))):
                inner = inner.strip()
                if index == 0 and inner.startswith("["):
                    inner = inner[1:]
                rows.append([_js_by_look(part.strip()) for part in inner.split(",")])
            return rows
        found = _JS_ONE_LEVEL.match(code)
        if found is None:
            return code
        inside = found.group(1) if found.group(1) is not None else found.group(2)
        inside = (inside or "").strip()
        parts = inside.split(",") if inside else []
        if item is None:
            return [_js_by_look(part.strip()) for part in parts]
        elements = []
        for part in parts:
            part = part.strip()
            inner_item = "String" if part.startswith(("'", '"')) else None
            elements.append(javascript_value(part, item, inner_item))
        return elements
    except (ValueError, IndexError, AssertionError):
        return code


def _js_object(code: str) -> Any:
    if code == "{}":
        return {}
    found = _JS_OBJECT.match(code)
    if found is None:
        return code
    result: dict[str, Any] = {}
    for key, value in _JS_ENTRY.findall(found.group(1)):
        key = key.strip().strip("'\"")
        value = value.strip()
        if value.startswith("[") and value.endswith("]"):
            result[key] = _js_array(value, None)
        elif value.startswith("{") and value.endswith("}"):
            result[key] = _js_object(value)
        else:
            result[key] = _js_by_look(value.strip("'\""))
    return result
