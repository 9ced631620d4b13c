"""What a judge sees beside each output, per suite (the item_context capability), from hand-made
samples and outputs: the question, the tools offered, each side's parsed answer, and the gold only
when asked. Pure: no database."""

from __future__ import annotations

import json
from typing import Any

from benchmarks.kit.context import JudgedOutput, OutputSummary, ShownCall, answer_calls
from benchmarks.kit.protocol import Item
from benchmarks.kit.registry import get_suite

HOSTILE = '<script>alert("x")</script>'


def context(suite: str, item: Item, *outputs: JudgedOutput, gold: bool = False) -> Any:
    return get_suite(suite).context(item, show_gold=gold, outputs=outputs)


# --- MetaTool ---------------------------------------------------------------------------------

META = Item(
    split="queries",
    external_id="q1",
    input={"query": "What is the weather in Paris?"},
    reference={"tool": "WeatherTool"},
)
OFFERED = {"candidates": ["NewsTool", "WeatherTool", "MapTool"]}


def test_metatool_selection_pair_shows_candidates_and_each_pick_and_hides_the_gold() -> None:
    a = JudgedOutput(task="similar", context=OFFERED, text="WeatherTool", answer=["WeatherTool"])
    b = JudgedOutput(
        task="similar", context=OFFERED, text=f"I'd say {HOSTILE}", answer=[], parsed=False
    )
    shown = context("metatool", META, a, b)
    assert shown.query == "What is the weather in Paris?"
    assert shown.candidates == ("NewsTool", "WeatherTool", "MapTool")
    assert shown.sides[0] == OutputSummary(facts=(("Pick", "WeatherTool"),))
    # an answer the suite could not read says so (its raw text is shown as text)
    assert shown.sides[1].facts == (("Pick", "not read from the text"), ("Tools it names", "none"))
    assert shown.gold is None and shown.gold_view is None
    with_gold = context("metatool", META, a, b, gold=True)
    assert with_gold.gold_view == OutputSummary(facts=(("Gold tool", "WeatherTool"),))


def test_metatool_a_side_offered_another_list_says_which() -> None:
    a = JudgedOutput(task="similar", context=OFFERED, answer=["WeatherTool"])
    other = {"candidates": ["WeatherTool", "ClockTool"]}
    b = JudgedOutput(task="similar", context=other, answer=["ClockTool"])
    shown = context("metatool", META, a, b)
    assert shown.sides[0].offered == () and shown.sides[1].offered == ("WeatherTool", "ClockTool")


def test_metatool_reliability_gold_is_none_of_the_candidates_and_awareness_is_yes_no() -> None:
    reliability = Item(
        split="reliability",
        external_id="r1",
        input={"query": "q"},
        reference={"tool": "Gone"},
        candidate_tools=("A", "B"),
    )
    out = JudgedOutput(task="reliability", answer=["A", "B"])
    shown = context("metatool", reliability, out, gold=True)
    assert shown.sides[0].facts == (("Pick", "A, B"),)
    assert shown.gold_view is not None
    assert shown.gold_view.facts == (
        ("Gold", "none of the candidates (the query's tool, Gone, is not one)"),
    )
    awareness = Item(
        split="awareness", external_id="a", input={"query": "q"}, reference={"needs_tool": False}
    )
    yes = JudgedOutput(task="awareness", answer=True)
    unread = JudgedOutput(task="awareness", answer=None, parsed=False)
    shown = context("metatool", awareness, yes, unread, gold=True)
    assert [s.facts for s in shown.sides] == [
        (("Uses a tool?", "yes"),),
        (("Uses a tool?", "not read from the text"),),
    ]
    assert shown.gold_view == OutputSummary(facts=(("Needs a tool", "no"),))


# --- MTU-Bench --------------------------------------------------------------------------------

