"""BFCL's web search tasks run end to end through the platform, in both modes, their two
functions served by the virtual API server: the demo entries (benchmarks/demo/bfcl/, ours,
fictional facts) answered by a fake OpenAI-compatible model that searches, then reads the
snippets or, without them, fetches the first result's page.

The reader, by hand: it searches the question's keywords; when the results have a "body" it
answers with the first body; otherwise it fetches the first result's href and answers with the
page's content ("I do not know" when the fetch answered an error). The cache (seeded here) holds:
the three searches (Kessel: body says 1987; Juniper, in SerpAPI's shape: snippet says Mira
Okafor; Alder: body names no height) and two pages (Kessel's: 1987; Alder's: 212). Juniper's
page is not cached, no Real API is configured and the simulator names no endpoint, so its fetch
fails.

- web_search_base: Kessel passes (1987), Juniper passes (Mira Okafor), Alder fails: 66.67.
- web_search_no_snippet: Kessel passes (page: 1987), Juniper fails (its page failed), Alder
  passes (page: 212): 66.67, and no request to the model holds a snippet.
With the simulator configured (a second fake server), Juniper's page is simulated (saying Mira
Okafor), so no_snippet scores 100, and the simulated page is cached for the next call."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from benchmarks.kit.protocol import SERVED_TOOL_OPTIONS
from benchmarks.kit.registry import get_suite
from benchmarks.models import Benchmark
from benchmarks.services import benchmark_import
from evaluation import services
from evaluation.models import ApiResponse, Prediction, RealApi, Run, ServedCall
from evaluation.overall import overall_board
from evaluation.virtualapi.keys import ApiName, call_key, canonical
from evaluation.virtualapi.server import api_get
from tests.evaluation.conftest import execute_run, make_endpoint, make_simulator
from tests.factories import make_researcher
from tests.fake_openai import FakeCall, FakeOpenAI, ToolRequest, oracle, tool_reply

pytestmark = pytest.mark.django_db(transaction=True)

DEMO = Path(__file__).resolve().parents[3] / "benchmarks" / "demo" / "bfcl"
FILES = ["BFCL_v4_web_search.json"]
FORMAT = "For your final answer to the user, you must respond in this format"
RESULTS = "[{'role': 'tool'"
KEYWORDS = {
    "In which year did the bridge over the Kessel strait, designed by Ana Varo, open?": (
        "Kessel strait bridge Ana Varo"
    ),
    "Who founded the company that makes the Juniper-9 weather balloon?": "Juniper-9 maker",
    "How tall, in metres, is the tallest tower of Port Alder?": "Port Alder tallest tower",
}
SEARCHES: dict[str, Any] = {
    "Kessel strait bridge Ana Varo": [
        {
            "title": "Kessel bridge",
            "href": "https://demo.example/kessel",
            "body": "The Kessel bridge by Ana Varo opened in 1987.",
        }
    ],
    "Juniper-9 maker": {
        "organic_results": [
            {
                "title": "Skyloft",
                "link": "https://demo.example/juniper",
                "snippet": "The Juniper-9 is made by Skyloft, founded by Mira Okafor.",
                "position": 1,
            }
        ]
    },
    "Port Alder tallest tower": [
        {
            "title": "Towers of Port Alder",
            "href": "https://demo.example/alder",
            "body": "A list of the towers of Port Alder.",
        }
    ],
}
PAGES = {
    "https://demo.example/kessel": {"content": "Opened in 1987, the bridge spans the strait."},
    "https://demo.example/alder": {"content": "The Alder Spire is 212 m tall."},
}
SNIPPETS = ("opened in 1987.", "founded by Mira Okafor.", "A list of the towers")


def _api(function: str) -> ApiName:
    return ApiName.from_folders("BFCL", "WebSearchAPI", function)


def _seed() -> None:
    for function, calls in (
        ("search_engine_query", {k: {"keywords": k} for k in SEARCHES}),
        ("fetch_url_content", {u: {"url": u} for u in PAGES}),
    ):
        api = api_get(_api(function))
        for name, arguments in calls.items():
            response = SEARCHES[name] if function == "search_engine_query" else PAGES[name]
            ApiResponse.objects.create(
                api=api,
                key=call_key(arguments),
                arguments=canonical(arguments),
                response=response,
                origin=ApiResponse.Origin.REAL,
            )


def _import() -> Benchmark:
    benchmark_import(suite="bfcl", paths=[DEMO / f for f in FILES], benchmark_name="Web")
    return Benchmark.objects.get(name="Web")


def _said(message: dict[str, Any]) -> bool:
    content = str(message.get("content") or "")
    return message.get("role") == "user" and not content.startswith(RESULTS)


def _last_observation(messages: list[dict[str, Any]]) -> Any:
    last = messages[-1]
    if last.get("role") == "tool":
        return json.loads(last["content"])
    rows = ast.literal_eval(str(last["content"]))  # the test's own reading of text mode
    return json.loads(rows[-1]["content"])


class Reader:
    """The searching model of the module docstring."""

    def __init__(self) -> None:
        self.requests: list[ToolRequest] = []

    def _call(self, native: bool, name: str, arguments: dict[str, str]) -> Any:
        if native:
            return tool_reply(FakeCall(name, arguments))
        written = ", ".join(f"{key}={value!r}" for key, value in arguments.items())
        return f"[{name}({written})]"

    def __call__(self, request: ToolRequest) -> Any:
        self.requests.append(request)
        messages = request.body["messages"]
        native = bool(request.body.get("tools"))
        if _said(messages[-1]):
            question = str(messages[-1]["content"])
            return self._call(native, "search_engine_query", {"keywords": KEYWORDS[question]})
        seen = _last_observation(messages)
        if isinstance(seen, list):
            if seen and "body" in seen[0]:
                return repr({"answer": seen[0]["body"], "context": "the snippet"})
            return self._call(native, "fetch_url_content", {"url": seen[0]["href"]})
        said = seen.get("content") or "I do not know"
        return repr({"answer": said, "context": "the page"})


def _run(benchmark: Benchmark, task: str, mode: str, model: Reader) -> Run:
    with FakeOpenAI(responder=oracle(model)) as server:
        endpoint = make_endpoint(server.base_url, name=f"reader-{task}-{mode}")
        run = services.run_launch(
            benchmark=benchmark, task=task, endpoint=endpoint, options={"tool_mode": mode}
        )
        execute_run(run)
    return run


def _scores(run: Run) -> dict[str, float]:
    return {p.sample.external_id: p.scores["accuracy"] for p in run.predictions.all()}


@pytest.mark.parametrize("mode", ["text", "native"])
def test_both_categories_served_from_the_cache(settings: Any, client: Any, mode: str) -> None:
    settings.VIRTUAL_API_SIMULATOR = "nobody"
    benchmark = _import()
    _seed()
    base_model, bare_model = Reader(), Reader()
    base = _run(benchmark, "web_search_base", mode, base_model)
    bare = _run(benchmark, "web_search_no_snippet", mode, bare_model)
    for run in (base, bare):
        assert run.status == Run.Status.DONE, run.error
        assert run.metrics == {"accuracy": 66.67, "n": 3.0}, run.metrics
        assert not run.predictions.exclude(status=Prediction.Status.DONE).exists()
    assert _scores(base) == {
        "web_search_demo_0": 100.0,
        "web_search_demo_1": 100.0,
        "web_search_demo_2": 0.0,
    }
    assert _scores(bare) == {
        "web_search_demo_0": 100.0,
        "web_search_demo_1": 0.0,
        "web_search_demo_2": 100.0,
    }
    # BFCL's answer format first; text mode after BFCL's system prompt with the docs
    for model in (base_model, bare_model):
        system = str(model.requests[0].body["messages"][0]["content"])
        assert FORMAT in system
        if mode == "text":
            assert system.startswith("You are an expert in composing functions.")
        else:
            assert model.requests[0].tools == ("search_engine_query", "fetch_url_content")
    # the snippets reached the base model, never the no-snippet one
    seen_base = json.dumps([r.body["messages"] for r in base_model.requests])
    seen_bare = json.dumps([r.body["messages"] for r in bare_model.requests])
    assert all(snippet in seen_base for snippet in SNIPPETS)
    assert not any(snippet in seen_bare for snippet in SNIPPETS)
    assert '\\"body\\"' not in seen_bare
    # the trace keeps every step and where each answer came from
    juniper = bare.predictions.get(sample__external_id="web_search_demo_1")
    steps = [(row.get("action"), row.get("source")) for row in juniper.trace]
    assert steps == [
        ("search_engine_query", "cache"),
        ("fetch_url_content", "failed"),
        (None, None),
    ]
    assert juniper.trace[0]["origin"] == "real"
    assert json.loads(juniper.trace[0]["observation"]) == [
        {"title": "Skyloft", "href": "https://demo.example/juniper"}
    ]
    assert "error" in json.loads(juniper.trace[1]["observation"])
    assert juniper.answer["sources"] == {"cache": 1, "failed": 1}
    assert juniper.answer["calls"] == [
        ["search_engine_query(keywords='Juniper-9 maker')"],
        ["fetch_url_content(url='https://demo.example/juniper')"],
    ]
    assert juniper.note == "none of the accepted answers is in the final answer"
    kessel = base.predictions.get(sample__external_id="web_search_demo_0")
    assert json.loads(kessel.trace[0]["observation"]) == SEARCHES["Kessel strait bridge Ana Varo"]
    # never comparable: the run's page says so, and the overall score never counts the runs
    client.force_login(make_researcher())
    page = client.get(reverse("evaluation:run-detail", args=[base.pk])).content.decode()
    assert "Not comparable" in page
    assert "not from BFCL&#x27;s SerpAPI and the live web" in page
    board = overall_board(benchmark)
    assert board is not None
    assert set(board.never_counted) == {"web_search_base", "web_search_no_snippet"}
    assert board.rows == []  # no run the formula counts


def test_the_overall_leaves_web_search_missing_even_beside_counted_runs(settings: Any) -> None:
    settings.VIRTUAL_API_SIMULATOR = "nobody"
    benchmark_import(
        suite="bfcl",
        paths=[DEMO / "BFCL_v4_web_search.json", DEMO / "BFCL_v4_simple_python.json"],
        benchmark_name="Web",
    )
    benchmark = Benchmark.objects.get(name="Web")
    _seed()
    with FakeOpenAI(responder=oracle(Reader())) as server:
        endpoint = make_endpoint(server.base_url, name="reader")
        for task in ("web_search_base", "simple_python"):
            run = services.run_launch(
                benchmark=benchmark, task=task, endpoint=endpoint, options={"tool_mode": "native"}
            )
            execute_run(run)
            assert run.status == Run.Status.DONE, run.error
    board = overall_board(benchmark)
    assert board is not None and len(board.rows) == 1
    cells = {cell.column.name: cell for cell in board.rows[0].cells}
    for task in ("web_search_base", "web_search_no_snippet"):
        assert cells[task].figure.value is None and cells[task].run is None
        assert cells[task].missing.startswith("never counted: its search results")
        assert "not comparable with BFCL's published ones" in cells[task].missing
    assert cells["web_search"].figure.missing == ("web_search_base", "web_search_no_snippet")
    assert cells["simple_python"].run is not None
    assert "web_search_base" not in board.rows[0].runs


def test_a_page_the_cache_lacks_is_simulated_and_then_cached(settings: Any) -> None:
    benchmark = _import()
    _seed()
    page = {"content": "Skyloft was founded in 2011 by Mira Okafor."}
    simulated = json.dumps({"error": "", "response": page})
    with FakeOpenAI(responder=oracle(lambda request: simulated)) as simulator:
        make_simulator(settings, simulator.base_url)
        run = _run(benchmark, "web_search_no_snippet", "native", Reader())
    assert run.status == Run.Status.DONE, run.error
    assert run.metrics == {"accuracy": 100.0, "n": 3.0}
    juniper = run.predictions.get(sample__external_id="web_search_demo_1")
    assert [row.get("source") for row in juniper.trace[:2]] == ["cache", "simulated"]
    assert json.loads(juniper.trace[1]["observation"]) == page
    cached = ApiResponse.objects.get(
        api__api="fetch_url_content", key=call_key({"url": "https://demo.example/juniper"})
    )
    assert cached.origin == ApiResponse.Origin.SIMULATED and cached.response == page


def test_a_launch_is_refused_where_the_functions_are_not_served(tmp_path: Path) -> None:
    for sub in ("possible_answer", "multi_turn_func_doc"):
        (tmp_path / sub).mkdir()
    (tmp_path / "BFCL_v4_web_search.json").write_text(
        (DEMO / "BFCL_v4_web_search.json").read_text()
    )
    (tmp_path / "possible_answer" / "BFCL_v4_web_search.json").write_text(
        (DEMO / "possible_answer" / "BFCL_v4_web_search.json").read_text()
    )
    only_search = (DEMO / "multi_turn_func_doc" / "web_search.json").read_text().splitlines()[0]
    (tmp_path / "multi_turn_func_doc" / "web_search.json").write_text(only_search + "\n")
    benchmark_import(
        suite="bfcl", paths=[tmp_path / "BFCL_v4_web_search.json"], benchmark_name="Half"
    )
    benchmark = Benchmark.objects.get(name="Half")
    endpoint = make_endpoint("http://127.0.0.1:9/v1", name="nowhere")
    with pytest.raises(services.RunError) as refused:
        services.run_launch(benchmark=benchmark, task="web_search_base", endpoint=endpoint)
    message = str(refused.value)
    assert "serves no fetch_url_content to this run" in message
    assert "web_search.json" in message


def test_only_the_web_search_tasks_take_the_served_tools_options() -> None:
    suite = get_suite("bfcl")
    served = {option.name for option in SERVED_TOOL_OPTIONS}
    for task in ("web_search_base", "web_search_no_snippet"):
        assert served <= {option.name for option in suite.options(task)}
    for task in ("memory_kv", "multi_turn_base"):
        assert not served & {option.name for option in suite.options(task)}
    for task in ("web_search_base", "web_search_no_snippet"):
        assert "not comparable with BFCL's published ones" in suite.tasks[task].not_comparable
    assert all(not suite.tasks[t].not_comparable for t in ("memory_kv", "simple_python"))


def test_a_real_api_on_loopback_is_never_called_and_the_trace_says_so(settings: Any) -> None:
    """A search service configured as a Real API for both functions, its host allowed, but on
    loopback (the test's server): the server refuses it before connecting, the page the cache
    lacks fails (no simulator), and the trace and the call log say where it came from."""
    settings.VIRTUAL_API_SIMULATOR = "nobody"
    settings.VIRTUAL_API_ALLOWED_HOSTS = ["127.0.0.1"]
    benchmark = _import()
    _seed()
    with FakeOpenAI() as service:  # logs every request, whatever its path
        RealApi.objects.create(
            category="BFCL", tool="WebSearchAPI_for_BFCL", url=f"{service.base_url}/{{api}}"
        )
        run = _run(benchmark, "web_search_no_snippet", "native", Reader())
        assert service.total == 0
    assert run.metrics == {"accuracy": 66.67, "n": 3.0}
    juniper = run.predictions.get(sample__external_id="web_search_demo_1")
    assert [row.get("source") for row in juniper.trace[:2]] == ["cache", "failed"]
    failed = ServedCall.objects.get(run=run, source="failed")
    assert "loopback" in failed.detail
