"""UltraTool's analyses (papers/004): the judge's dimensions of a run (each dimension's mean
with its 95% interval), and the key-value metrics by domain (Fig. 4's domains), by plan depth
and by the number of tool steps of the gold plan.

Groups:
- domain: the sample's domain as the benchmark gives it (metadata "domain");
- plan depth: the gold plan's deepest step number (1 for "1", "2"; 2 for "1.1"; 3 for "1.1.1");
- tool steps: how many steps of the gold plan call a tool.

Metrics: each task's global figure (100 when the whole answer is right; its groups weigh up to
the run's) and its local figure as the mean over the group's items (the run's own local figure
pools the gold steps instead, so the groups do not weigh up to it); planning and tool creation,
which the judge scores, have their format check here.

Judge dimensions: the verdicts of the run's pointwise judge jobs (AnalysisInput.inputs
["judgments"]: {template: {(sample key, repeat): [{"judge", "value", "values"}, ...]}}, one per
round, "values" holding the dimensions' scores); an item's value on a dimension
is the mean of its judge rounds, on the reported scale (/ 10); a dimension's interval is the
normal approximation mean +- 1.96 sd / sqrt(n) (sd of the items' values, n - 1 in the
denominator; none for one item). The rows are the dimensions, each counting the items with a
value on it, so they do not partition the items (Analysis.partition=False).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from benchmarks.kit.analyses import (
    COUNT,
    GROUP,
    Analysis,
    AnalysisInput,
    AnalysisMetric,
    RecordValue,
    Row,
    SampleValue,
    ScoreBreakdown,
    breakdown,
    score_of,
)
from benchmarks.kit.protocol import Context, Item, Scored
from benchmarks.suites.ultratool.judges import (
    CREATION_DIMENSIONS,
    PLANNING_DIMENSIONS,
    REPORT_DIVISOR,
)

__all__ = ["ANALYSES", "interval", "plan_depth", "tool_steps"]

Z95 = 1.96


def plan_depth(item: Item) -> int | None:
    steps = (item.reference or {}).get("steps") if isinstance(item.reference, Mapping) else None
    numbers = [str(s.get("step", "")).strip(".") for s in steps or () if isinstance(s, Mapping)]
    depths = [n.count(".") + 1 for n in numbers if n]
    return max(depths) if depths else None


def tool_steps(item: Item) -> int | None:
    steps = (item.reference or {}).get("steps") if isinstance(item.reference, Mapping) else None
    if not steps:
        return None
    return sum(1 for s in steps if isinstance(s, Mapping) and s.get("tool"))


def _domain(item: Item) -> str:
    return _domain_of((item.metadata or {}).get("domain"))


def _domain_of(value: Any) -> str:
    return str(value or "unknown")


def _plan_depth(record: Scored, ctx: Context) -> int | None:
    return plan_depth(record.item)


def _tool_steps(record: Scored, ctx: Context) -> int | None:
    return tool_steps(record.item)


# The groupings the platform computes in the database, as data (ScoreBreakdown): the domain is
# a value of the sample's metadata; the plan's depth and tool steps, counted over the gold
# plan's steps, are values of the record the platform computes once and keeps with the answer.
_IN_DATABASE: dict[str, tuple[SampleValue | RecordValue, Callable[..., Any] | None]] = {
    "by_domain": (SampleValue("metadata", ("domain",)), _domain_of),
    "by_plan_depth": (RecordValue("plan_depth", _plan_depth), None),
    "by_tool_steps": (RecordValue("tool_steps", _tool_steps), None),
}


GROUPINGS: tuple[tuple[str, str, str, Callable[[Item], Any], str], ...] = (
    ("by_domain", "domain", "domain", _domain, "bar"),
    ("by_plan_depth", "depth", "plan depth (levels)", plan_depth, "line"),
    ("by_tool_steps", "tool_steps", "tool steps in the gold plan", tool_steps, "line"),
)

# task -> (per-item metrics whose means weigh up to the run's, means over items that do not)
TASK_METRICS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "tool_usage_awareness": (("accuracy_global",), ("accuracy_local",)),
    "tool_creation_awareness": (("accuracy_global",), ("accuracy_local",)),
    "tool_selection": (("accuracy_global",), ("accuracy_local",)),
    "tool_usage": (("kv_accuracy_global",), ("levenshtein_local", "kv_accuracy_local")),
    "planning": (("well_formed",), ()),
    "tool_creation": (("well_formed",), ()),
}


def _breakdowns(task: str) -> tuple[Analysis, ...]:
    means, others = TASK_METRICS[task]
    headline = means[0]
    metrics = (
        *(AnalysisMetric(name, f"{name} (%)", mean_of=name) for name in means),
        *(AnalysisMetric(name, f"{name} (%, mean over items)") for name in others),
    )
    per_item = {name: score_of(name) for name in (*means, *others)}

    def covers(record: Scored, ctx: Context) -> bool:
        # An item the run leaves out (unparsed="exclude": no value) is in no group.
        return record.scores.get(headline) is not None

    def make(group_of: Callable[[Item], Any]) -> Callable[[AnalysisInput], list[Row]]:
        def compute(data: AnalysisInput) -> list[Row]:
            covered = [r for r in data.records if covers(r, data.ctx)]
            # The items' scores are percentages already.
            rows = breakdown(covered, lambda r: group_of(r.item), per_item, percent=False)
            for row in rows:
                for name in per_item:
                    row[name] = None if row[name] is None else round(row[name], 2)
            return rows

        return compute

    return tuple(
        Analysis(
            name=name,
            title=f"{headline} by {title}",
            by=by,
            by_title=title,
            metrics=metrics,
            compute=make(group_of),
            covers=covers,
            score_breakdown=(
                ScoreBreakdown(
                    by_sample=_IN_DATABASE[name][0],
                    group=_IN_DATABASE[name][1],
                    scores={metric: metric for metric in per_item},
                    covered_by=headline,
                    percent=False,
                )
                if name in _IN_DATABASE
                else None
            ),
            chart=chart,  # type: ignore[arg-type]
            source="Fig. 4 (domains)" if by == "domain" else "",
            description="Items by "
            + {
                "domain": "the sample's domain.",
                "depth": "the gold plan's deepest step level (1.1 is level 2).",
                "tool_steps": "how many steps of the gold plan call a tool.",
            }[by],
        )
        for name, by, title, group_of, chart in GROUPINGS
    )


def interval(values: Sequence[float]) -> tuple[float | None, float | None, float | None]:
    """(mean, low, high): the normal-approximation 95% interval of the mean; (None, None, None)
    without values, no interval for one value."""
    if not values:
        return None, None, None
    mean = math.fsum(values) / len(values)
    if len(values) < 2:
        return mean, None, None
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1))
    half = Z95 * sd / math.sqrt(len(values))
    return mean, mean - half, mean + half


def _judge_dimensions(template: str, dimensions: Sequence[str]) -> Analysis:
    def values_of(data: AnalysisInput) -> dict[str, list[float]]:
        judged = (data.inputs.get("judgments") or {}).get(template) or {}
        found: dict[str, list[float]] = {dimension: [] for dimension in dimensions}
        for record in data.records:
            rounds = judged.get((record.item.key, record.repeat)) or []
            for dimension in dimensions:
                read = [r.get("values") or {} for r in rounds if isinstance(r, Mapping)]
                scores = [
                    float(v[dimension]) / REPORT_DIVISOR
                    for v in read
                    if isinstance(v.get(dimension), int | float)
                    and not isinstance(v.get(dimension), bool)
                ]
                if scores:
                    found[dimension].append(math.fsum(scores) / len(scores))
        return found

    def compute(data: AnalysisInput) -> list[Row]:
        rows: list[Row] = []
        for dimension, values in values_of(data).items():
            if not values:
                continue
            mean, low, high = interval(values)
            rows.append(
                {
                    GROUP: dimension,
                    COUNT: len(values),
                    "mean": _round(mean),
                    "low": _round(low),
                    "high": _round(high),
                }
            )
        return rows

    return Analysis(
        name="judge_dimensions",
        title="The judge's dimensions: mean and 95% interval",
        by="dimension",
        metrics=(
            AnalysisMetric("mean", "mean (/ 10)", percent=False),
            AnalysisMetric("low", "95% interval, low", percent=False),
            AnalysisMetric("high", "95% interval, high", percent=False),
        ),
        compute=compute,
        source="Table 3 (judged dimensions)",
        description=f"The verdicts of this run's {template} judge jobs: each item's mean over "
        "the judge's rounds, reported / 10; the interval is mean +- 1.96 sd / sqrt(n).",
        group_order=tuple(dimensions),
        inputs=("judgments",),
        reads=(),  # the key the verdicts are found by
        partition=False,
    )


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


ANALYSES: dict[str, tuple[Analysis, ...]] = {
    task: _breakdowns(task)
    + (
        (_judge_dimensions("ultratool.planning", PLANNING_DIMENSIONS),)
        if task == "planning"
        else (_judge_dimensions("ultratool.tool_creation", CREATION_DIMENSIONS),)
        if task == "tool_creation"
        else ()
    )
    for task in TASK_METRICS
}
