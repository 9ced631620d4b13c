"""WTU-Eval's tools for native tool calling. Pure Python.

The paper publishes no tool documents: ours (served_tools.json, the local calculator) carry
JSON Schema parameters, but a toolbox tool may come with a description only, or with a plain
mapping of parameter name -> description. The declaration gives such a tool what the text mode
reads from it: the description from the prompt templates when the tool has none, a plain
mapping's names as string parameters, and for a tool with no parameters at all one required
string `input` (the text mode passes a non-JSON Action Input to such a tool under that name).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.kit.native import ToolDeclarations, declare
from benchmarks.kit.protocol import ToolSpec
from benchmarks.suites.wtueval.evaluate import _parameters, _templates, _tool_key

__all__ = ["declare_tools"]

INPUT_ONLY: dict[str, Any] = {
    "type": "object",
    "properties": {"input": {"type": "string", "description": "The input for the tool."}},
    "required": ["input"],
}


def _document(spec: ToolSpec) -> tuple[str, Any]:
    fallback = {_tool_key(k): v for k, v in _templates()["tools"].items()}
    description = (spec.description or fallback.get(_tool_key(spec.name), "")).strip()
    properties, required = _parameters(spec)
    if not properties:
        return description, INPUT_ONLY
    schema_like = {
        name: value if isinstance(value, Mapping) else {"type": "string", "description": value}
        for name, value in properties.items()
    }
    return description, {"type": "object", "properties": schema_like, "required": required}


def declare_tools(tools: Sequence[ToolSpec]) -> ToolDeclarations:
    """The offered tools as function tools (see the module docstring)."""
    return declare(tools, _document)
