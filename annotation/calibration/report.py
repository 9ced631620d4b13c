"""A judge version's calibration report, as plain data (the page and the CSV show it): per task
(the judged runs' benchmark and task) the judge's own position bias and consistency of orders
(pairwise judges), and per question humans answered about the same items: agreement with the
human majority (accuracy, Cohen's kappa; Pearson against the mean human answer where the
question is numeric), the expected calibration error and the reliability diagram's bins, and how
the judge's verdict and the humans' go with the length of the answers. Every figure has a
percentile interval from one set of item bootstrap resamples (annotation.agreement.stats); the
statistics are annotation.agreement.stats' and annotation.calibration.stats'.

The judge's confidence in an item's verdict is the share of its repeats (each repeat of a
pairwise judge with its two orders combined) that gave that verdict; a score (the mean of the
repeats) has none, and no ECE.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from annotation.agreement import stats as agreement
from annotation.calibration import data
from annotation.calibration import stats as calibration
from evaluation.models import JudgeVersion

SHOWN = ("first shown", "tie", "second shown")
# The columns of a question's matrix.
JUDGE, MAJORITY, MEAN, CONFIDENCE, CORRECT, LENGTH = range(6)


def _est(estimate: agreement.Estimate) -> dict[str, Any]:
    return estimate.as_dict()


class _Resampled:
    """A matrix's rows grouped into profiles, and one set of resamples every figure shares."""

    def __init__(self, matrix: np.ndarray, *, resamples: int, seed: int, level: float) -> None:
        self.profiles = agreement.Profiles.from_matrix(matrix)
        self.rows = self.profiles.rows
        self.weights = agreement.resample_weights(self.profiles, resamples, seed)
        self.level = level

    def used(self, mask: np.ndarray) -> int:
        return int(self.profiles.counts[mask].sum())

    def estimate(self, statistic: Callable[[np.ndarray], np.ndarray], n: int) -> dict[str, Any]:
        return _est(
            agreement.bootstrap(
                self.profiles, statistic, n_used=n, weights=self.weights, level=self.level
            )
        )

    def pair(self, a: int, b: int, name: str) -> dict[str, Any]:
        rows = self.rows
        both = np.isfinite(rows[:, a]) & np.isfinite(rows[:, b])
        return self.estimate(
            lambda w: getattr(agreement.pair_table(rows[:, a], rows[:, b], w), name)(),
            self.used(both),
        )


