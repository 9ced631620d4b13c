"""WTU-Eval's evaluation side (papers/003): whether or not a model uses tools, and what it costs.

Tasks (TASKS), one per region of the paper's Figure 2:
    R1  tool datasets (reference kind "tool"), no tools: one answer per question
    R2  tool datasets, with the tool pool: a ReAct loop (react)
    R3  general datasets (reference kind "general"), no tools: one answer
    R4  general datasets, with the tool pool: a ReAct loop; any tool call is an error
A task's select keeps the items of its region's kind; a run reads one dataset (split) or several.

How the tasks are composed (tasks.py declares them): R1 and R3 of build_answer_prompt,
parse_reply and answer_once; R2 and R4 of prepare (the pool's names), build_react_prompt,
parse_published_transcript, react and the native loop (native_messages.native_solve). Select,
score and aggregate come from factories given the region's data: its kind of dataset
(make_select), whether it offers tools (make_score, make_aggregate) and whether a call is an
error (R4: make_aggregate's tool_errors always reported).

The tool pool (R2/R4): our local `Calculator` (calculator.py: parsed with `ast`, never run as
code; a toolset without state, `calculator_toolset`, which benchmarks.kit.stateful executes, so
an item's attempt runs at most its `Limits.calls_per_turn` calculations) and the tools the
platform serves in `ctx.toolbox` (translator, web search, Wikipedia...).
Only tools that are actually available are offered; `prepare` stores the pool's names with each
item at launch and the first trace step repeats the pool offered (`tools`).

Options (TaskSpec.options; a run's own options win):
    max_tokens          256      token limit of each model reply
    unparsed            "wrong"  an answer that cannot be interpreted is wrong, or "skip": left
                                 out of accuracy (and counted in `unparsed`)
    text_match          "exact"  free-text answers: exact match after normalisation, or
                                 "contains": the gold answer's words appear in the answer
    rel_tol             1e-6     relative tolerance of numeric answers
    option_labels       "numbers" labels shown for a list of options: "numbers" (1, 2, ... as
                                 the paper labels PIQA's solutions) or "letters" (A, B, ...)
  R1/R3 only:
    cot                 False    reason before answering (the paper's COT variant, Table 2)
  R2/R4 only:
    max_steps           5        model calls per item (the paper's loop is "limited"; it gives
                                 no number)
    max_invalid_actions 2        the 2nd action naming no tool of the pool ends the attempt (the
                                 1st gets a reminder as its observation)
    max_same_call       2        an identical call (tool and input) runs at most this often;
                                 asking once more ends the attempt
    max_observation_chars 2000   longer observations are cut (the paper's "text is too long")
    tools               None     restrict the pool to these tool names (the paper's per-tool
                                 runs, Table 3); None = every available tool
    calculator          "local"  our calculator, or "toolbox": a toolbox tool named Calculator
  R4 only:
    general_tool_call   "wrong"  a tool call on a general dataset makes the item wrong (the
                                 paper: "tool usage is marked incorrect in the general
                                 dataset"), or "ignore": score the final answer only

Metrics (aggregate; percentages are 0-100, rounded to 2 decimals):
    accuracy        % of items answered right (the headline)
    call_rate       % of items whose first step calls a tool (R2/R4; any action other than
                    Finish counts, even a tool name that is not in the pool)
    tool_errors     R4: % of items that called a tool at any step (the paper's error; such
                    items are also wrong in accuracy unless general_tool_call="ignore")
    unparsed        count of final answers that could not be interpreted (no final answer at
                    all, e.g. an empty reply or the step limit, is wrong, not unparsed)
    n               count of items
    errors[<type>]  R2/R4: % of the wrong items with each error type (the paper's section 5.2
                    and Table 4): wrong_answer, unnecessary_tool, null_content, no_reasoning,
                    invalid_tool_repeated, endless_retry, no_output (the endpoint failed)
    accuracy[<dataset>], call_rate[<dataset>]   when a run spans several datasets (percent;
                    TaskSpec.percent cannot name these keys ahead of the run)

Answer matching, per accepted answer (a list answer holds several; any one matching is right):
    options   the answer names an option by its text (normalised), by its label ("B", "(B)",
              "Option B", "Solution 1"), or by the only option text it contains; the gold
              answer is resolved the same way (text first, then label / 1-based number)
    boolean   gold True/False or "true"/"false"/"yes"/"no": the first yes/no/true/false word
    number    gold a number or a numeric text ("1,000", "12.5%", "$80"): the first number of
              the answer (after its last "=") equals it within rel_tol, or rounded to the
              gold's decimals
    text      normalised (case, punctuation, the articles a/an/the, spaces) exact match, or
              "contains" (option text_match)
`score(None, ...)` (the endpoint failed) is a wrong answer and not a tool call.

Per-item scores use the run metrics' names with 0/1 values (accuracy, unparsed, call_rate,
tool_errors, errors[<type>] on wrong items only); the trace of R2/R4 holds one JSON object per
step: thought, action ("Finish" for the answer), input, arguments, observation, output (the raw
reply), ok (the tool succeeded), error, and on the first step `tools` (the pool offered), on the
last `stop` (final_answer, step_limit, null_content, invalid_tool_repeated, repeated_call).

Rules: pure Python, no Django; model text is never evaluated as code; tool errors and unknown
tools become observations; `CallFailed` from `complete` passes through (the platform records it).
The prompts are ours, after the paper's description (prompts/templates.toml, examples.toml).
"""

from __future__ import annotations

import json
import math
import re
import string
import tomllib
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from benchmarks.kit.protocol import (
    Aggregate,
    Complete,
    Context,
    Direction,
    Item,
    MetricSpec,
    Option,
    Outcome,
    Prompt,
    Score,
    Scored,
    Scores,
    Select,
    TaskSpec,
    Tool,
    ToolSpec,
    ToolUnavailable,
    mean,
    metric_specs,
    percent,
)
from benchmarks.kit.stateful import Session, Toolset, stateless_toolset
from benchmarks.kit.toolcall import INLINE_ACTION_INPUT, marked_sections, react_marker
from benchmarks.suites.wtueval.calculator import calculate

__all__ = [
    "TASKS",
    "answer_once",
    "build_answer_prompt",
    "build_react_prompt",
    "make_aggregate",
    "make_score",
    "make_select",
    "parse_published_transcript",
    "parse_reply",
    "prepare",
    "react",
]

PROMPTS = Path(__file__).resolve().parent / "prompts"

REGION_KIND = {"R1": "tool", "R2": "tool", "R3": "general", "R4": "general"}
WITH_TOOLS = frozenset({"R2", "R4"})
CALCULATOR = "Calculator"
FINISH = "Finish"

