"""The tools an agent run calls, served by the virtual API server: those the run's suite says it
serves (registry.ServedTools: a benchmark's own tools kept in the server's cache layout, or
tools the suite defines). Each call returns the server's JSON answer, {"error", "response",
"source"}: the agent's observation, and its provenance in the trace."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from benchmarks.kit.protocol import Tool, ToolSpec, ToolUnavailable
from benchmarks.kit.registry import ServedApi, cache_protocol, get_suite
from evaluation.virtualapi.keys import ApiName
from evaluation.virtualapi.server import Call, Steps, serve


def api_name(served: ServedApi) -> ApiName:
    return ApiName.from_folders(served.category, served.tool, served.api)


def api_of(spec: ToolSpec) -> ApiName | None:
    """Where the server keeps a benchmark tool's responses, for a tool of the suite whose
    published server it stands in for (registry.cache_protocol); None for a tool the server
    cannot serve."""
    served = cache_protocol().apis({spec.name: spec}).get(spec.name)
    return api_name(served) if served is not None else None


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


def served_specs(
    suite: str, tools: Mapping[str, ToolSpec], task: str = ""
) -> dict[str, tuple[ToolSpec, ApiName]]:
    """The tools the server serves to a run of this suite's `task` ("": any), as the suite's
    served tools say (registry.ServedTools); none for a suite without, or a task they do not
    serve."""
    served = get_suite(suite).served_tools
    if served is None or (task and not served.serves(task)):
        return {}
    return {name: (api.spec, api_name(api)) for name, api in served.apis(tools).items()}
