"""A published JSON record's layout, kept at import so that the export writes it back as it came.

PostgreSQL's jsonb keeps an object's keys in an order of its own (shorter keys first), so a
record stored as JSON comes back with its keys reordered, and the file's indentation and escapes
are not stored at all. What an exporter needs to write an unchanged record back byte for byte,
and a refined one with only what changed rewritten, is small:

- `key_order(value)`: the order of every object's keys, as lists (which jsonb keeps):
  an object is `[[key, order of its value] or key, ...]` (a bare key when its value holds no
  object), a list `[order of each element]`, or None when nothing inside it is an object;
- `record_layout(text, value, depth, indent)`: the `json.dumps` options that write `value` as
  `text` when it sits `depth` levels deep in a document indented by `indent` ({"indent",
  "ascii"}; "indent" absent for a record on one line), or None when no options do (a file
  written by hand: the caller then keeps the text itself).

`in_order(value, order)` gives `value` its keys back in the kept order (keys the order does not
know, a refinement's, follow in their own order), and `dump(value, layout, depth)` writes it.

Pure Python, no Django.
"""

from __future__ import annotations

import json
from typing import Any

Order = Any  # list | str | None, as described above


def key_order(value: Any) -> Order:
    if isinstance(value, dict):
        return [
            key if (sub := key_order(item)) is None else [key, sub] for key, item in value.items()
        ]
    if isinstance(value, list):
        orders = [key_order(item) for item in value]
        return orders if any(o is not None for o in orders) else None
    return None


def in_order(value: Any, order: Order) -> Any:
    """`value` with every object's keys in `order` (key_order of the published value)."""
    if isinstance(value, dict):
        if not isinstance(order, list):
            return value
        subs: dict[str, Order] = {}
        for entry in order:
            if isinstance(entry, str):
                subs[entry] = None
            elif isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str):
                subs[entry[0]] = entry[1]
        keys = [k for k in subs if k in value] + [k for k in value if k not in subs]
        return {k: in_order(value[k], subs.get(k)) for k in keys}
    if isinstance(value, list):
        orders = order if isinstance(order, list) else []
        return [
            in_order(item, orders[i] if i < len(orders) else None) for i, item in enumerate(value)
        ]
    return value


def dump(value: Any, layout: dict[str, Any], depth: int = 0) -> str:
    """`value` as json.dumps writes it with `layout`'s options, its lines after the first
    indented as deep as a record `depth` levels into its document."""
    indent = layout.get("indent")
    text = json.dumps(value, ensure_ascii=bool(layout.get("ascii")), indent=indent)
    if indent is None or depth == 0:
        return text
    return text.replace("\n", "\n" + " " * (indent * depth))


INDENTS = (None, 1, 2, 4, 3, 8, "\t")


def record_layout(
    text: str, value: Any, depth: int = 0, indent: int | None = None
) -> dict[str, Any] | None:
    """The options `dump` writes `value` as `text` with, trying `indent` first."""
    for option in dict.fromkeys([indent, *INDENTS]):
        if isinstance(option, str):
            continue
        for ascii_ in (False, True):
            layout: dict[str, Any] = {"indent": option} if option is not None else {}
            if ascii_:
                layout["ascii"] = True
            if dump(value, layout, depth) == text:
                return layout
    return None


def indent_of(text: str) -> int | None:
    """The indentation of a JSON document's first member: the spaces that start its second
    line (None when it is on one line)."""
    lines = text.lstrip("\ufeff").split("\n", 2)
    if len(lines) < 2:
        return None
    second = lines[1]
    spaces = len(second) - len(second.lstrip(" "))
    return spaces or None


# --- a file that is one JSON list of records ----------------------------------------------------


def list_layouts(
    text: str, records: list[Any], spans: list[tuple[int, int]]
) -> list[dict[str, Any]]:
    """What each record of a JSON list file needs to be written back as `text` holds it:
    {"keys": key_order, "indent"?, "ascii"?, "end"?} when json.dumps wrote the whole file
    (`end`: what follows its closing bracket, kept when not empty), else the record's own text
    and what stands before it ("before": the opening bracket and spaces for the first record, the
    comma and spaces for the others) and after the last record ("after", kept by every record).
    `spans` are the records' (start, end) offsets in `text`."""
    closing = text.rstrip()
    end = text[len(closing) :]
    for option in (indent_of(text), *(i for i in INDENTS if isinstance(i, int | None))):
        for ascii_ in (False, True):
            layout: dict[str, Any] = {"indent": option} if option is not None else {}
            if ascii_:
                layout["ascii"] = True
            if dump(records, layout) == closing:
                if end:
                    layout["end"] = end
                return [{"keys": key_order(record), **layout} for record in records]
    spans = [(start, start + len(text[start:stop].rstrip())) for start, stop in spans]
    after = text[spans[-1][1] :] if spans else text
    layouts = []
    previous = 0
    for start, stop in spans:
        layouts.append({"text": text[start:stop], "before": text[previous:start], "after": after})
        previous = stop
    return layouts


def write_list(items: list[tuple[Any, dict[str, Any] | None]]) -> str:
    """A JSON list file of `items` (each record's value and its list_layouts entry, None for a
    record imported before layouts were kept): every record as its layout says, a changed
    record kept as text rewritten at the file's indentation. A list none of whose records has a
    layout is written as the exporters always did (indent 2, a final line end)."""
    kept = next((layout for _, layout in items if layout), None)
    if kept is None:
        return json.dumps([value for value, _ in items], ensure_ascii=False, indent=2) + "\n"
    if "text" not in kept:
        layout = {k: v for k, v in kept.items() if k in ("indent", "ascii")}
        values = [in_order(value, (lay or {}).get("keys")) for value, lay in items]
        return dump(values, layout) + kept.get("end", "")
    parts: list[str] = []
    for index, (value, lay) in enumerate(items):
        before = (lay or kept)["before"]
        opens = before.lstrip().startswith("[")
        if index == 0 and not opens:
            before = "[" + before.split(",", 1)[-1]
        elif index > 0 and opens:
            before = "," + before.split("[", 1)[-1]
        text = (lay or {}).get("text")
        if text is None or json.loads(text) != value:
            indent = len(before) - len(before.rstrip(" ")) or None
            order = key_order(json.loads(text)) if text is not None else None
            text = dump(in_order(value, order), {"indent": indent} if indent else {}, 1)
        parts.append(before + text)
    return "".join(parts) + (items[-1][1] or kept)["after"]
