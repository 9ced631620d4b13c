"""Analyses that read the judges' verdicts (AnalysisInput.inputs["judgments"]): StableToolBench's
SoPR against the share of tools down from a model's stability runs, one line when compared;
the stored analyses are computed again when a verdict arrives."""

from __future__ import annotations

import pytest

from evaluation.analyses import compare, run_analyses_get
from evaluation.models import Judge, JudgeJob, Judgment, Prediction, Run
from tests.factories import make_benchmark, make_sample

pytestmark = pytest.mark.django_db

PASS_VALUE = {"Solved": 1.0, "Unsure": 0.5, "Unsolved": 0.0}


def stability_run(benchmark, samples, share, labels):  # type: ignore[no-untyped-def]
    run = Run.objects.create(
        name=f"{share}% down",
        model_name="model-x",
        benchmark=benchmark,
        task="pass_rate",
        source=Run.Source.IMPORTED,
        status=Run.Status.DONE,
    )
    judge, _ = Judge.objects.get_or_create(
        name="pass judge", defaults={"template": "stabletoolbench.pass", "kind": "pass"}
    )
    job = JudgeJob.objects.create(judge=judge, run=run, repeats=1, status=JudgeJob.Status.DONE)
    for position, (sample, label) in enumerate(zip(samples, labels, strict=True)):
        prediction = Prediction.objects.create(
            run=run,
            sample=sample,
            position=position,
            status=Prediction.Status.DONE,
            output="{}",
            context={"tools_down": share} if share else {},
        )
        Judgment.objects.create(
            job=job,
            sample=sample,
            prediction=prediction,
            position=position,
            status=Judgment.Status.DONE,
            value=PASS_VALUE[label],
            label=label,
            values={"label": label},
        )
    return run, job


def test_sopr_by_tools_down_reads_the_pass_judge_and_pools_a_models_runs() -> None:
    benchmark = make_benchmark(suite="stabletoolbench")
    samples = [
        make_sample(benchmark=benchmark, split="G1_instruction", candidate_tools=["a", "b"])
        for _ in range(2)
    ]
    base, _ = stability_run(benchmark, samples, 0, ["Solved", "Unsure"])
    down, job = stability_run(benchmark, samples, 50.0, ["Unsolved", "Unsure"])

    def rows(run: Run) -> list[dict]:  # type: ignore[type-arg]
        data = run_analyses_get(run, inline=True).data
        return data["analyses"]["sopr_by_tools_down"]["rows"]

    # each run alone: its share, SoPR from its verdicts (1 and 0.5: 75; 0 and 0.5: 25)
    assert rows(base) == [{"group": 0.0, "n": 2, "SoPR": 75.0, "judged": 2.0}]
    assert rows(down) == [{"group": 50.0, "n": 2, "SoPR": 25.0, "judged": 2.0}]
    # compared: one line for the model, over the shares
    (series,) = compare([base, down])["sopr_by_tools_down"]
    assert series.label == "model-x" and series.runs == [base.pk, down.pk]
    assert [(r["group"], r["SoPR"]) for r in series.rows] == [(0.0, 75.0), (50.0, 25.0)]
    # a verdict changed: the stored analyses are computed again
    Judgment.objects.filter(job=job, label="Unsolved").update(
        label="Solved", value=1.0, values={"label": "Solved"}
    )
    assert rows(down) == [{"group": 50.0, "n": 2, "SoPR": 75.0, "judged": 2.0}]
