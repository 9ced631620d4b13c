"""The agreement report of a campaign, from its ratings (annotation.agreement.ratings, read from
the database by annotation.agreement.data) to plain data: per question and rater pair the
statistics of METRICS.md with seeded bootstrap intervals; the sections its campaign's kind
declares (annotation.agreement.sections: Turing-test shares; a Bradley-Terry leaderboard of the
runs and the position bias of pairwise campaigns); the quality of each annotator. No Django:
the same input gives the same report.

The annotators' statistics of a question share one set of resamples of its items, so the mean
over annotator pairs and its interval are computed together; a judge or metric gets its own
resamples of the items it rated.

A lower-is-better metric arrives with its sign turned (annotation.agreement.data), so every
statistic reads a larger code as a better answer; the report says so beside it ("direction",
"sign_turned") and in its "metrics" section.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from itertools import combinations
from typing import Any

import numpy as np

from annotation.agreement import stats
from annotation.agreement.ratings import CampaignRatings, QuestionRatings, Rater

NUMERIC_STATISTICS = ("pearson", "spearman", "kendall", "agreement", "cohen_kappa")
CATEGORICAL_STATISTICS = ("agreement", "cohen_kappa")
HUMANS = "humans"
MEAN = "human mean"
MAJORITY = "human majority"
TURING_OUTCOMES = ("real better", "tie", "simulated better")
SIDES = ("first shown", "tie", "second shown")


def _est(estimate: stats.Estimate) -> dict[str, Any]:
    return estimate.as_dict()


class _Columns:
    """Some columns of a question's matrix grouped into profiles, with one set of resamples
    shared by every statistic computed on them."""

    def __init__(self, matrix: np.ndarray, *, resamples: int, seed: int, level: float) -> None:
        # Items none of these columns rated take no part (resampling them adds only noise).
        keep = ~np.isnan(matrix).all(axis=1)
        self.profiles = stats.Profiles.from_matrix(matrix[keep])
        self.rows = self.profiles.rows
        self.level = level
        self.weights = stats.resample_weights(self.profiles, resamples, seed)
        self._tables: dict[tuple[int, int], stats.PairTable] = {}

    def used(self, *columns: int, at_least: int | None = None) -> int:
        if not columns:
            return 0
        return stats.n_items(self.profiles, list(columns), min_present=at_least)

    def estimate(self, statistic: Callable[[np.ndarray], np.ndarray], n_used: int) -> dict:
        return _est(
            stats.bootstrap(
                self.profiles, statistic, n_used=n_used, weights=self.weights, level=self.level
            )
        )

    def table(self, a: int, b: int, w: np.ndarray) -> stats.PairTable:
        """Columns a and b tabulated under weights w (kept for the shared resamples, which
        every statistic of the pair reads)."""
        if w is not self.weights:
            return stats.pair_table(self.rows[:, a], self.rows[:, b], w)
        if (a, b) not in self._tables:
            self._tables[(a, b)] = stats.pair_table(self.rows[:, a], self.rows[:, b], w)
        return self._tables[(a, b)]

    def pair(self, a: int, b: int, names: tuple[str, ...]) -> dict[str, dict]:
        n = self.used(a, b)

        def statistic(name: str) -> Callable[[np.ndarray], np.ndarray]:
            return lambda w: getattr(self.table(a, b, w), name)()

        return {name: self.estimate(statistic(name), n) for name in names}


def question_report(
    q: QuestionRatings, *, resamples: int = 1000, seed: int = 0, level: float = 0.95
) -> dict[str, Any]:
    """Every statistic of one question: each pair of raters, the annotators together, and each
    judge or metric against the annotators' mean and majority."""
    names = NUMERIC_STATISTICS if q.numeric else CATEGORICAL_STATISTICS
    options: dict[str, Any] = {"resamples": resamples, "seed": seed, "level": level}
    humans, automatic = q.humans, q.automatic
    human_values = q.values[:, humans]
    mean, majority = stats.mean_rating(human_values), stats.majority(human_values)
    # Humans: one set of resamples for all their pairs, so that the mean over pairs and its
    # interval come from the same items.
    together = _Columns(human_values, **options)
    h = len(humans)
    out: dict[str, Any] = {
        "key": q.key,
        "text": q.text,
        "scale": q.scale,
        "numeric": q.numeric,
        "level": q.level,
        "labels": {_code_text(code): label for code, label in q.labels.items()},
        "n_items": together.used(*range(h), at_least=1),
        "raters": [rater.id for rater in q.raters],
        "statistics": list(names),
    }
    pairs = []
    human_pairs = [(a, b) for a, b in combinations(range(h), 2) if together.used(a, b)]
    for a, b in human_pairs:
        pairs.append(
            {
                "a": q.raters[humans[a]].id,
                "b": q.raters[humans[b]].id,
                "stats": together.pair(a, b, names),
            }
        )
    # Judges and metrics with each annotator and with each other, on the items both rated.
    for a, b in combinations(range(len(q.raters)), 2):
        if a in humans and b in humans:
            continue
        two = _Columns(q.values[:, [a, b]], **options)
        if two.used(0, 1):
            pairs.append({"a": q.raters[a].id, "b": q.raters[b].id, "stats": two.pair(0, 1, names)})
    out["pairs"] = pairs
    # The annotators together: the mean over their pairs (MTU-Bench Table 6), Fleiss' kappa and
    # Krippendorff's alpha at the scale's level.
    summary: dict[str, Any] = {"annotators": h, "pairs": len(human_pairs)}
    if human_pairs:
        n_pairable = together.used(*range(h), at_least=2)
        for name in names:

            def mean_over(w: np.ndarray, name: str = name) -> np.ndarray:
                return stats.mean_over_pairs(
                    [getattr(together.table(a, b, w), name)() for a, b in human_pairs]
                )

            summary[f"mean_{name}"] = together.estimate(mean_over, n_pairable)
    if h >= 2:
        rows = together.rows
        n_pairable = together.used(*range(h), at_least=2)
        summary["fleiss_kappa"] = together.estimate(
            lambda w: stats.fleiss_kappa_w(rows, w), n_pairable
        )
        summary["krippendorff_alpha"] = together.estimate(
            lambda w: stats.krippendorff_alpha_w(rows, w, q.level), n_pairable
        )
    out["humans"] = summary
    # Judges and metrics against the humans: the mean human answer (correlations, numeric
    # scales) and the human majority (accuracy, StableToolBench Table 8; and kappa).
    against = []
    for column in automatic:
        three = _Columns(np.column_stack([q.values[:, column], mean, majority]), **options)
        entry: dict[str, Any] = {"rater": q.raters[column].id, **_direction(q.raters[column])}
        if q.numeric:
            entry.update(three.pair(0, 1, ("pearson", "spearman", "kendall")))
        by_majority = three.pair(0, 2, ("agreement", "cohen_kappa"))
        entry["accuracy"] = by_majority["agreement"]
        entry["cohen_kappa"] = by_majority["cohen_kappa"]
        against.append(entry)
    out["automatic"] = against
    out["confusion"] = _confusion(q, majority)
    out["heatmap"] = _heatmap(q, pairs, "pearson" if q.numeric else "cohen_kappa")
    if q.numeric:
        out["scatter"] = {
            q.raters[column].id: _scatter(q.values[:, column], mean) for column in automatic
        }
    return out


