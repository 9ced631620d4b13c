"""What a task's metric declarations must be: a headline that is a score pointing one way,
counts and flags that are never raters, and the refusals of a declaration that is not. Whether
every metric a suite returns is declared (and every declaration returned) is checked on the
suite's own cases by tests/benchmarks/test_conformance.py. Pure: no database."""

from __future__ import annotations

import pytest

from benchmarks.kit.protocol import Evaluator, MetricSpec, TaskSpec, lookup_metric, metric_specs
from benchmarks.kit.registry import get_suite, suite_names


def every_task() -> list[tuple[str, str]]:
    return [(name, task) for name in suite_names() for task in Evaluator(get_suite(name)).tasks]


@pytest.mark.parametrize(("name", "task"), every_task())
def test_headlines_point_one_way_and_counts_and_flags_are_never_raters(
    name: str, task: str
) -> None:
    spec = Evaluator(get_suite(name)).task(task)
    headline = spec.run_metrics[spec.metrics[0]]
    assert headline.kind == "score" and headline.direction in ("higher", "lower")
    for metric in (*spec.item_metrics.values(), *spec.run_metrics.values()):
        assert metric.comparable == (metric.kind == "score" and metric.direction is not None)
        if metric.kind != "score":
            assert not metric.comparable


def test_what_the_issue_named_is_no_longer_a_score() -> None:
    # "unparsed", "failed", "pick_rank" and "n" were offered as raters and leaderboards.
    metatool = get_suite("metatool").evaluator
    similar = metatool.task("similar")
    assert {n: similar.item_metric(n).kind for n in ("unparsed", "failed", "pick_rank")} == {
        "unparsed": "flag",
        "failed": "flag",
        "pick_rank": "count",
    }
    assert similar.run_metric("n").kind == "count"
    assert similar.item_metric("correct").comparable
    # a name means one thing per item and another per run
    assert similar.run_metric("unparsed").kind == "count"
    # lower is better where the papers say so: a tool call on a general question (WTU-Eval R4)
    r4 = get_suite("wtueval").evaluator.task("R4")
    assert r4.item_metric("tool_errors").direction == "lower"
    assert r4.item_metric("tool_errors").comparable
    assert r4.run_metric("call_rate[boolq]").direction == "lower"
    assert get_suite("wtueval").evaluator.task("R2").run_metric("call_rate").direction is None


def test_a_task_cannot_ship_an_undeclared_or_pointless_headline() -> None:
    score = MetricSpec.score("acc")
    with pytest.raises(ValueError, match="without a declaration: n"):
        TaskSpec("t", "T", metrics=("acc", "n"), run_metrics=metric_specs(score))
    with pytest.raises(ValueError, match="missing from metrics: extra"):
        TaskSpec(
            "t",
            "T",
            metrics=("acc",),
            run_metrics=metric_specs(score, MetricSpec.count("extra")),
        )
    with pytest.raises(ValueError, match="headline 'n' must be a score"):
        TaskSpec("t", "T", metrics=("n",), run_metrics=metric_specs(MetricSpec.count("n")))
    with pytest.raises(ValueError, match="declared twice"):
        metric_specs(score, score)
    with pytest.raises(ValueError, match="kind must be one of"):
        MetricSpec("x", "rank")  # type: ignore[arg-type]
    # a family covers the names made from it, and nothing else
    family = metric_specs(MetricSpec.score("accuracy[*]"))
    assert lookup_metric(family, "accuracy[gsm8k]") is family["accuracy[*]"]
    assert lookup_metric(family, "accuracy") is None
    assert lookup_metric(family, "call_rate[gsm8k]") is None
