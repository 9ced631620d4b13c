"""Agreement statistics between raters, with seeded bootstrap confidence intervals (pure numpy).

A rating matrix is items x raters, float64, ``np.nan`` = missing. Identical rows are grouped into
weighted *profiles* (:class:`Profiles`). Every statistic has a weighted form ``*_w`` taking the
profile rows (or columns of them) and a weight matrix ``W`` of shape (B, P): row b says how many
times each profile occurs in resample b. It returns a (B,) array, ``nan`` where the statistic is
undefined in that resample. The point estimate is the same function with ``W = counts[None, :]``.

Resampling n items with replacement is exactly equivalent in distribution to drawing the profile
counts ``multinomial(n, counts / n)``, so :func:`bootstrap` draws (B, P) weights once and the
cost of a statistic grows with the number of distinct profiles, not with the number of items.

Pair statistics use pairwise deletion: items where one of the two raters is missing get no weight
in that statistic, so the number of usable items may vary between resamples (the item bootstrap).

Nothing here imports Django; scipy is imported only by the Kendall fallback for tables too large
to hold (see :data:`KENDALL_TABLE_LIMIT`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import numpy as np

__all__ = [
    "BT_PRIOR",
    "KENDALL_TABLE_LIMIT",
    "Estimate",
    "MeasurementLevel",
    "PairTable",
    "Profiles",
    "agreement",
    "agreement_w",
    "bootstrap",
    "bootstrap_many",
    "bradley_terry",
    "bradley_terry_bootstrap",
    "bt_probability",
    "cohen_kappa",
    "cohen_kappa_w",
    "fleiss_kappa",
    "fleiss_kappa_w",
    "kendall",
    "kendall_w",
    "krippendorff_alpha",
    "krippendorff_alpha_w",
    "majority",
    "mean_over_pairs",
    "mean_rating",
    "n_items",
    "pair_table",
    "pearson",
    "pearson_w",
    "resample_weights",
    "shares_w",
    "spearman",
    "spearman_w",
]

MeasurementLevel = Literal["nominal", "ordinal", "interval", "ratio"]
_LEVELS = ("nominal", "ordinal", "interval", "ratio")

# Above this many cells (distinct x levels * distinct y levels) Kendall's tau is not computed from
# the dense contingency table but by scipy on the items expanded from the profiles.
KENDALL_TABLE_LIMIT = 250_000
# Temporary arrays are held to about this many float64 cells (64 MB) by working through the
# resamples in chunks; the Kendall table needs three arrays of this size at once.
_CHUNK_CELLS = 8_000_000
# Group sums over at most this many groups (rating levels, categories) are one-hot matrix
# products (BLAS, fastest for few groups); over more (continuous values), one np.bincount.
_ONEHOT_MAX = 64
# Pseudo-wins added each way to every compared pair of runs in Bradley-Terry, so that a run that
# never wins (or never loses) gets a finite strength.
BT_PRIOR = 0.01


# --- profiles and weights -------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Profiles:
    """Distinct rows of a rating matrix and how many items have each.

    rows: (P, R) float64, ``nan`` = missing; counts: (P,) non-negative integers.
    """

    rows: np.ndarray
    counts: np.ndarray

    def __post_init__(self) -> None:
        rows = np.asarray(self.rows, dtype=np.float64)
        raw = np.asarray(self.counts)
        counts = raw.astype(np.int64)
        if rows.ndim != 2 or counts.ndim != 1 or len(rows) != len(counts):
            raise ValueError("Profiles needs rows (P, R) and counts (P,)")
        if (counts < 0).any() or not np.array_equal(counts, raw):
            raise ValueError("profile counts must be non-negative integers")
        object.__setattr__(self, "rows", rows)
        object.__setattr__(self, "counts", counts)

    @classmethod
    def from_matrix(cls, matrix: Any) -> Profiles:
        """Group the identical rows of an items x raters matrix (``nan`` = missing).

        Precondition: a 2-D array of finite numbers or ``nan`` (infinities are rejected).
        """
        m = np.asarray(matrix, dtype=np.float64)
        if m.ndim != 2:
            raise ValueError(f"a rating matrix is 2-D (items x raters), got shape {m.shape}")
        if np.isinf(m).any():
            raise ValueError("ratings must be finite numbers or nan")
        missing = np.isnan(m)
        # Each column's values (NaN one more value; "+ 0.0" folds -0.0 into 0.0) become small
        # codes, and a row the number written with them in mixed radix: one sort of integers,
        # much faster than np.unique over rows. Rows whose radix product would overflow fall
        # back to np.unique over rows, where missingness is encoded as its own columns (it
        # never finds two NaN rows equal).
        filled = np.where(missing, 0.0, m) + 0.0
        key = np.zeros(len(m), dtype=np.int64)
        scale = 1
        for column in range(m.shape[1]):
            _, codes = np.unique(filled[:, column], return_inverse=True)
            codes = np.where(missing[:, column], 0, codes.reshape(-1) + 1)
            radix = int(codes.max(initial=0)) + 1
            if scale * radix >= 2**62:
                return cls._from_rows(m, missing, filled)
            key += codes * scale
            scale *= radix
        _, first, counts = np.unique(key, return_index=True, return_counts=True)
        return cls(rows=m[first].copy(), counts=counts)

    @classmethod
    def _from_rows(cls, m: np.ndarray, missing: np.ndarray, filled: np.ndarray) -> Profiles:
        key = np.concatenate([missing.astype(np.float64), filled], axis=1)
        distinct, counts = np.unique(key, axis=0, return_counts=True)
        width = m.shape[1]
        rows = distinct[:, width:].copy()
        rows[distinct[:, :width] == 1.0] = np.nan
        return cls(rows=rows, counts=counts)

    @property
    def n(self) -> int:
        """Number of items."""
        return int(self.counts.sum())

    def point_weights(self) -> np.ndarray:
        """The (1, P) weights whose statistic is the point estimate."""
        return self.counts[None, :].astype(np.float64)


def resample_weights(profiles: Profiles, resamples: int, seed: int = 0) -> np.ndarray:
    """(B, P) profile counts of ``resamples`` item bootstrap resamples of n = profiles.n items.

    Draw once and pass the same weights to many statistics so that they share their resamples.
    """
    if resamples < 0:
        raise ValueError("resamples must be >= 0")
    n = profiles.n
    if n == 0:
        return np.zeros((resamples, len(profiles.counts)))
    rng = np.random.default_rng(seed)
    return rng.multinomial(n, profiles.counts / n, size=resamples).astype(np.float64)


def n_items(
    profiles: Profiles, columns: Sequence[int] | None = None, *, min_present: int | None = None
) -> int:
    """Items with at least ``min_present`` (default: all) of ``columns`` (default: all) rated.

    For a pair statistic pass the two columns; for Fleiss or alpha, all raters and min_present=2.
    """
    rows = profiles.rows if columns is None else profiles.rows[:, list(columns)]
    need = rows.shape[1] if min_present is None else min_present
    usable = (~np.isnan(rows)).sum(axis=1) >= need
    return int(profiles.counts[usable].sum())


def _as_weights(weights: Any, profiles: int) -> np.ndarray:
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 2 or w.shape[1] != profiles:
        raise ValueError(f"weights must be (B, {profiles}), got shape {w.shape}")
    return w


def _as_column(values: Any) -> np.ndarray:
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1:
        raise ValueError(f"expected a 1-D column, got shape {v.shape}")
    return v


def _as_rows(rows: Any) -> np.ndarray:
    r = np.asarray(rows, dtype=np.float64)
    if r.ndim != 2:
        raise ValueError(f"expected (profiles, raters) rows, got shape {r.shape}")
    return r


def _by_chunks(
    weights: np.ndarray, cells_per_row: int, fn: Callable[[np.ndarray], np.ndarray]
) -> np.ndarray:
    """fn applied to slices of resamples small enough to keep temporaries near _CHUNK_CELLS."""
    step = max(1, _CHUNK_CELLS // max(1, cells_per_row))
    if step >= len(weights):
        return fn(weights)
    return np.concatenate([fn(weights[s : s + step]) for s in range(0, len(weights), step)])


def _group_sum(weights: np.ndarray, keys: np.ndarray, size: int) -> np.ndarray:
    """(B, size): out[:, k] = sum of weights[:, p] over p with keys[p] == k (keys < 0 dropped)."""
    b = weights.shape[0]
    valid = np.flatnonzero(keys >= 0)
    if valid.size == 0 or size == 0 or b == 0:
        return np.zeros((b, size))
    if size <= _ONEHOT_MAX:
        onehot = np.zeros((weights.shape[1], size))
        onehot[valid, keys[valid]] = 1.0
        return weights @ onehot
    # One bincount over all resamples at once (row r's keys offset by r * size): several times
    # faster than sorting the columns and np.add.reduceat for many groups.
    valid_keys = keys[valid]
    step = max(1, _CHUNK_CELLS // valid.size)
    parts = []
    for s in range(0, b, step):
        w = weights[s : s + step, valid]
        offsets = np.arange(len(w))[:, None] * size
        parts.append(
            np.bincount(
                (valid_keys[None, :] + offsets).ravel(), weights=w.ravel(), minlength=len(w) * size
            ).reshape(len(w), size)
        )
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _distinct_levels(marginals: np.ndarray) -> np.ndarray:
    """(B,) number of levels that carry weight in each resample."""
    return (marginals > 0).sum(axis=1)


# --- pair statistics from the weighted contingency table ------------------------------------


@dataclass(frozen=True, eq=False)
class PairTable:
    """The weighted contingency table of two raters, stored sparsely as its non-empty cells.

    Build it with :func:`pair_table`; compute several statistics on it to reduce the (B, P)
    weights to (B, cells) only once per pair.
    """

    x_levels: np.ndarray  # (k1,) sorted distinct values of x on usable profiles
    y_levels: np.ndarray  # (k2,)
    cell_x: np.ndarray  # (C,) index into x_levels of each non-empty cell
    cell_y: np.ndarray  # (C,)
    weights: np.ndarray  # (B, C) weight of each cell in each resample

    @cached_property
    def n(self) -> np.ndarray:
        """(B,) usable items (both raters present) in each resample."""
        return self.weights.sum(axis=1)

    @cached_property
    def x_marginals(self) -> np.ndarray:
        return _group_sum(self.weights, self.cell_x, len(self.x_levels))

    @cached_property
    def y_marginals(self) -> np.ndarray:
        return _group_sum(self.weights, self.cell_y, len(self.y_levels))

    @cached_property
    def _varies(self) -> np.ndarray:
        # Both raters use at least two values: correlations are defined (and N >= 2).
        return (_distinct_levels(self.x_marginals) >= 2) & (_distinct_levels(self.y_marginals) >= 2)

    def pearson(self) -> np.ndarray:
        """Pearson's r of the two raters' values; nan when either is constant."""
        xv, yv = self.x_levels[self.cell_x], self.y_levels[self.cell_y]
        w = self.weights
        n = self.n
        # Values shifted by their mean under the first weights row (the point weights when this
        # is the estimate, a resample close to them otherwise), so that the one-pass sums of
        # matrix-vector products are as precise as a two-pass computation.
        if len(w) and w[0].sum() > 0:
            xv = xv - (w[0] @ xv) / w[0].sum()
            yv = yv - (w[0] @ yv) / w[0].sum()
        with np.errstate(invalid="ignore", divide="ignore"):
            sx, sy = w @ xv, w @ yv
            sxy = w @ (xv * yv) - sx * sy / n
            sxx = w @ (xv * xv) - sx * sx / n
            syy = w @ (yv * yv) - sy * sy / n
        return _correlation(sxy, sxx, syy, self._varies)

    def spearman(self) -> np.ndarray:
        """Spearman's rho: Pearson's r of the midranks (average ranks for ties)."""
        # Midranks average (n + 1) / 2 exactly, so they are centred without a pass over the data,
        # and their sums of squares come from the marginals alone.
        centre = ((self.n + 1.0) / 2.0)[:, None]
        rank_x = _midranks(self.x_marginals) - centre
        rank_y = _midranks(self.y_marginals) - centre
        sxx = (self.x_marginals * rank_x * rank_x).sum(axis=1)
        syy = (self.y_marginals * rank_y * rank_y).sum(axis=1)
        sxy = (self.weights * rank_x[:, self.cell_x] * rank_y[:, self.cell_y]).sum(axis=1)
        return _correlation(sxy, sxx, syy, self._varies)

    def kendall(self) -> np.ndarray:
        """Kendall's tau-b, as scipy.stats.kendalltau.

        Precondition: integer weights (item counts), which the tie corrections assume.
        """
        k1, k2 = len(self.x_levels), len(self.y_levels)
        if k1 == 0 or k2 == 0:
            return np.full(len(self.weights), np.nan)
        if k1 * k2 > KENDALL_TABLE_LIMIT:
            return self._kendall_by_items()
        codes = self.cell_x * k2 + self.cell_y
        diff = _by_chunks(
            self.weights, k1 * k2, lambda w: _concordant_minus_discordant(w, codes, k1, k2)
        )
        n = self.n
        n0 = n * (n - 1) / 2
        n1 = (self.x_marginals * (self.x_marginals - 1)).sum(axis=1) / 2
        n2 = (self.y_marginals * (self.y_marginals - 1)).sum(axis=1) / 2
        with np.errstate(invalid="ignore", divide="ignore"):
            tau = diff / np.sqrt((n0 - n1) * (n0 - n2))
        return np.where(self._varies, np.clip(tau, -1.0, 1.0), np.nan)

    def _kendall_by_items(self) -> np.ndarray:
        # The dense table would not fit: expand the cells into items and let scipy sort them,
        # once per resample (exact, just slower: about 2 ms per 10,000 items).
        from scipy.stats import kendalltau  # imported here: the module is otherwise numpy only

        w = self.weights
        if not np.array_equal(w, np.round(w)):
            raise ValueError("Kendall's tau on a large table needs integer weights (item counts)")
        xv, yv = self.x_levels[self.cell_x], self.y_levels[self.cell_y]
        out = np.full(len(w), np.nan)
        varies = self._varies
        for b in np.flatnonzero(varies):
            reps = w[b].astype(np.int64)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out[b] = kendalltau(np.repeat(xv, reps), np.repeat(yv, reps)).statistic
        return out

    def agreement(self) -> np.ndarray:
        """Share (0..1) of usable items on which both raters gave the same value."""
        same = self.x_levels[self.cell_x] == self.y_levels[self.cell_y]
        with np.errstate(invalid="ignore", divide="ignore"):
            share = self.weights[:, same].sum(axis=1) / self.n
        return np.where(self.n > 0, share, np.nan)

    def cohen_kappa(self) -> np.ndarray:
        """Unweighted Cohen's kappa over the union of both raters' categories.

        nan when chance agreement is 1 (both raters always give the same single category).
        """
        union = np.union1d(self.x_levels, self.y_levels)
        if len(union) == 0:
            return np.full(len(self.weights), np.nan)
        ux = np.searchsorted(union, self.x_levels)[self.cell_x]
        uy = np.searchsorted(union, self.y_levels)[self.cell_y]
        rx = _group_sum(self.weights, ux, len(union))
        cy = _group_sum(self.weights, uy, len(union))
        n = self.n
        with np.errstate(invalid="ignore", divide="ignore"):
            po = self.weights[:, ux == uy].sum(axis=1) / n
            pe = (rx * cy).sum(axis=1) / (n * n)
            kappa = (po - pe) / (1.0 - pe)
        # pe == 1 exactly when both raters put all weight on one and the same category; tested
        # structurally because the float pe can miss 1 by a rounding error.
        chance_certain = (
            (_distinct_levels(rx) == 1)
            & (_distinct_levels(cy) == 1)
            & (rx.argmax(1) == cy.argmax(1))
        )
        return np.where((n > 0) & ~chance_certain, kappa, np.nan)


def pair_table(x: Any, y: Any, weights: Any) -> PairTable:
    """The weighted contingency table of columns x, y (P,) under weights (B, P).

    Profiles where x or y is nan get no weight (pairwise deletion).
    """
    x, y = _as_column(x), _as_column(y)
    if len(x) != len(y):
        raise ValueError("x and y must have one value per profile")
    w = _as_weights(weights, len(x))
    usable = ~(np.isnan(x) | np.isnan(y))
    x_levels, ix = np.unique(x[usable], return_inverse=True)
    y_levels, iy = np.unique(y[usable], return_inverse=True)
    codes, cell_of = np.unique(ix.astype(np.int64) * len(y_levels) + iy, return_inverse=True)
    keys = np.full(len(x), -1, dtype=np.int64)
    keys[usable] = cell_of
    return PairTable(
        x_levels=x_levels,
        y_levels=y_levels,
        cell_x=codes // max(1, len(y_levels)),
        cell_y=codes % max(1, len(y_levels)),
        weights=_group_sum(w, keys, len(codes)),
    )


def _correlation(
    sxy: np.ndarray, sxx: np.ndarray, syy: np.ndarray, defined: np.ndarray
) -> np.ndarray:
    """r from centred sums of products; nan where not defined (a constant rater)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        r = sxy / np.sqrt(sxx * syy)
    return np.where(defined, np.clip(r, -1.0, 1.0), np.nan)


