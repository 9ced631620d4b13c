"""Agreement statistics: equal to the reference implementations, right on hand-checked cases,
seeded bootstrap intervals that behave like an item bootstrap, and fast on a report-sized load.
No database."""

from __future__ import annotations

import time
import warnings
from typing import Any

import krippendorff
import numpy as np
import pytest
from scipy import stats as sps
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from annotation.agreement import stats
from annotation.agreement.stats import Estimate, Profiles

LEVELS = ("nominal", "ordinal", "interval", "ratio")
KINDS = {
    "pairwise": np.array([-1.0, 0.0, 1.0]),
    "ordinal": np.arange(1.0, 6.0),
    "nominal": np.array([0.0, 3.0, 7.0, 11.0]),
}
SEEDS = (0, 1, 2)


def ratings(
    seed: int, kind: str, items: int = 400, raters: int = 4, missing: float = 0.15
) -> np.ndarray:
    """Items x raters of a discrete scale: raters copy a per-item truth 60% of the time, so there
    are ties, real agreement and duplicate rows."""
    rng = np.random.default_rng(seed)
    scale = KINDS[kind]
    truth = rng.choice(scale, size=items)
    noise = rng.choice(scale, size=(items, raters))
    m = np.where(rng.random((items, raters)) < 0.6, truth[:, None], noise)
    m[rng.random(m.shape) < missing] = np.nan
    return m


def continuous(seed: int, items: int = 300) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=items)
    return x, 0.6 * x + rng.normal(size=items)


