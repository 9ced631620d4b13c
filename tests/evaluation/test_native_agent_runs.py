"""StableToolBench agent runs in native tool mode (issue 16): the query's tools and Finish
declared as function tools, the model's tool_calls run on the virtual API server, the trace
stored in the text agent's shape and shown on the run page. Real PostgreSQL, the run's chunks
executed in this process, the fake OpenAI server at the edge (the model and the simulator)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from benchmarks.models import Sample
from benchmarks.suites import stabletoolbench
from evaluation.models import Prediction, Run, ServedCall
from evaluation.selectors import items_by_sample_id
from tests.evaluation.conftest import execute_run, make_simulator
from tests.evaluation.test_agent_runs import SIMULATOR_MARK, import_stabletoolbench, launch_g1
from tests.factories import make_superuser
from tests.fake_openai import FakeCall, FakeOpenAI, ToolRequest, leaked_call, oracle, tool_reply

pytestmark = pytest.mark.django_db(transaction=True)

ANSWER = {"return_type": "give_answer", "final_answer": "There are 42 things."}


def query_of(request: ToolRequest) -> str:
    """The query: the first user message (later ones may be the agent's reminders)."""
    return next(m["content"] for m in request.body["messages"] if m["role"] == "user")


class Agent:
    """The simulator, and an agent whose part per query the test assigns (by the query text):
    "answer" calls the first tool, then Finish with an answer; "give_up" calls it, then gives
    up; "malformed" first sends arguments that are not JSON, then calls well and answers."""

    def __init__(self) -> None:
        self.parts: dict[str, str] = {}
        self.requests: list[ToolRequest] = []

    def __call__(self, request: ToolRequest) -> Any:
        if SIMULATOR_MARK in request.text:
            return json.dumps({"error": "", "response": {"result": "42 things found"}})
        self.requests.append(request)
        part = self.parts[query_of(request)]
        tool = request.tools[0]
        if not request.calls_made:
            if part == "malformed":
                return tool_reply(FakeCall(tool, '{"query": '), content="Let me look.")
            return tool_reply((tool, {}), content="Let me look it up.")
        if part == "malformed" and len(request.calls_made) == 1:
            return tool_reply((tool, {}))
        if part == "give_up":
            return tool_reply(("Finish", {"return_type": "give_up_and_restart"}))
        return tool_reply(("Finish", ANSWER))


def test_a_native_agent_run_calls_the_virtual_api_server_and_finishes_with_a_function(
    seeddata: Path, settings: Any, client: Client
) -> None:
    benchmark = import_stabletoolbench(seeddata)
    agent = Agent()
    with FakeOpenAI(responder=oracle(agent)) as server:
        endpoint = make_simulator(settings, server.base_url, name="agent-and-simulator")
        run = launch_g1(benchmark, endpoint, item_limit=3, options={"tool_mode": "native"})
        rows = list(run.predictions.order_by("position"))
        items = items_by_sample_id(p.sample_id for p in rows)
        parts = ("answer", "give_up", "malformed")
        for prediction, part in zip(rows, parts, strict=True):
            agent.parts[str(items[prediction.sample_id].input["query"]).strip()] = part
        execute_run(run)
    assert run.status == Run.Status.DONE, run.error
    # every agent request declares the query's tools and Finish, and nothing else
    for request in agent.requests:
        assert request.tools[-1] == "Finish" and len(request.tools) >= 2
    answered, gave_up, malformed = run.predictions.order_by("position")
    assert {p.status for p in (answered, gave_up, malformed)} == {Prediction.Status.DONE}

    call, finish = answered.trace
    assert call["tool"] in Sample.objects.get(pk=answered.sample_id).candidate_tools
    assert call["tool"].endswith(f"/{call['action']}")
    assert call["source"] == "simulated" and call["ok"] is True
    assert json.loads(call["observation"]) == {
        "error": "",
        "response": {"result": "42 things found"},
    }
    assert call["thought"] == "Let me look it up." and call["tools"][0] == call["action"]
    assert finish["action"] == "Finish" and finish["stop"] == "final_answer"
    assert finish["arguments"] == ANSWER
    assert answered.answer == "There are 42 things."
    assert answered.scores == {"has_final_answer": 1.0}
    assert [c["function"]["name"] for c in answered.tool_calls] == [call["action"], "Finish"]
    # the answer object the judges read: the call, its observation, then Finish
    record = json.loads(answered.output)
    assert record["method"] == "CoT@1"
    assert json.loads(record["final_answer"]) == ANSWER
    nodes, node = [], record["answer_details"]
    while node:
        nodes.append(node[0])
        node = node[0]["next"]
    tools = [n["message"] for n in nodes if n["role"] == "tool"]
    assert [t["name"] for t in tools] == [call["action"], "Finish"]
    assert "42 things found" in tools[0]["response"]

    # the pass-rate judges' check before asking: answered, and a give-up is Unsolved
    assert stabletoolbench.no_answer_reason(record) is None
    assert stabletoolbench.no_answer_reason(json.loads(gave_up.output))
    assert gave_up.trace[-1]["stop"] == "give_up" and gave_up.answer is None
    assert gave_up.scores == {"has_final_answer": 0.0}

    bad, good, done = malformed.trace
    assert bad["ok"] is False and "not a JSON object" in bad["observation"] and not bad["source"]
    assert good["source"] == "simulated" and done["stop"] == "final_answer"
    assert malformed.answer == "There are 42 things."
    # the malformed call is answered by a tool message; it was never sent to the server
    second = next(r for r in agent.requests if len(r.calls_made) == 1 and r.tool_results)
    assert "not a JSON object" in second.tool_results[0]["output"]
    assert ServedCall.objects.filter(run=run).count() == 3
    assert run.metrics["answered"] == 66.67

    client.force_login(make_superuser())
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "source-simulated" in page and "42 things found" in page
    assert call["action"] in page and "native" in page


class Stubborn(Agent):
    """Breaks the text agent's rules, one per query: "unknown" calls a function nobody declared
    (twice), "repeat" asks the same call again and again, "silent" never calls a function."""

    def __call__(self, request: ToolRequest) -> Any:
        if SIMULATOR_MARK in request.text:
            return json.dumps({"error": "", "response": {"result": "42 things found"}})
        self.requests.append(request)
        part = self.parts[query_of(request)]
        if part == "unknown":
            return tool_reply(("search_everything", {"q": "x"}))
        if part == "repeat":
            return tool_reply((request.tools[0], {}))
        if len(request.body["messages"]) > 2:  # after the reminder: the call in the text
            return leaked_call(request.tools[0], {"q": "x"})
        return "I would rather not call anything."


def test_a_native_agent_keeps_the_text_agents_limits(seeddata: Path, settings: Any) -> None:
    benchmark = import_stabletoolbench(seeddata)
    agent = Stubborn()
    with FakeOpenAI(responder=oracle(agent)) as server:
        endpoint = make_simulator(settings, server.base_url, name="agent-and-simulator")
        run = launch_g1(benchmark, endpoint, item_limit=3, options={"tool_mode": "native"})
        rows = list(run.predictions.order_by("position"))
        items = items_by_sample_id(p.sample_id for p in rows)
        for prediction, part in zip(rows, ("unknown", "repeat", "silent"), strict=True):
            agent.parts[str(items[prediction.sample_id].input["query"]).strip()] = part
        execute_run(run)
    assert run.status == Run.Status.DONE, run.error
    unknown, repeat, silent = run.predictions.order_by("position")
    # a second unknown name in a row ends the attempt; the first is answered with the tools
    first, second = unknown.trace
    assert "is not one of the tools" in first["observation"] and "Finish" in first["observation"]
    assert second["stop"] == "invalid_action" and unknown.answer is None
    # max_same_call (2): the third identical call is not run and ends the attempt
    assert [s.get("source") for s in repeat.trace] == ["simulated", "cache", ""]
    assert repeat.trace[-1]["stop"] == "repeated_call"
    assert "already made 2 times" in repeat.trace[-1]["observation"]
    # a reply without a call: one reminder, then the attempt ends
    assert silent.status == Prediction.Status.DONE, silent.error
    assert len(silent.trace) == 2 and silent.trace[-1]["stop"] == "no_action"
    assert silent.trace[0]["observation"].startswith("No function was called")
    # the written call is not run, and the prediction is flagged as leaked
    assert silent.trace[1]["error"] == "leaked_call" and silent.leaked
    assert not silent.trace[1]["source"] and silent.tool_calls == []
    assert ServedCall.objects.filter(run=run).count() == 2  # the repeat query's two
    assert {p.scores["has_final_answer"] for p in (unknown, repeat, silent)} == {0.0}
