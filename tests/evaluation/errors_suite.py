"""A suite module for tests only: one task whose headline is better lower (no published
benchmark's is), so that leaderboards can be seen to sort in a metric's own direction. It is a
real suite as far as the platform is concerned (registered under SUITE_MODULES by the test): the
toy suite's items and prompt, scored by how often the call is wrong."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchmarks.kit.protocol import (
    Context,
    Item,
    MetricSpec,
    Outcome,
    Scored,
    Scores,
    Task,
    TaskSpec,
    mean,
    metric_specs,
)
from benchmarks.kit.registry import Suite
from tests.benchmarks.toy_suite import build_prompt, import_files, parse

CALLS = TaskSpec(
    name="calls",
    title="Wrong calls",
    metrics=("error_rate", "accuracy", "n"),
    percent=frozenset({"error_rate", "accuracy"}),
    item_metrics=metric_specs(
        MetricSpec.score("wrong_call", "lower"), MetricSpec.flag("unparsed", "lower")
    ),
    run_metrics=metric_specs(
        MetricSpec.score("error_rate", "lower", "% of calls that are wrong"),
        MetricSpec.score("accuracy"),
        MetricSpec.count("n", description="items"),
    ),
)


def score(outcome: Outcome | None, item: Item, ctx: Context, context: dict[str, Any]) -> Scores:
    unread = outcome is None or not outcome.parsed
    right = not unread and outcome is not None and outcome.answer == item.reference["even"]
    return {"wrong_call": 0.0 if right else 100.0, "unparsed": 100.0 if unread else 0.0}


def aggregate(scored: Sequence[Scored], ctx: Context) -> Scores:
    error_rate = mean([s.scores.get("wrong_call") for s in scored])
    return {
        "error_rate": error_rate,
        "accuracy": None if error_rate is None else 100.0 - error_rate,
        "n": float(len(scored)),
    }


SUITE = Suite(
    name="errors_test",
    default_benchmark="Calls",
    import_files=import_files,
    evaluation=(Task(CALLS, prompt=build_prompt, parse=parse, score=score, aggregate=aggregate),),
)