def _finite(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _label(coder: Any, code: float) -> str:
    """A code as its question names it (a score as its number)."""
    if not math.isfinite(code):
        return ""
    return str(coder.labels.get(code, f"{code:g}"))


def position_section(
    units: list[data.Unit], *, resamples: int, seed: int, level: float
) -> dict[str, Any] | None:
    """A pairwise judge's verdicts by the side shown: the shares for the first shown, tie and
    second shown over all its judgments, and the share of repeats judged in both orders whose
    two verdicts agree (consistency). None for a judge of single answers."""
    if not any(unit.b for unit in units):
        return None
    counts, consistent = [], []
    for unit in units:
        shown, pairs = data.judge_shown(unit)
        counts.append(calibration.first_shown_counts(shown))
        consistent.append(calibration.order_consistency(pairs))
    votes = np.array(counts, dtype=float)
    agree = np.array(consistent, dtype=float)
    matrix = np.column_stack([votes, agree])
    resampled = _Resampled(matrix, resamples=resamples, seed=seed, level=level)
    rows = resampled.rows
    voted = votes.sum(axis=1) > 0
    shares = agreement.bootstrap_many(
        resampled.profiles,
        lambda w: agreement.shares_w(rows[:, :3], w),
        n_used=int(voted.sum()),
        weights=resampled.weights,
        level=level,
    )
    both = agree[:, 1] > 0
    return {
        "judgments": int(votes.sum()),
        "shares": {name: _est(e) for name, e in zip(SHOWN, shares, strict=True)},
        "consistency": resampled.estimate(
            lambda w: calibration.ratio_w(rows[:, 3], rows[:, 4], w), int(both.sum())
        ),
        "repeats_both_orders": int(agree[:, 1].sum()),
    }


def question_section(
    question: data.HumanQuestion,
    units: list[data.Unit],
    indices: list[int],
    *,
    n_all: int,
    resamples: int,
    seed: int,
    level: float,
    bins: int,
) -> dict[str, Any]:
    """The judge against the humans on one question, over the task's units (`indices` into the
    version's units, `n_all` of them)."""
    coder = question.coder
    humans = question.matrix(n_all)[indices]
    verdicts = [data.unit_verdict(coder, units[i]) for i in indices]
    judge = np.array([v for v, _c in verdicts], dtype=float)
    confidence = np.array([np.nan if c is None else c for _v, c in verdicts], dtype=float)
    majority = agreement.majority(humans)
    mean = agreement.mean_rating(humans)
    compared = np.isfinite(judge) & np.isfinite(majority)
    correct = np.where(compared, (judge == majority).astype(float), np.nan)
    length = np.array([units[i].length for i in indices], dtype=float)
    matrix = np.column_stack([judge, majority, mean, confidence, correct, length])
    resampled = _Resampled(matrix, resamples=resamples, seed=seed, level=level)
    rows = resampled.rows
    pairs = any(units[i].b for i in indices)
    out: dict[str, Any] = {
        "key": coder.key,
        "text": coder.text,
        "scale": coder.scale,
        "numeric": coder.numeric,
        "labels": {f"{code:g}": label for code, label in sorted(coder.labels.items())},
        "campaigns": [{"id": pk, "name": name} for pk, name in sorted(question.campaigns.items())],
        "judged": int(np.isfinite(judge).sum()),
        "labelled": int((~np.isnan(humans)).any(axis=1).sum()),
        "labels_given": int((~np.isnan(humans)).sum()),
        "compared": int(compared.sum()),
        "disagreements": int((correct == 0).sum()),
        "accuracy": resampled.pair(JUDGE, MAJORITY, "agreement"),
        "cohen_kappa": resampled.pair(JUDGE, MAJORITY, "cohen_kappa"),
        "pearson": resampled.pair(JUDGE, MEAN, "pearson") if coder.numeric else None,
    }
    rated = np.isfinite(rows[:, CONFIDENCE]) & np.isfinite(rows[:, CORRECT])
    if np.isfinite(confidence).any():
        out["ece"] = resampled.estimate(
            lambda w: calibration.ece_w(rows[:, CONFIDENCE], rows[:, CORRECT], w, bins),
            resampled.used(rated),
        )
        out["calibration_bins"] = calibration.reliability_bins(confidence, correct, bins)
        out["ece_note"] = ""
    else:
        out["ece"] = None
        out["calibration_bins"] = []
        out["ece_note"] = "the verdict is a score (the mean of the repeats): it has no confidence"
    out["bins"] = bins
    # Length: a pair's verdict against A's length minus B's; one answer's against its length.
    out["length"] = {
        "judge_pearson": resampled.pair(LENGTH, JUDGE, "pearson"),
        "humans_pearson": resampled.pair(LENGTH, MAJORITY, "pearson"),
    }
    if pairs:
        for who, column in (("judge", JUDGE), ("humans", MAJORITY)):
            usable = (
                np.isfinite(rows[:, column])
                & (rows[:, column] != 0)
                & np.isfinite(rows[:, LENGTH])
                & (rows[:, LENGTH] != 0)
            )

            def longer_wins(w: np.ndarray, c: int = column) -> np.ndarray:
                return calibration.longer_wins_w(rows[:, LENGTH], rows[:, c], w)

            out["length"][f"{who}_longer_wins"] = resampled.estimate(
                longer_wins, resampled.used(usable)
            )
    out["items"] = [
        {
            "prediction_a": units[i].a,
            "prediction_b": units[i].b,
            "sample": units[i].sample,
            "external_id": units[i].external_id,
            "judge": _finite(judge[k]),
            "judge_label": _label(coder, judge[k]),
            "human_label": _label(coder, majority[k]),
            "confidence": _finite(confidence[k]),
            "human_majority": _finite(majority[k]),
            "human_mean": _finite(mean[k]),
            "humans": int((~np.isnan(humans[k])).sum()),
            "agrees": None if not compared[k] else bool(correct[k] == 1),
        }
        for k, i in enumerate(indices)
    ]
    return out


def version_report(
    version: JudgeVersion,
    *,
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    bins: int = calibration.DEFAULT_BINS,
) -> dict[str, Any]:
    """The version's report from the current judgments and labels (see the module docstring)."""
    units = data.version_units(version)
    questions = data.human_questions(units)
    tasks: dict[str, list[int]] = {}
    for i, unit in enumerate(units):
        tasks.setdefault(unit.task, []).append(i)
    options: dict[str, Any] = {"resamples": resamples, "seed": seed, "level": level}
    sections = []
    for task, indices in tasks.items():
        chosen = [units[i] for i in indices]
        sections.append(
            {
                "task": task,
                "units": len(indices),
                "position": position_section(chosen, **options),
                "questions": [
                    question_section(
                        question, units, indices, n_all=len(units), bins=bins, **options
                    )
                    for question in questions
                    if any(question.labels.get(i) for i in indices)
                ],
            }
        )
    return {
        "judge": version.judge.name,
        "judge_kind": version.judge.kind,
        "version": version.number,
        "units": len(units),
        "resamples": resamples,
        "seed": seed,
        "level": level,
        "bins": bins,
        "tasks": sections,
    }


HEADLINE = ("accuracy", "cohen_kappa", "ece")


def judge_trend(
    version: JudgeVersion,
    current: dict[str, Any] | None = None,
    *,
    reports: dict[int, dict[str, Any]] | None = None,
    versions: list[JudgeVersion] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Per task and question, the headline figures of every version of the judge, in order:
    {"versions": [numbers], "rows": [{"task", "question", "by_version": {number: {figure:
    estimate}}}]}. `current`: this version's report made with the same options, and `reports`
    any version's by id, when the caller has them already; `versions`: the judge's, in order."""
    versions = versions if versions is not None else data.versions_of(version)
    known = dict(reports or {})
    if current is not None:
        known[version.pk] = current
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for other in versions:
        report = known.get(other.pk) or version_report(other, **options)
        for task in report["tasks"]:
            for q in task["questions"]:
                row = rows.setdefault(
                    (task["task"], q["key"]),
                    {"task": task["task"], "question": q["key"], "by_version": {}},
                )
                row["by_version"][other.number] = {
                    "compared": q["compared"],
                    **{name: q.get(name) for name in HEADLINE},
                }
    return {"versions": [v.number for v in versions], "rows": list(rows.values())}


CSV_COLUMNS = ("judge", "version", "task", "question", "statistic", "value", "low", "high", "n")


def csv_rows(report: dict[str, Any], trend: dict[str, Any]) -> Iterator[tuple[Any, ...]]:
    """The report's figures, one per row (CSV_COLUMNS); then the trend's, one per version."""
    judge, number = report["judge"], report["version"]

    def row(task: str, question: str, name: str, est: dict[str, Any] | None, version: int = 0):
        est = est or {}
        return (
            judge,
            version or number,
            task,
            question,
            name,
            est.get("value"),
            est.get("low"),
            est.get("high"),
            est.get("n"),
        )

    for task in report["tasks"]:
        name = task["task"]
        position = task["position"]
        if position:
            for side, est in position["shares"].items():
                yield row(name, "", f"share {side}", est)
            yield row(name, "", "order consistency", position["consistency"])
        for q in task["questions"]:
            for figure in ("accuracy", "cohen_kappa", "pearson", "ece"):
                if q.get(figure) is not None:
                    yield row(name, q["key"], figure, q[figure])
            for figure, est in q["length"].items():
                yield row(name, q["key"], f"length {figure}", est)
            for b in q["calibration_bins"]:
                label = f"({b['low']:g}, {b['high']:g}]"
                n = b["n"]
                yield row(name, q["key"], f"bin {label} accuracy", {"value": b["accuracy"], "n": n})
                yield row(
                    name, q["key"], f"bin {label} confidence", {"value": b["confidence"], "n": n}
                )
    for trend_row in trend["rows"]:
        for version, figures in sorted(trend_row["by_version"].items()):
            for figure in HEADLINE:
                if figures.get(figure) is not None:
                    yield row(
                        trend_row["task"],
                        trend_row["question"],
                        f"trend {figure}",
                        figures[figure],
                        version,
                    )


def least_sure_key(coder: Any, verdict: float, confidence: float | None) -> float:
    """How unsure the judge is of an item (smaller: less sure): its confidence; for a score,
    its distance to the middle of the question's scale."""
    if confidence is not None:
        return confidence
    codes = sorted(coder.labels) or [0.0, 1.0]
    middle = (codes[0] + codes[-1]) / 2
    return abs(verdict - middle)
