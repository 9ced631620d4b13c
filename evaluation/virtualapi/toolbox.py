"""The tools an agent run calls, served by the virtual API server: a StableToolBench query's
api_list (each benchmark tool whose published entry names its category, tool and API), and the
platform's own search tools for WTU-Eval (builtin_tools.json). Each call returns the server's
JSON answer, {"error", "response", "source"}: the agent's observation, and its provenance in
the trace."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from benchmarks.suites.protocol import Tool, ToolSpec, ToolUnavailable
from benchmarks.suites.stabletoolbench.importer import cache_path
from evaluation.virtualapi.keys import ApiName
from evaluation.virtualapi.server import Call, Steps, serve

BUILTIN = Path(__file__).resolve().parent / "builtin_tools.json"


@cache
def builtin_tools() -> dict[str, tuple[ToolSpec, ApiName]]:
    data = json.loads(BUILTIN.read_text())
    out = {}
    for entry in data["tools"]:
        spec = ToolSpec(
            name=entry["name"],
            description=entry["description"],
            parameters=entry["parameters"],
            category=entry["category"],
            raw=entry,
        )
        out[entry["name"]] = (
            spec,
            ApiName.from_folders(entry["category"], entry["tool"], entry["api"]),
        )
    return out


def api_of(spec: ToolSpec) -> ApiName | None:
    """Where the server keeps a benchmark tool's responses (its published StableToolBench
    entry); None for a tool the server cannot serve."""
    raw = spec.raw
    if not isinstance(raw, dict) or not {"category_name", "tool_name", "api_name"} <= set(raw):
        return None
    category, tool, api = cache_path(raw).parts
    return ApiName(category, tool, api.removesuffix(".json"))


def documentation_of(spec: ToolSpec) -> dict[str, Any]:
    """What the simulator and Turing annotators read about an API: the published entry (or our
    definition) without the cache-layout names."""
    raw = spec.raw if isinstance(spec.raw, dict) else {}
    doc = {k: v for k, v in raw.items() if k not in ("category", "tool", "api")}
    doc.setdefault("name", spec.name)
    doc.setdefault("description", spec.description)
    return doc


class VirtualToolbox(Mapping[str, Tool]):
    """Tools by name, made when asked for (a benchmark has thousands; a query offers a few).
    Without steps it only names them (a launch stores the pool offered; the engine's toolbox
    calls them)."""

    def __init__(
        self,
        specs: Mapping[str, tuple[ToolSpec, ApiName]],
        steps: Steps | None,
        *,
        run_id: int | None = None,
        down: Mapping[str, str] | None = None,
    ) -> None:
        self.specs = specs
        self.steps = steps
        self.run_id = run_id
        self.down = down or {}

    def __getitem__(self, name: str) -> Tool:
        spec, api = self.specs[name]
        documentation = documentation_of(spec)

        async def call(arguments: dict[str, Any]) -> str:
            if self.steps is None:
                raise ToolUnavailable("the virtual API server is not connected here")
            served = await serve(
                Call(api, dict(arguments), self.run_id, self.down.get(name, "")),
                self.steps,
                documentation=documentation,
            )
            return served.observation()

        return Tool(spec=spec, call=call)

    def __iter__(self) -> Iterator[str]:
        return iter(self.specs)

    def __len__(self) -> int:
        return len(self.specs)


def served_specs(suite: str, tools: Mapping[str, ToolSpec]) -> dict[str, tuple[ToolSpec, ApiName]]:
    """The tools the server serves to a run of this suite: StableToolBench's own, WTU-Eval's
    search tools; none for other suites."""
    if suite == "stabletoolbench":
        out = {}
        for name, spec in tools.items():
            api = api_of(spec)
            if api is not None:
                out[name] = (spec, api)
        return out
    if suite == "wtueval":
        return dict(builtin_tools())
    return {}
