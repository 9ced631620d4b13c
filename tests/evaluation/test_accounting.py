"""Tokens, cost and budget (issue 16): the server's token counts read once whatever the API,
summed per item, per run and per judge job; prices per million tokens; a budget that stops a
run before it would pass it. Real PostgreSQL, the fake OpenAI server at the edge (its usage
counts 4 characters a token)."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import openai
import pytest

from benchmarks.suites.protocol import Prompt
from evaluation.work.caller import Caller, EndpointConfig, token_counts
from evaluation.work.engine import ItemCalls
from tests.evaluation.test_caller import MemoryCache
from tests.fake_openai import FakeOpenAI

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
