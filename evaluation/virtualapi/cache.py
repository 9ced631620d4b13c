"""Filling the virtual API server: a response cache imported as published (in the layout of the
suite whose server it stands in for, registry.cache_protocol), and the documentation of a
benchmark's APIs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.db import transaction

from benchmarks.kit.base import jsonb_text, shown
from benchmarks.kit.protocol import ToolSpec
from benchmarks.kit.registry import cache_protocol, get_suite
from benchmarks.models import Benchmark
from evaluation.models import ApiResponse, VirtualApi
from evaluation.virtualapi.keys import ApiName, call_key, canonical
from evaluation.virtualapi.server import responses_insert
from evaluation.virtualapi.toolbox import api_name, documentation_of

BATCH = 1000  # responses per INSERT round trip


def cache_import(
    root: Path,
    *,
    origin: str = ApiResponse.Origin.IMPORTED,
    progress: Callable[[int], Any] | None = None,
) -> dict[str, int]:
    """Every response of a cache folder (<Category>/<tool>/<api>.json), served as it is stored.
    All or nothing: the whole folder is read and checked first (ImportFormatError names the
    file, line and key of the first problem). Arguments equal in canonical form (another key
    order, 10 as 10.0) are one call: the first stored wins, as does a response already in the
    cache. Returns counts: entries read, responses added, already there."""
    if origin not in ApiResponse.Origin.values:
        raise ValueError(f"origin must be one of {', '.join(ApiResponse.Origin.values)}")
    read_cache = cache_protocol().read_cache
    assert read_cache is not None  # cache_protocol() is a suite that serves a cache
    entries = list(read_cache(Path(root)))
    rows: dict[tuple[ApiName, str], Any] = {}
    for entry in entries:
        name = ApiName.from_folders(entry.category, entry.tool, entry.api)
        rows.setdefault((name, call_key(entry.arguments)), entry)
    added = 0
    with transaction.atomic():
        names = {name for name, _key in rows}
        VirtualApi.objects.bulk_create(
            [VirtualApi(category=n.category, tool=n.tool, api=n.api) for n in names],
            ignore_conflicts=True,
            batch_size=BATCH,
        )
        apis = {}
        known = VirtualApi.objects.filter(tool__in={n.tool for n in names})
        for pk, category, tool, api in known.values_list("pk", "category", "tool", "api"):
            if (name := ApiName(category, tool, api)) in names:
                apis[name] = pk
        values = [
            (
                apis[name],
                key,
                jsonb_text(canonical(entry.arguments)),
                entry.raw_key,
                jsonb_text(entry.response),
                entry.error,
                origin,
                "",
                # The path may hold bytes that are not UTF-8 (above the cache folder too).
                shown(entry.source)[:500],
            )
            for (name, key), entry in rows.items()
        ]
        for start in range(0, len(values), BATCH):
            batch = values[start : start + BATCH]
            added += responses_insert(batch)
            if progress:
                progress(len(batch))
    return {"read": len(entries), "calls": len(rows), "added": added, "known": len(rows) - added}


def apis_from_benchmark(benchmark: Benchmark) -> int:
    """Record the documentation of the benchmark's APIs that the server serves (its suite's
    served tools; what the simulator and the Turing test show); returns how many APIs it
    names. An API is known by its (category, tool, api) as the server's cache names it; its
    `function` is the name the suite's prompts give it (StableToolBench: ToolBench's
    `<api>_for_<tool>`, the Tool's key without its category: two categories may share it)."""
    served_tools = get_suite(benchmark.suite).served_tools
    if served_tools is None:
        return 0
    specs = {
        tool.name: ToolSpec(name=tool.name, description=tool.description, raw=tool.raw)
        for tool in benchmark.tools.all()
    }
    served = served_tools.apis(specs)
    count = 0
    with transaction.atomic():
        for tool_name, spec in specs.items():
            if tool_name not in served:
                continue
            name = api_name(served[tool_name])
            function = served[tool_name].function
            api, created = VirtualApi.objects.get_or_create(
                category=name.category,
                tool=name.tool,
                api=name.api,
                defaults={"function": function, "documentation": documentation_of(spec)},
            )
            if not created and (not api.documentation or not api.function):
                api.documentation = api.documentation or documentation_of(spec)
                api.function = api.function or function
                api.save(update_fields=["documentation", "function"])
            count += 1
    return count
