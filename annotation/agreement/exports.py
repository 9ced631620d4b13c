"""The agreement CSVs, streamed, every text cell neutralised against spreadsheet formulas
(config.csvexport): the summary (one row per statistic) and the ratings in long format (one
row per item x rater x question, with the item's keys)."""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterator
from typing import Any

from django.db import connection, transaction
from psycopg import sql

from annotation.agreement.data import (
    ITEM_KEY_COLUMNS,
    LABEL_ORDER,
    LABELS_FROM,
    automatic_ratings,
    campaign_items,
    item_keys,
    label_rows,
    metric_directions,
    question_coders,
)
from annotation.agreement.report import SUMMARY_COLUMNS, summary_rows
from annotation.kinds import kind_named
from annotation.models import Campaign, Question
from config.csvexport import (
    copy_csv_lines,
    csv_lines,
    csv_rows_lf,
    json_cell_sql,
    text_cell_sql,
)
from config.dbstats import by_primary_key

LABEL_COLUMNS = (
    "campaign_id",
    *ITEM_KEY_COLUMNS,
    "rater_kind",
    "rater",
    "question",
    "answer",
    "code",
    "shown_order",
    "time_ms",
    "labelled_at",
)


def summary_csv_lines(report: dict[str, Any]) -> Iterator[str]:
    """The summary CSV of a report, with the rows of the sections its kind declares."""
    return csv_lines(
        SUMMARY_COLUMNS, summary_rows(report, kind_named(report["kind"]).report_sections)
    )


def _code(value: float) -> float | str:
    if math.isnan(value):
        return ""
    return int(value) if float(value).is_integer() else value


def _answer(value: Any) -> Any:
    if isinstance(value, list):
        return "|".join(str(v) for v in value)
    return value


def label_rows_long(campaign: Campaign, params: dict[str, Any]) -> Iterator[tuple[Any, ...]]:
    """LABEL_COLUMNS rows: every annotator's answer to every question (a multiple-choice
    question once per choice, coded 1 chosen / 0 not), then the judges' and metrics' codes. A
    lower-is-better metric's answer is its value (a pair's: the sign of A's minus B's) and its
    code that value with the sign turned, as the report compares it."""
    keys = item_keys(campaign)
    coders = question_coders(campaign)
    for item_id, username, answers, shown_order, time_ms, created_at in label_rows(campaign):
        item = keys.get(item_id)
        if item is None:
            continue
        for coder in coders:
            raw = (answers or {}).get(coder.source_key)
            yield (
                campaign.pk,
                *item,
                "human",
                username,
                coder.key,
                _answer(raw),
                _code(coder.code(raw)),
                shown_order,
                time_ms,
                created_at.isoformat(),
            )
    yield from automatic_label_rows(campaign, params, coders, keys)


def automatic_label_rows(
    campaign: Campaign,
    params: dict[str, Any],
    coders: list[Any],
    keys: dict[int, tuple] | None = None,
) -> Iterator[tuple[Any, ...]]:
    """The judges' and metrics' rows of label_rows_long."""
    if not (params.get("metrics") or params.get("judges")):
        return
    keys = item_keys(campaign) if keys is None else keys
    items = campaign_items(campaign)
    directions = metric_directions(campaign, params.get("metrics", []))
    automatic, _shown = automatic_ratings(
        items, coders, metrics=directions, judges=params.get("judges", [])
    )
    for rater, by_question in automatic:
        turned = -1.0 if rater.direction == "lower" else 1.0
        for coder in coders:
            column = by_question.get(coder.key)
            if column is None:
                continue
            for (item_id, *_rest), value in zip(items, column, strict=True):
                if math.isnan(value):
                    continue
                yield (
                    campaign.pk,
                    *keys[item_id],
                    rater.kind,
                    rater.name,
                    coder.key,
                    _code(turned * value),
                    _code(value),
                    "",
                    None,
                    "",
                )


def label_csv_lines(campaign: Campaign, params: dict[str, Any]) -> Iterator[str]:
    """The labels CSV: LABEL_COLUMNS rows as label_rows_long gives them. The annotators' rows,
    the bulk, are written by PostgreSQL's COPY (config.csvexport.copy_csv_lines: lines end
    with \n, JSON answers are jsonb's text), their codes looked up in a VALUES list of the
    questions' codes (human_label_query); the judges' and metrics' rows follow, written here
    with the same line ends. An item-choices question's codes (categories found in the
    answers, coded by first appearance) are made before the COPY by _Coder.code itself, from
    each distinct answer in the order it first appears (open_set_codes), so they are
    label_rows_long's whatever the answers hold; that query and the COPY read one snapshot
    (_one_snapshot), so a label changed while the CSV is written is in neither (an answer the
    codes lack would stop the COPY with an error naming it). A CSV reader gets
    label_rows_long's cells; what differs in the text: an answer that is a JSON object is
    jsonb's text (keys shortest first, numbers as stored), and so is an object or list inside
    a list of choices (Python wrote its repr), and a number is written as stored (1.50, where
    Python wrote 1.5)."""
    coders = question_coders(campaign)
    with _one_snapshot(any(coder.open_set for coder in coders)):
        query = human_label_query(campaign, coders, open_set_codes(campaign, coders))
        for block in copy_csv_lines(LABEL_COLUMNS, query):
            yield block.decode()
    yield from csv_rows_lf(automatic_label_rows(campaign, params, coders))


