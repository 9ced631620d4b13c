"""A worker that raises while it works never leaves its parent running: any exception in a
chunk or while finishing ends a run or judge job `failed` with the message (evaluation.lifecycle),
and the items its execution held go back to pending, so that it can be resumed once fixed. The
errors here get past every check at launch (a suite's aggregate that breaks, a task or judge
template gone since), as a suite's defect would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.kit.registry import SUITE_MODULES
from benchmarks.services import benchmark_import
from evaluation import services, tasks
from evaluation.judging import judge_launch
from evaluation.models import Judge, Run
from tests.evaluation.conftest import counting_answer, make_counting_benchmark, make_endpoint
from tests.fake_openai import FakeOpenAI

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("broker")]


def parity_file(folder: Path) -> Path:
    path = folder / "parity.jsonl"
    path.write_text("".join(json.dumps({"id": i, "n": i}) + "\n" for i in range(4)))
    return path


def test_a_suite_that_raises_while_finishing_fails_the_run_with_the_message(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setitem(SUITE_MODULES, "broken_test", "tests.evaluation.broken_suite")
    benchmark_import(suite="broken_test", paths=[parity_file(tmp_path)], benchmark_name="Broken")
    with FakeOpenAI(responder=lambda request: "yes") as server:
        endpoint = make_endpoint(server.base_url)
        from benchmarks.models import Benchmark

        run = services.run_launch(
            benchmark=Benchmark.objects.get(name="Broken"), task="parity", endpoint=endpoint
        )
        # when the chunk's task answers every item and the run is finished
        tasks.run_chunk(run.pk, 0, 99)
    # then the run is failed with what went wrong, its answers kept
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED
    assert "RuntimeError" in run.error and "the aggregate of 4 items broke" in run.error
    assert run.predictions.filter(status="done").count() == 4


def test_an_error_in_a_runs_chunk_fails_it_and_gives_its_items_back(tmp_path: Path) -> None:
    benchmark = make_counting_benchmark(tmp_path, 5)
    with FakeOpenAI(responder=counting_answer) as server:
        run = services.run_launch(
            benchmark=benchmark,
            task="answer",
            endpoint=make_endpoint(server.base_url),
            split="default",
        )
        # given a run whose task its suite no longer has (renamed since the launch)
        Run.objects.filter(pk=run.pk).update(task="answer_v0")
        tasks.run_chunk(run.pk, 0, 99)
        assert server.total == 0
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED
    assert "has no task 'answer_v0'" in run.error
    # the items the execution had claimed are pending again, their claim undone
    assert set(run.predictions.values_list("status", "attempts", "claim")) == {("pending", 0, None)}


def test_an_error_in_a_judge_jobs_chunk_fails_it_with_the_message(tmp_path: Path) -> None:
    benchmark = make_counting_benchmark(tmp_path, 3)
    with FakeOpenAI(responder=counting_answer) as server:
        endpoint = make_endpoint(server.base_url)
        runs = []
        for seed in (1, 2):
            run = services.run_launch(
                benchmark=benchmark, task="answer", endpoint=endpoint, split="default", seed=seed
            )
            tasks.run_chunk(run.pk, 0, 99)
            run.refresh_from_db()
            assert run.status == Run.Status.DONE
            runs.append(run)
        judge = Judge.objects.create(
            name="j", template="generic.pairwise", kind=Judge.Kind.PAIRWISE, endpoint=endpoint
        )
        job = judge_launch(judge=judge, run=runs[0], against=runs[1], repeats=1)
        asked = server.total
        # given a judge whose template no suite declares any more
        Judge.objects.filter(pk=judge.pk).update(template="generic.retired")
        tasks.judge_chunk(job.pk, 0, 99)
        assert server.total == asked
    job.refresh_from_db()
    assert job.status == "failed"
    assert "no judge template 'generic.retired'" in job.error
    assert set(job.judgments.values_list("status", "attempts", "claim")) == {("pending", 0, None)}
