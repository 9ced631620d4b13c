"""The counts of a comparison made ahead of it: when a run finishes, a worker on the reports
queue counts it against its task's newest done runs (services.run_compare_counts_ahead), into
the cache entries the comparison's fragment reads, so that the fragment answers without counting.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
import redis
from django.conf import settings as django_settings
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from benchmarks.models import Benchmark
from evaluation import services
from evaluation.models import Run
from evaluation.selectors import compared_counts, compared_counts_known, forget_compared_counts
from tests.evaluation.conftest import make_counting_benchmark
from tests.factories import make_researcher
from tests.workers import celery_worker, flush_test_broker

# Each run's outputs for the six counting questions (the right answer of question i is i + 1),
# as numbers, None for a question the run has no output for.
OUTPUTS = {
    "oldest": [1, 2, 3, 4, 5, 6],
    "older": [1, 2, 3, 4, None, None],
    "newer": [1, 2, 3, 4, 5, 6],
    "last": [1, 9, 3, 4, 5, 6],
}


def import_run(benchmark: Benchmark, folder: Path, name: str) -> Run:
    """A run of the answer task imported from OUTPUTS[name]: imported, then finalised (the one
    place runs finish), as every run is."""
    path = folder / f"{name}.jsonl"
    lines = [
        json.dumps({"sample_id": str(i), "output": f"Answer: {n}"})
        for i, n in enumerate(OUTPUTS[name])
        if n is not None
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return services.predictions_import(
        benchmark=benchmark, task="answer", path=path, name=name, split="default", fmt="generic"
    )


def counted(seen: CaptureQueriesContext) -> list[str]:
    """The queries that counted two runs' items (COMPARE_COUNTS_SQL)."""
    return [q["sql"] for q in seen.captured_queries if "FULL JOIN" in q["sql"]]


def fragment(client: Client, a: Run, b: Run) -> str:
    html = client.get("/runs/compare/counts/", {"a": a.pk, "b": b.pk}).content.decode()
    return " ".join(re.sub(r"<[^>]+>", "", html).split())


def reports_queued() -> int:
    return int(redis.from_url(django_settings.CELERY_BROKER_URL).llen("reports"))


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_finished_run_is_counted_against_its_newest_others_by_a_worker(
    tmp_path: Path, settings: Any, client: Client
) -> None:
    # given: three done runs of one task, and a bound of two
    settings.COMPARE_COUNTS_AHEAD = 2
    benchmark = make_counting_benchmark(tmp_path, 6)
    oldest, older, newer = (import_run(benchmark, tmp_path, n) for n in OUTPUTS if n != "last")
    flush_test_broker()  # the queue and the cache as if those had been compared long ago
    # when: the fourth finishes (its import finalises it) and a reports worker runs
    last = import_run(benchmark, tmp_path, "last")
    assert reports_queued() == 1
    with celery_worker(tmp_path, queues="reports", COMPARE_COUNTS_AHEAD="2") as worker:
        deadline = time.monotonic() + 60
        while "run_compare_counts" not in worker.text() or "succeeded" not in worker.text():
            assert time.monotonic() < deadline, worker.text()[-3000:]
            time.sleep(0.2)
    # then: it counted the two newest others (by the one counting, both orders served)...
    assert re.search(r"run_compare_counts\[[^\]]+\] succeeded in [0-9.]+s: 2", worker.text())
    assert compared_counts_known(last, newer) == {
        "shared": 6,
        "agree": 5,
        "disagree": 1,
        "only_a": 0,
        "only_b": 0,
    }
    assert compared_counts_known(older, last) == {
        "shared": 4,
        "agree": 3,
        "disagree": 1,
        "only_a": 0,
        "only_b": 2,
    }
    # ...not the third (the bound)
    assert compared_counts_known(last, oldest) is None
    # and the comparison's fragment answers from them without counting, in either order
    client.force_login(make_researcher(username="ada"))
    with CaptureQueriesContext(connection) as seen:
        assert fragment(client, older, last) == (
            "4 shared items: 3 agree 1 disagree 0 only in A, 2 only in B"
        )
        assert fragment(client, last, older) == (
            "4 shared items: 3 agree 1 disagree 2 only in A, 0 only in B"
        )
        assert fragment(client, newer, last) == "6 shared items: 5 agree 1 disagree"
    assert counted(seen) == []
    # the pair not counted ahead is counted by the fragment, on its miss
    with CaptureQueriesContext(connection) as seen:
        assert fragment(client, last, oldest) == "6 shared items: 5 agree 1 disagree"
    assert len(counted(seen)) == 1
    flush_test_broker()


@pytest.mark.django_db
def test_counting_ahead_is_bounded_idempotent_and_only_of_done_runs(
    tmp_path: Path, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    flush_test_broker()
    settings.COMPARE_COUNTS_AHEAD = 2
    benchmark = make_counting_benchmark(tmp_path, 6)
    # a lone run has nothing to be compared with: nothing queued when it finishes
    with django_capture_on_commit_callbacks(execute=True):
        oldest = import_run(benchmark, tmp_path, "oldest")
    assert reports_queued() == 0
    with django_capture_on_commit_callbacks(execute=True):
        older = import_run(benchmark, tmp_path, "older")
    assert reports_queued() == 1
    newer = import_run(benchmark, tmp_path, "newer")
    last = import_run(benchmark, tmp_path, "last")
    # the task's body (the worker's): the two newest others, each once
    assert services.run_compare_counts_ahead(run_id=last.pk) == 2
    assert compared_counts_known(newer, last) is not None
    assert compared_counts_known(older, last) is not None
    assert compared_counts_known(oldest, last) is None
    # run twice (a second delivery): nothing counted again
    with CaptureQueriesContext(connection) as seen:
        assert services.run_compare_counts_ahead(run_id=last.pk) == 0
    assert counted(seen) == []
    # an entry lost (a worker died before it was written, or it expired): filled again alone
    forget_compared_counts(older, last)
    assert services.run_compare_counts_ahead(run_id=last.pk) == 1
    assert compared_counts_known(last, older) == compared_counts(last, older)
    # a run that is not done (resumed meanwhile) is not counted; no bound, nothing
    Run.objects.filter(pk=newer.pk).update(status=Run.Status.RUNNING)
    assert services.run_compare_counts_ahead(run_id=newer.pk) == 0
    settings.COMPARE_COUNTS_AHEAD = 0
    flush_test_broker()
    assert services.run_compare_counts_ahead(run_id=last.pk) == 0
    flush_test_broker()


@pytest.mark.django_db
def test_the_kept_counts_of_two_runs_serve_both_orders(tmp_path: Path) -> None:
    flush_test_broker()
    benchmark = make_counting_benchmark(tmp_path, 6)
    older, last = import_run(benchmark, tmp_path, "older"), import_run(benchmark, tmp_path, "last")
    flush_test_broker()
    # counted as the later run against the earlier: read back as either
    assert compared_counts(last, older)["only_a"] == 2
    assert compared_counts_known(last, older) == {
        "shared": 4,
        "agree": 3,
        "disagree": 1,
        "only_a": 2,
        "only_b": 0,
    }
    assert compared_counts_known(older, last) == {
        "shared": 4,
        "agree": 3,
        "disagree": 1,
        "only_a": 0,
        "only_b": 2,
    }
    flush_test_broker()
