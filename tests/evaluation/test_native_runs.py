"""Native tool mode (issue 16): runs whose requests declare the item's tools and whose answers
are the model's tool_calls, read back into the answers the suites score. Real PostgreSQL, the
run's chunks executed in this process, the fake OpenAI server at the edge."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from benchmarks.models import Benchmark
from benchmarks.services import benchmark_import
from evaluation import services
from evaluation.models import Endpoint, Prediction, Run
from evaluation.selectors import items_by_sample_id, run_context
from evaluation.services import RunError
from evaluation.work.native_responses import responses_native_fields
from tests.evaluation.conftest import execute_run, make_counting_benchmark, make_endpoint
from tests.factories import make_superuser
from tests.fake_openai import FakeCall, FakeOpenAI, ToolRequest, leaked_call, oracle, tool_reply

pytestmark = pytest.mark.django_db(transaction=True)


def mtubench(seeddata: Path, *splits: str) -> Benchmark:
    benchmark_import(
        suite="mtubench",
        paths=[seeddata / "mtubench" / f"{split}_eval.jsonl" for split in splits],
        benchmark_name="MTU-Bench",
    )
    return Benchmark.objects.get(name="MTU-Bench")


def _key(messages: Any) -> str:
    return json.dumps(messages, sort_keys=True, ensure_ascii=False)


class GoldOracle:
    """Answers each request of a run with its item's gold calls, found by the request's
    messages (filled once the run is launched: the messages are the suite's, per item)."""

    def __init__(self) -> None:
        self.gold: dict[str, list[FakeCall]] = {}
        self.requests: list[ToolRequest] = []

    def learn(self, run: Run) -> None:
        evaluator, ctx = run_context(run)
        rows = list(run.predictions.values_list("sample_id", "context"))
        items = items_by_sample_id(sample_id for sample_id, _ in rows)
        for sample_id, context in rows:
            item = items[sample_id]
            native = evaluator.native_prompt(item, ctx, context)
            calls = []
            for call in item.reference["calls"]:
                name = call["name"]
                api = native.names.to_api(name) if name in native.names else name
                calls.append(FakeCall(api, call["arguments"]))
            self.gold[_key(native.prompt.messages)] = calls
            fields = responses_native_fields(native.prompt.request("chat"))
            self.gold[_key([fields.get("instructions"), fields["input"]])] = calls

    def __call__(self, request: ToolRequest) -> Any:
        self.requests.append(request)
        body = request.body
        if request.api == "responses":
            calls = self.gold.get(_key([body.get("instructions"), body["input"]]))
        else:
            calls = self.gold.get(_key(body["messages"]))
        if calls is None:
            return "I do not know this request."
        return tool_reply(*calls) if calls else "No tool is needed."


def native_run(
    benchmark: Benchmark,
    task: str,
    server: FakeOpenAI,
    item_limit: int | None = None,
    style: str = Endpoint.Style.CHAT,
) -> tuple[Run, Callable[[], None]]:
    endpoint = Endpoint.objects.filter(name="fake").first() or make_endpoint(
        server.base_url, style=style
    )
    run = services.run_launch(
        benchmark=benchmark,
        task=task,
        endpoint=endpoint,
        item_limit=item_limit,
        options={"tool_mode": "native"},
    )
    return run, lambda: execute_run(run)


@pytest.mark.parametrize(
    ("split", "metrics"),
    [
        ("S-S", {"TS": 100.0, "PS": 100.0, "Avg": 100.0}),
        ("S-M", {"TN": 100.0, "TO": 100.0, "Avg": 100.0}),
        ("M-S", {"TS": 100.0, "PS": 100.0, "SR": 100.0, "Avg": 100.0}),
        ("M-M", {"TN": 100.0, "TO": 100.0, "SR": 100.0, "Avg": 100.0}),
        ("OOD", {"TS": 100.0, "PS": 100.0, "TN": 100.0, "TO": 100.0, "Avg": 100.0}),
    ],
)
def test_an_oracle_of_the_gold_calls_scores_100_on_mtubench_in_native_mode(
    seeddata: Path, broker: None, split: str, metrics: dict[str, float]
) -> None:
    benchmark = mtubench(seeddata, split)
    gold = GoldOracle()
    with FakeOpenAI(responder=oracle(gold)) as server:
        run, execute = native_run(benchmark, split, server)
        gold.learn(run)
        execute()
        stats = server.stats()
    assert run.status == Run.Status.DONE, run.error
    for name, value in metrics.items():
        assert run.metrics[name] == value, (name, run.metrics)
    items = run.predictions.count()
    # One request per item, but for a turn whose messages repeat an earlier one's (answered
    # from the cache).
    cached = run.predictions.filter(cached=True).count()
    assert stats["total"] == len(gold.requests) == items - cached
    assert cached <= 1
    # Every request declared tools (the item's own API list, by name), except S-S_17's, whose
    # published API list is only the placeholder ['api_descriptions']: it has none to declare.
    toolless = [r.last_user for r in gold.requests if not r.tools]
    expected = list(
        benchmark.samples.filter(metadata__has_key="unparsed_apis").values_list(
            "input__query", flat=True
        )
    )
    assert toolless == expected
    assert stats["with_tools"] == items - cached - len(expected)
    assert len(expected) == (1 if split == "S-S" else 0)
    assert not run.predictions.filter(status=Prediction.Status.FAILED).exists()
    # The server's tool_calls are kept as sent, beside the answer the scorer read.
    called = run.predictions.exclude(tool_calls=[]).exclude(tool_calls=None).first()
    assert called is not None
    assert called.tool_calls[0]["type"] == "function"
    assert called.answer["calls"][0]["name"] == called.tool_calls[0]["function"]["name"]
    assert not run.predictions.filter(leaked=True).exists()


class TextGoldOracle:
    """Answers each text-mode request of a run with its item's gold calls written in MTU-Bench's
    own answer format (Thought, then Action / Action Input per call), found by the messages."""

    def __init__(self) -> None:
        self.gold: dict[str, str] = {}
        self.requests: list[dict[str, Any]] = []

    def learn(self, run: Run) -> None:
        evaluator, ctx = run_context(run)
        rows = list(run.predictions.values_list("sample_id", "context"))
        items = items_by_sample_id(sample_id for sample_id, _ in rows)
        for sample_id, context in rows:
            item = items[sample_id]
            lines = ["Thought: I will do what the user asked."]
            for call in item.reference["calls"]:
                lines.append(f"Action: {call['name']}")
                arguments = call["arguments"]
                text = arguments if isinstance(arguments, str) else json.dumps(arguments)
                lines.append(f"Action Input: {text}")
            if not item.reference["calls"]:
                lines = ["Thought: The user's request needs no API call."]
            prompt = evaluator.build_prompt(item, ctx, context)
            self.gold[_key(prompt.request("chat")["messages"])] = "\n".join(lines)

    def __call__(self, body: dict[str, Any]) -> str:
        self.requests.append(body)
        return self.gold.get(_key(body["messages"]), "I do not know this request.")


@pytest.mark.parametrize(
    ("split", "metrics"),
    [
        ("S-S", {"TS": 100.0, "PS": 100.0, "Avg": 100.0}),
        ("S-M", {"TN": 100.0, "TO": 100.0, "Avg": 100.0}),
    ],
)
def test_the_same_oracle_in_text_mode_also_scores_100_and_declares_no_tools(
    seeddata: Path, broker: None, split: str, metrics: dict[str, float]
) -> None:
    # The baseline for native mode: the text prompt, answered with the gold in the
    # benchmark's own format, scores what the native oracle scores, and sends no tools.
    benchmark = mtubench(seeddata, split)
    gold = TextGoldOracle()
    with FakeOpenAI(responder=gold) as server:
        endpoint = make_endpoint(server.base_url)
        run = services.run_launch(benchmark=benchmark, task=split, endpoint=endpoint)
        gold.learn(run)
        execute_run(run)
        stats = server.stats()
    assert run.status == Run.Status.DONE, run.error
    for name, value in metrics.items():
        assert run.metrics[name] == value, (name, run.metrics)
    assert gold.requests and all("tools" not in body for body in gold.requests)
    assert stats["with_tools"] == 0


@pytest.mark.parametrize(
    ("split", "metrics"),
    [
        ("S-S", {"TS": 100.0, "PS": 100.0, "Avg": 100.0}),
        ("S-M", {"TN": 100.0, "TO": 100.0, "Avg": 100.0}),
        ("M-S", {"TS": 100.0, "PS": 100.0, "SR": 100.0, "Avg": 100.0}),
    ],
)
def test_the_oracle_scores_100_through_the_responses_api(
    seeddata: Path, broker: None, split: str, metrics: dict[str, float]
) -> None:
    benchmark = mtubench(seeddata, split)
    gold = GoldOracle()
    with FakeOpenAI(responder=oracle(gold)) as server:
        run, execute = native_run(benchmark, split, server, style=Endpoint.Style.RESPONSES)
        gold.learn(run)
        execute()
        stats = server.stats()
    assert run.status == Run.Status.DONE, run.error
    for name, value in metrics.items():
        assert run.metrics[name] == value, (name, run.metrics)
    assert {r.api for r in gold.requests} == {"responses"}
    toolless = 1 if split == "S-S" else 0  # S-S_17 has no API to declare
    assert stats["with_tools"] == stats["total"] - toolless
    # The function calls are kept in the chat shape, whichever API answered.
    called = run.predictions.exclude(tool_calls=[]).exclude(tool_calls=None).first()
    assert called is not None and called.tool_calls[0]["type"] == "function"
    assert called.answer["calls"][0]["name"] == called.tool_calls[0]["function"]["name"]


def test_multi_turn_history_becomes_tool_calls_and_tool_results(seeddata: Path) -> None:
    benchmark = mtubench(seeddata, "M-S")
    evaluator, ctx = run_context(Run(benchmark=benchmark, task="M-S", tool_mode="native"))
    sample = benchmark.samples.get(external_id="M-S_0_3")
    item = items_by_sample_id([sample.pk])[sample.pk]
    messages = evaluator.native_prompt(item, ctx, {}).prompt.messages
    roles = [m["role"] for m in messages]
    assert roles[:5] == ["system", "user", "assistant", "tool", "assistant"]
    assert "January 4, 2024" in messages[0]["content"]
    call = messages[2]["tool_calls"][0]
    assert call["function"] == {"name": "LookupMusic", "arguments": "{}"}
    assert messages[3]["tool_call_id"] == call["id"]
    assert "Be My Baby" in messages[3]["content"]
    assert messages[-1] == {"role": "user", "content": item.input["query"]}
    # Every call is answered by a tool message with its id, as the API insists.
    ids = [c["id"] for m in messages for c in m.get("tool_calls", [])]
    answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert ids == answered and len(ids) == 2


def test_multi_tool_parameters_accept_an_earlier_calls_field(seeddata: Path) -> None:
    benchmark = mtubench(seeddata, "S-M")
    evaluator, ctx = run_context(Run(benchmark=benchmark, task="S-M", tool_mode="native"))
    items = items_by_sample_id(benchmark.samples.values_list("pk", flat=True))
    referring = [
        item
        for item in items.values()
        if any(
            isinstance(value, str) and "." in value and value.split(".")[0] in item.candidate_tools
            for call in item.reference["calls"]
            for value in call["arguments"].values()
        )
    ]
    assert referring, "the seed S-M file has golds naming an earlier call's output"
    native = evaluator.native_prompt(referring[0], ctx, {})
    for tool in native.prompt.tools:
        for schema in tool["function"]["parameters"]["properties"].values():
            assert "ToolName.field" in schema["description"]
            kinds = schema.get("type", "string")
            assert "string" in (kinds if isinstance(kinds, list) else [kinds])


def test_text_and_native_requests_for_one_item_never_share_a_cache_entry(
    seeddata: Path, broker: None
) -> None:
    benchmark = mtubench(seeddata, "S-S")
    with FakeOpenAI(responder=oracle(lambda request: "Action: None")) as server:
        endpoint = make_endpoint(server.base_url)
        text = services.run_launch(benchmark=benchmark, task="S-S", endpoint=endpoint, item_limit=3)
        execute_run(text)
        assert server.stats()["total"] == 3
        native, execute = native_run(benchmark, "S-S", server, item_limit=3)
        execute()
        stats = server.stats()
    # Three more requests, each declaring tools: none was answered from the text run's cache.
    assert stats["total"] == 6 and stats["with_tools"] == 3
    assert not native.predictions.filter(cached=True).exists()
    assert sorted(native.predictions.values_list("sample_id", flat=True)) == sorted(
        text.predictions.values_list("sample_id", flat=True)
    )


def test_parallel_malformed_unknown_and_leaked_calls(seeddata: Path, broker: None) -> None:
    benchmark = mtubench(seeddata, "S-M")
    answers: dict[str, Any] = {}

    def choose(request: ToolRequest) -> Any:
        return answers[request.last_user]

    with FakeOpenAI(responder=oracle(choose)) as server:
        run, execute = native_run(benchmark, "S-M", server, item_limit=4)
        rows = list(run.predictions.order_by("position").select_related("sample"))
        assert len(rows) == 4
        queries = [row.sample.input["query"] for row in rows]
        gold = [row.sample.reference["calls"] for row in rows]
        # 0: the gold calls in one message (parallel), in order;
        answers[queries[0]] = tool_reply(*(FakeCall(c["name"], c["arguments"]) for c in gold[0]))
        # 1: the first gold call with arguments that are not JSON;
        answers[queries[1]] = tool_reply(FakeCall(gold[1][0]["name"], '{"city": '))
        # 2: a tool nobody declared;
        answers[queries[2]] = tool_reply(FakeCall("no_such_tool", {}))
        # 3: the gold calls written into the text instead of tool_calls.
        answers[queries[3]] = leaked_call(gold[3][0]["name"], gold[3][0]["arguments"])
        execute()
    by_query = {p.sample.input["query"]: p for p in run.predictions.select_related("sample")}
    parallel, malformed, unknown, leaked = (by_query[q] for q in queries)
    assert [c["name"] for c in parallel.answer["calls"]] == [c["name"] for c in gold[0]]
    assert len(parallel.tool_calls) == len(gold[0])
    assert malformed.answer["calls"] == [{"name": gold[1][0]["name"], "arguments": {}}]
    assert "not valid JSON" in malformed.note
    assert malformed.tool_calls[0]["function"]["arguments"] == '{"city": '
    assert unknown.answer["calls"][0]["name"] == "no_such_tool"
    assert "unknown tool" in unknown.note
    assert unknown.scores["TN"] == 0.0
    assert leaked.leaked and not parallel.leaked
    assert leaked.tool_calls == []
    assert leaked.answer["calls"][0]["name"] == gold[3][0]["name"]


def test_native_is_refused_where_it_cannot_run(tmp_path: Path, seeddata: Path) -> None:
    counting = make_counting_benchmark(tmp_path, 3)
    endpoint = make_endpoint("http://127.0.0.1:9/v1")
    with pytest.raises(RunError, match="task 'answer' of Counting has no native tool mode"):
        services.run_launch(
            benchmark=counting,
            task="answer",
            endpoint=endpoint,
            split="default",
            options={"tool_mode": "native"},
        )
    with pytest.raises(RunError, match=r"option .tool_mode. must be one of text, native"):
        services.run_launch(
            benchmark=counting,
            task="answer",
            endpoint=endpoint,
            split="default",
            options={"tool_mode": "fc"},
        )
    benchmark = mtubench(seeddata, "S-S")
    with pytest.raises(RunError, match="tool_choice only apply with tool_mode=native"):
        services.run_launch(
            benchmark=benchmark, task="S-S", endpoint=endpoint, params={"tool_choice": "auto"}
        )
    completion = make_endpoint(
        "http://127.0.0.1:9/v1", name="base", style=Endpoint.Style.COMPLETION
    )
    with pytest.raises(RunError, match="endpoint 'base' is completion-style"):
        services.run_launch(
            benchmark=benchmark, task="S-S", endpoint=completion, options={"tool_mode": "native"}
        )
    assert not Run.objects.exists()


def test_pages_and_api_show_the_tool_mode_and_leaked_calls(
    seeddata: Path, broker: None, client: Client
) -> None:
    benchmark = mtubench(seeddata, "S-S")
    answers: dict[str, Any] = {}

    def choose(request: ToolRequest) -> Any:
        return answers.get(request.last_user, "No call.")

    with FakeOpenAI(responder=oracle(choose)) as server:
        endpoint = make_endpoint(server.base_url)
        text = services.run_launch(benchmark=benchmark, task="S-S", endpoint=endpoint, item_limit=2)
        execute_run(text)
        native, execute = native_run(benchmark, "S-S", server, item_limit=2)
        first = native.predictions.order_by("position").select_related("sample").first()
        assert first is not None
        tool = first.sample.candidate_tools[0]
        answers[first.sample.input["query"]] = leaked_call(tool, {"q": "<b>x</b>"})
        execute()
    client.force_login(make_superuser())
    page = client.get(f"/runs/{native.pk}/").content.decode()
    assert "Tool mode" in page and "1 leaked call (written in the text)" in page
    assert "leaked call</span>" in page
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page
    assert "text: the benchmark's own prompt" in client.get(f"/runs/{text.pk}/").content.decode()
    api = client.get(f"/api/runs/{native.pk}/").json()
    assert (api["tool_mode"], api["leaked_calls"]) == ("native", 1)
    listed = {r["id"]: r for r in client.get("/api/runs/").json()["results"]}
    assert (listed[text.pk]["tool_mode"], listed[text.pk]["leaked_calls"]) == ("text", None)
    assert listed[native.pk]["leaked_calls"] == 1
    predictions = client.get("/api/predictions/", {"run": native.pk}).json()["results"]
    leaked = [p for p in predictions if p["leaked"]]
    assert len(leaked) == 1 and leaked[0]["tool_calls"] == []
    board = client.get(f"/leaderboard/{benchmark.pk}/S-S/").content.decode()
    assert board.count('<span class="badge">native</span>') == 1
    assert board.count('<span class="badge">text</span>') == 1
    assert "1 leaked" in board
    # The chart names the native run as such.
    assert f"#{native.pk} fake-model (native)" in board
    assert f"#{text.pk} fake-model (native)" not in board and f"#{text.pk} fake-model" in board


def test_the_launch_form_sets_the_tool_mode(seeddata: Path, client: Client) -> None:
    benchmark = mtubench(seeddata, "S-S")
    endpoint = make_endpoint("http://127.0.0.1:9/v1")
    client.force_login(make_superuser())
    form = {
        "name": "",
        "benchmark": benchmark.pk,
        "task": "mtubench:S-S",
        "split": "",
        "endpoint": endpoint.pk,
        "shots": 0,
        "item_limit": 2,
        "params": "",
        "options": '{"variant": "strict"}',
        "tool_mode": "native",
        "seed": 0,
    }
    assert 'name="tool_mode"' in client.get("/admin/evaluation/run/add/").content.decode()
    response = client.post("/admin/evaluation/run/add/", form)
    assert response.status_code == 302
    assert Run.objects.get().launch_options == {"variant": "strict", "tool_mode": "native"}
    refused = client.post(
        "/admin/evaluation/run/add/",
        {**form, "params": '{"parallel_tool_calls": false}', "tool_mode": "text"},
    )
    assert "parallel_tool_calls only apply with tool_mode=native" in refused.content.decode()
    assert Run.objects.count() == 1


def test_launch_run_takes_the_tool_mode_as_an_option(seeddata: Path, broker: None) -> None:
    mtubench(seeddata, "S-S")
    make_endpoint("http://127.0.0.1:9/v1")
    base = ["launch_run", "--benchmark", "MTU-Bench", "--task", "S-S", "--endpoint", "fake"]
    call_command(*base, "--limit", "2", "--option", "tool_mode=native", stdout=io.StringIO())
    run = Run.objects.get()
    assert run.tool_mode == "native"
    with pytest.raises(CommandError, match=r"option .tool_mode. must be one of text, native"):
        call_command(*base, "--option", "tool_mode=nativ", stdout=io.StringIO())


# --- the generic tool_calls task ----------------------------------------------------------------

WEATHER = {
    "name": "weather.get",  # not an API name: declared as weather_get, read back as weather.get
    "description": "Weather forecast",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
TIMER = {
    "name": "set_timer",
    "parameters": {"type": "object", "properties": {"minutes": {"type": "integer"}}},
}
GENERIC = [
    {"id": "one", "query": "Weather in Ghent?", "tools": [WEATHER, TIMER],
     "tool_calls": [{"name": "weather.get", "arguments": {"city": "Ghent"}}]},
    {"id": "two", "query": "Weather in Ghent and a 5 minute timer.", "tools": [WEATHER, TIMER],
     "tool_calls": [{"name": "weather.get", "arguments": {"city": "Ghent"}},
                    {"name": "set_timer", "arguments": {"minutes": 5}}]},
    {"id": "none", "query": "What is the capital of Portugal?", "tools": [WEATHER],
     "tool_calls": []},
    {"id": "later", "turns": [
        {"role": "user", "content": "Weather in Bruges?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"name": "weather.get", "arguments": {"city": "Bruges"}}]},
        {"role": "tool", "name": "weather.get", "content": "rain"},
        {"role": "assistant", "content": "Rain. Anything else?"},
        {"role": "user", "content": "Set a timer for 3 minutes."}],
     "tools": [WEATHER, TIMER], "tool_calls": [{"name": "set_timer", "arguments": {"minutes": 3}}]},
]  # fmt: skip


def generic_benchmark(tmp_path: Path) -> Benchmark:
    path = tmp_path / "native.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in GENERIC), encoding="utf-8")
    benchmark_import(suite="generic", paths=[path], benchmark_name="Mine")
    return Benchmark.objects.get(name="Mine")


class GenericOracle(GoldOracle):
    def learn(self, run: Run) -> None:
        evaluator, ctx = run_context(run)
        rows = list(run.predictions.values_list("sample_id", "context"))
        items = items_by_sample_id(sample_id for sample_id, _ in rows)
        for sample_id, context in rows:
            item = items[sample_id]
            native = evaluator.native_prompt(item, ctx, context)
            calls = [
                FakeCall(native.names.to_api(c["name"]), c["arguments"])
                for c in item.reference["tool_calls"]
            ]
            self.gold[_key(native.prompt.messages)] = calls


def test_the_generic_tool_calls_task_runs_natively(tmp_path: Path, broker: None) -> None:
    benchmark = generic_benchmark(tmp_path)
    gold = GenericOracle()
    with FakeOpenAI(responder=oracle(gold)) as server:
        endpoint = make_endpoint(server.base_url)
        run = services.run_launch(
            benchmark=benchmark,
            task="tool_calls",
            endpoint=endpoint,
            split="default",
            options={"tool_mode": "native"},
            params={"tool_choice": "auto", "parallel_tool_calls": True},
        )
        gold.learn(run)
        execute_run(run)
        stats = server.stats()
    assert run.status == Run.Status.DONE, run.error
    assert run.metrics == {
        "call_exact": 100.0,
        "call_name_accuracy": 100.0,
        "no_call_accuracy": 100.0,
        "unparsed": 0.0,
    }
    assert stats["with_tools"] == stats["total"] == 4
    # The run's parameters are sent as they are; the tools under their API names.
    assert {r.tool_choice for r in gold.requests} == {"auto"}
    assert {r.parallel_tool_calls for r in gold.requests} == {True}
    assert {r.tools for r in gold.requests} == {("weather_get", "set_timer"), ("weather_get",)}
    later = next(r for r in gold.requests if r.last_user == "Set a timer for 3 minutes.")
    assert later.calls_made == (
        {"id": "call_1", "name": "weather_get", "arguments": '{"city": "Bruges"}'},
    )
    assert later.tool_results == ({"id": "call_1", "output": "rain"},)
    two = run.predictions.get(sample__external_id="two")
    assert [c["function"]["name"] for c in two.tool_calls] == ["weather_get", "set_timer"]
    assert two.answer == GENERIC[1]["tool_calls"]


def test_a_leaked_call_is_never_a_correct_abstention(tmp_path: Path, broker: None) -> None:
    benchmark = generic_benchmark(tmp_path)
    # Every answer writes the weather call into its text, in the Hermes style.
    leak = leaked_call("weather_get", {"city": "Ghent"})
    with FakeOpenAI(responder=oracle(lambda request: leak)) as server:
        endpoint = make_endpoint(server.base_url)
        run = services.run_launch(
            benchmark=benchmark,
            task="tool_calls",
            endpoint=endpoint,
            split="default",
            options={"tool_mode": "native"},
        )
        execute_run(run)
    assert run.predictions.filter(leaked=True).count() == 4
    none = run.predictions.get(sample__external_id="none")
    assert none.tool_calls == []
    assert none.scores["no_call_accuracy"] == 0.0
    assert none.answer == [{"name": "weather.get", "arguments": {"city": "Ghent"}}]
    assert "not in tool_calls" in none.note
    assert run.metrics["no_call_accuracy"] == 0.0


# --- MetaTool -----------------------------------------------------------------------------------

METATOOL_FILES = (
    "all_clean_data_sample200.csv",
    "multi_tool_query_golden.json",
    "plugin_des.json",
    "big_tool_des.json",
    "plugin_info.json",
    "Task1_awareness_sample200.json",
    "Task2-Subtask3_reliability_sample100.json",
    "Task2-Subtask4_multi_tool_sample100.json",
    "scenario",
)


def metatool(seeddata: Path) -> Benchmark:
    benchmark_import(
        suite="metatool",
        paths=[seeddata / "metatool" / name for name in METATOOL_FILES],
        benchmark_name="MetaTool",
    )
    return Benchmark.objects.get(name="MetaTool")


class ChoiceOracle(GoldOracle):
    """MetaTool's gold: call the gold tool(s) when they are offered, else answer in text."""

    def learn(self, run: Run) -> None:
        evaluator, ctx = run_context(run)
        rows = list(run.predictions.values_list("sample_id", "context"))
        items = items_by_sample_id(sample_id for sample_id, _ in rows)
        for sample_id, context in rows:
            item = items[sample_id]
            native = evaluator.native_prompt(item, ctx, context)
            reference = item.reference
            if run.task == "awareness":
                gold = [reference["tool"]] if reference["needs_tool"] else []
            elif run.task == "multi_tool":
                gold = reference["tools"]
            elif run.task == "reliability":
                gold = []
            else:
                gold = [reference["tool"]]
            offered = [name for name in gold if name in native.names]
            assert offered == gold, (item.key, gold)
            self.gold[_key(native.prompt.messages)] = [
                FakeCall(native.names.to_api(name), {}) for name in gold
            ]


@pytest.mark.parametrize(
    ("task", "headline"),
    [("awareness", "accuracy"), ("reliability", "CSR"), ("multi_tool", "CSR"), ("similar", "CSR")],
)
def test_an_oracle_choosing_the_gold_tools_scores_100_on_metatool_in_native_mode(
    seeddata: Path, broker: None, task: str, headline: str
) -> None:
    benchmark = metatool(seeddata)
    gold = ChoiceOracle()
    with FakeOpenAI(responder=oracle(gold)) as server:
        run, execute = native_run(benchmark, task, server, item_limit=30)
        gold.learn(run)
        execute()
        stats = server.stats()
    assert run.status == Run.Status.DONE, run.error
    assert run.metrics[headline] == 100.0, run.metrics
    assert run.metrics["unparsed"] == 0
    assert stats["with_tools"] == stats["total"] == len(gold.requests) > 0
    # The candidates are the tools; awareness offers a list drawn at launch (10 tools).
    contexts = list(run.predictions.values_list("context", flat=True))
    assert {len(r.tools) for r in gold.requests} == {len(c["candidates"]) for c in contexts}
    if task == "awareness":
        assert {len(c["candidates"]) for c in contexts} == {10}
        needing = run.predictions.filter(sample__reference__needs_tool=True)
        assert 0 < needing.count() < run.predictions.count()
        assert all(p.answer is True for p in needing)


@pytest.mark.parametrize("scenario", ["Students", "TopTool_top5"])
def test_the_oracle_scores_100_on_a_metatool_scenario_in_native_mode(
    seeddata: Path, broker: None, scenario: str
) -> None:
    # The scenario's fixed list is the tools each request declares.
    benchmark = metatool(seeddata)
    gold = ChoiceOracle()
    with FakeOpenAI(responder=oracle(gold)) as server:
        run = services.run_launch(
            benchmark=benchmark,
            task="scenario",
            endpoint=make_endpoint(server.base_url),
            item_limit=20,
            options={"tool_mode": "native", "scenario": scenario},
        )
        gold.learn(run)
        execute_run(run)
        stats = server.stats()
    assert run.status == Run.Status.DONE, run.error
    assert run.metrics["CSR"] == 100.0, run.metrics
    assert stats["with_tools"] == stats["total"] == len(gold.requests) > 0
    offered = {tuple(sorted(r.tools)) for r in gold.requests}
    assert len(offered) == 1  # one fixed list for every query of the scenario


def test_native_metatool_is_zero_shot(seeddata: Path) -> None:
    benchmark = metatool(seeddata)
    endpoint = make_endpoint("http://127.0.0.1:9/v1")
    with pytest.raises(RunError, match="tool_mode=native prompts are zero-shot"):
        services.run_launch(
            benchmark=benchmark,
            task="reliability",
            endpoint=endpoint,
            shots=5,
            options={"tool_mode": "native"},
        )


# --- WTU-Eval R2/R4 -----------------------------------------------------------------------------

WTU_QUESTIONS = Path(__file__).resolve().parents[1] / "benchmarks" / "fixtures" / "wtueval"
EXPRESSIONS = {"3 crates of 48 apples": "3 * 48 - 5", "12.5% of 640": "640 * 12.5 / 100"}


def calculating(request: ToolRequest) -> Any:
    """Calls the calculator (with two calls in the first reply: one malformed), then answers
    with what it returned."""
    if request.tool_results:
        return f"The calculator says so.\nFinal Answer: {request.tool_results[-1]['output']}"
    expression = next(e for key, e in EXPRESSIONS.items() if key in request.last_user)
    return tool_reply(
        FakeCall("Calculator", '{"expression": '),
        FakeCall("Calculator", {"expression": expression}),
    )


def test_wtueval_r2_calls_the_calculator_natively(broker: None) -> None:
    benchmark_import(suite="wtueval", paths=[WTU_QUESTIONS / "questions.jsonl"])
    benchmark = Benchmark.objects.get(suite="wtueval")
    requests: list[ToolRequest] = []

    def answer(request: ToolRequest) -> Any:
        requests.append(request)
        return calculating(request)

    with FakeOpenAI(responder=oracle(answer)) as server:
        endpoint = make_endpoint(server.base_url)
        run = services.run_launch(
            benchmark=benchmark,
            task="R2",
            endpoint=endpoint,
            split="gsm8k-mini",
            options={"tool_mode": "native"},
        )
        execute_run(run)
    assert run.status == Run.Status.DONE, run.error
    assert run.metrics["accuracy"] == 100.0 and run.metrics["call_rate"] == 100.0
    assert len(requests) == 4 and all("Calculator" in r.tools for r in requests)
    second = [r for r in requests if r.tool_results]
    assert all(len(r.tool_results) == 2 for r in second)
    prediction = run.predictions.get(sample__external_id="1")
    first, calc, final = prediction.trace
    assert first["error"] == "malformed_arguments" and first["ok"] is False
    assert calc["action"] == "Calculator" and calc["observation"] == "139" and calc["ok"]
    assert final["action"] == "Finish" and final["stop"] == "final_answer"
    assert prediction.answer == "139"
    assert len(prediction.tool_calls) == 2


def test_wtueval_r4_counts_native_and_leaked_calls_as_tool_use(broker: None) -> None:
    benchmark_import(suite="wtueval", paths=[WTU_QUESTIONS / "questions.jsonl"])
    benchmark = Benchmark.objects.get(suite="wtueval")

    def answer(request: ToolRequest) -> Any:
        if "tomato" in request.last_user:
            return leaked_call("Calculator", {"expression": "1 + 1"})
        return "Final Answer: yes"

    with FakeOpenAI(responder=oracle(answer)) as server:
        endpoint = make_endpoint(server.base_url)
        run = services.run_launch(
            benchmark=benchmark,
            task="R4",
            endpoint=endpoint,
            split="boolq-mini",
            options={"tool_mode": "native"},
        )
        execute_run(run)
    assert run.status == Run.Status.DONE, run.error
    (prediction,) = run.predictions.all()
    assert prediction.leaked and prediction.tool_calls == []
    assert prediction.trace[-1]["error"] == "leaked_call"
    assert prediction.scores["tool_errors"] == 1.0 and prediction.scores["accuracy"] == 0.0
    assert run.metrics["tool_errors"] == 100.0


def test_wtueval_without_tools_has_no_native_form(broker: None) -> None:
    benchmark_import(suite="wtueval", paths=[WTU_QUESTIONS / "questions.jsonl"])
    benchmark = Benchmark.objects.get(suite="wtueval")
    endpoint = make_endpoint("http://127.0.0.1:9/v1")
    with pytest.raises(RunError, match=r"task 'R1' of .* has no native tool mode"):
        services.run_launch(
            benchmark=benchmark,
            task="R1",
            endpoint=endpoint,
            split="gsm8k-mini",
            options={"tool_mode": "native"},
        )


def test_an_imported_run_claims_no_tool_mode(client: Client) -> None:
    demo = Path(__file__).resolve().parents[2] / "benchmarks" / "demo" / "mtubench"
    benchmark_import(suite="mtubench", paths=[demo / "S-M_eval.jsonl"], benchmark_name="Demo")
    run = services.predictions_import(
        benchmark=Benchmark.objects.get(name="Demo"),
        task="S-M",
        path=demo / "S-M_demo_responses.jsonl",
        name="published",
        on_duplicate="first",
    )
    client.force_login(make_superuser())
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "published" in page and "Tool mode" not in page
