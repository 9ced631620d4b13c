"""A generic sample's gold as an expert refines it (a registry.GoldEditing): the expected calls
("tool_calls"); its "answer", the expected final answer, is not touched. Pure Python."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchmarks.kit.registry import GoldEditing


def has_tool_calls(reference: Any) -> bool:
    return isinstance(reference, Mapping) and "tool_calls" in reference


GOLD = GoldEditing(shape="calls", recognizes=has_tool_calls, calls_key="tool_calls")
