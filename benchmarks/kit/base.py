"""What every suite shares: the records an importer produces, the one import error, and careful
readers for the files benchmarks publish (CSV, JSON, JSONL).

Pure Python, no Django: importers are plain functions over files, fast to test.

Every reader names where a problem is (file, line or record, field), because a researcher
importing 20,000 rows needs to find the one bad one. Nothing here writes anywhere: a suite
parses all its files into records first, and only then does the service store them in one
transaction, so a bad file imports nothing.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import Any, NoReturn

# Limits on untrusted input. A field larger than this is refused (it is never a real query or
# tool description, and it would bloat every page that shows it); JSON nested deeper than this is
# refused before Python's recursion limit turns it into a crash.
MAX_FIELD_BYTES = int(os.environ.get("IMPORT_MAX_FIELD_BYTES", str(1 << 20)))
MAX_JSON_DEPTH = 64
# One record (a JSON Lines line, a CSV row, an element of a JSON file's top-level list or object)
# larger than this is refused before it is parsed: parsing builds Python objects of 10 to 25 times
# the text's size, so a 55 MB line took 563 MB. The largest record of the published seed files is
# 45 KB (a StableToolBench query with its API documents).
MAX_RECORD_BYTES = int(os.environ.get("IMPORT_MAX_RECORD_BYTES", str(4 << 20)))
# Values (keys and items, counted together) in one record. The byte limit alone still lets a
# record of tiny values ([0,0,...], {"a1":0,...}) become ~100 MB of objects that the import keeps
# to the end; at 20+ bytes a value, real data meets the byte limit first. The most in a seed
# record is 1,263.
MAX_RECORD_ITEMS = int(os.environ.get("IMPORT_MAX_RECORD_ITEMS", "200000"))

# What PostgreSQL cannot store in text or jsonb, whatever the column: NUL, and the UTF-16
# surrogate halves U+D800-U+DFFF, which UTF-8 has no encoding for. A Python str can hold them all
# the same: a JSON escape "\ud800", a Python literal's escape, a file name's undecodable byte
# (U+DC80-U+DCFF, Python's surrogateescape). Every other code point is stored (checked against
# PostgreSQL for all 1,112,063 of them), so this is the whole class.
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")

BOM = "\ufeff"

Progress = Callable[[int], None]


class ImportFormatError(ValueError):
    """A file is not in the format its suite reads. Says where: file, line or record, field."""

    def __init__(
        self,
        message: str,
        *,
        file: str | os.PathLike[str] | None = None,
        line: int | None = None,
        record: str | int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.file = str(file) if file is not None else None
        self.line = line
        self.record = record
        self.field = field
        super().__init__(str(self))

    def where(self) -> str:
        parts = []
        if self.file:
            parts.append(shown(self.file))
        if self.line is not None:
            parts.append(f"line {self.line}")
        if self.record is not None:
            parts.append(f"record {shown(str(self.record))}")
        if self.field:
            parts.append(f"field {self.field!r}")
        return ", ".join(parts)

    def __str__(self) -> str:
        where = self.where()
        return f"{where}: {self.message}" if where else self.message


class _Unstorable(ImportFormatError):
    """check_value's error for a character PostgreSQL cannot store; `code` is the character."""

    def __init__(self, message: str, *, code: int, **where: Any) -> None:
        super().__init__(message, **where)
        self.code = code


def shown(text: str) -> str:
    """`text` with the characters no terminal or database takes (see UNSTORABLE) written as
    escapes, so that an error about them can itself be printed and stored."""
    if text.isascii() and "\x00" not in text:
        return text
    return UNSTORABLE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def unstorable(text: str) -> str | None:
    """Why PostgreSQL would refuse `text` (see UNSTORABLE), or None when it can store it."""
    # isascii() is O(1) in CPython and rules surrogates out; NUL is ASCII.
    match = UNSTORABLE.search(text) if not text.isascii() else None
    char = match.group() if match else ("\x00" if "\x00" in text else None)
    if char is None:
        return None
    if char == "\x00":
        return "contains a NUL character (U+0000), which PostgreSQL cannot store"
    code = ord(char)
    origin = (
        "; U+DC80-U+DCFF is how Python shows a byte that is not UTF-8, e.g. in a file name"
        if 0xDC80 <= code <= 0xDCFF
        else ""
    )
    return (
        f"contains a lone surrogate U+{code:04X} (half of a UTF-16 pair, e.g. a JSON escape "
        f'"\\u{code:04x}" without its other half), which UTF-8 and so PostgreSQL cannot '
        f"store{origin}"
    )


