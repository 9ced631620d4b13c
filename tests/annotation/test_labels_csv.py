"""The labels CSV reads its rows with one SQL statement through a server-side cursor: the same
rows, in the same order, as the ORM query it replaced, and so the same bytes (the writer's
identity with the old one is shown in tests/evaluation/test_predictions_csv.py)."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import psycopg
import pytest
from django.db import connection

from annotation.agreement.data import label_rows, question_coders
from annotation.agreement.exports import (
    LABEL_COLUMNS,
    human_label_query,
    label_csv_lines,
    label_rows_long,
    open_set_codes,
)
from annotation.agreement.services import report_params
from annotation.models import Label, Question
from config.csvexport import copy_csv_lines, csv_lines
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


# An item-choices question's answers as stored (a list of the item's choices in their order, one
# choice, or none), and what else may be stored under its key. Listed here in the order of the
# labels' primary keys; the CSV lists them by item position and annotator.
TOOL_ANSWERS: list[Any] = [
    ["weather", "search"],
    "=1+1",
    ["=1+1"],  # the same text as the single choice: the same code
    ['a "quoted", comma'],
    [],  # "(none)"
    [""],  # "(none)" too
    ["search", "weather"],  # another order, another text
    "line\nbreak",
    None,  # no answer: no code
    "",  # no answer: no code
    ["ü→✓", "@x"],
    "a + b",
    ["a", "b"],  # the same text as "a + b"
    [True, 1, 1.5, None],  # "True + 1 + 1.5 + None"
    ["True", "1", "1.5", "None"],  # the same text
    1.0,  # "1.0": not the text of 1
    1,
    1.5,
    [["x"], {"k": "v"}],  # Python's repr of each
    "zzz",
]


def item_choices_campaign() -> Any:
    """hostile_labels_campaign with an item-choices question "tools", answered as in
    TOOL_ANSWERS (every 23rd label without the key), and one number stored as 1.50 (read as
    the float 1.5, as the answer 1.5 of another label)."""
    campaign = hostile_labels_campaign()
    Question.objects.create(
        campaign=campaign, key="tools", text="=Tools", scale="item_choices", order=9
    )
    labels = list(Label.objects.filter(campaign=campaign).order_by("pk"))
    for n, label in enumerate(labels):
        if n % 23 != 22:
            label.answers = {**label.answers, "tools": TOOL_ANSWERS[n % len(TOOL_ANSWERS)]}
            label.save(update_fields=["answers"])
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE annotation_label SET answers = answers || '{\"tools\": 1.50}'::jsonb"
            " WHERE id = %s",
            [labels[-1].pk],
        )
    return campaign


def test_an_item_choices_campaign_is_copied_with_the_python_codes() -> None:
    campaign = item_choices_campaign()
    params = report_params(metrics=[], resamples=20)
    expected_text = "".join(csv_lines(LABEL_COLUMNS, label_rows_long(campaign, params)))
    text = "".join(label_csv_lines(campaign, params))
    # the codes exactly, the answers as text or as equal JSON; a list inside the choices is
    # written as jsonb's text, not Python's repr (label_csv_lines)
    nested = "['x']|{'k': 'v'}"
    assert nested in expected_text
    expected_text = expected_text.replace(nested, '"[""x""]|{""k"": ""v""}"')
    assert_reads_the_same(text.encode(), expected_text.encode())
    # written by COPY: its lines end with \n (csv_lines' with \r\n)
    assert "\r\n" in expected_text
    assert "\r\n" not in text
    rows = cells(text.encode())[1:]
    question, answer, code = (LABEL_COLUMNS.index(c) for c in ("question", "answer", "code"))
    tools = [(row[answer], row[code]) for row in rows if row[question] == "tools"]
    # coded by first appearance, which here is not the texts' sorted order
    firsts = list(dict.fromkeys(c for _a, c in tools if c))
    assert firsts == [str(n) for n in range(len(firsts))]
    first_answers = list(dict.fromkeys(a for a, c in tools if c))
    assert first_answers != sorted(first_answers)
    codes: dict[str, set[str]] = {}
    for cell, value in tools:
        codes.setdefault(cell, set()).add(value)
    assert len(codes["'=1+1"]) == 1  # "=1+1" and ["=1+1"]
    assert codes["weather|search"] != codes["search|weather"]
    assert codes["a + b"] == codes["a|b"] and codes["1.0"] != codes["1"]
    assert codes["1.50"] == codes["1.5"]  # 1.50 as jsonb writes it, 1.5 as Python does
    assert len(codes[""]) == 2 and "" in codes[""]  # no answer; "(none)" ([] and [""])
    assert len({c for values in codes.values() for c in values}) > 12


def test_an_answer_not_coded_before_the_copy_is_an_error() -> None:
    campaign = item_choices_campaign()
    coders = question_coders(campaign)
    codes = open_set_codes(campaign, coders)
    label = Label.objects.filter(campaign=campaign).order_by("pk").first()
    assert label is not None
    label.answers = {**label.answers, "tools": ["new"]}
    label.save(update_fields=["answers"])
    with pytest.raises(psycopg.DataError, match="new"):
        list(copy_csv_lines(LABEL_COLUMNS, human_label_query(campaign, coders, codes)))


@pytest.mark.django_db(transaction=True)
def test_a_label_changed_while_the_csv_is_written_is_not_in_it() -> None:
    """The codes and the COPY read one snapshot: an answer another connection commits after
    the codes were made neither stops the CSV nor gets a code the codes do not have."""
    campaign = item_choices_campaign()
    params = report_params(metrics=[], resamples=20)
    before = "".join(label_csv_lines(campaign, params))
    lines = label_csv_lines(campaign, params)
    header = next(lines)  # the codes are made; the COPY has not begun
    label = Label.objects.filter(campaign=campaign).order_by("pk").first()
    assert label is not None
    db = connection.settings_dict
    with psycopg.connect(
        dbname=db["NAME"], user=db["USER"], host=db["HOST"], port=db["PORT"] or None
    ) as other:
        other.execute(
            "UPDATE annotation_label SET answers = answers || %s::jsonb WHERE id = %s",
            ['{"tools": ["new"]}', label.pk],
        )
    assert header + "".join(lines) == before
    assert "new" in "".join(label_csv_lines(campaign, params))  # and the next CSV has it
