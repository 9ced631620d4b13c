"""Model outputs as data: prediction files published elsewhere, and JSON inside a model's prose.

`read_generic_predictions(path)` reads the platform's own format for outputs made elsewhere, one
JSON object a line, for any suite:

    {"sample_id": str | int,      the sample's external id (as imported)
     "output": str | any JSON,    the model's output; a non-string is serialised as JSON text
     "split"?: str}               the sample's split, when the ids alone are ambiguous

Blank lines are skipped. Every problem raises ImportFormatError naming the file, line and field:
a line that is not an object, a key other than those three (a misspelt key is an error, not
silently dropped), a missing or null sample_id or output, and an empty sample id. A sample given
twice is handed over twice, each line with its own number: what a second output means is the
import's on_duplicate policy, the same for every suite's reader (refused by default, naming both
lines; see evaluation.services.outputs_import). The whole file is read before the first output
is returned, so a bad file yields nothing.

`json_values(text)` finds the JSON arrays and objects a model wrote inside prose or code
fences, without evaluating anything (`scan_values`, which a suite's reader may give a fallback
for what is not JSON: UltraTool's Python literals); `python_literal(text)` reads a Python-style
literal (single quotes, True/None) with the safe reader of `toolcall`, never `eval`.

Pure Python, no Django.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from benchmarks.kit.base import ImportFormatError, PublishedOutput, iter_jsonl, type_name
from benchmarks.kit.toolcall import MAX_CALL_CHARS, ToolCallError, parse_tool_call

GENERIC_KEYS = ("sample_id", "output", "split")

# Scanning prose for JSON tries a decode at every bracket; a hostile or degenerate output
# ("[[[[...") would make that quadratic, so both the text and the attempts are bounded.
MAX_SCAN_CHARS = 200_000
MAX_DECODE_ATTEMPTS = 500


def read_generic_predictions(path: Path) -> Iterator[PublishedOutput]:
    """The outputs of a `{"sample_id", "output", "split"?}` JSON Lines file (see the module
    docstring); raises ImportFormatError naming file, line and field."""
    outputs: list[PublishedOutput] = []
    for line, record in iter_jsonl(path):

        def fail(message: str, field: str | None = None, line: int = line) -> ImportFormatError:
            return ImportFormatError(message, file=path, line=line, field=field)

        if not isinstance(record, dict):
            raise fail(f'expected an object {{"sample_id", "output"}}, got {type_name(record)}')
        unknown = sorted(set(record) - set(GENERIC_KEYS))
        if unknown:
            raise fail(
                f"unknown key(s) {', '.join(unknown)}; a line has sample_id, output and "
                "optionally split",
                unknown[0],
            )
        raw_id = record.get("sample_id")
        if raw_id is None:
            raise fail("missing", "sample_id")
        if isinstance(raw_id, bool) or not isinstance(raw_id, str | int):
            raise fail(f"expected a string or an integer, got {type_name(raw_id)}", "sample_id")
        sample_id = str(raw_id).strip()
        if not sample_id:
            raise fail("is empty", "sample_id")
        split = record.get("split")
        if split is not None:
            if not isinstance(split, str):
                raise fail(f"expected a string, got {type_name(split)}", "split")
            split = split.strip() or None
        if "output" not in record or record["output"] is None:
            raise fail("missing", "output")
        output = record["output"]
        text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
        outputs.append(
            PublishedOutput(
                external_id=sample_id, output=text, split=split, source=f"{path}, line {line}"
            )
        )
    return iter(outputs)


# --- JSON in prose ------------------------------------------------------------------------------


# What a scan tries where JSON does not read: (value, end) of what opens at `start` in the
# scanned text, or None when nothing does.
Fallback = Callable[[str, int], tuple[Any, int] | None]


def scan_values(text: str, fallback: Fallback | None = None) -> list[tuple[int, int, Any]]:
    """Every top-level value opened by `[` or `{` in `text`, as (start, end, value) in order of
    appearance: JSON where it reads, else what `fallback` reads there. What lies inside a value
    read whole is not listed again. The text scanned is the first MAX_SCAN_CHARS, with at most
    MAX_DECODE_ATTEMPTS starts."""
    text = text[:MAX_SCAN_CHARS]
    decoder = json.JSONDecoder()
    found: list[tuple[int, int, Any]] = []
    position = 0
    attempts = 0
    while attempts < MAX_DECODE_ATTEMPTS:
        starts = [i for i in (text.find("[", position), text.find("{", position)) if i >= 0]
        if not starts:
            break
        start = min(starts)
        attempts += 1
        try:
            value, end = decoder.raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError):
            read = None if fallback is None else fallback(text, start)
            if read is None:
                position = start + 1
                continue
            value, end = read
        found.append((start, end, value))
        position = end
    return found


def json_values(text: str) -> list[Any]:
    """Every top-level JSON array or object in `text`, in order of appearance.

    A value nested in an earlier one is not listed separately. Code fences need no special
    handling: their markers are not JSON, so the scan steps over them.
    """
    return [value for _, _, value in scan_values(text)]


def python_literal(text: str) -> Any:
    """A Python-style literal (a list or dict of strings, numbers, True/False/None; also JSON's
    spellings) read without evaluation; raises ValueError when `text` is anything else.

    Models (and UltraTool's published outputs) often write `[{'step': '1.1', 'tool': '0'}]`.
    `toolcall` already reads literals safely for call arguments, so the text is read as the one
    argument of a call: the same limits (MAX_CALL_CHARS, nesting depth) apply.
    """
    source = text.strip()
    if not source or len(source) > MAX_CALL_CHARS - 20:
        raise ValueError("empty or too long for a literal")
    try:
        return parse_tool_call(f"literal(value={source}\n)").arguments["value"]
    except ToolCallError as exc:
        raise ValueError(str(exc)) from None