@dataclass(slots=True)
class ToolRecord:
    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=dict)
    returns: dict[str, Any] = field(default_factory=dict)
    category: str = ""
    raw: Any = field(default_factory=dict)
    source: str = ""  # "file, line N": named when two records clash


@dataclass(slots=True)
class SampleRecord:
    split: str
    external_id: str
    input: dict[str, Any]
    reference: Any = None
    kind: str = "query"  # "query" | "dialogue" | "plan"
    candidate_tools: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    source: str = ""


@dataclass(slots=True)
class ImportBundle:
    tools: list[ToolRecord] = field(default_factory=list)
    samples: list[SampleRecord] = field(default_factory=list)

    def extend(self, other: ImportBundle) -> None:
        self.tools.extend(other.tools)
        self.samples.extend(other.samples)


# --- checks -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PublishedOutput:
    """One output made elsewhere: which sample (split may be unknown) and the text."""

    external_id: str
    output: str
    split: str | None = None
    source: str = ""  # "file, line N" for errors
    # The sample this output answers when no sample has `external_id`: MTU-Bench's reader
    # numbers the k-th line of an id "<id>#k" (its files reuse ids for different dialogues),
    # and a "#k" the split lacks is the file giving that id another answer. The import's
    # on_duplicate policy says what a second output for a sample means.
    fallback_id: str | None = None


def check_value(
    value: Any,
    *,
    file: Path | str,
    line: int | None = None,
    record: Any = None,
    path: str = "",
    depth: int = 0,
) -> None:
    """Refuse what cannot or should not be stored, naming the field: a string over
    MAX_FIELD_BYTES, nesting over MAX_JSON_DEPTH, more than MAX_RECORD_ITEMS values, and a value
    or key that PostgreSQL cannot store (see UNSTORABLE).

    `value` is one record (the item count is per call); `path` and `depth` place it inside its
    file when it is one element of a larger document (see check_records).
    """
    items = 0
    stack: list[tuple[Any, int, str]] = [(value, depth, path)]
    while stack:
        node, level, at = stack.pop()
        items += 1
        if items > MAX_RECORD_ITEMS:
            raise ImportFormatError(
                f"holds more than {MAX_RECORD_ITEMS:,} values (keys and items); the limit per "
                "record is IMPORT_MAX_RECORD_ITEMS",
                file=file,
                line=line,
                record=record,
                field=path or None,
            )
        if level > MAX_JSON_DEPTH:
            raise ImportFormatError(
                f"nested more than {MAX_JSON_DEPTH} levels deep",
                file=file,
                line=line,
                record=record,
                field=at or None,
            )
        if isinstance(node, str):
            problem = unstorable(node)
            if problem:
                raise _Unstorable(
                    problem,
                    code=_code(node),
                    file=file,
                    line=line,
                    record=record,
                    field=at or None,
                )
            # Four bytes per character is the UTF-8 worst case: only measure the long ones.
            if len(node) * 4 > MAX_FIELD_BYTES and len(node.encode("utf-8")) > MAX_FIELD_BYTES:
                raise _too_large(node, file=file, line=line, record=record, field=at or None)
        elif isinstance(node, dict):
            for key, child in node.items():
                inner = f"{at}.{key}" if at else str(key)
                problem = unstorable(key)
                if problem:
                    # The key is the field: its path names it (escaped when printed).
                    raise _Unstorable(
                        f"a key {problem}",
                        code=_code(key),
                        file=file,
                        line=line,
                        record=record,
                        field=inner,
                    )
                stack.append((child, level + 1, inner))
        elif isinstance(node, list):
            for index, child in enumerate(node):
                stack.append((child, level + 1, f"{at}[{index}]"))


