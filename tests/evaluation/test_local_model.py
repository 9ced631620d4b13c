"""The embedded model for real: Gemma 3 270M on llama.cpp's server, a MetaTool run from launch
to metrics through a real worker, and serve_local_model's status in the admin.

`make test` installs the model first (python -m config.localmodel install)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.models import Benchmark
from benchmarks.services import benchmark_import
from config import localmodel
from evaluation import services
from evaluation.models import LOCAL_TOOLS_ENDPOINT, Endpoint, Prediction, Run
from tests.workers import ROOT, celery_worker, worker_env

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("broker"),
    pytest.mark.slow,
]


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(predicate, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"{what} within {timeout:.0f}s")


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 - loopback
            return response.status == 200
    except OSError:
        return False


@pytest.fixture(scope="module")
def installed() -> None:
    if not localmodel.installed():
        pytest.fail(
            "the local model is not installed: run `make test` or "
            "`python -m config.localmodel install` first"
        )


def server_threads() -> int | None:
    """The server's threads: its default (the cores, up to 4), or one while the tests run in
    parallel processes (`make test`): llama.cpp's threads wait for each other at every step,
    so two of them sharing their cores with another test process ran 5-8 times slower than one
    thread on the core it gets."""
    parallel = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1
    return 1 if parallel else None


@pytest.fixture(scope="module")
def llama_server(installed: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One server for the module's tests (each starts its own worker and endpoint on it): the
    server keeps nothing of a request but its prompt cache, and loading the model was most of a
    short test's time."""
    tmp_path = tmp_path_factory.mktemp("llama")
    port = free_port()
    with open(tmp_path / "llama.log", "wb") as log:
        server = subprocess.Popen(
            localmodel.server_command(port, server_threads()),
            stdout=log,
            stderr=subprocess.STDOUT,
            env=localmodel.server_env(port),
        )
    try:
        wait_until(
            lambda: answers(f"http://127.0.0.1:{port}/v1/models") or server.poll() is not None,
            120,
            "the llama.cpp server did not start",
        )
        assert server.poll() is None, (tmp_path / "llama.log").read_text()[-2000:]
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.terminate()
        server.wait(timeout=20)


def test_a_metatool_run_on_the_local_model_goes_from_launch_to_metrics(
    tmp_path: Path, llama_server: str, seeddata: Path
) -> None:
    # given the published awareness sample and the real base model, five-shot, completion style
    metatool = seeddata / "metatool"
    benchmark_import(
        suite="metatool",
        paths=[metatool / "Task1_awareness_sample200.json", metatool / "plugin_des.json"],
    )
    endpoint = Endpoint.objects.create(
        name="local-test",
        base_url=llama_server,
        model=localmodel.MODEL_ALIAS,
        style=Endpoint.Style.COMPLETION,
        default_params={"temperature": 0, "max_tokens": 32},
        max_concurrency=1,
        timeout_seconds=120,
    )
    with celery_worker(tmp_path, concurrency=1):
        # when
        run = services.run_launch(
            benchmark=Benchmark.objects.get(name="MetaTool"),
            task="awareness",
            endpoint=endpoint,
            shots=5,
            item_limit=10,
            seed=1,
        )
        wait_until(
            lambda: Run.objects.get(pk=run.pk).status != Run.Status.RUNNING,
            300,
            "the run did not finish",
        )
    # then every item has a real, parsed answer and the run has its metrics
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.error
    predictions = list(run.predictions.all())
    assert len(predictions) == 10
    assert {p.status for p in predictions} == {Prediction.Status.DONE}
    assert all(p.output.strip() for p in predictions)
    parsed = [p for p in predictions if p.parsed]
    assert len(parsed) >= 8, [p.output for p in predictions]
    assert all(p.answer in (True, False) or isinstance(p.answer, dict) for p in parsed)
    for metric in ("accuracy", "precision", "recall", "f1"):
        assert metric in run.metrics
    assert 0 <= run.metrics["accuracy"] <= 100