ERROR_TYPES = (
    "wrong_answer",
    "unnecessary_tool",
    "null_content",
    "no_reasoning",
    "invalid_tool_repeated",
    "endless_retry",
    "no_output",
)
ERROR_KEYS = tuple(f"errors[{name}]" for name in ERROR_TYPES)

# Why an attempt ended (the last trace step's "stop").
STOP_FINAL = "final_answer"
STOP_LIMIT = "step_limit"
STOP_NULL = "null_content"
STOP_INVALID = "invalid_tool_repeated"
STOP_REPEAT = "repeated_call"
STOP_NO_ANSWER = "no_answer"  # a published transcript without a final answer

# The options of the regions (the module's docstring says what each does).
_ANSWER_OPTIONS: tuple[Option, ...] = (
    Option("max_tokens", "integer", 256, "token limit of each model reply", minimum=1),
    Option(
        "unparsed",
        "text",
        "wrong",
        "an answer that cannot be interpreted is wrong, or left out of accuracy (and counted)",
        choices=("wrong", "skip"),
    ),
    Option(
        "text_match",
        "text",
        "exact",
        "free-text answers: exact match after normalisation, or the gold's words contained",
        choices=("exact", "contains"),
    ),
    Option("rel_tol", "number", 1e-6, "relative tolerance of numeric answers", minimum=0),
    Option(
        "option_labels",
        "text",
        "numbers",
        "labels shown for a list of options: numbers (1, 2, ...) or letters (A, B, ...)",
        choices=("numbers", "letters"),
    ),
)
_NO_TOOL_OPTIONS: tuple[Option, ...] = (
    *_ANSWER_OPTIONS,
    Option("cot", "boolean", False, "reason before answering (the paper's COT variant)"),
)
_TOOL_OPTIONS: tuple[Option, ...] = (
    *_ANSWER_OPTIONS,
    Option("max_steps", "integer", 5, "model calls per item", minimum=1),
    Option(
        "max_invalid_actions",
        "integer",
        2,
        "the action naming no tool of the pool that ends the attempt (the earlier ones get a "
        "reminder)",
        minimum=1,
    ),
    Option(
        "max_same_call",
        "integer",
        2,
        "an identical call runs at most this often; asking once more ends the attempt",
        minimum=1,
    ),
    Option(
        "max_observation_chars",
        "integer",
        2000,
        "longer observations are cut (0: never cut)",
        minimum=0,
    ),
    Option(
        "tools",
        "names",
        None,
        "restrict the pool to these tool names (the paper's per-tool runs; null: every tool)",
    ),
    Option(
        "calculator",
        "text",
        "local",
        "our local calculator, or a toolbox tool named Calculator",
        choices=("local", "toolbox"),
    ),
)
_GENERAL_TOOL_CALL = Option(
    "general_tool_call",
    "text",
    "wrong",
    "a tool call on a general dataset makes the item wrong, or is ignored (the answer scored)",
    choices=("wrong", "ignore"),
)


def _metric_specs(
    *, agent: bool, general_calls: bool
) -> tuple[dict[str, MetricSpec], dict[str, MetricSpec]]:
    """(per item, per run) declarations of a region: with the tool pool (agent), and whether a
    call is an error (general_calls: general datasets with tools, R4). A first-step call is an
    error on general datasets (R4: the paper's Call Rate falls as a model improves, Table 7) and
    neither good nor bad on tool datasets (R2), where accuracy says whether it helped."""
    calls: Direction | None = "lower" if general_calls else None
    accuracy = MetricSpec.score("accuracy", description="the answer is right")
    item = [accuracy, MetricSpec.flag("unparsed", "lower", "1 when the answer could not be read")]
    run = [
        accuracy,
        MetricSpec.count("unparsed", "lower", "answers that could not be read"),
        MetricSpec.count("n", description="items"),
        MetricSpec.score("accuracy[*]", description="accuracy on one dataset of the run"),
    ]
    if agent:
        call_rate = "the first step calls a tool"
        item += [
            MetricSpec.flag("call_rate", calls, f"1 when {call_rate}"),
            MetricSpec.flag("errors[*]", "lower", "1 on a wrong item with this error type"),
        ]
        run += [
            MetricSpec.score("call_rate", calls, f"% of items where {call_rate}"),
            MetricSpec.score("call_rate[*]", calls, "call rate on one dataset of the run"),
            *(
                MetricSpec.score(key, None, "% of the wrong items with this error type")
                for key in ERROR_KEYS
            ),
        ]
    if general_calls:
        # The paper's error on general datasets: a tool called at any step.
        tool_errors = "a tool is called on a general question"
        item.append(MetricSpec.score("tool_errors", "lower", f"1 when {tool_errors}"))
        run.append(MetricSpec.score("tool_errors", "lower", f"% of items where {tool_errors}"))
    return metric_specs(*item), metric_specs(*run)


def _spec(
    name: str, title: str, description: str, *, agent: bool, general_calls: bool = False
) -> TaskSpec:
    """A region's spec: with the tool pool (agent: R2, R4), and with tool calls as errors
    (general_calls: R4)."""
    metrics: tuple[str, ...] = ("accuracy",)
    if agent:
        metrics += ("call_rate",)
    if general_calls:
        metrics += ("tool_errors",)
    metrics += ("unparsed", "n")
    if agent:
        metrics += ERROR_KEYS
    options = _TOOL_OPTIONS if agent else _NO_TOOL_OPTIONS
    if general_calls:
        options = (*options, _GENERAL_TOOL_CALL)
    item_metrics, run_metrics = _metric_specs(agent=agent, general_calls=general_calls)
    return TaskSpec(
        name=name,
        title=title,
        metrics=metrics,
        percent=frozenset(m for m in metrics if m not in ("unparsed", "n")),
        options=options,
        agent=agent,
        native=agent,
        description=description,
        item_metrics=item_metrics,
        run_metrics=run_metrics,
    )


TASKS: dict[str, TaskSpec] = {
    "R1": _spec(
        "R1",
        "R1: tool datasets, no tools",
        "Questions that need a tool (translation, arithmetic, search), answered without tools.",
        agent=False,
    ),
    "R2": _spec(
        "R2",
        "R2: tool datasets, with the tool pool",
        "Questions that need a tool; the model may call the tool pool in a ReAct loop.",
        agent=True,
    ),
    "R3": _spec(
        "R3",
        "R3: general datasets, no tools",
        "Questions a model answers on its own (reading, common sense), without tools.",
        agent=False,
    ),
    "R4": _spec(
        "R4",
        "R4: general datasets, with the tool pool",
        "Questions a model answers on its own, with the tool pool offered; any call is an error.",
        agent=True,
        general_calls=True,
    ),
}


