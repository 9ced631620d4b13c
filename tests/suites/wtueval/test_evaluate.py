"""WTU-Eval evaluation: the local calculator, the ReAct loop (driven by a scripted `complete`),
answer matching and the run metrics, all hand-computed. Pure: no database."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from benchmarks.kit.protocol import (
    CallFailed,
    Context,
    Item,
    Outcome,
    Prompt,
    Scored,
    Tool,
    ToolSpec,
    ToolUnavailable,
)
from benchmarks.suites import wtueval
from benchmarks.suites.wtueval import evaluate as ev
from benchmarks.suites.wtueval.calculator import (
    MAX_CHARS,
    CalculatorError,
    calculate,
    evaluate_expression,
)

EVALUATOR = wtueval.SUITE.evaluator

MATH = Item(
    split="gsm8k",
    external_id="1",
    input={"query": "Tom has 3 crates of 48 apples and eats 5. How many apples are left?"},
    reference={"answer": 139, "kind": "tool"},
    metadata={"regions": ["R1", "R2"]},
)
BOOLQ = Item(
    split="boolq",
    external_id="1",
    input={"query": "Is a tomato botanically a fruit?"},
    reference={"answer": True, "kind": "general"},
    metadata={"regions": ["R3", "R4"], "passage": "Botanically, a tomato is a fruit."},
)
PIQA = Item(
    split="piqa",
    external_id="2",
    input={
        "query": "To dry wet shoes faster,",
        "options": ["stuff them with newspaper", "put them in a sealed plastic bag"],
    },
    reference={"answer": 1, "kind": "general"},
    metadata={"regions": ["R3", "R4"]},
)


def ctx_for(task: str, style: str = "chat", shots: int = 0, **options: Any) -> Context:
    toolbox = options.pop("toolbox", {})
    return Context(
        task=EVALUATOR.task(task), style=style, shots=shots, options=options, toolbox=toolbox
    )


def scripted(replies: Sequence[str]) -> tuple[Any, list[Prompt]]:
    """A fake endpoint: returns the replies in order and keeps the prompts it was sent."""
    prompts: list[Prompt] = []

    async def complete(prompt: Prompt) -> str:
        prompts.append(prompt)
        if len(prompts) > len(replies):
            raise AssertionError(f"asked {len(prompts)} times, only {len(replies)} replies")
        return replies[len(prompts) - 1]

    return complete, prompts


def run(item: Item, ctx: Context, replies: Sequence[str]) -> tuple[Outcome, list[Prompt]]:
    complete, prompts = scripted(replies)
    context = EVALUATOR.prepare([item], ctx)[0]
    outcome = asyncio.run(EVALUATOR.solve(item, ctx, context, complete))
    return outcome, prompts


def search_tool(
    reply: str | Exception = "Botanically, a tomato is a fruit.",
) -> tuple[Tool, list[dict[str, Any]]]:
    calls: list[dict[str, Any]] = []

    async def call(arguments: dict[str, Any]) -> str:
        calls.append(arguments)
        if isinstance(reply, Exception):
            raise reply
        return reply

    spec = ToolSpec(
        name="WikiSearch",
        description="Search an entity on Wikipedia.",
        parameters={
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
        },
    )
    return Tool(spec=spec, call=call), calls


# --- the calculator ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2 + 3 * 4", "14"),
        ("(2 + 3) * 4", "20"),
        ("-3 ** 2", "-9"),
        ("2 ** 3 ** 2", "512"),
        ("2^10", "1024"),
        ("7 / 2", "3.5"),
        ("96/8", "12"),
        ("7 // 2", "3"),
        ("7 % 3", "1"),
        ("-(4 - 10)", "6"),
        ("1,000 * 3", "3000"),
        ("14 * 36 - 125 =", "379"),
        ("1/3", "0.333333333333"),
        ("sqrt(16) + abs(-2)", "6"),
        ("round(3.14159, 2)", "3.14"),
        ("log(8, 2)", "3"),
        ("max(3, 9, 4) - min(3, 9, 4)", "6"),
        ("2 * pi", "6.28318530718"),
        ("`96 / 8`", "12"),
        ("10 ** -2", "0.01"),
    ],
)
def test_calculator_computes_arithmetic_with_python_precedence(text: str, expected: str) -> None:
    assert calculate(text) == expected


@pytest.mark.parametrize("text", ["1 / 0", "5 // 0", "5 % 0", "0 ** -1"])
def test_calculator_reports_division_by_zero(text: str) -> None:
    with pytest.raises(CalculatorError, match="division by zero"):
        evaluate_expression(text)
    assert calculate(text).startswith("Error: division by zero")


@pytest.mark.parametrize(
    "text", ["10 ** 1000", "2 ** 100000", "9 ** 9 ** 9", "1e308 * 10", "factorial(1000)"]
)
def test_calculator_refuses_huge_results_before_computing_them(text: str) -> None:
    assert calculate(text).startswith("Error:")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("x + 1", "unknown name 'x'"),
        ("143 ice cream sandwiches / 11", "cannot read"),
        ("__import__('os').system('true')", "only plain function names"),
        ("__import__('os')", "'__import__' is not a known function"),
        ("open('/etc/passwd')", "'open' is not a known function"),
        ("eval('1 + 1')", "'eval' is not a known function"),
        ("math.sqrt(4)", "only plain function names"),
        ("(1).real", "attribute access"),
        ("(lambda: 1)()", "only plain function names"),
        ("lambda: 1", "lambdas"),
        ("[1, 2][0]", "subscripts"),
        ("'a' * 3", "not a number"),
        ("True + 1", "not a number"),
        ("1 if 2 else 3", "conditional"),
        ("1 < 2", "comparisons"),
        ("sqrt(x=4)", "positional arguments only"),
        ("sqrt(-1)", "math domain error"),
        ("(-8) ** (1/3)", "not a real number"),
        ("", "empty"),
    ],
)
def test_calculator_refuses_everything_but_arithmetic(text: str, fragment: str) -> None:
    with pytest.raises(CalculatorError) as caught:
        evaluate_expression(text)
    assert fragment in str(caught.value)
    assert calculate(text) == f"Error: {caught.value}"


def test_calculator_bounds_input_length_and_depth() -> None:
    assert "longer than" in calculate("1+" * MAX_CHARS + "1")
    assert "nested deeper" in calculate("-" * 100 + "1")
    assert calculate("(" * 60 + "1" + ")" * 60) == "1"  # parentheses add no node
    assert calculate(None).startswith("Error:")  # type: ignore[arg-type]


# --- the tasks and the pool --------------------------------------------------------------------


def test_tasks_select_the_region_kind() -> None:
    items = [MATH, BOOLQ, PIQA]
    assert list(wtueval.TASKS) == ["R1", "R2", "R3", "R4"]
    assert EVALUATOR.select(items, ctx_for("R1")) == [MATH]
    assert EVALUATOR.select(items, ctx_for("R2")) == [MATH]
    assert EVALUATOR.select(items, ctx_for("R3")) == [BOOLQ, PIQA]
    assert EVALUATOR.select(items, ctx_for("R4")) == [BOOLQ, PIQA]
    r2, r4 = wtueval.TASKS["R2"], wtueval.TASKS["R4"]
    assert r2.agent and not wtueval.TASKS["R1"].agent
    assert r2.metrics[:2] == ("accuracy", "call_rate")
    assert "tool_errors" in r4.metrics and "tool_errors" not in r2.metrics
    assert r2.defaults["max_steps"] == 5
    assert {"accuracy", "call_rate", "errors[null_content]"} <= r2.percent


def test_pool_offers_only_available_tools_and_prepare_stores_it() -> None:
    wiki, _ = search_tool()
    assert list(ev.tool_pool(ctx_for("R2"))) == ["Calculator"]
    ctx = ctx_for("R2", toolbox={"WikiSearch": wiki})
    assert list(ev.tool_pool(ctx)) == ["Calculator", "WikiSearch"]
    assert EVALUATOR.prepare([MATH], ctx) == [{"tools": ["Calculator", "WikiSearch"]}]
    assert EVALUATOR.prepare([MATH], ctx_for("R1")) == [{}]
    only = ctx_for("R4", toolbox={"WikiSearch": wiki}, tools=["wiki search"])
    assert list(ev.tool_pool(only)) == ["WikiSearch"]
    # A tool stored at launch but no longer served is not offered.
    assert list(ev.tool_pool(ctx_for("R2"), {"tools": ["Calculator", "WikiSearch"]})) == [
        "Calculator"
    ]


def test_tool_arguments_from_the_action_input() -> None:
    wiki, _ = search_tool()
    assert ev.tool_arguments(wiki.spec, " Georges Bizet ") == {"query": "Georges Bizet"}
    assert ev.tool_arguments(wiki.spec, '{"query": "Carmen"}') == {"query": "Carmen"}
    assert ev.tool_arguments(wiki.spec, '{"q": "Carmen"}') == {"query": "Carmen"}
    assert ev.tool_arguments(ToolSpec(name="T"), "hola") == {"input": "hola"}


# --- prompts -----------------------------------------------------------------------------------


def test_prompt_files_say_they_are_ours() -> None:
    for name in ("templates.toml", "examples.toml"):
        head = (ev.PROMPTS / name).read_text("utf-8")[:400]
        assert "OURS" in head and "WTU-Eval" in head and "papers/003" in head


def test_no_tool_prompt_in_chat_and_completion_form() -> None:
    chat = EVALUATOR.build_prompt(PIQA, ctx_for("R3"), {})
    assert [m["role"] for m in chat.messages] == ["system", "user"]
    assert "You have access" not in chat.messages[0]["content"]
    assert chat.messages[1]["content"] == (
        "Task Description: Choose the best option to answer the given question. "
        "Answer with the option's label.\n"
        "\u00b7 Question: To dry wet shoes faster,\n"
        "\u00b7 Options:\n"
        "1. stuff them with newspaper\n"
        "2. put them in a sealed plastic bag"
    )
    letters = EVALUATOR.build_prompt(PIQA, ctx_for("R3", option_labels="letters"), {})
    assert "A. stuff them with newspaper" in letters.messages[1]["content"]
    completion = EVALUATOR.build_prompt(BOOLQ, ctx_for("R3", style="completion"), {})
    assert completion.text is not None
    assert completion.text.endswith(
        "\u00b7 Passage: Botanically, a tomato is a fruit.\n"
        "\u00b7 Question: Is a tomato botanically a fruit?\nFinal Answer:"
    )
    assert completion.request("completion")["stop"] == ["\nTask Description:"]
    cot = EVALUATOR.build_prompt(BOOLQ, ctx_for("R3", style="completion", cot=True), {})
    assert cot.text is not None and cot.text.endswith("Thought:")


def test_react_prompt_lists_the_pool_and_few_shot_examples_alternate() -> None:
    wiki, _ = search_tool()
    ctx = ctx_for("R2", style="completion", shots=3, toolbox={"WikiSearch": wiki})
    prompt = EVALUATOR.build_prompt(MATH, ctx, EVALUATOR.prepare([MATH], ctx)[0])
    text = prompt.completion_text()
    assert "- Calculator: Use this tool to calculate" in text
    assert "- WikiSearch: Search an entity on Wikipedia." in text
    assert "one of [Calculator, WikiSearch] or Finish" in text
    # tool example, general example, tool example (WikiSearch is offered)
    assert text.index("14 boxes of 36 pencils") < text.index("leap year") < text.index("Carmen")
    assert "Mia's bus" not in text
    assert text.endswith("How many apples are left?\nThought:")
    assert "Observation:" in prompt.stop
    zero = EVALUATOR.build_prompt(MATH, ctx_for("R2"), {})
    assert "Here are some examples" not in zero.messages[0]["content"]
    assert (
        "Carmen"
        not in EVALUATOR.build_prompt(MATH, ctx_for("R2", shots=8), {}).messages[0]["content"]
    )


# --- the ReAct loop ----------------------------------------------------------------------------


def test_final_answer_after_a_calculator_call() -> None:
    ctx = ctx_for("R2")
    outcome, prompts = run(
        MATH,
        ctx,
        [
            "Thought: I should use the calculator.\nAction: Calculator\nAction Input: 3 * 48 - 5",
            "Thought: I now know the final answer.\nAction: Finish\nAction Input: 139 apples",
        ],
    )
    assert outcome.answer == "139 apples" and outcome.parsed
    assert [s["action"] for s in outcome.trace] == ["Calculator", "Finish"]
    first = outcome.trace[0]
    assert first["tools"] == ["Calculator"]
    assert first["arguments"] == {"expression": "3 * 48 - 5"}
    assert first["observation"] == "139" and first["ok"] is True
    assert outcome.trace[-1]["stop"] == "final_answer"
    assert "tools offered: Calculator" in outcome.note
    # The second prompt carries the scratchpad: the step, then its observation.
    assert prompts[1].messages[-2]["role"] == "assistant"
    assert prompts[1].messages[-1] == {"role": "user", "content": "Observation: 139"}
    assert EVALUATOR.score(outcome, MATH, ctx, {}) == {
        "accuracy": 1.0,
        "unparsed": 0.0,
        "call_rate": 1.0,
    }


def test_completion_style_continues_after_thought_and_shows_observations() -> None:
    ctx = ctx_for("R2", style="completion")
    outcome, prompts = run(
        MATH,
        ctx,
        [
            " I should use the calculator.\nAction: Calculator\nAction Input: 3*48-5\n",
            " I now know the final answer.\nAction: Finish\nAction Input: 139\n",
        ],
    )
    assert outcome.answer == "139"
    text = prompts[1].completion_text()
    assert text.endswith(
        "Thought: I should use the calculator.\nAction: Calculator\nAction Input: 3*48-5\n"
        "Observation: 139\nThought:"
    )
    assert outcome.output.endswith("Action: Finish\nAction Input: 139")


def test_unknown_tool_gets_a_reminder_then_the_answer_counts() -> None:
    ctx = ctx_for("R2")
    outcome, prompts = run(
        MATH,
        ctx,
        [
            "Thought: Translate first.\nAction: Translate the question\nAction Input: apples",
            "Thought: Right, the calculator.\nAction: Calculator\nAction Input: 3*48-5",
            "Action: Finish\nAction Input: 139",
        ],
    )
    reminder = outcome.trace[0]["observation"]
    assert reminder == (
        "'Translate the question' is not a valid action. Please choose one of [Calculator] or "
        "Finish."
    )
    assert outcome.trace[0]["error"] == "invalid_tool"
    assert prompts[1].messages[-1]["content"] == f"Observation: {reminder}"
    assert outcome.answer == "139"
    # An action naming no tool still counts as the model choosing to call one.
    assert EVALUATOR.score(outcome, MATH, ctx, {})["call_rate"] == 1.0


def test_a_second_invalid_action_after_the_reminder_ends_the_attempt() -> None:
    ctx = ctx_for("R2")
    outcome, prompts = run(
        MATH,
        ctx,
        ["Action: Translator\nAction Input: x", "Action: Translator\nAction Input: x"],
    )
    assert len(prompts) == 2
    assert outcome.answer is None
    assert outcome.trace[-1]["stop"] == "invalid_tool_repeated"
    assert "again after a reminder" in outcome.note
    scores = EVALUATOR.score(outcome, MATH, ctx, {})
    assert scores["accuracy"] == 0.0 and scores["errors[invalid_tool_repeated]"] == 1.0


def test_step_limit_without_a_final_answer_is_wrong() -> None:
    ctx = ctx_for("R2", max_steps=3)
    replies = [f"Thought: more.\nAction: Calculator\nAction Input: {n} + 1" for n in range(3)]
    outcome, prompts = run(MATH, ctx, replies)
    assert len(prompts) == 3
    assert outcome.answer is None and outcome.trace[-1]["stop"] == "step_limit"
    assert [s["observation"] for s in outcome.trace] == ["1", "2", "3"]
    assert EVALUATOR.score(outcome, MATH, ctx, {}) == {
        "accuracy": 0.0,
        "unparsed": 0.0,
        "call_rate": 1.0,
        "errors[endless_retry]": 1.0,
    }


def test_the_same_call_again_and_again_ends_as_no_reasoning() -> None:
    ctx = ctx_for("R2")
    same = "Thought: I need the weight.\nAction: Calculator\nAction Input: 2 + 11 + 5"
    outcome, prompts = run(MATH, ctx, [same, same, same])
    assert len(prompts) == 3
    assert [s.get("observation") for s in outcome.trace] == ["18", "18", None]
    assert outcome.trace[-1]["stop"] == "repeated_call"
    assert EVALUATOR.score(outcome, MATH, ctx, {})["errors[no_reasoning]"] == 1.0


def test_calculator_errors_are_observations_and_repeating_them_is_an_invalid_call() -> None:
    ctx = ctx_for("R2")
    bad = "Thought: divide.\nAction: Calculator\nAction Input: 143 ice cream sandwiches / 11"
    outcome, _ = run(MATH, ctx, [bad, bad, bad])
    assert outcome.trace[0]["observation"].startswith("Error: cannot read")
    assert outcome.trace[0]["ok"] is False
    scores = EVALUATOR.score(outcome, MATH, ctx, {})
    assert scores["errors[invalid_tool_repeated]"] == 1.0


def test_null_content_ends_the_attempt() -> None:
    ctx = ctx_for("R2")
    outcome, prompts = run(MATH, ctx, ["Thought: I should try to add the numbers.\nAction:"])
    assert len(prompts) == 1
    assert outcome.trace[-1]["stop"] == "null_content"
    assert "the Action is empty" in outcome.note
    scores = EVALUATOR.score(outcome, MATH, ctx, {})
    assert scores["call_rate"] == 0.0 and scores["errors[null_content]"] == 1.0
    empty, _ = run(MATH, ctx, [""])
    assert "the reply is empty" in empty.note


def test_direct_answer_without_tools_on_a_general_dataset() -> None:
    ctx = ctx_for("R4")
    outcome, prompts = run(
        BOOLQ,
        ctx,
        ["Thought: I can answer without tools.\nAction: Finish\nAction Input: true"],
    )
    assert len(prompts) == 1
    assert outcome.trace[0]["action"] == "Finish"
    assert EVALUATOR.score(outcome, BOOLQ, ctx, {}) == {
        "accuracy": 1.0,
        "unparsed": 0.0,
        "call_rate": 0.0,
        "tool_errors": 0.0,
    }
    plain, _ = run(BOOLQ, ctx, ["Yes, it is a fruit."])
    assert plain.answer == "Yes, it is a fruit." and "direct answer" in plain.note
    assert EVALUATOR.score(plain, BOOLQ, ctx, {})["accuracy"] == 1.0


def test_a_tool_call_on_a_general_dataset_is_an_error() -> None:
    wiki, calls = search_tool()
    replies = [
        "Thought: Let me check.\nAction: WikiSearch\nAction Input: Tomato",
        "Thought: It is a fruit.\nAction: Finish\nAction Input: true",
    ]
    ctx = ctx_for("R4", toolbox={"WikiSearch": wiki})
    outcome, _ = run(BOOLQ, ctx, replies)
    assert calls == [{"query": "Tomato"}]
    assert outcome.answer == "true"
    assert EVALUATOR.score(outcome, BOOLQ, ctx, {}) == {
        "accuracy": 0.0,
        "unparsed": 0.0,
        "call_rate": 1.0,
        "tool_errors": 1.0,
        "errors[unnecessary_tool]": 1.0,
    }
    lenient = ctx_for("R4", toolbox={"WikiSearch": wiki}, general_tool_call="ignore")
    assert EVALUATOR.score(outcome, BOOLQ, lenient, {})["accuracy"] == 1.0


def test_an_unavailable_toolbox_tool_becomes_an_observation() -> None:
    wiki, _ = search_tool(ToolUnavailable("the virtual API server is not running"))
    ctx = ctx_for("R2", toolbox={"WikiSearch": wiki})
    outcome, _ = run(
        MATH,
        ctx,
        ["Action: WikiSearch\nAction Input: apples", "Action: Finish\nAction Input: 139"],
    )
    assert outcome.trace[0]["observation"] == (
        "WikiSearch is not available: the virtual API server is not running"
    )
    assert outcome.trace[0]["tools"] == ["Calculator", "WikiSearch"]
    assert outcome.answer == "139"


def test_long_observations_are_cut() -> None:
    wiki, _ = search_tool("x" * 50)
    ctx = ctx_for("R2", toolbox={"WikiSearch": wiki}, max_observation_chars=10)
    outcome, _ = run(
        MATH, ctx, ["Action: WikiSearch\nAction Input: a", "Action: Finish\nAction Input: 1"]
    )
    assert outcome.trace[0]["observation"] == "x" * 10 + " ... [observation truncated]"


def test_call_failed_passes_through() -> None:
    async def complete(prompt: Prompt) -> str:
        raise CallFailed("endpoint down")

    with pytest.raises(CallFailed):
        asyncio.run(EVALUATOR.solve(MATH, ctx_for("R2"), {}, complete))


def test_no_tool_tasks_ask_once() -> None:
    outcome, prompts = run(MATH, ctx_for("R1"), ["Final Answer: 139"])
    assert len(prompts) == 1 and outcome.answer == "139" and outcome.trace == []
    completion, _ = run(MATH, ctx_for("R1", style="completion"), [" 139\n"])
    assert completion.answer == "139" and completion.output == " 139\n"
    whole, _ = run(MATH, ctx_for("R1"), ["There are 139 apples left."])
    assert whole.answer == "There are 139 apples left." and "whole reply" in whole.note
    assert EVALUATOR.score(whole, MATH, ctx_for("R1"), {}) == {"accuracy": 1.0, "unparsed": 0.0}


# --- reading replies ---------------------------------------------------------------------------


def test_parse_step_reads_the_first_action_only() -> None:
    step = ev.parse_step(
        "Thought: add.\nAction: Calculator\nAction Input: 2+3\nObservation: 5\n"
        "Thought: done\nAction: Finish\nAction Input: 5"
    )
    assert (step.kind, step.action, step.action_input) == ("call", "Calculator", "2+3")
    inline = ev.parse_step("Thought: x\nAction: Calculator[1/4 * 453.6]")
    assert (inline.action, inline.action_input) == ("Calculator", "1/4 * 453.6")
    override = ev.parse_step("Action: Calculator (sum)\nAction Input: 2 + 3")
    assert (override.action, override.action_input) == ("Calculator", "2 + 3")
    same_line = ev.parse_step("Action: Calculator Action Input: 2 + 3")
    assert (same_line.action, same_line.action_input) == ("Calculator", "2 + 3")
    finish = ev.parse_step("Thought: done\nAction: Final Answer\nAction Input: 12 (cupcakes)")
    assert (finish.kind, finish.action, finish.answer) == ("final", "Finish", "12 (cupcakes)")
    final = ev.parse_step("Thought: I know it.\nFinal Answer: Paris")
    assert (final.kind, final.answer) == ("final", "Paris")
    assert ev.parse_step("Thought: hmm").why == "no Action"
    assert ev.parse_step("Action: Calculator\nAction Input:").why == "the Action Input is empty"


def test_parse_reads_a_published_transcript_without_running_tools() -> None:
    ctx = ctx_for("R2")
    text = (
        "Thought: use the calculator\nAction: Calculator\nAction Input: 3*48-5\n"
        "Observation: 139\nThought: done\nAction: Finish\nAction Input: 139"
    )
    outcome = EVALUATOR.parse(text, MATH, ctx, {"tools": ["Calculator"]})
    assert outcome.answer == "139"
    assert [s["action"] for s in outcome.trace] == ["Calculator", "Finish"]
    assert outcome.trace[0]["observation"] == "139"
    assert outcome.trace[0]["tools"] == ["Calculator"]
    assert EVALUATOR.score(outcome, MATH, ctx, {})["call_rate"] == 1.0


# --- answer matching ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "gold", "right"),
    [
        ("1,000", 1000.0, True),
        ("$1,000 dollars", "1,000", True),
        ("1000.0000001", 1000, True),
        ("3 * 48 - 5 = 139", 139, True),
        ("139 (apples)", "139", True),
        ("140", 139, False),
        ("139.5", 139, False),
        ("12.5%", "12.5%", True),
        ("33.3333", 33.33, True),
        ("33.4", 33.33, False),
        ("-4", -4, True),
        ("3/4 cup", 0.75, True),
    ],
)
def test_numbers_compare_numerically(answer: str, gold: Any, right: bool) -> None:
    assert ev.answer_matches(answer, gold) is right


def test_extract_number() -> None:
    assert ev.extract_number("1,000") == 1000.0
    assert ev.extract_number("about 2,916 drums") == 2916.0
    assert ev.extract_number("B12 vitamins") is None
    assert ev.extract_number("x = \u22125") == -5.0
    assert ev.extract_number("no number") is None


OPTIONS = ["stuff them with newspaper", "put them in a sealed plastic bag"]
LABELLED = {"A": "At five", "B": "At six", "C": "At seven", "D": "It does not close"}


@pytest.mark.parametrize(
    ("answer", "index"),
    [
        ("1", 0),
        ("2", 1),
        ("A", 0),
        ("(b)", 1),
        ("Solution 1", 0),
        ("Option 2: put them in a bag", 1),
        ("Stuff them with newspaper.", 0),
        ("I would put them in a sealed plastic bag", 1),
        ("a lot of towels", None),
        ("3", None),
    ],
)
def test_list_options_by_label_number_or_text(answer: str, index: int | None) -> None:
    assert ev.resolve_option(answer, OPTIONS) == index


@pytest.mark.parametrize(
    ("answer", "right"),
    [
        ("B", True),
        ("b.", True),
        ("At six", True),
        ("Option B", True),
        ("The answer is B", True),
        ("B. At six", True),
        ("C", False),
        ("At seven", False),
    ],
)
def test_labelled_options(answer: str, right: bool) -> None:
    assert ev.answer_matches(answer, "B", LABELLED) is right


def test_options_whose_texts_are_numbers_match_text_first() -> None:
    options = ["2", "3", "1"]
    assert ev.resolve_option("2", options) == 0  # the text "2", not the second option
    assert ev.resolve_option("15 apples", ["12", "15", "18"]) == 1
    assert ev.answer_matches("18", "C", ["12", "15", "18"])


def test_list_answers_accept_any_and_text_is_normalised() -> None:
    accepted = ["Unknown rider", "the stage winner"]
    item = Item(
        split="realtime",
        external_id="q-7",
        input={"query": "Who won?"},
        reference={"answer": accepted, "kind": "tool"},
    )
    ctx = ctx_for("R1")
    assert ev.normalise_text("  The U.S.A.!  ") == "usa"
    for answer, right in [
        ("Stage winner.", True),
        ("UNKNOWN RIDER!", True),
        ("rider", False),
        ("It was the stage winner, surely", False),
    ]:
        outcome = Outcome(output=answer, answer=answer)
        assert EVALUATOR.score(outcome, item, ctx, {})["accuracy"] == float(right), answer
    contains = ctx_for("R1", text_match="contains")
    outcome = Outcome(output="", answer="It was the stage winner, surely")
    assert EVALUATOR.score(outcome, item, contains, {})["accuracy"] == 1.0


def test_booleans_take_the_first_yes_or_no_word() -> None:
    assert ev.answer_matches("Yes, it is.", True)
    assert ev.answer_matches("true", "yes")
    assert not ev.answer_matches("False.", True)
    assert ev.answer_matches("No", "false")
    assert not ev.interpretable("Maybe", True)


def test_unparsed_answers_are_wrong_or_left_out() -> None:
    outcome = EVALUATOR.parse("Final Answer: a lot of towels", PIQA, ctx_for("R3"), {})
    assert outcome.answer == "a lot of towels" and not outcome.parsed
    assert EVALUATOR.score(outcome, PIQA, ctx_for("R3"), {}) == {
        "accuracy": 0.0,
        "unparsed": 1.0,
    }
    skip = ctx_for("R3", unparsed="skip")
    assert EVALUATOR.score(outcome, PIQA, skip, {}) == {"accuracy": None, "unparsed": 1.0}


def test_a_failed_call_is_wrong_and_not_a_tool_call() -> None:
    assert EVALUATOR.score(None, MATH, ctx_for("R1"), {}) == {"accuracy": 0.0, "unparsed": 0.0}
    assert EVALUATOR.score(None, BOOLQ, ctx_for("R4"), {}) == {
        "accuracy": 0.0,
        "unparsed": 0.0,
        "call_rate": 0.0,
        "tool_errors": 0.0,
        "errors[no_output]": 1.0,
    }


# --- aggregates --------------------------------------------------------------------------------


def make_item(split: str, n: int, answer: Any, kind: str = "tool") -> Item:
    return Item(
        split=split,
        external_id=str(n),
        input={"query": "q"},
        reference={"answer": answer, "kind": kind},
    )


def test_aggregate_r2_over_two_datasets() -> None:
    ctx = ctx_for("R2")
    call = {"action": "Calculator", "input": "1+1", "observation": "2"}
    finish = {"action": "Finish", "arguments": {"answer": "x"}, "stop": "final_answer"}
    cases = [
        # right, called a tool first
        (make_item("gsm8k", 1, 4), Outcome(output="", answer="4", trace=[call, finish])),
        # wrong answer, no call
        (make_item("gsm8k", 2, 4), Outcome(output="", answer="5", trace=[finish])),
        # step limit after a call
        (
            make_item("hotpot", 1, "Paris"),
            Outcome(output="", answer=None, trace=[{**call, "stop": "step_limit"}]),
        ),
        # the endpoint failed
        (make_item("hotpot", 2, "Rome"), None),
    ]
    scored = [Scored(i, o, EVALUATOR.score(o, i, ctx, {})) for i, o in cases]
    result = EVALUATOR.aggregate(scored, ctx)
    third = round(100 / 3, 2)
    assert result == {
        "accuracy": 25.0,  # 1 of 4
        "call_rate": 50.0,  # first steps that call: items 1 and 3
        "unparsed": 0.0,
        "n": 4.0,
        "errors[wrong_answer]": third,
        "errors[unnecessary_tool]": 0.0,
        "errors[null_content]": 0.0,
        "errors[no_reasoning]": 0.0,
        "errors[invalid_tool_repeated]": 0.0,
        "errors[endless_retry]": third,
        "errors[no_output]": third,
        "accuracy[gsm8k]": 50.0,
        "call_rate[gsm8k]": 50.0,
        "accuracy[hotpot]": 0.0,
        "call_rate[hotpot]": 50.0,
    }


def test_aggregate_r4_one_dataset_with_tool_errors() -> None:
    ctx = ctx_for("R4")
    call = {"action": "BingSearch", "input": "tomato", "observation": "..."}
    finish = {"action": "Finish", "arguments": {"answer": "true"}, "stop": "final_answer"}
    items = [make_item("boolq", n, True, kind="general") for n in range(4)]
    outcomes = [
        Outcome(output="", answer="true", trace=[finish]),  # right
        Outcome(output="", answer="true", trace=[call, finish]),  # right answer, but a call
        Outcome(output="", answer="yes", trace=[{"action": None}, finish]),  # right
        Outcome(output="", answer="false", trace=[finish]),  # wrong
    ]
    scored = [
        Scored(i, o, EVALUATOR.score(o, i, ctx, {})) for i, o in zip(items, outcomes, strict=True)
    ]
    result = EVALUATOR.aggregate(scored, ctx)
    assert result["accuracy"] == 50.0
    assert result["call_rate"] == 25.0
    assert result["tool_errors"] == 25.0
    assert result["errors[unnecessary_tool]"] == 50.0
    assert result["errors[wrong_answer]"] == 50.0
    assert result["n"] == 4.0
    assert not any(key.startswith("accuracy[") for key in result)


def test_aggregate_r3_skips_unparsed_when_asked() -> None:
    ctx = ctx_for("R3", unparsed="skip")
    items = [make_item("piqa", n, 1, kind="general") for n in range(3)]
    for item in items:
        item.input["options"] = OPTIONS
    outcomes = [
        Outcome(output="", answer="1"),
        Outcome(output="", answer="2"),
        Outcome(output="", answer="a lot of towels", parsed=False),
    ]
    scored = [
        Scored(i, o, EVALUATOR.score(o, i, ctx, {})) for i, o in zip(items, outcomes, strict=True)
    ]
    assert EVALUATOR.aggregate(scored, ctx) == {"accuracy": 50.0, "unparsed": 1.0, "n": 3.0}
    assert EVALUATOR.aggregate([], ctx) == {"accuracy": None, "unparsed": 0.0, "n": 0.0}
