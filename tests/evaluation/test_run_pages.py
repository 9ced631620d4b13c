"""The run pages of issue 17: launching a run and a judge job from pages (the admin's forms and
services), the prediction rows that settle while the page is open, and two runs compared item
by item."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from benchmarks.models import Benchmark
from evaluation import judging, services
from evaluation.models import Endpoint, JudgeJob, Prediction, Run
from evaluation.selectors import input_summary, runs_compared
from tests.evaluation.conftest import (
    execute_job,
    execute_run,
    make_counting_benchmark,
    make_endpoint,
)
from tests.factories import make_benchmark, make_researcher, make_sample
from tests.fake_openai import FakeOpenAI

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("broker")]


@pytest.fixture
def benchmark(tmp_path: Path) -> Benchmark:
    return make_counting_benchmark(tmp_path, 6)


@pytest.fixture
def researcher(client: Client) -> Client:
    client.force_login(make_researcher(username="ada"))
    return client


def test_the_launch_page_offers_the_benchmarks_tasks_and_splits(
    researcher: Client, benchmark: Benchmark
) -> None:
    make_endpoint("http://127.0.0.1:9/v1")
    page = researcher.get("/runs/new/").content.decode()
    assert 'name="benchmark"' in page and 'hx-get="/runs/new/"' in page
    # a benchmark picked: its suite's tasks only, its splits to choose from
    other = make_benchmark(name="Elsewhere", suite="metatool")
    html = researcher.get("/runs/new/", {"benchmark": benchmark.pk}).content.decode()
    assert 'value="generic:answer"' in html
    assert f'value="{other.suite}:' not in html
    assert '<option value="default">default</option>' in html
    # htmx redraws the form alone, keeping what was typed
    part = researcher.get(
        "/runs/new/", {"benchmark": benchmark.pk, "name": "kept"}, headers={"HX-Request": "true"}
    ).content.decode()
    assert part.lstrip().startswith('<form id="launch-form"')
    assert 'value="kept"' in part


def test_a_run_launched_from_the_page_is_what_run_launch_makes(
    researcher: Client, benchmark: Benchmark
) -> None:
    endpoint = make_endpoint("http://127.0.0.1:9/v1")
    response = researcher.post(
        "/runs/new/",
        {
            "name": "from the page",
            "benchmark": benchmark.pk,
            "task": "generic:answer",
            "split": "default",
            "endpoint": endpoint.pk,
            "tool_mode": "text",
            "shots": 0,
            "item_limit": 4,
            "trials": 2,
            "params": '{"temperature": 0}',
            "options": "",
            "seed": 7,
            "budget": "1000",
        },
    )
    run = Run.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/runs/{run.pk}/"
    assert (run.name, run.task, run.split, run.seed, run.item_limit) == (
        "from the page",
        "answer",
        "default",
        7,
        4,
    )
    assert run.launch_options == {"trials": 2}
    assert run.params["temperature"] == 0
    assert run.budget == 1000
    assert run.created_by is not None and run.created_by.username == "ada"
    assert run.predictions.count() == 4 * 2
    assert run.predictions.filter(status=Prediction.Status.PENDING).count() == 8


def test_a_refused_launch_says_why_beside_the_field_and_makes_nothing(
    researcher: Client, benchmark: Benchmark
) -> None:
    endpoint = make_endpoint("http://127.0.0.1:9/v1", status=Endpoint.Status.DOWN)
    base = {
        "benchmark": benchmark.pk,
        "task": "generic:answer",
        "endpoint": endpoint.pk,
        "shots": 0,
        "seed": 0,
    }
    # the service refuses: the endpoint is down
    response = researcher.post("/runs/new/", base)
    assert response.status_code == 400
    assert "launch when it is ready" in response.content.decode()
    # a local model still building: refused at once too (the page must not block), with how
    # far the build is and that the run can be launched when it is ready
    Endpoint.objects.filter(pk=endpoint.pk).update(
        status=Endpoint.Status.BUILDING, status_detail="compiling llama.cpp: 62% (200/325 steps)"
    )
    response = researcher.post("/runs/new/", base)
    assert response.status_code == 400
    assert "is still building (compiling llama.cpp: 62% (200/325 steps)); the run can be " in (
        response.content.decode()
    )
    assert not Run.objects.exists()
    # the form refuses: not JSON, a trial count out of range, a task of another suite
    response = researcher.post(
        "/runs/new/", {**base, "params": "{temperature", "trials": 0, "task": "metatool:similar"}
    )
    html = response.content.decode()
    assert response.status_code == 400
    assert "not valid JSON" in html
    assert "greater than or equal to 1" in html
    assert "Select a valid choice" in html or "pick one of its tasks" in html
    # a native run of a task without a native form: the service's words
    endpoint.status = Endpoint.Status.READY
    endpoint.save()
    response = researcher.post("/runs/new/", {**base, "tool_mode": "native"})
    assert response.status_code == 400
    assert "native" in response.content.decode()
    assert not Run.objects.exists()


def test_the_admin_launches_through_the_same_form(researcher: Client, benchmark: Benchmark) -> None:
    endpoint = make_endpoint("http://127.0.0.1:9/v1")
    response = researcher.post(
        "/admin/evaluation/run/add/",
        {
            "benchmark": benchmark.pk,
            "task": "generic:answer",
            "endpoint": endpoint.pk,
            "shots": 0,
            "seed": 0,
            "trials": 3,
            "item_limit": 2,
            "split": "default",
        },
    )
    run = Run.objects.get()
    assert response.status_code == 302
    assert run.trials == 3 and run.predictions.count() == 6


@pytest.fixture
def two_runs(benchmark: Benchmark, fake_server: FakeOpenAI) -> tuple[Run, Run]:
    """Two finished runs of one task: the first right on even numbers, the second always 0."""
    first = services.run_launch(
        benchmark=benchmark,
        task="answer",
        split="default",
        endpoint=make_endpoint(fake_server.base_url),
    )
    execute_run(first)
    with FakeOpenAI(responder=lambda request: "Answer: 0") as other:
        endpoint = make_endpoint(other.base_url, name="other", model="other-model")
        second = services.run_launch(
            benchmark=benchmark, task="answer", split="default", endpoint=endpoint
        )
        execute_run(second)
    return first, second


@pytest.mark.django_db(transaction=True)
def test_a_judge_job_launched_from_the_page(researcher: Client, two_runs: tuple[Run, Run]) -> None:
    run_a, run_b = two_runs
    # a judge that always prefers the answer shown first: every item a tie
    with FakeOpenAI(responder=lambda request: '{"better": "1", "reason": "first"}') as server:
        endpoint = make_endpoint(server.base_url, name="judge", model="judge-model")
        judge = judging.judge_create(
            name="j", template="generic.pairwise", endpoint=endpoint, answer_mode="text"
        )
        page = researcher.get("/judging/new/", {"run": run_a.pk}).content.decode()
        assert f'<option value="{run_a.pk}" selected>' in page
        # the service refuses a pairwise judge without a second run
        response = researcher.post(
            "/judging/new/", {"judge": judge.pk, "run": run_a.pk, "repeats": 1}
        )
        assert response.status_code == 400
        assert "compares two runs" in response.content.decode()
        response = researcher.post(
            "/judging/new/",
            {"judge": judge.pk, "run": run_a.pk, "against": run_b.pk, "repeats": 2},
        )
        job = JudgeJob.objects.get()
        assert response["Location"] == f"/judging/{job.pk}/"
        assert (job.run_id, job.against_id, job.repeats) == (run_a.pk, run_b.pk, 2)
        assert job.judgments.count() == 6 * 2 * 2
        execute_job(job)

    # its page: counts as whole numbers without a spread, shares with two decimals
    html = researcher.get(f"/judging/{job.pk}/").content.decode()
    assert metric_cells(html, "items") == ["6", ""]
    assert metric_cells(html, "repeats") == ["2", ""]
    assert metric_cells(html, "tie") == ["100.00", "0.00"]
    assert metric_cells(html, "win") == ["0.00", "0.00"]


def metric_cells(html: str, name: str) -> list[str]:
    row = re.search(
        rf"<tr><th scope=\"row\"[^>]*><code>{re.escape(name)}</code>(.*?)</tr>", html, re.S
    )
    assert row, f"no row for {name}"
    return [
        re.sub(r"<[^>]+>", "", cell).strip()
        for cell in re.findall(r"<td[^>]*>(.*?)</td>", row[1], re.S)
    ]


# --- rows that settle while the page is open ----------------------------------------------------


def watch_of(html: str) -> str:
    found = re.search(r'id="rows-poll"[^>]*hx-get="[^"]*watch=([^"&]*)', html)
    return found[1].replace("%2C", ",") if found else ""


def test_a_running_runs_rows_are_swapped_in_as_they_settle(
    researcher: Client, benchmark: Benchmark
) -> None:
    endpoint = make_endpoint("http://127.0.0.1:9/v1")
    run = services.run_launch(
        benchmark=benchmark, task="answer", split="default", endpoint=endpoint
    )
    first, second, *rest = run.predictions.order_by("position")
    html = researcher.get(f"/runs/{run.pk}/").content.decode()
    # every row of the page is watched, with the status it shows
    watched = watch_of(html)
    assert watched.split(",") == [f"{p.pk}.pending" for p in (first, second, *rest)]
    assert f'<tr id="prediction-{first.pk}"' in html

    # one item settles, one is taken by a worker
    Prediction.objects.filter(pk=first.pk).update(
        status="done", output="Answer: 1", answer=1, scores={"accuracy": 100.0}
    )
    Prediction.objects.filter(pk=second.pk).update(status="running")
    part = researcher.get(f"/runs/{run.pk}/", {"part": "rows", "watch": watched}).content.decode()
    swapped = re.findall(r'<tr id="prediction-(\d+)" hx-swap-oob="true">', part)
    assert swapped == [str(first.pk), str(second.pk)]
    assert part.count("<template>") == 2
    assert "Answer: 1" in part
    # the next poll watches what is still unsettled, the one taken as claimed (not yet sent)
    assert watch_of(part).split(",") == [f"{second.pk}.claimed"] + [f"{p.pk}.pending" for p in rest]
    assert 'id="rows-poll" hidden hx-swap-oob="true"' in part

    # nothing moved: nothing swapped, the same watch
    again = researcher.get(
        f"/runs/{run.pk}/", {"part": "rows", "watch": watch_of(part)}
    ).content.decode()
    assert "<tr" not in again and watch_of(again) == watch_of(part)

    # a lane sends the claimed one: it is swapped in as running
    Prediction.objects.filter(pk=second.pk).update(started_at=timezone.now())
    sent = researcher.get(
        f"/runs/{run.pk}/", {"part": "rows", "watch": watch_of(part)}
    ).content.decode()
    assert re.findall(r'<tr id="prediction-(\d+)" hx-swap-oob="true">', sent) == [str(second.pk)]
    assert watch_of(sent).split(",")[0] == f"{second.pk}.running"

    # the run ends: its last rows come in and the polling stops
    run.predictions.update(status="done")
    Run.objects.filter(pk=run.pk).update(status=Run.Status.DONE)
    last = researcher.get(
        f"/runs/{run.pk}/", {"part": "rows", "watch": watch_of(part)}
    ).content.decode()
    assert len(re.findall(r"<tr id=", last)) == 5
    assert "hx-get" not in last
    assert (
        "hx-get"
        not in re.search(
            r'<div id="rows-poll"[^>]*>', researcher.get(f"/runs/{run.pk}/").content.decode()
        )[0]
    )


def test_the_rows_poll_reads_only_the_rows(
    researcher: Client, benchmark: Benchmark, django_assert_max_num_queries: Any
) -> None:
    endpoint = make_endpoint("http://127.0.0.1:9/v1")
    run = services.run_launch(
        benchmark=benchmark, task="answer", split="default", endpoint=endpoint
    )
    watch = ",".join(f"{p.pk}.pending" for p in run.predictions.all())
    researcher.get(f"/runs/{run.pk}/", {"part": "rows", "watch": watch})  # a first request
    Prediction.objects.filter(run=run, position__lt=3).update(status="done", output="Answer: 9")
    # the session, the user, the run, the watched rows, their samples (by primary key)
    with django_assert_max_num_queries(7):
        part = researcher.get(f"/runs/{run.pk}/", {"part": "rows", "watch": watch})
    assert part.content.decode().count("hx-swap-oob") == 3 + 1


@pytest.mark.django_db(transaction=True)
def test_a_running_judge_jobs_rows_are_swapped_in_as_they_settle(
    researcher: Client, two_runs: tuple[Run, Run]
) -> None:
    run_a, run_b = two_runs
    endpoint = make_endpoint("http://127.0.0.1:9/v1", name="judge", model="judge-model")
    judge = judging.judge_create(name="j", template="generic.pairwise", endpoint=endpoint)
    job = judging.judge_launch(judge=judge, run=run_a, against=run_b, repeats=1)
    html = researcher.get(f"/judging/{job.pk}/").content.decode()
    watched = watch_of(html)
    assert len(watched.split(",")) == 12
    first = job.judgments.order_by("position").first()
    assert first is not None
    type(first).objects.filter(pk=first.pk).update(status="done", label="A", value=1.0)
    part = researcher.get(
        f"/judging/{job.pk}/", {"part": "rows", "watch": watched}
    ).content.decode()
    assert re.findall(r'<tr id="judgment-(\d+)" hx-swap-oob="true">', part) == [str(first.pk)]
    assert "<strong>A</strong>" in part
    assert len(watch_of(part).split(",")) == 11
    # a judgment a worker holds reads "Claimed" until a lane sends it, then "Running"
    second, third = job.judgments.order_by("position")[1:3]
    type(second).objects.filter(pk__in=[second.pk, third.pk]).update(status="running")
    type(third).objects.filter(pk=third.pk).update(started_at=timezone.now())
    html = researcher.get(f"/judging/{job.pk}/").content.decode()
    shown = dict(
        re.findall(r'<tr id="judgment-(\d+)".*?class="status status-([a-z]+)"', html, re.S)
    )
    assert (shown[str(second.pk)], shown[str(third.pk)]) == ("claimed", "running")
    assert f"{second.pk}.claimed" in watch_of(html) and f"{third.pk}.running" in watch_of(html)


def test_a_watch_list_that_is_not_one_is_ignored(
    researcher: Client, benchmark: Benchmark, tmp_path: Path
) -> None:
    endpoint = make_endpoint("http://127.0.0.1:9/v1")
    run = services.run_launch(
        benchmark=benchmark, task="answer", split="default", endpoint=endpoint
    )
    other = make_counting_benchmark(tmp_path, 2, name="Other")
    stranger = services.run_launch(
        benchmark=other, task="answer", split="default", endpoint=endpoint
    ).predictions.get(position=0)
    # another run's row is not this page's to show
    for watch in ("", "x", "1.done", ",,,", "99999999.pending", f"{stranger.pk}.pending"):
        response = researcher.get(f"/runs/{run.pk}/", {"part": "rows", "watch": watch})
        assert response.status_code == 200
        assert "<tr" not in response.content.decode()


# --- two runs side by side ----------------------------------------------------------------------


def test_two_items_disagree_on_another_answer_or_another_score() -> None:
    benchmark = make_benchmark(name="Pairs", suite="generic")
    samples = [make_sample(benchmark=benchmark, split="s") for _ in range(7)]
    # (answer, scores) of A, then of B, per sample
    items = [
        ({"calls": ["a"]}, {"accuracy": 100.0}, {"calls": ["a"]}, {"accuracy": 100.0}),  # agree
        ({"calls": ["a"]}, {"accuracy": 100.0}, {"calls": ["b"]}, {"accuracy": 100.0}),  # answer
        ({"calls": ["a"]}, {"accuracy": 100.0}, {"calls": ["a"]}, {"accuracy": 0.0}),  # score
        ({"calls": ["a"]}, {"accuracy": 100.0}, None, {}),  # no answer
        (None, {}, None, {}),  # neither answered: agree
        (1, {"accuracy": 1}, 1.0, {"accuracy": 1.0}),  # numbers by value: agree
        ({"x": 1, "y": 2}, {}, {"y": 2, "x": 1}, {}),  # keys in another order: agree
    ]
    a, b = (Run.objects.create(benchmark=benchmark, task="answer", name=n) for n in "ab")
    for position, (sample, (ans_a, sc_a, ans_b, sc_b)) in enumerate(
        zip(samples, items, strict=True)
    ):
        Prediction.objects.create(
            run=a, sample=sample, position=position, answer=ans_a, scores=sc_a
        )
        Prediction.objects.create(
            run=b, sample=sample, position=position, answer=ans_b, scores=sc_b
        )
    # each run answered a sample the other did not
    extra_a, extra_b = make_sample(benchmark=benchmark, split="s"), make_sample(benchmark=benchmark)
    Prediction.objects.create(run=a, sample=extra_a, position=7, answer=1)
    Prediction.objects.create(run=b, sample=extra_b, position=7, answer=1)
    compared = runs_compared(a, b)
    assert [pair["differs"] for pair in compared["pairs"]] == [
        False,
        True,
        True,
        True,
        False,
        False,
        False,
    ]
    assert (compared["shared"], compared["agree"], compared["disagree"]) == (7, 4, 3)
    assert (compared["only_a"], compared["only_b"]) == (1, 1)


def test_input_summary_is_the_question_in_a_line() -> None:
    assert (
        input_summary({"query": "What  comes\nafter 3?", "tools": ["x"]}) == "What comes after 3?"
    )
    assert input_summary({"dialogue": [{"content": "hi"}, {"content": "book a room"}]}) == (
        "book a room"
    )
    assert input_summary({"n": 3}) == '{"n": 3}'
    assert input_summary("a" * 400, limit=10) == "a" * 9 + "…"


@pytest.mark.django_db(transaction=True)
def test_two_runs_side_by_side_with_their_disagreements(
    researcher: Client, two_runs: tuple[Run, Run]
) -> None:
    run_a, run_b = two_runs
    html = researcher.get("/runs/compare/", {"a": run_a.pk, "b": run_b.pk}).content.decode()
    # run A answers 1, 2, 3... rightly on even numbers (0, 2, 4 -> right; 1, 3, 5 -> wrong);
    # run B always 0: every answer differs
    assert compare_counts(researcher, html) == "6 shared items: 0 agree 6 disagree"
    assert html.count('class="differs"') == 6
    assert "What number comes after 0?" in html
    assert f'href="/campaigns/new/?kind=pairwise&amp;runs={run_a.pk},{run_b.pk}"' in html
    # the same outputs in B as in A: all agree
    for a, b in zip(
        run_a.predictions.order_by("position"), run_b.predictions.order_by("position"), strict=True
    ):
        if a.position < 2:
            Prediction.objects.filter(pk=b.pk).update(answer=a.answer, scores=a.scores)
    # (what changes a done run's items, its resume, moves its updated_at)
    run_b.save(update_fields=["updated_at"])
    html = researcher.get(
        "/runs/compare/", {"a": run_a.pk, "b": run_b.pk, "show": "disagree"}
    ).content.decode()
    assert html.count('class="differs"') == 4 and "<td><code>default/" in html
    assert compare_counts(researcher, html) == "6 shared items: 2 agree 4 disagree"
    html = researcher.get(
        "/runs/compare/", {"a": run_a.pk, "b": run_b.pk, "show": "agree"}
    ).content.decode()
    assert html.count("<tr>") == 2 + 1  # two rows and the header


def compare_counts(client: Client, html: str) -> str:
    """The counts a comparison shows, as text: on the page, or from the fragment the page asks
    for (hx-get) when they were not known."""
    counts = re.search(
        r'<p class="counts compare-counts" id="compare-counts"([^>]*)>(.*?)</p>', html, re.S
    )
    asked = re.search(r'hx-get="([^"]+)"', counts[1])
    if asked:
        html = client.get(asked[1].replace("&amp;", "&")).content.decode()
        counts = re.search(r'id="compare-counts">(.*?)</p>', html, re.S)
        return " ".join(re.sub(r"<[^>]+>", "", counts[1]).split())
    return " ".join(re.sub(r"<[^>]+>", "", counts[2]).split())


def compare_runs(benchmark: Benchmark, items: int, status: str) -> list[Run]:
    """Two runs of `items` items of `benchmark`'s answer task: A answers i, B answers 0 (they
    agree on the first item only)."""
    samples = [
        make_sample(benchmark=benchmark, split="s", input={"query": f"q{i}"}) for i in range(items)
    ]
    runs = []
    for name in ("a", "b"):
        run = Run.objects.create(benchmark=benchmark, task="answer", name=name, status=status)
        Prediction.objects.bulk_create(
            Prediction(run=run, sample=s, position=i, status="done", answer=i if name == "a" else 0)
            for i, s in enumerate(samples)
        )
        runs.append(run)
    return runs


def test_two_done_runs_never_counted_show_their_pairs_at_once_and_their_counts_apart(
    researcher: Client,
) -> None:
    a, b = compare_runs(make_benchmark(name="Uncounted", suite="generic"), 120, "done")
    query = {"a": a.pk, "b": b.pk, "show": "disagree"}
    # the first view reads one page of pairs (and one more), never every item of both runs
    with CaptureQueriesContext(connection) as seen:
        html = researcher.get("/runs/compare/", {**query, "page": 2}).content.decode()
    assert not [q for q in seen.captured_queries if "FULL JOIN" in q["sql"]]
    assert 'hx-get="/runs/compare/counts/?a=' in html and "Counting" in html
    # its page is right without the count: disagreements 51 to 100 of 119, and a next one
    assert html.count('class="differs"') == 50 and ">q51<" in html and ">q101<" not in html
    assert "page 2<" in html and "page=3" in html and "page=1" in html
    last = researcher.get("/runs/compare/", {**query, "page": 3}).content.decode()
    assert last.count('class="differs"') == 19 and "page=4" not in last
    past = researcher.get("/runs/compare/", {**query, "page": 9}).content.decode()
    assert "No item here." in past
    # the fragment counts them, once; the pages that follow show them without counting again
    assert compare_counts(researcher, html) == "120 shared items: 1 agree 119 disagree"
    with CaptureQueriesContext(connection) as seen:
        html = researcher.get("/runs/compare/", query).content.decode()
    assert not [q for q in seen.captured_queries if "FULL JOIN" in q["sql"]]
    assert compare_counts(researcher, html) == "120 shared items: 1 agree 119 disagree"
    assert "page 1 of 3" in html and "hx-get" not in html.split('id="compare-counts"')[1][:20]


def test_the_counts_of_runs_that_are_not_both_done_are_counted_at_each_view(
    researcher: Client,
) -> None:
    a, b = compare_runs(make_benchmark(name="Going", suite="generic"), 3, "running")
    html = researcher.get("/runs/compare/", {"a": a.pk, "b": b.pk}).content.decode()
    assert compare_counts(researcher, html) == "3 shared items: 1 agree 2 disagree"
    assert "hx-get" not in html.split('id="compare-counts"')[1][:20]
    # an item settles: the next view counts it, the run's updated_at unchanged
    Prediction.objects.filter(run=b, position=1).update(answer=1)
    html = researcher.get("/runs/compare/", {"a": a.pk, "b": b.pk}).content.decode()
    assert compare_counts(researcher, html) == "3 shared items: 2 agree 1 disagree"
    # done now (its finish moves updated_at): counted once more, then kept
    Run.objects.filter(pk__in=[a.pk, b.pk]).update(status="done", updated_at=timezone.now())
    a.refresh_from_db()
    html = researcher.get("/runs/compare/", {"a": a.pk, "b": b.pk}).content.decode()
    assert compare_counts(researcher, html) == "3 shared items: 2 agree 1 disagree"


def test_compare_paginates(
    researcher: Client, tmp_path: Path, django_assert_max_num_queries: Any
) -> None:
    benchmark = make_benchmark(name="Many", suite="generic")
    samples = [
        make_sample(benchmark=benchmark, split="s", input={"query": f"q{i}"}) for i in range(120)
    ]
    runs = []
    for name in ("a", "b"):
        run = Run.objects.create(benchmark=benchmark, task="answer", name=name, status="done")
        Prediction.objects.bulk_create(
            Prediction(run=run, sample=s, position=i, status="done", answer=i if name == "a" else 0)
            for i, s in enumerate(samples)
        )
        runs.append(run)
    query = {"a": runs[0].pk, "b": runs[1].pk, "show": "disagree"}
    compare_counts(researcher, researcher.get("/runs/compare/", query).content.decode())
    # the session, the user, the two runs, the page's pairs, the page's predictions and
    # samples (the counts are kept: two done runs counted before)
    with django_assert_max_num_queries(8):
        first = researcher.get("/runs/compare/", query).content.decode()
    # (">q0<", not "q0": the page's random CSRF token may hold the letters "q0")
    assert "page 1 of 3" in first and ">q0<" not in first and ">q1<" in first
    assert f"?a={runs[0].pk}&amp;b={runs[1].pk}&amp;show=disagree&amp;page=2" in first
    third = researcher.get("/runs/compare/", {**query, "page": 3}).content.decode()
    assert third.count('class="differs"') == 119 - 100


@pytest.mark.parametrize(
    ("query", "status", "words"),
    [
        ({"a": "x", "b": "1"}, 400, "name two runs to compare"),
        ({"a": "999999", "b": "999998"}, 404, "there is no run #999999"),
    ],
)
def test_compare_refuses_what_is_not_two_runs(
    researcher: Client, query: dict[str, Any], status: int, words: str
) -> None:
    response = researcher.get("/runs/compare/", query)
    assert response.status_code == status
    assert words in response.content.decode()


@pytest.mark.django_db(transaction=True)
def test_compare_without_runs_offers_the_runs_it_can_compare(
    researcher: Client, two_runs: tuple[Run, Run], benchmark: Benchmark
) -> None:
    run_a, run_b = two_runs
    lonely = services.run_launch(
        benchmark=benchmark, task="answer", split="default", endpoint=run_a.endpoint
    )
    Run.objects.filter(pk=lonely.pk).update(task="alone")
    # when the comparison is opened with no run named
    response = researcher.get("/runs/compare/")
    # then a picker per task that has two runs or more, newest first, the two newest chosen
    assert response.status_code == 200
    page = response.content.decode()
    forms = re.findall(r'<form method="get" action="/runs/compare/"[^>]*>(.*?)</form>', page, re.S)
    assert len(forms) == 1, "one task has two runs; the other has one and cannot be compared"
    assert f"{benchmark.name} · answer" in page
    assert re.findall(r'<select name="(\w)">', forms[0]) == ["a", "b"]
    assert re.search(rf'name="a"><option value="{run_b.pk}" selected>', forms[0])
    assert re.search(rf'<option value="{run_a.pk}" selected>', forms[0].split('name="b"')[1])
    assert f'value="{lonely.pk}"' not in forms[0]
    # with one run named, the picker of its task, that run chosen as A
    page = researcher.get("/runs/compare/", {"a": run_a.pk}).content.decode()
    [form] = re.findall(r'<form method="get" action="/runs/compare/"[^>]*>(.*?)</form>', page, re.S)
    side_a, side_b = form.split('name="b"')
    assert f'<option value="{run_a.pk}" selected>' in side_a
    assert f'<option value="{run_b.pk}" selected>' in side_b


def test_compare_without_runs_says_when_nothing_can_be_compared(researcher: Client) -> None:
    response = researcher.get("/runs/compare/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "No task has two runs yet" in page
    assert 'href="/runs/new/"' in page


@pytest.mark.django_db(transaction=True)
def test_compare_refuses_two_runs_of_different_tasks(
    researcher: Client, two_runs: tuple[Run, Run]
) -> None:
    run_a, run_b = two_runs
    Run.objects.filter(pk=run_b.pk).update(task="other")
    response = researcher.get("/runs/compare/", {"a": run_a.pk, "b": run_b.pk})
    assert response.status_code == 400
    assert "compare two runs of one task" in response.content.decode()
    response = researcher.get("/runs/compare/", {"a": run_a.pk, "b": run_a.pk})
    assert response.status_code == 400
    assert "with another run" in response.content.decode()


@pytest.mark.django_db(transaction=True)
def test_the_leaderboard_and_a_run_page_lead_to_the_comparison(
    researcher: Client, two_runs: tuple[Run, Run]
) -> None:
    run_a, run_b = two_runs
    board = researcher.get(f"/leaderboard/{run_a.benchmark_id}/answer/").content.decode()
    form = re.search(r'<form method="get" action="/runs/compare/"[^>]*>(.*?)</form>', board, re.S)
    assert form, "no way to pick two runs on the leaderboard"
    assert re.findall(r'<select name="(\w)">', form[1]) == ["a", "b"]
    # the best run is A, the next B
    assert re.search(rf'name="a"><option value="{run_a.pk}" selected>', form[1])
    assert re.search(rf'<option value="{run_b.pk}" selected>', form[1].split('name="b"')[1])
    page = researcher.get(f"/runs/{run_a.pk}/").content.decode()
    assert f'<input type="hidden" name="a" value="{run_a.pk}">' in page
    assert f'<option value="{run_b.pk}">#{run_b.pk}' in page
    assert f'href="/judging/new/?run={run_a.pk}"' in page


def test_the_polled_panel_brings_the_buttons_the_work_now_allows(
    researcher: Client, benchmark: Benchmark
) -> None:
    endpoint = make_endpoint("http://127.0.0.1:9/v1")
    run = services.run_launch(
        benchmark=benchmark, task="answer", split="default", endpoint=endpoint
    )
    hx = {"HX-Request": "true"}
    part = researcher.get(f"/runs/{run.pk}/", {"part": "progress"}, headers=hx).content.decode()
    controls = re.search(r'<span id="work-controls"[^>]*>(.*?)</span>', part, re.S)
    assert controls and 'hx-swap-oob="true"' in controls[0]
    assert "Cancel run" in controls[1]
    # the run finished meanwhile: no Cancel any more
    run.predictions.update(status="done")
    Run.objects.filter(pk=run.pk).update(status=Run.Status.DONE)
    part = researcher.get(f"/runs/{run.pk}/", {"part": "progress"}, headers=hx).content.decode()
    controls = re.search(r'<span id="work-controls"[^>]*>(.*?)</span>', part, re.S)
    assert controls and "Cancel" not in controls[1]


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ('{"stop": "a\\u0000b"}', "NUL"),
        ('{"temperature": NaN}', "NaN"),
        ("[" * 5000 + "]" * 5000, "nested more than"),
        ('["a list"]', "expected a JSON object"),
    ],
)
def test_parameters_no_database_could_store_are_refused_on_the_form(
    researcher: Client, benchmark: Benchmark, params: str, words: str
) -> None:
    endpoint = make_endpoint("http://127.0.0.1:9/v1")
    response = researcher.post(
        "/runs/new/",
        {
            "benchmark": benchmark.pk,
            "task": "generic:answer",
            "split": "default",
            "endpoint": endpoint.pk,
            "shots": 0,
            "seed": 0,
            "params": params,
        },
    )
    html = response.content.decode()
    assert response.status_code == 400
    assert words in html
    assert not Run.objects.exists()


HUGE = "9" * 30


def test_odd_query_values_on_the_new_pages_are_never_a_server_error(
    researcher: Client, benchmark: Benchmark
) -> None:
    run = services.run_launch(
        benchmark=benchmark,
        task="answer",
        split="default",
        endpoint=make_endpoint("http://127.0.0.1:9/v1"),
    )
    for path, query in [
        ("/runs/new/", {"benchmark": HUGE}),
        ("/runs/new/", {"benchmark": "\x00", "split": "\x1f"}),
        ("/judging/new/", {"run": HUGE, "against": "\x00"}),
        ("/runs/compare/", {"a": HUGE, "b": run.pk}),
        ("/runs/compare/", {"a": run.pk, "b": "1\x00"}),
        ("/runs/compare/", {"a": run.pk, "b": run.pk, "show": "\x00", "page": HUGE}),
        (f"/runs/{run.pk}/", {"part": "rows", "watch": f"{HUGE}.pending,\x00.running"}),
        (f"/runs/{run.pk}/", {"part": "rows", "watch": "1." + "x" * 100_000}),
        ("/", {"part": "\x00"}),
    ]:
        response = researcher.get(path, query)
        assert response.status_code < 500, (path, query, response.status_code)
    response = researcher.post("/runs/new/", {"benchmark": HUGE, "endpoint": HUGE})
    assert response.status_code == 400


def test_compared_answers_show_calls_as_calls_and_escape_model_text(researcher: Client) -> None:
    benchmark = make_benchmark(name="Calls", suite="generic")
    sample = make_sample(benchmark=benchmark, split="s", input={"query": "<b>weather</b>?"})
    answers = {
        "a": {"calls": [{"name": "weather", "arguments": {"city": "Oban"}}]},
        "b": "<script>alert(1)</script>",
    }
    runs = {}
    for side, answer in answers.items():
        runs[side] = Run.objects.create(benchmark=benchmark, task="answer", status="done")
        Prediction.objects.create(
            run=runs[side], sample=sample, position=0, status="done", answer=answer, parsed=True
        )
    html = researcher.get("/runs/compare/", {"a": runs["a"].pk, "b": runs["b"].pk}).content.decode()
    assert '<code class="call-text">weather(' in html and "Oban" in html
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html
    assert "<b>weather</b>" not in html and "&lt;b&gt;weather&lt;/b&gt;?" in html