@contextlib.contextmanager
def _one_snapshot(needed: bool) -> Iterator[None]:
    """A read-only REPEATABLE READ transaction, when `needed` and no transaction is open
    (one already open is the caller's to choose): its statements read one snapshot, so the
    open-set codes made first are those of every answer the COPY reads."""
    if not needed or connection.in_atomic_block:
        yield
        return
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield


# Per question key, every distinct answer under it (jsonb's text, what human_label_query looks
# up), in the order it first appears in label_rows' order (data.LABEL_ROWS_SQL).
OPEN_SET_ANSWERS_SQL = f"""
SELECT s.source, (x.answers -> s.source)::text AS answer
FROM (
    SELECT l.answers, row_number() OVER (ORDER BY {LABEL_ORDER}) AS n
    FROM {LABELS_FROM}
    WHERE l.campaign_id = %s AND l.is_current
) x
CROSS JOIN unnest(%s::text[]) AS s(source)
WHERE x.answers -> s.source IS NOT NULL
GROUP BY s.source, answer
ORDER BY s.source, min(x.n)
"""  # noqa: S608 - constants of annotation.agreement.data


def open_set_codes(campaign: Campaign, coders: list[Any]) -> dict[str, dict[str, str]]:
    """Per open-set coder's key (an item-choices question), the code cell of every answer
    (by jsonb's text of it) the campaign's current labels give: the distinct answers, in the
    order they first appear, coded by the coder (which it fills as label_rows_long would).
    Two answers of one text (["a", "b"] and "a + b") are given its one code; no answer
    (null, "") none."""
    open_coders = [coder for coder in coders if coder.open_set]
    if not open_coders:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            OPEN_SET_ANSWERS_SQL,
            [campaign.pk, sorted({coder.source_key for coder in open_coders})],
        )
        rows = cursor.fetchall()
    answers: dict[str, list[str]] = {}
    for source, answer in rows:
        answers.setdefault(source, []).append(answer)
    out: dict[str, dict[str, str]] = {}
    for coder in open_coders:
        cells = out[coder.key] = {}
        for answer in answers.get(coder.source_key, []):
            code = coder.code(json.loads(answer))
            if not math.isnan(code):
                cells[answer] = str(_code(code))
    return out


# A text that float() reads as a finite number (what _number accepts), which numeric reads too.
NUMBER_PATTERN = r"^\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\s*$"


# Python's str() of a JSON scalar: what a choice's answer is compared as (_Coder.code).
def _py_str_sql(x: sql.Composable) -> sql.Composed:
    return sql.SQL(
        "CASE jsonb_typeof({x}) WHEN 'string' THEN {x} #>> '{{}}'"
        " WHEN 'boolean' THEN CASE WHEN {x} = 'true'::jsonb THEN 'True' ELSE 'False' END"
        " WHEN 'null' THEN 'None' ELSE {x}::text END"
    ).format(x=x)


