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


# --- a file that is one JSON list of records, or one object of members ----------------------


def record_layouts(
    text: str, document: list[Any] | dict[str, Any], spans: list[tuple[int, int]]
) -> list[dict[str, Any]]:
    """What each record of a JSON file holding a list of records (or an object of members, such
    as name -> description) needs to be written back as `text` holds it: {"keys": key_order,
    "indent"?, "ascii"?, "end"?} when json.dumps wrote the whole file (`end`: what follows its
    closing bracket, kept when not empty), else the record's own text (a member's: its key,
    colon and value), what stands before it ("before": the opening bracket and spaces for the
    first record, the comma and spaces for the others) and what follows the last record
    ("after", kept by every record). `spans` are the records' (start, end) offsets in `text`."""
    values = list(document.values()) if isinstance(document, dict) else document
    body = text.rstrip()
    end = text[len(body) :]
    for option in dict.fromkeys([indent_of(text), *INDENTS]):
        if isinstance(option, str):
            continue
        for ascii_ in (False, True):
            layout: dict[str, Any] = {"indent": option} if option is not None else {}
            if ascii_:
                layout["ascii"] = True
            if dump(document, layout) == body:
                if end:
                    layout["end"] = end
                return [{"keys": key_order(value), **layout} for value in values]
    spans = [(start, start + len(text[start:stop].rstrip())) for start, stop in spans]
    after = text[spans[-1][1] :] if spans else text
    layouts = []
    previous = 0
    for start, stop in spans:
        layouts.append({"text": text[start:stop], "before": text[previous:start], "after": after})
        previous = stop
    return layouts


Item = tuple[str | None, Any, "dict[str, Any] | None"]


def write_records(items: list[Item]) -> str:
    """A JSON file of `items`: (key, value, layout) for an object's members, (None, value,
    layout) for a list's records; the layout is record_layouts' entry, None for a record
    imported before layouts were kept. Every record is written as its layout says; one kept as
    text and changed since is rewritten at the file's indentation, its keys in the published
    order. A file none of whose records has a layout is written as the exporters always did
    (indent 2, a final line end)."""
    is_object = bool(items) and items[0][0] is not None
    document: Any = (
        {key: value for key, value, _ in items} if is_object else [v for _, v, _ in items]
    )
    kept = next((layout for _, _, layout in items if layout), None)
    if kept is None:
        return json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    if "text" not in kept:
        layout = {k: v for k, v in kept.items() if k in ("indent", "ascii")}
        ordered = [in_order(value, (lay or {}).get("keys")) for _, value, lay in items]
        document = dict(zip(document, ordered, strict=True)) if is_object else ordered
        return dump(document, layout) + str(kept.get("end", ""))
    bracket = "{" if is_object else "["
    parts: list[str] = []
    for index, (key, value, lay) in enumerate(items):
        before = (lay or kept)["before"]
        opens = before.lstrip().startswith(bracket)
        if index == 0 and not opens:
            before = bracket + before.split(",", 1)[-1]
        elif index > 0 and opens:
            before = "," + before.split(bracket, 1)[-1]
        text = (lay or {}).get("text")
        published = _record_value(key, text)
        if published is _NOTHING or published != value:
            indent = len(before) - len(before.rstrip(" ")) or None
            order = None if published is _NOTHING else key_order(published)
            text = dump(in_order(value, order), {"indent": indent} if indent else {}, 1)
            if key is not None:
                text = f"{json.dumps(key, ensure_ascii=False)}: {text}"
        parts.append(before + str(text))
    return "".join(parts) + str((items[-1][2] or kept)["after"])


_NOTHING = object()


def _record_value(key: str | None, text: str | None) -> Any:
    """The value a record's published text holds (a member's: if it is the member `key`)."""
    if text is None:
        return _NOTHING
    if key is None:
        return json.loads(text)
    member = json.loads("{" + text + "}")
    return member[key] if list(member) == [key] else _NOTHING


def document_layout(text: str, value: Any) -> dict[str, Any]:
    """How a whole small JSON file is written: {"keys", "indent"?, "ascii"?, "end"?} when
    json.dumps wrote it, else {"text": the file} (a file written by hand)."""
    body = text.rstrip()
    layout = record_layout(body, value, 0, indent_of(body))
    if layout is None:
        return {"text": text}
    if text[len(body) :]:
        layout["end"] = text[len(body) :]
    return {"keys": key_order(value), **layout}


def write_document(value: Any, layout: dict[str, Any] | None) -> str:
    """`value` as document_layout's `layout` says: the published text while it holds `value`,
    else json.dumps with the published options and key order (indent 2, a final line end, for
    a document imported before layouts were kept)."""
    if not layout:
        return json.dumps(value, ensure_ascii=False, indent=2) + "\n"
    text = layout.get("text")
    if text is not None:
        published = json.loads(text)
        if published == value:
            return str(text)
        return dump(in_order(value, key_order(published)), {"indent": indent_of(text)}) + "\n"
    return dump(in_order(value, layout.get("keys")), layout) + str(layout.get("end", ""))
