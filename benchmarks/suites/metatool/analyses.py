"""MetaTool's analyses (papers/000): CSR by scenario (Fig. 5) and by top-n list (Fig. 4), by
candidate list length, and against the gold tool's description length (Fig. 7).

Every analysis averages the per-item `correct` (1 when the chosen set is the ideal output), so
its groups weigh up to the run's CSR; with the run option unparsed="exclude" the unread answers
are left out of the groups as they are of the CSR.

Groups:
- scenario: the scenario list the item was asked with (the run's `scenario` option, kept in
  each item's context); a run of the scenario task holds one, so a comparison pools a model's
  runs into one bar per scenario, as Fig. 5 draws them;
- top-n list: n of the popularity lists TopTool_top5/10/15 (Fig. 4's x axis); items asked with
  another scenario are not in it;
- candidate list length: how many tools the item was offered;
- description length: the gold tool's description in words, in buckets of 5 (0-4, 5-9 ...),
  from the benchmark's tool descriptions (a revision of the tools changes it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable
from typing import Any

from benchmarks.kit.analyses import (
    Analysis,
    AnalysisInput,
    AnalysisMetric,
    RecordValue,
    Row,
    ScoreBreakdown,
    breakdown,
    bucket,
    score_of,
)
from benchmarks.kit.protocol import Context, Scored

__all__ = ["ANALYSES", "DESCRIPTION_BUCKET", "description_words", "top_n"]

DESCRIPTION_BUCKET = 5
_TOP = re.compile(r"top[_ -]?(\d+)$", re.IGNORECASE)
_CSR = (AnalysisMetric("CSR", "CSR (%)", mean_of="CSR"),)


def counted(record: Scored, ctx: Context) -> bool:
    """Whether the run's CSR counts the item (unparsed="exclude" leaves unread answers out)."""
    mode = ctx.option("unparsed") or "wrong"
    return not (mode == "exclude" and record.scores.get("unparsed"))


def _scenario(record: Scored, ctx: Context) -> str | None:
    name = record.context.get("scenario") or ctx.option("scenario")
    return str(name) if name else None


def top_n(scenario: str | None) -> int | None:
    """n of a popularity list's name ("TopTool_top10" -> 10); None for another scenario."""
    found = _TOP.search(scenario or "")
    return int(found.group(1)) if found else None


def _candidates(record: Scored) -> int:
    listed = record.context.get("candidates")
    return len(listed if isinstance(listed, list) else record.item.candidate_tools)


def description_words(record: Scored, ctx: Context) -> int:
    """The gold tool's description length in words (0 for a tool the benchmark lacks)."""
    reference = record.item.reference if isinstance(record.item.reference, dict) else {}
    tool = ctx.tools.get(str(reference.get("tool", "")))
    return len(tool.description.split()) if tool is not None else 0


def _analysis(
    name: str,
    title: str,
    by: str,
    by_title: str,
    group_of: Callable[[Scored, Context], Hashable | None],
    **declared: Any,
) -> Analysis:
    def covers(record: Scored, ctx: Context) -> bool:
        return counted(record, ctx) and group_of(record, ctx) is not None

    def covered_group(record: Scored, ctx: Context) -> Hashable | None:
        return group_of(record, ctx) if counted(record, ctx) else None

    def compute(data: AnalysisInput) -> list[Row]:
        return breakdown(
            [record for record in data.records if covers(record, data.ctx)],
            lambda record: group_of(record, data.ctx),
            {"CSR": score_of("correct")},
        )

    return Analysis(
        name=name,
        title=title,
        by=by,
        by_title=by_title,
        metrics=_CSR,
        compute=compute,
        covers=covers,
        # each answer's group computed once and kept with it: CSR counted in the database
        score_breakdown=ScoreBreakdown(
            by_sample=RecordValue(by, covered_group), scores={"CSR": "correct"}
        ),
        **declared,
    )


BY_SCENARIO = _analysis(
    "by_scenario",
    "CSR by scenario",
    "scenario",
    "scenario",
    _scenario,
    series="model",
    source="Fig. 5",
    description="The scenario list each item was asked with; a run holds one, so a "
    "comparison pools each model's runs.",
)
BY_TOP_N = _analysis(
    "by_top_n",
    "CSR by top-n list",
    "top_n",
    "top-n list (n tools)",
    lambda record, ctx: top_n(_scenario(record, ctx)),
    chart="line",
    series="model",
    source="Fig. 4",
    description="The popularity lists TopTool_top5, _top10 and _top15 (the n most used "
    "tools); items asked with another scenario are left out.",
)
BY_LIST_LENGTH = _analysis(
    "by_list_length",
    "CSR by candidate list length",
    "candidates",
    "tools in the candidate list",
    lambda record, ctx: _candidates(record),
    chart="line",
    series="model",
    description="How many tools the item was offered (the run's n, or the scenario's list).",
)
BY_DESCRIPTION = _analysis(
    "by_description_length",
    "CSR against the gold tool's description length",
    "description_words",
    "gold tool's description (words)",
    lambda record, ctx: bucket(description_words(record, ctx), DESCRIPTION_BUCKET),
    chart="line",
    source="Fig. 7",
    description=f"The gold tool's description in the benchmark, in words, in buckets of "
    f"{DESCRIPTION_BUCKET}.",
)

ANALYSES: dict[str, tuple[Analysis, ...]] = {
    "similar": (BY_LIST_LENGTH, BY_DESCRIPTION),
    "scenario": (BY_SCENARIO, BY_TOP_N, BY_LIST_LENGTH, BY_DESCRIPTION),
    "reliability": (BY_LIST_LENGTH,),
    "multi_tool": (BY_LIST_LENGTH,),
}
