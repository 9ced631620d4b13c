"""UltraTool's gold as an expert refines it (a registry.GoldEditing): a plan, a tree of steps
("plan", and "steps" flat), with the task golds keyed by step number that follow their step when
the plan is renumbered, and the planning gold (the plan as text) that follows the plan. Pure
Python."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from benchmarks.kit.registry import GoldEditing
from benchmarks.suites.ultratool.published import rewrite_plan_text

# Task golds keyed by step number ({"step": "1.2", ...}); "planning" (the plan as text) is
# rewritten on its own by the plan editor.
STEP_KEYED_GOLDS = (
    "tool_usage_awareness",
    "tool_creation_awareness",
    "tool_selection",
    "tool_usage",
    "tool_creation",
)


# A placeholder for an earlier step's output: <obtained flight number>.
_PLACEHOLDER = re.compile(r"^<[^<>]+>$")


def is_placeholder(text: str, tools: Collection[str] | None) -> bool:
    return bool(_PLACEHOLDER.match(text))


def is_plan(reference: Any) -> bool:
    return isinstance(reference, Mapping) and (
        isinstance(reference.get("plan"), list) or isinstance(reference.get("steps"), list)
    )


def follow_plan(
    reference: dict[str, Any],
    old: Sequence[tuple[str, str]],
    new: Sequence[tuple[int | None, tuple[str, str]]],
) -> None:
    """ "planning" (the plan as text) follows an edited plan when it was the old plan's text
    (whatever the full stop after a step number and the whitespace): the lines of unchanged
    steps as written, the others rewritten in their own style (published.rewrite_plan_text); it
    is kept as it is otherwise."""
    planning = reference.get("planning")
    if isinstance(planning, str):
        rewritten = rewrite_plan_text(planning, old, new)
        if rewritten is not None:
            reference["planning"] = rewritten


GOLD = GoldEditing(
    shape="plan",
    recognizes=is_plan,
    step_keyed=STEP_KEYED_GOLDS,
    output_reference=is_placeholder,
    follow_plan=follow_plan,
)