def find_unstorable(value: Any, path: str = "") -> tuple[str, str] | None:
    """(field path, problem) of the first string or key in `value` that PostgreSQL cannot store
    (see UNSTORABLE), or None. For values built after the checks of the files they came from."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        node, at = stack.pop()
        if isinstance(node, str):
            problem = unstorable(node)
            if problem:
                return at, problem
        elif isinstance(node, dict):
            for key, child in node.items():
                inner = f"{at}.{key}" if at else str(key)
                problem = unstorable(str(key))
                if problem:
                    return inner, f"a key {problem}"
                stack.append((child, inner))
        elif isinstance(node, list | tuple):
            stack.extend((child, f"{at}[{index}]") for index, child in enumerate(node))
    return None


def require(
    obj: Any,
    key: str,
    kind: type | tuple[type, ...],
    *,
    file: Path | str,
    line: int | None = None,
    record: Any = None,
    optional: bool = False,
    default: Any = None,
) -> Any:
    """obj[key], checked to be of `kind`; a clear error naming the field otherwise."""
    if not isinstance(obj, dict):
        raise ImportFormatError(
            f"expected a JSON object, got {type_name(obj)}", file=file, line=line, record=record
        )
    if key not in obj or obj[key] is None:
        if optional:
            return default
        raise ImportFormatError("missing", file=file, line=line, record=record, field=key)
    value = obj[key]
    # bool is an int in Python; a benchmark's "id": true is a mistake, not an id.
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise ImportFormatError(
            f"expected {kind_name(kind)}, got a boolean",
            file=file,
            line=line,
            record=record,
            field=key,
        )
    if not isinstance(value, kind):
        raise ImportFormatError(
            f"expected {kind_name(kind)}, got {type_name(value)}",
            file=file,
            line=line,
            record=record,
            field=key,
        )
    if isinstance(value, str) and not value.strip() and not optional:
        raise ImportFormatError("is empty", file=file, line=line, record=record, field=key)
    return value


def type_name(value: Any) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        int: "a number",
        float: "a number",
        bool: "a boolean",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number"}
    return " or ".join(dict.fromkeys(names.get(k, k.__name__) for k in kinds))


# --- readers ------------------------------------------------------------------------------------


class _NotUtf8(ImportFormatError):
    """read_text's error for bytes that are not UTF-8. Carries the text decoded with Python's
    surrogateescape, where each bad byte is one of U+DC80-U+DCFF, so that the file's own reader
    can find the field the byte is in (see _locate)."""

    def __init__(self, message: str, *, escaped: str, **where: Any) -> None:
        super().__init__(message, **where)
        self.escaped = escaped


def _without_bom(text: str) -> str:
    return text[1:] if text.startswith(BOM) else text


def read_text(path: Path) -> str:
    """The file as text: strict UTF-8, one leading byte-order mark tolerated, never empty.

    A BOM at the start is what spreadsheet programs write and carries no data, so it is dropped;
    a BOM anywhere else is a sign of concatenated files and is refused with its line.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ImportFormatError("no such file", file=path) from None
    except IsADirectoryError:
        raise ImportFormatError("is a directory, expected a file", file=path) from None
    except OSError as exc:
        raise ImportFormatError(f"cannot be read: {exc.strerror}", file=path) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        # A lone surrogate written in UTF-8 (bytes ED A0 80 for U+D800, as CESU-8 and WTF-8
        # write it) lands here too: strict UTF-8 has no such characters.
        raise _NotUtf8(
            f"is not valid UTF-8 (byte 0x{data[exc.start]:02x} at column {column})",
            file=path,
            line=line,
            escaped=_without_bom(data.decode("utf-8", "surrogateescape")),
        ) from None
    text = _without_bom(text)
    stray = text.find(BOM)
    if stray >= 0:
        raise ImportFormatError(
            "contains a byte-order mark (U+FEFF) inside the file; files joined together?",
            file=path,
            line=text.count("\n", 0, stray) + 1,
        )
    # Not `text.strip()`, which would copy the whole text once more.
    if not text or text.isspace():
        raise ImportFormatError("is empty", file=path)
    return text


def _locate(error: _NotUtf8, read: Callable[[str], object]) -> NoReturn:
    """Raise `error` with the field (and record) its first bad byte is in, found by reading the
    escaped text with the file's own reader, whose checks refuse the byte's stand-in character
    naming the field. Without such a finding (the reader stopped earlier, on another problem),
    `error` is raised as it is: it names the file, line and column already."""
    try:
        read(error.escaped)
    except _Unstorable as found:
        if 0xDC80 <= found.code <= 0xDCFF:
            raise ImportFormatError(
                error.message,
                file=error.file,
                line=error.line,
                record=found.record,
                field=found.field,
            ) from None
    except ImportFormatError:
        pass
    raise error


def _drain(records: Iterable[Any]) -> None:
    deque(records, maxlen=0)


def _size(text: str) -> int:
    """The UTF-8 size of `text`, or its length when that alone is over MAX_RECORD_BYTES (a
    character is at least one byte), so that a huge text is never encoded just to be refused."""
    if text.isascii() or len(text) > MAX_RECORD_BYTES:
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def _oversize(text: str, start: int = 0, end: int | None = None) -> tuple[int, bool] | None:
    """None when text[start:end] fits in MAX_RECORD_BYTES, else (its size, whether that is
    exact). A text whose characters alone are over the limit is neither copied nor encoded:
    its length in characters is a lower bound of its size."""
    chars = (len(text) if end is None else end) - start
    if chars * 4 <= MAX_RECORD_BYTES:
        return None
    if text.isascii():  # O(1) in CPython; then characters are bytes
        return (chars, True) if chars > MAX_RECORD_BYTES else None
    if chars > MAX_RECORD_BYTES:
        return chars, False
    size = len(text[start:end].encode("utf-8", "surrogatepass"))
    return (size, True) if size > MAX_RECORD_BYTES else None


