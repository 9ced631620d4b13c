"""Generic suite evaluation: a researcher's own questions (importer.py's JSON Lines) prompted,
parsed and scored, as pure functions over the protocol in benchmarks/kit/protocol.py.

Tasks (no default split: the format's split names are the researcher's, so a run names one):
  - answer: the model's final answer against reference["answer"]. One completion, no tools
    offered: an item whose answer depends on a tool's result carries that result in its
    dialogue turns. Selected: items whose reference has a non-null "answer".
  - tool_calls: the model's next move (the calls it makes, in order, or none) against
    reference["tool_calls"]; an empty gold list means the right move is to call no tool.
    Selected: items whose reference has "tool_calls".
  A query sample is one user message; a dialogue sample's turns become the chat history: user
  and assistant turns as they are (an assistant turn's calls written in the reply format
  below), a tool turn as a user message "Tool result (name): content" (plain messages work with
  every endpoint; tool-role messages need call ids the format does not carry). Consecutive
  messages of one role are joined, since some chat templates insist on alternation.

Options:
  - unparsed: "wrong" (default) scores an unreadable output as wrong; "exclude" leaves the item
    out of the metrics (its `unparsed` value still counts it), as MetaTool's option does.
  - min_completion_shots: completion-style prompts show at least this many examples (default 1)
    even when the run asks for fewer: a base model continues a pattern and needs one to
    continue. Chat prompts show exactly `shots` (at most the 3 examples of ours each task has).

Metrics (percentages 0-100, per item and per run; run values are means over the items that
have the metric, rounded to 2 decimals):
  - answer: accuracy, and unparsed (no answer text in the output).
    The answer read from the output: the text after the last "Answer:" (or "Final answer:")
    marker, up to the end of its line (the next non-empty line when that is empty); without a
    marker, the last non-empty line. Both sides are normalised: Unicode NFKC, case-folded,
    whitespace collapsed, surrounding quotes, `*`, `_` and backticks removed, final . ! ? 。
    removed. Then, by the gold's type:
      number (or a string that is one number): equal numerically (1e-9 relative tolerance) to
        the prediction when it is one number, or holds exactly one number ("366 days");
        thousands separators "1,234" are read;
      string: the normalised texts are equal;
      boolean: the prediction's first word is yes/true (true) or no/false (false);
      list: alternatives, right when any element matches by these rules;
      object: a JSON object in the output equal to it (numbers compared numerically).
  - tool_calls: call_exact (headline), call_name_accuracy, no_call_accuracy, unparsed.
      call_exact: the predicted calls equal the gold calls in order: same number, same names,
        arguments equal as JSON values (numbers numerically, so 12 equals 12.0; strings exactly;
        key order ignored; extra or missing keys make it wrong);
      call_name_accuracy: the predicted tool names equal the gold names in order;
      no_call_accuracy: over the items whose gold is no call only: the model made no call
        (None for other items, so the run value is the share among those items);
      unparsed: the output could not be read (see below).
  A failed model call (score(None, ...)) scores like a wrong answer and is not `unparsed`.

Output format the prompts ask for:
  answer:      a last line "Answer: <answer>";
  tool_calls:  one JSON object {"tool_calls": [{"name": "tool", "arguments": {...}}]}, with
               {"tool_calls": []} for no call.
Parsing of tool calls, tolerant and never evaluating text: the first {"tool_calls": [...]}
object anywhere in the output (prose, code fences); else every call object {"name",
"arguments"} (or OpenAI's {"type": "function", "function": {...}}, arguments possibly a JSON
string) or list of them, in order; else one Python-style call per line, `tool(key='value')`,
read by toolcall.parse_tool_call (a call with code in it is refused and the output is
unparsed). An output with none of these is the decision to call no tool, unless it is empty or
shows a broken attempt ("tool_calls" or a "name" key that does not parse), which is unparsed.

Published outputs: both tasks read the platform's generic JSON Lines {"sample_id", "output",
"split"?} (benchmarks/kit/predictions.py).

How the tasks are composed (tasks.py declares them): each task has its own select_*, parse_*
and score_* functions and its prompt from make_prompt (its templates.toml section, whether the
prompt lists tools, its stop sequences); aggregate and mean_metrics are shared, reading the
metrics the task's spec declares (ctx.task.metrics).

Prompts and examples are ours: prompts/templates.toml.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
import unicodedata
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from benchmarks.kit.predictions import json_values
from benchmarks.kit.protocol import (
    BuildPrompt,
    Context,
    Item,
    MetricSpec,
    Option,
    Outcome,
    Prompt,
    Scored,
    Scores,
    TaskSpec,
    ToolSpec,
    mean,
    metric_specs,
)
from benchmarks.kit.toolcall import ToolCallError, parse_tool_call

__all__ = [
    "TASKS",
    "aggregate",
    "answers_match",
    "gold_answer_output",
    "gold_calls_output",
    "make_prompt",
    "mean_metrics",
    "normalise_answer",
    "parse_answer",
    "parse_tool_calls",
    "same_value",
    "score_answer",
    "score_tool_calls",
    "select_answer",
    "select_tool_calls",
]

PROMPTS = Path(__file__).parent / "prompts"
OPTIONS: tuple[Option, ...] = (
    Option(
        "unparsed",
        "text",
        "wrong",
        "an unreadable output scores as wrong, or is left out of the metrics (still counted)",
        choices=("wrong", "exclude"),
    ),
    Option(
        "min_completion_shots",
        "integer",
        1,
        "completion-style prompts show at least this many examples (a base model continues "
        "a pattern)",
        minimum=0,
    ),
)

# Per item `unparsed` is 100 or 0 (a fact about the output); per run it is the share of such
# outputs, a score where lower is better.
UNPARSED_ITEM = MetricSpec.flag("unparsed", "lower", "100 when the output could not be read")
UNPARSED_RUN = MetricSpec.score("unparsed", "lower", "% of outputs that could not be read")
ANSWER_METRICS = (MetricSpec.score("accuracy", description="the answer matches the reference"),)
CALL_METRICS = (
    MetricSpec.score("call_exact", description="the calls equal the gold calls, in order"),
    MetricSpec.score("call_name_accuracy", description="the tool names equal the gold's"),
    MetricSpec.score("no_call_accuracy", description="no call where the gold makes none"),
)

TASKS: dict[str, TaskSpec] = {
    "answer": TaskSpec(
        name="answer",
        title="Final answer",
        metrics=("accuracy", "unparsed"),
        percent=frozenset({"accuracy", "unparsed"}),
        options=OPTIONS,
        item_metrics=metric_specs(*ANSWER_METRICS, UNPARSED_ITEM),
        run_metrics=metric_specs(*ANSWER_METRICS, UNPARSED_RUN),
        description="The final answer against the sample's answer (normalised exact match).",
    ),
    "tool_calls": TaskSpec(
        name="tool_calls",
        title="Tool calls",
        metrics=("call_exact", "call_name_accuracy", "no_call_accuracy", "unparsed"),
        percent=frozenset({"call_exact", "call_name_accuracy", "no_call_accuracy", "unparsed"}),
        options=OPTIONS,
        item_metrics=metric_specs(*CALL_METRICS, UNPARSED_ITEM),
        run_metrics=metric_specs(*CALL_METRICS, UNPARSED_RUN),
        description="The next tool calls (or none) against the sample's calls, in order.",
        native=True,
    ),
}

REPLY_HEADER = "### Reply"


def _reference(item: Item) -> dict[str, Any]:
    return item.reference if isinstance(item.reference, dict) else {}


def select_answer(items: Sequence[Item], ctx: Context) -> list[Item]:
    """The items whose reference has a non-null answer."""
    return [item for item in items if _reference(item).get("answer") is not None]


def select_tool_calls(items: Sequence[Item], ctx: Context) -> list[Item]:
    """The items whose reference has a list of calls (an empty one: the right move is none)."""
    return [item for item in items if isinstance(_reference(item).get("tool_calls"), list)]


# --- comparing values ---------------------------------------------------------------------------


def same_value(a: Any, b: Any) -> bool:
    """JSON equality with numbers compared numerically (12 == 12.0) and booleans apart from
    numbers (true != 1)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b or math.isclose(a, b, rel_tol=1e-9)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


