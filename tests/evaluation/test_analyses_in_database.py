"""Analyses that declare a score_breakdown are counted by PostgreSQL (a run of a million items
is never read into Python): on a hand-made run, the rows are those the suite's own `compute`
gives over the run's records, and the page's stored analyses are those rows."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.kit.analyses import Analysis, AnalysisMetric, ScoreBreakdown
from benchmarks.kit.registry import get_suite, suite_names
from evaluation import analyses
from evaluation.models import Prediction, Run
from tests.factories import make_benchmark, make_sample

pytestmark = pytest.mark.django_db

# (split, status, scores) of each prediction, in position order: every case the two readings
# must agree on.
PREDICTIONS: list[tuple[str, str, Any]] = [
    ("train", "done", {"accuracy": 100.0, "parsed": 1.0}),
    ("train", "done", {"accuracy": 0.0, "parsed": 1.0}),
    ("train", "done", {"accuracy": 100, "parsed": 0}),  # whole numbers
    ("train", "done", {"accuracy": True}),  # a bool is a number to score_of
    ("train", "done", {"accuracy": False}),
    ("train", "done", {"accuracy": None}),  # not covered: no headline value
    ("train", "done", {"parsed": 1.0}),  # not covered either
    ("train", "done", {"accuracy": "high"}),  # covered, but no value: n counts it
    ("train", "failed", {}),
    ("train", "failed", {"accuracy": 0.0}),  # a failed item the suite scored
    ("test 10", "done", {"accuracy": 1.0 / 3.0}),
    ("test 10", "done", {"accuracy": 2.0 / 3.0}),
    ("test 10", "done", {"accuracy": 0.1}),
    ("test 2", "done", {"accuracy": 33.333}),
    ("test 2", "pending", {"accuracy": 100.0}),  # not settled: left out of both
    ("test 2", "running", {}),
    ("dev", "pending", {"accuracy": 0.0}),  # a group with no settled item: no row
]


# The tool-call task's scores under its own names: its headline and a second metric.
RENAMED = {"tool_calls": {"accuracy": "call_exact", "parsed": "call_name_accuracy"}}


def hand_made_run(task: str = "answer") -> Run:
    benchmark = make_benchmark(name="in-db", suite="generic")
    run = Run.objects.create(benchmark=benchmark, task=task, status=Run.Status.RUNNING)
    names = RENAMED.get(task, {})
    for position, (split, status, given) in enumerate(PREDICTIONS):
        scores = {names.get(key, key): value for key, value in given.items()}
        sample = make_sample(
            benchmark=benchmark,
            split=split,
            external_id=f"q{position}",
            input={"query": f"q{position}"},
            reference={"answer": "1", "tool_calls": []},
        )
        Prediction.objects.create(
            run=run,
            sample=sample,
            position=position,
            status=status,
            scores=scores,
            output="Answer: 1" if status == "done" else "",
            answer="1" if status == "done" else None,
            parsed=status == "done",
        )
    # the same item answered again (a second trial): counted twice, as the records are
    second = Prediction.objects.get(run=run, position=0)
    Prediction.objects.create(
        run=run,
        sample=second.sample,
        position=len(PREDICTIONS),
        repeat=1,
        status="done",
        scores={names.get("accuracy", "accuracy"): 0.0, names.get("parsed", "parsed"): 1.0},
    )
    return run


@pytest.mark.parametrize("task", ["answer", "tool_calls"])
def test_the_database_gives_the_rows_compute_gives(task: str) -> None:
    # given a run with every kind of score, settled and not
    run = hand_made_run(task)
    declared = analyses.declared(run)
    assert declared and all(a.score_breakdown is not None for a in declared)
    # when both readings compute its analyses
    in_python = analyses.compute(declared, analyses._records(run))
    in_database = analyses.compute_in_database(run, declared)
    # then they agree to the last figure, and the figures are the hand-counted ones
    assert in_database == in_python
    assert [row["n"] for row in in_database["by_split"]["rows"]] == [1, 3, 8]
    if task == "answer":
        assert in_database["by_split"]["rows"] == [
            # natural order: 2 before 10; the pending item left out
            {"group": "test 2", "n": 1, "accuracy": 33.33},
            {"group": "test 10", "n": 3, "accuracy": 0.37},
            # 100, 0, 100, 1, 0, "high" (no value), failed 0, the second trial's 0: 201 / 7
            {"group": "train", "n": 8, "accuracy": 28.71},
        ]


def test_the_stored_analyses_are_counted_in_the_database() -> None:
    run = hand_made_run()
    stored = analyses.run_analyses_get(run, inline=True)
    expected = analyses.compute(analyses.declared(run), analyses._records(run))
    assert stored.data == {"run": run.pk, "analyses": expected}


def test_every_declared_score_breakdown_is_its_compute() -> None:
    """Each suite's analysis that declares a score_breakdown gives, over the hand-made run's
    records, the rows its compute gives (the breakdown is by the sample's split or kind, which
    any suite's samples have)."""
    run = hand_made_run()
    data = analyses._records(run)
    found = 0

    for name in suite_names():
        for task, declared in get_suite(name).analyses.items():
            for analysis in declared:
                if analysis.score_breakdown is None:
                    continue
                found += 1
                counted = [
                    (getattr(r.item, analysis.score_breakdown.by_sample), 1, values)
                    for r in data.records
                    if analysis.covers is None or analysis.covers(r, data.ctx)
                    for values in [
                        tuple(
                            float(v) if isinstance(v, int | float) else None
                            for v in (
                                r.scores.get(score)
                                for score in analysis.score_breakdown.scores.values()
                            )
                        )
                    ]
                ]
                assert analysis.run_counted(counted) == analysis.run(data), (name, task)
    assert found >= 2


def test_a_score_breakdown_names_a_score_for_each_metric() -> None:
    with pytest.raises(ValueError, match="a score for each metric"):
        Analysis(
            name="x",
            title="x",
            by="split",
            metrics=(AnalysisMetric("accuracy"),),
            compute=lambda data: [],
            score_breakdown=ScoreBreakdown(by_sample="split", scores={"other": "accuracy"}),
        )
    with pytest.raises(ValueError, match="choose one of split, kind"):
        ScoreBreakdown(by_sample="metadata", scores={})
