"""Migration 0022 gives every existing judge version 1, pinned from its state then and
answering in text (as it had), and records that version on its jobs and judgments; the state
pinned is the one the running code computes for the judge (judge_versions.pinned)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from evaluation.judge_versions import digest, pinned
from evaluation.models import Judge, JudgeJob, Judgment

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("evaluation", "0021_endpoint_styles_registered")]
AFTER = [("evaluation", "0022_judge_versions")]


def test_existing_judges_get_version_one_and_their_verdicts_record_it() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    model = executor.loader.project_state(BEFORE).apps.get_model
    benchmark = model("benchmarks", "Benchmark").objects.create(name="b", suite="generic")
    sample = model("benchmarks", "Sample").objects.create(
        benchmark=benchmark, split="default", external_id="0", input={"query": "0"}
    )
    endpoint = model("evaluation", "Endpoint").objects.create(
        name="e",
        base_url="http://127.0.0.1:9/v1",
        model="judge-model",
        style="chat",
        default_params={"max_tokens": 64},
    )
    run = model("evaluation", "Run").objects.create(
        benchmark=benchmark, task="answer", endpoint=endpoint, model_name="m", style="chat"
    )
    prediction = model("evaluation", "Prediction").objects.create(
        run=run, sample=sample, position=0, status="done"
    )
    OldJudge = model("evaluation", "Judge")
    asked = OldJudge.objects.create(
        name="asked",
        template="generic.pairwise",
        kind="pairwise",
        endpoint=endpoint,
        params={"temperature": 0},
    )
    OldJudge.objects.create(name="unused", template="stabletoolbench.pass", kind="pass")
    job = model("evaluation", "JudgeJob").objects.create(judge=asked, run=run, against=run)
    model("evaluation", "Judgment").objects.create(
        job=job, sample=sample, prediction=prediction, other=prediction, position=0, order="AB"
    )

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    for judge in Judge.objects.all():
        version = judge.versions.get()
        assert (version.number, version.mode, judge.answer_mode) == (1, "text", "text")
        assert version.pinned == pinned(judge) and version.digest == digest(pinned(judge))
    asked_now = Judge.objects.get(name="asked")
    version = asked_now.versions.get()
    assert version.model == "judge-model"
    assert version.pinned["params"] == {"max_tokens": 64, "temperature": 0}
    assert version.pinned["endpoint"]["style"] == "chat"
    assert JudgeJob.objects.get().version_id == version.pk
    assert Judgment.objects.get().version_id == version.pk
    unused = Judge.objects.get(name="unused").versions.get()
    assert (unused.model, unused.pinned["endpoint"]) == ("", None)