def test_a_native_metatool_run_on_the_local_model_goes_from_launch_to_metrics(
    tmp_path: Path, llama_server: str, seeddata: Path
) -> None:
    # given the published awareness sample and the real base model behind a chat endpoint
    metatool = seeddata / "metatool"
    benchmark_import(
        suite="metatool",
        paths=[metatool / "Task1_awareness_sample200.json", metatool / "plugin_des.json"],
    )
    endpoint = Endpoint.objects.create(
        name="local-test-chat",
        base_url=llama_server,
        model=localmodel.MODEL_ALIAS,
        style=Endpoint.Style.CHAT,
        default_params={"temperature": 0, "max_tokens": 32},
        max_concurrency=1,
        timeout_seconds=120,
    )
    with celery_worker(tmp_path, concurrency=1):
        # when the run declares the candidate tools (tool_mode=native)
        run = services.run_launch(
            benchmark=Benchmark.objects.get(name="MetaTool"),
            task="awareness",
            endpoint=endpoint,
            item_limit=5,
            seed=1,
            options={"tool_mode": "native"},
        )
        wait_until(
            lambda: Run.objects.get(pk=run.pk).status != Run.Status.RUNNING,
            300,
            "the run did not finish",
        )
    # then the server took every native request (no item failed) and the run has its metrics,
    # whatever the model answered
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.error
    predictions = list(run.predictions.all())
    assert len(predictions) == 5
    assert {p.status for p in predictions} == {Prediction.Status.DONE}, [
        p.error for p in predictions
    ]
    assert "accuracy" in run.metrics
    assert all(p.tool_calls is not None for p in predictions), "native answers keep tool_calls"