def both(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ok = ~np.isnan(x) & ~np.isnan(y)
    return x[ok], y[ok]


# --- reference implementations ---------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_pair_statistics_equal_the_references_on_discrete_data_with_missing_values(
    seed: int, kind: str
) -> None:
    m = ratings(seed, kind)
    for i, j in [(0, 1), (1, 3), (2, 3)]:
        x, y = m[:, i], m[:, j]
        bx, by = both(x, y)
        assert len(bx) < len(x)  # pairwise deletion is exercised
        assert stats.pearson(x, y) == pytest.approx(sps.pearsonr(bx, by).statistic, abs=1e-9)
        assert stats.spearman(x, y) == pytest.approx(sps.spearmanr(bx, by).statistic, abs=1e-9)
        assert stats.kendall(x, y) == pytest.approx(sps.kendalltau(bx, by).statistic, abs=1e-9)
        assert stats.cohen_kappa(x, y) == pytest.approx(cohen_kappa_score(bx, by), abs=1e-9)
        assert stats.agreement(x, y) == pytest.approx(np.mean(bx == by), abs=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_correlations_equal_scipy_on_continuous_data(seed: int) -> None:
    x, y = continuous(seed)
    y[::17] = np.nan
    bx, by = both(x, y)
    assert stats.pearson(x, y) == pytest.approx(sps.pearsonr(bx, by).statistic, abs=1e-9)
    assert stats.spearman(x, y) == pytest.approx(sps.spearmanr(bx, by).statistic, abs=1e-9)
    assert stats.kendall(x, y) == pytest.approx(sps.kendalltau(bx, by).statistic, abs=1e-9)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_fleiss_kappa_equals_statsmodels(seed: int, kind: str) -> None:
    complete = ratings(seed, kind, raters=5, missing=0.0)
    table, _ = aggregate_raters(complete)
    expected = sm_fleiss_kappa(table, method="fleiss")
    assert stats.fleiss_kappa(complete) == pytest.approx(expected, abs=1e-9)

    # every item rated by 3 of the 5 raters (different ones per item): still the classic formula
    rng = np.random.default_rng(seed + 100)
    sparse = complete.copy()
    for row in sparse:
        row[rng.choice(5, size=2, replace=False)] = np.nan
    present = sparse[~np.isnan(sparse)].reshape(len(sparse), 3)
    table, _ = aggregate_raters(present)
    expected = sm_fleiss_kappa(table, method="fleiss")
    assert stats.fleiss_kappa(sparse) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("level", LEVELS)
def test_krippendorff_alpha_equals_the_krippendorff_package(
    seed: int, kind: str, level: str
) -> None:
    m = ratings(seed, kind, items=250, raters=5, missing=0.3)
    expected = krippendorff.alpha(reliability_data=m.T, level_of_measurement=level)
    assert stats.krippendorff_alpha(m, level) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("level", LEVELS)
def test_krippendorff_alpha_on_continuous_values_takes_the_many_values_path(level: str) -> None:
    # Several hundred distinct values: the group sums go through bincount, not a one-hot matrix.
    rng = np.random.default_rng(7)
    truth = rng.gamma(2.0, size=150)
    m = truth[:, None] + rng.gamma(1.0, size=(150, 3))
    m[rng.random(m.shape) < 0.25] = np.nan
    assert len(np.unique(m[~np.isnan(m)])) > stats._ONEHOT_MAX
    expected = krippendorff.alpha(reliability_data=m.T, level_of_measurement=level)
    assert stats.krippendorff_alpha(m, level) == pytest.approx(expected, abs=1e-9)


def test_the_one_hot_and_the_bincount_group_sums_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    m = ratings(3, "ordinal", raters=5)
    profiles = Profiles.from_matrix(m)
    w = stats.resample_weights(profiles, 50, seed=1)

    def everything() -> list[np.ndarray]:
        table = stats.pair_table(profiles.rows[:, 0], profiles.rows[:, 1], w)
        return [
            table.pearson(),
            table.spearman(),
            table.kendall(),
            table.cohen_kappa(),
            stats.fleiss_kappa_w(profiles.rows, w),
            *(stats.krippendorff_alpha_w(profiles.rows, w, level) for level in LEVELS),
        ]

    one_hot = everything()
    monkeypatch.setattr(stats, "_ONEHOT_MAX", 0)
    for a, b in zip(one_hot, everything(), strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


def test_chunking_over_resamples_does_not_change_the_results(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    m = ratings(4, "pairwise", raters=5)
    profiles = Profiles.from_matrix(m)
    w = stats.resample_weights(profiles, 40, seed=2)

    def everything() -> list[np.ndarray]:
        return [
            stats.kendall_w(profiles.rows[:, 0], profiles.rows[:, 2], w),
            stats.fleiss_kappa_w(profiles.rows, w),
            *(stats.krippendorff_alpha_w(profiles.rows, w, level) for level in LEVELS),
        ]

    whole = everything()
    monkeypatch.setattr(stats, "_CHUNK_CELLS", 30)  # a few resamples per chunk
    for a, b in zip(whole, everything(), strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


def test_kendall_falls_back_to_scipy_on_a_large_table_exactly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    x, y = continuous(5, items=600)  # 600 x 600 levels: 360,000 cells > the table limit
    assert stats.KENDALL_TABLE_LIMIT < 600 * 600
    profiles = Profiles.from_matrix(np.column_stack([x, y]))
    estimate = stats.bootstrap(
        profiles,
        lambda w: stats.kendall_w(profiles.rows[:, 0], profiles.rows[:, 1], w),
        n_used=profiles.n,
        resamples=200,
        seed=3,
    )
    assert estimate.value == pytest.approx(sps.kendalltau(x, y).statistic, abs=1e-9)
    assert estimate.low is not None and estimate.high is not None
    assert estimate.low < estimate.value < estimate.high

    # the fallback and the table give the same resampled values
    w = stats.resample_weights(profiles, 5, seed=4)
    fallback = stats.kendall_w(profiles.rows[:, 0], profiles.rows[:, 1], w)
    monkeypatch.setattr(stats, "KENDALL_TABLE_LIMIT", 10**9)
    table = stats.kendall_w(profiles.rows[:, 0], profiles.rows[:, 1], w)
    np.testing.assert_allclose(fallback, table, rtol=0, atol=1e-9)


# --- hand-checked cases ----------------------------------------------------------------------


def test_pair_statistics_with_ties_by_hand() -> None:
    x = np.array([1.0, 2.0, 2.0, 3.0])
    y = np.array([1.0, 3.0, 2.0, 3.0])
    # Pearson: means 2 and 2.25; dx = (-1, 0, 0, 1), dy = (-1.25, .75, -.25, .75);
    # sxy = 1.25 + .75 = 2, sxx = 2, syy = 1.5625 + .5625 + .0625 + .5625 = 2.75.
    assert stats.pearson(x, y) == pytest.approx(2 / np.sqrt(2 * 2.75), abs=1e-12)
    # Spearman: midranks x (1, 2.5, 2.5, 4), y (1, 3.5, 2, 3.5), both mean 2.5;
    # sxy = 2.25 + 1.5 = 3.75, sxx = syy = 4.5 -> 3.75 / 4.5.
    assert stats.spearman(x, y) == pytest.approx(3.75 / 4.5, abs=1e-12)
    # Kendall: of 6 pairs, 4 concordant, 0 discordant, 1 tied in x (2, 2), 1 tied in y (3, 3);
    # tau_b = 4 / sqrt((6 - 1)(6 - 1)) = 0.8.
    assert stats.kendall(x, y) == pytest.approx(0.8, abs=1e-12)
    # Agreement: items 1, 3 and 4 equal -> 3 / 4.
    assert stats.agreement(x, y) == pytest.approx(0.75, abs=1e-12)
    # Cohen: po = 12/16; marginals x (1, 2, 1), y (1, 1, 2): pe = (1 + 2 + 2) / 16 = 5/16;
    # kappa = (12/16 - 5/16) / (11/16) = 7/11.
    assert stats.cohen_kappa(x, y) == pytest.approx(7 / 11, abs=1e-12)


def test_missing_ratings_are_deleted_pairwise_by_hand() -> None:
    x = np.array([1.0, 2.0, np.nan, 3.0, 4.0])
    y = np.array([2.0, np.nan, 5.0, 3.0, 5.0])
    # usable pairs (1, 2), (3, 3), (4, 5): means 8/3 and 10/3; dx = (-5, 1, 4)/3, dy = (-4, -1, 5)/3
    # sxy = (20 - 1 + 20)/9, sxx = syy = (25 + 1 + 16)/9 -> r = 39/42.
    assert stats.pearson(x, y) == pytest.approx(39 / 42, abs=1e-12)
    profiles = Profiles.from_matrix(np.column_stack([x, y]))
    assert stats.n_items(profiles, [0, 1]) == 3
    assert stats.n_items(profiles, [0, 1], min_present=1) == 5


def test_a_single_rater_or_no_overlap_gives_undefined_statistics() -> None:
    single = np.array([[1.0], [2.0], [2.0], [3.0]])
    assert np.isnan(stats.fleiss_kappa(single))
    for level in LEVELS:
        assert np.isnan(stats.krippendorff_alpha(single, level))

    # two raters who never rated the same item
    m = np.array([[1.0, np.nan], [np.nan, 3.0], [2.0, np.nan], [np.nan, 1.0]])
    x, y = m[:, 0], m[:, 1]
    for statistic in (stats.pearson, stats.spearman, stats.kendall, stats.agreement):
        assert np.isnan(statistic(x, y))
    assert np.isnan(stats.cohen_kappa(x, y))
    assert np.isnan(stats.fleiss_kappa(m))
    assert np.isnan(stats.krippendorff_alpha(m, "nominal"))
    profiles = Profiles.from_matrix(m)
    estimate = stats.bootstrap(
        profiles,
        lambda w: stats.pearson_w(profiles.rows[:, 0], profiles.rows[:, 1], w),
        n_used=stats.n_items(profiles, [0, 1]),
        resamples=50,
    )
    assert estimate == Estimate(value=None, low=None, high=None, n=0)


def test_perfect_agreement_gives_kappa_and_alpha_of_one() -> None:
    m = np.array([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0], [3.0, 3.0, np.nan], [2.0, np.nan, 2.0]])
    assert stats.fleiss_kappa(m) == pytest.approx(1.0, abs=1e-12)
    for level in LEVELS:
        assert stats.krippendorff_alpha(m, level) == pytest.approx(1.0, abs=1e-12)
    assert stats.cohen_kappa(m[:, 0], m[:, 1]) == pytest.approx(1.0, abs=1e-12)
    assert stats.agreement(m[:, 0], m[:, 2]) == 1.0


def test_constant_ratings_give_nan_not_an_exception() -> None:
    x = np.array([1.0, 2.0, 3.0, 2.0])
    y = np.array([4.0, 4.0, 4.0, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no division warnings either
        assert np.isnan(stats.pearson(x, y))
        assert np.isnan(stats.spearman(x, y))
        assert np.isnan(stats.kendall(x, y))
        # both raters always say 4: chance agreement is 1, kappa undefined
        assert np.isnan(stats.cohen_kappa(y, y))
        assert np.isnan(stats.fleiss_kappa(np.column_stack([y, y])))
        assert np.isnan(stats.krippendorff_alpha(np.column_stack([y, y]), "interval"))
    assert stats.agreement(y, y) == 1.0


def test_fleiss_kappa_with_varying_numbers_of_raters_by_hand() -> None:
    m = np.array(
        [
            [1.0, 1.0, 1.0],  # m=3, counts {1: 3}: P = (9 - 3) / (3 * 2) = 1
            [1.0, 2.0, np.nan],  # m=2, {1: 1, 2: 1}: P = (1 + 1 - 2) / 2 = 0
            [2.0, 2.0, np.nan],  # m=2, {2: 2}: P = (4 - 2) / 2 = 1
            [1.0, 2.0, 2.0],  # m=3, {1: 1, 2: 2}: P = (1 + 4 - 3) / 6 = 1/3
            [2.0, np.nan, np.nan],  # m=1: not pairable, left out
        ]
    )
    # P-bar = (1 + 0 + 1 + 1/3) / 4 = 7/12; p_1 = (3 + 1 + 0 + 1) / 10 = 1/2 = p_2, Pe = 1/2;
    # kappa = (7/12 - 1/2) / (1 - 1/2) = 1/6.
    assert stats.fleiss_kappa(m) == pytest.approx(1 / 6, abs=1e-12)


def test_majority_and_mean_rating() -> None:
    m = np.array(
        [
            [1.0, 1.0, 2.0, np.nan],  # 1 by two raters, 2 by one
            [1.0, 2.0, np.nan, np.nan],  # tie
            [np.nan, np.nan, np.nan, np.nan],  # no rating
            [3.0, np.nan, np.nan, np.nan],  # a single rating is a majority
            [1.0, 1.0, 2.0, 2.0],  # tie of two pairs
            [-1.0, 0.0, 0.0, 1.0],  # 0 by two raters, the others by one each
        ]
    )
    np.testing.assert_array_equal(stats.majority(m), [1.0, np.nan, np.nan, 3.0, np.nan, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "mean of empty slice"
        means = stats.mean_rating(m)
    np.testing.assert_allclose(means, [4 / 3, 1.5, np.nan, 3.0, 1.5, 0.0])


def test_mean_over_pairs_ignores_undefined_pairs() -> None:
    a = np.array([1.0, np.nan, np.nan])
    b = np.array([3.0, 2.0, np.nan])
    np.testing.assert_array_equal(stats.mean_over_pairs([a, b]), [2.0, 2.0, np.nan])


def test_shares_of_outcomes_with_intervals() -> None:
    # win, win, tie (votes per item as counts): shares 2/3, 1/3, 0
    votes = np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    profiles = Profiles.from_matrix(np.repeat(votes, 20, axis=0))
    assert len(profiles.counts) == 2
    estimates = stats.bootstrap_many(
        profiles,
        lambda w: stats.shares_w(profiles.rows, w),
        n_used=profiles.n,
        resamples=300,
        seed=1,
    )
    assert [e.value for e in estimates] == pytest.approx([2 / 3, 1 / 3, 0.0], abs=1e-12)
    win, tie, lose = estimates
    assert win.low < 2 / 3 < win.high and tie.low < 1 / 3 < tie.high
    assert (lose.low, lose.high) == (0.0, 0.0)
    assert all(e.n == 60 for e in estimates)


# --- profiles ----------------------------------------------------------------------------------


def test_profiles_group_rows_with_missing_values() -> None:
    nan = np.nan
    m = np.array(
        [
            [1.0, nan],
            [nan, nan],
            [1.0, nan],
            [1.0, 2.0],
            [nan, nan],
            [-0.0, 0.0],
            [nan, nan],
            [0.0, 0.0],
        ]
    )
    profiles = Profiles.from_matrix(m)
    grouped = {
        tuple(None if np.isnan(v) else float(v) for v in row): int(c)
        for row, c in zip(profiles.rows, profiles.counts, strict=True)
    }
    assert grouped == {(1.0, None): 2, (None, None): 3, (1.0, 2.0): 1, (0.0, 0.0): 2}
    assert profiles.n == 8


def test_profiles_of_many_continuous_columns_group_rows_the_same_way() -> None:
    # 12 columns of ~40 distinct values each: the mixed-radix key would overflow int64, so the
    # rows are grouped by np.unique over rows instead; both give the same groups.
    rng = np.random.default_rng(3)
    base = rng.integers(0, 40, size=(30, 12)).astype(float) / 7
    base[rng.random(base.shape) < 0.1] = np.nan
    m = base[rng.integers(0, 30, size=500)]
    profiles = Profiles.from_matrix(m)
    grouped = {
        tuple(None if np.isnan(v) else float(v) for v in row): int(c)
        for row, c in zip(profiles.rows, profiles.counts, strict=True)
    }
    expected: dict[tuple, int] = {}
    for row in m:
        key = tuple(None if np.isnan(v) else float(v) for v in row)
        expected[key] = expected.get(key, 0) + 1
    assert grouped == expected and profiles.n == 500


@pytest.mark.parametrize("seed", SEEDS)
def test_weighted_profiles_equal_the_per_item_statistics(seed: int) -> None:
    m = ratings(seed, "ordinal", items=300, raters=3, missing=0.2)
    m[m == 5.0] = 4.0  # fewer values: many duplicate rows
    profiles = Profiles.from_matrix(m)
    assert len(profiles.counts) < len(m) / 2
    each = np.ones((1, len(m)))
    grouped = profiles.point_weights()
    for name in ("pearson_w", "spearman_w", "kendall_w", "agreement_w", "cohen_kappa_w"):
        fn = getattr(stats, name)
        by_item = fn(m[:, 0], m[:, 2], each)
        by_profile = fn(profiles.rows[:, 0], profiles.rows[:, 2], grouped)
        assert by_profile == pytest.approx(by_item, abs=1e-12), name
    assert stats.fleiss_kappa_w(profiles.rows, grouped) == pytest.approx(
        stats.fleiss_kappa_w(m, each), abs=1e-12
    )
    for level in LEVELS:
        assert stats.krippendorff_alpha_w(profiles.rows, grouped, level) == pytest.approx(
            stats.krippendorff_alpha_w(m, each, level), abs=1e-12
        )


# --- bootstrap -----------------------------------------------------------------------------


def correlated_profiles(items: int = 2000, seed: int = 0) -> Profiles:
    rng = np.random.default_rng(seed)
    x = rng.integers(1, 6, size=items).astype(float)
    y = np.clip(x + rng.integers(-1, 2, size=items), 1, 5)
    return Profiles.from_matrix(np.column_stack([x, y]))


def pearson_of(profiles: Profiles) -> Any:
    return lambda w: stats.pearson_w(profiles.rows[:, 0], profiles.rows[:, 1], w)


def test_bootstrap_is_seeded() -> None:
    profiles = correlated_profiles()
    first = stats.bootstrap(profiles, pearson_of(profiles), n_used=profiles.n, seed=11)
    again = stats.bootstrap(profiles, pearson_of(profiles), n_used=profiles.n, seed=11)
    other = stats.bootstrap(profiles, pearson_of(profiles), n_used=profiles.n, seed=12)
    assert first == again
    assert first.value == other.value
    assert (first.low, first.high) != (other.low, other.high)


def test_the_interval_contains_the_estimate_and_narrows_with_more_items() -> None:
    small, large = correlated_profiles(200, seed=1), correlated_profiles(5000, seed=1)
    e_small = stats.bootstrap(small, pearson_of(small), n_used=small.n, seed=0)
    e_large = stats.bootstrap(large, pearson_of(large), n_used=large.n, seed=0)
    for e in (e_small, e_large):
        assert e.low < e.value < e.high
    assert e_large.high - e_large.low < (e_small.high - e_small.low) / 2
    assert e_large.as_dict() == {
        "value": e_large.value,
        "low": e_large.low,
        "high": e_large.high,
        "n": 5000,
    }


def test_precomputed_weights_give_the_same_estimate_as_the_seed() -> None:
    profiles = correlated_profiles(500)
    w = stats.resample_weights(profiles, 300, seed=5)
    assert w.shape == (300, len(profiles.counts))
    assert (w.sum(axis=1) == profiles.n).all()
    by_seed = stats.bootstrap(profiles, pearson_of(profiles), n_used=1, resamples=300, seed=5)
    by_weights = stats.bootstrap(profiles, pearson_of(profiles), n_used=1, weights=w)
    assert by_seed == by_weights


def test_no_interval_when_most_resamples_are_undefined_or_there_are_none() -> None:
    profiles = correlated_profiles(100)
    undefined_mostly = stats.bootstrap(
        profiles,
        lambda w: np.where(np.arange(len(w)) % 3 == 0, 0.5, np.nan),
        n_used=100,
        resamples=90,
    )
    # the point value (row 0) is 0.5, but 2/3 of the resamples are nan
    assert undefined_mostly == Estimate(value=0.5, low=None, high=None, n=100)
    none = stats.bootstrap(profiles, pearson_of(profiles), n_used=100, resamples=0)
    assert none.value is not None and (none.low, none.high) == (None, None)


def test_the_profile_bootstrap_matches_a_naive_item_bootstrap_in_distribution() -> None:
    rng = np.random.default_rng(21)
    items = 300
    x = rng.integers(1, 6, size=items).astype(float)
    y = np.clip(x + rng.integers(-2, 3, size=items), 1, 5)
    profiles = Profiles.from_matrix(np.column_stack([x, y]))
    resamples = 2000
    by_profile = pearson_of(profiles)(stats.resample_weights(profiles, resamples, seed=1))
    picks = rng.integers(0, items, size=(resamples, items))
    by_item = np.array([np.corrcoef(x[p], y[p])[0, 1] for p in picks])
    # Monte Carlo error of the mean is ~ sd / sqrt(2000) ~ 0.0008; of the sd, ~ 1.6%
    assert by_profile.mean() == pytest.approx(by_item.mean(), abs=0.004)
    assert by_profile.std() == pytest.approx(by_item.std(), rel=0.08)


# --- Bradley-Terry ---------------------------------------------------------------------------


def bt_gradient(wins: np.ndarray, strengths: np.ndarray) -> np.ndarray:
    """Gradient of the Bradley-Terry log-likelihood in the log-strengths."""
    games = wins + wins.T
    p_win = 1.0 / (1.0 + np.exp(strengths[None, :] - strengths[:, None]))
    return wins.sum(axis=1) - (games * p_win).sum(axis=1)


def test_bradley_terry_two_runs_is_the_odds_of_winning() -> None:
    s = stats.bradley_terry(np.array([[0.0, 7.0], [3.0, 0.0]]))
    # with the prior: odds = (7 + 0.01) / (3 + 0.01)
    assert np.exp(s[0] - s[1]) == pytest.approx(7.01 / 3.01, rel=1e-9)
    assert s.sum() == pytest.approx(0.0, abs=1e-12)
    assert stats.bt_probability(s[0], s[1]) == pytest.approx(7.01 / 10.02, rel=1e-9)


def test_bradley_terry_a_run_that_never_wins_is_finite() -> None:
    s = stats.bradley_terry(np.array([[0.0, 5.0], [0.0, 0.0]]))
    assert np.isfinite(s).all()
    assert np.exp(s[0] - s[1]) == pytest.approx(5.01 / 0.01, rel=1e-8)


def test_bradley_terry_three_runs_is_the_maximum_likelihood() -> None:
    wins = np.array([[0.0, 6.0, 9.5], [4.0, 0.0, 5.5], [0.5, 4.5, 0.0]])  # .5: ties
    s = stats.bradley_terry(wins)
    assert s.sum() == pytest.approx(0.0, abs=1e-12)
    assert s[0] > s[1] > s[2]
    with_prior = wins + stats.BT_PRIOR * (1 - np.eye(3))
    np.testing.assert_allclose(bt_gradient(with_prior, s), 0.0, atol=1e-7)


def test_bradley_terry_newton_steps_reach_the_plain_mm_maximum_on_sparse_comparisons() -> None:
    # 6 runs, few comparisons per pair, some pairs never met: plain MM crawls here
    rng = np.random.default_rng(8)
    wins = np.zeros((200, 6, 6))
    for b in range(200):
        for _ in range(12):
            i, j = rng.choice(6, size=2, replace=False)
            wins[b, i, j] += 1.0
    fast = stats.bradley_terry(wins)
    plain = stats.bradley_terry(wins, newton=False, max_iter=200_000, tol=1e-12)
    np.testing.assert_allclose(fast, plain, atol=1e-7)
    for b in range(0, 200, 20):
        if np.isfinite(fast[b]).all():
            with_prior = wins[b] + stats.BT_PRIOR * ((wins[b] + wins[b].T) > 0)
            np.testing.assert_allclose(bt_gradient(with_prior, fast[b]), 0.0, atol=1e-7)


def test_bradley_terry_is_vectorised_over_leading_dimensions() -> None:
    rng = np.random.default_rng(2)
    batch = rng.integers(0, 10, size=(2, 3, 4, 4)).astype(float)
    together = stats.bradley_terry(batch)
    assert together.shape == (2, 3, 4)
    for i in range(2):
        for j in range(3):
            np.testing.assert_allclose(together[i, j], stats.bradley_terry(batch[i, j]), atol=1e-8)


def test_bradley_terry_unconnected_groups_are_centred_apart_and_unseen_runs_are_nan() -> None:
    wins = np.zeros((5, 5))
    wins[0, 1], wins[1, 0] = 3.0, 1.0
    wins[2, 3], wins[3, 2] = 2.0, 2.0
    wins[3, 4], wins[4, 3] = 1.0, 4.0
    s = stats.bradley_terry(wins)
    assert s[0] + s[1] == pytest.approx(0.0, abs=1e-9)
    assert s[2] + s[3] + s[4] == pytest.approx(0.0, abs=1e-9)
    assert np.exp(s[0] - s[1]) == pytest.approx(3.01 / 1.01, rel=1e-8)

    lonely = np.zeros((3, 3))
    lonely[0, 1] = 2.0
    s = stats.bradley_terry(lonely)
    assert np.isnan(s[2]) and np.isfinite(s[:2]).all()


def test_bradley_terry_bootstrap() -> None:
    # 3 runs; an item is one comparison: which two runs met and who won (a tie is .5 each)
    outcomes = {(0, 1, 1.0): 30, (0, 1, 0.0): 10, (1, 2, 1.0): 25, (1, 2, 0.5): 10, (0, 2, 0.0): 5}
    outcomes[(0, 2, 1.0)] = 20
    item_wins = np.zeros((len(outcomes), 3, 3))
    for p, (a, b, score) in enumerate(outcomes):
        item_wins[p, a, b], item_wins[p, b, a] = score, 1.0 - score
    counts = np.array(list(outcomes.values()))
    estimates = stats.bradley_terry_bootstrap(item_wins, counts, resamples=400, seed=3)
    point = stats.bradley_terry(np.einsum("p,pij->ij", counts, item_wins))
    assert [e.value for e in estimates] == pytest.approx(list(point), abs=1e-9)
    for e in estimates:
        assert e.low < e.value < e.high and e.n == counts.sum()
    assert estimates[0].low > estimates[2].high  # run 0 wins most, run 2 least


# --- speed -----------------------------------------------------------------------------------


def test_a_report_sized_question_takes_well_under_a_few_seconds() -> None:
    rng = np.random.default_rng(0)
    items = 10_000
    truth = rng.integers(-1, 2, size=items)
    humans = np.where(
        rng.random((items, 5)) < 0.7, truth[:, None], rng.integers(-1, 2, size=(items, 5))
    ).astype(float)
    judge = np.where(rng.random(items) < 0.8, truth, rng.integers(-1, 2, size=items)).astype(float)

    started = time.perf_counter()
    matrix = np.column_stack([humans, judge, stats.majority(humans), stats.mean_rating(humans)])
    profiles = Profiles.from_matrix(matrix)
    w = stats.resample_weights(profiles, 1000, seed=0)
    rows = profiles.rows
    pair_values = []
    results = []
    for i in range(5):
        for j in range(i + 1, 5):
            table = stats.pair_table(rows[:, i], rows[:, j], w)
            values = [
                table.pearson(),
                table.spearman(),
                table.kendall(),
                table.cohen_kappa(),
                table.agreement(),
            ]
            pair_values.append(values[0])
            results.extend(values)
    results.append(stats.mean_over_pairs(pair_values))
    results.append(stats.fleiss_kappa_w(rows[:, :5], w))
    results.extend(stats.krippendorff_alpha_w(rows[:, :5], w, lv) for lv in LEVELS)
    results.append(stats.agreement_w(rows[:, 5], rows[:, 6], w))  # judge vs majority
    results.append(stats.pearson_w(rows[:, 5], rows[:, 7], w))  # judge vs mean human
    elapsed = time.perf_counter() - started

    assert len(results) == 10 * 5 + 1 + 1 + 4 + 2
    assert all(r.shape == (1000,) and np.isfinite(r).all() for r in results)
    assert elapsed < 5.0, f"took {elapsed:.2f} s"