# --- prompt files ------------------------------------------------------------------------------


@cache
def _templates() -> dict[str, Any]:
    with (PROMPTS / "templates.toml").open("rb") as handle:
        return tomllib.load(handle)


@cache
def _examples() -> tuple[dict[str, Any], ...]:
    with (PROMPTS / "examples.toml").open("rb") as handle:
        return tuple(tomllib.load(handle)["example"])


def _fill(template: str, **values: str) -> str:
    return string.Template(template).substitute(values)


# --- items -------------------------------------------------------------------------------------


def _item_kind(item: Item) -> str | None:
    reference = item.reference if isinstance(item.reference, dict) else {}
    kind = reference.get("kind")
    if kind in ("tool", "general"):
        return str(kind)
    regions = item.metadata.get("regions") or ()
    if "R1" in regions:
        return "tool"
    if "R3" in regions:
        return "general"
    return None


def _accepted(item: Item) -> list[Any]:
    reference = item.reference if isinstance(item.reference, dict) else {"answer": item.reference}
    answer = reference.get("answer")
    if answer is None:
        return []
    return list(answer) if isinstance(answer, list) else [answer]


def make_select(kind: str) -> Select:
    """A region's items: those of datasets of `kind` (REGION_KIND: "tool" for R1/R2, "general"
    for R3/R4)."""

    def select(items: Sequence[Item], ctx: Context) -> list[Item]:
        return [item for item in items if _item_kind(item) == kind]

    return select


# --- the tool pool -----------------------------------------------------------------------------


def _tool_key(name: str) -> str:
    # Models write "calculator", "Wiki Search", "wiki_search" for the same tool.
    return re.sub(r"[^0-9a-z]", "", name.lower())


# Models name the final action "Finish", "Final Answer" or "Answer".
_FINISH_KEYS = frozenset({"finish", "finalanswer", "answer"})


def _is_finish(action: Any) -> bool:
    return _tool_key(str(action or "")) in _FINISH_KEYS


def _calculate(name: str, arguments: dict[str, Any]) -> str:
    return calculate(str(arguments.get("expression", "")))


@cache
def calculator_toolset() -> Toolset[None]:
    """Our calculator as a locally executed toolset without state: every call is checked
    against its schema and run by the kit, and a refused expression is the calculator's own
    `Error: ...` observation."""
    spec = ToolSpec(
        name=CALCULATOR,
        description=_templates()["tools"][CALCULATOR],
        parameters={
            "type": "object",
            "properties": {
                "expression": {"type": "string", "description": "an arithmetic expression"}
            },
            "required": ["expression"],
        },
        category="local",
    )
    return stateless_toolset((spec,), _calculate)


def tool_pool(ctx: Context, context: Mapping[str, Any] | None = None) -> dict[str, Tool]:
    """The tools offered to the model, by name: the local calculator (or the toolbox's, with
    option calculator="toolbox") and every toolbox tool, narrowed by the option `tools` and by
    the names `prepare` stored at launch. A stored name that is no longer served is left out."""
    use_toolbox_calculator = ctx.option("calculator") == "toolbox"
    pool: dict[str, Tool] = {}
    if not use_toolbox_calculator:
        pool[CALCULATOR] = Session(calculator_toolset(), None).tools()[CALCULATOR]
    for name, tool in ctx.toolbox.items():
        shown = tool.spec.name or name
        if _tool_key(shown) == _tool_key(CALCULATOR) and not use_toolbox_calculator:
            continue
        pool.setdefault(shown, tool)
    keep = [ctx.option("tools")]
    if context and context.get("tools") is not None:
        keep.append(context["tools"])
    for names in keep:
        if names is None:
            continue
        wanted = {_tool_key(str(n)) for n in ([names] if isinstance(names, str) else names)}
        pool = {name: tool for name, tool in pool.items() if _tool_key(name) in wanted}
    return pool


def prepare(items: Sequence[Item], ctx: Context) -> list[dict[str, Any]]:
    """R2/R4, per item: the names of the tool pool offered at launch, so stored predictions say
    what was offered (R1/R3 store nothing, the default)."""
    names = list(tool_pool(ctx))
    return [{"tools": list(names)} for _ in items]


def _find_tool(pool: Mapping[str, Tool], action: str) -> Tool | None:
    key = _tool_key(action)
    for name, tool in pool.items():
        if _tool_key(name) == key:
            return tool
    return None


def _parameters(spec: ToolSpec) -> tuple[dict[str, Any], list[str]]:
    schema = spec.parameters if isinstance(spec.parameters, dict) else {}
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        # A plain mapping name -> description (no JSON Schema) is a parameter list too.
        properties = {} if "type" in schema else dict(schema)
    required = [r for r in schema.get("required", []) if isinstance(r, str)]
    return properties, required


def tool_arguments(spec: ToolSpec, action_input: str) -> dict[str, Any]:
    """The arguments of a call from the model's `Action Input` text: a JSON object as written,
    else the whole text as the tool's one (first required) parameter, else as `input`."""
    text = action_input.strip()
    properties, required = _parameters(spec)
    if text.startswith("{") and text.endswith("}") and len(text) <= 20_000:
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, dict):
            if len(properties) == 1 and len(value) == 1 and next(iter(properties)) not in value:
                # {"query": "..."} written for a tool whose one parameter has another name.
                return {next(iter(properties)): next(iter(value.values()))}
            return value
    name = required[0] if required else next(iter(properties), "input")
    return {name: text}


def _describe_tool(tool: Tool) -> str:
    spec = tool.spec
    fallback = {_tool_key(k): v for k, v in _templates()["tools"].items()}
    description = (spec.description or fallback.get(_tool_key(spec.name), "")).strip()
    properties, required = _parameters(spec)
    line = f"- {spec.name}: {description}".rstrip()
    if spec.name == CALCULATOR and spec.category == "local":
        return line
    if len(properties) == 1:
        schema = next(iter(properties.values()))
        hint = schema.get("description", "") if isinstance(schema, dict) else str(schema)
        if hint:
            line += f" Input: {hint}."
    elif len(properties) > 1:
        parts = []
        for key, schema in properties.items():
            hint = schema.get("description", "") if isinstance(schema, dict) else str(schema)
            need = "required" if key in required else "optional"
            parts.append(f'"{key}" ({need}{": " + hint if hint else ""})')
        line += " Input: a JSON object with " + ", ".join(parts) + "."
    return line


# --- rendering a task --------------------------------------------------------------------------


def _option_entries(options: Any) -> list[tuple[list[str], str]]:
    """(labels, text) per option: a list's option i answers to its letter and its 1-based
    number; an object's to its own label."""
    if isinstance(options, dict):
        return [([str(label)], str(text)) for label, text in options.items()]
    entries = []
    for index, text in enumerate(options or []):
        labels = [str(index + 1)]
        if index < 26:
            labels.append(string.ascii_uppercase[index])
        entries.append((labels, str(text)))
    return entries


