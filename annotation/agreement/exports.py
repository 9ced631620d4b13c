"""The agreement CSVs, streamed, every text cell neutralised against spreadsheet formulas
(config.csvexport): the summary (one row per statistic) and the ratings in long format (one
row per item x rater x question, with the item's keys)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from annotation.agreement.data import (
    ITEM_KEY_COLUMNS,
    automatic_ratings,
    campaign_items,
    item_keys,
    label_rows,
    metric_directions,
    question_coders,
)
from annotation.agreement.report import SUMMARY_COLUMNS, summary_rows
from annotation.models import Campaign
from config.csvexport import csv_lines

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
    return csv_lines(SUMMARY_COLUMNS, summary_rows(report))


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
    if not (params.get("metrics") or params.get("judges")):
        return
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
    return csv_lines(LABEL_COLUMNS, label_rows_long(campaign, params))