def _direction(rater: Rater) -> dict[str, Any]:
    """For a metric: which way is better, and whether its values were turned to compare."""
    if rater.kind != "metric" or rater.direction is None:
        return {}
    return {"direction": rater.direction, "sign_turned": rater.direction == "lower"}


def _code_text(code: float) -> str:
    return str(int(code)) if float(code).is_integer() else repr(float(code))


def _confusion(q: QuestionRatings, majority: np.ndarray) -> dict[str, Any]:
    """Counts of (row, column) codes: every ordered pair of annotators on an item (so the human
    table is symmetric), and each judge or metric against the human majority."""
    codes = sorted(q.labels) or sorted({float(v) for v in np.unique(q.values[~np.isnan(q.values)])})
    k = len(codes)
    if not k:
        return {"labels": [], "humans": [], "automatic": {}}

    def count(rows: np.ndarray, cols: np.ndarray, table: np.ndarray) -> None:
        known = np.array(codes)
        r = np.searchsorted(known, rows)
        c = np.searchsorted(known, cols)
        r, c = np.minimum(r, k - 1), np.minimum(c, k - 1)
        hit = (known[r] == rows) & (known[c] == cols)  # NaN and unknown codes miss
        np.add.at(table, (r[hit], c[hit]), 1)

    humans = q.values[:, q.humans]
    table = np.zeros((k, k), dtype=int)
    for a, b in combinations(range(humans.shape[1]), 2):
        count(humans[:, a], humans[:, b], table)
    table = table + table.T
    automatic = {}
    for column in q.automatic:
        auto = np.zeros((k, k), dtype=int)
        count(q.values[:, column], majority, auto)
        automatic[q.raters[column].id] = auto.tolist()
    return {
        "labels": [q.labels.get(code, _code_text(code)) for code in codes],
        "humans": table.tolist(),
        "automatic": automatic,
    }