def _midranks(marginals: np.ndarray) -> np.ndarray:
    """(B, k) average rank of each level: items in lower levels + (count + 1) / 2."""
    return np.cumsum(marginals, axis=1) - marginals + (marginals + 1.0) / 2.0


def _concordant_minus_discordant(
    cell_weights: np.ndarray, codes: np.ndarray, k1: int, k2: int
) -> np.ndarray:
    """(B,) P - Q of the dense (B, k1, k2) table, by suffix and prefix cumulative sums."""
    b = len(cell_weights)
    table: np.ndarray = np.zeros((b, k1 * k2))
    table[:, codes] = cell_weights
    table = table.reshape(b, k1, k2)
    # below[:, i, j]: weight in column j of the rows after i (larger x).
    below = np.flip(np.cumsum(np.flip(table, axis=1), axis=1), axis=1) - table
    with_self = np.einsum("bij,bij->b", table, below)
    np.cumsum(below, axis=2, out=below)  # now: rows after i, columns up to j
    prefix = np.einsum("bij,bij->b", table, below)
    total = np.einsum("bi,bi->b", table.sum(axis=2), below[:, :, -1])
    # P = sum T * (total_i - prefix_ij) (larger x, larger y); Q = sum T * (prefix_ij - below_ij).
    return total - 2.0 * prefix + with_self


