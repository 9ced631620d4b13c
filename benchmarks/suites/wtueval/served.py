"""What the virtual API server serves to WTU-Eval runs (a registry.ServedTools): the web search
and Wikipedia tools of its tool pool, defined by us in served_tools.json (the paper publishes
none), answered by the server's simulator. Pure Python."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from benchmarks.kit.protocol import ToolSpec
from benchmarks.kit.registry import ServedApi, ServedTools

DEFINITIONS = Path(__file__).resolve().parent / "served_tools.json"


@cache
def _served() -> dict[str, ServedApi]:
    data = json.loads(DEFINITIONS.read_text())
    out = {}
    for entry in data["tools"]:
        spec = ToolSpec(
            name=entry["name"],
            description=entry["description"],
            parameters=entry["parameters"],
            category=entry["category"],
            raw=entry,
        )
        out[entry["name"]] = ServedApi(spec, entry["category"], entry["tool"], entry["api"])
    return out


def served_apis(tools: Mapping[str, ToolSpec]) -> dict[str, ServedApi]:
    """The search tools, whatever the benchmark's own tools are (it has none to serve)."""
    return dict(_served())


SERVED_TOOLS = ServedTools(apis=served_apis)
