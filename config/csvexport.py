"""Streamed CSV downloads, safe to open in a spreadsheet.

Cells come from model outputs and imported texts, so a cell that a spreadsheet would read as a
formula (starting with =, +, -, @, a tab or a carriage return) is neutralised with a leading
apostrophe, as OWASP recommends; the apostrophe is shown, never evaluated. Numbers stay numbers.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from django.http import StreamingHttpResponse

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
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


class _Echo:
    def write(self, value: str) -> str:
        return value


def csv_lines(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow([csv_cell(name) for name in header])
    for row in rows:
        yield writer.writerow([csv_cell(value) for value in row])


def csv_response(
    filename: str, header: Sequence[str], rows: Iterable[Sequence[Any]]
) -> StreamingHttpResponse:
    response = StreamingHttpResponse(csv_lines(header, rows), content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