def _heatmap(q: QuestionRatings, pairs: list[dict], name: str) -> dict[str, Any]:
    """The statistic between every two raters (their point values; intervals are in pairs)."""
    ids = [rater.id for rater in q.raters]
    slot = {rater: i for i, rater in enumerate(ids)}
    values: list[list[float | None]] = [
        [1.0 if a == b else None for b in range(len(ids))] for a in range(len(ids))
    ]
    for pair in pairs:
        value = pair["stats"][name]["value"]
        a, b = slot[pair["a"]], slot[pair["b"]]
        values[a][b] = values[b][a] = value
    return {"statistic": name, "raters": ids, "values": values}


def _scatter(automatic: np.ndarray, mean: np.ndarray) -> dict[str, list[float]]:
    both = ~np.isnan(automatic) & ~np.isnan(mean)
    return {"x": automatic[both].tolist(), "y": mean[both].tolist()}


# --- campaign kinds -----------------------------------------------------------------------------


def _counts(values: np.ndarray, outcomes: tuple[float, ...]) -> np.ndarray:
    """Per item, how many ratings took each outcome (items x outcomes)."""
    return np.stack([(values == o).sum(axis=1) for o in outcomes], axis=1).astype(float)


def _share_estimates(
    counts: np.ndarray, *, resamples: int, seed: int, level: float
) -> tuple[int, list[stats.Estimate]]:
    """The share of each outcome over all votes, per item counts (items x outcomes) resampled
    by item; and the number of items with a vote."""
    rated = counts.sum(axis=1) > 0
    profiles = stats.Profiles.from_matrix(counts[rated])
    estimates = stats.bootstrap_many(
        profiles,
        lambda w: stats.shares_w(profiles.rows, w),
        n_used=int(profiles.counts.sum()),
        resamples=resamples,
        seed=seed,
        level=level,
    )
    return int(rated.sum()), estimates


def _shares(
    counts: np.ndarray, names: tuple[str, ...], *, resamples: int, seed: int, level: float
) -> dict[str, Any]:
    items, estimates = _share_estimates(counts, resamples=resamples, seed=seed, level=level)
    return {
        "items": items,
        "votes": int(counts.sum()),
        "shares": {name: _est(e) for name, e in zip(names, estimates, strict=True)},
    }


