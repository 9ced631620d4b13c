"""Cached answers belong to the server that gave them (issue 27, finding 1). Two endpoints with the
same model name and the same request share nothing, for every user of the response cache (runs,
judge jobs, rewriting, embeddings); a run's and a judge job's pages say how many of their
answers came from the cache."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from benchmarks.models import Benchmark
from benchmarks.services import benchmark_import
from evaluation import judging, services
from evaluation.embedders import remote_embed
from evaluation.models import Endpoint, Prediction, ResponseCache, Run
from evaluation.rewriting import tool_descriptions_rewrite
from evaluation.work.addresses import normalised_base_url
from tests.evaluation.conftest import (
    counting_answer,
    execute_job,
    execute_run,
    make_counting_benchmark,
    make_endpoint,
)
from tests.factories import make_researcher
from tests.fake_openai import FakeOpenAI
from tests.workers import celery_worker

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("broker")]

# One model name on two servers: a local fake called gpt-4o, and "the real one".
MODEL = "gpt-4o"


def wait_for(run: Run, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if run.status != Run.Status.RUNNING:
            return
        time.sleep(0.2)
    raise AssertionError(f"run {run.pk} still running after {timeout}s")


def page_text(path: str) -> str:
    """The page's text as a reader sees it: no tags, spaces collapsed."""
    client = Client()
    client.force_login(make_researcher())
    answer = client.get(path)
    assert answer.status_code == 200
    return " ".join(re.sub(r"<[^>]+>", " ", answer.content.decode()).split())


@pytest.mark.slow
def test_two_endpoints_with_one_model_and_one_request_never_share_an_answer(
    tmp_path: Path,
) -> None:
    # given two servers answering differently, registered as two endpoints of one model name
    benchmark = make_counting_benchmark(tmp_path, 12)
    with (
        FakeOpenAI(responder=counting_answer) as first_server,
        FakeOpenAI(responder="fixed:Answer: 0") as second_server,
    ):
        first = make_endpoint(first_server.base_url, name="local-fake", model=MODEL)
        second = make_endpoint(second_server.base_url, name="real", model=MODEL)
        with celery_worker(tmp_path, concurrency=2):
            # when a run on the first is answered, then the same run on the second
            run_first = services.run_launch(
                benchmark=benchmark, task="answer", endpoint=first, split="default"
            )
            wait_for(run_first)
            run_second = services.run_launch(
                benchmark=benchmark, task="answer", endpoint=second, split="default"
            )
            wait_for(run_second)
            # and the first once more
            again = services.run_launch(
                benchmark=benchmark, task="answer", endpoint=first, split="default"
            )
            wait_for(again)
        # then the second server was asked every item, and its own answers are scored
        assert first_server.total == 12
        assert second_server.total == 12
    assert run_second.status == Run.Status.DONE
    answers = list(run_second.predictions.values_list("output", "cached"))
    assert answers == [("Answer: 0", False)] * 12
    assert run_second.metrics != run_first.metrics
    # and the repeat on the first server took the first server's answers from the cache
    assert again.metrics == run_first.metrics
    assert again.predictions.filter(cached=True).count() == 12
    assert sorted(ResponseCache.objects.values_list("base_url", flat=True).distinct()) == sorted(
        [normalised_base_url(first.base_url), normalised_base_url(second.base_url)]
    )
    # and each run page says where its answers came from
    assert "12 of 12 items answered from the response cache" in page_text(f"/runs/{again.pk}/")
    assert "answered from the response cache" not in page_text(f"/runs/{run_second.pk}/")


# --- every user of the cache ----------------------------------------------------------------------


def by_run(endpoint: Endpoint, tmp_path: Path) -> Callable[[], Any]:
    benchmark = Benchmark.objects.filter(name="Counting").first() or make_counting_benchmark(
        tmp_path, 4
    )

    def ask() -> Any:
        run = services.run_launch(
            benchmark=benchmark, task="answer", endpoint=endpoint, split="default"
        )
        execute_run(run)
        return sorted(run.predictions.values_list("output", flat=True))

    return ask


def by_judge_job(endpoint: Endpoint, tmp_path: Path) -> Callable[[], Any]:
    benchmark = Benchmark.objects.filter(name="Counting").first() or make_counting_benchmark(
        tmp_path, 4
    )
    runs = list(Run.objects.filter(benchmark=benchmark, status=Run.Status.DONE).order_by("pk")[:2])
    if len(runs) < 2:
        with FakeOpenAI(responder=counting_answer) as server:
            answering = make_endpoint(server.base_url, name="answering", model="answering")
            for _ in range(2):
                run = services.run_launch(
                    benchmark=benchmark, task="answer", endpoint=answering, split="default"
                )
                execute_run(run)
                runs.append(run)
    judge = judging.judge_create(
        name=f"judge-{endpoint.name}",
        template="generic.pairwise",
        endpoint=endpoint,
        answer_mode="text",
    )

    def ask() -> Any:
        job = judging.judge_launch(judge=judge, run=runs[0], against=runs[1], repeats=1)
        execute_job(job)
        return sorted(job.judgments.values_list("raw", flat=True))

    return ask