def _shown_labels(options: Any, style: str) -> list[str]:
    if isinstance(options, dict):
        return [str(label) for label in options]
    count = len(options or [])
    if style == "letters" and count <= 26:
        return list(string.ascii_uppercase[:count])
    return [str(i + 1) for i in range(count)]


def _is_boolean_value(value: Any) -> bool:
    if isinstance(value, bool):
        return True
    return isinstance(value, str) and value.strip().lower() in _BOOL_WORDS


def _render_task(
    question: str,
    *,
    options: Any = None,
    passage: str | None = None,
    context: str | None = None,
    boolean: bool = False,
    labels: str = "numbers",
) -> str:
    words = _templates()["task"]
    if options:
        first = words["options"]
    elif boolean:
        first = words["boolean"]
    else:
        first = words["open"]
    lines = [f"Task Description: {first}"]
    if passage:
        lines.append(f"\u00b7 {words['passage']}: {passage.strip()}")
    if context:
        lines.append(f"\u00b7 {words['context']}: {context.strip()}")
    lines.append(f"\u00b7 {words['question']}: {question.strip()}")
    if options:
        lines.append(f"\u00b7 {words['option_list']}:")
        texts = list(options.values()) if isinstance(options, dict) else list(options)
        for label, text in zip(_shown_labels(options, labels), texts, strict=True):
            lines.append(f"{label}. {text}")
    return "\n".join(lines)


def _metadata_text(item: Item, key: str) -> str | None:
    value = item.metadata.get(key)
    return value if isinstance(value, str) and value.strip() else None


def _item_task(item: Item, ctx: Context) -> str:
    return _render_task(
        str(item.input.get("query", "")),
        options=item.input.get("options"),
        passage=_metadata_text(item, "passage"),
        context=_metadata_text(item, "context"),
        boolean=any(_is_boolean_value(a) for a in _accepted(item)),
        labels=str(ctx.option("option_labels") or "numbers"),
    )


def _example_answer(example: dict[str, Any], labels: str) -> str:
    options = example.get("options")
    answer = str(example["answer"])
    if isinstance(options, list) and answer.isdigit():
        return _shown_labels(options, labels)[int(answer) - 1]
    return answer


def _example_task(example: dict[str, Any], labels: str) -> str:
    return _render_task(
        example["question"],
        options=example.get("options"),
        passage=example.get("passage"),
        context=example.get("context"),
        boolean=bool(example.get("boolean")),
        labels=labels,
    )


def _pick_examples(shots: int, offered: Sequence[str] | None) -> list[dict[str, Any]]:
    """`shots` examples, a tool one and a general one in turn (the paper's few-shot prompt
    shows one of each); tool examples only for offered tools when there is a pool."""
    if shots <= 0:
        return []
    keys = None if offered is None else {_tool_key(n) for n in offered}
    tool = [
        e
        for e in _examples()
        if e["kind"] == "tool" and (keys is None or _tool_key(e.get("tool", "")) in keys)
    ]
    general = [e for e in _examples() if e["kind"] == "general"]
    picked: list[dict[str, Any]] = []
    for index in range(max(len(tool), len(general))):
        for group in (tool, general):
            if index < len(group) and len(picked) < shots:
                picked.append(group[index])
    return picked


def _render_example(example: dict[str, Any], *, tools: bool, cot: bool, labels: str) -> str:
    lines = [_example_task(example, labels)]
    answer = _example_answer(example, labels)
    if tools:
        for step in example.get("steps", []):
            lines += [
                f"Thought: {step['thought']}",
                f"Action: {step['action']}",
                f"Action Input: {step['input']}",
                f"Observation: {step['observation']}",
            ]
        lines += [f"Thought: {example['thought']}", f"Action: {FINISH}", f"Action Input: {answer}"]
    else:
        if cot:
            lines.append(f"Thought: {example['cot']}")
        lines.append(f"Final Answer: {answer}")
    return "\n".join(lines)


# --- prompts -----------------------------------------------------------------------------------


@dataclass
class _Done:
    """A step already taken, as the scratchpad shows it."""

    thought: str
    action: str
    action_input: str
    observation: str

    def as_text(self) -> str:
        return (
            f"Thought: {self.thought}\nAction: {self.action}\n"
            f"Action Input: {self.action_input}\nObservation: {self.observation}"
        )

    def as_reply(self) -> str:
        return f"Thought: {self.thought}\nAction: {self.action}\nAction Input: {self.action_input}"


REACT_STOP = ("Observation:", "\nTask Description:")
ANSWER_STOP = ("\nTask Description:",)


def _max_tokens(ctx: Context) -> int | None:
    value = ctx.option("max_tokens")
    return int(value) if value else None


def _instruction(ctx: Context, pool: Mapping[str, Tool] | None) -> str:
    words = _templates()["instruction"]
    labels = str(ctx.option("option_labels") or "numbers")
    cot = bool(ctx.option("cot"))
    if pool is not None:
        text = _fill(
            words["tools"],
            tool_descriptions="\n".join(_describe_tool(tool) for tool in pool.values()),
            tool_names=", ".join(pool),
        )
    else:
        text = words["no_tools_cot"] if cot else words["no_tools"]
    examples = _pick_examples(ctx.shots, None if pool is None else list(pool))
    if examples:
        rendered = "\n\n".join(
            _render_example(e, tools=pool is not None, cot=cot, labels=labels) for e in examples
        )
        text += "\n\n" + _fill(words["examples"], examples=rendered)
    return text


def _react_prompt(
    item: Item, ctx: Context, pool: Mapping[str, Tool], done: Sequence[_Done]
) -> Prompt:
    instruction = _instruction(ctx, pool)
    task = _item_task(item, ctx)
    begin = _templates()["instruction"]["begin"]
    system = instruction + "\n\n" + _templates()["instruction"]["chat_turns"]
    messages = [{"role": "system", "content": system}, {"role": "user", "content": task}]
    for step in done:
        messages.append({"role": "assistant", "content": step.as_reply()})
        messages.append({"role": "user", "content": f"Observation: {step.observation}"})
    pad = "".join(step.as_text() + "\n" for step in done)
    text = f"{instruction}\n\n{begin}\n\n{task}\n{pad}Thought:"
    return Prompt(messages=messages, text=text, stop=REACT_STOP, max_tokens=_max_tokens(ctx))