def turing_report(
    ratings: CampaignRatings, *, resamples: int, seed: int, level: float
) -> list[dict[str, Any]]:
    """StableToolBench Figure 8: per dimension, the shares of votes for the real response
    (A), a tie, and the simulated one (B)."""
    return [
        {"key": q.key, "text": q.text}
        | _shares(
            _counts(q.values[:, q.humans], (1.0, 0.0, -1.0)),
            TURING_OUTCOMES,
            resamples=resamples,
            seed=seed,
            level=level,
        )
        for q in ratings.questions
        if q.scale == "pairwise"
    ]


def pairwise_report(
    ratings: CampaignRatings, *, resamples: int, seed: int, level: float
) -> list[dict[str, Any]]:
    """Per pairwise question: a Bradley-Terry leaderboard of the runs from the humans' votes
    and from each judge's verdicts, and the position bias of each (votes for the side shown
    first, a tie, the side shown second)."""
    pairs = ratings.pair_runs or []
    runs = sorted({run for pair in pairs for run in pair if run})
    if len(runs) < 2:
        return []
    slot = {run: i for i, run in enumerate(runs)}
    k = len(runs)
    out = []
    for q in ratings.questions:
        if q.scale != "pairwise":
            continue
        entry: dict[str, Any] = {"key": q.key, "text": q.text}
        boards: dict[str, Any] = {}
        humans = q.values[:, q.humans]
        boards[HUMANS] = _leaderboard(
            _human_wins(humans, pairs, slot, k), runs, ratings, resamples, seed, level
        )
        for column in q.automatic:
            rater = q.raters[column]
            wins = _mean_wins(q.values[:, column], pairs, slot, k)
            board = _leaderboard(wins, runs, ratings, resamples, seed, level)
            boards[rater.id] = {**board, **_direction(rater)}
        entry["leaderboards"] = boards
        bias = {}
        if q.shown is not None:
            bias[HUMANS] = _shares(
                _counts(q.shown, (1.0, 0.0, -1.0)),
                SIDES,
                resamples=resamples,
                seed=seed,
                level=level,
            )
        # A judge's position bias is over all its verdicts on the items (not per question).
        for name, first in ratings.judge_shown.items():
            if first.sum():
                bias[f"judge:{name}"] = _shares(
                    first, SIDES, resamples=resamples, seed=seed, level=level
                )
        entry["position_bias"] = bias
        out.append(entry)
    return out


def _human_wins(
    votes: np.ndarray, pairs: list[tuple[int, int]], slot: dict[int, int], k: int
) -> np.ndarray:
    """Per item, the votes as wins of A's run over B's and back; a tie is half of each."""
    a_wins = (votes == 1).sum(axis=1) + 0.5 * (votes == 0).sum(axis=1)
    b_wins = (votes == -1).sum(axis=1) + 0.5 * (votes == 0).sum(axis=1)
    return _wins(a_wins, b_wins, pairs, slot, k)


def _wins(
    a_wins: np.ndarray,
    b_wins: np.ndarray,
    pairs: list[tuple[int, int]],
    slot: dict[int, int],
    k: int,
) -> np.ndarray:
    a = np.array([slot.get(run_a, -1) for run_a, _ in pairs])
    b = np.array([slot.get(run_b, -1) for _, run_b in pairs])
    valid = (a >= 0) & (b >= 0) & (a != b) & ~np.isnan(a_wins) & ~np.isnan(b_wins)
    wins = np.zeros((len(pairs), k, k))
    rows = np.flatnonzero(valid)
    wins[rows, a[valid], b[valid]] = a_wins[valid]
    wins[rows, b[valid], a[valid]] = b_wins[valid]
    return wins


def _mean_wins(
    values: np.ndarray, pairs: list[tuple[int, int]], slot: dict[int, int], k: int
) -> np.ndarray:
    """A judge's or metric's item verdict m in [-1, 1] as one vote: (1 + m) / 2 to A."""
    return _wins((1 + values) / 2, (1 - values) / 2, pairs, slot, k)