def pearson_w(x: Any, y: Any, weights: Any) -> np.ndarray:
    """(B,) Pearson's r of columns x, y (P,) under weights (B, P); nan if a rater is constant."""
    return pair_table(x, y, weights).pearson()


def spearman_w(x: Any, y: Any, weights: Any) -> np.ndarray:
    """(B,) Spearman's rho (midranks for ties), as scipy.stats.spearmanr."""
    return pair_table(x, y, weights).spearman()


def kendall_w(x: Any, y: Any, weights: Any) -> np.ndarray:
    """(B,) Kendall's tau-b, as scipy.stats.kendalltau. Precondition: integer weights."""
    return pair_table(x, y, weights).kendall()


def agreement_w(x: Any, y: Any, weights: Any) -> np.ndarray:
    """(B,) share of usable items where x == y (judge accuracy when y is the majority)."""
    return pair_table(x, y, weights).agreement()


def cohen_kappa_w(x: Any, y: Any, weights: Any) -> np.ndarray:
    """(B,) unweighted Cohen's kappa, as sklearn.metrics.cohen_kappa_score."""
    return pair_table(x, y, weights).cohen_kappa()


# --- statistics over all raters --------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Coded:
    """Rows coded as indices into their sorted distinct values (-1 = missing)."""

    values: np.ndarray  # (K,)
    index: np.ndarray  # (P, R)
    m: np.ndarray  # (P,) ratings present
    usable: np.ndarray  # (P,) at least two ratings: the profile is pairable
    entries: tuple[np.ndarray, np.ndarray]  # (profile, rater) of the ratings of usable profiles
    dense: np.ndarray | None  # (P, K) ratings per value on usable profiles, when K is small

    @classmethod
    def build(cls, rows: np.ndarray) -> _Coded:
        present = ~np.isnan(rows)
        values = np.unique(rows[present])
        index = np.full(rows.shape, -1, dtype=np.int64)
        index[present] = np.searchsorted(values, rows[present])
        m = present.sum(axis=1)
        usable = m >= 2
        p, r = np.nonzero(present & usable[:, None])
        dense = None
        if len(values) <= _ONEHOT_MAX:
            dense = np.zeros((len(rows), len(values)))
            np.add.at(dense, (p, index[p, r]), 1.0)
        return cls(values, index, m, usable, (p, r), dense)

    def value_counts(self, weights: np.ndarray) -> np.ndarray:
        """(B, K) pairable ratings of each value: the marginals of the coincidence matrix."""
        if self.dense is not None:
            return weights @ self.dense
        p, r = self.entries
        return _group_sum(weights[:, p], self.index[p, r], len(self.values))