def test_serve_local_model_registers_the_endpoint_and_reports_its_state(
    installed: None, tmp_path: Path
) -> None:
    port = free_port()
    with open(tmp_path / "serve.log", "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "manage.py", "serve_local_model", "--port", str(port)],
            cwd=ROOT,
            env=worker_env(),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:

        def state(name: str = services.LOCAL_ENDPOINT) -> str:
            endpoint = Endpoint.objects.filter(name=name).first()
            return endpoint.status if endpoint else ""

        wait_until(
            lambda: state() == Endpoint.Status.READY or proc.poll() is not None,
            180,
            "the local endpoint did not become ready",
        )
        assert state() == Endpoint.Status.READY, (tmp_path / "serve.log").read_text()[-2000:]
        endpoint = Endpoint.objects.get(name=services.LOCAL_ENDPOINT)
        assert endpoint.is_local and endpoint.style == Endpoint.Style.COMPLETION
        assert endpoint.base_url == f"http://127.0.0.1:{port}/v1"
        assert answers(f"{endpoint.base_url}/models")
        # and the tool-calling model beside it, on the same server, chat style
        wait_until(
            lambda: state(LOCAL_TOOLS_ENDPOINT) == Endpoint.Status.READY,
            10,
            "the tool-calling endpoint did not become ready",
        )
        tools = Endpoint.objects.get(name=LOCAL_TOOLS_ENDPOINT)
        assert tools.is_local and tools.style == Endpoint.Style.CHAT
        assert (tools.base_url, tools.model) == (endpoint.base_url, localmodel.TOOLS_MODEL_ALIAS)
        assert tools.default_params["tool_choice"] == "auto"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    assert state() == Endpoint.Status.DOWN
    assert state(LOCAL_TOOLS_ENDPOINT) == Endpoint.Status.DOWN
    assert not answers(f"http://127.0.0.1:{port}/v1/models")


def test_the_local_model_judges_a_five_item_run(tmp_path: Path, llama_server: str) -> None:
    from evaluation import judging
    from evaluation.models import JudgeJob, Judgment

    # given five demo UltraTool questions, planned by the local model
    demo = ROOT / "benchmarks" / "demo" / "ultratool"
    benchmark_import(
        suite="ultratool",
        paths=[demo / "test.json", *sorted((demo / "test_set").glob("*.json"))],
        benchmark_name="UltraTool local",
    )
    endpoint = Endpoint.objects.create(
        name="local-test",
        base_url=llama_server,
        model=localmodel.MODEL_ALIAS,
        style=Endpoint.Style.COMPLETION,
        default_params={"temperature": 0, "max_tokens": 160},
        max_concurrency=1,
        timeout_seconds=180,
    )
    with celery_worker(tmp_path, concurrency=1):
        run = services.run_launch(
            benchmark=Benchmark.objects.get(name="UltraTool local"),
            task="planning",
            endpoint=endpoint,
            shots=1,
        )
        wait_until(
            lambda: Run.objects.get(pk=run.pk).status != Run.Status.RUNNING,
            300,
            "the planning run did not finish",
        )
        run.refresh_from_db()
        assert run.status == Run.Status.DONE and run.predictions.count() == 5
        # when the same model judges the plans
        judge = judging.judge_create(
            name="local judge", template="ultratool.planning", endpoint=endpoint
        )
        job = judging.judge_launch(judge=judge, run=run, repeats=1)
        wait_until(
            lambda: JudgeJob.objects.get(pk=job.pk).status != JudgeJob.Status.RUNNING,
            600,
            "the judge job did not finish",
        )
    # then every item has a real verdict or a kept, unreadable answer; none is made up
    job.refresh_from_db()
    assert job.status == JudgeJob.Status.DONE
    judgments = list(job.judgments.all())
    assert len(judgments) == 5
    assert all(j.raw.strip() for j in judgments)
    assert {j.status for j in judgments} <= {Judgment.Status.DONE, Judgment.Status.UNPARSED}
    for j in judgments:
        if j.status == Judgment.Status.DONE:
            assert all(1 <= v <= 10 for v in j.values.values())
        else:
            assert j.raw_first.strip() and j.value is None  # asked again, then kept
    assert job.metrics["items"] == 5.0 and "Overall" in job.metrics


def test_ten_stabletoolbench_queries_are_solved_by_the_local_model_over_simulated_tools(
    tmp_path: Path, llama_server: str, seeddata: Path
) -> None:
    # given ten published queries, and the real base model as both the agent and the simulator
    # (the same endpoint: its simulator calls share the lane of the item being answered)
    queries = seeddata / "stabletoolbench" / "solvable_queries" / "test_instruction"
    benchmark_import(suite="stabletoolbench", paths=[queries / "G1_instruction.first50.json"])
    endpoint = Endpoint.objects.create(
        name="local-agent",
        base_url=llama_server,
        model=localmodel.MODEL_ALIAS,
        style=Endpoint.Style.COMPLETION,
        default_params={"temperature": 0},
        max_concurrency=1,
        timeout_seconds=120,
    )
    with celery_worker(
        tmp_path,
        concurrency=1,
        VIRTUAL_API_SIMULATOR=endpoint.name,
        VIRTUAL_API_SIMULATOR_MAX_TOKENS="96",
    ):
        # when (two model calls a query: a tool call and what follows it)
        run = services.run_launch(
            benchmark=Benchmark.objects.get(suite="stabletoolbench"),
            task="pass_rate",
            endpoint=endpoint,
            split="G1_instruction",
            item_limit=10,
            options={"max_steps": 2, "max_tokens": 64},
            seed=1,
        )
        wait_until(
            lambda: Run.objects.get(pk=run.pk).status != Run.Status.RUNNING,
            900,
            "the agent run did not finish",
        )
    # then every query has a stored trace of real steps, and the page renders them
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.error
    predictions = list(run.predictions.all())
    assert len(predictions) == 10
    assert {p.status for p in predictions} == {Prediction.Status.DONE}, [
        p.error for p in predictions
    ]
    assert all(p.trace and p.trace[0]["output"].strip() for p in predictions)
    assert all(p.trace[-1].get("stop") for p in predictions)
    called = [step for p in predictions for step in p.trace if step.get("observation")]
    assert "answered" in run.metrics
    from django.test import Client

    from evaluation.models import ServedCall
    from tests.factories import make_superuser

    client = Client()
    client.force_login(make_superuser())
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert page.count('class="trace-step"') >= 10
    # the tools the model managed to call were answered by the server (simulated or cached)
    served = set(ServedCall.objects.filter(run=run).values_list("source", flat=True))
    assert served <= {"simulated", "cache", "failed"}
    assert len(called) >= len(ServedCall.objects.filter(run=run))
    # A model this small mostly copies the prompt's example tool (an invalid action the agent
    # answers with a reminder); the simulator itself answers one of the queries' APIs here.
    from asgiref.sync import async_to_sync

    from evaluation.virtualapi.server import Call, ThreadSteps, serve
    from evaluation.virtualapi.toolbox import api_of, documentation_of

    spec = next(iter(evaluation_tools(run)))
    answer = async_to_sync(serve)(
        Call(api_of(spec), {"query": "weather in Lisbon"}),
        ThreadSteps(endpoint),
        documentation=documentation_of(spec),
    )
    assert answer.source == "simulated" and answer.response not in (None, "")


def evaluation_tools(run: Run) -> list:  # type: ignore[type-arg]
    """The ToolSpecs the run's first query offered."""
    from evaluation.selectors import run_context

    _, ctx = run_context(run)
    sample = run.predictions.select_related("sample").first().sample
    return [ctx.tools[name] for name in sample.candidate_tools if name in ctx.tools]


def test_serve_local_model_keeps_its_own_port_when_port_names_the_web_port(
    installed: None, tmp_path: Path
) -> None:
    # given the environment `PORT=8001 make run` gives its children: PORT is the web server's
    # (and HOST, MODEL, N_CTX are names llama.cpp's server would read as its own settings)
    model_port, web_port = free_port(), free_port()
    env = worker_env(PORT=str(web_port), HOST="127.0.0.2", MODEL="/nonexistent.gguf", N_CTX="7")
    with open(tmp_path / "serve.log", "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "manage.py", "serve_local_model", "--port", str(model_port)],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        # when the server comes up (on one port or the other)
        wait_until(
            lambda: (
                answers(f"http://127.0.0.1:{model_port}/v1/models")
                or answers(f"http://127.0.0.1:{web_port}/v1/models")
                or proc.poll() is not None
            ),
            180,
            "the llama.cpp server answered on neither port",
        )
        # then on the model's port only: the web port stays free for the web server
        log_tail = (tmp_path / "serve.log").read_text()[-2000:]
        assert answers(f"http://127.0.0.1:{model_port}/v1/models"), log_tail
        assert not answers(f"http://127.0.0.1:{web_port}/v1/models")
        endpoint = Endpoint.objects.get(name=services.LOCAL_ENDPOINT)
        assert endpoint.base_url == f"http://127.0.0.1:{model_port}/v1"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def test_the_local_model_server_gets_none_of_the_callers_settings() -> None:
    # given a caller's environment full of names llama.cpp's server reads as settings
    caller = {
        "PATH": "/usr/bin",
        "HOME": "/home/someone",
        "LANG": "C.UTF-8",
        "PORT": "8001",
        "HOST": "127.0.0.2",
        "MODEL": "/elsewhere.gguf",
        "CONFIG_FILE": "/etc/llama.json",
        "API_KEY": "sk-secret",
        "SECRET_KEY": "django",
        "DATABASE_URL": "postgres://x",
        "VERBOSE": "1",
    }
    # when
    env = localmodel.server_env(9123, caller)
    # then the basics pass, the port and host are ours, and nothing else
    assert env == {
        "PATH": "/usr/bin",
        "HOME": "/home/someone",
        "LANG": "C.UTF-8",
        "PORT": "9123",
        "HOST": "127.0.0.1",
    }


def test_no_variable_passed_to_the_server_is_one_of_its_settings(installed: None) -> None:
    # pydantic-settings reads every field of these models from the environment, whatever case
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    fields = {name.upper() for name in [*ServerSettings.model_fields, *ModelSettings.model_fields]}
    assert not (set(localmodel.SERVER_ENV_PASSED) & fields)
    assert not any(name.startswith(p) for name in fields for p in localmodel.SERVER_ENV_PREFIXES)


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "the city"}},
            "required": ["city"],
        },
    },
}


