"""The calibration report's own statistics, pure numpy (no Django): the expected calibration
error with equal-width bins and the reliability diagram's bins, the share of a pairwise judge's
verdicts for the side shown first, the consistency of its two orders, and how its verdict goes
with the length difference of the answers.

Each has a weighted form ``*_w`` over the profile rows of annotation.agreement.stats (weights
(B, P): how many times each profile occurs in each of B resamples; a (B,) result, NaN where
undefined), so that annotation.agreement.stats.bootstrap gives its interval, and a plain form over
one value per item for the point estimate.
"""

from __future__ import annotations

from typing import Any

import numpy as np

DEFAULT_BINS = 10


def bin_index(confidence: Any, bins: int = DEFAULT_BINS) -> np.ndarray:
    """Per confidence in [0, 1], its bin among `bins` equal-width bins: bin k holds
    (k/bins, (k+1)/bins], the first holds 0 too (a confidence of exactly 0.5 with 10 bins is in
    (0.4, 0.5], bin 4). NaN or out of [0, 1]: -1 (no bin)."""
    if bins < 1:
        raise ValueError("bins must be at least 1")
    c = np.asarray(confidence, dtype=np.float64)
    inside = np.isfinite(c) & (c >= 0.0) & (c <= 1.0)
    safe = np.where(inside, c, 0.0)
    # Rounded first: 0.3 x 10 is 3.0000000000000004 in floating point, and 0.3 is in (0.2, 0.3].
    index = np.clip(np.ceil(np.round(safe * bins, 9)).astype(np.int64) - 1, 0, bins - 1)
    return np.where(inside, index, -1)


def _sums_w(
    confidence: Any, correct: Any, weights: Any, bins: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per resample and bin: the weight of the items in it, their confidences' sum and their
    correct ones' sum (B, bins) each. Items whose confidence or correctness is NaN take no part."""
    c = np.asarray(confidence, dtype=np.float64)
    y = np.asarray(correct, dtype=np.float64)
    w = np.atleast_2d(np.asarray(weights, dtype=np.float64))
    if c.shape != y.shape or c.ndim != 1 or w.shape[1] != len(c):
        raise ValueError("one confidence and one correctness per profile, weights (B, P)")
    index = bin_index(c, bins)
    index = np.where(np.isnan(y), -1, index)
    member = np.zeros((len(c), bins))
    used = index >= 0
    member[np.flatnonzero(used), index[used]] = 1.0
    n = w @ member
    conf = w @ (member * np.where(used, c, 0.0)[:, None])
    hits = w @ (member * np.where(used, y, 0.0)[:, None])
    return n, conf, hits


def ece_w(confidence: Any, correct: Any, weights: Any, bins: int = DEFAULT_BINS) -> np.ndarray:
    """(B,) expected calibration error: sum over bins of (items in bin / items) x |accuracy in
    bin - mean confidence in bin| = sum over bins of |correct - confidence summed in the bin| /
    items. NaN for a resample with no item."""
    n, conf, hits = _sums_w(confidence, correct, weights, bins)
    total = n.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, np.abs(hits - conf).sum(axis=1) / total, np.nan)


def expected_calibration_error(
    confidence: Any, correct: Any, bins: int = DEFAULT_BINS
) -> float | None:
    """ece_w of one value per item (correct: 1 right, 0 wrong); None with no item."""
    c = np.asarray(confidence, dtype=np.float64)
    (value,) = ece_w(c, correct, np.ones((1, len(c))), bins)
    return float(value) if np.isfinite(value) else None


def reliability_bins(
    confidence: Any, correct: Any, bins: int = DEFAULT_BINS
) -> list[dict[str, Any]]:
    """The reliability diagram's bins, every one of them: its edges, how many items fall in it,
    their mean confidence and their accuracy (None for an empty bin)."""
    c = np.asarray(confidence, dtype=np.float64)
    n, conf, hits = _sums_w(c, correct, np.ones((1, len(c))), bins)
    out = []
    for k in range(bins):
        count = int(n[0, k])
        out.append(
            {
                "low": k / bins,
                "high": (k + 1) / bins,
                "n": count,
                "confidence": float(conf[0, k] / count) if count else None,
                "accuracy": float(hits[0, k] / count) if count else None,
            }
        )
    return out


def ratio_w(numerator: Any, denominator: Any, weights: Any) -> np.ndarray:
    """(B,) sum of the numerators over sum of the denominators under each resample's weights
    (per item counts: e.g. consistent repeats over repeats judged in both orders). NaN where the
    denominators sum to 0; NaN entries count as 0."""
    top = np.nan_to_num(np.asarray(numerator, dtype=np.float64), nan=0.0)
    bottom = np.nan_to_num(np.asarray(denominator, dtype=np.float64), nan=0.0)
    w = np.atleast_2d(np.asarray(weights, dtype=np.float64))
    a, b = w @ top, w @ bottom
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(b > 0, a / b, np.nan)


def order_consistency(pairs: Any) -> tuple[int, int]:
    """From (verdict shown AB, verdict shown BA) of one item per repeat, both canonical
    (1 / 0 / -1, None: no verdict): (repeats whose two orders agree, repeats with both)."""
    complete = [(ab, ba) for ab, ba in pairs if ab is not None and ba is not None]
    return sum(1 for ab, ba in complete if ab == ba), len(complete)


def first_shown_counts(verdicts: Any) -> tuple[int, int, int]:
    """From (order shown, canonical verdict) of one item's judgments (order "AB" or "BA",
    verdict 1 / 0 / -1, A better / tie / B better): how many chose the side shown first, how
    many were ties, how many chose the side shown second."""
    first = tie = second = 0
    for order, verdict in verdicts:
        if verdict is None or order not in ("AB", "BA"):
            continue
        shown = verdict if order == "AB" else -verdict
        if shown > 0:
            first += 1
        elif shown < 0:
            second += 1
        else:
            tie += 1
    return first, tie, second


def longer_wins_w(length_difference: Any, verdict: Any, weights: Any) -> np.ndarray:
    """(B,) among items with a decisive verdict (A or B better, sign of the verdict) whose two
    answers differ in length (length of A minus length of B), the share where the longer answer
    won. NaN without such an item."""
    d = np.asarray(length_difference, dtype=np.float64)
    v = np.asarray(verdict, dtype=np.float64)
    usable = np.isfinite(d) & np.isfinite(v) & (d != 0) & (v != 0)
    won = usable & (np.sign(d) == np.sign(v))
    return ratio_w(won.astype(float), usable.astype(float), weights)


def longer_wins(length_difference: Any, verdict: Any) -> float | None:
    """longer_wins_w of one value per item; None without a usable item."""
    d = np.asarray(length_difference, dtype=np.float64)
    (value,) = longer_wins_w(d, verdict, np.ones((1, len(d))))
    return float(value) if np.isfinite(value) else None