def _answer_prompt(item: Item, ctx: Context) -> Prompt:
    instruction = _instruction(ctx, None)
    task = _item_task(item, ctx)
    begin = _templates()["instruction"]["begin"]
    cue = "Thought:" if ctx.option("cot") else "Final Answer:"
    messages = [{"role": "system", "content": instruction}, {"role": "user", "content": task}]
    text = f"{instruction}\n\n{begin}\n\n{task}\n{cue}"
    return Prompt(messages=messages, text=text, stop=ANSWER_STOP, max_tokens=_max_tokens(ctx))


def build_answer_prompt(item: Item, ctx: Context, context: dict[str, Any]) -> Prompt:
    """R1/R3: the whole question. Completion style ends with the cue the model continues
    (`Thought:` with cot, else `Final Answer:`)."""
    return _answer_prompt(item, ctx)


def build_react_prompt(item: Item, ctx: Context, context: dict[str, Any]) -> Prompt:
    """R2/R4: the first ReAct step (react() adds the scratchpad for later steps). Completion
    style ends with the cue the model continues (`Thought:`)."""
    return _react_prompt(item, ctx, tool_pool(ctx, context), ())


# --- reading the model's text ------------------------------------------------------------------

_MARKER = react_marker("Thought", "Action Input", "Action", "Observation", "Final Answer")
# "Calculator[1/4 pound]" or "Calculator(2 + 3)", the Toolformer-style call some models write.
_INLINE_CALL = re.compile(r"^(?P<name>[A-Za-z][\w .-]{0,60}?)\s*[\[(](?P<input>.*)[\])]\s*$", re.S)


def _first_line(text: str) -> str:
    for line in text.strip().splitlines():
        if line.strip():
            return line.strip()
    return ""


def _clean_action(text: str) -> tuple[str, str | None, str | None]:
    """The tool name of an Action line, an `Action Input:` written on the same line, and the
    input of a bracketed call (`Calculator[2 + 3]`), which an Action Input line overrides."""
    line = _first_line(text)
    inline = None
    parts = INLINE_ACTION_INPUT.split(line, maxsplit=1)
    if len(parts) == 2:
        line, inline = parts[0], parts[1].strip()
    line = line.strip().strip("`'\"*").strip()
    call = _INLINE_CALL.match(line)
    if call:
        name = call.group("name").strip()
        return (FINISH if _is_finish(name) else name), inline, call.group("input").strip()
    return line.rstrip(".:").strip(), inline, None


@dataclass
class Step:
    """One model reply read as a ReAct step."""

    kind: str  # "final" | "call" | "null"
    thought: str = ""
    action: str = ""
    action_input: str = ""
    answer: str | None = None
    why: str = ""  # for "null": what was missing
    direct: bool = False  # a final answer written without any ReAct marker


def parse_step(text: str) -> Step:
    """Read one model reply of the loop: the first Action (a tool call or Finish) or Final
    Answer; anything after a (hallucinated) Observation is ignored. A reply without any marker
    is a direct final answer; a reply with a thought but no action, an empty Action or an empty
    Action Input is null content (the paper's error type)."""
    before, pairs = marked_sections(text, _MARKER)
    if not pairs:
        answer = before.strip()
        if not answer:
            return Step("null", why="the reply is empty")
        return Step("final", answer=answer, direct=True)
    thoughts = [before.strip()] if before.strip() else []
    action: str | None = None
    action_input: str | None = None
    bracketed: str | None = None
    final: str | None = None
    for name, content in pairs:
        if name == "observation":
            break
        if name == "thought":
            if action is not None:
                break
            thoughts.append(content.strip())
        elif name == "action":
            if action is not None:
                break
            action, action_input, bracketed = _clean_action(content)
        elif name == "actioninput":
            if action is not None and action_input is None:
                action_input = content.strip()
        elif name == "finalanswer":
            if action is None or _is_finish(action):
                final = _first_line(content)
            break
    thought = " ".join(t for t in thoughts if t)
    if not (action_input or "").strip() and bracketed:
        action_input = bracketed
    if action is not None and _is_finish(action):
        answer = _first_line(action_input or "") or (final or "")
        if not answer:
            return Step("null", thought=thought, action=FINISH, why="Finish without an answer")
        return Step("final", thought=thought, action=FINISH, answer=answer)
    if action is None:
        if final:
            return Step("final", thought=thought, answer=final)
        return Step("null", thought=thought, why="no Action")
    if not action:
        return Step("null", thought=thought, why="the Action is empty")
    if not (action_input or "").strip():
        return Step("null", thought=thought, action=action, why="the Action Input is empty")
    return Step("call", thought=thought, action=action, action_input=(action_input or "").strip())


def parse_answer(text: str) -> tuple[str | None, str]:
    """The final answer of a reply without tools, and a note on how it was found: the
    `Final Answer:` line, a `Finish` action's input, an `Answer:` line, else the whole reply."""
    _, pairs = marked_sections(text, _MARKER)
    for name, content in pairs:
        if name == "finalanswer" and _first_line(content):
            return _first_line(content), ""
    step = parse_step(text)
    if step.kind == "final" and step.answer and not step.direct:
        return step.answer, ""
    match = re.search(r"^\s*answer\s*:\s*(.+)$", text, re.IGNORECASE | re.MULTILINE)
    if match and match.group(1).strip():
        return match.group(1).strip(), "no Final Answer line: took the Answer line"
    whole = text.strip()
    if not whole:
        return None, "the reply is empty"
    return whole, "no Final Answer line: took the whole reply"


# --- answer matching ---------------------------------------------------------------------------

_BOOL_WORDS = {"yes": True, "true": True, "no": False, "false": False}
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_NUMBER = re.compile(
    r"(?<![\w.])(?P<sign>[-+]?)(?P<int>\d{1,3}(?:,\d{3})+|\d+)?(?P<frac>\.\d+)?"
    r"(?:\s*/\s*(?P<den>\d+)(?![\d.]))?"
)
_LABEL_LEAD = re.compile(
    r"^\s*(?:(?:the\s+)?(?:final\s+)?answer\s*(?:is|:)\s*)?"
    r"(?P<word>(?:option|solution|choice|answer|label)\s*)?(?P<paren>[(\[])?",
    re.IGNORECASE,
)


def normalise_text(text: Any) -> str:
    """Lower case, punctuation removed, the articles a/an/the removed, spaces collapsed (the
    usual exact-match normalisation of QA benchmarks)."""
    value = unicodedata.normalize("NFKC", str(text)).lower()
    value = "".join(ch for ch in value if not unicodedata.category(ch).startswith("P"))
    value = _ARTICLES.sub(" ", value)
    return " ".join(value.split())


def _contains_words(text: str, words: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(words)}(?!\w)", text) is not None


def _decimals(text: str) -> int:
    match = re.search(r"\.(\d+)", text)
    return len(match.group(1)) if match else 0