def test_a_native_request_to_the_local_model_is_answered_without_an_error(
    llama_server: str,
) -> None:
    # given the served base model and a chat request that declares a tool (tool_mode=native's
    # request shape)
    import json

    import openai

    client = openai.OpenAI(base_url=llama_server, api_key="unused", max_retries=0, timeout=120)
    messages = [{"role": "user", "content": "What is the weather in Paris?"}]
    # when the model may choose (tool_choice auto, the default)
    free = client.chat.completions.create(
        model=localmodel.MODEL_ALIAS,
        messages=messages,
        tools=[WEATHER_TOOL],
        max_tokens=32,
        temperature=0,
    )
    # then the server accepts the tools and answers, with or without a call
    assert len(free.choices) == 1
    assert free.choices[0].finish_reason in ("stop", "length", "tool_calls")
    # when the request names the tool, llama-cpp-python constrains the output to its arguments'
    # schema, so the answer is a call of that tool with a JSON object of arguments
    named = client.chat.completions.create(
        model=localmodel.MODEL_ALIAS,
        messages=messages,
        tools=[WEATHER_TOOL],
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
        max_tokens=32,
        temperature=0,
    )
    calls = named.choices[0].message.tool_calls or []
    assert [call.function.name for call in calls] == ["get_weather"]
    assert isinstance(json.loads(calls[0].function.arguments), dict)