def fleiss_kappa_w(rows: Any, weights: Any) -> np.ndarray:
    """(B,) Fleiss' kappa of rows (P, R) (nan = missing) under weights (B, P).

    Only profiles with at least two ratings count. With the same number of raters on every item
    this is statsmodels' fleiss_kappa(method="fleiss"); with varying numbers it is the usual
    generalisation: P_p = (sum_j n_pj^2 - m_p) / (m_p (m_p - 1)) averaged over items, and
    p_j = (ratings of category j) / (all ratings). nan when one category takes all ratings.
    """
    rows = _as_rows(rows)
    w = _as_weights(weights, len(rows))
    coded = _Coded.build(rows)
    m = coded.m.astype(np.float64)
    same = (rows[:, :, None] == rows[:, None, :]).sum(axis=(1, 2))  # sum_j n_pj^2; nan != nan
    with np.errstate(invalid="ignore", divide="ignore"):
        item_agreement = np.where(coded.usable, (same - m) / (m * (m - 1)), 0.0)
    used = coded.usable.astype(np.float64)

    def chunk(wb: np.ndarray) -> np.ndarray:
        items = wb @ used
        counts = coded.value_counts(wb)
        with np.errstate(invalid="ignore", divide="ignore"):
            observed = (wb @ item_agreement) / items
            p = counts / counts.sum(axis=1, keepdims=True)
            expected = (p * p).sum(axis=1)
            kappa = (observed - expected) / (1.0 - expected)
        return np.where((items > 0) & (_distinct_levels(counts) >= 2), kappa, np.nan)

    return _by_chunks(w, len(coded.values) + rows.size, chunk)


