"""Seeded bootstrap intervals (evaluation/bootstrap.py): pure, no database."""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Sequence

import numpy
import pytest

from benchmarks.kit.protocol import Item, Outcome, Scored, Scores, mean
from evaluation.bootstrap import bootstrap_intervals, percentile


def scored(values: Sequence[float | None], groups: Sequence[str] | None = None) -> list[Scored]:
    """One Scored item per value, under metric "acc"; `groups` gives each item's cluster."""
    groups = groups or [""] * len(values)
    return [
        Scored(
            item=Item(split="test", external_id=str(index), input={}),
            outcome=Outcome(output=""),
            scores={"acc": value},
            group=group,
        )
        for index, (value, group) in enumerate(zip(values, groups, strict=True))
    ]


def mean_of_acc(sample: Sequence[Scored]) -> Scores:
    return {"acc": mean([entry.scores["acc"] for entry in sample])}


# --- percentile ---------------------------------------------------------------------------


def test_percentile_is_numpys_default_interpolation() -> None:
    rng = random.Random(11)
    for size in (1, 2, 3, 10, 57, 200):
        values = sorted(rng.uniform(-50, 50) for _ in range(size))
        for q in (0.0, 0.025, 0.25, 0.5, 0.975, 1.0, rng.random(), rng.random()):
            expected = float(numpy.percentile(values, q * 100))
            assert abs(percentile(values, q) - expected) <= 1e-12, (size, q)


def test_percentile_by_hand() -> None:
    # position (4 - 1) * 0.5 = 1.5: halfway between 2 and 4
    assert percentile([1.0, 2.0, 4.0, 8.0], 0.5) == 3.0
    assert percentile([1.0, 2.0, 4.0, 8.0], 1.0) == 8.0
    assert percentile([5.0], 0.975) == 5.0
    with pytest.raises(ValueError, match="no values"):
        percentile([], 0.5)


# --- bootstrap_intervals ------------------------------------------------------------------


def test_the_same_seed_gives_the_same_intervals_and_another_seed_others() -> None:
    rng = random.Random(5)
    items = scored([float(rng.random() < 0.6) for _ in range(80)])
    first = bootstrap_intervals(items, mean_of_acc, resamples=300, seed=1)
    again = bootstrap_intervals(items, mean_of_acc, resamples=300, seed=1)
    other = bootstrap_intervals(items, mean_of_acc, resamples=300, seed=2)
    assert first == again
    assert first != other
    assert set(first) == {"acc"}


def test_a_constant_metric_has_a_zero_width_interval() -> None:
    items = scored([1.0] * 30)
    assert bootstrap_intervals(items, mean_of_acc, resamples=200, seed=0) == {"acc": [1.0, 1.0]}


def test_the_interval_of_a_mean_holds_the_estimate_and_has_a_plausible_width() -> None:
    rng = random.Random(3)
    values = [float(rng.random() < 0.5) for _ in range(200)]
    estimate = sum(values) / len(values)
    [(low, high)] = bootstrap_intervals(
        scored(values), mean_of_acc, resamples=1000, seed=0
    ).values()
    assert low < estimate < high
    # the normal approximation: 2 * 1.96 * sqrt(p (1 - p) / 200) is about 0.139 at p = 0.5
    assert 0.10 < high - low < 0.18


def test_a_lower_level_gives_a_narrower_interval() -> None:
    rng = random.Random(4)
    items = scored([rng.gauss(0, 1) for _ in range(100)])
    [(low95, high95)] = bootstrap_intervals(items, mean_of_acc, resamples=500, seed=0).values()
    [(low50, high50)] = bootstrap_intervals(
        items, mean_of_acc, resamples=500, seed=0, level=0.5
    ).values()
    assert low95 < low50 < high50 < high95


