"""Tokens, cost and budget (issue 16): the server's token counts read once whatever the API,
summed per item, per run and per judge job; prices per million tokens; a budget that stops a
run before it would pass it. Real PostgreSQL, the fake OpenAI server at the edge (its usage
counts 4 characters a token)."""

from __future__ import annotations

import asyncio
import io
import json
import math
import random
from decimal import Decimal
from pathlib import Path
from typing import Any

import openai
import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from benchmarks.kit.protocol import Prompt
from evaluation import lifecycle
from evaluation.lifecycle import WorkKind
from evaluation.models import Endpoint, ResponseCache, Run
from evaluation.work.budget import Prices, Spending, Tokens, spent
from evaluation.work.caller import (
    Caller,
    EndpointConfig,
    cut_at_stop,
    request_body,
    token_counts,
)
from evaluation.work.engine import ItemCalls
from tests.evaluation.conftest import make_endpoint
from tests.evaluation.test_caller import MemoryCache
from tests.evaluation.test_lifecycle import ANSWERS, KINDS, PAGES, Work
from tests.evaluation.test_views import csv_rows
from tests.factories import make_superuser
from tests.fake_openai import FakeOpenAI, content_text

ANSWER = "Answer: 42!!!!!!"  # 16 characters: 4 tokens


def answer(request: dict[str, Any]) -> str:
    return ANSWER


# --- token_counts -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (
            {
                "prompt_tokens": 120,
                "completion_tokens": 7,
                "total_tokens": 127,
                "prompt_tokens_details": {"cached_tokens": 64, "audio_tokens": 0},
            },
            {"prompt_tokens": 120, "completion_tokens": 7, "cached_tokens": 64},
        ),
        # the Responses API names them otherwise
        (
            {
                "input_tokens": 50,
                "input_tokens_details": {"cached_tokens": 32},
                "output_tokens": 9,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 59,
            },
            {"prompt_tokens": 50, "completion_tokens": 9, "cached_tokens": 32},
        ),
        # servers that say less (llama.cpp, older vLLM): what is missing is 0
        (
            {"prompt_tokens": 10, "completion_tokens": 3, "prompt_tokens_details": None},
            {"prompt_tokens": 10, "completion_tokens": 3, "cached_tokens": 0},
        ),
        (
            {"prompt_tokens": None, "completion_tokens": 2},
            {"prompt_tokens": 0, "completion_tokens": 2, "cached_tokens": 0},
        ),
        (None, {}),
        ({}, {}),
    ],
)
def test_token_counts_read_chat_and_responses_usage_alike(
    usage: dict[str, Any] | None, expected: dict[str, int]
) -> None:
    assert token_counts(usage) == expected


# --- one item's calls ---------------------------------------------------------------------------


def config_for(server: FakeOpenAI, style: str = "chat") -> EndpointConfig:
    return EndpointConfig(
        id=1,
        base_url=server.base_url,
        model="fake-model",
        api_key="k",
        style=style,  # type: ignore[arg-type]
        params={},
        timeout=5.0,
        max_attempts=2,
        max_concurrency=2,
        requests_per_minute=None,
    )


def item_usage(server: FakeOpenAI, prompts: list[Prompt], style: str = "chat") -> dict[str, int]:
    """Ask the prompts in turn as one item's calls; the item's summed usage."""

    async def run() -> dict[str, int]:
        config = config_for(server, style)
        client = openai.AsyncOpenAI(base_url=config.base_url, api_key="k", max_retries=0)
        caller = Caller(
            config, client=client, cache=MemoryCache(), slots=None, rate=None, rng=random.Random(0)
        )
        calls = ItemCalls(caller, None)
        try:
            for prompt in prompts:
                await calls(prompt)
        finally:
            await client.close()
        return calls.usage()

    return asyncio.run(run())


FIRST = [{"role": "user", "content": "What is six times seven?"}]  # 24 characters: 6 tokens
SECOND = [  # 24 + 1 + 16 + 1 + 10 = 52 characters: 13 tokens, the first 6 seen before
    *FIRST,
    {"role": "assistant", "content": ANSWER},
    {"role": "user", "content": "And eight?"},
]


def test_an_items_tokens_are_summed_over_its_calls_as_the_server_reported_them() -> None:
    with FakeOpenAI(responder=answer) as server:
        usage = item_usage(server, [Prompt(messages=FIRST), Prompt(messages=SECOND)])
    assert usage == {
        "calls": 2,
        "http_attempts": 2,
        "cached_calls": 0,
        "prompt_tokens": 6 + 13,
        "completion_tokens": 4 + 4,
        "cached_tokens": 0 + 6,
    }


