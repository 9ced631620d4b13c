"""What a judge of UltraTool outputs needs (the suite's item_context capability): the query, the
tool list the task offered, each output's plan or tool steps as the task's answer reads (steps
of a plan, a step's tool and its call, a step's yes/no), and the gold plan only when the campaign
shows it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.kit.context import (
    ItemContext,
    JudgedOutput,
    OutputSummary,
    ShownCall,
    default_item_context,
    text_of,
    unread,
)
from benchmarks.kit.protocol import Item

__all__ = ["item_context"]

_AWARENESS_KEYS = ("needs_tool", "needs_new_tool", "value")


def _offered(item: Item, task: str) -> tuple[str, ...]:
    toolsets = item.input.get("toolsets") if isinstance(item.input, Mapping) else None
    if isinstance(toolsets, Mapping) and isinstance(toolsets.get(task), list):
        return tuple(str(t) for t in toolsets[task])
    return tuple(item.candidate_tools or ())


def _entries(answer: Any) -> list[Mapping[str, Any]]:
    return [e for e in answer if isinstance(e, Mapping)] if isinstance(answer, list) else []


def _summary(answer: Any) -> OutputSummary:
    """A parsed answer of any task (or a gold of that shape) as a judge reads it."""
    if isinstance(answer, Mapping) and isinstance(answer.get("steps"), list):  # planning
        steps = tuple(
            (str(s.get("step", "")), text_of(s.get("text")))
            for s in answer["steps"]
            if isinstance(s, Mapping)
        )
        return OutputSummary(steps=steps)
    entries = _entries(answer)
    if entries and any(k in e for e in entries for k in _AWARENESS_KEYS):
        facts = tuple(
            (f"Step {e.get('step', '?')}", "needs a tool" if _flag(e) else "no tool")
            for e in entries
        )
        return OutputSummary(facts=facts)
    calls = []
    for entry in entries:
        tool = entry.get("tool")
        label = f"step {entry.get('step')}" if entry.get("step") not in (None, "") else ""
        if isinstance(tool, Mapping):  # tool creation: the tool created
            calls.append(ShownCall(str(tool.get("name", "")), tool.get("arguments"), label))
        elif isinstance(tool, str) and tool:
            calls.append(ShownCall(tool, entry.get("arguments", entry.get("param")), label))
    return OutputSummary(calls=tuple(calls))


def _flag(entry: Mapping[str, Any]) -> bool:
    value = next((entry[k] for k in _AWARENESS_KEYS if k in entry), 0)
    return str(value).strip().lower() in ("1", "true", "yes")


def _gold(reference: Any, task: str) -> OutputSummary | None:
    if not isinstance(reference, Mapping):
        return None
    if task and task != "planning" and task in reference:
        return _summary(reference[task])
    steps = reference.get("steps")
    if not isinstance(steps, list):
        return None
    rows = tuple(
        (str(s.get("step", "")), text_of(s.get("text"))) for s in steps if isinstance(s, Mapping)
    )
    calls = tuple(
        ShownCall(str(s["tool"]), s.get("arguments"), f"step {s.get('step', '')}")
        for s in steps
        if isinstance(s, Mapping) and isinstance(s.get("tool"), str) and s.get("tool")
    )
    return OutputSummary(steps=rows, calls=calls or None)


def _side(output: JudgedOutput) -> OutputSummary:
    if unread(output) or output.answer is None:
        return OutputSummary(facts=(("Answer", "not read from the text (below)"),))
    return _summary(output.answer)


def item_context(item: Item, show_gold: bool, outputs: Sequence[JudgedOutput]) -> ItemContext:
    base = default_item_context(item, show_gold)
    task = outputs[0].task if outputs else ""
    return ItemContext(
        query=base.query,
        candidates=_offered(item, task),
        gold=base.gold,
        gold_view=_gold(item.reference, task) if show_gold else None,
        sides=tuple(_side(output) for output in outputs),
    )
