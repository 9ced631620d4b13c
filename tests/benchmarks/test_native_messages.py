"""The pure halves of native tool mode: a dialogue as native chat messages, MTU-Bench's
"Tool.field" references read back, and how a native answer becomes the suite's answer."""

from __future__ import annotations

from typing import Any

from benchmarks.kit.native import ToolNames, read_tool_calls
from benchmarks.kit.protocol import (
    NO_RESULT,
    Context,
    Item,
    NativeReply,
    Outcome,
    native_history,
    read_native_reply,
)
from benchmarks.suites import mtubench


def test_a_dialogue_becomes_tool_calls_answered_in_order() -> None:
    turns = [
        {"role": "user", "content": "Weather and time in Ghent?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"name": "Get.Weather", "arguments": {"city": "Ghent"}},
                {"name": "clock", "arguments": {}},
            ],
        },
        {"role": "tool", "name": "Get.Weather", "content": "rain"},
        {"role": "tool", "name": "clock", "content": "09:00"},
        {"role": "tool", "name": "clock", "content": "an extra result"},
        {"role": "assistant", "content": "", "tool_calls": [{"name": "clock", "arguments": {}}]},
        {"role": "assistant", "content": "Rain, at nine."},
        {"role": "user", "content": "Thanks"},
    ]
    messages = native_history(turns, lambda name: name.replace(".", "_"))
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    first = messages[1]
    assert first["content"] is None
    assert [c["function"]["name"] for c in first["tool_calls"]] == ["Get_Weather", "clock"]
    assert first["tool_calls"][0]["function"]["arguments"] == '{"city": "Ghent"}'
    assert [(m["tool_call_id"], m["content"]) for m in messages[2:4]] == [
        ("call_1", "rain"),
        ("call_2", "09:00"),
    ]
    # A result with no call left to answer stays in the conversation as text.
    assert messages[4] == {"role": "user", "content": "Tool result (clock): an extra result"}
    # A call the data records no result for is still answered, as the API requires.
    assert messages[6] == {"role": "tool", "tool_call_id": "call_3", "content": NO_RESULT}


def mtu_item(split: str, tools: list[str]) -> Item:
    return Item(
        split=split,
        external_id=f"{split}_1",
        input={
            "prompt": "question",
            "query": "Book it",
            "turns": [{"role": "user", "content": "Book it"}],
            "tools": [
                {"name": name, "description": "", "parameters": {"type": "object"}}
                for name in tools
            ],
        },
        reference={"calls": []},
        candidate_tools=tools,
    )


def native_reply(item: Item, ctx: Context, calls: list[dict[str, Any]], text: str = "") -> Any:
    native = mtubench.native_prompt(item, ctx, {})
    tool_calls = [
        {"id": f"c{i}", "type": "function", "function": call} for i, call in enumerate(calls)
    ]
    reply = NativeReply(text, tool_calls, read_tool_calls(tool_calls, native.names), native.names)
    return mtubench.native_outcome(reply, item, ctx, {})


def test_an_earlier_calls_field_written_with_the_api_name_is_read_back() -> None:
    ctx = Context(task=mtubench.TASKS["S-M"])
    item = mtu_item("S-M", ["Find.Hotel", "BookHotel"])
    outcome = native_reply(
        item,
        ctx,
        [
            {"name": "Find_Hotel", "arguments": '{"city": "Ghent"}'},
            {"name": "BookHotel", "arguments": '{"hotel": "Find_Hotel.name", "n": 2}'},
        ],
    )
    assert outcome.answer == {
        "calls": [
            {"name": "Find.Hotel", "arguments": {"city": "Ghent"}},
            {"name": "BookHotel", "arguments": {"hotel": "Find.Hotel.name", "n": 2}},
        ]
    }
    assert outcome.tool_calls[1]["function"]["name"] == "BookHotel"
    assert not outcome.leaked