def _number_from(match: re.Match[str]) -> float | None:
    whole, frac, den = match.group("int"), match.group("frac"), match.group("den")
    if whole is None and frac is None:
        return None
    value = float((whole or "0").replace(",", "") + (frac or ""))
    if den is not None:
        if int(den) == 0 or frac is not None:
            return None
        value /= int(den)
    return -value if match.group("sign") == "-" else value


def extract_number(text: str) -> float | None:
    """The number an answer gives: the first number after the answer's last `=` (so
    "3 * 48 - 5 = 139" gives 139), with digit-group commas ("1,000"), decimals and simple
    fractions ("3/4"); None when there is none."""
    value = unicodedata.normalize("NFKC", str(text)).replace("\u2212", "-")
    if "=" in value:
        value = value.rsplit("=", 1)[1]
    for match in _NUMBER.finditer(value):
        number = _number_from(match)
        if number is not None:
            return number
    return None


def exact_number(value: Any) -> tuple[float, int] | None:
    """A gold answer as a number and its count of decimals, when it is one: an int or float,
    or a text that is only a number (with an optional sign, currency, %, digit-group commas)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return float(value), _decimals(repr(value)) if isinstance(value, float) else 0
    if not isinstance(value, str):
        return None
    text = unicodedata.normalize("NFKC", value).strip().replace("\u2212", "-")
    text = text.strip("$\u20ac\u00a3%").strip()
    match = _NUMBER.fullmatch(text)
    if not match:
        return None
    number = _number_from(match)
    return None if number is None else (number, _decimals(text))


def numbers_match(predicted: float, gold: float, decimals: int = 0, rel_tol: float = 1e-6) -> bool:
    """Equal within rel_tol, or equal once the prediction is rounded to the gold's decimals
    (a gold of 33.33 accepts 33.3333)."""
    if math.isclose(predicted, gold, rel_tol=rel_tol, abs_tol=1e-9):
        return True
    return decimals > 0 and round(predicted, decimals) == round(gold, decimals)


def extract_boolean(text: str) -> bool | None:
    """The first yes/no/true/false word of an answer."""
    for word in normalise_text(text).split():
        if word in _BOOL_WORDS:
            return _BOOL_WORDS[word]
    return None


def _label_index(text: str, entries: Sequence[tuple[list[str], str]]) -> int | None:
    lead = _LABEL_LEAD.match(text)
    rest = text[lead.end() :] if lead else text
    loose = bool(lead and (lead.group("word") or lead.group("paren")))
    lowered = rest.lower()
    candidates = []
    for index, (labels, _) in enumerate(entries):
        for label in labels:
            for form in {label.lower(), label.lower().replace("_", " ")}:
                if not lowered.startswith(form):
                    continue
                after = lowered[len(form) :]
                # A bare "A" or "1" must stand alone ("A.", "(A)", "1)"): "a lot" is no label.
                if not after or after[0] in ".):,];" or (loose and after[0].isspace()):
                    candidates.append((len(form), index))
    if not candidates:
        return None
    candidates.sort(reverse=True)
    longest = [index for size, index in candidates if size == candidates[0][0]]
    return longest[0] if len(set(longest)) == 1 else None


def resolve_option(answer: Any, options: Any) -> int | None:
    """Which option (0-based) an answer names: its text (normalised), else its label (or a
    list's letter / 1-based number), else the one option text it contains (or the longest, when
    it contains the others); None when it names none or several."""
    entries = _option_entries(options)
    text = str(answer).strip()
    norm = normalise_text(text)
    if not entries or not text:
        return None
    texts = [normalise_text(t) for _, t in entries]
    for index, option in enumerate(texts):
        if option and option == norm:
            return index
    labelled = _label_index(text, entries)
    if labelled is not None:
        return labelled
    inside = [i for i, option in enumerate(texts) if option and _contains_words(norm, option)]
    if len(inside) == 1:
        return inside[0]
    if inside:
        longest = max(inside, key=lambda i: len(texts[i]))
        if all(texts[i] in texts[longest] for i in inside):
            return longest
    return None


def answer_kind(gold: Any, options: Any = None) -> str:
    """How an accepted answer is compared: "option", "boolean", "number" or "text"."""
    if options:
        return "option"
    if _is_boolean_value(gold):
        return "boolean"
    if exact_number(gold) is not None:
        return "number"
    return "text"


def interpretable(answer: str | None, gold: Any, options: Any = None) -> bool:
    """Whether an answer can be compared with this accepted answer at all (else: unparsed)."""
    if answer is None or not answer.strip():
        return False
    kind = answer_kind(gold, options)
    if kind == "option":
        return resolve_option(answer, options) is not None
    if kind == "boolean":
        return extract_boolean(answer) is not None
    if kind == "number":
        return extract_number(answer) is not None
    return bool(normalise_text(answer))


def answer_matches(
    answer: str | None,
    gold: Any,
    options: Any = None,
    *,
    text_match: str = "exact",
    rel_tol: float = 1e-6,
) -> bool:
    """Whether an answer equals one accepted answer (see the module docstring)."""
    if answer is None:
        return False
    kind = answer_kind(gold, options)
    if kind == "option":
        chosen = resolve_option(answer, options)
        return chosen is not None and chosen == resolve_option(gold, options)
    if kind == "boolean":
        expected = gold if isinstance(gold, bool) else _BOOL_WORDS[gold.strip().lower()]
        return extract_boolean(answer) == expected
    if kind == "number":
        number, decimals = exact_number(gold) or (math.nan, 0)
        predicted = extract_number(answer)
        return predicted is not None and numbers_match(predicted, number, decimals, rel_tol)
    wanted, given = normalise_text(gold), normalise_text(answer)
    if not wanted:
        return False
    if text_match == "contains":
        return _contains_words(given, wanted)
    return given == wanted


def _judge(answer: str | None, item: Item, ctx: Context) -> tuple[bool, bool]:
    """(parsed, correct) of an answer against every accepted answer of the item. No answer at
    all (an empty reply, the step limit) is understood and wrong: there is nothing to match."""
    if answer is None:
        return True, False
    options = item.input.get("options")
    accepted = _accepted(item)
    parsed = any(interpretable(answer, gold, options) for gold in accepted)
    correct = any(
        answer_matches(
            answer,
            gold,
            options,
            text_match=str(ctx.option("text_match") or "exact"),
            rel_tol=float(ctx.option("rel_tol") or 1e-6),
        )
        for gold in accepted
    )
    return parsed, correct


# --- parse -------------------------------------------------------------------------------------


def _is_call(action: Any) -> bool:
    return bool(action) and not _is_finish(action)


def parse_transcript(text: str) -> tuple[list[dict[str, Any]], str | None]:
    """A whole ReAct transcript (e.g. a published output) as trace steps and the final answer.
    Tools are not run: observations are read from the text."""
    steps: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    final: str | None = None
    before, pairs = marked_sections(text, _MARKER)
    if before.strip():
        current["thought"] = before.strip()

    def close() -> None:
        nonlocal current
        if current:
            current.setdefault("thought", "")
            current.setdefault("action", None)
            if "input" in current:
                current["arguments"] = {"input": current["input"]}
            current.setdefault("arguments", {})
            current.setdefault("observation", None)
            steps.append(current)
        current = {}

    for name, content in pairs:
        value = content.strip()
        if name == "thought":
            if "action" in current or "observation" in current:
                close()
            current["thought"] = (current.get("thought", "") + " " + value).strip()
        elif name == "action":
            if "action" in current:
                close()
            action, inline, bracketed = _clean_action(value)
            current["action"] = action
            if inline or bracketed:
                current["input"] = inline or bracketed
        elif name == "actioninput":
            current["input"] = value
        elif name == "observation":
            current["observation"] = value
            close()
        elif name == "finalanswer":
            final = _first_line(value) or final
    close()
    for step in steps:
        if step["action"] and _is_finish(step["action"]):
            answer = _first_line(step.pop("input", ""))
            step["action"], step["arguments"] = FINISH, {"answer": answer}
            final = final or answer or None
    if not pairs and before.strip():
        final = before.strip()
    return steps, final


def parse_reply(text: str, item: Item, ctx: Context, context: dict[str, Any]) -> Outcome:
    """R1/R3: the final answer of one reply."""
    answer, note = parse_answer(text)
    parsed, _ = _judge(answer, item, ctx)
    return Outcome(output=text, answer=answer, parsed=parsed, note=note)


def parse_published_transcript(
    text: str, item: Item, ctx: Context, context: dict[str, Any]
) -> Outcome:
    """R2/R4: a whole transcript (published outputs), read without running any tool."""
    steps, final = parse_transcript(text)
    if not steps:
        steps = [{"thought": "", "action": None, "arguments": {}, "observation": None}]
    if context.get("tools") is not None:
        steps[0]["tools"] = list(context["tools"])
    steps[-1]["stop"] = STOP_FINAL if final else STOP_NO_ANSWER
    parsed, _ = _judge(final, item, ctx)
    note = "read from a transcript; no tool was run"
    return Outcome(output=text, answer=final, parsed=parsed, trace=steps, note=note)


# --- solve: the ReAct loop ---------------------------------------------------------------------


@dataclass
class _Loop:
    """The state of one item's ReAct attempt."""

    pool: dict[str, Tool]
    done: list[_Done] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)
    calls: Counter[tuple[str, str]] = field(default_factory=Counter)
    invalid: int = 0


