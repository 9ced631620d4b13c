"""What a judge of StableToolBench outputs needs (the suite's item_context capability): the
query, the APIs the query offers, each output's final answer and a summary of its trace (the
calls it made, how many failed), and the relevant APIs only when the campaign shows the gold."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.kit.context import (
    ItemContext,
    JudgedOutput,
    OutputSummary,
    default_item_context,
    text_of,
    trace_calls,
    unread,
)
from benchmarks.kit.protocol import Item

__all__ = ["item_context"]


def _failed(observation: Any) -> bool:
    # The server's answers are {"error", "response"}; a non-empty error is a failed call.
    if isinstance(observation, str) and observation.lstrip().startswith("{"):
        try:
            observation = json.loads(observation)
        except ValueError:
            return False
    return isinstance(observation, Mapping) and bool(observation.get("error"))


def _side(output: JudgedOutput) -> OutputSummary:
    if unread(output):
        return OutputSummary(facts=(("Final answer", "not an answer object (its text below)"),))
    steps = [s for s in output.trace if isinstance(s, Mapping)]
    calls = trace_calls(steps)
    failed = sum(1 for s in steps if s.get("action") and _failed(s.get("observation")))
    apis = list(dict.fromkeys(c.name for c in calls))
    trace = f"{len(calls)} call{'s' if len(calls) != 1 else ''}"
    if apis:
        trace += f" to {', '.join(apis)}"
    if failed:
        trace += f"; {failed} answered with an error"
    answer = text_of(output.answer) if output.answer else "none (gave up or no answer)"
    return OutputSummary(
        facts=(("Final answer", answer), ("Trace", trace)),
        calls=calls,
        text=_without_method(output),
    )


def _without_method(output: JudgedOutput) -> str | None:
    """ToolBench's answer object without "method" (the text agent's ReAct@1, the native one's
    CoT@1: how it was run, not what it answered), as ToolBench's own preference judge reads
    it; None for a text that is no answer object (shown as it is)."""
    try:
        record = json.loads(output.text)
    except ValueError:
        return None
    if not isinstance(record, dict) or "method" not in record:
        return None
    return json.dumps({k: v for k, v in record.items() if k != "method"}, ensure_ascii=False)


def item_context(item: Item, show_gold: bool, outputs: Sequence[JudgedOutput]) -> ItemContext:
    base = default_item_context(item, show_gold)
    gold_view = None
    if show_gold and isinstance(item.reference, Mapping):
        relevant = item.reference.get("relevant_tools") or item.reference.get("relevant_apis")
        if isinstance(relevant, list):
            names = ", ".join(
                " / ".join(map(str, r)) if isinstance(r, list) else str(r) for r in relevant
            )
            gold_view = OutputSummary(facts=(("Relevant APIs", names or "none"),))
    return ItemContext(
        query=base.query,
        candidates=base.candidates,
        gold=base.gold,
        gold_view=gold_view,
        sides=tuple(_side(output) for output in outputs),
    )
