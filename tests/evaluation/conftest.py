"""Fixtures for runs: a generic benchmark of counting questions, an endpoint on a fake
OpenAI-compatible server, and a clean test broker."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.models import Benchmark
from benchmarks.services import benchmark_import
from evaluation.models import Endpoint
from tests.fake_openai import FakeOpenAI
from tests.workers import flush_test_broker

QUESTION = re.compile(r"What number comes after (\d+)\?")


def counting_answer(request: dict[str, Any]) -> str:
    """Right for even numbers, wrong for odd ones: a known 50% accuracy."""
    content = json.dumps(request.get("messages") or request.get("prompt"))
    found = QUESTION.findall(content)
    n = int(found[-1]) if found else 0
    return f"Answer: {n + 1 if n % 2 == 0 else n + 2}"


def write_counting_questions(folder: Path, count: int) -> Path:
    path = folder / "counting.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for i in range(count):
            record = {"id": i, "query": f"What number comes after {i}?", "answer": i + 1}
            handle.write(json.dumps(record) + "\n")
    return path


@pytest.fixture
def broker() -> Iterator[None]:
    flush_test_broker()
    yield
    flush_test_broker()


def make_counting_benchmark(tmp_path: Path, count: int, name: str = "Counting") -> Benchmark:
    folder = tmp_path / name
    folder.mkdir()
    benchmark_import(
        suite="generic", paths=[write_counting_questions(folder, count)], benchmark_name=name
    )
    return Benchmark.objects.get(name=name)


@pytest.fixture
def fake_server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(responder=counting_answer) as server:
        yield server


def make_endpoint(base_url: str, **fields: Any) -> Endpoint:
    fields.setdefault("name", "fake")
    fields.setdefault("model", "fake-model")
    fields.setdefault("style", Endpoint.Style.CHAT)
    fields.setdefault("max_concurrency", 8)
    fields.setdefault("timeout_seconds", 5)
    fields.setdefault("max_attempts", 4)
    return Endpoint.objects.create(base_url=base_url, **fields)


def make_simulator(settings: Any, base_url: str, **fields: Any) -> Endpoint:
    """An endpoint (named "simulator" unless told) that the virtual API server's simulator
    uses for the rest of the test (VIRTUAL_API_SIMULATOR)."""
    fields.setdefault("name", "simulator")
    endpoint = make_endpoint(base_url, **fields)
    settings.VIRTUAL_API_SIMULATOR = endpoint.name
    return endpoint


def execute_run(run: Any) -> None:
    """Answer every chunk of a run in this process, then finalise it."""
    from evaluation import services

    size = services.chunk_size()
    total = run.predictions.count()
    for first in range(0, total, size):
        services.chunk_execute(run.pk, first, first + size - 1)
    services.run_finalize(run_id=run.pk)
    run.refresh_from_db()


def execute_job(job: Any) -> None:
    """Judge every chunk of a judge job in this process, then finalise it."""
    from evaluation import judging

    size = judging.chunk_size()
    total = job.judgments.count()
    for first in range(0, total, size):
        judging.job_execute(job.pk, first, first + size - 1)
    judging.job_finalize(job_id=job.pk)
    job.refresh_from_db()