def _pair_delta(a: np.ndarray, b: np.ndarray, level: str) -> np.ndarray:
    """Squared difference function delta^2 of nominal, interval or ratio data."""
    if level == "nominal":
        return (a != b).astype(np.float64)
    if level == "interval":
        return (a - b) ** 2
    total = a + b
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total != 0, ((a - b) / np.where(total != 0, total, 1.0)) ** 2, 0.0)


def krippendorff_alpha_w(
    rows: Any, weights: Any, level: MeasurementLevel = "interval"
) -> np.ndarray:
    """(B,) Krippendorff's alpha of rows (P, R) (nan = missing) under weights (B, P).

    Equals krippendorff.alpha(reliability_data=matrix.T, level_of_measurement=level). Only
    pairable profiles (>= 2 ratings) count. nan when fewer than two distinct values are pairable
    or the expected disagreement is 0. Precondition for "ratio": non-negative values (as usual).
    Cost: O(B * P * R) for every level, plus O(B * K^2) for "ratio" with K distinct values.
    """
    if level not in _LEVELS:
        raise ValueError(f"level must be one of {_LEVELS}, got {level!r}")
    rows = _as_rows(rows)
    w = _as_weights(weights, len(rows))
    coded = _Coded.build(rows)
    values = coded.values
    m = coded.m.astype(np.float64)
    usable = coded.usable

    # Observed disagreement: sum_ck o_ck delta_ck = sum_u w_u sum_{r,r'} delta(v_r, v_r')/(m_u-1),
    # a fixed number per profile except for "ordinal", whose metric depends on the resample.
    per_profile = None
    if level != "ordinal":
        both = ~np.isnan(rows[:, :, None]) & ~np.isnan(rows[:, None, :])
        delta = _pair_delta(rows[:, :, None], rows[:, None, :], level)
        pair_sum = np.where(both, delta, 0.0).sum(axis=(1, 2))
        with np.errstate(invalid="ignore", divide="ignore"):
            per_profile = np.where(usable, pair_sum / (m - 1), 0.0)

    def chunk(wb: np.ndarray) -> np.ndarray:
        counts = coded.value_counts(wb)  # (b, K) marginals n_c of the coincidence matrix
        n = counts.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            if level == "nominal":
                expected = n * n - (counts * counts).sum(axis=1)
            elif level == "interval":
                centred = values - ((counts @ values) / n)[:, None]
                expected = 2.0 * n * (counts * centred * centred).sum(axis=1)
            elif level == "ratio":
                expected = _ratio_expected(counts, values)
            else:
                # The ordinal metric is the interval metric on z_c = (ratings below c) + n_c / 2:
                # sum_{g=c..k} n_g - (n_c + n_k) / 2 = z_k - z_c. Centred on n / 2 for precision.
                z = np.cumsum(counts, axis=1) - counts / 2.0 - n[:, None] / 2.0
                nz = (counts * z).sum(axis=1)
                expected = 2.0 * (n * (counts * z * z).sum(axis=1) - nz * nz)
                observed = (wb * _ordinal_profile_disagreement(coded, z, m)).sum(axis=1)
            if level != "ordinal":
                observed = wb @ per_profile
            alpha = 1.0 - (n - 1.0) * observed / expected
        defined = (_distinct_levels(counts) >= 2) & (expected > 0)
        return np.where(defined, alpha, np.nan)

    return _by_chunks(w, len(values) + rows.size + len(rows), chunk)


