"""UltraTool in native tool mode (issue 16): tool usage awareness, tool selection and tool usage
with the sample's toolset declared as function tools, one request per step. An oracle answering
each step with its gold scores 100, as the text mode's oracle (the gold written as the text
answer) does; a wrong call costs its step. Real PostgreSQL, the run's chunks executed in this
process, the fake OpenAI server at the edge."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from benchmarks.models import Benchmark
from benchmarks.services import benchmark_import
from benchmarks.suites import ultratool
from evaluation import services
from evaluation.models import Endpoint, Run
from evaluation.selectors import items_by_sample_id, run_context
from evaluation.services import RunError
from tests.evaluation.conftest import execute_run, make_endpoint
from tests.factories import make_superuser
from tests.fake_openai import FakeCall, FakeOpenAI, ToolRequest, leaked_call, oracle, tool_reply

pytestmark = pytest.mark.django_db(transaction=True)

FIXTURE = Path(__file__).resolve().parents[1] / "benchmarks" / "fixtures" / "ultratool"

TASKS = ("tool_usage_awareness", "tool_selection", "tool_usage")
NO_TOOL = "This step needs no tool."
HEADLINE = {
    "tool_usage_awareness": ("accuracy_global", "accuracy_local"),
    "tool_selection": ("accuracy_global", "accuracy_local"),
    "tool_usage": ("levenshtein_local", "kv_accuracy_global", "kv_accuracy_local"),
}

# An oracle's answer for one step: (task, the gold step, the declared API names) -> a reply.
Answer = Callable[[str, dict[str, Any], tuple[str, ...]], Any]


def gold_answer(task: str, step: dict[str, Any], tools: tuple[str, ...]) -> Any:
    if task == "tool_usage_awareness":
        return tool_reply((tools[0], {})) if step["value"] else NO_TOOL
    return tool_reply(FakeCall(step["tool"], step.get("arguments") or {}))


class StepOracle:
    """Answers each step's request (found by its messages) with `answer` of its gold step."""

    def __init__(self, answer: Answer = gold_answer) -> None:
        self.answer = answer
        self.steps: dict[str, tuple[str, dict[str, Any]]] = {}
        self.requests: list[ToolRequest] = []
        self.declared_names: set[str] = set()

    def learn(self, run: Run) -> None:
        _, ctx = run_context(run)
        rows = list(run.predictions.values_list("sample_id", flat=True))
        for item in items_by_sample_id(rows).values():
            native = ultratool.NATIVE[ctx.task.name]
            _, requests = ultratool.native_step_prompts(item, ctx, native)
            for step, prompt in requests:
                self.steps[json.dumps(prompt.messages)] = (ctx.task.name, dict(step))

    def __call__(self, request: ToolRequest) -> Any:
        self.requests.append(request)
        self.declared_names.update(request.tools)
        task, step = self.steps[json.dumps(request.body["messages"])]
        return self.answer(task, step, request.tools)


def launch(task: str, server: FakeOpenAI, mode: str = "native") -> Run:
    benchmark = Benchmark.objects.filter(suite="ultratool").first()
    if benchmark is None:
        benchmark_import(suite="ultratool", paths=[FIXTURE])
        benchmark = Benchmark.objects.get(suite="ultratool")
    endpoint = make_endpoint(server.base_url, name=f"fake-{Endpoint.objects.count()}")
    return services.run_launch(
        benchmark=benchmark, task=task, endpoint=endpoint, options={"tool_mode": mode}
    )


def text_oracle_metrics(task: str) -> dict[str, Any]:
    """The text mode's oracle: each item answered with its gold written as the text answer."""
    answers: dict[str, str] = {}

    def respond(body: dict[str, Any]) -> str:
        return answers[json.dumps(body["messages"][-1])]

    with FakeOpenAI(responder=respond) as server:
        run = launch(task, server, mode="text")
        evaluator, ctx = run_context(run)
        rows = list(run.predictions.values_list("sample_id", "context"))
        items = items_by_sample_id(s for s, _ in rows)
        for sample_id, context in rows:
            prompt = evaluator.build_prompt(items[sample_id], ctx, context)
            answers[json.dumps(prompt.messages[-1])] = ultratool.reference_output(
                items[sample_id], task
            )
        execute_run(run)
    assert run.status == Run.Status.DONE, run.error
    return run.metrics