TURNS = [
    {"role": "user", "content": "Weather in Ghent?"},
    {"role": "assistant", "tool_calls": [{"name": "GetWeather", "arguments": {"city": "Ghent"}}]},
    {"role": "tool", "name": "GetWeather", "content": "rain"},
    {"role": "user", "content": "And play some jazz."},
]
MTU = Item(
    split="M-S",
    external_id="M-S_0_1",
    input={"query": "And play some jazz.", "turns": TURNS},
    reference={"calls": [{"name": "PlayMedia", "arguments": {"genre": "jazz"}}]},
    candidate_tools=("GetWeather", "PlayMedia"),
    metadata={"turn": 1},
)


def test_mtubench_shows_the_dialogue_so_far_and_each_sides_calls_for_the_turn() -> None:
    a = JudgedOutput(
        task="M-S", answer={"calls": [{"name": "PlayMedia", "arguments": {"genre": "jazz"}}]}
    )
    b = JudgedOutput(task="M-S", text=HOSTILE, answer={"calls": []})
    shown = context("mtubench", MTU, a, b)
    assert shown.turns == TURNS and shown.query is None
    assert shown.candidates == ("GetWeather", "PlayMedia")
    assert shown.sides[0].calls == (ShownCall("PlayMedia", {"genre": "jazz"}, "turn 2"),)
    # no call read: an empty list (shown as "no tool call"), not a missing answer
    assert shown.sides[1].calls == ()
    assert shown.gold is None and shown.gold_view is None
    gold = context("mtubench", MTU, a, b, gold=True).gold_view
    assert gold == OutputSummary(calls=(ShownCall("PlayMedia", {"genre": "jazz"}, "turn 2"),))


# --- StableToolBench --------------------------------------------------------------------------

STB = Item(
    split="G1_instruction",
    external_id="7",
    input={"query": "Find a ferry to Bilbao"},
    reference={"relevant_apis": [["Ferries", "departures"]], "relevant_tools": ["ferries"]},
    candidate_tools=("ferries_departures", "weather_now"),
)


def test_stabletoolbench_shows_each_final_answer_and_a_trace_summary() -> None:
    trace = [
        {
            "thought": "look it up",
            "action": "ferries_departures",
            "arguments": {"to": "Bilbao"},
            "observation": '{"error": "", "response": "10:00"}',
        },
        {
            "thought": "",
            "action": "weather_now",
            "arguments": {},
            "observation": '{"error": "timeout", "response": ""}',
        },
        {"thought": "done", "action": "", "arguments": {}, "observation": ""},
    ]
    a = JudgedOutput(task="pass_rate", answer=f"At 10:00 {HOSTILE}", trace=trace)
    b = JudgedOutput(task="pass_rate", text="garbage", parsed=False)
    shown = context("stabletoolbench", STB, a, b)
    assert shown.query == "Find a ferry to Bilbao"
    assert shown.candidates == ("ferries_departures", "weather_now")
    assert shown.sides[0].facts == (
        ("Final answer", f"At 10:00 {HOSTILE}"),
        ("Trace", "2 calls to ferries_departures, weather_now; 1 answered with an error"),
    )
    assert shown.sides[0].calls == (
        ShownCall("ferries_departures", {"to": "Bilbao"}, "step 1"),
        ShownCall("weather_now", {}, "step 2"),
    )
    assert shown.sides[1] == OutputSummary(
        facts=(("Final answer", "not an answer object (its text below)"),)
    )
    assert shown.gold_view is None
    gold = context("stabletoolbench", STB, a, gold=True).gold_view
    assert gold == OutputSummary(facts=(("Relevant APIs", "ferries"),))


def test_stabletoolbench_shows_an_answer_object_without_the_method_that_made_it() -> None:
    # The text agent and the native one write ToolBench's answer object under their own
    # method (ReAct@1, CoT@1): a judge of a blind pair reads the answer, never which agent
    # made it (ToolBench's own preference judge drops "method" too).
    record = {"total_steps": 1, "final_answer": "At 10:00", "answer_details": []}
    a, b = (
        JudgedOutput(
            task="pass_rate", text=json.dumps({"method": method, **record}), answer="At 10:00"
        )
        for method in ("ReAct@1", "CoT@1")
    )
    shown = context("stabletoolbench", STB, a, b)
    assert shown.sides[0].text == shown.sides[1].text
    assert json.loads(shown.sides[0].text or "") == record
    # a text the suite cannot read is shown as it is
    unread = JudgedOutput(task="pass_rate", text="garbage", parsed=False)
    assert context("stabletoolbench", STB, unread).sides[0].text is None