_WRAPPING = " *_`\"'\u201c\u201d\u2018\u2019"
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e[-+]?\d+)?(?!\w)")
_MARKER = re.compile(r"(?:final\s+)?answer\s*[:\uff1a]", re.IGNORECASE)


def normalise_answer(text: str) -> str:
    text = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    previous = None
    while previous != text:
        previous = text
        text = text.strip(_WRAPPING).rstrip(".!?。").strip()
    return text


def _number(text: str) -> float | None:
    """The one number a normalised text is or holds; None when it holds none or several."""
    found = _NUMBER.findall(text)
    if len(found) != 1:
        return None
    try:
        return float(found[0].replace(",", ""))
    except ValueError:
        return None


def _numeric(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = normalise_answer(value)
        if _NUMBER.fullmatch(text):
            return float(text.replace(",", ""))
    return None


def answers_match(gold: Any, predicted: str) -> bool:
    """Whether the answer text `predicted` matches the gold answer (rules in the docstring)."""
    if isinstance(gold, list):
        return any(answers_match(option, predicted) for option in gold)
    if isinstance(gold, dict):
        return any(same_value(gold, value) for value in json_values(predicted))
    text = normalise_answer(predicted)
    if isinstance(gold, bool):
        first = re.split(r"[\s,.;:!]+", text, maxsplit=1)[0] if text else ""
        if first in ("yes", "true"):
            return gold is True
        if first in ("no", "false"):
            return gold is False
        return False
    number = _numeric(gold)
    if number is not None:
        found = _number(text)
        if found is not None and math.isclose(found, number, rel_tol=1e-9, abs_tol=1e-12):
            return True
    return isinstance(gold, str | int | float) and text == normalise_answer(str(gold))


# --- parsing ------------------------------------------------------------------------------------


class _Malformed(ValueError):
    pass


_CALL_LINE = re.compile(r"^\s*(?:[-*]\s+|\d+[.)]\s+)?`*([^\W\d][\w.]*\(.*\))`*;?\s*$")
_ATTEMPT = re.compile(r"\"tool_calls\"|\"name\"\s*:")


def _read_call(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Malformed(f"a call must be an object, got {type(value).__name__}")
    if value.get("type") == "function" and isinstance(value.get("function"), dict):
        value = value["function"]
    name = value.get("name")
    if not isinstance(name, str) or not name.strip():
        raise _Malformed("a call has no tool name")
    arguments = value.get("arguments", value.get("parameters"))
    if arguments is None:
        arguments = {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (json.JSONDecodeError, RecursionError):
            raise _Malformed(f"the arguments of {name.strip()} are not JSON") from None
    if not isinstance(arguments, dict):
        raise _Malformed(f"the arguments of {name.strip()} are not an object")
    return {"name": name.strip(), "arguments": arguments}


def _looks_like_call(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    if value.get("type") == "function" and isinstance(value.get("function"), dict):
        return True
    return "name" in value and ("arguments" in value or "parameters" in value)


def _json_calls(values: Sequence[Any]) -> list[dict[str, Any]] | None:
    for value in values:
        if isinstance(value, dict) and "tool_calls" in value:
            calls = value["tool_calls"]
            if calls is None:
                return []
            if isinstance(calls, dict):
                calls = [calls]
            if not isinstance(calls, list):
                raise _Malformed('"tool_calls" is not a list')
            return [_read_call(call) for call in calls]
    found: list[dict[str, Any]] = []
    for value in values:
        if _looks_like_call(value):
            found.append(_read_call(value))
        elif isinstance(value, list) and value and all(_looks_like_call(v) for v in value):
            found.extend(_read_call(v) for v in value)
    return found or None


def _line_calls(text: str) -> list[dict[str, Any]] | None:
    found: list[dict[str, Any]] = []
    for line in text.splitlines():
        match = _CALL_LINE.match(line)
        if not match:
            continue
        try:
            call = parse_tool_call(match.group(1))
        except ToolCallError as exc:
            raise _Malformed(f"call refused: {exc}") from None
        found.append(call.as_dict())
    return found or None


def parse_tool_calls(text: str, item: Item, ctx: Context, context: dict[str, Any]) -> Outcome:
    """The calls [{"name", "arguments"}] the output makes ([] for none)."""
    if not text.strip():
        return Outcome(output=text, parsed=False, note="empty output")
    try:
        calls = _json_calls(json_values(text))
        if calls is None:
            calls = _line_calls(text)
    except _Malformed as exc:
        return Outcome(output=text, parsed=False, note=str(exc))
    if calls is None:
        if _ATTEMPT.search(text):
            return Outcome(output=text, parsed=False, note="a tool call that is not valid JSON")
        return Outcome(output=text, answer=[], note="no tool call in the output")
    return Outcome(output=text, answer=calls)


def _extract_answer(text: str) -> str:
    markers = list(_MARKER.finditer(text))
    if markers:
        lines = text[markers[-1].end() :].splitlines()
        return next((line.strip() for line in lines if line.strip()), "")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def parse_answer(text: str, item: Item, ctx: Context, context: dict[str, Any]) -> Outcome:
    """The answer text the output gives."""
    answer = _extract_answer(text)
    if not answer:
        return Outcome(output=text, parsed=False, note="no answer in the output")
    return Outcome(output=text, answer=answer)


# --- scoring ------------------------------------------------------------------------------------


def _unparsed_option(ctx: Context) -> str:
    value = ctx.option("unparsed")
    if value not in ("wrong", "exclude"):
        raise ValueError(f"option unparsed must be wrong or exclude, got {value!r}")
    return str(value)


def _excluded(outcome: Outcome | None, ctx: Context) -> Scores | None:
    """The scores of an unread output the run leaves out of the metrics (unparsed=exclude):
    every metric of the task None but `unparsed`; None when the output is scored."""
    if outcome is not None and not outcome.parsed and _unparsed_option(ctx) == "exclude":
        return {**{name: None for name in ctx.task.metrics}, "unparsed": 100.0}
    return None


def _unparsed_flag(outcome: Outcome | None) -> float:
    return 100.0 if outcome is not None and not outcome.parsed else 0.0


def _answer(outcome: Outcome | None) -> Any:
    return outcome.answer if outcome is not None and outcome.parsed else None


def score_answer(
    outcome: Outcome | None, item: Item, ctx: Context, context: dict[str, Any]
) -> Scores:
    """accuracy and unparsed of one answer."""
    excluded = _excluded(outcome, ctx)
    if excluded is not None:
        return excluded
    answer = _answer(outcome)
    right = isinstance(answer, str) and answers_match(_reference(item).get("answer"), answer)
    return {"accuracy": 100.0 if right else 0.0, "unparsed": _unparsed_flag(outcome)}


def score_tool_calls(
    outcome: Outcome | None, item: Item, ctx: Context, context: dict[str, Any]
) -> Scores:
    """call_exact, call_name_accuracy, no_call_accuracy and unparsed of one move."""
    excluded = _excluded(outcome, ctx)
    if excluded is not None:
        return excluded
    answer = _answer(outcome)
    gold = _reference(item).get("tool_calls") or []
    predicted = answer if isinstance(answer, list) else None
    names_right = predicted is not None and [c.get("name") for c in predicted] == [
        c["name"] for c in gold
    ]
    exact = names_right and all(
        same_value(p.get("arguments"), g.get("arguments", {}))
        for p, g in zip(predicted or [], gold, strict=True)
    )
    no_call = None if gold else (100.0 if predicted == [] else 0.0)
    return {
        "call_exact": 100.0 if exact else 0.0,
        "call_name_accuracy": 100.0 if names_right else 0.0,
        "no_call_accuracy": no_call,
        "unparsed": _unparsed_flag(outcome),
    }


MEAN_DIGITS = 2


def aggregate(scored: Sequence[Scored], ctx: Context) -> Scores:
    """Per metric of the task, the mean over the items that have it, rounded to 2 decimals."""
    result: Scores = {}
    for metric in ctx.task.metrics:
        value = mean([s.scores.get(metric) for s in scored])
        result[metric] = None if value is None else round(value, MEAN_DIGITS)
    return result


def mean_metrics(ctx: Context) -> dict[str, int | None]:
    """Every metric of aggregate() is a mean of the items' values, rounded to 2 decimals."""
    return dict.fromkeys(ctx.task.metrics, MEAN_DIGITS)


# --- prompts ------------------------------------------------------------------------------------


@cache
def _templates() -> dict[str, Any]:
    with open(PROMPTS / "templates.toml", "rb") as handle:
        return tomllib.load(handle)


def _calls_json(calls: Sequence[Mapping[str, Any]]) -> str:
    rows = [{"name": c.get("name"), "arguments": c.get("arguments") or {}} for c in calls]
    return json.dumps({"tool_calls": rows}, ensure_ascii=False)


def gold_calls_output(item: Item) -> str:
    """The gold calls written as the tool_calls task's prompt asks (a perfect model's output)."""
    return _calls_json(_reference(item).get("tool_calls") or [])


def gold_answer_output(item: Item) -> str:
    """The gold answer written as the answer task's prompt asks (a perfect model's output)."""
    reference = _reference(item)
    answer = reference.get("answer")
    if isinstance(answer, list) and answer:
        answer = answer[0]
    text = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
    return f"Answer: {text}"


def _turns(item: Item) -> list[dict[str, Any]]:
    turns = item.input.get("turns")
    if isinstance(turns, list) and turns:
        return [turn for turn in turns if isinstance(turn, dict)]
    return [{"role": "user", "content": str(item.input.get("query", ""))}]


def _assistant_text(turn: Mapping[str, Any]) -> str:
    parts = [str(turn.get("content") or "").strip()]
    if turn.get("tool_calls"):
        parts.append(_calls_json(turn["tool_calls"]))
    return "\n".join(part for part in parts if part)


def _messages(turns: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    messages: list[dict[str, str]] = []
    for turn in turns:
        role = turn.get("role")
        if role == "assistant":
            message = {"role": "assistant", "content": _assistant_text(turn)}
        elif role == "tool":
            name = turn.get("name") or "tool"
            content = f"Tool result ({name}): {str(turn.get('content') or '').strip()}"
            message = {"role": "user", "content": content}
        else:
            message = {"role": "user", "content": str(turn.get("content") or "").strip()}
        if messages and messages[-1]["role"] == message["role"]:
            messages[-1]["content"] += "\n\n" + message["content"]
        else:
            messages.append(message)
    return messages


def _transcript(turns: Sequence[Mapping[str, Any]]) -> str:
    lines = []
    for turn in turns:
        role = turn.get("role")
        if role == "assistant":
            lines.append(f"Assistant: {_assistant_text(turn)}")
        elif role == "tool":
            content = str(turn.get("content") or "").strip()
            lines.append(f"Tool ({turn.get('name') or 'tool'}): {content}")
        else:
            lines.append(f"User: {str(turn.get('content') or '').strip()}")
    return "\n".join(lines)


def _tool_json(spec: ToolSpec | None, name: str) -> dict[str, Any]:
    if spec is None:
        return {"name": name}
    shown: dict[str, Any] = {"name": spec.name}
    if spec.description:
        shown["description"] = spec.description
    if spec.parameters:
        shown["parameters"] = spec.parameters
    return shown


def _tools_section(tools: Sequence[Mapping[str, Any]]) -> str:
    listed = "\n".join(json.dumps(tool, ensure_ascii=False) for tool in tools)
    return f"### Tools\n{listed or '(none)'}"


def _block(
    show_tools: bool, tools: Sequence[Mapping[str, Any]], turns: Sequence[Mapping[str, Any]]
) -> str:
    parts = [_tools_section(tools)] if show_tools else []
    parts.append(f"### Conversation\n{_transcript(turns)}")
    return "\n".join(parts)


def make_prompt(section: str, *, show_tools: bool, stop: tuple[str, ...]) -> BuildPrompt:
    """A task's prompt: the wording of `section` of prompts/templates.toml; with show_tools, a
    "### Tools" section (the item's tools with their JSON schemas) in the system message and in
    every block; `stop`, the completion prompt's stop sequences.

    Chat: a system message (instructions, `shots` examples of ours, the tools) and the
    conversation; completion: the same as one text of blocks that ends in "### Reply"."""

    def build_prompt(item: Item, ctx: Context, context: dict[str, Any]) -> Prompt:
        wording = _templates()[section]
        instructions = wording["instructions"].strip()
        examples = wording.get("examples", [])
        shots = max(int(ctx.shots or 0), 0)
        candidates = dict.fromkeys(item.candidate_tools)
        tools = [_tool_json(ctx.tools.get(name), name) for name in candidates]
        turns = _turns(item)

        def example_block(example: Mapping[str, Any]) -> str:
            shown = _block(show_tools, example.get("tools", []), example["turns"])
            return f"{shown}\n{REPLY_HEADER}\n{example['reply']}"

        system = [instructions]
        if examples[:shots]:
            system.append(
                "Examples of the format, each with its own tools:"
                if show_tools
                else "Examples of the format:"
            )
            system.extend(example_block(example) for example in examples[:shots])
            if show_tools:
                system.append("The conversation that follows has these tools:")
        if show_tools:
            system.append(_tools_section(tools))
        messages = [{"role": "system", "content": "\n\n".join(system)}, *_messages(turns)]
        if ctx.style != "completion":
            return Prompt(messages=messages)
        floor = int(ctx.option("min_completion_shots") or 0)
        blocks = [instructions]
        blocks.extend(example_block(example) for example in examples[: max(shots, floor)])
        blocks.append(f"{_block(show_tools, tools, turns)}\n{REPLY_HEADER}\n")
        return Prompt(messages=messages, text="\n\n".join(blocks), stop=stop)

    return build_prompt
