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

from django.db import connection
from django.http import StreamingHttpResponse
from psycopg import sql

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


# --- CSVs written by PostgreSQL ----------------------------------------------------------------
#
# A large export's body comes from `COPY (SELECT ...) TO STDOUT (FORMAT csv)`: PostgreSQL
# quotes and writes every row, Python only passes its blocks on. The SELECT gives each column
# as the text the cell shows, made by the expressions below, with the rules of csv_cell:
# formulas neutralised, booleans as true/false, JSON as JSON text, an empty text as an empty
# cell (COPY would write "" for it). What differs from csv_lines, and why it is not worth a row
# of Python per row: lines end with \n (COPY's; the header is written the same way), JSON is
# PostgreSQL's jsonb text (object keys shortest first, not sorted; numbers as jsonb keeps them,
# 1e-05 as 0.00001), and COPY also quotes a cell that is just `\.`. A CSV reader reads the
# same cells.

# Bytes handed to the response at once: COPY sends a row per message, and a write per row
# through the WSGI server would cost more than the row.
COPY_BLOCK_BYTES = 256 * 1024
_FORMULA_CODES = ", ".join(str(ord(c)) for c in FORMULA_STARTS)


def text_cell_sql(expr: sql.Composable) -> sql.Composed:
    """A text column as its cell: formula neutralised, empty as NULL (an empty cell)."""
    return sql.SQL(
        "CASE WHEN ascii({x}) IN ({codes}) THEN '''' || {x} ELSE NULLIF({x}, '') END"
    ).format(x=expr, codes=sql.SQL(_FORMULA_CODES))


def bool_cell_sql(expr: sql.Composable) -> sql.Composed:
    return sql.SQL("CASE WHEN {x} THEN 'true' WHEN NOT {x} THEN 'false' END").format(x=expr)


def json_cell_sql(
    expr: sql.Composable, *, whole: bool = False, text: sql.Composable | None = None
) -> sql.Composed:
    """A jsonb value as its cell: a string as a text cell, null as empty, anything else as its
    JSON text; `whole`: a number that is whole without its fraction (as_count's 2.0 -> 2).
    `text`: the same value as text, when `expr` is a field of an object (`o ->> 'key'` for
    `o -> 'key'`): `->>` gives a string unquoted and anything else as its JSON text, the same
    text as below, without making the value's jsonb and then writing it out."""
    number = (
        sql.SQL(
            " WHEN 'number' THEN CASE WHEN {x}::numeric = trunc({x}::numeric)"
            " THEN trunc({x}::numeric)::text ELSE {t} END"
        ).format(x=expr, t=text if text is not None else sql.SQL("{x}::text").format(x=expr))
        if whole
        else sql.SQL("")
    )
    as_text = text if text is not None else sql.SQL("({x} #>> '{{}}')").format(x=expr)
    return sql.SQL(
        "CASE jsonb_typeof({x}) WHEN 'string' THEN {string} WHEN 'null' THEN NULL{number}"
        " ELSE {other} END"
    ).format(
        x=expr,
        string=text_cell_sql(as_text),
        number=number,
        other=text if text is not None else sql.SQL("{x}::text").format(x=expr),
    )


def csv_rows_lf(rows: Iterable[Sequence[Any]]) -> Iterator[str]:
    """Rows (no header) with csv_lines' cells, each line ended with \n as COPY ends its lines
    (written with \r\n first, so that a cell holding a \r is quoted as COPY quotes it)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    out: list[str] = []
    for row in rows:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow([csv_cell(value) for value in row])
        out.append(buffer.getvalue()[:-2] + "\n")
        if len(out) == ROWS_PER_CHUNK:
            yield "".join(out)
            out.clear()
    if out:
        yield "".join(out)


def copy_csv_lines(header: Sequence[str], query: sql.Composable) -> Iterator[bytes]:
    """The header line at once (the first byte waits for no row), then the rows of `query`
    (each column already its cell's text, see above) as PostgreSQL's COPY writes them, in
    blocks of about COPY_BLOCK_BYTES, streamed from the server (flat memory)."""
    buffer = io.StringIO()
    # Written with \r\n, so that a name holding a \r is quoted (as COPY quotes it), then ended
    # with COPY's \n.
    csv.writer(buffer).writerow([csv_cell(name) for name in header])
    yield (buffer.getvalue().removesuffix("\r\n") + "\n").encode()
    copy_sql = sql.SQL("COPY ({}) TO STDOUT (FORMAT csv)").format(query)
    # JIT is off for every connection (config.db): the cells' CASE expressions would have it
    # compile for seconds before the first row.
    with connection.cursor() as cursor, cursor.cursor.copy(copy_sql) as copy:
        read = copy.read
        blocks: list[Any] = []
        size = 0
        while block := read():
            blocks.append(block)
            size += len(block)
            if size >= COPY_BLOCK_BYTES:
                yield b"".join(blocks)
                blocks.clear()
                size = 0
        if blocks:
            yield b"".join(blocks)


def copy_csv_response(
    filename: str, header: Sequence[str], query: sql.Composable
) -> StreamingHttpResponse:
    response = StreamingHttpResponse(copy_csv_lines(header, query), content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
