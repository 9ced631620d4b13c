"""StableToolBench's tools for native tool calling. Pure Python.

Each tool is one RapidAPI endpoint, published with `required_parameters` and
`optional_parameters` lists of {name, type, description, default} (the Tool's raw). The
declaration reads those: parameter names standardized as ToolBench does (the names its server
and the text agent use), RapidAPI types mapped to JSON Schema by the importer's own table
(importer.PARAM_TYPES: STRING, NUMBER, INTEGER, BOOLEAN, OBJECT, ARRAY, ENUM as a string; DATE
and BINARY as strings with a format); a type it does not list (TIME, anything else) gives no type
constraint, where the importer's text schema assumes a string. A published default becomes an
example, as it is one, not what the API assumes.
A tool without a published entry falls back on its stored parameters.

Names: the tool keys are `<category>/<api>_for_<tool>`; the model sees ToolBench's function
name `<api>_for_<tool>` (qualified with the category where two offered tools share it, as the
text agent's `shown_names` does), then cut to the API's pattern and length.

`finish_tool()` is ToolBench's `Finish` as a function for a native agent loop: return_type
"give_answer" with final_answer, or "give_up_and_restart", the arguments the text agent reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.kit.native import ToolDeclarations, declare
from benchmarks.kit.protocol import ToolSpec
from benchmarks.suites.stabletoolbench.agent import GIVE_ANSWER
from benchmarks.suites.stabletoolbench.evaluate import FINISH, GIVE_UP
from benchmarks.suites.stabletoolbench.importer import (
    PARAM_TYPES,
    change_name,
    shown_names,
    standardize,
)

__all__ = ["declare_tools", "finish_tool", "rapidapi_parameters"]


def rapidapi_parameters(api: Mapping[str, Any]) -> dict[str, Any] | None:
    """The JSON Schema of a published API's parameters; None when `api` lists none of them
    in the published shape."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    seen = False
    for key in ("required_parameters", "optional_parameters"):
        params = api.get(key)
        if not isinstance(params, list):
            continue
        seen = True
        for param in params:
            if not isinstance(param, Mapping) or not isinstance(param.get("name"), str):
                continue
            published = param["name"]
            name = change_name(standardize(published)) or published
            if name in properties:
                continue
            kind = param.get("type")
            schema: dict[str, Any] = dict(
                PARAM_TYPES.get(kind.strip().upper(), {}) if isinstance(kind, str) else {}
            )
            description = param.get("description")
            if isinstance(description, str) and description.strip():
                schema["description"] = description.strip()
            example = param.get("default")
            if example is not None and example != "":
                schema["examples"] = [example]
            properties[name] = schema
            if key == "required_parameters":
                required.append(name)
    if not seen:
        return None
    return {"type": "object", "properties": properties, "required": required}


def _document(spec: ToolSpec) -> tuple[str, Any]:
    raw = spec.raw if isinstance(spec.raw, Mapping) else {}
    parameters = rapidapi_parameters(raw)
    return spec.description or "", spec.parameters if parameters is None else parameters


def declare_tools(tools: Sequence[ToolSpec]) -> ToolDeclarations:
    """The query's APIs as function tools under ToolBench's function names."""
    return declare(tools, _document, preferred=shown_names([tool.name for tool in tools]))


def finish_tool() -> ToolSpec:
    """Finish as a tool to declare beside the query's APIs (see the module docstring)."""
    return ToolSpec(
        name=FINISH,
        description=(
            "Call this last: give the final answer to the user's request, or give up when the "
            "tools cannot provide what is needed. Only the final answer is shown to the user, "
            "so it must be complete."
        ),
        parameters={
            "type": "object",
            "properties": {
                "return_type": {
                    "type": "string",
                    "enum": [GIVE_ANSWER, GIVE_UP],
                    "description": f"{GIVE_ANSWER} to answer, {GIVE_UP} to give up.",
                },
                "final_answer": {
                    "type": "string",
                    "description": f"The complete answer for the user (with {GIVE_ANSWER}).",
                },
            },
            "required": ["return_type"],
        },
        category="local",
    )
