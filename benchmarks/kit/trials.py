"""A run's metrics over repeated trials. Pure Python, no Django.

A run with k trials answers every item k times; trial t is the scored items with repeat t.
Each trial's run-level metrics are the suite's own aggregate over that trial's items, as for a
run of one trial; the run reports each metric as the mean over the trials, with the population
standard deviation beside it (`<name>_std`, as judge jobs report their repeats).

For a success metric (a per-item score that is 0 or 1, or 0 or 100, each time), the run also
reports, for every k from 1 to the number of trials, with n trials and c successes per item:

  pass@k = 1 - C(n-c, k) / C(n, k)   at least one of k trials drawn succeeds: the unbiased
                                      estimator of Chen et al. 2021 (HumanEval, "Evaluating
                                      Large Language Models Trained on Code")
  pass^k = C(c, k) / C(n, k)          all k trials drawn succeed: Yao et al. 2024 (tau-bench)

each averaged over the items and given on the metric's own scale (0..1 or 0..100).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace

from benchmarks.kit.judging import over_repeats
from benchmarks.kit.protocol import Scored, Scores

TRIALS = "trials"


def split_trials(scored: Sequence[Scored]) -> list[list[Scored]]:
    """The items of each trial, in trial order, each as the suite sees a one-trial run
    (repeat 0: a trial's items are not a published file's repeated lines)."""
    trials: dict[int, list[Scored]] = {}
    for entry in scored:
        trials.setdefault(entry.repeat, []).append(replace(entry, repeat=0))
    return [trials[trial] for trial in sorted(trials)]


def over_trials(
    scored: Sequence[Scored],
    aggregate: Callable[[Sequence[Scored]], Scores],
    successes: Collection[str] | None = None,
) -> dict[str, float | None]:
    """The run's metrics over its trials: {name: mean, name_std: sd} for every metric the
    aggregate gives, "trials": the number of trials, and pass@k / pass^k (`pass_at_k`) for the
    per-item success metrics among `successes` (None: any that looks like one)."""
    per_trial = [aggregate(items) for items in split_trials(scored)]
    metrics = over_repeats(per_trial)
    metrics.update(pass_at_k(scored, successes))
    metrics[TRIALS] = float(len(per_trial))
    return metrics


def success_scale(values: Sequence[float | None]) -> float | None:
    """1 or 100 when every value is 0 or 1 (or 0 or 100): the value that means success; None
    when the values are not a success (a similarity, a count) or there are none."""
    present = [value for value in values if value is not None]
    if not present:
        return None
    for scale in (1.0, 100.0):
        if all(value in (0, scale) for value in present):
            return scale
    return None


def item_trials(scored: Sequence[Scored], name: str) -> list[list[float | None]]:
    """Each item's values of `name` over its trials. An item is its cluster copy and key, so
    an item drawn twice in a bootstrap resample counts twice."""
    by_item: dict[tuple[str, str], list[float | None]] = {}
    for entry in scored:
        value = entry.scores.get(name)
        numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
        by_item.setdefault((entry.group, entry.item.key), []).append(
            float(value) if numeric and value is not None else None
        )
    return list(by_item.values())


def pass_at(n: int, c: int, k: int) -> float:
    """Chen et al. 2021: the chance that at least one of k of the n trials succeeds."""
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat(n: int, c: int, k: int) -> float:
    """Yao et al. 2024 (tau-bench): the chance that all k of the n trials succeed."""
    return math.comb(c, k) / math.comb(n, k)


def pass_at_k(
    scored: Sequence[Scored], successes: Collection[str] | None = None
) -> dict[str, float | None]:
    """{"<name> pass@k", "<name> pass^k"} for k = 1 .. the fewest trials an item has, for each
    per-item success metric; an item missing a value in some trial is left out of that
    metric."""
    names: list[str] = []
    for entry in scored:
        names.extend(name for name in entry.scores if name not in names)
    result: dict[str, float | None] = {}
    for name in names:
        if successes is not None and name not in successes:
            continue
        items = item_trials(scored, name)
        scale = success_scale([value for values in items for value in values])
        complete = [values for values in items if None not in values]
        if scale is None or not complete or min(map(len, complete)) < 2:
            continue
        counts = [(len(values), sum(value == scale for value in values)) for values in complete]
        for k in range(1, min(n for n, _ in counts) + 1):
            at = [pass_at(n, c, k) for n, c in counts]
            hat = [pass_hat(n, c, k) for n, c in counts]
            result[f"{name} pass@{k}"] = scale * math.fsum(at) / len(at)
            result[f"{name} pass^{k}"] = scale * math.fsum(hat) / len(hat)
    return result