def _option_int(ctx: Context, name: str, default: int) -> int:
    value = ctx.option(name)
    return default if value is None else int(value)


def _truncate(text: str, limit: int) -> str:
    if limit > 0 and len(text) > limit:
        return text[:limit] + str(_templates()["observation"]["truncated"])
    return text


async def _run_tool(tool: Tool, arguments: dict[str, Any]) -> tuple[str, bool]:
    """The observation of one call and whether the tool succeeded. A tool the platform does
    not serve becomes an observation; any other failure of the platform passes through."""
    try:
        observation = await tool.call(arguments)
    except ToolUnavailable as error:
        text = _fill(
            _templates()["observation"]["unavailable"],
            action=tool.spec.name,
            reason=str(error) or "no reason given",
        )
        return text, False
    observation = "" if observation is None else str(observation)
    return observation, not observation.lstrip().lower().startswith("error")


def _transcript(trace: Sequence[dict[str, Any]]) -> str:
    lines: list[str] = []
    for step in trace:
        if step.get("thought"):
            lines.append(f"Thought: {step['thought']}")
        if step.get("action") is not None:
            lines.append(f"Action: {step['action']}")
            arguments = step.get("arguments") or {}
            if step["action"] == FINISH:
                lines.append(f"Action Input: {arguments.get('answer', '')}")
            elif "input" in step:
                lines.append(f"Action Input: {step['input']}")
        if step.get("observation") is not None:
            lines.append(f"Observation: {step['observation']}")
    return "\n".join(lines)


async def react(item: Item, ctx: Context, context: dict[str, Any], complete: Complete) -> Outcome:
    """The ReAct loop of R2/R4: one `complete` per step, the chosen tool run between steps.
    Ends on a final answer, on `max_steps` (no answer), on null content, on a repeated invalid
    action after a reminder, or on an identical call asked once too often."""
    loop = _Loop(pool=tool_pool(ctx, context))
    max_steps = max(1, _option_int(ctx, "max_steps", 5))
    max_invalid = max(1, _option_int(ctx, "max_invalid_actions", 2))
    max_same = max(1, _option_int(ctx, "max_same_call", 2))
    limit = _option_int(ctx, "max_observation_chars", 2000)
    names = ", ".join(loop.pool)
    completion = ctx.style == "completion"
    stop, answer, why = STOP_LIMIT, None, f"no final answer within {max_steps} steps"
    for index in range(max_steps):
        prompt = _react_prompt(item, ctx, loop.pool, loop.done)
        output = await complete(prompt)
        # A completion prompt ends with "Thought:", so the reply starts inside the thought.
        step = parse_step("Thought: " + output if completion else output)
        record: dict[str, Any] = {
            "step": index + 1,
            "thought": step.thought,
            "action": step.action or None,
            "arguments": {},
            "observation": None,
            "output": output,
        }
        if index == 0:
            record["tools"] = list(loop.pool)
        loop.trace.append(record)
        if step.kind == "null":
            record["error"] = STOP_NULL
            stop, why = STOP_NULL, f"null content: {step.why}"
            break
        if step.kind == "final":
            record["action"], record["arguments"] = FINISH, {"answer": step.answer}
            stop, answer, why = STOP_FINAL, step.answer, ""
            if step.direct:
                why = "the reply had no ReAct markers: taken as a direct answer"
            break
        record["input"] = step.action_input
        tool = _find_tool(loop.pool, step.action)
        if tool is None:
            loop.invalid += 1
            record["arguments"] = {"input": step.action_input}
            record["error"] = "invalid_tool"
            if loop.invalid >= max_invalid:
                stop = STOP_INVALID
                why = f"invalid action {step.action!r} again after a reminder"
                break
            observation = _fill(
                _templates()["observation"]["invalid_tool"], action=step.action, tool_names=names
            )
            record["observation"] = observation
            loop.done.append(_Done(step.thought, step.action, step.action_input, observation))
            continue
        record["action"] = tool.spec.name
        key = (tool.spec.name, " ".join(step.action_input.split()))
        loop.calls[key] += 1
        if loop.calls[key] > max_same:
            record["error"] = "repeated_call"
            earlier = [s for s in loop.trace[:-1] if _call_key(s) == key]
            # Repeating a call that failed is the paper's "invalid tool called repeatedly";
            # repeating one that worked is "correct tool but no reasoning over its result".
            record["repeats_failed_call"] = any(s.get("ok") is False for s in earlier)
            stop = STOP_REPEAT
            why = f"the same call ({tool.spec.name}: {step.action_input!r}) asked again"
            break
        arguments = _arguments(tool, step.action_input)
        observation, ok = await _run_tool(tool, arguments)
        observation = _truncate(observation, limit)
        record.update(arguments=arguments, observation=observation, ok=ok)
        loop.done.append(_Done(step.thought, tool.spec.name, step.action_input, observation))
    loop.trace[-1]["stop"] = stop
    offered = ", ".join(loop.pool) or "none"
    note = f"tools offered: {offered}; stopped: {stop}" + (f" ({why})" if why else "")
    parsed, _ = _judge(answer, item, ctx)
    return Outcome(
        output=_transcript(loop.trace),
        answer=answer,
        parsed=parsed,
        trace=loop.trace,
        note=note,
    )


