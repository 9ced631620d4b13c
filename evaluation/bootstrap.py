"""Seeded bootstrap confidence intervals for a run's metrics. Pure Python and numpy, no Django.

The unit resampled is the suite's cluster (an item, or a whole dialogue), drawn with
replacement as many times as there are clusters; every resample goes through the suite's own
aggregate, so any metric (F1, SATS, CSR) gets an interval without a formula of its own. A
cluster drawn k times appears as k groups ("<cluster>#1", ...), so per-dialogue metrics count it
k times. Percentile intervals; a metric undefined in more than half the resamples gets none.

An aggregate that is a plain mean per metric (the suite says so: `means`, checked against the
aggregate's own point estimate before it is trusted) is resampled without calling it: the
resample's mean is (clusters' sums weighted by how often each was drawn) / (their counts, the
same way), and the draws are counts of the distinct cluster profiles (multinomial), the same
distribution as drawing clusters one by one, at a cost that grows with the profiles.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from benchmarks.kit.protocol import Scored, Scores

DEFAULT_RESAMPLES = 1000

# Profiles x resamples drawn at once by the mean path (bounds its memory on very large runs).
_BLOCK_CELLS = 1_000_000


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default method)."""
    if not sorted_values:
        raise ValueError("no values")
    position = (len(sorted_values) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    fraction = position - low
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * fraction


def bootstrap_intervals(
    scored: Sequence[Scored],
    aggregate: Callable[[Sequence[Scored]], Scores],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
    means: Mapping[str, int | None] | None = None,
) -> dict[str, list[float]]:
    """{metric: [low, high]} at the given level. `scored` items carry their cluster in
    `group` (items with an empty group are their own cluster). `means` ({metric: digits it is
    rounded to, None for none}) says the aggregate is, for each of them, the mean of the
    items' values of that name (items without one skipped): when every metric the aggregate
    returns is one of them and its point estimate agrees, the resamples' means are computed
    directly instead of by the aggregate."""
    if means:
        direct = mean_intervals(
            scored, aggregate, means, resamples=resamples, seed=seed, level=level
        )
        if direct is not None:
            return direct
    clusters = _clusters(scored)
    if not clusters or resamples < 1:
        return {}
    return _through_aggregate(clusters, aggregate, resamples, seed, level)


def _clusters(scored: Sequence[Scored]) -> dict[str, list[Scored]]:
    clusters: dict[str, list[Scored]] = {}
    for index, entry in enumerate(scored):
        clusters.setdefault(entry.group or f"#{index}", []).append(entry)
    return clusters


def mean_intervals(
    scored: Sequence[Scored],
    aggregate: Callable[[Sequence[Scored]], Scores],
    means: Mapping[str, int | None],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, list[float]] | None:
    """What bootstrap_intervals gives when the aggregate is the declared `means` (milliseconds
    of CPU); None when it is not (the caller then resamples through the aggregate, which takes
    seconds for thousands of items)."""
    if not means:
        return None
    clusters = _clusters(scored)
    if not clusters or resamples < 1:
        return {}
    direct = _mean_resamples(list(clusters.values()), aggregate, means, resamples, seed)
    return None if direct is None else _intervals(direct, resamples, level)


def _through_aggregate(
    clusters: dict[str, list[Scored]],
    aggregate: Callable[[Sequence[Scored]], Scores],
    resamples: int,
    seed: int,
    level: float,
) -> dict[str, list[float]]:
    keys = list(clusters)
    rng = random.Random(seed)
    # A cluster's k-th copy in a resample is the same in every resample: made once.
    copies: dict[tuple[str, int], list[Scored]] = {}
    values: dict[str, list[float]] = {}
    for _ in range(resamples):
        counts: dict[str, int] = {}
        sample: list[Scored] = []
        for key in rng.choices(keys, k=len(keys)):
            counts[key] = counts.get(key, 0) + 1
            copy = copies.get((key, counts[key]))
            if copy is None:
                group = f"{key}#{counts[key]}"
                copy = copies[key, counts[key]] = [
                    replace(entry, group=group) for entry in clusters[key]
                ]
            sample.extend(copy)
        for name, value in aggregate(sample).items():
            if _usable(value):
                values.setdefault(name, []).append(float(value))
    return _intervals(values, resamples, level)


def _usable(value: object) -> bool:
    numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
    return numeric and math.isfinite(value)  # type: ignore[arg-type]


def _intervals(
    values: dict[str, list[float]], resamples: int, level: float
) -> dict[str, list[float]]:
    tail = (1 - level) / 2
    intervals = {}
    for name, found in values.items():
        if len(found) * 2 < resamples:
            continue
        found.sort()
        intervals[name] = [percentile(found, tail), percentile(found, 1 - tail)]
    return intervals


def _mean(total: float, count: float, digits: int | None) -> float | None:
    if not count:
        return None
    value = total / count
    return value if digits is None else round(value, digits)


def _mean_resamples(
    clusters: Sequence[Sequence[Scored]],
    aggregate: Callable[[Sequence[Scored]], Scores],
    means: Mapping[str, int | None],
    resamples: int,
    seed: int,
) -> dict[str, list[float]] | None:
    """Each metric's usable values over the resamples, computed as means; None when the
    aggregate is not the declared means here (another metric, another value, a value that is
    not a number), so the caller resamples through it."""
    point = aggregate([entry for members in clusters for entry in members])
    names = list(point)
    if not names or any(name not in means for name in names):
        return None
    # Per cluster and metric: the sum of the items' values and how many have one.
    sums = np.zeros((len(clusters), len(names)))
    counts = np.zeros((len(clusters), len(names)))
    for row, members in enumerate(clusters):
        for column, name in enumerate(names):
            for entry in members:
                value = entry.scores.get(name)
                if value is None:
                    continue
                if not isinstance(value, (int, float)) or not math.isfinite(value):
                    return None
                sums[row, column] += value
                counts[row, column] += 1
    for column, name in enumerate(names):
        whole = _mean(float(sums[:, column].sum()), float(counts[:, column].sum()), means[name])
        expected = point[name]
        if whole is None or expected is None:
            if whole is not expected:
                return None
        elif not _usable(expected) or not math.isclose(whole, expected, rel_tol=1e-9):
            return None
    profiles, frequency = np.unique(np.hstack([sums, counts]), axis=0, return_counts=True)
    profile_sums, profile_counts = profiles[:, : len(names)], profiles[:, len(names) :]
    rng = np.random.default_rng(seed)
    share = frequency / frequency.sum()
    block = max(1, _BLOCK_CELLS // len(profiles))
    values: dict[str, list[float]] = {}
    done = 0
    while done < resamples:
        size = min(block, resamples - done)
        drawn = rng.multinomial(len(clusters), share, size=size).astype(float)
        totals, present = drawn @ profile_sums, drawn @ profile_counts
        for column, name in enumerate(names):
            digits = means[name]
            for total, count in zip(totals[:, column], present[:, column], strict=True):
                value = _mean(float(total), float(count), digits)
                if value is not None and math.isfinite(value):
                    values.setdefault(name, []).append(value)
        done += size
    return values
