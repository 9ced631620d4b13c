"""The agreement report's sections beyond its questions that campaign kinds declare
(CampaignKind.report_sections): each computes its part of the report (annotation.agreement.report),
writes its rows of the summary CSV, and is shown on the report's page by its template, with the
charts `view` draws."""

from __future__ import annotations

from typing import Any

from annotation.agreement.data import step_review_inputs
from annotation.agreement.report import (
    SIDES,
    TURING_OUTCOMES,
    pairwise_report,
    pairwise_rows,
    turing_report,
    turing_rows,
)
from annotation.agreement.steps import NAME as STEPS_NAME
from annotation.agreement.steps import step_report, step_rows
from annotation.kinds.base import ReportSection
from config.charts import stacked_bars


def short_rater(rater: str) -> str:
    """A rater's name without its kind ("judge:", "metric:")."""
    return rater.split(":", 1)[1] if ":" in rater else rater


def interval(est: dict | None) -> tuple[float, float] | None:
    """An estimate's interval for a chart, if it has one."""
    if not est or est.get("low") is None or est.get("high") is None:
        return None
    return (est["low"], est["high"])


def _turing_view(dimensions: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "chart": stacked_bars(
            [d["text"] for d in dimensions],
            list(TURING_OUTCOMES),
            [[d["shares"][o]["value"] or 0.0 for o in TURING_OUTCOMES] for d in dimensions],
            intervals=[[interval(d["shares"][o]) for o in TURING_OUTCOMES] for d in dimensions],
            title="Real against simulated responses: votes per dimension",
        )
    }


def _pairwise_view(questions: list[dict[str, Any]]) -> dict[str, Any]:
    bias_charts = []
    for q in questions:
        rows = list(q["position_bias"])
        if rows:
            bias_charts.append(
                stacked_bars(
                    [short_rater(r) for r in rows],
                    list(SIDES),
                    [
                        [q["position_bias"][r]["shares"][s]["value"] or 0.0 for s in SIDES]
                        for r in rows
                    ],
                    intervals=[
                        [interval(q["position_bias"][r]["shares"][s]) for s in SIDES] for r in rows
                    ],
                    title=f"Position bias ({q['key']}): votes for the side shown first",
                )
            )
    return {"bias_charts": bias_charts}


def _steps_view(section: dict[str, Any]) -> dict[str, Any]:
    positions = section.get("positions") or [] if isinstance(section, dict) else []
    if not positions:
        return {}
    return {
        "chart": stacked_bars(
            [f"step {p['position']}" for p in positions],
            ["disagree", "agree"],
            [
                [
                    p["disagreement"]["value"] or 0.0,
                    1.0 - (p["disagreement"]["value"] or 0.0),
                ]
                for p in positions
            ],
            intervals=[[interval(p["disagreement"]), None] for p in positions],
            title="Where in the trace annotators disagree: share of steps judged apart",
        )
    }


# StableToolBench's Figure 8: per dimension, the shares of votes for the real response, a tie,
# and the simulated one.
TURING_SHARES = ReportSection(
    name="turing",
    compute=turing_report,
    rows=turing_rows,
    template="annotation/report_sections/turing.html",
    view=_turing_view,
)
# Per pairwise question: a Bradley-Terry leaderboard of the runs compared, and the position
# bias of the annotators and of each judge.
RUN_LEADERBOARD = ReportSection(
    name="pairwise",
    compute=pairwise_report,
    rows=pairwise_rows,
    template="annotation/report_sections/pairwise.html",
    view=_pairwise_view,
)
# The step-level review: agreement per step (right or wrong, each error type), the suite's
# automatic classification against the human majority, and disagreement by step position.
STEP_AGREEMENT = ReportSection(
    name=STEPS_NAME,
    compute=step_report,
    rows=step_rows,
    template="annotation/report_sections/step_review.html",
    view=_steps_view,
    load=step_review_inputs,
)