def _record_too_large(
    size: int, *, exact: bool, file: Path | str, line: int | None, record: Any = None
) -> ImportFormatError:
    measured = f"is {size:,} bytes" if exact else f"is at least {size:,} bytes"
    return ImportFormatError(
        f"record {measured}; the limit is {MAX_RECORD_BYTES:,} bytes per record "
        "(IMPORT_MAX_RECORD_BYTES); it was refused before being parsed",
        file=file,
        line=line,
        record=record,
    )


def check_record_size(text: str, *, file: Path | str, line: int | None = None) -> None:
    """Refuse one record's text (a JSON Lines line, a whole JSON document) over
    MAX_RECORD_BYTES: call before parsing it."""
    over = _oversize(text)
    if over:
        raise _record_too_large(over[0], exact=over[1], file=file, line=line)


# Python converts at most this many digits to an int (sys.get_int_max_str_digits()): a longer
# whole number in a file or a request body is refused by name, not a ValueError from json.
MAX_INT_DIGITS = 4300
_KEY_BEFORE = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:\s*$')


class UnstorableNumber(ValueError):
    """A JSON number no column can take: NaN or Infinity (not JSON; jsonb refuses them), a
    float beyond a double (1e999 would become Infinity), or a whole number of more digits than
    Python converts. `literal` is the text as written; `locate` finds where it is."""

    def __init__(self, literal: str, problem: str) -> None:
        super().__init__(problem)
        self.literal = literal

    def locate(self, text: str) -> tuple[int, int, str | None]:
        """(line, column, the key the number is the value of, if any) in `text`."""
        at = max(text.find(self.literal), 0)
        line = text.count("\n", 0, at) + 1
        column = at - (text.rfind("\n", 0, at) + 1) + 1
        key = _KEY_BEFORE.search(text, max(0, at - 1000), at)
        name = None
        if key:
            try:
                name = json.loads(f'"{key.group(1)}"')
            except ValueError:
                name = None
        return line, column, name


def _refuse_constant(name: str) -> float:
    # Python's json accepts NaN and Infinity; they are not JSON and jsonb refuses them.
    raise UnstorableNumber(name, f"the number {name}")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if value in (float("inf"), float("-inf")):
        raise UnstorableNumber(literal, f"the number {literal} (Infinity as a float)")
    return value


def _bounded_int(literal: str) -> int:
    digits = len(literal) - literal.startswith("-")
    if digits > MAX_INT_DIGITS:
        raise UnstorableNumber(
            literal,
            f"a whole number of {digits:,} digits (more than {MAX_INT_DIGITS:,})",
        )
    return int(literal)


# One decoder for every call (json.loads with these hooks would make one each time: a tenth of
# reading a 100,000-line file back).
_NUMBERS_CHECKED = json.JSONDecoder(
    parse_constant=_refuse_constant, parse_float=_finite_float, parse_int=_bounded_int
)


def json_loads_numbers_checked(text: str) -> Any:
    """json.loads, refusing with UnstorableNumber the numbers no column can take (JSON's one
    rule for numbers, shared by the imports and every request body: config.untrusted)."""
    if text.startswith(BOM):  # as json.loads refuses it
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    return _NUMBERS_CHECKED.decode(text)


def jsonb_text(value: Any) -> str | None:
    """`value` as JSON text PostgreSQL's jsonb takes (None for None), for what the platform did
    not read through json_loads_numbers_checked: a model's answer as its suite read it, with
    Python's json, as the benchmark's own scorer does. A number JSON cannot write (NaN,
    Infinity: Python reads 1e999 as Infinity) is written null, as JavaScript's JSON.stringify
    writes it; a character PostgreSQL cannot store (NUL, a lone surrogate) is written as its
    escape in the string (`shown`). The text it was read from is stored as it came (`shown`)."""
    if value is None:
        return None
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except ValueError:  # a non-finite number
        return json.dumps(_storable(value), ensure_ascii=False, allow_nan=False)
    # json writes NUL as the escape \u0000, which jsonb refuses; a lone surrogate as it is.
    if "\\u0000" in text or (not text.isascii() and UNSTORABLE.search(text)):
        return json.dumps(_storable(value), ensure_ascii=False, allow_nan=False)
    return text


def _storable(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, Mapping):
        return {shown(str(key)): _storable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_storable(item) for item in value]
    return value


