"""How UltraTool's published evaluation turns a model's text into an answer, reproduced for the
tasks' option variant=reference, bugs included (evaluate.py scores the answer; deviations.md
says where the default variant reads differently, and why).

The facts come from /work/shared/ultratool-reference-reading.md, a description of the published
code's behaviour in prose: UltraTool's repository has no licence, so none of its code is here.
Where the published code evaluates the text as Python, this reads it with `ast.literal_eval`,
which builds literals and never runs code; on the published predictions the two give the same
figures.

Two readers: AWARENESS (tool-usage and tool-creation awareness) and USAGE (tool usage).
`read(text, reader, outputs)` normalizes the text, trims it to the list, then tries the
reader's readings in order and stops at the first that reads; when none does, the answer is
empty and counts as a bad format. `outputs` says whose published prediction file the text comes
from: "gpt" (GPT's files, whose text is the record's `init output`) or "other" (the other
models' files), which the reference trims one step further.

Normalizing (both readers, in this order): remove every `json`; strip backticks from both
ends; remove every `输出` + full-width colon (the Chinese "output:"); remove every newline;
`\\_` -> `_`; `true` -> `True`, `false` -> `False`, `null` -> `"null"`, `None` -> `"None"`,
everywhere, string values included; `})` -> `}`; the full-width comma -> `,`; `}, "step` ->
`}, {"step`; remove every `# ...` (those five characters only: a `#` elsewhere, as in a password
`Pwd2023#`, stays); `}`, 1-12 spaces and `}` -> `}}`. The usage reader also turns `}{` into
`}, {`.

Trimming: text that does not start with `[` loses everything before its first `[` (if any).
Text that does not end with `]` is cut after its last `]`; with no `]` but a `[`, it is cut after
its last `},` (awareness) or `}},` (usage) and closed with `]`, or without either mark simply
gets a `]`. For "other" outputs, text that then holds more than one `]` becomes its last
shortest `[{ ... }]`, or with none, the text up to its first `]`.

Readings, each of the normalized, trimmed text unless it says otherwise:
  awareness: as is; `}` inserted before the last character, else `"}` there instead; with a `},`
    and a `[`, the text up to its last `},` closed with `]`; the quote repair.
  usage: as is; `}` inserted before the last character, then one more into that; `"}, {"step`
    -> `"}}, {"step`; `"}` inserted before the last character; `]}}` inserted there; the
    second-to-last character removed, then once more from that; `}}}` -> `}}`; with a `}},` and
    a `[`, the text up to the `}}` of its last `}},` closed with `]`; the quote repair, then
    that repaired text with `}}}` -> `}}`, then it with `]}}` inserted before its last
    character.
The quote repair replaces, in order, `{'` `'}` `', '` `", '` `', "` `': '` `': "` `": '` `': {`
`['` `']` `, '` `'),` `""None""` `"{step` `')}` (QUOTE_REPAIR below says with what); the usage
reader leaves out `"{step` and adds `': ` -> `": `, `', {` -> `", {` and `}}," {` -> `}}, {`
(the reading document does not give their place among the others; here they come last).

Pure Python, no Django.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["AWARENESS", "OUTPUTS", "QUOTE_REPAIR", "READERS", "USAGE", "Reading", "read"]

AWARENESS = "awareness"
USAGE = "usage"
READERS = (AWARENESS, USAGE)
OUTPUTS = ("gpt", "other")

# The published predictions are short; the bound only keeps a hostile text from costing more
# than a parse of this size (each reading parses the whole text once).
MAX_TEXT_CHARS = 200_000

FULLWIDTH_COMMA = "\uff0c"
CHINESE_OUTPUT_PREFIX = "\u8f93\u51fa\uff1a"  # 输出 and a full-width colon
# The five characters removed (a hash, a space, three dots); a "#" anywhere else stays.
ELLIPSIS_COMMENT = "# ..."

QUOTE_REPAIR: tuple[tuple[str, str], ...] = (
    ("{'", '{"'),
    ("'}", '"}'),
    ("', '", '", "'),
    ("\", '", '", "'),
    ("', \"", '", "'),
    ("': '", '": "'),
    ("': \"", '": "'),
    ("\": '", '": "'),
    ("': {", '": {'),
    ("['", "["),
    ("']", "]"),
    (", '", ', "'),
    ("'),", ')",'),
    ('""None""', '"None"'),
    ('"{step', '{"step'),
    ("')}", ')"}'),
)
USAGE_QUOTE_REPAIR: tuple[tuple[str, str], ...] = (
    *(pair for pair in QUOTE_REPAIR if pair[0] != '"{step'),
    ("': ", '": '),
    ("', {", '", {'),
    ('}}," {', "}}, {"),
)

_SPACED_BRACES = re.compile(r"\} {1,12}\}")
_OTHER_MODELS_LIST = re.compile(r"\[\{.*?\}\]")


@dataclass(frozen=True, slots=True)
class Reading:
    """The answer (None when nothing read), whether a reading succeeded, and which one."""

    value: Any
    ok: bool
    how: str


def normalize(text: str, reader: str) -> str:
    """The text as both readers rewrite it before reading (see the module docstring)."""
    text = text.replace("json", "")
    text = text.strip("`")
    text = text.replace(CHINESE_OUTPUT_PREFIX, "")
    text = text.replace("\n", "")
    text = text.replace("\\_", "_")
    text = text.replace("true", "True").replace("false", "False")
    text = text.replace("null", '"null"').replace("None", '"None"')
    text = text.replace("})", "}")
    text = text.replace(FULLWIDTH_COMMA, ",")
    text = text.replace('}, "step', '}, {"step')
    text = text.replace(ELLIPSIS_COMMENT, "")
    text = _SPACED_BRACES.sub("}}", text)
    if reader == USAGE:
        text = text.replace("}{", "}, {")
    return text


def trim(text: str, reader: str, outputs: str = "gpt") -> str:
    """The normalized text cut to the list (see the module docstring)."""
    if not text.startswith("["):
        first = text.find("[")
        if first >= 0:
            text = text[first:]
    if not text.endswith("]"):
        last = text.rfind("]")
        if last >= 0:
            text = text[: last + 1]
        elif "[" in text:
            mark = "}}," if reader == USAGE else "},"
            cut = text.rfind(mark)
            text = (text[: cut + len(mark)] if cut >= 0 else text) + "]"
    if outputs == "other" and text.count("]") > 1:
        lists = _OTHER_MODELS_LIST.findall(text)
        text = lists[-1] if lists else text[: text.find("]") + 1]
    return text


def quote_repair(text: str, reader: str) -> str:
    for old, new in USAGE_QUOTE_REPAIR if reader == USAGE else QUOTE_REPAIR:
        text = text.replace(old, new)
    return text


def _insert_before_last(text: str, insert: str) -> str:
    return text[:-1] + insert + text[-1:]


def _drop_second_to_last(text: str) -> str:
    return text[:-2] + text[-1:] if len(text) >= 2 else text


def _awareness_readings(text: str) -> Iterator[tuple[str, str]]:
    yield "as written", text
    yield "with a } inserted before the last character", _insert_before_last(text, "}")
    yield 'with "} inserted before the last character', _insert_before_last(text, '"}')
    if "}," in text and "[" in text:
        yield "up to the last complete step", text[: text.rfind("},") + 1] + "]"
    yield "after the quote repair", quote_repair(text, AWARENESS)


def _usage_readings(text: str) -> Iterator[tuple[str, str]]:
    yield "as written", text
    once = _insert_before_last(text, "}")
    yield "with a } inserted before the last character", once
    yield "with }} inserted before the last character", _insert_before_last(once, "}")
    yield 'with "}, {"step made "}}, {"step', text.replace('"}, {"step', '"}}, {"step')
    yield 'with "} inserted before the last character', _insert_before_last(text, '"}')
    yield "with ]}} inserted before the last character", _insert_before_last(text, "]}}")
    dropped = _drop_second_to_last(text)
    yield "without its second-to-last character", dropped
    yield "without its second-to-last character, twice", _drop_second_to_last(dropped)
    yield "with }}} made }}", text.replace("}}}", "}}")
    if "}}," in text and "[" in text:
        yield "up to the last complete step", text[: text.rfind("}},") + 2] + "]"
    repaired = quote_repair(text, USAGE)
    yield "after the quote repair", repaired
    yield "after the quote repair, with }}} made }}", repaired.replace("}}}", "}}")
    yield (
        "after the quote repair, with ]}} inserted before the last character",
        _insert_before_last(repaired, "]}}"),
    )


_UNREAD = object()


def _literal(text: str) -> Any:
    if len(text) > MAX_TEXT_CHARS:
        return _UNREAD
    # Windows paths and regexes in values carry invalid escapes, which Python keeps as written
    # but warns about; the warning is noise here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.literal_eval(text)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return _UNREAD


def read(text: str, reader: str, outputs: str = "gpt") -> Reading:
    """The answer UltraTool's evaluation reads from a model's text (see the module docstring)."""
    if reader not in READERS:
        raise ValueError(f"reader must be one of {', '.join(READERS)}, got {reader!r}")
    if outputs not in OUTPUTS:
        raise ValueError(f"outputs must be one of {', '.join(OUTPUTS)}, got {outputs!r}")
    text = trim(normalize(text, reader), reader, outputs)
    if not text:
        return Reading(None, False, "nothing left to read")
    readings = _usage_readings(text) if reader == USAGE else _awareness_readings(text)
    for how, candidate in readings:
        value = _literal(candidate)
        if value is not _UNREAD:
            return Reading(value, True, how)
    return Reading(None, False, "no reading succeeded")