def test_clusters_are_resampled_whole() -> None:
    # given 10 dialogues of 3 turns each
    groups = [f"d{i}" for i in range(10) for _ in range(3)]
    items = scored([1.0] * 30, groups)
    seen: list[tuple[int, int, Counter[str]]] = []

    def aggregate(sample: Sequence[Scored]) -> Scores:
        per_group = Counter(entry.group for entry in sample)
        seen.append((len(per_group), len(sample), per_group))
        return {"groups": float(len(per_group))}

    # when
    intervals = bootstrap_intervals(items, aggregate, resamples=100, seed=0)
    # then every resample holds as many groups as there are dialogues, each a whole dialogue
    assert len(seen) == 100
    assert {(groups, size) for groups, size, _ in seen} == {(10, 30)}
    for _, _, per_group in seen:
        assert set(per_group.values()) == {3}
        assert all(re.fullmatch(r"d\d#\d+", group) for group in per_group)
    # a dialogue drawn twice appears as two groups in some resample
    assert any(any(group.endswith("#2") for group in per_group) for _, _, per_group in seen)
    assert intervals == {"groups": [10.0, 10.0]}


def test_items_without_a_group_are_their_own_cluster() -> None:
    items = scored([1.0] * 7)
    sizes: list[tuple[int, int]] = []

    def aggregate(sample: Sequence[Scored]) -> Scores:
        sizes.append((len({entry.group for entry in sample}), len(sample)))
        return {}

    assert bootstrap_intervals(items, aggregate, resamples=20, seed=0) == {}
    assert set(sizes) == {(7, 7)}


def test_a_metric_undefined_in_most_resamples_gets_no_interval() -> None:
    items = scored([0.0, 1.0, 1.0, 0.0, 1.0])
    calls = 0

    def aggregate(sample: Sequence[Scored]) -> Scores:
        nonlocal calls
        calls += 1
        return {
            "acc": mean([entry.scores["acc"] for entry in sample]),
            # defined in 2 of every 5 resamples
            "rare": 1.0 if calls % 5 < 2 else None,
            # defined in exactly half the resamples: still enough
            "half": 2.0 if calls % 2 else None,
            # not numbers
            "flag": True,
            "nan": float("nan"),
        }

    intervals = bootstrap_intervals(items, aggregate, resamples=100, seed=0)
    assert set(intervals) == {"acc", "half"}
    assert intervals["half"] == [2.0, 2.0]


def test_nothing_to_resample_gives_no_intervals() -> None:
    assert bootstrap_intervals([], mean_of_acc, resamples=100) == {}
    assert bootstrap_intervals(scored([1.0, 0.0]), mean_of_acc, resamples=0) == {}


# --- declared means (issue 19: the intervals of a 2,000-item run cost seconds of CPU) -------


def rounded_means(names: Sequence[str], digits: int | None = 2):  # type: ignore[no-untyped-def]
    """An aggregate that is what `means` declares, counting its calls."""
    calls = []

    def aggregate(sample: Sequence[Scored]) -> Scores:
        calls.append(len(sample))
        result: Scores = {}
        for name in names:
            value = mean([entry.scores.get(name) for entry in sample])
            if value is not None and digits is not None:
                value = round(value, digits)
            result[name] = value
        return result

    return aggregate, calls


def test_declared_means_are_resampled_without_calling_the_aggregate_each_time() -> None:
    # given 2,000 items, a 0/1 metric and a continuous one, some without a value
    rng = random.Random(8)
    items = scored([float(rng.random() < 0.6) for _ in range(2000)])
    for entry in items:
        entry.scores["sim"] = None if rng.random() < 0.1 else rng.random()
    aggregate, calls = rounded_means(["acc", "sim"])
    # when
    direct = bootstrap_intervals(
        items, aggregate, resamples=1000, seed=3, means={"acc": 2, "sim": 2}
    )
    # then the aggregate ran once (to check the declaration), not once per resample
    assert calls == [2000]
    # and the intervals are the resampling's: within Monte Carlo error of the aggregate's own
    calls.clear()
    through_aggregate = bootstrap_intervals(items, aggregate, resamples=1000, seed=3)
    assert len(calls) == 1000
    assert set(direct) == set(through_aggregate) == {"acc", "sim"}
    for name in direct:
        for mine, theirs in zip(direct[name], through_aggregate[name], strict=True):
            assert abs(mine - theirs) <= 0.011, (name, direct, through_aggregate)
    # the normal approximation of acc's: 0.6 +/- 1.96 * sqrt(0.24 / 2000) = +/- 0.021
    low, high = direct["acc"]
    assert 0.035 <= high - low <= 0.05
    # the same seed gives the same intervals, another seed others (unrounded, to see them)
    assert direct == bootstrap_intervals(
        items, aggregate, resamples=1000, seed=3, means={"acc": 2, "sim": 2}
    )
    exact, _ = rounded_means(["acc", "sim"], digits=None)
    undeclared = {"acc": None, "sim": None}
    first = bootstrap_intervals(items, exact, resamples=300, seed=3, means=undeclared)
    assert first == bootstrap_intervals(items, exact, resamples=300, seed=3, means=undeclared)
    assert first != bootstrap_intervals(items, exact, resamples=300, seed=4, means=undeclared)


