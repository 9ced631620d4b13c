"""What a human needs beside a model's output to judge it (a suite's `item_context` capability).

The annotation studio hands a suite one sample (`Item`) and the outputs judged on it
(`JudgedOutput`: the run's task, the context prepared for the item at launch, the raw text, the
parsed answer, the trace); the suite answers with an `ItemContext`: the question or the dialogue
so far, the tools offered, the gold when the campaign shows it, and per output what a judge
reads first (`OutputSummary`: short labelled facts, the parsed calls, plan steps). Everything
here is data: the studio's templates escape every string of it.

`default_item_context` serves a suite whose samples keep input["query"] / input["turns"] and
whose answers hold calls in one of the usual shapes (`answer_calls`). Pure Python, no Django.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.kit.protocol import Item


@dataclass(frozen=True, slots=True)
class JudgedOutput:
    """One model output a human judges: its run's task, the per-item context prepared at the
    run's launch (e.g. the candidate tools it was shown), the raw text, the parsed answer
    (parsed False: the suite's parser could not read it; None: no answer yet) and its trace;
    what the suite's scorer and analyses read besides: its per-item scores as stored, the
    native answer's tool_calls as the server sent them (None in text mode) and the parser's
    note."""

    task: str = ""
    context: Mapping[str, Any] = field(default_factory=dict)
    text: str = ""
    answer: Any = None
    parsed: bool | None = None
    trace: Sequence[Any] = ()
    scores: Mapping[str, Any] = field(default_factory=dict)
    tool_calls: Any = None
    note: str = ""


@dataclass(frozen=True, slots=True)
class ShownCall:
    """A tool call as a judge reads it: the name, the arguments as parsed (a dict, or whatever
    the output held) and where it sits ("step 1.2", "turn 3"; "" when nowhere in particular)."""

    name: str
    arguments: Any = None
    label: str = ""


@dataclass(frozen=True, slots=True)
class OutputSummary:
    """What a judge reads first about one output (or about the gold).

    facts: (label, text) pairs, e.g. ("Pick", "WeatherTool"), ("Decision", "calls a tool").
    calls: the parsed tool calls, in order; None when the answer holds none to show (the raw
      text is then what the judge reads).
    steps: (number, text) pairs of a plan.
    offered: the tools this output was offered, when its run chose them (MetaTool's sampled
      candidates); the studio describes them.
    text: the output's text as a judge reads it, when that is not the text as stored (None):
      what the platform wrote around the model's answer that says how it was run, and not
      what it answered, is left out (StableToolBench's answer object without its method), so
      that a blind judge cannot tell a text run's output from a native run's by it."""

    facts: tuple[tuple[str, str], ...] = ()
    calls: tuple[ShownCall, ...] | None = None
    steps: tuple[tuple[str, str], ...] = ()
    offered: tuple[str, ...] = ()
    text: str | None = None


@dataclass(frozen=True, slots=True)
class ItemContext:
    """What a human needs beside an output to judge it: the question (or the dialogue's turns),
    the candidate tools offered (names of the benchmark's tools), the gold when the campaign
    shows it (None otherwise) and how it reads (`gold_view`), and one summary per judged
    output, in the order given (`sides`). `descriptions` describes candidates the benchmark
    holds no tool for (functions a sample carries in its input, as BFCL's do)."""

    query: Any = None
    turns: Any = None
    candidates: tuple[str, ...] = ()
    descriptions: Mapping[str, str] = field(default_factory=dict)
    gold: Any = None
    gold_view: OutputSummary | None = None
    sides: tuple[OutputSummary, ...] = ()


ItemContextHook = Callable[[Item, bool, Sequence[JudgedOutput]], ItemContext]


# --- reading calls out of answers ---------------------------------------------------------------


def answer_calls(value: Any, label_key: str = "step") -> tuple[ShownCall, ...] | None:
    """Tool calls found in a parsed answer: {"calls": [...]}, {"tool_calls": [...]} or a list of
    {"name" | "tool", "arguments" | "param" | "parameters", "step"?} (an empty list: no call);
    None when the value holds none of these (it is then shown as text). Arguments written as
    JSON text are read."""
    if isinstance(value, Mapping):
        for key in ("calls", "tool_calls"):
            if isinstance(value.get(key), list):
                value = value[key]
                break
    if not isinstance(value, list):
        return None
    calls = []
    for entry in value:
        if not isinstance(entry, Mapping):
            return None
        function = entry.get("function")
        if isinstance(function, Mapping):  # an OpenAI tool_calls entry
            entry = function
        name = entry.get("name", entry.get("tool"))
        if not isinstance(name, str):
            return None
        arguments = next(
            (entry[k] for k in ("arguments", "param", "parameters") if k in entry), None
        )
        step = entry.get(label_key)
        calls.append(
            ShownCall(
                name=name,
                arguments=_read_json_text(arguments),
                label=f"step {step}" if step not in (None, "") else "",
            )
        )
    return tuple(calls)


def _read_json_text(value: Any) -> Any:
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def trace_calls(trace: Sequence[Any], skip: Sequence[str] = ()) -> tuple[ShownCall, ...]:
    """The calls an agent's trace made (steps with an "action"), labelled by step number;
    actions named in `skip` (a final-answer action) are left out."""
    calls = []
    for number, step in enumerate(trace, start=1):
        if not isinstance(step, Mapping):
            continue
        action = step.get("action")
        if not isinstance(action, str) or not action or action in skip:
            continue
        arguments = step.get("arguments")
        if not arguments and step.get("input") not in (None, ""):
            arguments = step.get("input")
        calls.append(
            ShownCall(name=action, arguments=_read_json_text(arguments), label=f"step {number}")
        )
    return tuple(calls)


def text_of(value: Any) -> str:
    """A short value as one line of text (JSON for anything but a string)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def unread(output: JudgedOutput) -> bool:
    """Whether the suite's parser could not read the output (its raw text is what counts)."""
    return output.parsed is False


def default_side(output: JudgedOutput) -> OutputSummary:
    calls = None if unread(output) else answer_calls(output.answer)
    if calls is None and output.trace:
        calls = trace_calls(output.trace) or None
    return OutputSummary(calls=calls)


def default_item_context(
    item: Item, show_gold: bool, outputs: Sequence[JudgedOutput] = ()
) -> ItemContext:
    """The context of a sample as every suite stores it: input["query"] / input["turns"], its
    candidate tools, its reference as the gold; the calls each output's answer holds."""
    given = item.input if isinstance(item.input, Mapping) else {}
    gold_calls = answer_calls(item.reference) if show_gold else None
    return ItemContext(
        query=given.get("query"),
        turns=given.get("turns"),
        candidates=tuple(item.candidate_tools or ()),
        gold=item.reference if show_gold else None,
        gold_view=OutputSummary(calls=gold_calls) if gold_calls is not None else None,
        sides=tuple(default_side(output) for output in outputs),
    )