def parse_json_text(text: str, *, file: Path | str, line_offset: int = 0) -> Any:
    """json.loads with errors that name the line (and survive absurd nesting)."""
    try:
        return json_loads_numbers_checked(text)
    except UnstorableNumber as exc:
        line, _, key = exc.locate(text)
        raise ImportFormatError(
            f"holds {exc}, which JSON (and PostgreSQL) cannot store",
            file=file,
            line=line_offset + line,
            field=key,
        ) from None
    except json.JSONDecodeError as exc:
        raise ImportFormatError(
            f"is not valid JSON: {exc.msg} (column {exc.colno})",
            file=file,
            line=line_offset + exc.lineno,
        ) from None
    except RecursionError:
        raise ImportFormatError(
            f"JSON is nested more than {MAX_JSON_DEPTH} levels deep",
            file=file,
            line=line_offset + 1,
        ) from None


# --- JSON documents: records found before parsing ------------------------------------------------


@dataclass(frozen=True, slots=True)
class RecordSpan:
    """One element of a JSON document's top-level list (or member of its top-level object):
    the line it starts on, where it is in the text, and the member's key."""

    line: int
    start: int
    end: int
    key: str | None = None


# A JSON string, a bracket or a comma; anything else (numbers, words, spaces) lies between them.
# A lone quote is a string that never closes: the scan stops there and json.loads says where.
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},"]', re.DOTALL)
_NOT_SPACE = re.compile(r"[^ \t\r\n]")


def json_records(text: str, *, file: Path | str) -> list[RecordSpan]:
    """The records of a JSON document, found without parsing it: the elements of its top-level
    list, or the members of its top-level object (the shapes benchmarks publish: a list of
    queries, a map from tool name to description). One larger than MAX_RECORD_BYTES is refused
    here, before json.loads builds any of it; a document that is neither a list nor an object is
    one record. Only brackets, commas and whole strings are looked at, so a malformed document
    is left to json.loads to report.

    What this does not bound: the document as a whole. Its text is in memory already, and its
    parsed records take roughly ten times that; a record limit cannot cap a file of many
    records, the file's size does (the import reads files the user names, see README, Import).
    """
    first = _NOT_SPACE.search(text)
    if first is None or text[first.start()] not in "[{":
        check_record_size(text, file=file, line=1)
        return []
    is_object = text[first.start()] == "{"
    spans: list[RecordSpan] = []
    line, counted = 1, 0
    depth = 0
    start: int | None = None  # where the open record starts
    key: str | None = None

    def close(end: int) -> None:
        nonlocal line, counted, start, key
        if start is None or start >= end:
            start = None
            return
        line += text.count("\n", counted, start)
        counted = start
        over = _oversize(text, start, end)
        if over:
            raise _record_too_large(
                over[0],
                exact=over[1],
                file=file,
                line=line,
                record=key if is_object else len(spans),
            )
        spans.append(RecordSpan(line=line, start=start, end=end, key=key))
        start, key = None, None

    def open_after(position: int) -> None:
        nonlocal start
        found = _NOT_SPACE.search(text, position)
        start = found.start() if found else len(text)

    for token in _JSON_TOKEN.finditer(text, first.start()):
        char = token.group()
        position = token.start()
        if start is not None and position - start > MAX_RECORD_BYTES:
            # Over the limit before its end is even found: refused without scanning further.
            line += text.count("\n", counted, start)
            counted = start
            raise _record_too_large(
                position - start,
                exact=False,
                file=file,
                line=line,
                record=key if is_object else len(spans),
            )
        if char == '"':
            break
        if char[0] == '"':
            if is_object and depth == 1 and position == start and key is None:
                try:
                    key = json.loads(char)
                except ValueError:
                    key = None
            continue
        if char in "[{":
            depth += 1
            if depth == 1:
                open_after(token.end())
        elif char in "]}":
            depth -= 1
            if depth == 0:
                close(position)
                break
        elif depth == 1:  # a comma between records
            close(position)
            open_after(token.end())
    return spans


def check_records(value: Any, spans: Sequence[RecordSpan], *, file: Path | str) -> None:
    """check_value for each record of a parsed JSON document, naming the line it starts on and
    the field by its path in the document ("[3].query", "WeatherTool")."""
    if isinstance(value, list):
        lines = [span.line for span in spans] if len(spans) == len(value) else []
        for index, element in enumerate(value):
            line = lines[index] if lines else None
            check_value(element, file=file, line=line, path=f"[{index}]", depth=1)
    elif isinstance(value, dict):
        # A key given twice keeps its last value, as json.loads does.
        where = {span.key: span.line for span in spans if span.key is not None}
        for key, member in value.items():
            line = where.get(key)
            problem = unstorable(key)
            if problem:
                raise _Unstorable(
                    f"a key {problem}", code=_code(key), file=file, line=line, field=key
                )
            check_value(member, file=file, line=line, path=key, depth=1)
    else:
        check_value(value, file=file, line=1)


