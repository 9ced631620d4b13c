"""Generic suite evaluation: answer matching, tool-call parsing and metrics against hand-computed
cases, prompts built from the demo file, and the shared reader of published outputs. Pure: no
database."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.kit.base import ImportFormatError
from benchmarks.kit.predictions import json_values, python_literal, read_generic_predictions
from benchmarks.kit.protocol import Context, Item, Scored, ToolSpec
from benchmarks.suites import generic
from benchmarks.suites.generic.conformance import reference_output

DEMO = Path(__file__).resolve().parents[3] / "benchmarks" / "demo" / "generic"
EVALUATOR = generic.SUITE.evaluator
WEATHER = ToolSpec(
    name="get_weather",
    description="Weather forecast for a city and a day.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)


def context(task: str, **options: Any) -> Context:
    shots = options.pop("shots", 0)
    style = options.pop("style", "chat")
    tools = options.pop("tools", {"get_weather": WEATHER})
    return Context(
        task=EVALUATOR.task(task), shots=shots, style=style, options=options, tools=tools
    )


def item(reference: dict[str, Any] | None, external_id: str = "q1", **input_: Any) -> Item:
    return Item(
        split="default",
        external_id=external_id,
        input=input_ or {"query": "Will it rain in Ghent tomorrow?"},
        reference=reference,
        candidate_tools=("get_weather",),
    )


def run(task: str, the_item: Item, text: str, **options: Any) -> dict[str, float | None]:
    ctx = context(task, **options)
    return EVALUATOR.score(EVALUATOR.parse(text, the_item, ctx, {}), the_item, ctx, {})


def demo_items() -> tuple[list[Item], dict[str, ToolSpec]]:
    bundle = generic.import_files([DEMO / "questions.jsonl"])
    tools = {
        tool.name: ToolSpec(
            name=tool.name, description=tool.description, parameters=tool.parameters
        )
        for tool in bundle.tools
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


CALL = {"name": "get_weather", "arguments": {"city": "Ghent", "days": 2}}


# --- tasks and selection ------------------------------------------------------------------------


def test_tasks() -> None:
    assert generic.TASKS["answer"].metrics == ("accuracy", "unparsed")
    assert generic.TASKS["tool_calls"].metrics == (
        "call_exact",
        "call_name_accuracy",
        "no_call_accuracy",
        "unparsed",
    )
    for spec in generic.TASKS.values():
        assert spec.percent == frozenset(spec.metrics)
        assert spec.splits == ()


def test_select_takes_items_with_the_tasks_gold() -> None:
    items, _ = demo_items()
    answer = EVALUATOR.select(items, context("answer"))
    calls = EVALUATOR.select(items, context("tool_calls"))
    assert [i.external_id for i in answer] == ["demo-3", "demo-4"]
    assert [i.external_id for i in calls] == ["demo-1", "demo-2", "demo-3", "demo-5", "demo-6"]
    assert EVALUATOR.select([item(None), item({"answer": None})], context("answer")) == []


# --- answers ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gold", "predicted", "right"),
    [
        ("Lisbon", "Lisbon", True),
        ("Lisbon", "**lisbon.**", True),
        ("Lisbon", '"Lisbon"', True),
        ("Lisbon", "Lisbon, Portugal", False),
        ("Lisbon", "Porto", False),
        ("New  York", "new york", True),
        (366, "366", True),
        (366, "366 days", True),
        (366, "366.0", True),
        (366, "365 or 366", False),
        (1234.5, "1,234.5", True),
        ("42", "42.0", True),
        (0.5, ".5 of it", False),
        (0.5, "0.50", True),
        (-3, "-3", True),
        (True, "Yes, it will.", True),
        (True, "no", False),
        (False, "False", True),
        (False, "perhaps", False),
        (["Lisbon", "Lisboa"], "Lisboa", True),
        (["Lisbon", "Lisboa"], "Porto", False),
        ({"city": "Ghent", "days": 2}, 'It is {"days": 2.0, "city": "Ghent"}', True),
        ({"city": "Ghent"}, '{"city": "Gent"}', False),
    ],
)
def test_answers_match(gold: Any, predicted: str, right: bool) -> None:
    assert generic.answers_match(gold, predicted) is right


def test_answer_parsing() -> None:
    the_item = item({"answer": "Lisbon"})
    ctx = context("answer")
    cases = {
        "Let me think. Portugal's capital...\nAnswer: Lisbon": "Lisbon",
        "Answer: Porto\nWait, no.\nFinal answer: Lisbon": "Lisbon",
        "Answer:\n\nLisbon\n": "Lisbon",
        "It is Porto.\nLisbon": "Lisbon",
        " Lisbon": "Lisbon",
    }
    for text, answer in cases.items():
        outcome = EVALUATOR.parse(text, the_item, ctx, {})
        assert outcome.parsed and outcome.answer == answer, text
    for text in ("", "  \n ", "Answer:"):
        assert not EVALUATOR.parse(text, the_item, ctx, {}).parsed
    assert run("answer", the_item, "Answer: lisbon.") == {"accuracy": 100.0, "unparsed": 0.0}
    assert run("answer", the_item, "") == {"accuracy": 0.0, "unparsed": 100.0}
    assert run("answer", the_item, "", unparsed="exclude") == {"accuracy": None, "unparsed": 100.0}


# --- tool calls ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({"tool_calls": [CALL]}),
        f"Sure, I will check.\n```json\n{json.dumps({'tool_calls': [CALL]}, indent=2)}\n```",
        json.dumps([CALL]),
        json.dumps(CALL),
        json.dumps(
            {
                "type": "function",
                "function": {"name": "get_weather", "arguments": json.dumps(CALL["arguments"])},
            }
        ),
        "get_weather(city='Ghent', days=2)",
        '```python\nget_weather(city="Ghent", days=2)\n```',
        "- `get_weather(city='Ghent', days=2)`",
    ],
)
def test_call_output_forms(text: str) -> None:
    outcome = EVALUATOR.parse(text, item({"tool_calls": [CALL]}), context("tool_calls"), {})
    assert outcome.parsed, outcome.note
    assert outcome.answer == [CALL]


def test_several_calls_keep_their_order() -> None:
    text = "get_weather(city='Ghent')\nget_weather(city='Bruges')"
    outcome = EVALUATOR.parse(text, item({"tool_calls": []}), context("tool_calls"), {})
    assert [c["arguments"]["city"] for c in outcome.answer] == ["Ghent", "Bruges"]
    text = '{"name": "a", "arguments": {}}\n{"name": "b", "arguments": {}}'
    outcome = EVALUATOR.parse(text, item({"tool_calls": []}), context("tool_calls"), {})
    assert [c["name"] for c in outcome.answer] == ["a", "b"]


def test_no_call_outputs() -> None:
    ctx = context("tool_calls")
    for text in ('{"tool_calls": []}', "No tool is needed: Lisbon is the capital.", "[]"):
        outcome = EVALUATOR.parse(text, item({"tool_calls": []}), ctx, {})
        assert outcome.parsed and outcome.answer == [], text


@pytest.mark.parametrize(
    "text",
    [
        "",
        '{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Gh',
        '{"tool_calls": "get_weather"}',
        '{"tool_calls": [{"arguments": {}}]}',
        '{"tool_calls": [{"name": "get_weather", "arguments": "not json"}]}',
        '{"tool_calls": [{"name": "get_weather", "arguments": [1]}]}',
    ],
)
def test_unreadable_calls_are_unparsed(text: str) -> None:
    the_item = item({"tool_calls": [CALL]})
    outcome = EVALUATOR.parse(text, the_item, context("tool_calls"), {})
    assert not outcome.parsed
    assert run("tool_calls", the_item, text) == {
        "call_exact": 0.0,
        "call_name_accuracy": 0.0,
        "no_call_accuracy": None,
        "unparsed": 100.0,
    }


def test_malicious_call_strings_are_refused(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    payloads = [
        f"get_weather(city=__import__('pathlib').Path({str(marker)!r}).touch())",
        "get_weather(city=open('/etc/passwd').read())",
        "get_weather(**{'city': 'x'})",
        "get_weather(city=(lambda: 1)())",
    ]
    for text in payloads:
        outcome = EVALUATOR.parse(text, item({"tool_calls": [CALL]}), context("tool_calls"), {})
        assert not outcome.parsed, text
        assert "refused" in outcome.note
    assert not marker.exists()


def test_call_metrics_hand_computed() -> None:
    the_item = item({"tool_calls": [CALL]})
    exact = json.dumps(
        {"tool_calls": [{"name": "get_weather", "arguments": {"days": 2.0, "city": "Ghent"}}]}
    )
    assert run("tool_calls", the_item, exact) == {
        "call_exact": 100.0,
        "call_name_accuracy": 100.0,
        "no_call_accuracy": None,
        "unparsed": 0.0,
    }
    for arguments in (
        {"city": "Gent", "days": 2},
        {"city": "Ghent"},
        {**CALL["arguments"], "x": 1},
    ):
        text = json.dumps({"tool_calls": [{"name": "get_weather", "arguments": arguments}]})
        scores = run("tool_calls", the_item, text)
        assert (scores["call_exact"], scores["call_name_accuracy"]) == (0.0, 100.0), arguments
    # A string is not a number.
    text = json.dumps(
        {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Ghent", "days": "2"}}]}
    )
    assert run("tool_calls", the_item, text)["call_exact"] == 0.0
    # An extra call, and no call, are wrong.
    assert (
        run("tool_calls", the_item, json.dumps({"tool_calls": [CALL, CALL]}))["call_exact"] == 0.0
    )
    assert run("tool_calls", the_item, '{"tool_calls": []}')["call_name_accuracy"] == 0.0


def test_call_order_matters() -> None:
    a = {"name": "a", "arguments": {}}
    b = {"name": "b", "arguments": {}}
    the_item = item({"tool_calls": [a, b]})
    scores = run("tool_calls", the_item, json.dumps({"tool_calls": [b, a]}))
    assert (scores["call_exact"], scores["call_name_accuracy"]) == (0.0, 0.0)


def test_no_call_accuracy_and_the_run_aggregate() -> None:
    ctx = context("tool_calls")
    no_call = item({"tool_calls": []}, "none")
    one_call = item({"tool_calls": [CALL]}, "one")
    cases = [
        (no_call, '{"tool_calls": []}'),  # right: no call
        (no_call, json.dumps({"tool_calls": [CALL]})),  # wrong: a call
        (one_call, json.dumps({"tool_calls": [CALL]})),  # exact
        (one_call, 'garbage {"name": '),  # unparsed
    ]
    scored = []
    for the_item, text in cases:
        outcome = EVALUATOR.parse(text, the_item, ctx, {})
        scored.append(Scored(the_item, outcome, EVALUATOR.score(outcome, the_item, ctx, {})))
    scored.append(Scored(one_call, None, EVALUATOR.score(None, one_call, ctx, {})))  # failed call
    assert [s.scores["no_call_accuracy"] for s in scored] == [100.0, 0.0, None, None, None]
    assert EVALUATOR.aggregate(scored, ctx) == {
        "call_exact": 40.0,
        "call_name_accuracy": 40.0,
        "no_call_accuracy": 50.0,
        "unparsed": 20.0,
    }
    assert EVALUATOR.aggregate([], ctx) == dict.fromkeys(generic.TASKS["tool_calls"].metrics)


def test_same_value() -> None:
    assert generic.same_value({"a": [1, 2.0]}, {"a": [1.0, 2]})
    assert not generic.same_value(1, True)
    assert not generic.same_value("1", 1)
    assert not generic.same_value([1, 2], [2, 1])
    assert generic.same_value(None, None)


# --- prompts from the demo file -----------------------------------------------------------------


def test_tool_calls_prompt_lists_the_tools_with_schemas() -> None:
    items, tools = demo_items()
    ctx = context("tool_calls", tools=tools)
    the_item = next(i for i in items if i.external_id == "demo-2")
    prompt = EVALUATOR.build_prompt(the_item, ctx, {})
    assert [m["role"] for m in prompt.messages] == ["system", "user"]
    system = prompt.messages[0]["content"]
    assert '{"tool_calls": []}' in system
    assert (
        '{"name": "convert_currency", "description": "Convert an amount between currencies."'
        in system
    )
    assert '"required": ["amount", "from_currency", "to_currency"]' in system
    assert '"name": "get_weather"' in system
    assert prompt.messages[1]["content"] == "How many US dollars is 250 Swiss francs?"
    assert prompt.stop == () and prompt.text is None


def test_a_dialogue_becomes_chat_history() -> None:
    items, tools = demo_items()
    the_item = next(i for i in items if i.external_id == "demo-4")
    prompt = EVALUATOR.build_prompt(the_item, context("answer", tools=tools, shots=2), {})
    roles = [m["role"] for m in prompt.messages]
    assert roles == ["system", "user", "assistant", "user"]
    assert prompt.messages[1]["content"] == "Is it going to rain in Bruges today?"
    assert json.loads(prompt.messages[2]["content"]) == {
        "tool_calls": [{"name": "get_weather", "arguments": {"city": "Bruges", "day": "today"}}]
    }
    assert prompt.messages[3]["content"].startswith("Tool result (get_weather): {")
    system = prompt.messages[0]["content"]
    assert system.count("### Reply") == 2
    # The answer task offers no tools.
    assert "### Tools" not in system


def test_completion_prompt_for_a_base_model() -> None:
    items, tools = demo_items()
    the_item = next(i for i in items if i.external_id == "demo-5")
    prompt = EVALUATOR.build_prompt(
        the_item, context("tool_calls", tools=tools, style="completion"), {}
    )
    text = prompt.completion_text()
    assert text.count("### Reply\n") == 2  # one example of ours even at zero shots
    assert text.endswith(
        "### Conversation\nUser: I have 80 euros.\n"
        "Assistant: Noted. What would you like to do with it?\n"
        "User: Tell me what that is in Japanese yen.\n### Reply\n"
    )
    assert prompt.request("completion")["stop"] == ["\n\n", "\n###"]
    answer = EVALUATOR.build_prompt(
        items[2], context("answer", tools=tools, style="completion", shots=3), {}
    )
    assert answer.completion_text().count("Answer: ") == 3
    assert answer.stop == ("\n",)


def test_examples_parse() -> None:
    the_item = item({"tool_calls": [], "answer": "x"})
    for task in generic.TASKS:
        ctx = context(task, shots=3, style="completion")
        text = EVALUATOR.build_prompt(the_item, ctx, {}).completion_text()
        replies = [block.split("\n")[0] for block in text.split("### Reply\n")[1:-1]]
        assert len(replies) == 3
        for reply in replies:
            assert EVALUATOR.parse(reply, the_item, ctx, {}).parsed, reply


def test_prompt_file_says_it_is_ours() -> None:
    head = (Path(generic.__file__).parent / "prompts" / "templates.toml").read_text("utf-8")[:400]
    assert "OURS" in head


# --- gold as prediction -------------------------------------------------------------------------


def test_gold_as_prediction_scores_100_on_the_demo() -> None:
    items, tools = demo_items()
    for task in generic.TASKS:
        ctx = context(task, tools=tools)
        scored = []
        for the_item in EVALUATOR.select(items, ctx):
            outcome = EVALUATOR.parse(reference_output(the_item, task), the_item, ctx, {})
            scored.append(Scored(the_item, outcome, EVALUATOR.score(outcome, the_item, ctx, {})))
        result = EVALUATOR.aggregate(scored, ctx)
        assert result.pop("unparsed") == 0.0
        assert set(result.values()) == {100.0}, (task, result)


# --- published outputs --------------------------------------------------------------------------


def write_lines(path: Path, lines: list[Any]) -> Path:
    path.write_text(
        "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n",
        "utf-8",
    )
    return path


def test_read_generic_predictions(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "outputs.jsonl",
        [
            {"sample_id": "demo-1", "output": '{"tool_calls": []}'},
            "",
            {"sample_id": 7, "output": {"tool_calls": [CALL]}, "split": "dialogue"},
            {"sample_id": 7, "output": "Answer: 3", "split": "other"},
        ],
    )
    outputs = list(EVALUATOR.read_predictions("tool_calls", path))
    assert [(o.external_id, o.split) for o in outputs] == [
        ("demo-1", None),
        ("7", "dialogue"),
        ("7", "other"),
    ]
    assert json.loads(outputs[1].output) == {"tool_calls": [CALL]}
    assert outputs[1].source == f"{path}, line 3"


@pytest.mark.parametrize(
    ("lines", "line", "field", "message"),
    [
        ([{"sample_id": "a", "output": "x"}, "not json"], 2, None, "not valid JSON"),
        (["[1]"], 1, None, "expected an object"),
        ([{"sample_id": "a", "output": "x", "score": 1}], 1, "score", "unknown key"),
        ([{"output": "x"}], 1, "sample_id", "missing"),
        ([{"sample_id": True, "output": "x"}], 1, "sample_id", "expected a string or an integer"),
        ([{"sample_id": " ", "output": "x"}], 1, "sample_id", "is empty"),
        ([{"sample_id": "a"}], 1, "output", "missing"),
        ([{"sample_id": "a", "output": None}], 1, "output", "missing"),
        ([{"sample_id": "a", "output": "x", "split": 3}], 1, "split", "expected a string"),
    ],
)
def test_read_generic_predictions_bad_files(
    tmp_path: Path, lines: list[Any], line: int, field: str | None, message: str
) -> None:
    path = write_lines(tmp_path / "outputs.jsonl", lines)
    with pytest.raises(ImportFormatError, match=message) as caught:
        read_generic_predictions(path)
    assert caught.value.file == str(path)
    assert caught.value.line == line
    assert caught.value.field == field


def test_read_generic_predictions_passes_a_repeated_sample_on_with_its_line(
    tmp_path: Path,
) -> None:
    # What a second line for a sample means is the import's policy (on_duplicate), the same
    # for every suite's reader: the reader hands every line over, each with its own line.
    path = write_lines(
        tmp_path / "outputs.jsonl",
        [
            {"sample_id": "a", "output": "x"},
            {"sample_id": "a", "output": "y", "split": "s"},
            {"sample_id": "a", "output": "z"},
        ],
    )
    outputs = read_generic_predictions(path)
    assert [(o.external_id, o.split, o.output, o.source) for o in outputs] == [
        ("a", None, "x", f"{path}, line 1"),
        ("a", "s", "y", f"{path}, line 2"),
        ("a", None, "z", f"{path}, line 3"),
    ]


def test_read_predictions_refuses_an_unknown_task(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "outputs.jsonl", [{"sample_id": "a", "output": "x"}])
    with pytest.raises(ValueError, match="no task"):
        EVALUATOR.read_predictions("planning", path)


# --- the shared readers of model text -----------------------------------------------------------


def test_json_values_in_prose() -> None:
    text = 'Two objects: {"a": 1} and ```json\n[{"b": [2]}]\n``` then {broken and [3]'
    assert json_values(text) == [{"a": 1}, [{"b": [2]}], [3]]
    assert json_values("[" * 5000) == []


def test_python_literal_never_evaluates() -> None:
    assert python_literal("[{'step': '1.1', 'tool': True, 'n': None}]") == [
        {"step": "1.1", "tool": True, "n": None}
    ]
    for text in ("__import__('os')", "[1, open('x')]", "1 + 1", "", "x" * 20_000):
        with pytest.raises(ValueError):
            python_literal(text)
