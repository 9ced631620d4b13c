"""What a judge of MTU-Bench outputs needs (the suite's item_context capability): the dialogue
so far (earlier calls and results included), the tools the sample offers, each output's parsed
calls for the turn, and the gold calls only when the campaign shows them."""

from __future__ import annotations

from collections.abc import Sequence

from benchmarks.kit.context import (
    ItemContext,
    JudgedOutput,
    OutputSummary,
    ShownCall,
    answer_calls,
    default_item_context,
)
from benchmarks.kit.protocol import Item

__all__ = ["item_context"]


def _turn_label(item: Item) -> str:
    turn = item.metadata.get("turn") if isinstance(item.metadata, dict) else None
    return f"turn {turn + 1}" if isinstance(turn, int) else ""


def _labelled(calls: tuple[ShownCall, ...] | None, label: str) -> tuple[ShownCall, ...] | None:
    if calls is None:
        return None
    return tuple(ShownCall(c.name, c.arguments, c.label or label) for c in calls)


def _side(item: Item, output: JudgedOutput) -> OutputSummary:
    # MTU-Eval reads every text as an answer; an unreadable one is no call (the note says so).
    calls = answer_calls(output.answer) if output.answer is not None else None
    return OutputSummary(calls=_labelled(calls, _turn_label(item)))


def item_context(item: Item, show_gold: bool, outputs: Sequence[JudgedOutput]) -> ItemContext:
    base = default_item_context(item, show_gold)
    gold_view = None
    if show_gold and isinstance(item.reference, dict):
        gold_calls = answer_calls(item.reference)
        gold_view = OutputSummary(calls=_labelled(gold_calls, _turn_label(item)))
    return ItemContext(
        query=None if base.turns else base.query,
        turns=base.turns,
        candidates=base.candidates,
        gold=base.gold,
        gold_view=gold_view,
        sides=tuple(_side(item, output) for output in outputs),
    )
