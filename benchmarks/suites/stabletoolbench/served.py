"""What the virtual API server serves to StableToolBench runs (a registry.ServedTools): each
benchmark tool whose published entry names its category, tool and API, kept where the
published server keeps its responses; the names its clients send, standardised as that server
does; and its response caches as published. Pure Python."""

from __future__ import annotations

from collections.abc import Mapping

from benchmarks.kit.protocol import ToolSpec
from benchmarks.kit.registry import ServedApi, ServedTools
from benchmarks.suites.stabletoolbench.importer import (
    cache_path,
    change_name,
    key_parts,
    load_response_cache,
    standard_category,
    standardize,
)

_API_KEYS = {"category_name", "tool_name", "api_name"}


def served_apis(tools: Mapping[str, ToolSpec]) -> dict[str, ServedApi]:
    """The tools whose published entry (raw) says where the server keeps their responses; the
    function is ToolBench's `<api>_for_<tool>` (the tool key without its category)."""
    out = {}
    for name, spec in tools.items():
        raw = spec.raw
        if not isinstance(raw, dict) or not set(raw) >= _API_KEYS:
            continue
        category, tool, api = cache_path(raw).parts
        out[name] = ServedApi(
            spec, category, tool, api.removesuffix(".json"), function=key_parts(name)[1]
        )
    return out


def request_api(category: str, tool_name: str, api_name: str) -> tuple[str, str, str]:
    """The (category, tool, api) folders a client's request names, as StableToolBench's server
    standardises them before looking in its cache."""
    folder_category = standard_category(category)
    tool = standardize(tool_name)
    suffix = f"_for_{folder_category}"
    # A client may send the folder's name already; standardize() lower-cased its suffix.
    if tool.endswith(suffix.lower()):
        tool = tool[: -len(suffix)]
    return folder_category, f"{tool}{suffix}", change_name(standardize(api_name))


SERVED_TOOLS = ServedTools(
    apis=served_apis,
    request_api=request_api,
    read_cache=load_response_cache,
    agent_task="pass_rate",
)