def test_a_call_answered_by_the_response_cache_costs_no_tokens() -> None:
    with FakeOpenAI(responder=answer) as server:
        usage = item_usage(server, [Prompt(messages=FIRST), Prompt(messages=FIRST)])
        assert server.total == 1
    assert usage["cached_calls"] == 1
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == (6, 4)


# --- what runs and judge jobs spent: pages, leaderboard, CSV ----------------------------------


def settled_items(kind: WorkKind, parent: Any) -> list[Any]:
    return list(getattr(parent, kind.items).order_by("position"))


@pytest.fixture
def work(tmp_path: Path) -> Work:
    return Work(tmp_path)


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("broker")
@pytest.mark.parametrize("name", KINDS)
def test_work_shows_the_tokens_the_server_reported_and_their_cost(
    name: str, work: Work, client: Client
) -> None:
    kind = KINDS[name]
    with FakeOpenAI(responder=lambda request: ANSWERS[name]) as server:
        # Per million tokens: 0.001 an input token, 0.0005 a cached one, 0.002 an output one.
        priced = make_endpoint(
            server.base_url,
            name="priced",
            price_in=Decimal(1000),
            price_out=Decimal(2000),
            price_cached=Decimal(500),
        )
        parent = work.make(name, ["pending"] * 4, endpoint=priced)
        lifecycle.chunk(kind, parent.pk, 0, 99)
    answered = settled_items(kind, parent)
    # each item's tokens are the server's counts (4 characters a token) of what it was sent
    for item in answered:
        assert item.prompt_tokens == math.ceil(len(content_text(item.prompt)) / 4) > 0
        assert item.completion_tokens == math.ceil(len(ANSWERS[name]) / 4)
        assert item.usage["prompt_tokens"] == item.prompt_tokens
    prompt = sum(i.prompt_tokens for i in answered)
    completion = sum(i.completion_tokens for i in answered)
    cached = sum(i.cached_tokens for i in answered)
    cost = (
        (prompt - cached) * Decimal("0.001")
        + cached * Decimal("0.0005")
        + completion * Decimal("0.002")
    )
    # the page shows them, and the cost at the endpoint's prices
    client.force_login(make_superuser())
    prefix = PAGES[name][0]
    page = client.get(f"/{prefix}/{parent.pk}/").content.decode()
    assert f"<strong>{prompt}</strong> tokens in" in page
    assert f"({cached} cached)" in page
    assert f"<strong>{completion}</strong> tokens out" in page
    assert f"cost <strong>{cost:.4f}</strong>" in page
    if name == "run":
        board = client.get(f"/leaderboard/{work.benchmark.pk}/answer/").content.decode()
        assert f"{prompt} / {completion}" in board and f"{cost:.4f}" in board
        header, *rows = csv_rows(client, parent)
        at = header.index("prompt_tokens")
        assert header[at : at + 4] == [
            "prompt_tokens",
            "completion_tokens",
            "cached_tokens",
            "cost",
        ]
        assert sum(int(row[at]) for row in rows) == prompt
        assert sum(Decimal(row[at + 3]) for row in rows) == cost
        listed = client.get("/runs/").content.decode()
        assert f"{prompt} / {completion}" in listed and f"{cost:.4f}" in listed
        api = client.get(f"/api/runs/{parent.pk}/").json()
        assert api["tokens"] == {"prompt": prompt, "completion": completion, "cached": cached}
        assert Decimal(api["cost"]) == cost


def test_cost_counts_cached_tokens_at_the_input_price_unless_told() -> None:
    tokens = Tokens(prompt=1_000_000, completion=500_000, cached=400_000)
    assert Prices(Decimal(2), Decimal(8)).cost(tokens) == Decimal(2 + 4)
    assert Prices(Decimal(2), Decimal(8), Decimal("0.5")).cost(tokens) == Decimal("1.2") + Decimal(
        "0.2"
    ) + Decimal(4)
    assert spent(tokens, None) == 1_500_000


