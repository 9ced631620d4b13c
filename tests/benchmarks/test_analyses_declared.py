"""Every analysis every suite declares keeps the framework's promises (benchmarks/suites/
analyses.py), on an example run of its task (tests/benchmarks/analysis_examples/<suite>.py):

- the rows have the declared shape, one per group, in the analysis's order;
- the groups' sizes add up to the records the analysis covers (all of them unless it says),
  or, for groups that are facets of the records rather than a partition (partition=False, a
  judge's dimensions), each is at most that;
- a metric declared as the per-group version of a run metric (mean_of) averages, weighted by
  the groups' sizes, to that run metric as the suite's own aggregate gives it over the same
  records (to the rounding of two 2-decimal figures);
- the example exercises the grouping: at least two groups.

A suite that declares analyses for a task with no example fails here, naming the module."""

from __future__ import annotations

import importlib
import math

import pytest

from benchmarks.kit.analyses import COUNT, GROUP, Analysis, AnalysisInput
from benchmarks.kit.registry import all_suites
from tests.benchmarks.analysis_examples import Example

DECLARED = [
    (suite.name, task, analysis)
    for suite in all_suites()
    for task, analyses in suite.analyses.items()
    for analysis in analyses
]


def example(suite: str, task: str) -> Example:
    try:
        module = importlib.import_module(f"tests.benchmarks.analysis_examples.{suite}")
    except ModuleNotFoundError:
        pytest.fail(
            f"suite {suite} declares analyses: add tests/benchmarks/analysis_examples/{suite}.py"
        )
    builders = getattr(module, "EXAMPLES", {})
    if task not in builders:
        pytest.fail(f"no example run of {suite} {task}: add one to its EXAMPLES")
    return builders[task]()


_CACHE: dict[tuple[str, str], Example] = {}


def cached(suite: str, task: str) -> Example:
    if (suite, task) not in _CACHE:
        _CACHE[(suite, task)] = example(suite, task)
    return _CACHE[(suite, task)]


def test_the_suites_declare_analyses() -> None:
    named = {(suite, task, analysis.name) for suite, task, analysis in DECLARED}
    assert ("mtubench", "M-S", "by_turn") in named
    assert ("metatool", "scenario", "by_top_n") in named


@pytest.mark.parametrize(
    ("suite", "task", "analysis"),
    DECLARED,
    ids=[f"{suite}-{task}-{analysis.name}" for suite, task, analysis in DECLARED],
)
def test_every_declared_analysis_partitions_its_records_and_weighs_up_to_the_run(
    suite: str, task: str, analysis: Analysis
) -> None:
    run = cached(suite, task)
    data = AnalysisInput(run.records, run.ctx, inputs=run.inputs)
    rows = analysis.run(data)
    groups = [row[GROUP] for row in rows]
    assert len(groups) >= 2, f"the example gives {analysis.name} only {groups}"
    assert len(set(groups)) == len(groups)
    assert groups == sorted(groups, key=analysis.sort_key)
    covered = analysis.covered(data)
    if not analysis.partition:
        # facets of the records (a judge's dimensions): each counts some of them
        assert all(row[COUNT] <= len(covered) for row in rows)
        return
    assert sum(row[COUNT] for row in rows) == len(covered)
    overall = run.evaluator.aggregate(covered, run.ctx)
    for metric in analysis.metrics:
        if metric.mean_of is None:
            continue
        expected = overall[metric.mean_of]
        assert expected is not None
        weighted = math.fsum(row[COUNT] * row[metric.name] for row in rows) / len(covered)
        assert weighted == pytest.approx(expected, abs=0.01), (metric.name, rows, expected)
