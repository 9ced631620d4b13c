"""The evaluation commands (launch_run, import_predictions), resuming a run's failed items, and
the migrations being up to date."""

from __future__ import annotations

import contextlib
import json
import signal
import threading
import time
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from benchmarks.models import Benchmark, Sample
from benchmarks.services import benchmark_import
from evaluation import lifecycle, services
from evaluation.models import Endpoint, Prediction, Run
from tests.evaluation.conftest import counting_answer, make_counting_benchmark, make_endpoint
from tests.fake_openai import FakeOpenAI
from tests.workers import celery_worker

pytestmark = pytest.mark.usefixtures("broker")


def command(name: str, *args: str) -> str:
    out = StringIO()
    call_command(name, *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def launch(*args: str) -> str:
    return command(
        "launch_run", "--benchmark", "Counting", "--task", "answer", "--endpoint", "fake", *args
    )


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


@contextlib.contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fail instead of hanging when a worker never finishes the run."""

    def expire(signum: int, frame: FrameType | None) -> None:
        raise TimeoutError(f"no result within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# --- launch_run -------------------------------------------------------------------------------


@pytest.mark.django_db
def test_launch_run_prints_the_run_it_queued(tmp_path: Path) -> None:
    make_counting_benchmark(tmp_path, 8)
    make_endpoint("http://127.0.0.1:9/v1", default_params={"temperature": 0})
    # when
    printed = launch("--split", "default", "--limit", "5", "--param", "max_tokens=16", "--json")
    # then
    run = Run.objects.get()
    assert json.loads(printed) == {"run": run.pk, "items": 5, "metrics": {}}
    assert run.status == Run.Status.RUNNING
    assert run.params == {"temperature": 0, "max_tokens": 16}
    assert run.predictions.filter(status=Prediction.Status.PENDING).count() == 5


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_launch_run_waits_for_the_workers_and_prints_the_metrics(
    tmp_path: Path, fake_server: FakeOpenAI
) -> None:
    make_counting_benchmark(tmp_path, 20)
    make_endpoint(fake_server.base_url)
    with celery_worker(tmp_path, concurrency=1), deadline(120):
        printed = launch("--split", "default", "--wait", "--json")
    summary = json.loads(printed)
    run = Run.objects.get()
    assert summary == {"run": run.pk, "items": 20, "metrics": {"accuracy": 50.0, "unparsed": 0.0}}
    assert run.status == Run.Status.DONE
    assert fake_server.total == 20


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_launch_run_waits_and_reports_a_run_the_workers_cannot_start(
    tmp_path: Path, fake_server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    # given an endpoint whose key variable (one the operator lists) the workers do not have
    monkeypatch.delenv("H6_UNSET_API_KEY", raising=False)
    settings.ENDPOINT_KEY_VARIABLES = ["H6_UNSET_API_KEY"]
    make_counting_benchmark(tmp_path, 4)
    make_endpoint(fake_server.base_url, api_key_env="H6_UNSET_API_KEY")
    listed = {"ENDPOINT_KEY_VARIABLES": "H6_UNSET_API_KEY"}
    with celery_worker(tmp_path, concurrency=1, **listed), deadline(120):
        printed = launch("--split", "default", "--wait")
    run = Run.objects.get()
    status_line, error_line = printed.splitlines()
    assert status_line == f"Run {run.pk} failed: {{}}"
    assert error_line.startswith(
        "error: the environment variable H6_UNSET_API_KEY (the key of endpoint 'fake') is not set "
        "on worker "
    )
    assert fake_server.total == 0


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--endpoint", "nope"], "no endpoint 'nope'; endpoints: fake"),
        (
            ["--task", "nonsense"],
            "suite 'generic' has no task 'nonsense'; tasks: answer, tool_calls",
        ),
        (
            ["--split", "nowhere"],
            "Counting has no samples in split(s) nowhere (its splits: default)",
        ),
        ([], "task 'answer' has no default split; choose one"),
        (["--benchmark", "Missing"], "no benchmark 'Missing'; benchmarks: Counting"),
        (["--split", "default", "--limit", "0"], "the item limit must be at least 1"),
        (["--split", "default", "--param", "temperature"], "--param 'temperature': expected"),
    ],
)
def test_launch_run_says_what_is_wrong(tmp_path: Path, args: list[str], message: str) -> None:
    make_counting_benchmark(tmp_path, 3)
    make_endpoint("http://127.0.0.1:9/v1")
    with pytest.raises(CommandError) as info:
        launch(*args)
    assert message in str(info.value)
    assert not Run.objects.exists()


@pytest.mark.django_db
def test_launch_run_refuses_an_endpoint_that_is_not_ready(tmp_path: Path) -> None:
    make_counting_benchmark(tmp_path, 3)
    make_endpoint("http://127.0.0.1:9/v1", status=Endpoint.Status.DOWN, status_detail="stopped")
    with pytest.raises(CommandError) as info:
        launch("--split", "default")
    assert str(info.value) == "endpoint 'fake' is down (stopped); launch when it is ready"
    assert not Run.objects.exists()


def launch_capturing(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(
        "launch_run",
        *("--benchmark", "Counting", "--task", "answer", "--endpoint", "fake", *args),
        stdout=out,
        stderr=err,
    )
    return out.getvalue(), err.getvalue()


@pytest.mark.django_db(transaction=True)
def test_launch_run_waits_for_a_building_local_model_then_launches(tmp_path: Path) -> None:
    # given the local model still compiling (the status serve_local_model's build reporter sets)
    make_counting_benchmark(tmp_path, 3)
    endpoint = make_endpoint(
        "http://127.0.0.1:9/v1",
        is_local=True,
        status=Endpoint.Status.BUILDING,
        status_detail="compiling llama.cpp: 62% (200/325 steps)",
    )

    def becomes_ready() -> None:
        # serve_local_model's own process, once the server answers
        time.sleep(0.5)
        try:
            services.endpoint_set_status(
                endpoint_id=endpoint.pk, status=Endpoint.Status.READY, detail="ready"
            )
        finally:
            connection.close()

    flip = threading.Thread(target=becomes_ready)
    flip.start()
    # when a run is launched on it meanwhile
    try:
        started = time.monotonic()
        _, err = launch_capturing("--split", "default", "--wait-ready", "60")
    finally:
        flip.join()
    # then the command waited, said for what and how far it was, and launched the run
    assert time.monotonic() - started < 30
    assert "Waiting for the local model (building: compiling llama.cpp: 62% (200/325 steps))" in err
    assert "The local model is ready after" in err
    assert "Run " in err and "launched: 3 items" in err
    assert Run.objects.count() == 1


@pytest.mark.django_db
def test_launch_run_gives_up_waiting_with_how_far_the_build_is(tmp_path: Path) -> None:
    make_counting_benchmark(tmp_path, 3)
    make_endpoint(
        "http://127.0.0.1:9/v1",
        is_local=True,
        status=Endpoint.Status.BUILDING,
        status_detail="compiling llama.cpp: 62% (200/325 steps)",
    )
    with pytest.raises(CommandError) as info:
        launch_capturing("--split", "default", "--wait-ready", "1")
    assert str(info.value).startswith(
        "the local model is still building (62%); try again in a few minutes or pass "
        "--wait-ready SECONDS (waited 1 s)"
    )
    assert not Run.objects.exists()
    # a mistyped task is said at once, not after the wait
    started = time.monotonic()
    with pytest.raises(CommandError) as info:
        command(
            "launch_run",
            *("--benchmark", "Counting", "--task", "no-such-task", "--endpoint", "fake"),
            *("--wait-ready", "60"),
        )
    assert time.monotonic() - started < 30
    assert "no-such-task" in str(info.value)
    # --wait-ready 0: the service's refusal at once, which says how far and what comes next
    with pytest.raises(CommandError) as info:
        launch_capturing("--split", "default", "--wait-ready", "0")
    assert str(info.value) == (
        "endpoint 'fake' is still building (compiling llama.cpp: 62% (200/325 steps)); the run "
        "can be launched when it is ready (the Endpoints page shows its progress; "
        "`launch_run` waits for it)"
    )


# --- import_predictions -----------------------------------------------------------------------


@pytest.mark.django_db
def test_importing_generic_outputs_scores_them(tmp_path: Path) -> None:
    # given 10 questions "What number comes after i?" and outputs: 6 right, 3 wrong, 1 unreadable
    make_counting_benchmark(tmp_path, 10)
    answers = {i: f"Answer: {i + 1}" for i in range(6)}
    answers.update({6: "Answer: 6", 7: "Answer: 9", 8: "I think 100", 9: "Answer:"})
    path = write_jsonl(
        tmp_path / "outputs.jsonl",
        [{"sample_id": i, "output": text} for i, text in answers.items()],
    )
    # when
    printed = command(
        "import_predictions",
        "generic",
        "answer",
        str(path),
        "--name",
        "elsewhere",
        "--format",
        "generic",
        "--split",
        "default",
        "--json",
    )
    # then: accuracy 6/10; unparsed 1/10 (the empty answer)
    run = Run.objects.get()
    assert json.loads(printed) == {
        "run": run.pk,
        "items": 10,
        "metrics": {"accuracy": 60.0, "unparsed": 10.0},
        "outputs": 10,
        "on_duplicate": "refuse",
        "repeated": [],
        "repeats_scored": 0,
        "repeats_dropped": 0,
        "missing": [],
        "missing_count": 0,
    }
    assert (run.source, run.status, run.name, run.model_name) == (
        Run.Source.IMPORTED,
        Run.Status.DONE,
        "elsewhere",
        "elsewhere",
    )
    unread = run.predictions.get(sample__external_id="9")
    assert (unread.parsed, unread.scores) == (False, {"accuracy": 0.0, "unparsed": 100.0})


@pytest.mark.django_db
def test_an_output_for_an_unknown_sample_stores_nothing(tmp_path: Path) -> None:
    make_counting_benchmark(tmp_path, 3)
    path = write_jsonl(
        tmp_path / "outputs.jsonl",
        [
            {"sample_id": 0, "output": "Answer: 1"},
            {"sample_id": 1, "output": "Answer: 2"},
            {"sample_id": 999, "output": "Answer: 1000"},
        ],
    )
    with pytest.raises(CommandError) as info:
        command(
            "import_predictions",
            *("generic", "answer", str(path), "--name", "x", "--format", "generic"),
            *("--split", "default"),
        )
    assert str(info.value) == (
        f"Nothing imported. {path}, line 3: no sample '999' in split(s) default"
    )
    assert not Run.objects.exists()
    assert not Prediction.objects.exists()


@pytest.mark.django_db
def test_a_malformed_output_file_names_the_line(tmp_path: Path) -> None:
    make_counting_benchmark(tmp_path, 3)
    path = tmp_path / "outputs.jsonl"
    path.write_text('{"sample_id": 0, "output": "Answer: 1"}\n{"sample_id": 1, "text": "2"}\n')
    with pytest.raises(CommandError) as info:
        command(
            "import_predictions",
            *("generic", "answer", str(path), "--name", "x", "--format", "generic"),
            *("--split", "default"),
        )
    message = str(info.value)
    assert message.startswith("Nothing imported. ")
    assert "line 2" in message and "text" in message
    assert not Run.objects.exists()


def flat_single_calls(benchmark: Benchmark, count: int) -> list[Sample]:
    """S-S samples whose gold is one call with plain (string or number) arguments."""
    chosen = []
    for sample in benchmark.samples.filter(split="S-S").order_by("id"):
        calls = sample.reference["calls"]
        if len(calls) != 1 or not calls[0]["name"]:
            continue
        values = calls[0]["arguments"].values()
        if all(isinstance(v, str | int | float) and "}" not in str(v) for v in values):
            chosen.append(sample)
        if len(chosen) == count:
            break
    assert len(chosen) == count
    return chosen


def action(name: str, arguments: dict[str, Any]) -> str:
    return f"Thought: the user wants {name}.\nAction: {name}\nAction Input: {json.dumps(arguments)}"


@pytest.mark.django_db
def test_importing_an_mtubench_response_file_scores_it_as_mtu_eval_does(
    tmp_path: Path, seeddata: Path
) -> None:
    benchmark_import(suite="mtubench", paths=[seeddata / "mtubench" / "S-S_eval.jsonl"])
    benchmark = Benchmark.objects.get(suite="mtubench")
    samples = flat_single_calls(benchmark, 10)
    records = []
    for index, sample in enumerate(samples):
        gold = sample.reference["calls"][0]
        name, arguments = gold["name"], gold["arguments"]
        if index < 6:  # the gold call
            response = action(name, arguments)
        elif index < 8:  # the right tool with an argument too many
            response = action(name, {**arguments, "unasked": "yes"})
        else:  # the wrong tool
            response = action("NoSuchTool", arguments)
        records.append({"id": sample.external_id, "model": "elsewhere", "response": response})
    path = write_jsonl(tmp_path / "S-S_responses.jsonl", records)
    # when
    printed = command("import_predictions", "mtubench", "S-S", str(path), "--name", "m", "--json")
    # then: TS = 8/10 (right name), PS = 6/10 (right name and arguments), Avg = (80 + 60) / 2
    run = Run.objects.get()
    summary = json.loads(printed)
    assert {key: summary[key] for key in ("run", "items", "metrics")} == {
        "run": run.pk,
        "items": 10,
        "metrics": {"TS": 80.0, "PS": 60.0, "Avg": 70.0},
    }
    assert (summary["outputs"], summary["repeated"], summary["missing_count"]) == (10, [], 94)
    by_id = {p.sample.external_id: p.scores for p in run.predictions.select_related("sample")}
    assert by_id[samples[0].external_id] == {"TS": 1.0, "PS": 1.0}
    assert by_id[samples[6].external_id] == {"TS": 1.0, "PS": 0.0}
    assert by_id[samples[9].external_id] == {"TS": 0.0, "PS": 0.0}


# --- resume -----------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_retrying_failed_items_answers_only_those(tmp_path: Path, settings: Any) -> None:
    # given chunks of 3 and executions that take no more than their own chunk
    settings.EVALUATION_CHUNK_SIZE = 3
    settings.EVALUATION_EXECUTION_MAX_ITEMS = 0
    benchmark = make_counting_benchmark(tmp_path, 6)
    with FakeOpenAI(responder=counting_answer) as server:
        endpoint = make_endpoint(server.base_url, max_attempts=1)
        run = services.run_launch(
            benchmark=benchmark, task="answer", endpoint=endpoint, split="default"
        )
        services.chunk_execute(run.pk, 0, 2)
        # the second chunk meets a server that fails every question's first request
        server.configure(fail_first=1)
        services.chunk_execute(run.pk, 3, 5)
        assert services.run_finalize(run_id=run.pk)
        run.refresh_from_db()
        assert run.status == Run.Status.DONE
        failed = run.predictions.filter(status=Prediction.Status.FAILED)
        assert list(failed.values_list("position", flat=True)) == [3, 4, 5]
        assert all(p.error.startswith("gave up after 1 attempts; last: HTTP 500") for p in failed)
        answered = list(
            run.predictions.filter(position__lt=3).values_list("id", "output", "updated_at")
        )
        requests = server.total
        # when
        queued = lifecycle.resume(services.RUNS, run, retry_failed=True)
        for first in (0, 3):
            services.chunk_execute(run.pk, first, first + 2)
        services.run_finalize(run_id=run.pk)
    # then only the three failed items were asked again, and the run is done
    assert queued == 3
    assert server.total == requests + 3
    run.refresh_from_db()
    assert run.status == Run.Status.DONE
    assert set(run.predictions.values_list("status", flat=True)) == {"done"}
    assert list(run.predictions.filter(position__gte=3).values_list("attempts", flat=True)) == [
        1,
        1,
        1,
    ]
    assert (
        list(run.predictions.filter(position__lt=3).values_list("id", "output", "updated_at"))
        == answered
    )
    # questions 0, 2 and 4 are answered right
    assert run.metrics == {"accuracy": 50.0, "unparsed": 0.0}


@pytest.mark.django_db(transaction=True)
def test_resuming_a_run_with_nothing_left_finishes_it_again(tmp_path: Path) -> None:
    benchmark = make_counting_benchmark(tmp_path, 2)
    with FakeOpenAI(responder=counting_answer) as server:
        endpoint = make_endpoint(server.base_url)
        run = services.run_launch(
            benchmark=benchmark, task="answer", endpoint=endpoint, split="default"
        )
        services.chunk_execute(run.pk, 0, 99)
        services.run_finalize(run_id=run.pk)
        # when
        queued = lifecycle.resume(services.RUNS, run, retry_failed=True)
    # then the finalisation queued on commit ran at once
    assert queued == 0
    run.refresh_from_db()
    assert run.status == Run.Status.DONE
    assert run.metrics == {"accuracy": 50.0, "unparsed": 0.0}


# --- migrations -------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_models_have_no_unmade_migrations() -> None:
    out = StringIO()
    call_command("makemigrations", "--check", "--dry-run", stdout=out)
    assert "No changes detected" in out.getvalue()


@pytest.mark.parametrize("value", ["NaN", "Infinity", "1e999", "9" * 4301])
def test_a_parameter_no_column_can_store_is_refused_by_name(value: str) -> None:
    # JSON's rule for numbers, as in request bodies and imports (issue 27)
    from evaluation.management.commands._common import key_values

    with pytest.raises(CommandError, match=r"--param 'temperature=.*cannot be stored"):
        key_values([f"temperature={value}"], "--param")
    assert key_values(["temperature=0.5", "stop=end"], "--param") == {
        "temperature": 0.5,
        "stop": "end",
    }