@pytest.mark.parametrize("task", TASKS)
def test_an_oracle_of_the_gold_scores_100_natively_where_the_text_oracle_does(
    task: str, client: Client
) -> None:
    expected = text_oracle_metrics(task)
    gold = StepOracle()
    with FakeOpenAI(responder=oracle(gold)) as server:
        run = launch(task, server)
        gold.learn(run)
        execute_run(run)
    assert run.status == Run.Status.DONE, run.error
    assert gold.requests and all(request.tools for request in gold.requests)
    for metric in HEADLINE[task]:
        assert expected[metric] == 100.0
        assert run.metrics[metric] == 100.0, (metric, run.metrics)
    # one request per gold step, each traced, and the calls as the server sent them kept
    steps = sum(len(p.trace) for p in run.predictions.all())
    assert steps == len(gold.requests) == len(gold.steps)
    sent = [c for p in run.predictions.all() for c in p.tool_calls]
    assert sent and all(c["type"] == "function" for c in sent)
    # the run page shows each step's call
    client.force_login(make_superuser())
    page = client.get(f"/runs/{run.pk}/").content.decode()
    first_call = next(r for p in run.predictions.all() for r in p.trace if r["action"])
    assert f'<code class="call-text">{first_call["action"]}(' in page


def wrong_first_step(task: str, step: dict[str, Any], tools: tuple[str, ...]) -> Any:
    """The gold everywhere but on the first step of each item: a wrong call there."""
    if step["step"] != WRONG[task]:
        return gold_answer(task, step, tools)
    if task == "tool_usage_awareness":
        # calls a tool where none is needed, or writes the call into the text
        return leaked_call(tools[0], {}) if not step["value"] else NO_TOOL
    if task == "tool_selection":
        return tool_reply((next(t for t in tools if t != step["tool"]), {}))
    return tool_reply(FakeCall(step["tool"], '{"broken": '))


WRONG: dict[str, str] = {}


@pytest.mark.parametrize("task", TASKS)
def test_a_wrong_call_costs_its_step(task: str) -> None:
    first = StepOracle()
    with FakeOpenAI(responder=oracle(first)) as server:
        probe = launch(task, server)
        first.learn(probe)
    steps = [step for t, step in first.steps.values() if t == task]
    WRONG[task] = str(steps[0]["step"])
    wrong = StepOracle(wrong_first_step)
    with FakeOpenAI(responder=oracle(wrong)) as server:
        run = launch(task, server)
        wrong.learn(run)
        execute_run(run)
    assert run.status == Run.Status.DONE, run.error
    overall = "kv_accuracy_global" if task == "tool_usage" else "accuracy_global"
    local = HEADLINE[task][-1]
    assert run.metrics[local] < 100.0, run.metrics
    hit = [p for p in run.predictions.all() if any(r["step"] == WRONG[task] for r in p.trace)]
    assert hit and all(p.scores[overall] == 0.0 for p in hit)
    assert all(p.scores[overall] == 100.0 for p in run.predictions.all() if p not in hit)
    for prediction in hit:
        entry = next(e for e in prediction.answer if e["step"] == WRONG[task])
        if task == "tool_usage":
            # arguments that are not JSON: a call with {} (a wrong call), named in the note
            assert entry["arguments"] == {} and "not valid JSON" in prediction.note
        elif task == "tool_selection":
            gold = prediction.sample.reference["tool_selection"]
            right = next(g["tool"] for g in gold if g["step"] == WRONG[task])
            assert entry["tool"] != right and entry["tool"] in wrong.declared_names
        elif entry["value"] == 1:
            # a call written in the text is tool use, never a correct "no tool"
            assert prediction.leaked and "written in the text" in prediction.note


def test_the_reference_variant_has_no_native_form() -> None:
    benchmark_import(suite="ultratool", paths=[FIXTURE])
    endpoint = make_endpoint("http://127.0.0.1:9/v1")
    with pytest.raises(RunError, match="variant=reference reads text answers"):
        services.run_launch(
            benchmark=Benchmark.objects.get(suite="ultratool"),
            task="tool_usage",
            endpoint=endpoint,
            options={"tool_mode": "native", "variant": "reference"},
        )
