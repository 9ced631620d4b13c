"""StableToolBench's analyses (papers/002) of a run of the agent task (pass_rate): the calls the
virtual API server answered by source and the cache hit rate (Table 7) per run and per tool
category; SoPR against the share of tools down (Fig. 4, Fig. 7), from the runs the stability
experiment made; the solvability votes of each judge and their agreement (Table 4, Table 8).

Calls: the steps of an item's trace that called an offered tool, each with the "source" the
server gave it (cache, real, simulated; down: the tool was made unavailable; failed). A tool's
category is the benchmark's (ToolSpec.category). These groups count calls, not items: a row's
n is the items that made such a call (partition=False).

SoPR by tools down: a stability experiment's run has the option down_tools; its share is those
tools over the tools its items offer (as a percentage, rounded). A run holds one share, so a
comparison pools each model's runs into one line, as Fig. 7 draws it. An item's pass value is
the mean over the pass judge's rounds of Solved 1, Unsure 0.5, Unsolved 0 (judging.PASS_VALUE),
from the run's judge jobs of a pass template (AnalysisInput.inputs["judgments"]).

Solvability: the run's judge jobs of the solvability template, each judge (by name) a row: the
share of its items voted Solvable, Unsolvable, Unsure (an item's vote: its rounds' most frequent
label), and its agreement: the share of the items it shares with the other judges where its vote
equals theirs (every other judge's vote on the item; None with one judge).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.kit.analyses import (
    COUNT,
    GROUP,
    Analysis,
    AnalysisInput,
    AnalysisMetric,
    Row,
)
from benchmarks.kit.protocol import Context, Scored

__all__ = ["ANALYSES", "calls_of", "share_down"]

SOURCES = ("cache", "real", "simulated", "down", "failed")
PASS_TEMPLATES = (
    "stabletoolbench.pass",
    "stabletoolbench.pass_details",
    "stabletoolbench.pass_normalized",
)
SOLVABILITY_TEMPLATE = "stabletoolbench.solvability"
SOLVABILITY_LABELS = ("Solvable", "Unsolvable", "Unsure")


def calls_of(record: Scored) -> list[tuple[str, str]]:
    """(tool key, source) of each call of an offered tool in the item's trace."""
    if record.outcome is None:
        return []
    return [
        (str(step["tool"]), str(step.get("source") or "failed"))
        for step in record.outcome.trace
        if isinstance(step, Mapping) and step.get("tool")
    ]


def _pct(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 2) if whole else None


def _calls_by_source(data: AnalysisInput) -> list[Row]:
    per_item = [calls_of(record) for record in data.records]
    total = sum(len(calls) for calls in per_item)
    rows: list[Row] = []
    for source in (*SOURCES, *sorted({s for c in per_item for _, s in c} - set(SOURCES))):
        items = sum(1 for calls in per_item if any(s == source for _, s in calls))
        count = sum(1 for calls in per_item for _, s in calls if s == source)
        if count:
            rows.append(
                {GROUP: source, COUNT: items, "calls": float(count), "share": _pct(count, total)}
            )
    return rows


def _category(ctx: Context, tool: str) -> str:
    spec = ctx.tools.get(tool)
    return (spec.category if spec is not None else "") or "unknown"


def _cache_by_category(data: AnalysisInput) -> list[Row]:
    calls: dict[str, list[str]] = {}
    items: dict[str, int] = {}
    for record in data.records:
        seen: set[str] = set()
        for tool, source in calls_of(record):
            category = _category(data.ctx, tool)
            calls.setdefault(category, []).append(source)
            seen.add(category)
        for category in seen:
            items[category] = items.get(category, 0) + 1
    return [
        {
            GROUP: category,
            COUNT: items[category],
            "calls": float(len(sources)),
            "cache_hit_rate": _pct(sources.count("cache"), len(sources)),
        }
        for category, sources in sorted(calls.items())
    ]


def share_down(records: Sequence[Scored], ctx: Context) -> float:
    """The share of the offered tools the run made unavailable, in percent (2 decimals)."""
    down = {str(t) for t in ctx.option("down_tools") or ()}
    offered = {t for record in records for t in record.item.candidate_tools}
    return round(100.0 * len(down & offered) / len(offered), 2) if offered else 0.0


def _pass_value(data: AnalysisInput, record: Scored) -> float | None:
    judged = data.inputs.get("judgments") or {}
    values = [
        float(entry["value"])
        for template in PASS_TEMPLATES
        for entry in (judged.get(template) or {}).get((record.item.key, record.repeat)) or ()
        if isinstance(entry.get("value"), int | float)
    ]
    return sum(values) / len(values) if values else None


