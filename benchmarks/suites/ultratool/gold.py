"""UltraTool's gold as an expert refines it (a registry.GoldEditing): a plan, a tree of steps
("plan", and "steps" flat), with the task golds keyed by step number that follow their step when
the plan is renumbered. Pure Python."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from benchmarks.suites.registry import GoldEditing

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


def is_plan(reference: Mapping[str, Any]) -> bool:
    return isinstance(reference.get("plan"), list) or isinstance(reference.get("steps"), list)


GOLD = GoldEditing(
    shape="plan",
    recognizes=is_plan,
    step_keyed=STEP_KEYED_GOLDS,
    output_reference=is_placeholder,
)
