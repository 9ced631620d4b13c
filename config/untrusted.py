"""Reading what strangers send over HTTP: JSON bodies with a size and depth limit, and text checked
for control characters. Pure Python (no Django).

Why each limit: Python's JSON decoder recurses, so `[` * 100000 raises RecursionError (a 500
wherever it is not caught), and what it does accept still reaches code that walks the value
recursively (serialisers, json.dumps when it is stored). What a database cannot store (NUL, lone
surrogates) and how deep a value may nest are the imports' rules, checked by the same function
(benchmarks.kit.base.check_value), so a request body and an imported file are held to one
standard.
"""

from __future__ import annotations

import re
from typing import Any

from benchmarks.kit.base import (
    MAX_JSON_DEPTH,
    ImportFormatError,
    UnstorableNumber,
    check_value,
    json_loads_numbers_checked,
    unstorable,
)
from config.errors import ApplicationError

__all__ = [
    "MAX_JSON_DEPTH",
    "UntrustedInputError",
    "check_tree",
    "control_character",
    "json_loads_bounded",
    "unstorable",
]

# Control characters: C0 (U+0000-U+001F), DEL and C1 (U+007F-U+009F).
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class UntrustedInputError(ApplicationError):
    """Input refused; the message says what is wrong and where (`where`: a field path)."""

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(f"{where}: {message}" if where else message, field=where)
        self.message = message
        self.where = where


def control_character(text: str, *, allow_whitespace: bool = False) -> str:
    """What control character `text` contains, in words ("contains a control character
    (U+0001)"; "" when none). With allow_whitespace, tab, line feed and carriage return are
    allowed (a note may have lines)."""
    for found in CONTROL.finditer(text):
        char = found.group()
        if allow_whitespace and char in "\t\n\r":
            continue
        name = "a NUL character" if char == "\x00" else "a control character"
        return f"contains {name} (U+{ord(char):04X})"
    return ""


def check_tree(value: Any) -> None:
    """Refuse what an import would refuse (nesting over MAX_JSON_DEPTH, text PostgreSQL cannot
    store, oversized strings or records), naming the field. Iterative: any depth is safe."""
    try:
        check_value(value, file="")
    except ImportFormatError as exc:
        raise UntrustedInputError(exc.message, exc.field or "") from None


def json_loads_bounded(data: bytes | str, *, max_bytes: int) -> Any:
    """The JSON value in `data`, or UntrustedInputError: over max_bytes, not UTF-8, not JSON,
    nested too deep, or holding text or a number a database cannot store."""
    if len(data) > max_bytes:
        raise UntrustedInputError(f"the body is over {max_bytes:,} bytes")
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UntrustedInputError(f"the body is not UTF-8 (byte {exc.start})") from None
    try:
        # the imports' rule for numbers: no NaN or Infinity (1e999 included), no whole number
        # longer than Python converts
        value = json_loads_numbers_checked(data)
    except UnstorableNumber as exc:
        line, column, key = exc.locate(data)
        where = key if key is not None else f"line {line} column {column}"
        raise UntrustedInputError(f"{exc} cannot be stored", where) from None
    except RecursionError:
        raise UntrustedInputError(f"nested more than {MAX_JSON_DEPTH} levels deep") from None
    except ValueError as exc:
        raise UntrustedInputError(f"not JSON: {exc}") from None
    check_tree(value)
    return value
