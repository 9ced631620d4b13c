"""What a judge of WTU-Eval outputs needs (the suite's item_context capability): the question
(and its options), the tools the run offered (none in R1/R3), each output's decision whether to
call a tool, its calls and its final answer, and the gold answer only when the campaign shows
it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.kit.context import (
    ItemContext,
    JudgedOutput,
    OutputSummary,
    default_item_context,
    text_of,
    trace_calls,
)
from benchmarks.kit.protocol import Item
from benchmarks.suites.wtueval.evaluate import FINISH

__all__ = ["item_context"]


def _offered(output: JudgedOutput) -> tuple[str, ...]:
    tools = output.context.get("tools") if output.context else None
    if tools is None and output.trace and isinstance(output.trace[0], Mapping):
        tools = output.trace[0].get("tools")
    return tuple(str(t) for t in tools) if isinstance(tools, list) else ()


def _options(given: Mapping[str, Any]) -> str:
    options = given.get("options")
    if isinstance(options, Mapping):
        return "; ".join(f"{k}: {v}" for k, v in options.items())
    if isinstance(options, list):
        return "; ".join(f"{i}: {v}" for i, v in enumerate(options, start=1))
    return ""


def _side(output: JudgedOutput) -> OutputSummary:
    offered = _offered(output)
    steps = [s for s in output.trace if isinstance(s, Mapping)]
    answer = text_of(output.answer) if output.answer not in (None, "") else "none"
    if not offered and not steps:
        decision = "answers without a tool (none offered)"
        return OutputSummary(facts=(("Decision", decision), ("Answer", answer)))
    calls = trace_calls(steps, skip=(FINISH,))
    first = steps[0].get("action") if steps else None
    if not first:
        decision = "neither calls a tool nor answers at first"
    elif first == FINISH:
        decision = "answers directly, no tool call"
    else:
        decision = f"calls a tool first ({first})"
    stop = steps[-1].get("stop") if steps else None
    facts = [("Decision", decision), ("Answer", answer)]
    if stop:
        facts.append(("Stopped", str(stop).replace("_", " ")))
    return OutputSummary(facts=tuple(facts), calls=calls)


def item_context(item: Item, show_gold: bool, outputs: Sequence[JudgedOutput]) -> ItemContext:
    base = default_item_context(item, show_gold)
    given = item.input if isinstance(item.input, Mapping) else {}
    query = text_of(base.query)
    if _options(given):
        query = f"{query}\nOptions: {_options(given)}"
    offered = tuple(dict.fromkeys(name for o in outputs for name in _offered(o)))
    gold_view = None
    if show_gold and isinstance(item.reference, Mapping):
        needs = "yes (a tool dataset)" if item.reference.get("kind") == "tool" else "no"
        gold_view = OutputSummary(
            facts=(("Gold answer", text_of(item.reference.get("answer"))), ("Needs a tool", needs))
        )
    return ItemContext(
        query=query,
        candidates=offered,
        gold=base.gold,
        gold_view=gold_view,
        sides=tuple(_side(output) for output in outputs),
    )
