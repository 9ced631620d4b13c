"""What a judge of MetaTool outputs needs (the suite's item_context capability): the query, the
candidate tools the run offered (its prepared list: a run draws its own candidates), each
output's parsed decision or pick, and the gold only when the campaign shows it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.kit.context import (
    ItemContext,
    JudgedOutput,
    OutputSummary,
    default_item_context,
    text_of,
    unread,
)
from benchmarks.kit.protocol import Item

__all__ = ["item_context"]


def _offered(item: Item, output: JudgedOutput) -> tuple[str, ...]:
    candidates = output.context.get("candidates") if output.context else None
    if isinstance(candidates, list):
        return tuple(str(c) for c in candidates)
    return tuple(item.candidate_tools or ())


def _names(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) or "none of the candidates"
    return text_of(value)


def _side(item: Item, output: JudgedOutput, candidates: tuple[str, ...]) -> OutputSummary:
    offered = _offered(item, output)
    extra = offered if offered != candidates else ()
    facts: tuple[tuple[str, str], ...]
    if output.task == "awareness":
        if unread(output) or output.answer is None:
            facts = (("Uses a tool?", "not read from the text"),)
        else:
            facts = (("Uses a tool?", "yes" if output.answer else "no"),)
        return OutputSummary(facts=facts, offered=extra)
    if unread(output):
        named = _names(output.answer) if output.answer else "none"
        facts = (("Pick", "not read from the text"), ("Tools it names", named))
    elif output.answer is None:
        facts = (("Pick", "no answer"),)
    else:
        facts = (("Pick", _names(output.answer)),)
    return OutputSummary(facts=facts, offered=extra)


def _gold(reference: Any, candidates: tuple[str, ...]) -> OutputSummary | None:
    if not isinstance(reference, Mapping):
        return None
    if "needs_tool" in reference:
        return OutputSummary(facts=(("Needs a tool", "yes" if reference["needs_tool"] else "no"),))
    if isinstance(reference.get("tools"), list):
        return OutputSummary(facts=(("Gold tools", _names(reference["tools"])),))
    tool = reference.get("tool")
    if isinstance(tool, str) and tool:
        if candidates and tool not in candidates:
            # Reliability: the query's tool is withheld; the right answer is none.
            return OutputSummary(
                facts=(("Gold", f"none of the candidates (the query's tool, {tool}, is not one)"),)
            )
        return OutputSummary(facts=(("Gold tool", tool),))
    return None


def item_context(item: Item, show_gold: bool, outputs: Sequence[JudgedOutput]) -> ItemContext:
    base = default_item_context(item, show_gold)
    # The first output's list is the item's (both runs of a pair usually draw the same); a side
    # offered another list says so.
    candidates = _offered(item, outputs[0]) if outputs else base.candidates
    return ItemContext(
        query=base.query,
        candidates=candidates,
        gold=base.gold,
        gold_view=_gold(item.reference, candidates) if show_gold else None,
        sides=tuple(_side(item, output, candidates) for output in outputs),
    )
