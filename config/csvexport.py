"""Streamed CSV downloads, safe to open in a spreadsheet.

Cells come from model outputs and imported texts, so a cell that a spreadsheet would read as a
formula (starting with =, +, -, @, a tab or a carriage return) is neutralised with a leading
apostrophe, as OWASP recommends; the apostrophe is shown, never evaluated. Numbers stay numbers.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from django.http import StreamingHttpResponse

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_FORMULA_FIRST = frozenset("".join(FORMULA_STARTS))
# Rows written into one chunk of the response: one write per chunk instead of one per row
# (a million-row export is otherwise a million trips through the WSGI server).
ROWS_PER_CHUNK = 1000


def csv_cell(value: Any) -> Any:
    # The common types first, by exact type (bool is an int, so it cannot take the int path).
    kind = type(value)
    if kind is str:
        return "'" + value if value and value[0] in _FORMULA_FIRST else value
    if kind is int or kind is float:
        return value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return value
    if not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False, sort_keys=True)
    if value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_lines(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Iterator[str]:
    """The CSV text in chunks: the header line at once (the first byte does not wait for the
    rows), then ROWS_PER_CHUNK rows at a time."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow([csv_cell(name) for name in header])
    yield buffer.getvalue()
    cell = csv_cell
    pending = 0
    buffer.seek(0)
    buffer.truncate()
    first = _FORMULA_FIRST
    for row in rows:
        # csv_cell inlined for what most cells are (numbers, and text that starts with no
        # formula character); the rest go through it.
        writer.writerow(
            [
                value
                if (kind := type(value)) is int
                or kind is float
                or (kind is str and not (value and value[0] in first))
                else cell(value)
                for value in row
            ]
        )
        pending += 1
        if pending == ROWS_PER_CHUNK:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
            pending = 0
    if pending:
        yield buffer.getvalue()


def csv_response(
    filename: str, header: Sequence[str], rows: Iterable[Sequence[Any]]
) -> StreamingHttpResponse:
    response = StreamingHttpResponse(csv_lines(header, rows), content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
