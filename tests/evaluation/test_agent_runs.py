"""Agent runs through the engine with their tools served by the virtual API server: StableToolBench
queries from the seed data, and WTU-Eval R2 with the search tool beside the local calculator.
The model and the simulator are a local OpenAI-compatible test server (the edge of the system);
everything between them is the platform's own: launch, chunks, the ReAct loops, the server, the
cache, the stored traces and the run page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from benchmarks.models import Benchmark, Sample
from benchmarks.services import benchmark_import
from evaluation import services
from evaluation.models import ApiResponse, Prediction, Run, ServedCall
from tests.evaluation.conftest import execute_run, make_endpoint, make_simulator
from tests.factories import make_superuser
from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.django_db(transaction=True)

SIMULATOR_MARK = "Imagine you are an API Server"


def first_tool(text: str) -> str:
    """The first tool the agent's prompt lists ("- name: description ...")."""
    for line in text.splitlines():
        if line.startswith("- ") and ":" in line and not line.startswith("- Finish"):
            return line[2:].split(":", 1)[0].strip()
    raise AssertionError(f"no tool listed in {text[:500]!r}")


def stabletoolbench_model(body: dict[str, Any]) -> str:
    """Plays both parts: the simulator (its system prompt) and a dutiful agent that calls the
    first tool offered, then answers with what it saw."""
    messages = body.get("messages") or []
    text = "\n".join(str(m.get("content")) for m in messages)
    if SIMULATOR_MARK in text:
        return json.dumps({"error": "", "response": {"result": "42 things found"}})
    if str(messages[-1].get("content", "")).startswith("Observation:"):
        return (
            "Thought: I have what I need.\nAction: Finish\nAction Input: "
            '{"return_type": "give_answer", "final_answer": "There are 42 things."}'
        )
    return f"Thought: Let me look it up.\nAction: {first_tool(text)}\nAction Input: {{}}"


def import_stabletoolbench(seeddata: Path) -> Benchmark:
    queries = seeddata / "stabletoolbench" / "solvable_queries" / "test_instruction"
    benchmark_import(suite="stabletoolbench", paths=[queries / "G1_instruction.first50.json"])
    return Benchmark.objects.get(suite="stabletoolbench")


def launch_g1(benchmark: Benchmark, endpoint: Any, **fields: Any) -> Run:
    """A pass-rate run over the G1_instruction seed queries."""
    fields.setdefault("seed", 3)
    return services.run_launch(
        benchmark=benchmark, task="pass_rate", endpoint=endpoint, split="G1_instruction", **fields
    )


def test_stabletoolbench_queries_are_solved_over_the_virtual_api_server(
    seeddata: Path, settings: Any, client: Client
) -> None:
    benchmark = import_stabletoolbench(seeddata)
    with FakeOpenAI(responder=stabletoolbench_model) as server:
        endpoint = make_simulator(settings, server.base_url, name="agent-and-simulator")
        run = launch_g1(benchmark, endpoint, item_limit=4)
        execute_run(run)
        assert run.status == Run.Status.DONE, run.error
        predictions = list(run.predictions.order_by("position"))
        assert {p.status for p in predictions} == {Prediction.Status.DONE}
        for prediction in predictions:
            call, finish = prediction.trace
            # The model calls ToolBench's name; the trace keeps the tool's key.
            assert call["tool"] in Sample.objects.get(pk=prediction.sample_id).candidate_tools
            assert call["tool"].endswith(f"/{call['action']}")
            assert call["source"] == "simulated"
            assert json.loads(call["observation"]) == {
                "error": "",
                "response": {"result": "42 things found"},
            }
            assert finish["action"] == "Finish" and finish["stop"] == "final_answer"
            assert prediction.answer == "There are 42 things."
            assert prediction.scores == {"has_final_answer": 1.0}
        assert run.metrics["answered"] == 100.0
        served = ServedCall.objects.filter(run=run)
        assert served.count() == 4 and set(served.values_list("source", flat=True)) == {"simulated"}
        # a second run of the same queries gets the tools' answers from the cache
        simulated = ApiResponse.objects.filter(origin="simulated").count()
        assert simulated >= 1
        # another request (temperature): not answered from the LLM response cache
        again = launch_g1(benchmark, endpoint, item_limit=4, params={"temperature": 0.5})
        before = server.count_for(SIMULATOR_MARK)
        execute_run(again)
        assert server.count_for(SIMULATOR_MARK) == before
        sources = set(ServedCall.objects.filter(run=again).values_list("source", flat=True))
        assert sources == {"cache"}
    # the run page shows each step with where its observation came from
    client.force_login(make_superuser())
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "source-simulated" in page and "42 things found" in page
    assert predictions[0].trace[0]["action"] in page


def test_tools_marked_down_fail_or_go_to_the_simulator(seeddata: Path, settings: Any) -> None:
    benchmark = import_stabletoolbench(seeddata)
    with FakeOpenAI(responder=stabletoolbench_model) as server:
        endpoint = make_simulator(settings, server.base_url, name="agent-and-simulator")
        down = list(benchmark.tools.values_list("name", flat=True))
        run = launch_g1(
            benchmark, endpoint, item_limit=1, options={"down_tools": down, "down_mode": "fail"}
        )
        execute_run(run)
    (prediction,) = run.predictions.all()
    call = prediction.trace[0]
    # every tool is down: the one called answers the paper's failure response
    assert call["tool"] in down and call["source"] == "down"
    assert "did not return any useful information" in call["observation"]
    assert ServedCall.objects.get(run=run).source == "down"