def human_label_query(
    campaign: Campaign, coders: list[Any], open_codes: dict[str, dict[str, str]]
) -> sql.Composed:
    """The annotators' rows of label_rows_long as the cells' text, for COPY: every current
    label x every coder (a VALUES list in the coders' order), in the order of label_rows.
    `open_codes`: open_set_codes(campaign, coders); an answer to an item-choices question that
    it does not code (a label changed since) stops the COPY with an error naming it."""
    p = sql.SQL
    raw = p("v.answer")
    coder_rows = p(", ").join(
        p("({}, {}, {}, {}, {}, {}::jsonb)").format(
            sql.Literal(n),
            sql.Literal(coder.key),
            sql.Literal(coder.source_key),
            sql.Literal(
                "choice"
                if coder.choice is not None
                else "open"
                if coder.open_set
                else "pairwise"
                if coder.scale == Question.Scale.PAIRWISE
                else "codes"
            ),
            sql.Literal(coder.choice),
            # answer as Python's str() -> the code's text; item choices: jsonb's text of it
            sql.Literal(
                json.dumps(
                    open_codes[coder.key]
                    if coder.open_set
                    else {text: str(_code(code)) for text, code in coder.codes.items()}
                )
            ),
        )
        for n, coder in enumerate(coders)
    )
    # as _Coder.code: no answer (missing, null, "") is no code
    empty = p("({r} IS NULL OR {r} = 'null'::jsonb OR {r} = '\"\"'::jsonb)").format(r=raw)
    # a pairwise answer: a number, or a text that reads as one, that is 1, 0 or -1
    number = p(
        "CASE jsonb_typeof({r}) WHEN 'number' THEN ({r})::numeric"
        " WHEN 'string' THEN CASE WHEN ({r} #>> '{{}}') ~ {pattern}"
        " THEN ({r} #>> '{{}}')::numeric END END"
    ).format(r=raw, pattern=sql.Literal(NUMBER_PATTERN))
    chosen = p(
        "EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof({r}) = 'array'"
        " THEN {r} ELSE jsonb_build_array({r}) END) AS e(v) WHERE {v} = q.choice)"
    ).format(r=raw, v=_py_str_sql(p("e.v")))
    code = p(
        "CASE WHEN {empty} THEN NULL"
        " WHEN q.kind = 'choice' THEN CASE WHEN {chosen} THEN '1' ELSE '0' END"
        " WHEN q.kind = 'pairwise' THEN CASE WHEN {number} IN (1, 0, -1)"
        " THEN trunc({number})::int::text END"
        " WHEN q.kind = 'open' THEN coalesce(q.codes ->> ({r})::text, {uncoded})"
        " ELSE q.codes ->> ({text}) END"
    ).format(
        empty=empty,
        chosen=chosen,
        number=number,
        r=raw,
        text=_py_str_sql(raw),
        # never an empty code for an answer: the cast fails, naming it, if one is reached
        uncoded=p("({} || ({})::text)::int::text").format(
            sql.Literal("an answer changed while the labels CSV was written: "), raw
        ),
    )
    # _answer: several choices joined by |, each as Python's str() of it
    joined = p(
        "(SELECT string_agg({v}, '|' ORDER BY e.o) FROM jsonb_array_elements({r})"
        " WITH ORDINALITY AS e(v, o))"
    ).format(r=raw, v=_py_str_sql(p("e.v")))
    answer = p("CASE WHEN jsonb_typeof({r}) = 'array' THEN {joined} ELSE {json} END").format(
        r=raw, joined=text_cell_sql(joined), json=json_cell_sql(raw)
    )
    labelled_at = p(
        "to_char(l.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS')"
        " || CASE WHEN date_part('microseconds', l.created_at)::int % 1000000 <> 0"
        " THEN to_char(l.created_at AT TIME ZONE 'UTC', '.US') ELSE '' END || '+00:00'"
    )
    # A label's own cells, made once per label in the inner query (not once per question): the
    # item's keys (annotation.agreement.data.item_keys), then the rater's.
    item_cells = [
        (p("i.id"), "item_id"),
        (p("i.position"), "position"),
        (p("i.sample_id"), "sample_id"),
        (text_cell_sql(p("s.external_id")), "external_id"),
        (text_cell_sql(p("t.name")), "tool"),
        (p("i.prediction_id"), "prediction_id"),
        (p("i.prediction_b_id"), "prediction_b_id"),
        (p("pa.run_id"), "run_a"),
        (p("pb.run_id"), "run_b"),
        (json_cell_sql(p("(i.payload -> 'api')")), "api"),
    ]
    rater_cells = [
        (text_cell_sql(p("u.username")), "rater"),
        (text_cell_sql(p("a.shown_order")), "shown_order"),
        (p("l.time_ms"), "time_ms"),
        (labelled_at, "labelled_at"),
    ]
    columns = [
        sql.Literal(campaign.pk),
        *(p("x.{}").format(sql.Identifier(name)) for _, name in item_cells),
        p("'human'"),
        p("x.rater"),
        text_cell_sql(p("q.key")),
        answer,
        code,
        p("x.shown_order"),
        p("x.time_ms"),
        p("x.labelled_at"),
    ]
    # The labels sorted first (their cells and answers, narrow rows), then each label's rows
    # made in the coders' order: the sort is of the labels, not of a million wide rows of cells.
    return p(
        "WITH q(n, key, source, kind, choice, codes) AS (VALUES {coders})"
        " SELECT {columns} FROM ("
        " SELECT {cells}, l.answers, u.username"
        " FROM {labels}"
        " {sample} {tool} {run_a} {run_b}"
        " WHERE l.campaign_id = {campaign} AND l.is_current"
        " ORDER BY {order} OFFSET 0"
        ") x CROSS JOIN q"
        # the answer to the question looked up once, not by every expression that reads it
        " CROSS JOIN LATERAL (SELECT x.answers -> q.source AS answer OFFSET 0) v"
        " ORDER BY x.position, x.username, q.n"
    ).format(
        coders=coder_rows,
        columns=p(", ").join(columns),
        cells=p(", ").join(
            p("{} AS {}").format(cell, sql.Identifier(name))
            for cell, name in item_cells + rater_cells
        ),
        labels=p(LABELS_FROM),
        # by primary key whatever the statistics say (config.dbstats.by_primary_key)
        sample=p(
            by_primary_key("benchmarks_sample", "external_id", "i.sample_id", "s", outer=True)
        ),
        tool=p(by_primary_key("benchmarks_tool", "name", "i.tool_id", "t", outer=True)),
        run_a=p(
            by_primary_key("evaluation_prediction", "run_id", "i.prediction_id", "pa", outer=True)
        ),
        run_b=p(
            by_primary_key("evaluation_prediction", "run_id", "i.prediction_b_id", "pb", outer=True)
        ),
        order=p(LABEL_ORDER),
        campaign=sql.Literal(campaign.pk),
    )