# --- a budget -----------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("broker")
@pytest.mark.parametrize("name", KINDS)
def test_a_budget_stops_half_way_and_a_larger_one_finishes_exactly_the_rest(
    name: str, work: Work
) -> None:
    kind = KINDS[name]
    with FakeOpenAI(responder=lambda request: ANSWERS[name]) as server:
        live = make_endpoint(server.base_url, name="live")
        # given what answering six items costs (then forgotten by the response cache)
        measured = work.make(name, ["pending"] * 6, endpoint=live)
        lifecycle.chunk(kind, measured.pk, 0, 99)
        per_item = {i.prompt_tokens + i.completion_tokens for i in settled_items(kind, measured)}
        assert len(per_item) == 1  # the items cost the same: half the tokens is three items
        whole = 6 * per_item.pop()
        ResponseCache.objects.all().delete()
        asked_before = server.total
        # when a parent with a budget of half that is executed
        parent = work.make(name, ["pending"] * 6, endpoint=live)
        type(parent).objects.filter(pk=parent.pk).update(budget=whole // 2)
        report = lifecycle.chunk(kind, parent.pk, 0, 99)
        # then it stops half way, within its budget, the rest pending, and says why
        parent.refresh_from_db()
        statuses = [i.status for i in settled_items(kind, parent)]
        assert report["over_budget"] == 1
        assert statuses.count("pending") == 3, statuses
        assert parent.status == "cancelled"
        assert f"stopped at its budget: spent {whole // 2} of {whole // 2} tokens" in parent.error
        assert server.total - asked_before == 3
        # when it is resumed with a larger budget
        lifecycle.resume(kind, parent, budget=Decimal(whole))
        lifecycle.chunk(kind, parent.pk, 0, 99)
        # then exactly the rest is asked, and the parent is finished
        parent.refresh_from_db()
        assert parent.status == "done" and parent.budget == whole
        assert {i.status for i in settled_items(kind, parent)} != {"pending", "running"}
        assert [i.attempts for i in settled_items(kind, parent)] == [1] * 6
        assert server.total - asked_before == 6
        assert (
            sum(i.prompt_tokens + i.completion_tokens for i in settled_items(kind, parent)) == whole
        )


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("broker")
def test_a_budget_already_spent_starts_nothing(work: Work) -> None:
    kind = KINDS["run"]
    with FakeOpenAI(responder=lambda request: "Answer: 1") as server:
        live = make_endpoint(server.base_url, name="live", price_in=1, price_out=1)
        parent = work.make("run", ["pending"] * 2, endpoint=live)
        Run.objects.filter(pk=parent.pk).update(budget=0)
        lifecycle.chunk(kind, parent.pk, 0, 99)
        assert server.total == 0
    parent.refresh_from_db()
    assert parent.status == "cancelled"
    assert "stopped at its budget: spent 0.0000 of 0.0000" in parent.error
    assert [i.status for i in settled_items(kind, parent)] == ["pending", "pending"]
    assert [i.attempts for i in settled_items(kind, parent)] == [0, 0]


# --- the Responses API ------------------------------------------------------------------------


def test_a_chat_prompt_becomes_instructions_and_input_for_the_responses_api() -> None:
    prompt = Prompt(
        messages=[
            {"role": "system", "content": "Answer briefly."},
            {"role": "user", "content": "What is 1+1?"},
            {"role": "assistant", "content": "Answer: 2"},
            {"role": "user", "content": "And 2+2?"},
            {"role": "tool", "content": "Observation: 4"},
        ],
        stop=("\nObservation:",),
        max_tokens=64,
    )
    body = request_body(prompt, "responses", "m", {"temperature": 0, "max_tokens": 512})
    assert body == {
        "model": "m",
        "temperature": 0,
        "instructions": "Answer briefly.",
        "input": [
            {"role": "user", "content": "What is 1+1?"},
            {"role": "assistant", "content": "Answer: 2"},
            {"role": "user", "content": "And 2+2?"},
            {"role": "user", "content": "Observation: 4"},
        ],
        "max_output_tokens": 64,  # the prompt's own limit wins over the run's max_tokens
        "stop": ["\nObservation:"],  # kept for the cache key and applied to the answer
    }
    assert cut_at_stop("Thought: x\nObservation: y", ["\nObservation:"]) == ("Thought: x", True)
    assert cut_at_stop("no stop here", ["\nObservation:"]) == ("no stop here", False)


def test_a_responses_call_reads_the_message_text_its_tokens_and_a_cut_answer() -> None:
    long_answer = "Answer: " + "x" * 80  # 88 characters: 22 tokens
    with FakeOpenAI(responder=lambda request: long_answer) as server:
        limited = Prompt(messages=FIRST, max_tokens=5)
        stopped = Prompt(messages=[{"role": "user", "content": "Stop?"}], stop=("xxx",))

        async def run() -> list[Any]:
            config = config_for(server, "responses")
            client = openai.AsyncOpenAI(base_url=config.base_url, api_key="k", max_retries=0)
            caller = Caller(config, client=client, cache=MemoryCache(), slots=None, rate=None)
            try:
                return [await caller.call(limited), await caller.call(stopped)]
            finally:
                await client.close()

        cut, at_stop = asyncio.run(run())
        assert {r.path for r in server.records()} == {"/v1/responses"}
    assert (cut.text, cut.finish_reason) == (long_answer[:20], "length")
    assert cut.usage == {"prompt_tokens": 6, "completion_tokens": 5, "cached_tokens": 0}
    assert (at_stop.text, at_stop.finish_reason) == ("Answer: ", "stop")


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("broker")
@pytest.mark.parametrize("name", KINDS)
def test_runs_and_judges_answer_through_the_responses_api(name: str, work: Work) -> None:
    kind = KINDS[name]
    with FakeOpenAI(responder=lambda request: ANSWERS[name]) as server:
        responses = make_endpoint(server.base_url, name="responses", style="responses")
        parent = work.make(name, ["pending"] * 3, endpoint=responses)
        if name == "run":
            Run.objects.filter(pk=parent.pk).update(style="responses")
        lifecycle.chunk(kind, parent.pk, 0, 99)
        assert {r.path for r in server.records()} == {"/v1/responses"}
        assert server.total == 3
    parent.refresh_from_db()
    assert parent.status == "done"
    for item in settled_items(kind, parent):
        assert "input" in item.prompt and "messages" not in item.prompt
        assert item.prompt_tokens == math.ceil(len(content_text(item.prompt)) / 4) > 0
        assert item.completion_tokens == math.ceil(len(ANSWERS[name]) / 4)
    outputs = [item.output if name == "run" else item.raw for item in settled_items(kind, parent)]
    assert outputs == [ANSWERS[name]] * 3


# --- endpoints with a style and prices: the command, the API and the admin ---------------------


@pytest.mark.django_db
def test_add_endpoint_creates_then_updates_only_what_it_is_given(settings: Any) -> None:
    settings.ENDPOINT_KEY_VARIABLES = ["OPENAI_API_KEY"]
    out = io.StringIO()
    call_command(
        "add_endpoint",
        "gpt",
        "--base-url",
        "https://api.openai.com/v1",
        "--model",
        "gpt-4.1-mini",
        "--key-env",
        "OPENAI_API_KEY",
        "--style",
        "responses",
        "--concurrency",
        "4",
        "--price-in",
        "0.40",
        "--price-out",
        "1.60",
        stdout=out,
    )
    assert "endpoint 'gpt' added" in out.getvalue()
    endpoint = Endpoint.objects.get(name="gpt")
    assert (endpoint.style, endpoint.api_key_env, endpoint.max_concurrency) == (
        "responses",
        "OPENAI_API_KEY",
        4,
    )
    assert (endpoint.price_in, endpoint.price_out, endpoint.price_cached) == (
        Decimal("0.4"),
        Decimal("1.6"),
        None,
    )
    # run again with a new price: the same endpoint, the rest as it was
    out = io.StringIO()
    call_command(
        "add_endpoint",
        "gpt",
        "--base-url",
        "https://api.openai.com/v1",
        "--model",
        "gpt-4.1-mini",
        "--price-cached",
        "0.10",
        stdout=out,
    )
    assert "endpoint 'gpt' updated" in out.getvalue()
    endpoint = Endpoint.objects.get(name="gpt")
    assert (endpoint.style, endpoint.max_concurrency, endpoint.price_cached) == (
        "responses",
        4,
        Decimal("0.1"),
    )
    with pytest.raises(CommandError, match="price_in"):
        call_command(
            "add_endpoint",
            "gpt",
            "--base-url",
            "https://x.example/v1",
            "--model",
            "m",
            "--price-in",
            "-1",
        )
    with pytest.raises(CommandError):
        call_command(
            "add_endpoint",
            "gpt",
            "--base-url",
            "https://x.example/v1",
            "--model",
            "m",
            "--price-in",
            "lots",
        )
    assert Endpoint.objects.get(name="gpt").price_in == Decimal("0.4")


@pytest.mark.django_db
def test_the_api_and_the_admin_take_the_style_and_prices(client: Client) -> None:
    client.force_login(make_superuser())
    posted = client.post(
        "/api/endpoints/",
        json.dumps(
            {
                "name": "api",
                "base_url": "https://api.example/v1",
                "model": "m",
                "style": "responses",
                "price_in": "2.5",
                "price_out": "10",
            }
        ),
        content_type="application/json",
    )
    assert posted.status_code == 201, posted.content
    assert (posted.json()["style"], posted.json()["price_in"], posted.json()["price_out"]) == (
        "responses",
        "2.500000",
        "10.000000",
    )
    refused = client.post(
        "/api/endpoints/",
        json.dumps(
            {"name": "neg", "base_url": "https://a.example/v1", "model": "m", "price_out": "-1"}
        ),
        content_type="application/json",
    )
    assert refused.status_code == 400 and "price_out" in refused.content.decode()
    form = {
        "name": "admin",
        "base_url": "https://api.example/v1",
        "model": "m",
        "api_key_env": "",
        "style": "responses",
        "default_params": "{}",
        "max_concurrency": 8,
        "timeout_seconds": 60,
        "max_attempts": 4,
        "max_claims": 4,
        "price_in": "1",
        "price_out": "3",
        "price_cached": "0.25",
    }
    assert client.post("/admin/evaluation/endpoint/add/", form).status_code == 302
    endpoint = Endpoint.objects.get(name="admin")
    assert (endpoint.style, endpoint.price_cached) == ("responses", Decimal("0.25"))


# --- setting a budget: launch, the page's resume ----------------------------------------------


@pytest.mark.django_db
def test_a_run_is_launched_with_a_budget_and_a_negative_one_is_refused(work: Work) -> None:
    out = io.StringIO()
    common = ["--benchmark", work.benchmark.name, "--task", "answer", "--endpoint", "fake"]
    common += ["--split", "default"]
    call_command("launch_run", *common, "--budget", "1500", "--json", stdout=out)
    run = Run.objects.get(pk=json.loads(out.getvalue())["run"])
    assert run.budget == Decimal(1500)
    with pytest.raises(CommandError, match="a budget must be a number, 0 or more"):
        call_command("launch_run", *common, "--budget", "-1")
    assert Run.objects.count() == 1


@pytest.mark.django_db
@pytest.mark.usefixtures("broker")
@pytest.mark.parametrize("name", KINDS)
def test_the_page_resumes_with_a_larger_budget(name: str, work: Work, client: Client) -> None:
    kind = KINDS[name]
    parent = work.make(name, ["done", "pending"], status="cancelled")
    type(parent).objects.filter(pk=parent.pk).update(budget=10)
    client.force_login(make_superuser())
    prefix = PAGES[name][0]
    page = client.get(f"/{prefix}/{parent.pk}/").content.decode()
    assert 'name="budget" value="10.000000"' in page
    # an unreadable budget changes nothing
    response = client.post(f"/{prefix}/{parent.pk}/resume/", {"budget": "lots"}, follow=True)
    assert "the budget &#x27;lots&#x27; is not a number" in response.content.decode()
    parent.refresh_from_db()
    assert (parent.status, parent.budget) == ("cancelled", 10)
    # a larger one is set as the parent resumes
    client.post(f"/{prefix}/{parent.pk}/resume/", {"budget": "25"})
    parent.refresh_from_db()
    assert (parent.status, parent.budget) == ("running", 25)
    # an empty box keeps it
    lifecycle.cancel(kind, parent)
    client.post(f"/{prefix}/{parent.pk}/resume/", {"budget": ""})
    parent.refresh_from_db()
    assert (parent.status, parent.budget) == ("running", 25)


def test_an_item_starts_only_while_its_expected_cost_fits_the_budget() -> None:
    spending = Spending(limit=Decimal(100), prices=None)
    # nothing answered yet: one item at a time
    assert spending.admits() is True
    spending.in_flight = 1
    assert spending.admits() is None
    # one answered for 30 tokens: two more fit (30 + 2 * 30 <= 100), a third does not yet
    spending.in_flight = 0
    spending.add(Tokens(prompt=20, completion=10))
    assert spending.admits() is True
    spending.in_flight = 2
    assert spending.admits() is None  # wait: the two being answered may cost less
    spending.in_flight = 0
    spending.add(Tokens(prompt=20, completion=10))
    spending.add(Tokens(prompt=20, completion=10))
    assert spending.spent == 90
    assert spending.admits() is False  # 90 + 30 > 100, and nothing is being answered
    # answers from the response cache cost nothing and lower the guess
    paid = Spending(limit=Decimal(50), prices=None)
    paid.add(Tokens(prompt=20, completion=10))
    assert paid.admits() is False  # 30 + 30 > 50
    paid.add(Tokens())
    assert paid.admits() is True  # 30 + 15 <= 50
    spent_at_prices = Spending(limit=Decimal("0.01"), prices=Prices(Decimal(10), Decimal(10)))
    spent_at_prices.add(Tokens(prompt=1000))
    assert spent_at_prices.spent == Decimal("0.01")
    assert spent_at_prices.admits() is False
