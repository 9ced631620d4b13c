"""The calibration report's statistics (annotation.calibration.stats) against cases computed by
hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from annotation.agreement import stats as agreement_stats
from annotation.calibration import stats


def test_bins_are_equal_width_and_closed_on_the_right() -> None:
    # 10 bins: (0, .1] ... (.9, 1]; 0 goes to the first, 0.3 is in (.2, .3] despite 0.3 x 10
    # being 3.0000000000000004 in floating point; NaN and values outside [0, 1] in none.
    got = stats.bin_index([0.0, 0.1, 0.3, 0.5, 0.55, 2 / 3, 1.0, math.nan, 1.5, -0.1])
    assert got.tolist() == [0, 0, 2, 4, 5, 6, 9, -1, -1, -1]
    assert stats.bin_index([0.5, 0.51], bins=2).tolist() == [0, 1]
    with pytest.raises(ValueError):
        stats.bin_index([0.5], bins=0)


def test_ece_by_hand() -> None:
    # Six items, 10 bins (the report's):
    #   confidence 1.0, 1.0, 1.0 -> bin (0.9, 1.0]: mean confidence 1.0, correct 1, 1, 0:
    #       accuracy 2/3; gap |2/3 - 1| = 1/3; weight 3/6
    #   confidence 2/3, 2/3 -> bin (0.6, 0.7]: mean confidence 2/3, correct 1, 0: accuracy 1/2;
    #       gap |1/2 - 2/3| = 1/6; weight 2/6
    #   confidence 0.5 -> bin (0.4, 0.5]: mean 0.5, correct 0: accuracy 0; gap 0.5; weight 1/6
    # ECE = 3/6 x 1/3 + 2/6 x 1/6 + 1/6 x 1/2 = 1/6 + 1/18 + 1/12 = (6 + 2 + 3) / 36 = 11/36
    confidence = [1.0, 1.0, 1.0, 2 / 3, 2 / 3, 0.5]
    correct = [1, 1, 0, 1, 0, 0]
    assert stats.expected_calibration_error(confidence, correct) == pytest.approx(11 / 36)
    # the same with two bins: (0, .5] holds 0.5 (gap .5, weight 1/6); (.5, 1] holds the other
    # five, mean confidence (3 + 4/3) / 5 = 13/15, accuracy 3/5, gap 4/15, weight 5/6:
    # ECE = 1/12 + 2/9 = 11/36 again (by coincidence of these numbers)
    assert stats.expected_calibration_error(confidence, correct, bins=2) == pytest.approx(
        1 / 12 + 5 / 6 * 4 / 15
    )


def test_a_perfectly_calibrated_judge_has_no_error_and_an_unsure_always_wrong_one_its_confidence():
    assert stats.expected_calibration_error([1.0, 1.0], [1, 1]) == 0.0
    assert stats.expected_calibration_error([0.5, 0.5], [1, 0]) == 0.0
    assert stats.expected_calibration_error([0.7, 0.7, 0.7], [0, 0, 0]) == pytest.approx(0.7)
    # items without a confidence or a correctness take no part; none at all: no figure
    assert stats.expected_calibration_error([0.7, math.nan], [0, 1]) == pytest.approx(0.7)
    assert stats.expected_calibration_error([], []) is None


def test_reliability_bins_list_every_bin_with_its_accuracy_and_confidence() -> None:
    got = stats.reliability_bins([1.0, 1.0, 1.0, 2 / 3, 2 / 3, 0.5], [1, 1, 0, 1, 0, 0], bins=4)
    # (0, .25], (.25, .5], (.5, .75], (.75, 1]
    assert [b["n"] for b in got] == [0, 1, 2, 3]
    assert got[0] == {"low": 0.0, "high": 0.25, "n": 0, "confidence": None, "accuracy": None}
    assert got[1]["accuracy"] == 0.0 and got[1]["confidence"] == 0.5
    assert got[2]["accuracy"] == 0.5 and got[2]["confidence"] == pytest.approx(2 / 3)
    assert got[3]["accuracy"] == pytest.approx(2 / 3) and got[3]["confidence"] == 1.0


def test_the_weighted_ece_is_the_ece_of_the_items_the_weights_repeat() -> None:
    # profiles (confidence, correct) (1, 1), (1, 0), (.5, 0); the resample (2, 0, 1) is the
    # items (1, right), (1, right), (.5, wrong): bin (.9, 1]: gap 0; bin (.4, .5]: gap .5,
    # weight 1/3 -> 1/6
    confidence, correct = np.array([1.0, 1.0, 0.5]), np.array([1.0, 0.0, 0.0])
    weights = np.array([[2, 0, 1], [1, 1, 0], [0, 0, 0]], dtype=float)
    got = stats.ece_w(confidence, correct, weights)
    assert got[0] == pytest.approx(1 / 6)
    assert got[1] == pytest.approx(0.5)  # (1, right), (1, wrong): accuracy 1/2, confidence 1
    assert math.isnan(got[2])
    # and the bootstrap of annotation.agreement.stats gives it an interval
    profiles = agreement_stats.Profiles.from_matrix(np.column_stack([confidence, correct]))
    estimate = agreement_stats.bootstrap(
        profiles,
        lambda w: stats.ece_w(profiles.rows[:, 0], profiles.rows[:, 1], w),
        n_used=3,
        resamples=200,
    )
    assert estimate.value == pytest.approx(stats.expected_calibration_error(confidence, correct))
    assert estimate.low is not None and estimate.high is not None
    assert estimate.low <= estimate.value <= estimate.high


def test_first_shown_counts_read_the_verdict_as_shown() -> None:
    # AB: A first, so A better (1) is the first shown; BA: B first, so B better (-1) is.
    verdicts = [("AB", 1), ("BA", -1), ("AB", 0), ("BA", 1), ("AB", None), ("", 1)]
    assert stats.first_shown_counts(verdicts) == (2, 1, 1)


def test_order_consistency_counts_repeats_with_both_orders() -> None:
    assert stats.order_consistency([(1, 1), (1, -1), (0, 0), (1, None)]) == (2, 3)
    assert stats.order_consistency([]) == (0, 0)


def test_ratio_w_sums_before_dividing() -> None:
    got = stats.ratio_w([2, 0, 1], [3, 1, 0], np.array([[1, 1, 1], [0, 0, 1]], dtype=float))
    assert got[0] == pytest.approx(3 / 4)
    assert math.isnan(got[1])


def test_longer_wins_counts_decisive_verdicts_on_answers_of_different_lengths() -> None:
    # A longer by 5 and A won: longer won; A shorter by 3 and A won: shorter won; B longer and
    # B won: longer won; a tie and an equal length take no part.
    difference = [5, -3, -2, 4, 0]
    verdict = [1, 1, -1, 0, 1]
    assert stats.longer_wins(difference, verdict) == pytest.approx(2 / 3)
    assert stats.longer_wins([0, 1], [1, 0]) is None