# --- WTU-Eval ---------------------------------------------------------------------------------

WTU = Item(
    split="gsm8k",
    external_id="3",
    input={"query": "What is 12 * 7?"},
    reference={"answer": 84, "kind": "tool"},
)


def test_wtueval_shows_the_tool_offered_and_each_decision_and_call() -> None:
    called = [
        {
            "thought": "compute",
            "action": "Calculator",
            "input": "12*7",
            "arguments": {"expression": "12*7"},
            "tools": ["Calculator"],
        },
        {"thought": "", "action": "Finish", "arguments": {"answer": "84"}, "stop": "final_answer"},
    ]
    direct = [
        {
            "thought": "easy",
            "action": "Finish",
            "arguments": {"answer": "74"},
            "tools": ["Calculator"],
            "stop": "final_answer",
        },
    ]
    a = JudgedOutput(task="R2", context={"tools": ["Calculator"]}, answer="84", trace=called)
    b = JudgedOutput(task="R2", context={"tools": ["Calculator"]}, answer="74", trace=direct)
    shown = context("wtueval", WTU, a, b)
    assert shown.query == "What is 12 * 7?" and shown.candidates == ("Calculator",)
    assert shown.sides[0].facts == (
        ("Decision", "calls a tool first (Calculator)"),
        ("Answer", "84"),
        ("Stopped", "final answer"),
    )
    assert shown.sides[0].calls == (ShownCall("Calculator", {"expression": "12*7"}, "step 1"),)
    assert shown.sides[1].facts[0] == ("Decision", "answers directly, no tool call")
    assert shown.sides[1].calls == ()
    assert shown.gold_view is None
    gold = context("wtueval", WTU, a, gold=True).gold_view
    assert gold == OutputSummary(
        facts=(("Gold answer", "84"), ("Needs a tool", "yes (a tool dataset)"))
    )


def test_wtueval_without_tools_and_with_options() -> None:
    item = Item(
        split="piqa",
        external_id="1",
        input={"query": "Open a jar?", "options": ["twist the lid", "eat it"]},
        reference={"answer": 1, "kind": "general"},
    )
    out = JudgedOutput(task="R3", answer="1")
    shown = context("wtueval", item, out)
    assert shown.query == "Open a jar?\nOptions: 1: twist the lid; 2: eat it"
    assert shown.candidates == ()
    assert shown.sides[0].facts == (
        ("Decision", "answers without a tool (none offered)"),
        ("Answer", "1"),
    )


# --- UltraTool --------------------------------------------------------------------------------

ULTRA = Item(
    split="test",
    external_id="1",
    input={"query": "Save a note", "toolsets": {"tool_selection": ["file_write", "decoy"]}},
    reference={
        "plan": [],
        "steps": [
            {
                "step": "1",
                "text": "Write the note",
                "tool": "file_write",
                "arguments": {"path": "a.txt"},
            },
        ],
        "tool_usage": [{"step": "1", "tool": "file_write", "arguments": {"path": "a.txt"}}],
    },
    kind="plan",
    candidate_tools=("file_write",),
)


