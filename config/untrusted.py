"""Reading what strangers send: JSON bodies with a size and depth limit, and text checked for the
characters PostgreSQL cannot store. Pure Python (no Django), so every reader of untrusted input
(request bodies, query parameters, imported files) can share it.

Why each limit: Python's JSON decoder recurses, so `[` * 100000 raises RecursionError (a 500
wherever it is not caught), and what it does accept still reaches code that walks the value
recursively (serialisers, json.dumps when it is stored). PostgreSQL refuses NUL in text and in
jsonb, and a lone surrogate (U+D800-U+DFFF, which JSON's `\\ud800` escape makes) cannot be
encoded as UTF-8 at all; both would fail at the INSERT, after the request was accepted.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_JSON_DEPTH = 64
# Control characters: C0 (U+0000-U+001F), DEL and C1 (U+007F-U+009F).
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# What a text column cannot hold: NUL and the surrogate halves.
UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")


class UntrustedInputError(ValueError):
    """Input refused; the message says what is wrong and where (`where`: a field path)."""

    def __init__(self, message: str, where: str = "") -> None:
        self.message = message
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


def describe(char: str) -> str:
    if char == "\x00":
        return "a NUL character (U+0000)"
    if "\ud800" <= char <= "\udfff":
        return f"a lone surrogate (U+{ord(char):04X}), which is not a character"
    return f"a control character (U+{ord(char):04X})"


def unstorable(text: str) -> str:
    """What in `text` a database cannot store, in words ("" when nothing)."""
    found = UNSTORABLE.search(text)
    return describe(found.group()) if found else ""


def control_character(text: str, *, allow_whitespace: bool = False) -> str:
    """The first control character in `text`, in words ("" when none). With allow_whitespace,
    tab, line feed and carriage return are allowed (a note may have lines)."""
    for found in CONTROL.finditer(text):
        if allow_whitespace and found.group() in "\t\n\r":
            continue
        return describe(found.group())
    return ""


def check_tree(value: Any, *, max_depth: int = MAX_JSON_DEPTH, where: str = "") -> None:
    """Refuse nesting deeper than max_depth and strings (values and keys) a database cannot
    store. Iterative, so any depth is safe to check."""
    # depth: how many objects and lists hold this node, itself included if it is one
    stack: list[tuple[Any, int, str]] = [(value, 1, where)]
    while stack:
        node, depth, path = stack.pop()
        if depth > max_depth and isinstance(node, (dict, list)):
            raise UntrustedInputError(f"nested more than {max_depth} levels deep", path)
        if isinstance(node, str):
            problem = unstorable(node)
            if problem:
                raise UntrustedInputError(f"contains {problem}", path)
        elif isinstance(node, dict):
            for key, child in node.items():
                problem = unstorable(str(key))
                if problem:
                    raise UntrustedInputError(f"a key contains {problem}", path)
                stack.append((child, depth + 1, f"{path}.{key}" if path else str(key)))
        elif isinstance(node, list):
            for index, child in enumerate(node):
                stack.append((child, depth + 1, f"{path}[{index}]"))


def _no_constant(name: str) -> Any:
    # NaN and Infinity are not JSON, and PostgreSQL's jsonb refuses them.
    raise ValueError(f"{name} is not a JSON number")


def json_loads_bounded(
    data: bytes | str, *, max_bytes: int, max_depth: int = MAX_JSON_DEPTH
) -> Any:
    """The JSON value in `data`, or UntrustedInputError: over max_bytes, not UTF-8, not JSON,
    nested too deep, or holding text a database cannot store."""
    if len(data) > max_bytes:
        raise UntrustedInputError(f"the body is over {max_bytes:,} bytes")
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UntrustedInputError(f"the body is not UTF-8 (byte {exc.start})") from None
    try:
        value = json.loads(data, parse_constant=_no_constant)
    except RecursionError:
        raise UntrustedInputError(f"nested more than {max_depth} levels deep") from None
    except ValueError as exc:
        raise UntrustedInputError(f"not JSON: {exc}") from None
    check_tree(value, max_depth=max_depth)
    return value
