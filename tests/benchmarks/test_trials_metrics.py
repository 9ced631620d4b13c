"""Metrics over repeated trials (benchmarks/kit/trials.py), against hand-computed cases."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from benchmarks.kit.protocol import Item, Outcome, Scored, Scores
from benchmarks.kit.trials import over_trials, pass_at_k, split_trials, success_scale

# Three items, four trials; item a succeeds in all four, b in trials 0 and 1, c in none.
SUCCESSES = {"a": [1, 1, 1, 1], "b": [1, 1, 0, 0], "c": [0, 0, 0, 0]}


def scored(table: dict[str, list[float]], name: str = "accuracy") -> list[Scored]:
    trials = len(next(iter(table.values())))
    return [
        Scored(
            item=Item(split="test", external_id=key, input={}),
            outcome=Outcome(output=""),
            scores={name: values[trial]},
            repeat=trial,
        )
        for trial in range(trials)
        for key, values in table.items()
    ]


def mean_accuracy(items: Sequence[Scored]) -> Scores:
    # A suite's aggregate sees a one-trial run: every item's repeat is 0.
    assert all(entry.repeat == 0 for entry in items)
    values = [entry.scores["accuracy"] or 0.0 for entry in items]
    return {"accuracy": sum(values) / len(values)}


def test_pass_at_k_and_pass_hat_k_by_hand() -> None:
    result = pass_at_k(scored(SUCCESSES))
    # n = 4 trials; c = 4, 2, 0 successes; C(4,1) = 4, C(4,2) = 6, C(4,3) = 4, C(4,4) = 1.
    expected = {
        # pass^1 = c/n: (4/4 + 2/4 + 0/4) / 3 = 0.5, and pass@1 is the same mean
        "accuracy pass@1": (1 + 0.5 + 0) / 3,
        "accuracy pass^1": (1 + 0.5 + 0) / 3,
        # pass^2 = C(c,2)/C(4,2): 6/6, 1/6, 0/6 -> (1 + 1/6 + 0) / 3 = 7/18
        "accuracy pass^2": (1 + 1 / 6 + 0) / 3,
        # pass@2 = 1 - C(4-c,2)/C(4,2): 1 - 0/6, 1 - 1/6, 1 - 6/6 -> (1 + 5/6 + 0) / 3 = 11/18
        "accuracy pass@2": (1 + 5 / 6 + 0) / 3,
        # pass^3: C(4,3)/4, C(2,3)/4 = 0, 0 -> 1/3; pass@3: 1, 1 - C(2,3)/4 = 1, 1 - 4/4 = 0
        "accuracy pass^3": 1 / 3,
        "accuracy pass@3": 2 / 3,
        # pass^4: only a has every trial right; pass@4: a and b have at least one
        "accuracy pass^4": 1 / 3,
        "accuracy pass@4": 2 / 3,
    }
    assert result.keys() == expected.keys()
    for name, value in expected.items():
        assert result[name] == pytest.approx(value), name
    assert result["accuracy pass^2"] == pytest.approx(7 / 18)
    assert result["accuracy pass@2"] == pytest.approx(11 / 18)


def test_a_percentage_success_is_reported_on_its_own_scale() -> None:
    percent = {key: [100 * v for v in values] for key, values in SUCCESSES.items()}
    result = pass_at_k(scored(percent))
    assert result["accuracy pass^2"] == pytest.approx(100 * 7 / 18)
    assert result["accuracy pass@4"] == pytest.approx(100 * 2 / 3)


def test_mean_and_sd_over_trials_with_pass_k() -> None:
    metrics = over_trials(scored(SUCCESSES), mean_accuracy)
    # per trial accuracy: t0 (1+1+0)/3 = 2/3, t1 2/3, t2 (1+0+0)/3 = 1/3, t3 1/3
    # mean 1/2; every trial is 1/6 away, so the population sd is 1/6
    assert metrics["accuracy"] == pytest.approx(0.5)
    assert metrics["accuracy_std"] == pytest.approx(1 / 6)
    assert metrics["trials"] == 4
    assert metrics["accuracy pass^2"] == pytest.approx(7 / 18)


def test_only_success_metrics_get_pass_k() -> None:
    # a similarity (0.5 is neither success nor failure) has a mean but no pass@k
    similar = {"a": [0.5, 1.0], "b": [0.0, 0.25]}
    assert pass_at_k(scored(similar, "similarity")) == {}
    # and a success metric the caller does not count as one is left out
    assert pass_at_k(scored(SUCCESSES), successes={"unparsed"}) == {}
    assert success_scale([0, 1, None, 1]) == 1
    assert success_scale([0, 100, 100]) == 100
    assert success_scale([0, 1, 100]) is None
    assert success_scale([None]) is None


def test_each_trial_is_aggregated_as_a_run_of_its_own() -> None:
    trials = split_trials(scored(SUCCESSES))
    assert [[entry.item.external_id for entry in trial] for trial in trials] == [
        ["a", "b", "c"]
    ] * 4
    assert [entry.scores["accuracy"] for entry in trials[2]] == [1, 0, 0]
    assert all(entry.repeat == 0 for trial in trials for entry in trial)


def test_an_item_drawn_twice_in_a_resample_counts_twice() -> None:
    # a bootstrap resample gives a drawn-twice cluster two groups: b counted twice here
    entries = [entry for entry in scored(SUCCESSES) if entry.item.external_id != "c"]
    doubled = entries + [
        Scored(item=e.item, outcome=e.outcome, scores=e.scores, group="b#2", repeat=e.repeat)
        for e in entries
        if e.item.external_id == "b"
    ]
    # pass^2: a 1, b 1/6, b 1/6 -> (1 + 1/3) / 3 = 4/9
    assert math.isclose(pass_at_k(doubled)["accuracy pass^2"], 4 / 9)
