"""BFCL v4's overall score, as its leaderboard computes it (`eval_runner_helper.py`,
`generate_leaderboard_csv` in the pinned bfcl-eval wheel), declared as data for
benchmarks/kit/overall.py:

- non-live: the unweighted mean of simple (itself the unweighted mean of simple_python,
  simple_java and simple_javascript), multiple, parallel and parallel_multiple;
- live: the mean of live_simple, live_multiple, live_parallel and live_parallel_multiple
  weighted by their numbers of entries;
- irrelevance: the unweighted mean of irrelevance and live_irrelevance;
- multi-turn: the unweighted mean of the four multi-turn categories;
- agentic: the unweighted mean of web search (the mean of web_search_base and
  web_search_no_snippet) and memory (the mean of memory_kv, memory_vector and memory_rec_sum);
- overall: those five weighted 10, 10, 10, 30, 40.

live_relevance is shown beside, as BFCL's table shows it, and counted in none. Where BFCL
counts a category that was not run as 0, the platform shows the figure missing
(kit/overall.py). The web search categories' runs are never counted: their tasks declare them
not comparable with BFCL's published scores (web_search.py, TaskSpec.not_comparable), which
evaluation/overall.py reads, so web search, agentic and the overall stay missing."""

from __future__ import annotations

from benchmarks.kit.overall import OverallScore, Section
from benchmarks.suites.bfcl.agentic import NOT_RUN

__all__ = ["OVERALL"]

SIMPLE = Section(
    "simple", "Simple", ("simple_python", "simple_java", "simple_javascript"), how="mean"
)
NON_LIVE = Section(
    "non_live",
    "Non-live",
    (SIMPLE, "multiple", "parallel", "parallel_multiple"),
    how="mean",
)
LIVE = Section(
    "live",
    "Live",
    ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple"),
    how="by_count",
)
IRRELEVANCE = Section(
    "hallucination", "Irrelevance", ("irrelevance", "live_irrelevance"), how="mean"
)
MULTI_TURN = Section(
    "multi_turn",
    "Multi-turn",
    (
        "multi_turn_base",
        "multi_turn_miss_func",
        "multi_turn_miss_param",
        "multi_turn_long_context",
    ),
    how="mean",
)
WEB_SEARCH = Section(
    "web_search", "Web search", ("web_search_base", "web_search_no_snippet"), how="mean"
)
MEMORY = Section("memory", "Memory", ("memory_kv", "memory_vector", "memory_rec_sum"), how="mean")
AGENTIC = Section("agentic", "Agentic", (WEB_SEARCH, MEMORY), how="mean")

OVERALL = OverallScore(
    score=Section(
        "overall",
        "Overall",
        (NON_LIVE, LIVE, IRRELEVANCE, MULTI_TURN, AGENTIC),
        how="weighted",
        weights=(10.0, 10.0, 10.0, 30.0, 40.0),
    ),
    metric="accuracy",
    count="n",
    shown=("live_relevance",),
    # why a category has no task (memory_vector), as the memory tasks say it
    absent=dict(NOT_RUN),
    source="BFCL v4, eval_runner_helper.generate_leaderboard_csv (bfcl-eval 2026.3.23)",
    description="BFCL v4's overall accuracy: non-live 10%, live 10%, irrelevance 10%, "
    "multi-turn 30%, agentic 40%. A category that was not run is missing, never 0, and so is "
    "every section above it; the web search categories are never counted (their runs use the "
    "platform's search service, not BFCL's), so the overall is missing.",
)