def read_json(
    path: Path, check: Callable[[Any, list[RecordSpan]], object] | None = None
) -> tuple[str, Any, list[RecordSpan]]:
    """A JSON file's text, its parsed value and its records (see json_records), each record's
    size checked before anything is parsed. The values are not checked yet: check_records, or
    the caller's own checks, which it passes as `check` (value, records) to have them find the
    field of a byte that is not UTF-8 (see _locate)."""
    try:
        text = read_text(path)
    except _NotUtf8 as exc:

        def read(escaped: str) -> None:
            spans = json_records(escaped, file=path)
            value = parse_json_text(escaped, file=path)
            if check is None:
                check_records(value, spans, file=path)
            else:
                check(value, spans)

        _locate(exc, read)
    spans = json_records(text, file=path)
    return text, parse_json_text(text, file=path), spans


def load_json(path: Path) -> Any:
    _, value, spans = read_json(path)
    check_records(value, spans, file=path)
    return value


# --- JSON Lines and CSV -------------------------------------------------------------------------

JSONL_EXTENSIONS = (".jsonl", ".json")


def jsonl_files(paths: Sequence[Path], *, what: str) -> list[Path]:
    """The JSON Lines files named, a folder standing for its `*.jsonl` / `*.json` files in name
    order (its manifest.json left out); `what` names what the files hold, for the errors."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(
                p
                for p in path.iterdir()
                if p.is_file()
                and p.suffix.lower() in JSONL_EXTENSIONS
                and p.name != "manifest.json"
            )
            if not found:
                raise ImportFormatError(f"holds no .jsonl files of {what}", file=path)
            files.extend(found)
        elif path.suffix.lower() not in JSONL_EXTENSIONS:
            raise ImportFormatError(
                f"is not a file this suite reads: {what} come as JSON Lines (*.jsonl, or *.json "
                "holding JSON Lines), or a folder of them",
                file=path,
            )
        else:
            files.append(path)
    return files


def iter_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, object) for each non-blank line of a JSON Lines file."""
    try:
        text = read_text(path)
    except _NotUtf8 as exc:
        _locate(exc, lambda escaped: _drain(_jsonl_records(escaped, path)))
    yield from _jsonl_records(text, path)


def _jsonl_records(text: str, path: Path) -> Iterator[tuple[int, Any]]:
    # Lines end at "\n" only (a "\r" before it is JSON whitespace): str.splitlines() would also
    # cut at U+2028, U+0085 and others, which JSON allows raw inside a string, and its line
    # numbers would disagree with read_text's. Each line is sized before it is copied out of
    # the text, so a huge one costs no copy.
    position, number, length = 0, 0, len(text)
    while position < length:
        end = text.find("\n", position)
        end = length if end < 0 else end
        number += 1
        over = _oversize(text, position, end)
        if over:
            raise _record_too_large(over[0], exact=over[1], file=path, line=number)
        raw = text[position:end]
        position = end + 1
        if not raw.strip():
            continue
        value = parse_json_text(raw, file=path, line_offset=number - 1)
        check_value(value, file=path, line=number)
        yield number, value


