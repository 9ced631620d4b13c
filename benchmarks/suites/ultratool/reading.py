"""How the default variant finds a list of steps (or created tools) in a model's text.

Two readers, both pure and neither ever evaluating text:

`values(text)` lists the top-level values written in the text, left to right. At each `[` or
`{` it tries JSON, then the Python literal (single quotes, True/None; toolcall's safe reader)
that the bracket opens. A value read whole is stepped over, so nothing inside it is listed
again: a Python list whose steps are JSON one by one, but not as a whole (it mixes quote styles
or holds True), is one list, never a run of its JSON fragments.

`repair(text, start, accept)` reads a list that does not read as written, the way UltraTool's
published evaluation repairs one (see deviations.md), keeping only the repairs that cannot change
what a string says: they add or remove brackets, braces, commas and string delimiters, never a
character inside a string. In order, on the text from `start` to its last `]` (or to its end
when there is none), each until one reads and `accept`s the value:
  bases: the text as written; every quoted string re-delimited (`requote`: a quote mark ends
    its string only where `,` `:` `}` `]` `)` or the end follows, so the apostrophe in
    'the user's order' is kept as text); then, outside strings, `}{` given its comma and the
    full-width comma (U+FF0C) made `,`;
  on each base: as is; `}`, `}}`, `"}`, `'}` or `]}}` inserted before the last character (a
    closing brace, a closing quote and brace, the end of an arguments list missing); the
    second-to-last character removed when it is a `}` (one brace too many); `}}}` -> `}}` and
    `})` -> `}` outside strings; `"}, {"step` -> `"}}, {"step` (the arguments object of a step
    left open); `}, "step` -> `}, {"step` (a step object's opening brace missing); then the
    complete steps before a cut-off: up to the last `}},` or `},`, closed with `]`; and a `]`
    appended to a list that never closes.
Each candidate is read in full or not at all: a repair that does not yield a readable value is
simply not taken.

Pure Python, no Django.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from benchmarks.kit.predictions import MAX_SCAN_CHARS, python_literal, scan_values
from benchmarks.kit.toolcall import MAX_CALL_CHARS, MAX_DEPTH

__all__ = ["Found", "repair", "requote", "values"]

# A quoted string (with Python's backslash escapes; no raw newline, which a Python string cannot
# hold either) or a bracket.
_STRING = r"'(?:\\.|[^'\\\n])*'" + "|" + r'"(?:\\.|[^"\\\n])*"'
_TOKEN = re.compile(rf"{_STRING}|[\[\]{{}}()]")
_STRING_ONLY = re.compile(_STRING)
_OPENING = {"]": "[", "}": "{", ")": "("}
# Matching brackets costs a Python-level step per bracket or string; a degenerate output ("['',
# '', ..." repeated) must not make each of the MAX_DECODE_ATTEMPTS starts walk 10,000 characters.
TOKEN_BUDGET = 200_000
FULLWIDTH_COMMA = "\uff0c"
# What may follow a closing quote mark in a list of steps (after spaces).
_AFTER_STRING = frozenset(",:}])")


@dataclass(frozen=True, slots=True)
class Found:
    """A value read from text[start:end]."""

    start: int
    end: int
    value: Any


class _Budget:
    def __init__(self, tokens: int) -> None:
        self.tokens = tokens


_UNREAD = object()


def _literal(text: str) -> Any:
    try:
        return python_literal(text)
    except (ValueError, RecursionError):
        return _UNREAD


def _balanced_end(text: str, start: int, budget: _Budget) -> int | None:
    """The end of the bracketed span opening at `start` (brackets inside quoted strings do not
    count), or None when it does not close within MAX_CALL_CHARS (the longest literal the safe
    reader takes) and MAX_DEPTH."""
    stack: list[str] = []
    for match in _TOKEN.finditer(text, start, min(len(text), start + MAX_CALL_CHARS)):
        budget.tokens -= 1
        if budget.tokens < 0:
            return None
        token = match.group()
        if token in ("[", "{", "("):
            stack.append(token)
            if len(stack) > MAX_DEPTH + 1:
                return None
        elif token in _OPENING:
            if not stack or stack[-1] != _OPENING[token]:
                return None
            stack.pop()
            if not stack:
                return match.end()
    return None


def values(text: str) -> list[Found]:
    """Every top-level JSON value or Python literal opened by `[` or `{` in `text`, in order of
    appearance; what lies inside a value read whole is not listed again."""
    budget = _Budget(TOKEN_BUDGET)

    def literal(scanned: str, start: int) -> tuple[Any, int] | None:
        closing = _balanced_end(scanned, start, budget)
        value = _UNREAD if closing is None else _literal(scanned[start:closing])
        if value is _UNREAD or closing is None:
            return None
        return value, closing

    return [Found(start, end, value) for start, end, value in scan_values(text, literal)]


def requote(text: str) -> str | None:
    """`text` with every quoted string re-delimited: a quote mark of the string's own kind ends
    it only where (after spaces) `,` `:` `}` `]` `)` or the end of the text follows; any other
    is escaped as part of the string. Only delimiters change, never what a string says. None
    when a string never ends."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        quote = text[i]
        if quote not in ("'", '"'):
            out.append(quote)
            i += 1
            continue
        j = i + 1
        body: list[str] = []
        while True:
            if j >= n:
                return None
            char = text[j]
            if char == "\\" and j + 1 < n:
                body.append(text[j : j + 2])
                j += 2
                continue
            if char == quote:
                k = j + 1
                while k < n and text[k] in " \t\r\n":
                    k += 1
                if k >= n or text[k] in _AFTER_STRING:
                    break
                body.append("\\" + quote)
            else:
                body.append(char)
            j += 1
        out.append(quote + "".join(body) + quote)
        i = j + 1
    return "".join(out)