def by_rewriting(endpoint: Endpoint, tmp_path: Path) -> Callable[[], Any]:
    benchmark = Benchmark.objects.filter(suite="metatool").first()
    if benchmark is None:
        demo = Path(__file__).resolve().parents[2] / "benchmarks" / "demo" / "metatool"
        benchmark_import(
            suite="metatool",
            paths=[demo / "plugin_des.json", demo / "all_clean_data.csv"],
            benchmark_name="MetaTool tools",
        )
        benchmark = Benchmark.objects.get(suite="metatool")

    def ask() -> Any:
        revision = tool_descriptions_rewrite(benchmark=benchmark, endpoint=endpoint)
        return sorted(revision.tools.values_list("description", flat=True))

    return ask


def by_embedding(endpoint: Endpoint, tmp_path: Path) -> Callable[[], Any]:
    def ask() -> Any:
        return remote_embed(endpoint, ["a tool that books flights", "a tool that sends mail"])

    return ask


USERS = {
    "run": by_run,
    "judge job": by_judge_job,
    "rewriting": by_rewriting,
    "embedding": by_embedding,
}


def answering(request: dict[str, Any], word: str) -> str:
    if "Rewrite the description" in str(request):
        return f"New description: rewritten by {word}"
    if "input" in request and "model" in request and "messages" not in request:
        return ""
    return f'Answer: {word}. {{"better": "1", "reason": "{word}"}}'


def asked(server: FakeOpenAI) -> set[frozenset[str]]:
    """The distinct requests a server was sent: each as the lines of its content (an embedding
    request's texts in any order)."""
    return {frozenset(record.content.splitlines()) for record in server.records()}


@pytest.mark.parametrize("user", USERS)
def test_every_user_of_the_response_cache_keeps_each_servers_answers_apart(
    user: str, tmp_path: Path
) -> None:
    with (
        FakeOpenAI(responder=lambda r: answering(r, "one"), seed=1) as one,
        FakeOpenAI(responder=lambda r: answering(r, "two"), seed=2, embedding_dim=16) as two,
    ):
        first = make_endpoint(one.base_url, name="one", model=MODEL)
        second = make_endpoint(two.base_url, name="two", model=MODEL)
        ask_first = USERS[user](first, tmp_path)
        ask_second = USERS[user](second, tmp_path)
        # when the first endpoint is asked, then the second the same
        answers_first = ask_first()
        asked_first = asked(one)
        answers_second = ask_second()
        # then the second server was asked every request too, and its answers are its own
        assert asked_first
        assert asked(two) == asked_first
        assert answers_second != answers_first
        # and asking the first again asks nobody: its answers are cached for it
        before = (one.total, two.total)
        assert ask_first() == answers_first
        assert (one.total, two.total) == before


def test_the_run_and_judge_job_pages_say_how_many_answers_came_from_the_cache(
    tmp_path: Path, fake_server: FakeOpenAI
) -> None:
    benchmark = make_counting_benchmark(tmp_path, 5)
    endpoint = make_endpoint(fake_server.base_url)
    first = services.run_launch(
        benchmark=benchmark, task="answer", endpoint=endpoint, split="default", item_limit=2
    )
    execute_run(first)
    second = services.run_launch(
        benchmark=benchmark, task="answer", endpoint=endpoint, split="default"
    )
    execute_run(second)
    assert second.predictions.filter(cached=True).count() == 2
    assert "answered from the response cache" not in page_text(f"/runs/{first.pk}/")
    text = page_text(f"/runs/{second.pk}/")
    assert "2 of 5 items answered from the response cache (2 of 5 calls)" in text
    # a judge job: the same request asked again is answered from the cache
    with FakeOpenAI(responder=lambda r: '{"better": "1"}') as judge_server:
        judge = judging.judge_create(
            name="cached-judge",
            template="generic.pairwise",
            endpoint=make_endpoint(judge_server.base_url, name="judge", model="judge-model"),
            answer_mode="text",
        )
        for _ in range(2):
            job = judging.judge_launch(judge=judge, run=first, against=second, repeats=1)
            execute_job(job)
    text = page_text(f"/judging/{job.pk}/")
    assert "4 of 4 judgments answered from the response cache (4 of 4 calls)" in text
    assert Prediction.objects.filter(run=first, cached=True).count() == 0
