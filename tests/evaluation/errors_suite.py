"""A suite module for tests only: one task whose headline is better lower (no published
benchmark's is), so that leaderboards can be seen to sort in a metric's own direction. It is a
real suite as far as the platform is concerned (registered under SUITE_MODULES by the test)."""

from __future__ import annotations

from benchmarks.kit.protocol import MetricSpec, TaskSpec, metric_specs

name = "errors_test"

TASKS: dict[str, TaskSpec] = {
    "calls": TaskSpec(
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
}