def iter_csv(path: Path, required: Sequence[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, row) for each CSV row, after checking the header has `required` columns."""
    try:
        text = read_text(path)
    except _NotUtf8 as exc:
        _locate(exc, lambda escaped: _drain(_csv_rows(escaped, path, required, True)))
    # Strict UTF-8 text holds no surrogate; NUL is the one character to look for, and a file
    # without one (all real ones) skips the check per cell.
    yield from _csv_rows(text, path, required, "\x00" in text)


def _budgeted(
    lines: Iterable[str], path: Path, state: list[int], ascii_only: bool
) -> Iterator[str]:
    """The lines, refusing a record (one CSV row, which quoted newlines spread over several
    lines) over MAX_RECORD_BYTES before the csv module parses its cells. `state` is [the
    record's bytes so far, its first line]: the caller sets both after each row. This runs once
    a line of the largest imports, so it does no more than it must: in a text that is all ASCII
    (known at once) a line's length is its size."""
    limit = MAX_RECORD_BYTES
    for line in lines:
        if ascii_only or line.isascii() or len(line) > limit:
            state[0] += len(line)
        else:
            state[0] += len(line.encode("utf-8", "surrogatepass"))
        if state[0] > limit:
            # The row may go on: its size so far is what is known.
            raise _record_too_large(state[0], exact=False, file=path, line=state[1])
        yield line


def _csv_rows(
    text: str, path: Path, required: Sequence[str], check_characters: bool
) -> Iterator[tuple[int, dict[str, str]]]:
    # The csv module's own limit would fire first with a message that names neither the line
    # nor the column; no field can be longer than the text, so our check below always decides.
    csv.field_size_limit(max(len(text) + 1, csv.field_size_limit()))
    state = [0, 1]
    lines: Iterable[str] = io.StringIO(text, newline="")
    if _oversize(text):  # a smaller file cannot hold a record over the limit
        lines = _budgeted(lines, path, state, text.isascii())
    # csv.reader, not DictReader: DictReader builds each row in Python (a third of the time of
    # reading a large file); rows are built here the way it builds them (blank lines skipped,
    # a repeated column name keeps its last cell) and its short and long rows are refused.
    reader = csv.reader(lines)
    try:
        header = next(reader, [])
    except csv.Error as exc:
        raise ImportFormatError(f"is not valid CSV: {exc}", file=path, line=1) from None
    state[:] = [0, reader.line_num + 1]
    if check_characters:
        for position, name in enumerate(header, start=1):
            problem = unstorable(name)
            if problem:
                raise _Unstorable(
                    f"a column name {problem}",
                    code=_code(name),
                    file=path,
                    line=1,
                    field=f"column {position}",
                )
    missing = [name for name in required if name not in header]
    if missing:
        raise ImportFormatError(
            f"header lacks column(s) {', '.join(missing)}; it has {', '.join(header) or 'none'}",
            file=path,
            line=1,
        )
    width = len(header)
    # No cell of a row whose longest cell is under a quarter of the limit can be over it
    # (a character is at most 4 bytes): one check a row instead of one a cell.
    short = MAX_FIELD_BYTES // 4
    try:
        for cells in reader:
            if not cells:
                continue
            line = reader.line_num
            state[:] = [0, line + 1]
            if len(cells) != width:
                if len(cells) > width:
                    raise ImportFormatError(
                        f"has {len(cells)} cells, the header has {width}", file=path, line=line
                    )
                # The cells it has are checked first, as they come first in the row.
                _check_cells(header[: len(cells)], cells, path, line, check_characters)
                raise ImportFormatError(
                    f"has fewer cells than the header's {width}",
                    file=path,
                    line=line,
                    field=header[len(cells)],
                )
            if check_characters or max(map(len, cells)) > short:
                _check_cells(header, cells, path, line, check_characters)
            yield line, dict(zip(header, cells, strict=True))
    except csv.Error as exc:
        raise ImportFormatError(
            f"is not valid CSV: {exc}", file=path, line=reader.line_num
        ) from None


def _too_large(value: str, **where: Any) -> ImportFormatError:
    """The error for a text over MAX_FIELD_BYTES (a JSON value or a CSV cell), at `where`
    (file, line, record, field). The size test stays inline where values are walked: it runs on
    every long text of the largest imports."""
    return ImportFormatError(
        f"value is {len(value.encode('utf-8')):,} bytes; the limit is "
        f"{MAX_FIELD_BYTES:,} bytes per field",
        **where,
    )


def _check_cells(
    header: Sequence[str], cells: Sequence[str], path: Path, line: int, check_characters: bool
) -> None:
    """Refuse the first cell, in the row's order, that PostgreSQL cannot store or that is over
    MAX_FIELD_BYTES."""
    for name, value in dict(zip(header, cells, strict=True)).items():
        if check_characters:
            problem = unstorable(value)
            if problem:
                raise _Unstorable(problem, code=_code(value), file=path, line=line, field=name)
        if len(value) * 4 > MAX_FIELD_BYTES and len(value.encode("utf-8")) > MAX_FIELD_BYTES:
            raise _too_large(value, file=path, line=line, field=name)


def check_file_name(path: Path) -> None:
    """Refuse a file whose name the import stores (a scenario's name, a split) when PostgreSQL
    cannot store it: a name's bytes that are not UTF-8 reach Python as lone surrogates."""
    problem = unstorable(path.name)
    if problem:
        raise _Unstorable(
            f"the file name {problem}", code=_code(path.name), file=path, field="file name"
        )


def _code(text: str) -> int:
    match = UNSTORABLE.search(text)
    return ord(match.group()) if match else 0


SAMPLE_KINDS = ("query", "dialogue", "plan")
_SAMPLE_KIND_SET = frozenset(SAMPLE_KINDS)
MAX_SPLIT_CHARS = 100
MAX_ID_CHARS = 300
MAX_TOOL_NAME_CHARS = 300


def validate_bundle(bundle: ImportBundle) -> None:
    """Checks every suite's output must pass before anything is stored.

    Two samples with the same (split, external id) in one import are an error, not a merge;
    ids, splits and tool names must fit their columns.
    """
    if not _plainly_valid(bundle.samples):
        _refuse_first_invalid(bundle.samples)
    for tool in bundle.tools:
        if not tool.name or len(tool.name) > MAX_TOOL_NAME_CHARS:
            raise ImportFormatError(
                f"tool name must be 1 to {MAX_TOOL_NAME_CHARS} characters, got {tool.name[:80]!r}",
                file=tool.source or None,
                field="name",
            )


def _plainly_valid(samples: Sequence[SampleRecord]) -> bool:
    """Whether no sample breaks a rule of validate_bundle, by checks the interpreter runs in C
    over whole columns (a fifth of the time of checking record by record, in the largest
    imports); when one is broken, _refuse_first_invalid finds the record."""
    if not samples:
        return True
    splits = list(map(attrgetter("split"), samples))
    ids = list(map(attrgetter("external_id"), samples))
    return (
        min(map(len, ids)) >= 1
        and max(map(len, ids)) <= MAX_ID_CHARS
        and min(map(len, splits)) >= 1
        and max(map(len, splits)) <= MAX_SPLIT_CHARS
        and set(map(attrgetter("kind"), samples)) <= _SAMPLE_KIND_SET
        and len(set(zip(splits, ids, strict=True))) == len(samples)
    )


def _refuse_first_invalid(samples: Sequence[SampleRecord]) -> None:
    """Raise ImportFormatError for the first sample, in order, that breaks a rule."""
    seen: dict[tuple[str, str], SampleRecord] = {}
    for sample in samples:
        where = sample.source or None
        if not sample.external_id or len(sample.external_id) > MAX_ID_CHARS:
            raise ImportFormatError(
                f"id must be 1 to {MAX_ID_CHARS} characters, got {len(sample.external_id)}",
                file=where,
                field="id",
            )
        if not sample.split or len(sample.split) > MAX_SPLIT_CHARS:
            raise ImportFormatError(
                f"split must be 1 to {MAX_SPLIT_CHARS} characters, got {sample.split!r}",
                file=where,
                field="split",
            )
        if sample.kind not in SAMPLE_KINDS:
            raise ImportFormatError(
                f"kind must be one of {', '.join(SAMPLE_KINDS)}, got {sample.kind!r}",
                file=where,
                field="kind",
            )
        key = (sample.split, sample.external_id)
        first = seen.setdefault(key, sample)
        if first is not sample:
            raise ImportFormatError(
                f"duplicate id {sample.external_id!r} in split {sample.split!r}; "
                f"first seen at {first.source or 'an earlier record'}",
                file=where,
                field="id",
            )


# A suite whose tools come in files of their own gives `gold_tools(sample)`: (field, tool name)
# of each gold tool a sample names, which a tool of the import must describe (check_gold_tools).
# A function of the record rather than a field of it: 200,000 queries would otherwise carry
# 400,000 more objects through the import, for the garbage collector to walk again and again.
GoldTools = Callable[[SampleRecord], Iterable[tuple[str, str]]]


def undescribed_gold_tools(
    bundle: ImportBundle, gold_tools: GoldTools
) -> list[tuple[SampleRecord, str, str]]:
    """(sample, field, tool) for each gold tool no tool of the bundle describes, in order."""
    described = {tool.name for tool in bundle.tools}
    return [
        (sample, field_name, tool)
        for sample in bundle.samples
        for field_name, tool in gold_tools(sample)
        if tool not in described
    ]


def check_gold_tools(
    undescribed: Sequence[tuple[SampleRecord, str, str]],
    *,
    known: Collection[str] = (),
    known_where: str = "",
) -> None:
    """A gold tool must be described by a tool of this import or, when the caller allows it,
    be among `known` (the tools the target benchmark already has, named by `known_where`):
    a query whose gold tool has no description cannot be asked with candidates, and one that
    names a misspelt tool can never be answered right. `undescribed` is what
    undescribed_gold_tools found. Raises ImportFormatError naming the sample's file and line,
    the field and the tool."""
    for sample, field_name, tool in undescribed:
        if tool in known:
            continue
        if known_where:
            message = (
                f"gold tool {tool!r} is described neither by the tool files of this import nor "
                f"among the tools {known_where} already has"
            )
        else:
            message = (
                f"gold tool {tool!r} is not described by the tool files of this import; give "
                "the file that describes it, or, when an earlier import of this benchmark did, "
                "allow tools it already has (import_benchmark --allow-known-tools)"
            )
        raise ImportFormatError(message, file=sample.source or None, field=field_name)


def merge_tools(tools: Sequence[ToolRecord]) -> list[ToolRecord]:
    """One record per tool name; the first definition wins (files repeat tool docs per sample)."""
    merged: dict[str, ToolRecord] = {}
    for tool in tools:
        merged.setdefault(tool.name, tool)
    return list(merged.values())
