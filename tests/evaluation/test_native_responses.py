"""Native requests in the Responses API's words, against the fake server's /v1/responses (which
refuses what the API refuses): a dialogue's earlier calls and results, the declared tools and
tool_choice arrive as the chat request had them, and the response's function calls read back
as chat tool_calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai

from benchmarks.kit.native import read_tool_calls
from benchmarks.kit.protocol import Context, Item
from benchmarks.suites import mtubench
from evaluation.work.native_responses import chat_tool_calls, responses_native_fields
from tests.fake_openai import FakeCall, FakeOpenAI, ToolRequest, oracle, tool_reply


def dialogue_item(seeddata: Path) -> Item:
    bundle = mtubench.import_files([seeddata / "mtubench" / "M-S_eval.jsonl"])
    record = next(s for s in bundle.samples if s.external_id == "M-S_0_3")
    return Item(
        split=record.split,
        external_id=record.external_id,
        input=record.input,
        reference=record.reference,
        kind=record.kind,
        candidate_tools=record.candidate_tools,
        metadata=record.metadata,
    )


def test_a_native_dialogue_goes_through_the_responses_api(seeddata: Path) -> None:
    item = dialogue_item(seeddata)
    ctx = Context(task=mtubench.TASKS["M-S"], options={"tool_mode": "native"})
    native = mtubench.native_prompt(item, ctx, {})
    chat = {
        "model": "fake-model",
        **native.prompt.request("chat"),
        "tool_choice": {"type": "function", "function": {"name": "PlayMedia"}},
        "max_tokens": 64,
        "temperature": 0,
    }
    seen: list[ToolRequest] = []

    def answer(request: ToolRequest) -> Any:
        seen.append(request)
        return tool_reply(
            FakeCall("PlayMedia", {"song_name": "Be My Baby"}, id="call_a"),
            FakeCall("LookupMusic", '{"genre": '),
        )

    with FakeOpenAI(responder=oracle(answer)) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
        fields = responses_native_fields(chat)
        response = client.responses.create(**fields)
    (request,) = seen
    assert request.api == "responses"
    assert request.tools == ("GetWeather", "LookupMusic", "PlayMedia")
    assert request.tool_choice == {"type": "function", "name": "PlayMedia"}
    assert request.body["max_output_tokens"] == 64 and request.body["temperature"] == 0
    assert "January 4, 2024" in request.body["instructions"]
    # The earlier calls and their results, as the chat messages held them.
    chat_calls = [c for m in chat["messages"] if m.get("tool_calls") for c in m["tool_calls"]]
    assert [(c["id"], c["name"], c["arguments"]) for c in request.calls_made] == [
        (c["id"], c["function"]["name"], c["function"]["arguments"]) for c in chat_calls
    ]
    results = [(m["tool_call_id"], m["content"]) for m in chat["messages"] if m["role"] == "tool"]
    assert [(r["id"], r["output"]) for r in request.tool_results] == results
    assert request.last_user == item.input["query"]
    # The answer's function calls read back as chat tool_calls, then as the suite's calls.
    tool_calls = chat_tool_calls(response.output)
    assert [c["function"]["name"] for c in tool_calls] == ["PlayMedia", "LookupMusic"]
    assert tool_calls[0]["id"] == "call_a"
    calls = read_tool_calls(tool_calls, native.names)
    assert calls.answer() == [{"name": "PlayMedia", "arguments": {"song_name": "Be My Baby"}}]
    assert [c.problem != "" for c in calls] == [False, True]


def test_plain_answers_and_tools_only_when_declared() -> None:
    fields = responses_native_fields(
        {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stop": ["\n"]}
    )
    assert fields == {"model": "m", "input": [{"role": "user", "content": "hi"}], "stop": ["\n"]}
    assert chat_tool_calls(None) == [] and chat_tool_calls([{"type": "message"}]) == []