def _ratio_expected(counts: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(B,) sum_ck n_c n_k delta_ck for the ratio metric, blockwise over the K x K metric."""
    acc = np.zeros_like(counts)
    step = max(1, _CHUNK_CELLS // max(1, len(values)))
    for s in range(0, len(values), step):
        block = _pair_delta(values[s : s + step, None], values[None, :], "ratio")
        acc += counts[:, s : s + step] @ block
    return (acc * counts).sum(axis=1)


def _ordinal_profile_disagreement(coded: _Coded, z: np.ndarray, m: np.ndarray) -> np.ndarray:
    """(B, P) per pairable profile: sum_{r,r'} (z_r - z_r')^2 / (m - 1).

    Computed as 2 (m sum_r z_r^2 - (sum_r z_r)^2) / (m - 1).
    """
    if coded.dense is not None:
        s1 = z @ coded.dense.T
        s2 = (z * z) @ coded.dense.T
    else:
        p, r = coded.entries
        gathered = z[:, coded.index[p, r]]
        s1 = _sum_by_profile(gathered, p, len(m))
        s2 = _sum_by_profile(gathered * gathered, p, len(m))
    with np.errstate(invalid="ignore", divide="ignore"):
        term = 2.0 * (m * s2 - s1 * s1) / (m - 1)
    return np.where(coded.usable, term, 0.0)


def _sum_by_profile(values: np.ndarray, profile: np.ndarray, size: int) -> np.ndarray:
    out = np.zeros((values.shape[0], size))
    if profile.size == 0:
        return out
    # entries come from np.nonzero, so they are already grouped by profile
    starts = np.flatnonzero(np.r_[True, profile[1:] != profile[:-1]])
    out[:, profile[starts]] = np.add.reduceat(values, starts, axis=1)
    return out


def shares_w(counts_rows: Any, weights: Any) -> np.ndarray:
    """(B, K) share of each outcome among all votes; counts_rows (P, K) votes per outcome.

    E.g. win / tie / lose votes per item for Turing-test shares or position bias. nan entries of
    counts_rows count as 0 votes; a resample without any vote gives nan shares.
    """
    votes = np.nan_to_num(_as_rows(counts_rows), nan=0.0)
    w = _as_weights(weights, len(votes))
    totals = w @ votes
    with np.errstate(invalid="ignore", divide="ignore"):
        return totals / totals.sum(axis=1, keepdims=True)


def mean_over_pairs(values: Sequence[np.ndarray]) -> np.ndarray:
    """(B,) mean over rater pairs of a (B,) statistic each, ignoring nan; nan where all are nan.

    Give it the values of every pair on the same weights so that its interval is the interval
    of the mean (MTU-Bench's human-human figure is the mean Pearson over annotator pairs).
    """
    if not values:
        raise ValueError("mean_over_pairs needs at least one pair")
    stacked = np.vstack([np.asarray(v, dtype=np.float64) for v in values])
    finite = np.isfinite(stacked)
    count = finite.sum(axis=0)
    total = np.where(finite, stacked, 0.0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / count, np.nan)


def majority(matrix: Any) -> np.ndarray:
    """(items,) per item, the value given by strictly more raters than any other value.

    nan when the top values tie or when the item has no rating.
    """
    m = _as_rows(matrix)
    out = np.full(len(m), np.nan)
    if m.shape[1] == 0:
        return out
    step = max(1, _CHUNK_CELLS // (m.shape[1] ** 2))
    for s in range(0, len(m), step):
        block = m[s : s + step]
        votes = (block[:, :, None] == block[:, None, :]).sum(axis=2)  # 0 for a missing rating
        best = votes.max(axis=1)
        # Raters holding a top value number exactly `best` only when a single value is on top.
        single = (best > 0) & ((votes == best[:, None]).sum(axis=1) == best)
        pick = np.take_along_axis(block, votes.argmax(axis=1)[:, None], axis=1)[:, 0]
        out[s : s + step] = np.where(single, pick, np.nan)
    return out


def mean_rating(matrix: Any) -> np.ndarray:
    """(items,) mean of the present ratings per item; nan when the item has none."""
    m = _as_rows(matrix)
    present = ~np.isnan(m)
    count = present.sum(axis=1)
    total = np.where(present, m, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / count, np.nan)


# --- Bradley-Terry -------------------------------------------------------------------------


def bradley_terry(
    wins: Any,
    *,
    prior: float = BT_PRIOR,
    compared: Any = None,
    newton: bool = True,
    tol: float = 1e-10,
    max_iter: int = 10_000,
) -> np.ndarray:
    """(..., K) Bradley-Terry log-strengths from wins (..., K, K), by Hunter's MM algorithm.

    wins[..., i, j] = times run i beat run j, a tie counting 0.5 to each; leading dimensions are
    independent problems (e.g. resamples). ``prior`` pseudo-wins are added each way to every
    compared pair (``compared``: (K, K) or (..., K, K) boolean, default the pairs with a
    comparison in ``wins``), so that a run that never wins or never loses gets a finite
    strength. Strengths are centred to mean 0 within each connected group of runs (with a
    connected comparison graph, the usual case, that is over all runs); strengths in different
    groups are not comparable. A run never compared is nan.

    With ``newton`` (default) each MM step is replaced by a Newton step whenever that step
    raises the likelihood more: MM alone converges linearly and needs thousands of iterations
    when runs are linked by few comparisons; the safeguarded Newton step converges in tens and
    reaches the same maximum (the likelihood never decreases either way).
    """
    w = np.array(wins, dtype=np.float64)
    if w.ndim < 2 or w.shape[-1] != w.shape[-2]:
        raise ValueError(f"wins must be (..., K, K), got shape {w.shape}")
    k = w.shape[-1]
    off_diagonal = ~np.eye(k, dtype=bool)
    w = np.where(off_diagonal, w, 0.0)
    link = (w + np.swapaxes(w, -1, -2)) > 0
    if compared is not None:
        given = np.broadcast_to(np.asarray(compared, dtype=bool), w.shape)
        link = (link | given | np.swapaxes(given, -1, -2)) & off_diagonal
    w = w + prior * link
    games = w + np.swapaxes(w, -1, -2)
    total_wins = w.sum(axis=-1)
    seen = games.sum(axis=-1) > 0
    # reach[..., i, j]: run j is connected to run i through comparisons (or is i).
    reach = link | np.eye(k, dtype=bool)
    for _ in range(max(1, int(np.ceil(np.log2(max(k, 2)))))):
        reach = (reach.astype(np.float64) @ reach.astype(np.float64)) > 0
    # The likelihood is flat along shifting a whole group; adding each group's averaging matrix
    # to the negative Hessian makes the Newton system regular without changing its solution.
    group_average = reach / reach.sum(axis=-1, keepdims=True)
    ridge = 1e-9 * np.eye(k)

    s = np.zeros(w.shape[:-1])
    for _ in range(max_iter):
        strength = np.exp(s)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            denom = (games / (strength[..., :, None] + strength[..., None, :])).sum(axis=-1)
            s_next = np.where(seen, np.log(total_wins / denom), 0.0)
        # MM is scale-free: renormalise (geometric mean 1) to keep the numbers bounded.
        s_next -= s_next.mean(axis=-1, keepdims=True)
        if newton:
            p_win = 1.0 / (1.0 + np.exp(s[..., None, :] - s[..., :, None]))  # P(i beats j)
            gradient = total_wins - (games * p_win).sum(axis=-1)
            curvature = games * p_win * (1.0 - p_win)
            system = (
                curvature.sum(axis=-1)[..., None] * np.eye(k) - curvature + group_average + ridge
            )
            s_newton = s + np.linalg.solve(system, gradient[..., None])[..., 0]
            better = _bt_loglik(w, s_newton) >= _bt_loglik(w, s_next)
            s_next = np.where(better[..., None], s_newton, s_next)
        change = np.max(np.abs(s_next - s), initial=0.0)
        s = s_next
        if not change >= tol:  # converged (or nan, which more steps would not mend)
            break
    group_mean = (reach * s[..., None, :]).sum(axis=-1) / reach.sum(axis=-1)
    return np.where(seen, s - group_mean, np.nan)


def _bt_loglik(wins: np.ndarray, s: np.ndarray) -> np.ndarray:
    """(...,) Bradley-Terry log-likelihood: sum_ij wins_ij log P(i beats j); -inf if not finite."""
    with np.errstate(invalid="ignore", over="ignore"):
        value = -(wins * np.logaddexp(0.0, s[..., None, :] - s[..., :, None])).sum(axis=(-2, -1))
    return np.where(np.isfinite(value), value, -np.inf)


def bt_probability(a: Any, b: Any) -> np.ndarray:
    """Probability that a run of log-strength a beats one of log-strength b: 1/(1+e^(b-a))."""
    return 1.0 / (1.0 + np.exp(np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)))


# --- bootstrap -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its bootstrap percentile interval; None where undefined."""

    value: float | None
    low: float | None
    high: float | None
    n: int  # items the statistic could use

    def as_dict(self) -> dict[str, float | int | None]:
        return {"value": self.value, "low": self.low, "high": self.high, "n": self.n}


def _finite_or_none(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def _interval(resampled: np.ndarray, level: float) -> tuple[float | None, float | None]:
    finite = np.isfinite(resampled)
    # An interval over the few resamples where the statistic happens to exist would mislead.
    if len(resampled) == 0 or 2 * (~finite).sum() > len(resampled):
        return None, None
    tail = (1.0 - level) / 2.0
    low, high = np.percentile(resampled[finite], [100.0 * tail, 100.0 * (1.0 - tail)])
    return float(low), float(high)


def bootstrap(
    profiles: Profiles,
    statistic: Callable[[np.ndarray], np.ndarray],
    *,
    n_used: int,
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    weights: Any = None,
) -> Estimate:
    """Point estimate and percentile interval of ``statistic`` (W (B, P) -> (B,)).

    ``weights`` (B, P), e.g. from :func:`resample_weights`, replaces the resamples drawn from
    ``seed``; then ``resamples`` and ``seed`` are ignored. No interval when more than half of
    the resamples are nan or there are none. ``n_used`` is reported as Estimate.n (see n_items).
    """
    (estimate,) = bootstrap_many(
        profiles,
        lambda w: np.asarray(statistic(w)).reshape(-1, 1),
        n_used=n_used,
        resamples=resamples,
        seed=seed,
        level=level,
        weights=weights,
    )
    return estimate


def bootstrap_many(
    profiles: Profiles,
    statistic: Callable[[np.ndarray], np.ndarray],
    *,
    n_used: int,
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    weights: Any = None,
) -> list[Estimate]:
    """As :func:`bootstrap` for a vector statistic (W (B, P) -> (B, K)): one Estimate per k."""
    if not 0.0 < level < 1.0:
        raise ValueError("level must be between 0 and 1")
    point = np.asarray(statistic(profiles.point_weights()), dtype=np.float64)
    if weights is None:
        w = resample_weights(profiles, resamples, seed)
    else:
        w = _as_weights(weights, len(profiles.counts))
    k = point.shape[1]
    resampled = (
        np.asarray(statistic(w), dtype=np.float64).reshape(-1, k) if len(w) else np.empty((0, k))
    )
    return [
        Estimate(_finite_or_none(point[0, j]), *_interval(resampled[:, j], level), n_used)
        for j in range(k)
    ]


def bradley_terry_bootstrap(
    item_wins: Any,
    counts: Any,
    *,
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    weights: Any = None,
    prior: float = BT_PRIOR,
) -> list[Estimate]:
    """Bradley-Terry log-strengths of K runs with bootstrap intervals, one Estimate per run.

    item_wins (P, K, K): wins of each distinct item profile (see :func:`bradley_terry`);
    counts (P,): items with that profile. The prior goes to the pairs compared in the full data,
    in every resample alike. Estimate.n is the number of items with any comparison.
    """
    per_profile = np.asarray(item_wins, dtype=np.float64)
    if per_profile.ndim != 3 or per_profile.shape[1] != per_profile.shape[2]:
        raise ValueError(f"item_wins must be (P, K, K), got shape {per_profile.shape}")
    p, k = per_profile.shape[0], per_profile.shape[1]
    profiles = Profiles(rows=per_profile.reshape(p, k * k), counts=np.asarray(counts))
    total = np.einsum("p,pij->ij", profiles.counts.astype(np.float64), per_profile)
    compared = (total + total.T) > 0

    def statistic(w: np.ndarray) -> np.ndarray:
        return bradley_terry(
            np.einsum("bp,pij->bij", w, per_profile), prior=prior, compared=compared
        )

    used = int(profiles.counts[profiles.rows.sum(axis=1) > 0].sum())
    return bootstrap_many(
        profiles,
        statistic,
        n_used=used,
        resamples=resamples,
        seed=seed,
        level=level,
        weights=weights,
    )


# --- point helpers ---------------------------------------------------------------------------


def _pair_point(x: Any, y: Any) -> PairTable:
    x, y = _as_column(x), _as_column(y)
    profiles = Profiles.from_matrix(np.column_stack([x, y]))
    return pair_table(profiles.rows[:, 0], profiles.rows[:, 1], profiles.point_weights())


def pearson(x: Any, y: Any) -> float:
    """Pearson's r of two 1-D arrays (nan = missing, pairwise deletion); nan if undefined."""
    return float(_pair_point(x, y).pearson()[0])


def spearman(x: Any, y: Any) -> float:
    """Spearman's rho of two 1-D arrays (nan = missing); nan if undefined."""
    return float(_pair_point(x, y).spearman()[0])


def kendall(x: Any, y: Any) -> float:
    """Kendall's tau-b of two 1-D arrays (nan = missing); nan if undefined."""
    return float(_pair_point(x, y).kendall()[0])


def agreement(x: Any, y: Any) -> float:
    """Share of items rated by both on which x == y; nan if no item is rated by both."""
    return float(_pair_point(x, y).agreement()[0])


def cohen_kappa(x: Any, y: Any) -> float:
    """Unweighted Cohen's kappa of two 1-D arrays (nan = missing); nan if undefined."""
    return float(_pair_point(x, y).cohen_kappa()[0])


def fleiss_kappa(matrix: Any) -> float:
    """Fleiss' kappa of an items x raters matrix (nan = missing); nan if undefined."""
    profiles = Profiles.from_matrix(matrix)
    return float(fleiss_kappa_w(profiles.rows, profiles.point_weights())[0])


def krippendorff_alpha(matrix: Any, level: MeasurementLevel = "interval") -> float:
    """Krippendorff's alpha of an items x raters matrix (nan = missing); nan if undefined."""
    profiles = Profiles.from_matrix(matrix)
    return float(krippendorff_alpha_w(profiles.rows, profiles.point_weights(), level)[0])