def test_a_single_tool_turn_keeps_its_first_call() -> None:
    ctx = Context(task=mtubench.TASKS["S-S"])
    item = mtu_item("S-S", ["A", "B"])
    outcome = native_reply(
        item, ctx, [{"name": "B", "arguments": "{}"}, {"name": "A", "arguments": "{}"}]
    )
    assert outcome.answer == {"calls": [{"name": "B", "arguments": {}}]}


def test_a_call_in_the_text_rule_is_leaked_and_scored_by_that_rule() -> None:
    ctx = Context(task=mtubench.TASKS["S-S"])
    item = mtu_item("S-S", ["A", "B"])
    outcome = native_reply(item, ctx, [], text='Action: A\nAction Input: {"x": 1}')
    assert outcome.leaked and outcome.tool_calls == []
    assert outcome.answer == {"calls": [{"name": "A", "arguments": {"x": 1}}]}
    plain = native_reply(item, ctx, [], text="No API is needed here.")
    assert not plain.leaked and plain.answer == {"calls": []}


def test_read_native_reply_never_turns_a_leak_into_an_abstention() -> None:
    declared = ToolNames.of(["lookup"])
    text = '<tool_call>{"name": "lookup", "arguments": {}}</tool_call>'
    reply = NativeReply(text, [], read_tool_calls([], declared), declared)
    outcome = read_native_reply(
        reply,
        lambda calls: [c["name"] for c in calls],
        lambda text: Outcome(output=text, answer=[]),  # a text rule that finds no call
        bool,
    )
    assert outcome.leaked and outcome.answer == ["lookup"]


def test_the_protocol_defaults_declare_the_candidates_and_shape_the_calls() -> None:
    """A suite bringing only native_answer: its text prompt's messages, its candidates (those
    the benchmark knows) declared, the calls shaped by it, and a leak found by its text rule."""
    import asyncio
    import types

    from benchmarks.kit.protocol import Evaluator, Native, Prompt, Task, TaskSpec, ToolSpec

    task = TaskSpec(name="pick", title="Pick", native=True)
    suite = types.SimpleNamespace(
        name="tiny",
        declare_tools=None,
        evaluation=(
            Task(
                task,
                prompt=lambda item, ctx, context: Prompt(
                    messages=[{"role": "user", "content": item.input["q"]}], max_tokens=9
                ),
                parse=lambda text, item, ctx, context: Outcome(
                    output=text, answer=[w[5:] for w in text.split() if w.startswith("CALL:")]
                ),
                score=lambda outcome, item, ctx, context: {},
                aggregate=lambda scored, ctx: {},
                native=Native(answer=lambda calls, item, ctx, context: [c["name"] for c in calls]),
            ),
        ),
    )
    evaluator = Evaluator(suite)
    ctx = Context(
        task=task,
        tools={"a.b": ToolSpec("a.b", "first"), "c": ToolSpec("c")},
    )
    item = Item(
        split="s", external_id="1", input={"q": "which?"}, candidate_tools=["a.b", "x", "c"]
    )
    native = evaluator.native_prompt(item, ctx, {})
    assert native.prompt.messages == [{"role": "user", "content": "which?"}]
    assert native.prompt.max_tokens == 9
    assert [t["function"]["name"] for t in native.prompt.tools] == ["a_b", "c"]

    def ask_with(text: str, tool_calls: list[dict[str, Any]]) -> Any:
        class Turn:
            def __init__(self) -> None:
                self.text, self.tool_calls = text, tool_calls

        async def ask(prompt: Prompt) -> Any:
            assert prompt.tools == native.prompt.tools
            return Turn()

        return asyncio.run(evaluator.native_solve(item, ctx, {}, ask))

    call = {"id": "1", "type": "function", "function": {"name": "a_b", "arguments": "{}"}}
    assert ask_with("", [call]).answer == ["a.b"]
    leaked = ask_with("CALL:c please", [])
    assert leaked.leaked and leaked.answer == ["c"]
    plain = ask_with("none of them", [])
    assert not plain.leaked and plain.answer == []
