"""UltraTool evaluation: key-value metrics against hand-computed cases, tolerant and safe parsing,
prompts built from the demo files, published outputs. Pure: no database."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.kit.base import ImportFormatError, merge_tools
from benchmarks.kit.predictions import json_values
from benchmarks.kit.protocol import Context, Item, Outcome, Scored, ToolSpec
from benchmarks.suites import ultratool
from benchmarks.suites.ultratool import reading

DEMO = Path(__file__).resolve().parents[3] / "benchmarks" / "demo" / "ultratool"
PROMPTS = Path(ultratool.__file__).parent / "prompts"
EVALUATOR = ultratool.SUITE.evaluator


def context(task: str, **options: Any) -> Context:
    shots = options.pop("shots", 0)
    style = options.pop("style", "chat")
    tools = options.pop("tools", {})
    return Context(
        task=EVALUATOR.task(task), shots=shots, style=style, options=options, tools=tools
    )


def item(reference: dict[str, Any], external_id: str = "1", **input_: Any) -> Item:
    steps = [
        {"step": "1", "text": "Check the weather"},
        {"step": "1.1", "text": "Note the city (City: Ghent)"},
        {"step": "1.2", "text": "Get the forecast"},
        {"step": "1.3", "text": "Decide whether to cycle"},
        {"step": "2", "text": "Remind the user"},
        {"step": "2.1", "text": "Set the alarm"},
    ]
    return Item(
        split="test",
        external_id=external_id,
        input={"query": "Will it rain in Ghent? Wake me at 7.", **input_},
        reference={"steps": steps, **reference},
        kind="plan",
        candidate_tools=("get_weather", "set_alarm"),
    )


def run(task: str, the_item: Item, text: str, **options: Any) -> dict[str, float | None]:
    ctx = context(task, **options)
    return EVALUATOR.score(EVALUATOR.parse(text, the_item, ctx, {}), the_item, ctx, {})


AWARE = [
    {"step": "1.1", "value": 0},
    {"step": "1.2", "value": 1},
    {"step": "1.3", "value": 0},
    {"step": "2.1", "value": 1},
]
SELECT = [{"step": "1.2", "tool": "get_weather"}, {"step": "2.1", "tool": "set_alarm"}]
USAGE = [
    {"step": "1.2", "tool": "get_weather", "arguments": {"city": "Ghent", "day": "Saturday"}},
    {"step": "2.1", "tool": "set_alarm", "arguments": {"time": "07:00", "label": ""}},
]


def demo_items() -> tuple[list[Item], dict[str, ToolSpec]]:
    bundle = ultratool.import_files([DEMO / "test.json", DEMO / "test_set"])
    tools = {
        tool.name: ToolSpec(
            name=tool.name,
            description=tool.description,
            parameters=tool.parameters,
            returns=tool.returns,
            category=tool.category,
            raw=tool.raw,
        )
        for tool in merge_tools(bundle.tools)
    }
    items = [
        Item(
            split=s.split,
            external_id=s.external_id,
            input=s.input,
            reference=s.reference,
            kind=s.kind,
            candidate_tools=tuple(s.candidate_tools),
            metadata=s.metadata,
        )
        for s in bundle.samples
    ]
    return items, tools


# --- Levenshtein --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [
        ("kitten", "sitting", 3),
        ("flaw", "lawn", 2),
        ("Saturday", "Sunday", 3),
        ("", "abc", 3),
        ("abc", "", 3),
        ("", "", 0),
        ("same", "same", 0),
        ("Rotterdam", "Roterdam", 1),
        ("ab", "ba", 2),
        ("06:30", "6:30", 1),
        ("Gent", "Ghent", 1),
    ],
)
def test_levenshtein_known_pairs(a: str, b: str, distance: int) -> None:
    assert ultratool.levenshtein(a, b) == distance
    assert ultratool.levenshtein(b, a) == distance


def test_normalized_levenshtein_divides_by_the_longer_string() -> None:
    assert ultratool.normalized_levenshtein("kitten", "sitting") == pytest.approx(3 / 7)
    assert ultratool.normalized_levenshtein("", "") == 0.0
    assert ultratool.normalized_levenshtein("abc", "") == 1.0


def test_argument_similarity() -> None:
    assert ultratool.argument_similarity("Saturday", "Sunday") == pytest.approx(1 - 3 / 8)
    assert ultratool.argument_similarity("", "") == 1.0
    assert ultratool.argument_similarity("", "anything") == 0.0
    assert ultratool.argument_similarity([], None) == 1.0
    # Values are compared as str(), so a number and its digits are the same value.
    assert ultratool.argument_similarity(250, "250") == 1.0


# --- the tasks and selection --------------------------------------------------------------------


def test_tasks_and_defaults() -> None:
    assert set(ultratool.TASKS) == {
        "planning",
        "tool_creation",
        "tool_creation_awareness",
        "tool_usage_awareness",
        "tool_selection",
        "tool_usage",
    }
    for spec in ultratool.TASKS.values():
        assert spec.splits == ("test",)
        assert set(spec.metrics) == spec.percent
        assert spec.defaults["unparsed"] == "wrong"
    assert ultratool.TASKS["tool_usage"].metrics[0] == "levenshtein_local"
    assert ultratool.TASKS["tool_selection"].metrics[:2] == ("accuracy_global", "accuracy_local")


def test_select_takes_items_with_the_tasks_gold() -> None:
    with_gold = item({"tool_usage_awareness": AWARE}, "1")
    without = item({}, "2")
    empty = item({"tool_usage_awareness": []}, "3")
    chosen = EVALUATOR.select([with_gold, without, empty], context("tool_usage_awareness"))
    assert [i.external_id for i in chosen] == ["1"]
    assert EVALUATOR.select([with_gold], context("tool_usage")) == []


# --- awareness and selection: global and local --------------------------------------------------


def test_awareness_missing_step_wrong_step_and_extra_step() -> None:
    the_item = item({"tool_usage_awareness": AWARE})
    # 1.1 right, 1.2 right, 1.3 missing, 2.1 wrong; 3.1 is not in the gold and costs nothing.
    text = json.dumps(
        [
            {"step": "1.1", "needs_tool": 0},
            {"step": "1.2", "needs_tool": 1},
            {"step": "2.1", "needs_tool": 0},
            {"step": "3.1", "needs_tool": 1},
        ]
    )
    assert run("tool_usage_awareness", the_item, text) == {
        "accuracy_global": 0.0,
        "accuracy_local": 50.0,
        "unparsed": 0.0,
    }


def test_awareness_all_right_with_an_extra_step_is_global_right() -> None:
    the_item = item({"tool_usage_awareness": AWARE})
    text = '[{"step": "1.1", "needs_tool": 0}, {"step": "1.2", "needs_tool": 1}, ' + (
        '{"step": "1.3", "needs_tool": 0}, {"step": "2.1", "needs_tool": 1}, '
        '{"step": "9.9", "needs_tool": 1}]'
    )
    scores = run("tool_usage_awareness", the_item, text)
    assert scores["accuracy_global"] == 100.0
    assert scores["accuracy_local"] == 100.0


def test_first_answer_for_a_step_counts() -> None:
    the_item = item({"tool_usage_awareness": AWARE[:1]})
    text = '[{"step": "1.1", "needs_tool": 0}, {"step": "1.1", "needs_tool": 1}]'
    assert run("tool_usage_awareness", the_item, text)["accuracy_local"] == 100.0


def test_creation_awareness() -> None:
    gold = [{"step": "1.2", "value": 0}, {"step": "2.1", "value": 1}]
    the_item = item({"tool_creation_awareness": gold})
    text = '[{"step": "1.2", "needs_new_tool": 0}, {"step": "2.1", "needs_new_tool": 0}]'
    scores = run("tool_creation_awareness", the_item, text)
    assert (scores["accuracy_global"], scores["accuracy_local"]) == (0.0, 50.0)


def test_selection_exact_name_per_step() -> None:
    the_item = item({"tool_selection": SELECT})
    right = '[{"step": "1.2", "tool": "get\\\\_weather"}, {"step": "2.1", "tool": " set_alarm "}]'
    assert run("tool_selection", the_item, right)["accuracy_global"] == 100.0
    # A name is compared exactly: case matters.
    wrong = '[{"step": "1.2", "tool": "Get_Weather"}, {"step": "2.1", "tool": "set_alarm"}]'
    scores = run("tool_selection", the_item, wrong)
    assert (scores["accuracy_global"], scores["accuracy_local"]) == (0.0, 50.0)


def test_run_level_local_pools_steps_by_default() -> None:
    # Item A: 4 gold steps, 2 right. Item B: 2 gold steps, 2 right.
    a = item({"tool_usage_awareness": AWARE}, "a")
    b = item({"tool_usage_awareness": AWARE[:2]}, "b")
    half = '[{"step": "1.1", "needs_tool": 0}, {"step": "1.2", "needs_tool": 1}]'
    for options, local in (({}, 100 * 4 / 6), ({"local_average": "samples"}, 75.0)):
        ctx = context("tool_usage_awareness", **options)
        scored = []
        for the_item in (a, b):
            outcome = EVALUATOR.parse(half, the_item, ctx, {})
            scored.append(Scored(the_item, outcome, EVALUATOR.score(outcome, the_item, ctx, {})))
        result = EVALUATOR.aggregate(scored, ctx)
        assert result["accuracy_global"] == 50.0
        assert result["accuracy_local"] == round(local, 2)
        assert result["unparsed"] == 0.0


# --- usage: key-value Levenshtein and accuracy --------------------------------------------------


def test_usage_levenshtein_hand_computed() -> None:
    the_item = item({"tool_usage": USAGE})
    text = json.dumps(
        [
            # city right (1), day "Sunday" vs "Saturday" (1 - 3/8); the extra key is free.
            {
                "step": "1.2",
                "tool": "get_weather",
                "arguments": {"city": "Ghent", "day": "Sunday", "units": "metric"},
            },
            # time right (1); empty gold label against a non-empty prediction (0).
            {"step": "2.1", "tool": "set_alarm", "arguments": {"time": "07:00", "label": "x"}},
        ]
    )
    scores = run("tool_usage", the_item, text)
    expected = ((1 + (1 - 3 / 8)) / 2 + (1 + 0) / 2) / 2
    assert scores["levenshtein_local"] == pytest.approx(100 * expected)
    assert scores["kv_accuracy_local"] == 0.0
    assert scores["kv_accuracy_global"] == 0.0


def test_usage_missing_key_missing_step_and_empty_gold_value() -> None:
    the_item = item({"tool_usage": USAGE})
    # 1.2 lacks "day" (0) and 2.1 is missing altogether (0).
    text = '[{"step": "1.2", "arguments": {"city": "Ghent"}}]'
    scores = run("tool_usage", the_item, text)
    assert scores["levenshtein_local"] == pytest.approx(100 * (0.5 + 0) / 2)
    # Empty against empty scores 1, and makes the step exact.
    text = json.dumps(
        [
            {"step": "1.2", "arguments": {"city": "Ghent", "day": "Saturday"}},
            {"step": "2.1", "arguments": {"time": "07:00", "label": ""}},
        ]
    )
    assert run("tool_usage", the_item, text) == {
        "levenshtein_local": 100.0,
        "kv_accuracy_global": 100.0,
        "kv_accuracy_local": 100.0,
        "unparsed": 0.0,
    }


def test_usage_kv_accuracy_local_and_global() -> None:
    the_item = item({"tool_usage": USAGE})
    text = json.dumps(
        [
            {"step": "1.2", "arguments": {"city": "Ghent", "day": "Saturday", "extra": 1}},
            {"step": "2.1", "arguments": {"time": "7:00", "label": ""}},
        ]
    )
    scores = run("tool_usage", the_item, text)
    assert scores["kv_accuracy_local"] == 50.0
    assert scores["kv_accuracy_global"] == 0.0
    assert scores["levenshtein_local"] == pytest.approx(100 * (1 + (1 + 1 - 1 / 5) / 2) / 2)


def test_usage_step_without_arguments() -> None:
    gold = [{"step": "1.2", "tool": "get_time", "arguments": {}}]
    the_item = item({"tool_usage": gold})
    text = '[{"step": "1.2", "tool": "get_time", "arguments": {}}]'
    assert run("tool_usage", the_item, text)["levenshtein_local"] == 100.0
    # The reference scorer's behaviour, on request.
    zero = run("tool_usage", the_item, text, no_argument_step="zero")
    assert zero["levenshtein_local"] == 0.0


# --- parsing ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        # JSON inside prose and a code fence
        'Here is my answer:\n```json\n[{"step": "1.1", "needs_tool": 0}, '
        '{"step": "1.2", "needs_tool": 1}]\n```\nHope this helps.',
        # UltraTool's published outputs: Python literals with the step's text and key "tool"
        "[{'step': '1.1 Note the city (City: Ghent)', 'tool': '0'}, "
        "{'step': \"1.2 Get the forecast\", 'tool': '1'}]",
        # An object keyed by step number, and a wrapper object
        '{"1.1": 0, "1.2": "yes"}',
        '{"steps": [{"step": 1.1, "needs_tool": false}, {"step": "1.2.", "needs_tool": true}]}',
        # Lines
        "1.1: no\n1.2: 1",
        "- Step 1.1 Note the city: 0\n- Step 1.2 Get the forecast: yes",
        # A list cut off by the token limit keeps its complete entries
        '[{"step": "1.1", "needs_tool": 0}, {"step": "1.2", "needs_tool": 1}, {"step": "1.3", "ne',
    ],
)
def test_awareness_output_forms(text: str) -> None:
    the_item = item({"tool_usage_awareness": AWARE[:2]})
    outcome = EVALUATOR.parse(text, the_item, context("tool_usage_awareness"), {})
    assert outcome.parsed, outcome.note
    assert outcome.answer[:2] == [{"step": "1.1", "value": 0}, {"step": "1.2", "value": 1}]


# A Python literal that is not JSON as a whole, though some of its step objects are: the JSON
# fragments must not stand in for the list (they used to, and the other steps were lost).
MIXED_QUOTES = (
    '[{"step": "1.1 Get the path", "tool": "0"}, {"step": \'1.2 Write the file\', "tool": "1"}, '
    '{"step": \'1.3 Confirm\', "tool": "0"}]'
)
WITH_TRUE = (
    '[{"step": "1.1", "needs_tool": 0}, {"step": "1.2", "needs_tool": True}, '
    '{"step": "1.3", "needs_tool": 0}]'
)


@pytest.mark.parametrize(
    "text",
    [
        MIXED_QUOTES,
        WITH_TRUE,
        f"My answer:\n```python\n{MIXED_QUOTES}\n```",
        f"Steps: {WITH_TRUE} (all of them)",
    ],
)
def test_a_whole_python_literal_wins_over_its_json_fragments(text: str) -> None:
    the_item = item({"tool_usage_awareness": AWARE[:3]})
    outcome = EVALUATOR.parse(text, the_item, context("tool_usage_awareness"), {})
    assert outcome.answer == AWARE[:3]
    scores = run("tool_usage_awareness", the_item, text)
    assert scores == {"accuracy_global": 100.0, "accuracy_local": 100.0, "unparsed": 0.0}


def test_a_whole_python_literal_of_created_tools_wins_over_its_json_fragments() -> None:
    first = {
        "name": "find_file",
        "description": "Find a file.",
        "arguments": {"type": "object", "properties": {}},
        "results": {"type": "object", "properties": {}},
    }
    second = {**first, "name": "write_file", "description": "Write a file."}
    # The second tool's description is single-quoted: the list is a literal, not JSON.
    second_text = json.dumps(second).replace('"Write a file."', "'Write a file.'")
    text = (
        f'[{{"step": "1.1", "tool": {json.dumps(first)}}}, '
        f'{{"step": "1.2", "tool": {second_text}}}]'
    )
    the_item = item({})
    outcome = EVALUATOR.parse(text, the_item, context("tool_creation"), {})
    assert [(entry["step"], entry["tool"]["name"]) for entry in outcome.answer] == [
        ("1.1", "find_file"),
        ("1.2", "write_file"),
    ]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (
            "[{'step': '1.1 Check the user's order', 'needs_tool': 0}, "
            "{'step': '1.2', 'needs_tool': 1}]",
            "an apostrophe inside a single-quoted string",
        ),
        (
            '[{"step": "1.1", "needs_tool": 0}, {"step": "1.2", "needs_tool": 1]',
            "the last step's closing brace missing",
        ),
        (
            '[{"step": "1.1", "needs_tool": 0}, {"step": "1.2", "needs_tool": 1}}]',
            "one closing brace too many",
        ),
        (
            '[{"step": "1.1", "needs_tool": "0"}, {"step": "1.2", "needs_tool": "1]',
            "the last string and object left open",
        ),
        (
            '[{"step": "1.1", "needs_tool": 0}{"step": "1.2", "needs_tool": 1}]',
            "no comma between two steps",
        ),
        (
            '[{"step": "1.1", "needs_tool": 0}\uff0c{"step": "1.2", "needs_tool": 1}]',
            "a full-width comma between two steps",
        ),
        (
            '[{"step": "1.1", "needs_tool": 0}, "step": "1.2", "needs_tool": 1}]',
            "a step's opening brace missing",
        ),
        (
            '[{"step": "1.1", "needs_tool": 0}, {"step": "1.2", "needs_tool": 1})]',
            "a stray parenthesis after a step",
        ),
    ],
)
def test_safe_repairs_of_a_list_that_does_not_read(text: str, why: str) -> None:
    the_item = item({"tool_usage_awareness": AWARE[:2]})
    outcome = EVALUATOR.parse(text, the_item, context("tool_usage_awareness"), {})
    assert outcome.answer == AWARE[:2], why
    assert "repaired" in outcome.note


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (
            '[{"step": "1.2", "arguments": {"city": "Ghent", "day": "Saturday"}, '
            '{"step": "2.1", "arguments": {"time": "07:00", "label": ""}}]',
            "a step's arguments object left open",
        ),
        (
            '[{"step": "1.2", "arguments": {"city": "Ghent", "day": "Saturday"}}}, '
            '{"step": "2.1", "arguments": {"time": "07:00", "label": ""}}]',
            "a closing brace too many between two steps",
        ),
        (
            '[{"step": "1.2", "arguments": {"city": "Ghent", "day": "Saturday"}}, '
            '{"step": "2.1", "arguments": {"time": "07:00", "label": ""}}, {"step": "3.1", "ar',
            "a list cut off: the complete steps count",
        ),
    ],
)
def test_safe_repairs_of_a_usage_list(text: str, why: str) -> None:
    the_item = item({"tool_usage": USAGE})
    outcome = EVALUATOR.parse(text, the_item, context("tool_usage"), {})
    assert [(entry["step"], entry["arguments"]) for entry in outcome.answer] == [
        ("1.2", {"city": "Ghent", "day": "Saturday"}),
        ("2.1", {"time": "07:00", "label": ""}),
    ], why


def test_a_usage_list_whose_arguments_list_is_left_open() -> None:
    gold = [{"step": "1.2", "tool": "plan_trip", "arguments": {"days": ["Sat", "Sun"]}}]
    the_item = item({"tool_usage": gold})
    text = '[{"step": "1.2", "tool": "plan_trip", "arguments": {"days": ["Sat", "Sun"]'
    outcome = EVALUATOR.parse(text, the_item, context("tool_usage"), {})
    assert outcome.answer == [
        {"step": "1.2", "tool": "plan_trip", "arguments": gold[0]["arguments"]}
    ]


def test_repairs_never_change_what_a_string_says() -> None:
    # Quote marks inside strings stay text; words such as true, None, null and json are values'
    # own words, never rewritten.
    gold = [{"step": "1.2", "tool": "note", "arguments": {"text": "", "who": "", "flag": ""}}]
    the_item = item({"tool_usage": gold})
    text = (
        "[{'step': '1.2', 'tool': 'note', 'arguments': {'text': \"Buy 'milk', 'eggs'; None is "
        "true json\", 'who': 'Ann's', 'flag': None}}"
    )
    outcome = EVALUATOR.parse(text, the_item, context("tool_usage"), {})
    assert outcome.answer[0]["arguments"] == {
        "text": "Buy 'milk', 'eggs'; None is true json",
        "who": "Ann's",
        "flag": None,
    }


def test_a_repaired_echo_never_replaces_the_answer_after_it() -> None:
    the_item = item({"tool_usage_awareness": AWARE[:1]})
    text = (
        "Input: [{'step': '1.1 Note the user's city', 'needs_tool': 1}]\n"
        'Answer: {"step": "1.1", "needs_tool": 0}'
    )
    outcome = EVALUATOR.parse(text, the_item, context("tool_usage_awareness"), {})
    assert outcome.answer == [{"step": "1.1", "value": 0}]


@pytest.mark.parametrize(
    "text", ["[" * 50_000, "['[', " * 30_000, ("[" + "'', " * 2_500 + "}") * 20, "{'a" * 60_000]
)
def test_degenerate_outputs_are_read_in_bounded_time(text: str) -> None:
    the_item = item({"tool_usage_awareness": AWARE[:1]})
    outcome = EVALUATOR.parse(text, the_item, context("tool_usage_awareness"), {})
    assert not outcome.parsed


def test_the_last_list_is_the_answer() -> None:
    the_item = item({"tool_usage_awareness": AWARE[:1]})
    text = (
        'The input was [{"step": "1.1", "needs_tool": 1}]. My answer: '
        '[{"step": "1.1", "needs_tool": 0}]'
    )
    outcome = EVALUATOR.parse(text, the_item, context("tool_usage_awareness"), {})
    assert outcome.answer == [{"step": "1.1", "value": 0}]


def test_usage_output_forms() -> None:
    the_item = item({"tool_usage": USAGE})
    ctx = context("tool_usage")
    expected = {"step": "1.2", "tool": "get_weather", "arguments": {"city": "Ghent"}}
    for text in (
        '[{"step": "1.2", "tool": "get_weather", "arguments": {"city": "Ghent"}}]',
        '[{"step": "1.2", "tool": "get_weather", "param": {"city": "Ghent"}}]',
        '[{"step": "1.2", "tool": "get_weather", "arguments": "{\\"city\\": \\"Ghent\\"}"}]',
        '[{"step": "1.2", "call": "get_weather(city=\'Ghent\')"}]',
        '[{"step": "1.2", "tool": "get_weather(city=\'Ghent\')"}]',
        "1.2 get_weather(city='Ghent')",
        'Step 1.2: `get\\_weather(city="Ghent")`',
        "1.2 Get the forecast (City: Ghent): get_weather(city='Ghent')",
    ):
        outcome = EVALUATOR.parse(text, the_item, ctx, {})
        assert outcome.parsed, (text, outcome.note)
        assert outcome.answer == [expected], text


def test_selection_output_forms() -> None:
    the_item = item({"tool_selection": SELECT})
    ctx = context("tool_selection")
    for text in (
        "1.2: get_weather\n2.1 -> set_alarm",
        "1.2 Get the forecast: `get_weather`\n2.1 set_alarm(time='07:00')",
        "1.2 Get the forecast (City: Ghent): get_weather\n2.1 Set it (Time: 7): set_alarm",
        "[{'step': '1.2', 'tool': 'get_weather'}, {'step': '2.1', 'tool': 'set_alarm'}]",
    ):
        outcome = EVALUATOR.parse(text, the_item, ctx, {})
        assert [e["tool"] for e in outcome.answer] == ["get_weather", "set_alarm"], text


def test_malicious_calls_are_refused_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    the_item = item({"tool_usage": USAGE})
    ctx = context("tool_usage")
    payload = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    text = f"1.2 get_weather(city={payload})\n2.1 set_alarm(time='07:00', label='')"
    outcome = EVALUATOR.parse(text, the_item, ctx, {})
    assert [e["step"] for e in outcome.answer] == ["2.1"]
    assert "refused" in outcome.note
    # Every step refused: nothing readable is left, so the output is unparsed.
    text = f'[{{"step": "1.2", "call": "get_weather(city={payload})"}}]'
    outcome = EVALUATOR.parse(text, the_item, ctx, {})
    assert not outcome.parsed
    assert "refused" in outcome.note
    for text in (f"[{payload}]", f"{{'step': '1.2', 'arguments': {payload}}}"):
        assert not EVALUATOR.parse(text, the_item, ctx, {}).parsed
    assert not marker.exists()


@pytest.mark.parametrize("text", ["", "I am not sure.", "[1, 2, 3]", '{"verdict": "yes"}'])
def test_unreadable_output_is_unparsed_and_wrong(text: str) -> None:
    the_item = item({"tool_usage_awareness": AWARE})
    ctx = context("tool_usage_awareness")
    outcome = EVALUATOR.parse(text, the_item, ctx, {})
    assert outcome.parsed is False
    assert outcome.output == text
    assert EVALUATOR.score(outcome, the_item, ctx, {}) == {
        "accuracy_global": 0.0,
        "accuracy_local": 0.0,
        "unparsed": 100.0,
    }
    skipped = EVALUATOR.score(
        outcome, the_item, context("tool_usage_awareness", unparsed="exclude"), {}
    )
    assert skipped == {"accuracy_global": None, "accuracy_local": None, "unparsed": 100.0}


def test_an_empty_list_is_a_wrong_answer_not_an_unreadable_one() -> None:
    the_item = item({"tool_usage_awareness": AWARE})
    outcome = EVALUATOR.parse("[]", the_item, context("tool_usage_awareness"), {})
    assert outcome.parsed and outcome.answer == []


def test_failed_call_scores_as_wrong() -> None:
    the_item = item({"tool_usage": USAGE})
    assert EVALUATOR.score(None, the_item, context("tool_usage"), {}) == {
        "levenshtein_local": 0.0,
        "kv_accuracy_global": 0.0,
        "kv_accuracy_local": 0.0,
        "unparsed": 0.0,
    }


def test_a_bad_option_is_an_error() -> None:
    the_item = item({"tool_usage": USAGE})
    outcome = Outcome(output="x", parsed=False)
    with pytest.raises(ValueError, match="unparsed"):
        EVALUATOR.score(outcome, the_item, context("tool_usage", unparsed="maybe"), {})


# --- prompts from the demo files ----------------------------------------------------------------


def test_awareness_prompt_from_the_demo() -> None:
    items, tools = demo_items()
    ctx = context("tool_usage_awareness", tools=tools)
    chosen = EVALUATOR.select(items, ctx)
    assert len(chosen) == 5
    prompt = EVALUATOR.build_prompt(chosen[0], ctx, {})
    assert [m["role"] for m in prompt.messages] == ["system", "user"]
    assert '"needs_tool"' in prompt.messages[0]["content"]
    user = prompt.messages[1]["content"]
    assert "Will it be windy in Rotterdam on Saturday morning?" in user
    assert "1. Check Saturday's weather" in user
    assert "1.2 Get the forecast" in user
    assert "### Steps to answer\n1.1, 1.2, 1.3, 2.1" in user
    # The plan is shown without its gold tools or calls, and awareness shows no toolset.
    assert "get_weather_forecast" not in user
    assert "### Toolset" not in user
    assert prompt.stop == () and prompt.text is None


def test_usage_prompt_shows_the_toolset_and_each_steps_tool() -> None:
    items, tools = demo_items()
    ctx = context("tool_usage", tools=tools, shots=2)
    the_item = EVALUATOR.select(items, ctx)[0]
    prompt = EVALUATOR.build_prompt(the_item, ctx, {})
    assert [m["role"] for m in prompt.messages] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    user = prompt.messages[-1]["content"]
    assert "### Toolset\n" in user
    assert '"name": "get_weather_forecast"' in user
    assert '"description": "Return the weather forecast' in user
    assert '"city": {"type": "string"' in user
    assert "### Steps to answer\n1.2 get_weather_forecast\n2.1 set_alarm" in user
    # No gold argument value leaks into the prompt.
    assert "Take the tram today" not in user
    # Our examples' answers are in the format we parse.
    for message in prompt.messages[2:-1:2]:
        assert EVALUATOR.parse(message["content"], the_item, ctx, {}).parsed


def test_selection_prompt_uses_the_task_files_toolset() -> None:
    the_item = item(
        {"tool_selection": SELECT}, toolsets={"tool_selection": ["set_alarm", "get_weather", "x"]}
    )
    tools = {"x": ToolSpec(name="x", description="An interference tool.")}
    prompt = EVALUATOR.build_prompt(the_item, context("tool_selection", tools=tools), {})
    user = prompt.messages[-1]["content"]
    assert '{"name": "set_alarm"}\n{"name": "get_weather"}\n' in user
    assert '"description": "An interference tool."' in user


def test_completion_prompt_for_a_base_model() -> None:
    items, tools = demo_items()
    ctx = context("tool_usage_awareness", tools=tools, style="completion")
    the_item = EVALUATOR.select(items, ctx)[1]
    prompt = EVALUATOR.build_prompt(the_item, ctx, {})
    text = prompt.completion_text()
    # One example of ours even at zero shots, then the item, ending where the answer goes.
    assert text.count("### Answer\n") == 2
    assert text.endswith("### Steps to answer\n1.1, 1.2, 1.3, 2.1, 2.2\n### Answer\n")
    assert "Book me a first-class seat" in text
    assert prompt.stop == ("\n\n", "\n###")
    body = prompt.request("completion")
    assert body["prompt"] == text and body["stop"] == ["\n\n", "\n###"]
    # A base model continuing the pattern writes one line that parses.
    continuation = ultratool.reference_output(the_item, "tool_usage_awareness")
    assert "\n" not in continuation
    assert EVALUATOR.parse(continuation, the_item, ctx, {}).parsed
    fewer = context("tool_usage_awareness", tools=tools, style="completion", min_completion_shots=0)
    assert EVALUATOR.build_prompt(the_item, fewer, {}).completion_text().count("### Answer") == 1


def test_every_task_has_three_examples_that_parse_to_their_gold() -> None:
    the_item = item({})
    for task in ultratool.TASKS:
        ctx = context(task, shots=5)
        prompt = EVALUATOR.build_prompt(the_item, ctx, {})
        answers = [m["content"] for m in prompt.messages if m["role"] == "assistant"]
        assert len(answers) == 3, task
        for answer in answers:
            outcome = EVALUATOR.parse(answer, the_item, ctx, {})
            assert outcome.parsed and outcome.answer, (task, answer)


def test_prompt_files_say_they_are_ours() -> None:
    files = sorted(PROMPTS.iterdir())
    assert files
    for path in files:
        head = path.read_text("utf-8")[:800]
        assert "OURS" in head, path
        assert "Huang et al. (2024)" in head, path


# --- gold as prediction -------------------------------------------------------------------------


def test_gold_as_prediction_scores_100_on_the_demo() -> None:
    items, tools = demo_items()
    for task in ("tool_usage_awareness", "tool_usage"):
        ctx = context(task, tools=tools)
        scored = []
        for the_item in EVALUATOR.select(items, ctx):
            outcome = EVALUATOR.parse(ultratool.reference_output(the_item, task), the_item, ctx, {})
            scored.append(Scored(the_item, outcome, EVALUATOR.score(outcome, the_item, ctx, {})))
        result = EVALUATOR.aggregate(scored, ctx)
        assert result.pop("unparsed") == 0.0
        assert set(result.values()) == {100.0}, (task, result)


def test_gold_as_prediction_scores_100_on_every_task() -> None:
    gold = {
        "tool_creation_awareness": [{"step": "1.2", "value": 1}, {"step": "2.1", "value": 0}],
        "tool_usage_awareness": AWARE,
        "tool_selection": SELECT,
        "tool_usage": USAGE,
        "tool_creation": [
            {
                "step": "2.1",
                "tool": {
                    "name": "set_alarm",
                    "description": "Set an alarm.",
                    "arguments": {"type": "object", "properties": {"time": {"type": "string"}}},
                    "results": {"type": "object", "properties": {"alarm_id": {"type": "string"}}},
                },
            }
        ],
    }
    the_item = item(gold)
    for task in ultratool.TASKS:
        scores = run(task, the_item, ultratool.reference_output(the_item, task))
        assert scores.pop("unparsed") == 0.0
        assert set(scores.values()) == {100.0}, task


# --- published outputs --------------------------------------------------------------------------


def write_lines(path: Path, lines: list[Any]) -> Path:
    path.write_text(
        "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n",
        "utf-8",
    )
    return path


def test_read_predictions_good_file(tmp_path: Path) -> None:
    answer = "[{'step': '1.1', 'tool': '0'}]"
    path = write_lines(
        tmp_path / "tool_usage_awareness.json",
        [
            {"output": answer},
            "",
            {"prediction": answer, "model": "m"},
            json.dumps(answer),
            {"data": {"reference": []}, "init output": answer},
            {"question": {}, "total output": {"init output": [answer, "second sample"]}},
            {"response": [{"step": "1.1", "needs_tool": 0}]},
        ],
    )
    outputs = list(EVALUATOR.read_predictions("tool_usage_awareness", path))
    assert [o.external_id for o in outputs] == ["1", "2", "3", "4", "5", "6"]
    assert {o.split for o in outputs} == {"test"}
    assert [o.output for o in outputs[:5]] == [answer] * 5
    assert json.loads(outputs[5].output) == [{"step": "1.1", "needs_tool": 0}]
    assert outputs[2].source == f"{path}, line 4"
    the_item = item({"tool_usage_awareness": AWARE[:1]})
    ctx = context("tool_usage_awareness")
    for output in outputs:
        outcome = EVALUATOR.parse(output.output, the_item, ctx, {})
        assert EVALUATOR.score(outcome, the_item, ctx, {})["accuracy_global"] == 100.0


@pytest.mark.parametrize(
    ("lines", "line", "field", "message"),
    [
        ([{"output": "x"}, "{not json"], 2, None, "not valid JSON"),
        ([{"output": "x"}, {"answer": "x"}], 2, "output", "holds no model output"),
        ([{"output": 42}], 1, "output", "expected the model output as a string"),
        ([[1, 2]], 1, None, "expected an object"),
        ([{"total output": {"other": 1}}], 1, "total output.init output", "missing"),
    ],
)
def test_read_predictions_bad_files(
    tmp_path: Path, lines: list[Any], line: int, field: str | None, message: str
) -> None:
    path = write_lines(tmp_path / "out.jsonl", lines)
    with pytest.raises(ImportFormatError, match=message) as caught:
        list(EVALUATOR.read_predictions("tool_usage", path))
    assert caught.value.file == str(path)
    assert caught.value.line == line
    assert caught.value.field == field


def test_read_predictions_refuses_unknown_tasks_and_missing_files(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "out.jsonl", [{"output": "x"}])
    with pytest.raises(ImportFormatError, match="no task 'summarising'"):
        EVALUATOR.read_predictions("summarising", path)
    with pytest.raises(ImportFormatError, match="no such file"):
        EVALUATOR.read_predictions("tool_usage", tmp_path / "missing.jsonl")


def test_the_default_reading_is_the_shared_json_scan_that_also_reads_python_literals() -> None:
    # where everything is JSON, UltraTool's reader finds what every suite's finds
    prose = 'Two objects: {"a": 1} and ```json\n[{"b": [2]}]\n``` then {broken and [3]'
    assert [found.value for found in reading.values(prose)] == json_values(prose)
    # where JSON does not read, a Python literal is read whole, and its insides are not listed
    mixed = "Steps: [{'step': '1', 'tool': True}] and [2]"
    assert [(f.start, f.end, f.value) for f in reading.values(mixed)] == [
        (7, 36, [{"step": "1", "tool": True}]),
        (41, 44, [2]),
    ]
    assert json_values(mixed) == [[2]]
