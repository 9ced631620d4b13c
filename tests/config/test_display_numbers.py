"""One format per kind of number (config.display), hand-computed: counts whole, percentages with
two decimals, other scores four, a pace one, a cost four; no value is a dash."""

from __future__ import annotations

from decimal import Decimal

import pytest

from benchmarks.kit.judging import metric_unit
from config.display import cost, count, in_unit_of, per_second, percent, score


@pytest.mark.parametrize(
    ("value", "shown"),
    [(20.0, "20"), (20, "20"), (0.0, "0"), (2.5, "2.50"), (None, "—"), (Decimal("7"), "7")],
)
def test_a_count_is_a_whole_number(value: object, shown: str) -> None:
    assert count(value) == shown


def test_rates_and_percentages_have_a_fixed_precision() -> None:
    assert [percent(v) for v in (50, 50.5, 8.333333, 100.0, 0)] == [
        "50.00",
        "50.50",
        "8.33",
        "100.00",
        "0.00",
    ]
    assert [score(v) for v in (1, 0.12345, 0.5)] == ["1.0000", "0.1235", "0.5000"]
    assert [per_second(v) for v in (3, 2.25, 0.04)] == ["3.0", "2.2", "0.0"]
    assert cost(Decimal("0.00126")) == "0.0013"
    assert cost(Decimal("1.5")) == "1.5000"
    # no value, and what is not a number, as they are
    assert percent(None) == score(None) == "—"
    assert score("n/a") == "n/a"
    assert percent(True) == "True"


def test_a_value_in_the_unit_of_its_metric() -> None:
    counted = {"count": True, "percent": False}
    share = {"count": False, "percent": True}
    other = {"count": False, "percent": False}
    assert [in_unit_of(40.0, m) for m in (counted, share, other)] == ["40", "40.00", "40.0000"]
    assert in_unit_of(0.25, None) == "0.2500"


def test_a_judge_jobs_counts_are_counts_and_its_shares_percentages() -> None:
    assert [metric_unit("pairwise", n) for n in ("items", "repeats", "win", "win_std")] == [
        "count",
        "count",
        "percent",
        "percent",
    ]
    assert metric_unit("pointwise", "clarity") == "score"
    assert metric_unit("pointwise", "judgments") == "count"
