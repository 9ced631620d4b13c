"""MTU-Bench's tools for native tool calling. Pure Python.

The importer stores each API's parameters as JSON Schema (its published types mapped, defaults,
enums, formats kept) and its result_parameters as `returns`. The text prompt shows the results
too, and S-M and M-M golds name an earlier call's output as "ToolName.field", so a model must
know the fields a tool returns: the declaration's description ends with them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.kit.native import ToolDeclarations, declare
from benchmarks.kit.protocol import ToolSpec

__all__ = ["declare_tools"]


def _document(spec: ToolSpec) -> tuple[str, Any]:
    description = (spec.description or "").strip()
    returns = spec.returns.get("properties") if isinstance(spec.returns, Mapping) else None
    if isinstance(returns, Mapping) and returns:
        fields = ", ".join(str(name) for name in returns)
        description = f"{description}\nReturns: {fields}".strip()
    return description, spec.parameters


def declare_tools(tools: Sequence[ToolSpec]) -> ToolDeclarations:
    """The sample's APIs as function tools, their result fields named in the description."""
    return declare(tools, _document)
