"""The labels CSV reads its rows with one SQL statement through a server-side cursor: the same
rows, in the same order, as the ORM query it replaced, and so the same bytes (the writer's
identity with the old one is shown in tests/evaluation/test_predictions_csv.py)."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import pytest

from annotation.agreement.data import label_rows
from annotation.agreement.exports import LABEL_COLUMNS, label_csv_lines, label_rows_long
from annotation.agreement.services import report_params
from annotation.models import Label, Question
from config.csvexport import csv_lines
from tests.annotation.test_agreement_report import pairwise_campaign
from tests.evaluation.test_predictions_csv import assert_reads_the_same, cells, old_cell

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


# --- the labels CSV written by COPY -------------------------------------------------------------

HOSTILE_ANSWERS: list[dict[str, Any]] = [
    {"better": 1, "grade": 3, "kind": "=A", "types": ["e1", "=e2"], "level": "low"},
    {"better": "1", "grade": "3", "kind": "a", "types": "e1", "level": "HIGH"},
    {"better": " -1 ", "grade": 3.0, "kind": "+x", "types": [3], "level": " low "},
    {"better": "1.0", "grade": "three", "kind": "B", "types": ["3"], "level": None},
    {"better": "x", "grade": None, "kind": ["B"], "types": [], "level": ""},
    {"better": None, "grade": "", "kind": {"k": 1}, "types": None, "level": ["low"]},
    {"better": "", "grade": 5, "kind": None, "types": [True, None, 1.5], "level": 1},
    {"better": True, "grade": -2, "kind": "", "types": ["e1", "e1"], "level": True},
    {"better": 0.0, "grade": 1e-05, "kind": "\tB", "types": "=e2", "level": "=low"},
    {"better": "-0", "grade": 2.5, "kind": 'a "quoted", comma', "types": ["a|b"], "level": 0},
    {"better": -1, "grade": [1, 2], "kind": "line\nbreak", "types": ["x", 1], "level": "high"},
    {"better": 2, "grade": 4},
]


def hostile_labels_campaign() -> Any:
    campaign, _run_a, _run_b, _ = pairwise_campaign()
    questions = [
        ("grade", "ordinal", False, [{"value": v, "label": str(v)} for v in range(1, 6)]),
        ("kind", "categories", False, [{"value": "=A", "label": "+x"}, {"value": "B"}]),
        ("types", "categories", True, [{"value": "e1"}, {"value": "=e2"}, {"value": 3}]),
        ("level", "ordinal", False, [{"value": "low"}, {"value": "high", "label": "High"}]),
    ]
    for order, (key, scale, multiple, choices) in enumerate(questions, start=1):
        Question.objects.create(
            campaign=campaign,
            key=key,
            text=f"=Q {key}",
            scale=scale,
            multiple=multiple,
            choices=choices,
            order=order,
        )
    for n, label in enumerate(Label.objects.filter(campaign=campaign).order_by("pk")):
        label.answers = HOSTILE_ANSWERS[n % len(HOSTILE_ANSWERS)]
        label.save(update_fields=["answers"])
    return campaign


@pytest.mark.parametrize("metrics", [[], ["accuracy"]])
def test_the_copied_labels_csv_reads_as_the_python_one(metrics: list[str]) -> None:
    campaign = hostile_labels_campaign()
    params = report_params(metrics=metrics, resamples=20)
    expected_text = "".join(csv_lines(LABEL_COLUMNS, label_rows_long(campaign, params)))
    text = "".join(label_csv_lines(campaign, params))
    expected, got = cells(expected_text.encode()), cells(text.encode())
    assert got[0] == expected[0] == list(LABEL_COLUMNS)
    assert len(got) == len(expected) > 500
    answer = LABEL_COLUMNS.index("answer")
    # only JSON answers may be written otherwise (jsonb's key order and numbers)
    assert_reads_the_same(text.encode(), expected_text.encode())
    # every rule was reached: codes of each kind, neutralised cells, JSON answers
    codes = {(row[LABEL_COLUMNS.index("question")], row[answer]) for row in got[1:]}
    assert ("kind", "'=A") in codes and ("types:=e2", "'=e2") in codes
    assert any(row[answer] == "e1|'=e2" or row[answer] == "e1|=e2" for row in got[1:])
    assert "\r\n" not in text.replace("line\nbreak", "")
    if metrics:
        assert any(row[LABEL_COLUMNS.index("rater_kind")] == "metric" for row in got)


def test_a_campaign_with_item_choices_is_written_by_python() -> None:
    campaign = hostile_labels_campaign()
    Question.objects.create(
        campaign=campaign, key="tools", text="Tools", scale="item_choices", order=9
    )
    params = report_params(metrics=[], resamples=20)
    assert "".join(label_csv_lines(campaign, params)) == "".join(
        csv_lines(LABEL_COLUMNS, label_rows_long(campaign, params))
    )
