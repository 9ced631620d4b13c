"""Judge jobs executed in this process against fake judges: pairwise order swapping and position
bias, unreadable answers retried once and then kept, repeats, the cache."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evaluation import judging, services
from evaluation.judging import JudgeError
from evaluation.models import Judge, JudgeJob, Judgment, Run
from tests.evaluation.conftest import (
    execute_job,
    execute_run,
    make_counting_benchmark,
    make_endpoint,
)
from tests.fake_openai import FakeOpenAI

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("broker")]


@pytest.fixture
def two_runs(tmp_path: Path, fake_server: FakeOpenAI) -> tuple[Run, Run]:
    benchmark = make_counting_benchmark(tmp_path, 6)
    endpoint = make_endpoint(fake_server.base_url)
    first = services.run_launch(
        benchmark=benchmark, task="answer", endpoint=endpoint, split="default"
    )
    execute_run(first)
    # the second run always answers 0 (a different model)
    with FakeOpenAI(responder=lambda request: "Answer: 0") as other:
        other_endpoint = make_endpoint(other.base_url, name="other", model="other-model")
        second = services.run_launch(
            benchmark=benchmark, task="answer", endpoint=other_endpoint, split="default"
        )
        execute_run(second)
    return first, second


def judge_on(server: FakeOpenAI, template: str = "generic.pairwise", name: str = "j") -> Judge:
    # Each judge its own model: the response cache rightly shares answers of one model.
    endpoint = make_endpoint(server.base_url, name=f"judge-{name}", model=f"judge-model-{name}")
    return judging.judge_create(
        name=name, template=template, endpoint=endpoint, answer_mode=Judge.AnswerMode.TEXT
    )


def test_a_judge_that_always_prefers_the_first_answer_gives_only_ties(
    two_runs: tuple[Run, Run],
) -> None:
    # given a judge that always says the answer shown first is better
    run_a, run_b = two_runs
    with FakeOpenAI(responder=lambda request: '{"better": "1", "reason": "first"}') as server:
        judge = judge_on(server)
        # when it compares the runs in both orders, twice
        job = judging.judge_launch(judge=judge, run=run_a, against=run_b, repeats=2)
        execute_job(job)
        asked = server.total
    # then every item is a tie, and the figure says why
    assert job.status == JudgeJob.Status.DONE
    judgments = list(job.judgments.all())
    assert len(judgments) == 6 * 2 * 2 == asked
    assert {(j.order, j.value, j.label) for j in judgments} == {("AB", 1.0, "A"), ("BA", -1.0, "B")}
    assert job.metrics["tie"] == 100.0
    assert job.metrics["win"] == job.metrics["loss"] == 0.0
    assert job.metrics["position_bias"] == 100.0
    assert job.metrics["consistency"] == 0.0
    assert job.metrics["tie_std"] == 0.0
    assert (job.metrics["items"], job.metrics["repeats"]) == (6.0, 2.0)


def test_a_judge_that_reads_the_answers_gives_wins_in_both_orders(
    two_runs: tuple[Run, Run],
) -> None:
    run_a, run_b = two_runs

    def prefer_run_a(request: dict[str, Any]) -> str:
        # Run B always answered 0: a judge that reads prefers the other answer.
        text = request["messages"][-1]["content"]
        first = text.split("Answer 1:\n", 1)[1].split("\n", 1)[0]
        return json.dumps({"better": "2" if first == "Answer: 0" else "1"})

    with FakeOpenAI(responder=prefer_run_a) as server:
        job = judging.judge_launch(judge=judge_on(server), run=run_a, against=run_b, repeats=1)
        execute_job(job)
    assert job.metrics["win"] == 100.0
    assert job.metrics["position_bias"] == 0.0
    assert job.metrics["consistency"] == 100.0


def test_an_unreadable_answer_is_asked_again_once_then_kept_unparsed(
    two_runs: tuple[Run, Run],
) -> None:
    run_a, run_b = two_runs

    def reply(request: dict[str, Any]) -> str:
        text = json.dumps(request["messages"])
        if "I think they are both fine." in text:  # the retry, after the reminder
            return '{"better": "tie"}'
        if "What number comes after 0?" in text:
            return "I think they are both fine."
        return "no idea"

    with FakeOpenAI(responder=reply) as server:
        job = judging.judge_launch(judge=judge_on(server), run=run_a, against=run_b, repeats=1)
        execute_job(job)
    judgments = list(job.judgments.order_by("position"))
    first, second = (j for j in judgments if j.sample.external_id == "0")
    assert (first.status, first.raw_first, first.raw) == (
        Judgment.Status.DONE,
        "I think they are both fine.",
        '{"better": "tie"}',
    )
    assert first.value == second.value == 0.0
    assert second.raw_first == "I think they are both fine."
    unread = [j for j in judgments if j.status == Judgment.Status.UNPARSED]
    assert len(unread) == 10
    assert all(j.raw == j.raw_first == "no idea" and j.value is None for j in unread)
    assert all("better" in j.error for j in unread)
    # unread verdicts are counted, never scored as zeros
    assert job.metrics["unparsed_or_failed"] == 10.0
    # only sample 0 has both orders read: one item, a tie
    assert job.metrics["tie"] == 100.0


def test_repeats_are_separate_questions_and_a_rerun_is_free(two_runs: tuple[Run, Run]) -> None:
    run_a, run_b = two_runs
    with FakeOpenAI(responder=lambda request: '{"better": "2"}') as server:
        judge = judge_on(server)
        first = judging.judge_launch(judge=judge, run=run_a, against=run_b, repeats=3)
        execute_job(first)
        asked = server.total
        again = judging.judge_launch(judge=judge, run=run_a, against=run_b, repeats=3)
        execute_job(again)
        assert server.total == asked == 6 * 2 * 3
    assert again.metrics == first.metrics
    assert again.judgments.filter(cached=True).count() == 36


def test_a_pairwise_launch_writes_each_answered_pair_in_both_orders_per_repeat(
    two_runs: tuple[Run, Run], fake_server: FakeOpenAI
) -> None:
    from evaluation.models import Prediction

    run_a, run_b = two_runs
    done, failed = Prediction.Status.DONE, Prediction.Status.FAILED
    a = {p.sample_id: p for p in run_a.predictions.order_by("position")}
    b = {p.sample_id: p for p in run_b.predictions.order_by("position")}
    s0, s1, s2, s3, s4, s5 = list(a)
    # A's order is its positions, not its ids: s0's answer moves last.
    Prediction.objects.filter(pk=a[s0].pk).update(position=60)
    # Judged: A's answered items whose sample B answered too.
    Prediction.objects.filter(pk=a[s1].pk).update(status=failed)
    Prediction.objects.filter(pk=b[s2].pk).update(status=failed)
    # B answers s3 twice: its first line (the lower position, here the later row) is the one.
    Prediction.objects.filter(pk=b[s3].pk).update(position=70)
    first_line = Prediction.objects.create(
        run=run_b, sample_id=s3, repeat=1, position=3, status=done, output="Answer: 9"
    )
    judge = judge_on(fake_server)
    job = judging.judge_launch(judge=judge, run=run_a, against=run_b, repeats=2)
    pairs = [(s3, a[s3].pk, first_line.pk), (s4, a[s4].pk, b[s4].pk)]
    pairs += [(s5, a[s5].pk, b[s5].pk), (s0, a[s0].pk, b[s0].pk)]
    expected = [
        (sample, mine, other, repeat, order, "pending", job.version_id)
        for repeat in range(2)
        for sample, mine, other in pairs
        for order in ("AB", "BA")
    ]
    fields = ("sample_id", "prediction_id", "other_id", "repeat", "order", "status", "version_id")
    rows = job.judgments.order_by("position").values_list("position", *fields)
    assert [row[0] for row in rows] == list(range(len(expected)))
    assert [row[1:] for row in rows] == expected
    assert job.version_id is not None


def test_launch_refuses_what_cannot_be_judged(
    two_runs: tuple[Run, Run], fake_server: FakeOpenAI
) -> None:
    run_a, run_b = two_runs
    judge = judge_on(fake_server)
    with pytest.raises(JudgeError, match="give the other one"):
        judging.judge_launch(judge=judge, run=run_a)
    with pytest.raises(JudgeError, match="another run"):
        judging.judge_launch(judge=judge, run=run_a, against=run_a)
    with pytest.raises(JudgeError, match="no judge template"):
        judging.judge_create(name="x", template="nope.nothing", endpoint=judge.endpoint)
    Run.objects.filter(pk=run_b.pk).update(status=Run.Status.CANCELLED)
    run_b.refresh_from_db()
    with pytest.raises(JudgeError, match="judge finished runs"):
        judging.judge_launch(judge=judge, run=run_a, against=run_b)


def test_judge_run_prints_the_documented_json(two_runs: tuple[Run, Run]) -> None:
    import io

    from django.core.management import call_command

    run_a, run_b = two_runs
    with FakeOpenAI(responder=lambda request: '{"better": "1"}') as server:
        judge_on(server, name="cli")
        out = io.StringIO()
        call_command(
            "judge_run",
            "--judge",
            "cli",
            "--run",
            str(run_a.pk),
            "--against",
            str(run_b.pk),
            "--repeat",
            "1",
            "--json",
            stdout=out,
        )
        job = JudgeJob.objects.get()
        execute_job(job)
    printed = json.loads(out.getvalue())
    assert printed["judge"] == "cli" and printed["run"] == run_a.pk
    assert printed["against"] == run_b.pk and printed["items"] == 6
    assert set(printed) == {"judge", "run", "against", "items", "metrics"}


def test_the_job_page_shows_verdicts_escaped(two_runs: tuple[Run, Run], client: Any) -> None:
    from tests.factories import make_superuser

    run_a, run_b = two_runs
    with FakeOpenAI(responder=lambda request: '{"better": "1", "reason": "<b>bold</b>"}') as s:
        job = judging.judge_launch(judge=judge_on(s), run=run_a, against=run_b, repeats=1)
        execute_job(job)
    client.force_login(make_superuser())
    html = client.get(f"/judging/{job.pk}/").content.decode()
    assert "A shown first" in html and "B shown first" in html
    assert "&lt;b&gt;bold&lt;/b&gt;" in html and "<b>bold</b>" not in html
    assert "position_bias" in html
    progress = client.get(f"/judging/{job.pk}/?part=progress", HTTP_HX_REQUEST="true")
    assert b"hx-trigger" not in progress.content  # done: no more polling
    run_page = client.get(f"/runs/{run_a.pk}/").content.decode()
    assert f"/judging/{job.pk}/" in run_page


def test_solvability_votes_mark_the_samples(tmp_path: Path, fake_server: FakeOpenAI) -> None:
    from benchmarks.models import Sample
    from evaluation.judging import solvability_mark

    benchmark = make_counting_benchmark(tmp_path, 4)
    run = services.run_launch(
        benchmark=benchmark,
        task="answer",
        endpoint=make_endpoint(fake_server.base_url),
        split="default",
    )
    execute_run(run)

    def votes(unsolvable: set[str]):  # type: ignore[no-untyped-def]
        def reply(request: dict[str, Any]) -> str:
            text = json.dumps(request["messages"])
            bad = any(f"after {n}?" in text for n in unsolvable)
            return json.dumps({"reason": "", "task_status": "Unsolvable" if bad else "Solvable"})

        return reply

    jobs = []
    # three judges: all say sample 0 is unsolvable, one also doubts sample 1
    for name, unsolvable in (("j1", {"0"}), ("j2", {"0", "1"}), ("j3", {"0"})):
        with FakeOpenAI(responder=votes(unsolvable)) as server:
            judge = judge_on(server, template="stabletoolbench.solvability", name=name)
            job = JudgeJob.objects.create(judge=judge, run=run, repeats=1)
            for position, sample in enumerate(benchmark.samples.order_by("id")):
                Judgment.objects.create(
                    job=job,
                    sample=sample,
                    prediction=run.predictions.get(sample=sample),
                    position=position,
                )
            execute_job(job)
            jobs.append(job)
    counts = solvability_mark(jobs=jobs)
    assert counts == {"solvable": 2, "unsolvable": 2, "undecided": 0}
    marked = {
        s.external_id: s.metadata["solvable"] for s in Sample.objects.filter(benchmark=benchmark)
    }
    assert marked == {"0": False, "1": False, "2": True, "3": True}
    assert Sample.objects.get(benchmark=benchmark, external_id="1").metadata[
        "solvability_votes"
    ] == {"j1": "Solvable", "j2": "Unsolvable", "j3": "Solvable"}


def import_demo_ultratool() -> Any:
    from benchmarks.models import Benchmark
    from benchmarks.services import benchmark_import

    demo = Path(__file__).resolve().parents[2] / "benchmarks" / "demo" / "ultratool"
    benchmark_import(
        suite="ultratool",
        paths=[demo / "test.json", *sorted((demo / "test_set").glob("*.json"))],
        benchmark_name="UltraTool mine",
    )
    return Benchmark.objects.get(name="UltraTool mine")


FIXTURE = Path(__file__).resolve().parents[1] / "benchmarks/fixtures/ultratool"


def test_published_planning_evaluations_become_a_judged_run() -> None:
    import io

    from django.core.management import call_command

    import_demo_ultratool()
    out = io.StringIO()
    call_command(
        "import_judgments",
        "ultratool-planning",
        str(FIXTURE / "planning_evaluations.jsonl"),
        "--name",
        "some-model",
        "--json",
        stdout=out,
    )
    printed = json.loads(out.getvalue())
    job = JudgeJob.objects.get()
    assert printed["run"] == job.run_id and printed["items"] == 5
    assert printed["judge"] == "published ultratool-planning judge"
    assert job.source == JudgeJob.Source.IMPORTED and job.status == JudgeJob.Status.DONE
    assert job.run.source == Run.Source.IMPORTED and job.run.task == "planning"
    # the scores as published, reported / 10, item by item
    lines = [
        json.loads(x) for x in (FIXTURE / "planning_evaluations.jsonl").read_text().split("\n") if x
    ]
    first = job.judgments.get(position=0)
    published = {
        k: v for entry in lines[0]["eval"] for k, v in entry.items() if k.endswith("Score")
    }
    assert first.values["Overall"] == published["Overall Score"]
    assert first.value == published["Overall Score"] / 10
    assert first.prediction.output == lines[0]["data"]["init output"]
    overall = [
        next(e["Overall Score"] for e in line["eval"] if "Overall Score" in e) for line in lines
    ]
    assert printed["metrics"]["Overall"] == pytest.approx(sum(overall) / len(overall) / 10)


def test_evaluations_out_of_order_import_nothing(tmp_path: Path) -> None:
    from django.core.management import CommandError, call_command

    import_demo_ultratool()
    lines = (FIXTURE / "planning_evaluations.jsonl").read_text().strip().split("\n")
    shuffled = tmp_path / "evals.jsonl"
    shuffled.write_text("\n".join([lines[1], lines[0], *lines[2:]]) + "\n")
    with pytest.raises(CommandError, match=r"line 1: field data\.data\.input is not the question"):
        call_command("import_judgments", "ultratool-planning", str(shuffled), "--name", "m")
    assert not Run.objects.exists() and not JudgeJob.objects.exists()
