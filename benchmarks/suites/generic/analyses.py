"""The generic suite's analysis: a run's headline by split. A user who brings several files of
questions (one split each: a topic, a difficulty, a source) sees how the model does on each."""

from __future__ import annotations

from benchmarks.kit.analyses import (
    Analysis,
    AnalysisInput,
    AnalysisMetric,
    Row,
    ScoreBreakdown,
    breakdown,
    score_of,
)
from benchmarks.kit.protocol import Context, Scored

__all__ = ["ANALYSES"]

# Per task, the item values the split breakdown averages (the per-item values are 0 or 100, so
# their means are percentages already).
_METRICS = {"answer": ("accuracy",), "tool_calls": ("call_exact", "call_name_accuracy")}


def _analysis(task: str) -> Analysis:
    names = _METRICS[task]
    headline = names[0]

    def scored(record: Scored, ctx: Context) -> bool:
        # An unread or failed answer has no value; the run's mean leaves it out too.
        return record.scores.get(headline) is not None

    def compute(data: AnalysisInput) -> list[Row]:
        covered = [record for record in data.records if scored(record, data.ctx)]
        return breakdown(
            covered,
            lambda record: record.item.split,
            {name: score_of(name) for name in names},
            percent=False,
        )

    return Analysis(
        name="by_split",
        title=f"{headline} by split",
        by="split",
        metrics=tuple(AnalysisMetric(name, mean_of=name, percent=False) for name in names),
        compute=compute,
        covers=scored,
        # What compute does, as data: the platform computes it in the database.
        score_breakdown=ScoreBreakdown(
            by_sample="split",
            scores={name: name for name in names},
            covered_by=headline,
            percent=False,
        ),
        description="Each split is a file of the benchmark; n counts the items with an answer "
        "read (the run's figures leave the others out too).",
    )


ANALYSES: dict[str, tuple[Analysis, ...]] = {task: (_analysis(task),) for task in _METRICS}