def _leaderboard(
    wins: np.ndarray,
    runs: list[int],
    ratings: CampaignRatings,
    resamples: int,
    seed: int,
    level: float,
) -> dict[str, Any]:
    n, k = wins.shape[0], len(runs)
    voted = wins.reshape(n, k * k).sum(axis=1) > 0
    if not voted.any():
        return {"items": 0, "runs": []}
    profiles = stats.Profiles.from_matrix(wins[voted].reshape(-1, k * k))
    estimates = stats.bradley_terry_bootstrap(
        profiles.rows.reshape(-1, k, k),
        profiles.counts,
        resamples=resamples,
        seed=seed,
        level=level,
    )
    board: list[dict[str, Any]] = [
        {
            "run": run,
            "name": ratings.run_names.get(run, f"run {run}"),
            "strength": _est(estimate),
            "wins": float(wins[voted][:, i, :].sum()),
            "losses": float(wins[voted][:, :, i].sum()),
        }
        for i, (run, estimate) in enumerate(zip(runs, estimates, strict=True))
    ]
    board.sort(key=lambda row: -(row["strength"]["value"] or 0.0))
    return {"items": int(voted.sum()), "runs": board}


def annotators_report(
    ratings: CampaignRatings, *, resamples: int, seed: int, level: float
) -> list[dict[str, Any]]:
    """Per annotator: labels, time per item, agreement with the majority of the other
    annotators (every question they answered, on items where the others have one), and
    accuracy on gold items where the campaign has them."""
    names = [rater.name for rater in ratings.humans]
    n = len(ratings.items)
    out = []
    for j, name in enumerate(names):
        agree = np.zeros((n, 2))  # matches, comparisons
        gold = np.zeros((n, 2))  # correct, gold answers seen
        rated = np.zeros(n, dtype=bool)
        for q in ratings.questions:
            columns = q.humans  # every question has every annotator's column, in one order
            mine = q.values[:, columns[j]]
            present = ~np.isnan(mine)
            rated |= present
            others = [c for c in columns if c != columns[j]]
            if others:
                majority = stats.majority(q.values[:, others])
                both = present & ~np.isnan(majority)
                agree[both, 0] += mine[both] == majority[both]
                agree[both, 1] += 1
            if q.gold is not None:
                known = present & ~np.isnan(q.gold)
                gold[known, 0] += mine[known] == q.gold[known]
                gold[known, 1] += 1
        times = ratings.times.get(name, [])
        entry: dict[str, Any] = {
            "annotator": name,
            "items": int(rated.sum()),
            "median_seconds": statistics.median(times) / 1000 if times else None,
            "mean_seconds": statistics.fmean(times) / 1000 if times else None,
            "agreement_with_others": _ratio(agree, resamples, seed, level),
            "gold_accuracy": _ratio(gold, resamples, seed, level) if gold[:, 1].any() else None,
        }
        out.append(entry)
    return out


def _ratio(counts: np.ndarray, resamples: int, seed: int, level: float) -> dict[str, Any]:
    """Share of hits over trials, summed over resampled items: counts is (items, [hits,
    trials])."""
    seen = counts[:, 1] > 0
    if not seen.any():
        return _est(stats.Estimate(None, None, None, 0))
    split = np.column_stack([counts[seen, 0], counts[seen, 1] - counts[seen, 0]])
    _, (hits, _misses) = _share_estimates(split, resamples=resamples, seed=seed, level=level)
    return _est(hits)