WTU_QUESTIONS = Path(__file__).resolve().parents[1] / "benchmarks" / "fixtures" / "wtueval"


def wtueval_model(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    text = "\n".join(str(m.get("content")) for m in messages)
    if SIMULATOR_MARK in text:
        return json.dumps(
            {"error": "", "response": [{"title": "Stage 9", "snippet": "the stage winner"}]}
        )
    if str(messages[-1].get("content", "")).lstrip().startswith("Observation:"):
        return "Thought: The search says who won.\nAction: Finish\nAction Input: the stage winner"
    return "Thought: I should search the web.\nAction: BingSearch\nAction Input: cycling stage"


def test_wtueval_r2_searches_with_the_simulated_search_tool(settings: Any) -> None:
    benchmark_import(suite="wtueval", paths=[WTU_QUESTIONS / "questions.jsonl"])
    benchmark = Benchmark.objects.get(suite="wtueval")
    with FakeOpenAI(responder=wtueval_model) as server:
        endpoint = make_simulator(settings, server.base_url, name="wtu-agent")
        run = services.run_launch(
            benchmark=benchmark, task="R2", endpoint=endpoint, split="realtime-mini"
        )
        execute_run(run)
    assert run.status == Run.Status.DONE, run.error
    (prediction,) = run.predictions.all()
    first = prediction.trace[0]
    assert set(first["tools"]) >= {"Calculator", "BingSearch", "WikiSearch"}
    assert first["action"] == "BingSearch" and "the stage winner" in first["observation"]
    assert json.loads(first["observation"])["source"] == "simulated"
    assert prediction.scores["accuracy"] == 1.0 and prediction.scores["call_rate"] == 1.0


def careful_model(body: dict[str, Any]) -> str:
    """An agent that answers from a useful observation and gives up on a failure response; the
    simulator; and a pass judge that finds an answer with 42 in it solved."""
    messages = body.get("messages") or []
    text = "\n".join(str(m.get("content")) for m in messages)
    if SIMULATOR_MARK in text:
        return json.dumps({"error": "", "response": {"result": "42 things found"}})
    if "answer_status" in text:
        solved = "There are 42 things." in text
        return json.dumps({"answer_status": "Solved" if solved else "Unsolved", "reason": "-"})
    last = str(messages[-1].get("content", ""))
    if last.startswith("Observation:"):
        if "did not return any useful information" in last:
            return (
                "Thought: The tool is down.\nAction: Finish\nAction Input: "
                '{"return_type": "give_up_and_restart"}'
            )
        return (
            "Thought: Done.\nAction: Finish\nAction Input: "
            '{"return_type": "give_answer", "final_answer": "There are 42 things."}'
        )
    return f"Thought: Let me look it up.\nAction: {first_tool(text)}\nAction Input: {{}}"


@pytest.mark.slow
@pytest.mark.usefixtures("broker")
def test_the_stability_experiment_reports_sopr_per_share_of_tools_down(
    seeddata: Path, tmp_path: Path
) -> None:
    import io

    from django.core.management import call_command

    from evaluation import judging
    from tests.workers import celery_worker

    import_stabletoolbench(seeddata)
    with FakeOpenAI(responder=careful_model) as server:
        make_endpoint(server.base_url, name="agent")
        simulator = make_endpoint(server.base_url, name="simulator", model="sim-model")
        judge_endpoint = make_endpoint(server.base_url, name="judge-endpoint", model="judge")
        judging.judge_create(
            name="pass",
            template="stabletoolbench.pass",
            endpoint=judge_endpoint,
            answer_mode="text",
        )
        results = {}
        with celery_worker(tmp_path, VIRTUAL_API_SIMULATOR=simulator.name):
            for mode in ("fail", "simulate"):
                out = io.StringIO()
                call_command(
                    "stability_experiment",
                    "--endpoint", "agent", "--judge", "pass", "--limit", "6",
                    "--shares", "0,50,100", "--mode", mode, "--repeat", "1", "--json",
                    stdout=out,
                    stderr=io.StringIO(),
                )  # fmt: skip
                results[mode] = {row["share"]: row for row in json.loads(out.getvalue())}
    # without the virtual server every query whose tool is down fails; with it, none does
    fail, simulate = results["fail"], results["simulate"]
    assert fail[0.0]["sopr"] == 100.0 and fail[1.0]["sopr"] == 0.0
    assert 0.0 <= fail[0.5]["sopr"] <= 100.0 and fail[1.0]["calls"]["down"] == 6
    assert [simulate[s]["sopr"] for s in (0.0, 0.5, 1.0)] == [100.0, 100.0, 100.0]
    assert simulate[1.0]["calls"]["simulated"] == 6 and simulate[1.0]["calls"]["cache"] == 0
    assert simulate[0.0]["tools_down"] == 0 < simulate[0.5]["tools_down"]
