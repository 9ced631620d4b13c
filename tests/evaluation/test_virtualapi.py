"""The virtual API server: canonical cache keys, a StableToolBench cache served as imported,
the simulator on a miss (its prompt with the API's documentation and up to five examples), only
clean responses cached, provenance on every answer, tools marked down, and the HTTP endpoint."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.test import Client

from benchmarks.kit.base import ImportFormatError
from evaluation.models import ApiResponse, ServedCall, VirtualApi
from evaluation.virtualapi import simulator
from evaluation.virtualapi.cache import cache_import
from evaluation.virtualapi.keys import ApiName, call_key, canonical
from evaluation.virtualapi.server import DOWN_RESPONSE, Call, ThreadSteps, serve
from tests.evaluation.conftest import make_simulator
from tests.factories import make_superuser, make_user
from tests.fake_openai import FakeOpenAI, content_text

CACHE = Path(__file__).resolve().parents[1] / "benchmarks" / "fixtures" / "stabletoolbench_cache"
FERRY = ApiName("Travel", "ferry_times_for_Travel", "departures")


# --- keys (pure) --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"port": "Oban", "day": "monday"}, {"day": "monday", "port": "Oban"}),
        ({"n": 10}, {"n": 10.0}),
        ({"n": 10}, {"n": 1e1}),
        ({"n": 10}, {"n": "10"}),
        ({"x": 0.5}, {"x": "0.50"}),
        ({"a": {"z": 1, "y": [1, 2.0]}}, {"a": {"y": [1.0, 2], "z": 1.0}}),
    ],
)
def test_equal_arguments_written_differently_have_one_key(a: Any, b: Any) -> None:
    assert call_key(a) == call_key(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"n": 1}, {"n": True}),  # a boolean is not a number
        ({"id": "007"}, {"id": 7}),  # a text with leading zeros is an identifier
        ({"l": [1, 2]}, {"l": [2, 1]}),  # lists keep their order
        ({"q": "Oban"}, {"q": "oban"}),
        ({"a": None}, {}),
    ],
)
def test_different_arguments_have_different_keys(a: Any, b: Any) -> None:
    assert call_key(a) != call_key(b)


def test_canonical_numbers() -> None:
    assert canonical({"b": "1e3", "a": [" 5", "1,000", 2.50]}) == {
        "b": 1000,
        "a": [5, "1,000", 2.5],
    }


def test_api_names_as_the_reference_server_standardises_them() -> None:
    assert ApiName.from_request("Travel", "Ferry Times", "departures") == FERRY
    assert ApiName.from_request("Travel", "ferry_times_for_Travel", "departures") == FERRY
    assert (
        ApiName.from_folders("Weather", "snow_report", "resorts").tool == "snow_report_for_Weather"
    )


# --- the simulator's prompt and replies (pure) --------------------------------------------------


def test_the_simulator_prompt_has_the_documentation_and_at_most_five_examples() -> None:
    examples = [({"q": i}, {"answer": i}) for i in range(8)]
    prompt = simulator.build_prompt({"name": "departures"}, {"api_name": "x"}, examples)
    user = prompt.messages[1]["content"]
    assert prompt.messages[0]["content"].startswith("Imagine you are an API Server")
    assert '"name": "departures"' in user and "Example input 5" in user
    assert "Example input 6" not in user
    completion = simulator.build_prompt({}, {}, [], completion=True)
    assert completion.completion_text().endswith('{"error": "", "response": ')


@pytest.mark.parametrize(
    ("reply", "response", "clean"),
    [
        ('{"error": "", "response": {"sailings": ["09:00"]}}', {"sailings": ["09:00"]}, True),
        ('Sure! ```json\n{"error": "", "response": "ok then"}\n```', "ok then", True),
        ('{"error": "Rate limit reached", "response": ""}', "", False),
        ('{"error": "", "response": "404 Not Found"}', "404 Not Found", False),
        ("no json at all", "no json at all", False),
    ],
)
def test_simulator_replies(reply: str, response: Any, clean: bool) -> None:
    result = simulator.parse_reply(reply)
    assert (result.response, result.clean) == (response, clean)


@pytest.mark.parametrize(
    ("response", "clean"),
    [
        # Appendix D's categories
        ("Rate limit exceeded", False),
        ("HTTP error 503", False),
        ({"message": "Connection refused"}, False),
        ("The API is not available", False),
        ("Missing required parameter: port", False),
        ("name 'x' is not defined", False),
        ("Function executing from tools.ferry raised", False),
        ({"message": "ACCESS_DENIED"}, False),
        ("Unauthorized", False),
        ({"code": 404}, False),
        ("Error 500", False),
        # data that only looks like it
        ({"price": 404, "currency": "EUR"}, True),
        ({"count": 500, "status": "ok"}, True),
        ({"parameters": ["port", "day"]}, True),
        ({"connections": 3}, True),
        ({"zip code": 40401}, True),
    ],
)
def test_what_the_cache_keeps_follows_appendix_d_and_spares_data(
    response: Any, clean: bool
) -> None:
    assert simulator.is_clean(response, "") is clean


def test_a_base_models_reply_continues_the_opened_object() -> None:
    result = simulator.parse_reply('{"temp": 11}}', completion=True)
    assert result.response == {"temp": 11} and result.clean


# --- the server against the database ------------------------------------------------------------


def serve_now(call: Call, steps: Any = None, **kwargs: Any) -> Any:
    return async_to_sync(serve)(call, steps or ThreadSteps(), **kwargs)


@pytest.fixture
def simulator_server(settings: Any) -> Any:
    def respond(body: dict[str, Any]) -> str:
        text = content_text(body)
        if "snow" in text:
            return '{"error": "", "response": {"snow_cm": 40}}'
        return '{"error": "Rate limit reached", "response": ""}'

    with FakeOpenAI(responder=respond) as server:
        make_simulator(settings, server.base_url, model="sim-model")
        yield server


@pytest.mark.django_db
def test_an_imported_cache_is_served_as_is_whatever_the_key_order(simulator_server: Any) -> None:
    counts = cache_import(CACHE)
    # two keys of the ferry file are the same call in another order: one response
    assert counts["read"] > counts["calls"]
    assert counts["added"] == counts["calls"]
    served = serve_now(Call(FERRY, {"day": "monday", "port": "Oban"}))
    assert served.source == "cache" and served.origin == "imported"
    assert served.response == {"sailings": ["07:15", "11:00", "16:45"]}
    # the stored text stays a text, as in the file
    late = serve_now(Call(FERRY, {"late": True, "day": "friday", "port": "Craignure"}))
    assert late.response == '{"sailings": ["21:30"]}'
    # an error response is served as stored too
    assert serve_now(Call(FERRY, {"port": "Tobermory", "day": None, "night": False})).error
    assert simulator_server.total == 0  # nothing was simulated
    # importing again adds nothing
    assert cache_import(CACHE)["added"] == 0


@pytest.mark.django_db
def test_a_broken_cache_file_imports_nothing(tmp_path: Path) -> None:
    copy = tmp_path / "cache"
    shutil.copytree(CACHE, copy)
    (copy / "Weather" / "snow_report" / "resorts.json").write_text('{"{}": {"error": ""}}')
    with pytest.raises(ImportFormatError, match=r"resorts.json.*response"):
        cache_import(copy)
    assert not ApiResponse.objects.exists()


@pytest.mark.django_db
def test_a_miss_is_simulated_with_examples_and_cached_only_when_clean(
    simulator_server: Any,
) -> None:
    cache_import(CACHE)
    snow = ApiName("Weather", "snow_report_for_Weather", "resorts")
    doc = {"name": "resorts", "description": "Snow depth at ski resorts."}
    served = serve_now(Call(snow, {"resort": "Zermatt"}), documentation=doc)
    assert (served.source, served.response) == ("simulated", {"snow_cm": 40})
    (request,) = simulator_server.records()
    prompt = request.content
    assert "Snow depth at ski resorts." in prompt and "Zermatt" in prompt
    assert "Example input 1" in prompt  # the imported calls of the same API
    stored = ApiResponse.objects.get(api__api="resorts", origin="simulated")
    assert stored.simulator == "sim-model" and stored.response == {"snow_cm": 40}
    # the same call again is a cache hit, in another key order and number form
    again = serve_now(Call(snow, {"resort": "Zermatt"}))
    assert (again.source, again.origin) == ("cache", "simulated")
    assert simulator_server.total == 1
    # an error answer is served but not cached
    ferry = serve_now(Call(FERRY, {"port": "Mallaig"}))
    assert ferry.source == "simulated" and ferry.error == "Rate limit reached"
    assert not ApiResponse.objects.filter(api__api="departures", origin="simulated").exists()
    sources = list(ServedCall.objects.order_by("id").values_list("source", flat=True))
    assert sources == ["simulated", "cache", "simulated"]


@pytest.mark.django_db
def test_a_simulated_response_postgresql_cannot_store_as_read_is_stored_as_jsonb_can(
    settings: Any,
) -> None:
    # given a simulator answering with numbers JSON cannot write and a NUL, for a call whose
    # arguments (a model's) hold a lone surrogate
    reply = '{"error": "", "response": {"snow_cm": 1e999, "depth": NaN, "note": "a\\u0000b"}}'
    with FakeOpenAI(responder=lambda body: reply) as server:
        make_simulator(settings, server.base_url, model="sim-model")
        snow = ApiName("Weather", "snow_report_for_Weather", "resorts")
        served = serve_now(Call(snow, {"resort": "Zer\ud800matt"}), documentation={})
        (request,) = server.records()
    # then the simulator was asked with the surrogate as U+FFFD (what UTF-8 can carry), the
    # answer is served as read, and cached with null for the numbers and the escape
    assert "Zer\ufffdmatt" in request.content
    assert served.source == "simulated" and served.response["note"] == "a\x00b"
    stored = ApiResponse.objects.get(api__api="resorts", origin="simulated")
    assert stored.response == {"snow_cm": None, "depth": None, "note": "a\\u0000b"}
    assert stored.arguments == {"resort": "Zer\\ud800matt"}


@pytest.mark.django_db
def test_a_tool_marked_down_skips_the_cache(simulator_server: Any) -> None:
    cache_import(CACHE)
    cached = {"day": "monday", "port": "Oban"}
    failed = serve_now(Call(FERRY, cached, down="fail"))
    assert (failed.source, failed.response) == ("down", DOWN_RESPONSE)
    simulated = serve_now(Call(FERRY, cached, down="simulate"))
    assert simulated.source == "simulated"  # straight to the simulator, not the cache
    assert simulator_server.total == 1


@pytest.mark.django_db
def test_without_a_simulator_a_miss_says_so(settings: Any) -> None:
    settings.VIRTUAL_API_SIMULATOR = "nobody"
    served = serve_now(Call(FERRY, {"port": "Nowhere"}))
    assert served.source == "failed" and "no simulator" in served.error


@pytest.mark.django_db
def test_a_simulator_without_its_key_here_is_no_simulator(settings: Any, monkeypatch: Any) -> None:
    monkeypatch.delenv("SIMULATOR_UNSET_API_KEY", raising=False)
    settings.ENDPOINT_KEY_VARIABLES = ["SIMULATOR_UNSET_API_KEY"]
    make_simulator(
        settings, "http://127.0.0.1:9/v1", name="keyed", api_key_env="SIMULATOR_UNSET_API_KEY"
    )
    served = serve_now(Call(FERRY, {"port": "Nowhere"}))
    assert served.source == "failed" and "SIMULATOR_UNSET_API_KEY" in served.detail
    assert "is not set" in served.detail
    assert ServedCall.objects.get().source == "failed"  # logged like any answer


# --- over HTTP ----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_http_endpoint_speaks_stabletoolbenchs_request(
    client: Client, settings: Any, simulator_server: Any
) -> None:
    settings.VIRTUAL_API_KEYS = ["secret-key"]
    cache_import(CACHE)
    body = {
        "category": "Travel",
        "tool_name": "Ferry Times",
        "api_name": "departures",
        "tool_input": json.dumps({"port": "Oban", "day": "monday"}),
        "strip": "filter",
        "toolbench_key": "secret-key",
    }
    answer = client.post("/virtual/", body, content_type="application/json")
    assert answer.status_code == 200
    assert answer.json() == {
        "error": "",
        "response": {"sailings": ["07:15", "11:00", "16:45"]},
        "source": "cache",
        "origin": "imported",
    }
    wrong = client.post(
        "/virtual/", {**body, "toolbench_key": "guess"}, content_type="application/json"
    )
    assert wrong.status_code == 403
    bad = client.post(
        "/virtual/", {**body, "tool_input": "[1, 2]"}, content_type="application/json"
    )
    assert bad.status_code == 400 and "tool_input" in bad.json()["error"]
    # a signed-in researcher may call it from a page (with its CSRF token)
    staff = Client(enforce_csrf_checks=True)
    staff.force_login(make_superuser())
    no_token = {k: v for k, v in body.items() if k != "toolbench_key"}
    assert staff.post("/virtual/", no_token, content_type="application/json").status_code == 403
    staff.get("/runs/")
    token = staff.cookies["csrftoken"].value
    ok = staff.post("/virtual/", no_token, content_type="application/json", HTTP_X_CSRFTOKEN=token)
    assert ok.status_code == 200 and ok.json()["source"] == "cache"
    annotator = Client()
    annotator.force_login(make_user())
    assert annotator.post("/virtual/", no_token, content_type="application/json").status_code == 403
    assert VirtualApi.objects.filter(tool="ferry_times_for_Travel").count() >= 1


@pytest.mark.django_db
def test_the_http_endpoint_says_so_when_the_simulator_fails(client: Client, settings: Any) -> None:
    settings.VIRTUAL_API_KEYS = ["secret-key"]
    with FakeOpenAI(faults={"500": 1.0}) as server:
        make_simulator(settings, server.base_url, max_attempts=2)
        answer = client.post(
            "/virtual/",
            {
                "category": "Travel",
                "tool_name": "Ferry Times",
                "api_name": "departures",
                "tool_input": {"port": "Mallaig"},
                "toolbench_key": "secret-key",
            },
            content_type="application/json",
        )
    assert answer.status_code == 502
    assert "simulator did not answer" in answer.json()["error"]
    assert server.total == 2  # every allowed attempt


# --- the diversity check ------------------------------------------------------------------------


def diversity_model(body: dict[str, Any]) -> str:
    """Writes a new call each time it is shown more examples; simulates by echoing the call,
    except for the tide API, which always answers the same."""
    text = content_text(body)
    if "Imagine you are an API requester" in text:
        written = text.count("Example input")
        return json.dumps({"harbour": f"H{written}", "date": f"2024-03-0{written + 1}"})
    if '"api_name": "tide_times"' in text:
        return '{"error": "", "response": {"tides": "always the same"}}'
    call = re.search(r'"tool_input": "(.*?)", "strip"', text)
    return json.dumps({"error": "", "response": {"echo": call.group(1) if call else text[-40:]}})


@pytest.mark.django_db
def test_the_diversity_check_counts_apis_that_answer_two_calls_alike(settings: Any) -> None:
    import io

    from django.core.management import call_command

    for api, doc in (("tide_times", {"name": "tide_times"}), ("harbour_search", {"name": "hs"})):
        VirtualApi.objects.create(
            category="Weather", tool="tide_tables_demo_for_Weather", api=api, documentation=doc
        )
    with FakeOpenAI(responder=diversity_model) as server:
        make_simulator(settings, server.base_url, model="sim-model")
        out = io.StringIO()
        call_command("simulator_diversity", "--apis", "5", "--json", stdout=out)
    data = json.loads(out.getvalue())
    assert (data["apis"], data["checked"], data["identical"]) == (2, 2, 1)
    by_api = {row["api"].split("/")[1]: row for row in data["details"]}
    assert by_api["tide_times"]["identical"] and by_api["tide_times"]["distinct_responses"] == 1
    assert by_api["harbour_search"]["distinct_responses"] == 5
    assert {row["calls"] for row in data["details"]} == {5}
    # fresh simulations: nothing of it was cached
    assert not ApiResponse.objects.exists()


@pytest.mark.django_db
def test_a_real_api_on_a_private_address_is_never_called(
    simulator_server: Any, settings: Any
) -> None:
    from evaluation.models import RealApi

    # a configured real API whose host is allowed but resolves to loopback (here: is it)
    settings.VIRTUAL_API_ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
    RealApi.objects.create(
        category="Weather",
        tool="snow_report_for_Weather",
        url=f"{simulator_server.base_url}/{{api}}",
    )
    snow = ApiName("Weather", "snow_report_for_Weather", "resorts")
    served = serve_now(Call(snow, {"resort": "Verbier"}))
    # refused before any connection: the simulator answered instead, and the log says why
    assert served.source == "simulated"
    assert simulator_server.count_for("Verbier") == 1  # the simulator's request, nothing else
    log = ServedCall.objects.get()
    assert log.source == "simulated" and "loopback" in log.detail
    assert not ApiResponse.objects.filter(origin="real").exists()


@pytest.mark.django_db
def test_calls_the_simulator_does_not_answer_are_not_answers_alike(settings: Any) -> None:
    from evaluation.virtualapi.diversity import diversity_check, summary

    def model(body: dict[str, Any]) -> str:
        text = content_text(body)
        if "Imagine you are an API requester" not in text and "ferry_status" in text:
            raise RuntimeError("the simulator is down for this API")  # a 500, every attempt
        return diversity_model(body)

    for api in ("ferry_status", "tide_times"):
        VirtualApi.objects.create(
            category="Weather", tool="demo_for_Weather", api=api, documentation={"name": api}
        )
    apis = list(VirtualApi.objects.order_by("api"))
    with FakeOpenAI(responder=model) as server:
        make_simulator(settings, server.base_url, max_attempts=1)
        results = async_to_sync(diversity_check)(apis, ThreadSteps(), calls=3, attempts=5)
    broken, tide = results
    assert broken.api.endswith("ferry_status") and len(broken.calls) == 3
    assert broken.responses == [] and not broken.identical
    assert "the simulator failed" in broken.note
    data = summary(results)
    assert (data["apis"], data["checked"], data["identical"]) == (2, 1, 1)  # only tide counts
    assert tide.identical and data["details"][1]["answered"] == 3