def campaign_report(
    ratings: CampaignRatings,
    *,
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    questions: list[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """The whole report as JSON-able data. `questions` limits it to those keys (an expanded
    multiple-choice question is "key:choice"; its bare key selects all its choices)."""
    chosen = [
        q
        for q in ratings.questions
        if not questions or q.key in questions or q.key.split(":", 1)[0] in questions
    ]
    total = len(chosen) + 1
    report: dict[str, Any] = {
        "campaign": {"id": ratings.campaign_id, "name": ratings.campaign_name},
        "kind": ratings.kind,
        "items": len(ratings.items),
        "annotators": [rater.name for rater in ratings.humans],
        "resamples": resamples,
        "seed": seed,
        "level": level,
        # The metrics compared, and how: a lower-is-better one with its sign turned.
        "metrics": {
            name: {"direction": direction, "sign_turned": direction == "lower"}
            for name, direction in sorted(ratings.metric_directions.items())
        },
        "questions": [],
    }
    for done, q in enumerate(chosen):
        report["questions"].append(question_report(q, resamples=resamples, seed=seed, level=level))
        if progress:
            progress(done + 1, total)
    subset = replace(ratings, questions=chosen)
    for section in ratings.sections:
        report[section.name] = section.compute(subset, resamples=resamples, seed=seed, level=level)
    report["annotator_quality"] = annotators_report(
        ratings, resamples=resamples, seed=seed, level=level
    )
    if progress:
        progress(total, total)
    return report


# --- flat rows for the summary CSV --------------------------------------------------------------

SUMMARY_COLUMNS = ("question", "rater_a", "rater_b", "statistic", "n", "value", "ci_low", "ci_high")


def row(question: str, a: str, b: str, statistic: str, est: dict | None) -> tuple[Any, ...]:
    """One row of the summary CSV (SUMMARY_COLUMNS)."""
    est = est or {}
    return (
        question,
        a,
        b,
        statistic,
        est.get("n", 0),
        est.get("value"),
        est.get("low"),
        est.get("high"),
    )


def turing_rows(dimensions: list[dict[str, Any]]) -> Iterator[tuple[Any, ...]]:
    """The summary rows of turing_report's section."""
    for dimension in dimensions:
        for outcome, est in dimension["shares"].items():
            yield row(dimension["key"], HUMANS, "", f"share {outcome}", est)


def pairwise_rows(questions: list[dict[str, Any]]) -> Iterator[tuple[Any, ...]]:
    """The summary rows of pairwise_report's section."""
    for q in questions:
        for rater, board in q["leaderboards"].items():
            for entry in board["runs"]:
                yield row(
                    q["key"], rater, entry["name"], "bradley_terry_log_strength", entry["strength"]
                )
        for rater, bias in q["position_bias"].items():
            for side, est in bias["shares"].items():
                yield row(q["key"], rater, "", f"share {side}", est)


def question_rows(q: dict[str, Any]) -> Iterator[tuple[Any, ...]]:
    """The summary rows of one question's report (question_report)."""
    key = q["key"]
    for pair in q["pairs"]:
        for statistic, est in pair["stats"].items():
            yield row(key, pair["a"], pair["b"], statistic, est)
    for name, est in q["humans"].items():
        if isinstance(est, dict):
            yield row(key, HUMANS, HUMANS, name, est)
    for entry in q["automatic"]:
        for statistic in ("pearson", "spearman", "kendall"):
            if statistic in entry:
                yield row(key, entry["rater"], MEAN, statistic, entry[statistic])
        yield row(key, entry["rater"], MAJORITY, "accuracy", entry["accuracy"])
        yield row(key, entry["rater"], MAJORITY, "cohen_kappa", entry["cohen_kappa"])


def summary_rows(report: dict[str, Any], sections: Sequence[Any] = ()) -> Iterator[tuple[Any, ...]]:
    """One row per statistic (SUMMARY_COLUMNS), in the report's order; `sections`: those of
    the campaign's kind (annotation.kinds.base.ReportSection), each writing its own rows."""
    for q in report["questions"]:
        yield from question_rows(q)
    for section in sections:
        yield from section.rows(report.get(section.name) or [])
    for entry in report.get("annotator_quality", []):
        name = f"human:{entry['annotator']}"
        yield row("", name, "others' majority", "agreement", entry["agreement_with_others"])
        if entry["gold_accuracy"]:
            yield row("", name, "gold", "accuracy", entry["gold_accuracy"])
