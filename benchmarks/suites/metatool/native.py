"""MetaTool's tools for native tool calling. Pure Python.

MetaTool's tools are ChatGPT plugins known only by a name and a description (plugin_des.json,
big_tool_des.json): no parameters are published, and every task scores which tool the model
chooses (or whether it chooses one), never arguments. So each tool is declared with no
parameters (an empty object schema). A free-text argument was the other choice; it would invite
the model to write text no metric reads and give it one more way to fail the call's format.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchmarks.kit.native import ToolDeclarations, declare
from benchmarks.kit.protocol import ToolSpec

__all__ = ["declare_tools"]

NO_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


def _document(spec: ToolSpec) -> tuple[str, Any]:
    return spec.description or "", NO_PARAMETERS


def declare_tools(tools: Sequence[ToolSpec]) -> ToolDeclarations:
    """The candidate tools as function tools without parameters (see the module docstring)."""
    return declare(tools, _document)
