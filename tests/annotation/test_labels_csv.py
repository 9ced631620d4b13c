"""The labels CSV reads its rows with one SQL statement through a server-side cursor: the same
rows, in the same order, as the ORM query it replaced, and so the same bytes (the writer's
identity with the old one is shown in tests/evaluation/test_predictions_csv.py)."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import pytest

from annotation.agreement.data import label_rows
from annotation.agreement.exports import LABEL_COLUMNS, label_rows_long
from annotation.agreement.services import report_params
from annotation.models import Label
from config.csvexport import csv_lines
from tests.annotation.test_agreement_report import pairwise_campaign
from tests.evaluation.test_predictions_csv import old_cell

pytestmark = pytest.mark.django_db


def old_label_rows(campaign: Any) -> list[tuple[Any, ...]]:
    """annotation.agreement.data.label_rows before the change."""
    return list(
        Label.objects.filter(campaign=campaign, is_current=True)
        .order_by("item__position", "annotator__username")
        .values_list(
            "item_id",
            "annotator__username",
            "answers",
            "assignment__shown_order",
            "time_ms",
            "created_at",
        )
    )


class _Echo:
    def write(self, value: str) -> str:
        return value


def old_lines(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow([old_cell(name) for name in header])
    for row in rows:
        yield writer.writerow([old_cell(value) for value in row])


def test_the_labels_rows_and_csv_are_what_the_orm_query_gave() -> None:
    campaign, _run_a, _run_b, _ = pairwise_campaign()
    # hostile answers and notes on a few labels: formulas, quotes, line breaks, unicode
    for n, label in enumerate(Label.objects.filter(campaign=campaign).order_by("pk")[:4]):
        label.answers = {
            **label.answers,
            "extra": ["=1+1", '@"x",\n', "ü", None][n],
            "nested": {"b": [1, "-2"], "a": n},
        }
        label.save(update_fields=["answers"])
    expected = old_label_rows(campaign)
    assert len(expected) > 100
    assert list(label_rows(campaign, chunk=7)) == expected
    params = report_params(metrics=["accuracy"], resamples=20)
    got = "".join(csv_lines(LABEL_COLUMNS, label_rows_long(campaign, params)))
    assert got == "".join(old_lines(LABEL_COLUMNS, label_rows_long(campaign, params)))