def _sopr_by_down(data: AnalysisInput) -> list[Row]:
    if not data.records:
        return []
    # A pooled comparison joins several runs' records under the first one's context: each
    # item's share is the one its run kept in its context at launch (evaluate.prepare); an
    # item without one is from a run with no tool down, or, when no item has one, a single
    # run launched before shares were kept.
    kept = any("tools_down" in record.context for record in data.records)
    fallback = 0.0 if kept else share_down(data.records, data.ctx)
    groups: dict[float, list[Scored]] = {}
    for record in data.records:
        share = float(record.context.get("tools_down", fallback))
        groups.setdefault(share, []).append(record)
    rows: list[Row] = []
    for share, members in sorted(groups.items()):
        values = [v for v in (_pass_value(data, r) for r in members) if v is not None]
        rows.append(
            {
                GROUP: share,
                COUNT: len(members),
                "SoPR": round(100.0 * sum(values) / len(values), 2) if values else None,
                "judged": float(len(values)),
            }
        )
    return rows


def _vote(entries: Sequence[Mapping[str, Any]]) -> str | None:
    labels = [str(e.get("values", {}).get("label")) for e in entries]
    labels = [label for label in labels if label in SOLVABILITY_LABELS]
    if not labels:
        return None
    counts = Counter(labels)
    top = max(counts.values())
    # Ties go to the label first in SOLVABILITY_LABELS order.
    return next(label for label in SOLVABILITY_LABELS if counts.get(label) == top)


def _solvability(data: AnalysisInput) -> list[Row]:
    judged = (data.inputs.get("judgments") or {}).get(SOLVABILITY_TEMPLATE) or {}
    keys = {(record.item.key, record.repeat) for record in data.records}
    votes: dict[str, dict[tuple[str, int], str]] = {}
    for key, entries in judged.items():
        if key not in keys:
            continue
        by_judge: dict[str, list[Mapping[str, Any]]] = {}
        for entry in entries:
            by_judge.setdefault(str(entry.get("judge") or "judge"), []).append(entry)
        for judge, rounds in by_judge.items():
            vote = _vote(rounds)
            if vote is not None:
                votes.setdefault(judge, {})[key] = vote
    rows: list[Row] = []
    for judge in sorted(votes):
        mine = votes[judge]
        shared = [
            (vote, other[key])
            for key, vote in mine.items()
            for name, other in votes.items()
            if name != judge and key in other
        ]
        row: Row = {GROUP: judge, COUNT: len(mine)}
        for label in SOLVABILITY_LABELS:
            row[label.lower()] = _pct(sum(1 for v in mine.values() if v == label), len(mine))
        row["agreement"] = _pct(sum(1 for a, b in shared if a == b), len(shared))
        rows.append(row)
    return rows


CALLS_BY_SOURCE = Analysis(
    name="calls_by_source",
    title="Calls served by source",
    by="source",
    metrics=(
        AnalysisMetric("share", "share of the calls (%)"),
        AnalysisMetric("calls", "calls", percent=False),
    ),
    compute=_calls_by_source,
    source="Table 7 (cache hits)",
    description="Each call of an offered tool, by how the virtual API server answered it; n "
    "is the items that made such a call.",
    group_order=SOURCES,
    reads=("trace",),
    partition=False,
)
CACHE_BY_CATEGORY = Analysis(
    name="cache_by_category",
    title="Cache hit rate per tool category",
    by="category",
    by_title="tool category",
    metrics=(
        AnalysisMetric("cache_hit_rate", "cache hit rate (%)"),
        AnalysisMetric("calls", "calls", percent=False),
    ),
    compute=_cache_by_category,
    reads=("trace",),
    source="Table 7",
    description="The calls of each tool category and the share the cache answered; n is the "
    "items that called a tool of the category.",
    partition=False,
)
SOPR_BY_DOWN = Analysis(
    name="sopr_by_tools_down",
    title="SoPR against the share of tools down",
    by="tools_down",
    by_title="tools down (% of the tools offered)",
    metrics=(
        AnalysisMetric("SoPR", "SoPR (%)"),
        AnalysisMetric("judged", "items judged", percent=False),
    ),
    compute=_sopr_by_down,
    chart="line",
    series="model",
    source="Fig. 4, Fig. 7",
    description="A stability experiment's runs (stability_experiment) each make a share of "
    "the tools unavailable; SoPR from the run's pass-judge jobs. Compare the experiment's "
    "runs for the paper's lines.",
    inputs=("judgments",),
    reads=("candidate_tools", "context"),  # the share of tools down, or the tools offered
)
SOLVABILITY = Analysis(
    name="solvability_votes",
    title="Solvability votes per judge, and their agreement",
    by="judge",
    metrics=(
        AnalysisMetric("solvable", "Solvable (%)"),
        AnalysisMetric("unsolvable", "Unsolvable (%)"),
        AnalysisMetric("unsure", "Unsure (%)"),
        AnalysisMetric("agreement", "agrees with the other judges (%)"),
    ),
    compute=_solvability,
    source="Table 4, Table 8",
    description="The run's solvability judge jobs: each judge's votes (its rounds' most "
    "frequent label) and how often they equal another judge's on the same item.",
    inputs=("judgments",),
    reads=(),  # the key the votes are found by
    partition=False,
)

ANALYSES: dict[str, tuple[Analysis, ...]] = {
    "pass_rate": (CALLS_BY_SOURCE, CACHE_BY_CATEGORY, SOPR_BY_DOWN, SOLVABILITY),
}