def _call_key(record: Mapping[str, Any]) -> tuple[str, str]:
    return str(record.get("action")), " ".join(str(record.get("input", "")).split())


def _arguments(tool: Tool, action_input: str) -> dict[str, Any]:
    if not (tool.spec.category == "local" and tool.spec.name == CALCULATOR):
        return tool_arguments(tool.spec, action_input)
    text = action_input.strip()
    if text.startswith("{"):
        # {"expression": "2 + 3"} from a model used to JSON arguments.
        given = tool_arguments(tool.spec, text)
        if isinstance(given.get("expression"), str):
            return {"expression": given["expression"]}
        strings = [v for v in given.values() if isinstance(v, str)]
        if len(strings) == 1:
            return {"expression": strings[0]}
    return {"expression": text}


async def answer_once(
    item: Item, ctx: Context, context: dict[str, Any], complete: Complete
) -> Outcome:
    """R1/R3: one prompt, one answer (a completion is read with the cue it continued)."""
    prompt = _answer_prompt(item, ctx)
    text = await complete(prompt)
    cue = "Thought: " if ctx.option("cot") else "Final Answer: "
    outcome = parse_reply(cue + text if ctx.style == "completion" else text, item, ctx, context)
    outcome.output = text
    return outcome


# --- scores ------------------------------------------------------------------------------------


def _calls(outcome: Outcome) -> tuple[bool, bool]:
    """(the first step calls a tool, some step calls a tool)."""
    actions = [step.get("action") for step in outcome.trace]
    first = bool(actions) and _is_call(actions[0])
    return first, any(_is_call(a) for a in actions)


def error_type(outcome: Outcome | None, item: Item, tool_used: bool) -> str:
    """The paper's error type of a wrong item (Table 4), from its trace."""
    if outcome is None:
        return "no_output"
    if _item_kind(item) == "general" and tool_used:
        return "unnecessary_tool"
    last = outcome.trace[-1] if outcome.trace else {}
    stop = last.get("stop")
    if stop == STOP_NULL:
        return "null_content"
    if stop == STOP_INVALID:
        return "invalid_tool_repeated"
    if stop == STOP_REPEAT:
        return "invalid_tool_repeated" if last.get("repeats_failed_call") else "no_reasoning"
    if stop == STOP_LIMIT:
        return "endless_retry"
    if stop == STOP_NO_ANSWER:
        return "endless_retry" if tool_used else "null_content"
    return "wrong_answer"


def make_score(*, agent: bool) -> Score:
    """A region's per-item scores: accuracy (1/0, None when unparsed and the option says skip),
    unparsed (1/0); with the tool pool (agent: R2/R4) also call_rate (the first step calls a
    tool), tool_errors (a general item: some step calls a tool) and errors[<type>] = 1 for a
    wrong item."""

    def score(outcome: Outcome | None, item: Item, ctx: Context, context: dict[str, Any]) -> Scores:
        general = _item_kind(item) == "general"
        scores: Scores = {}
        if outcome is None:
            scores.update(accuracy=0.0, unparsed=0.0)
            first = used = False
        else:
            first, used = _calls(outcome) if agent else (False, False)
            parsed, correct = _judge(outcome.answer, item, ctx)
            if agent and general and used and ctx.option("general_tool_call") != "ignore":
                accuracy: float | None = 0.0
            elif not parsed:
                accuracy = None if ctx.option("unparsed") == "skip" else 0.0
            else:
                accuracy = 1.0 if correct else 0.0
            scores.update(accuracy=accuracy, unparsed=0.0 if parsed else 1.0)
        if agent:
            scores["call_rate"] = 1.0 if first else 0.0
            if general:
                scores["tool_errors"] = 1.0 if used else 0.0
            if scores["accuracy"] == 0.0:
                scores[f"errors[{error_type(outcome, item, used)}]"] = 1.0
        return scores

    return score


def _rate(scored: Sequence[Scored], name: str) -> float | None:
    return percent(mean([s.scores.get(name) for s in scored]))


def make_aggregate(*, agent: bool, tool_errors: bool = False) -> Aggregate:
    """A region's run-level metrics (see the module docstring); per dataset too when the run
    spans several. With the tool pool (agent: R2/R4) also call_rate and the error types;
    tool_errors always with `tool_errors` (R4), else when some item has it."""

    def aggregate(scored: Sequence[Scored], ctx: Context) -> Scores:
        result: Scores = {"accuracy": _rate(scored, "accuracy")}
        if agent:
            result["call_rate"] = _rate(scored, "call_rate")
        if agent and (tool_errors or any("tool_errors" in s.scores for s in scored)):
            result["tool_errors"] = _rate(scored, "tool_errors")
        result["unparsed"] = float(sum(s.scores.get("unparsed") or 0.0 for s in scored))
        result["n"] = float(len(scored))
        if agent:
            wrong = [s for s in scored if any(k in s.scores for k in ERROR_KEYS)]
            for key in ERROR_KEYS:
                count = sum(1 for s in wrong if s.scores.get(key))
                result[key] = percent(count / len(wrong)) if wrong else None
        datasets = sorted({s.item.split for s in scored})
        if len(datasets) > 1:
            for dataset in datasets:
                part = [s for s in scored if s.item.split == dataset]
                result[f"accuracy[{dataset}]"] = _rate(part, "accuracy")
                if agent:
                    result[f"call_rate[{dataset}]"] = _rate(part, "call_rate")
        return result

    return aggregate