def test_declared_means_resample_whole_clusters() -> None:
    # given 20 dialogues of 5 turns, each dialogue all right or all wrong: the interval of the
    # mean is that of 20 draws, far wider than that of 100 independent items
    groups = [f"d{i}" for i in range(20) for _ in range(5)]
    values = [float(i < 50) for i in range(100)]
    aggregate, _ = rounded_means(["acc"], digits=None)
    [(low, high)] = bootstrap_intervals(
        scored(values, groups), aggregate, resamples=2000, seed=0, means={"acc": None}
    ).values()
    # binomial(20, 0.5) / 20: its 2.5th and 97.5th percentiles are 0.3 and 0.7
    assert 0.25 <= low <= 0.3 and 0.7 <= high <= 0.75
    [(low_items, high_items)] = bootstrap_intervals(
        scored(values), aggregate, resamples=2000, seed=0, means={"acc": None}
    ).values()
    # 100 independent items: 0.5 +/- 1.96 * sqrt(0.25 / 100) = +/- 0.098
    assert 0.38 <= low_items < 0.5 < high_items <= 0.62


def test_a_declaration_the_aggregate_does_not_bear_out_is_not_trusted() -> None:
    rng = random.Random(2)
    items = scored([rng.random() ** 3 for _ in range(50)])
    # an aggregate that is not the mean it is declared to be (a median, about half the mean)
    calls = []

    def median(sample: Sequence[Scored]) -> Scores:
        calls.append(1)
        return {"acc": round(float(numpy.median([e.scores["acc"] for e in sample])), 2)}

    # and one that returns a metric the declaration does not name
    def more(sample: Sequence[Scored]) -> Scores:
        calls.append(1)
        return {**mean_of_acc(sample), "n": float(len(sample))}

    for aggregate in (median, more):
        calls.clear()
        declared = bootstrap_intervals(items, aggregate, resamples=200, seed=1, means={"acc": 2})
        # resampled through the aggregate: once for the check, then once per resample
        assert len(calls) == 201
        assert declared == bootstrap_intervals(items, aggregate, resamples=200, seed=1)


def test_declared_means_keep_the_rules_on_undefined_and_constant_metrics() -> None:
    # "acc" is always 1; "rare" has a value in one item of 40, so most resamples lack it
    items = scored([1.0] * 40)
    items[7].scores["rare"] = 1.0
    aggregate, calls = rounded_means(["acc", "rare"])
    intervals = bootstrap_intervals(
        items, aggregate, resamples=500, seed=0, means={"acc": 2, "rare": 2}
    )
    assert calls == [40]
    # P(item 7 drawn) = 1 - (39/40)^40 = 0.64: defined in more than half the resamples
    assert intervals == {"acc": [1.0, 1.0], "rare": [1.0, 1.0]}
    items[7].scores["rare"] = None
    items[7].scores["never"] = None
    aggregate, calls = rounded_means(["acc", "never"])
    assert bootstrap_intervals(
        items, aggregate, resamples=500, seed=0, means={"acc": 2, "never": 2}
    ) == {"acc": [1.0, 1.0]}
    assert calls == [40]
