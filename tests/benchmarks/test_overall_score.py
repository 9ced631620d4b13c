"""The overall score a suite declares (benchmarks/kit/overall.py), computed by hand: each way a
section aggregates, nesting, and a missing part, which makes every section above it missing
(never a zero). Every registered suite's declaration names tasks the suite has or says why not."""

from __future__ import annotations

import pytest

from benchmarks.kit.overall import (
    Figure,
    OverallScore,
    Section,
    TaskScore,
    columns,
    complete_weight,
    figures,
    section_figure,
)
from benchmarks.kit.registry import all_suites


def s(value: float, n: int) -> TaskScore:
    return TaskScore(value, n)


def test_a_mean_counts_every_part_the_same_whatever_its_size() -> None:
    section = Section("a", "A", ("x", "y", "z"), how="mean")
    found = section_figure(section, {"x": s(90.0, 10), "y": s(60.0, 1000), "z": s(30.0, 2)})
    # (90 + 60 + 30) / 3
    assert found == Figure(60.0, 1012, ())


def test_by_count_weighs_each_part_by_its_items() -> None:
    section = Section("a", "A", ("x", "y"), how="by_count")
    found = section_figure(section, {"x": s(80.0, 100), "y": s(20.0, 300)})
    # (80 * 100 + 20 * 300) / 400 = (8000 + 6000) / 400 = 35
    assert found.value == pytest.approx(35.0)
    assert found.n == 400 and found.complete


def test_weighted_normalises_its_weights() -> None:
    section = Section("a", "A", ("x", "y"), how="weighted", weights=(1.0, 3.0))
    found = section_figure(section, {"x": s(100.0, 5), "y": s(0.0, 5)})
    # 100 * 1/4 + 0 * 3/4
    assert found.value == pytest.approx(25.0)


def test_a_nested_mean_is_a_part_like_any_other_not_spread_over_its_tasks() -> None:
    inner = Section("inner", "Inner", ("a", "b", "c"), how="mean")
    outer = Section("outer", "Outer", (inner, "d"), how="mean")
    scores = {"a": s(90.0, 1), "b": s(60.0, 1), "c": s(30.0, 1), "d": s(0.0, 1)}
    # inner = 60; outer = (60 + 0) / 2 = 30 (not (90 + 60 + 30 + 0) / 4 = 45)
    assert section_figure(outer, scores).value == pytest.approx(30.0)


def test_a_section_weighted_by_count_above_weighs_a_sub_section_by_its_items() -> None:
    inner = Section("inner", "Inner", ("a", "b"), how="mean")
    outer = Section("outer", "Outer", (inner, "c"), how="by_count")
    scores = {"a": s(100.0, 1), "b": s(0.0, 3), "c": s(20.0, 4)}
    # inner = 50 over n = 4; outer = (50 * 4 + 20 * 4) / 8 = 35
    assert section_figure(outer, scores) == Figure(35.0, 8, ())


def test_a_missing_task_makes_every_section_above_it_missing_and_names_it() -> None:
    inner = Section("inner", "Inner", ("a", "b"), how="mean")
    other = Section("other", "Other", ("c",), how="mean")
    root = Section("root", "Root", (inner, other), how="weighted", weights=(1.0, 1.0))
    overall = OverallScore(root)
    found = figures(overall, {"a": s(100.0, 2), "c": s(50.0, 3), "b": None})
    assert found["b"] == Figure(None, 0, ("b",))
    assert found["inner"] == Figure(None, 2, ("b",))
    assert found["root"].value is None and found["root"].missing == ("b",)
    # the complete section keeps its value: a partial figure, labelled as a section's
    assert found["other"] == Figure(50.0, 3, ())
    assert complete_weight(overall, found) == pytest.approx(0.5)


def test_a_task_absent_from_the_scores_is_missing_like_one_given_as_none() -> None:
    section = Section("a", "A", ("x", "y"), how="by_count")
    assert section_figure(section, {"x": s(10.0, 1)}).missing == ("y",)
    assert section_figure(section, {}).missing == ("x", "y")


def test_zero_is_a_score_not_a_missing_one() -> None:
    section = Section("a", "A", ("x", "y"), how="mean")
    assert section_figure(section, {"x": s(0.0, 1), "y": s(0.0, 1)}) == Figure(0.0, 2, ())


def test_figures_list_sections_then_counted_then_shown_tasks() -> None:
    inner = Section("inner", "Inner", ("a",), how="mean")
    overall = OverallScore(Section("root", "Root", (inner, "b")), shown=("c",))
    assert list(figures(overall, {})) == ["root", "inner", "a", "b", "c"]
    assert overall.tasks == ("a", "b")


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Section("a", "A", ()), "has no part"),
        (lambda: Section("a", "A", ("x",), how="weighted"), "0 weights for 1 parts"),
        (lambda: Section("a", "A", ("x",), how="weighted", weights=(0.0,)), "positive"),
        (lambda: Section("a", "A", ("x",), weights=(1.0,)), "'weighted' only"),
        (lambda: Section("A b", "A", ("x",)), "lower-case"),
        (lambda: Section("a", "A", ("x",), how="median"), "mean, by_count or weighted"),  # type: ignore[arg-type]
        (lambda: OverallScore(Section("a", "A", ("x", "x"))), "x more than once"),
        (lambda: OverallScore(Section("a", "A", ("a",))), "a names two things"),
        (lambda: OverallScore(Section("a", "A", ("x",)), shown=("x",)), "shown beside"),
        (lambda: OverallScore(Section("a", "A", ("x",)), absent={"y": "?"}), "never counted"),
        (lambda: TaskScore(50.0, 0), "n >= 1"),
        (lambda: TaskScore(float("nan"), 3), "finite"),
    ],
)
def test_a_malformed_declaration_is_refused_saying_what(build: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()  # type: ignore[operator]


def test_every_suite_s_overall_counts_its_tasks_or_says_why_it_has_none() -> None:
    declared = [suite for suite in all_suites() if suite.overall is not None]
    assert declared, "no suite declares an overall score: this test would check nothing"
    for suite in declared:
        assert suite.overall is not None
        for task in (*suite.overall.tasks, *suite.overall.shown):
            assert task in suite.tasks or task in suite.overall.absent, (suite.name, task)
        for task in suite.tasks:
            # the metric and the count are the task's own run metrics
            if task in suite.overall.tasks:
                spec = suite.tasks[task]
                assert suite.overall.metric in spec.metrics, (suite.name, task)
                assert suite.overall.count in spec.metrics, (suite.name, task)


def test_the_columns_put_each_section_before_its_parts_and_the_shown_tasks_last() -> None:
    inner = Section("inner", "Inner", ("a", "b"))
    overall = OverallScore(Section("root", "Root", ("x", inner, "c")), shown=("s",))
    assert [(c.name, c.section, c.depth, c.shown_only) for c in columns(overall)] == [
        ("root", True, 0, False),
        ("x", False, 1, False),
        ("inner", True, 1, False),
        ("a", False, 2, False),
        ("b", False, 2, False),
        ("c", False, 1, False),
        ("s", False, 1, True),
    ]