def _outside_strings(text: str, fix: Callable[[str], str]) -> str:
    """`fix` applied to the stretches of `text` between quoted strings."""
    parts: list[str] = []
    last = 0
    for match in _STRING_ONLY.finditer(text):
        parts.append(fix(text[last : match.start()]))
        parts.append(match.group())
        last = match.end()
    parts.append(fix(text[last:]))
    return "".join(parts)


def _separators(stretch: str) -> str:
    # Neither is ever valid outside a string, so both can be fixed together.
    return re.sub(r"\}\s*\{", "}, {", stretch.replace(FULLWIDTH_COMMA, ","))


def _bases(span: str) -> Iterator[str]:
    seen: set[str] = set()
    requoted = requote(span)
    for base in (span, requoted, _outside_strings(requoted or span, _separators)):
        if base is not None and base not in seen:
            seen.add(base)
            yield base


def _candidates(base: str) -> Iterator[str]:
    yield base
    if len(base) >= 2:
        body, last = base[:-1], base[-1]
        for insert in ("}", "}}", '"}', "'}", "]}}"):
            yield body + insert + last
        if body.endswith("}"):
            yield body[:-1] + last
    yield _outside_strings(base, lambda stretch: stretch.replace("}}}", "}}"))
    yield _outside_strings(base, lambda stretch: stretch.replace("})", "}"))
    yield base.replace('"}, {"step', '"}}, {"step')
    yield base.replace('}, "step', '}, {"step')
    for mark in ("}},", "},"):
        cut = base.rfind(mark)
        if cut > 0:
            yield base[: cut + len(mark) - 1] + "]"
    if not base.rstrip().endswith("]"):
        yield base + "]"


def repair(text: str, start: int, accept: Callable[[Any], bool]) -> Found | None:
    """The first repaired reading (see the module docstring) of the list opening at
    text[start] that `accept` takes, or None."""
    text = text[:MAX_SCAN_CHARS]
    span = text[start:]
    close = span.rfind("]")
    if close >= 0:
        span = span[: close + 1]
    tried: set[str] = set()
    for base in _bases(span):
        for candidate in _candidates(base):
            if candidate in tried:
                continue
            tried.add(candidate)
            value = _literal(candidate)
            if value is not _UNREAD and accept(value):
                return Found(start, start + len(span), value)
    return None