def test_ultratool_shows_plans_as_steps_and_tool_steps_as_calls() -> None:
    plan = JudgedOutput(task="planning", answer={"steps": [{"step": "1", "text": HOSTILE}]})
    unread = JudgedOutput(task="planning", text="no plan", parsed=False)
    shown = context("ultratool", ULTRA, plan, unread)
    assert shown.query == "Save a note" and shown.candidates == ("file_write",)
    assert shown.sides[0] == OutputSummary(steps=(("1", HOSTILE),))
    assert shown.sides[1].facts == (("Answer", "not read from the text (below)"),)
    assert shown.gold_view is None
    gold = context("ultratool", ULTRA, plan, gold=True).gold_view
    assert gold == OutputSummary(
        steps=(("1", "Write the note"),),
        calls=(ShownCall("file_write", {"path": "a.txt"}, "step 1"),),
    )
    usage = JudgedOutput(
        task="tool_usage", answer=[{"step": "1", "tool": "file_write", "arguments": {"path": "b"}}]
    )
    shown = context("ultratool", ULTRA, usage, gold=True)
    assert shown.sides[0].calls == (ShownCall("file_write", {"path": "b"}, "step 1"),)
    assert shown.gold_view is not None
    assert shown.gold_view.calls == (ShownCall("file_write", {"path": "a.txt"}, "step 1"),)
    selection = JudgedOutput(task="tool_selection", answer=[{"step": "1", "tool": "decoy"}])
    shown = context("ultratool", ULTRA, selection)
    assert shown.candidates == ("file_write", "decoy")
    awareness = JudgedOutput(
        task="tool_usage_awareness",
        answer=[{"step": "1", "needs_tool": 1}, {"step": "2", "needs_tool": 0}],
    )
    assert context("ultratool", ULTRA, awareness).sides[0].facts == (
        ("Step 1", "needs a tool"),
        ("Step 2", "no tool"),
    )


# --- the default (the generic suite) ---------------------------------------------------------


def test_default_context_reads_calls_in_every_usual_shape() -> None:
    assert answer_calls([{"tool": "a", "param": {"x": 1}, "step": "2"}]) == (
        ShownCall("a", {"x": 1}, "step 2"),
    )
    assert answer_calls({"tool_calls": [{"function": {"name": "f", "arguments": '{"y": 2}'}}]}) == (
        ShownCall("f", {"y": 2}),
    )
    assert answer_calls({"calls": []}) == ()
    assert answer_calls("just text") is None and answer_calls([1, 2]) is None
    item = Item(split="test", external_id="1", input={"query": "q"}, reference=[{"name": "f"}])
    out = JudgedOutput(answer=[{"name": "f", "arguments": {"a": 1}}])
    shown = context("generic", item, out)
    assert shown.sides[0].calls == (ShownCall("f", {"a": 1}),)
    assert shown.gold is None
    assert context("generic", item, out, gold=True).gold_view == OutputSummary(
        calls=(ShownCall("f", None),)
    )


# --- odd stored data never breaks the studio ----------------------------------------------------

ODD_VALUES: list[Any] = [
    None,
    0,
    "text",
    [],
    [1, "x", None],
    [{"step": None, "tool": 5}],
    [{"tool": {"name": None}}],
    {"calls": "x"},
    {"calls": [{"name": None}]},
    {"steps": "x"},
    {"steps": [1, {"step": 1, "text": None}]},
    {"tool_calls": [{"function": "x"}]},
]
ODD_TRACES: list[Any] = [[], [1, "x"], [{"action": 5}], [{"action": "a", "arguments": "{bad"}]]
ODD_CONTEXTS: list[Any] = [{}, {"candidates": "abc"}, {"candidates": [1, None]}, {"tools": 5}]
ODD_ITEMS = [
    Item(split="s", external_id="1", input={}, reference=None),
    Item(split="s", external_id="2", input={"query": 5, "turns": "x", "options": 3}, reference=[1]),
    Item(
        split="s",
        external_id="3",
        input={"toolsets": {"planning": "x"}},
        reference={"tool": 5, "tools": "x", "steps": [1], "needs_tool": None},
        metadata={"turn": "x"},
    ),
]


def test_no_suite_fails_on_odd_stored_answers_traces_or_golds() -> None:
    from benchmarks.kit.registry import suite_names

    outputs = [
        JudgedOutput(task=task, context=ctx, answer=answer, parsed=parsed, trace=trace)
        for task in ("", "awareness", "similar", "planning", "tool_usage", "R2", "M-S")
        for answer in ODD_VALUES
        for trace in ODD_TRACES
        for ctx in ODD_CONTEXTS
        for parsed in (None, False)
    ]
    for name in suite_names():
        for item in ODD_ITEMS:
            shown = get_suite(name).context(item, show_gold=True, outputs=outputs)
            assert len(shown.sides) == len(outputs), name
