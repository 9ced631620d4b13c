"""The description-rewriting experiment of a suite that declares one (Suite.rewriting; MetaTool's,
papers/000 section 4.3, Figure 6): an endpoint rewrites every tool description into a new
revision of the benchmark's tools, a launched run is repeated on that revision (the same items
and candidate lists, through the normal run lifecycle), and the change of its success rate is
reported overall and per tool.

The rewriting calls go through the platform's caller (evaluation.work.caller): the endpoint's
shared concurrency slots and rate limit, its retries, and the response cache (so asking again
is free and gives the same text), under an optional budget in the endpoint's unit.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Max

from benchmarks.kit.protocol import CallFailed
from benchmarks.kit.registry import get_suite
from benchmarks.kit.rewriting import Change, DescriptionRewriting, description_change
from benchmarks.models import Benchmark, RevisedTool, Tool, ToolRevision
from config.errors import ApplicationError
from evaluation.models import Endpoint, Prediction, ResponseCache, Run
from evaluation.selectors import items_by_sample_id, tool_specs
from evaluation.work.budget import Prices, Tokens, spent
from evaluation.work.caller import Caller, Origin, endpoint_client
from evaluation.work.engine import (
    ConfigurationError,
    endpoint_config,
    endpoint_slots,
    request_key,
)
from evaluation.work.limits import RateLimit

Progress = Callable[[int, int], None]


class RewritingError(ApplicationError):
    """The experiment cannot be done as asked; the message says why."""


def rewriting_of(benchmark: Benchmark) -> DescriptionRewriting:
    rewriting = get_suite(benchmark.suite).rewriting
    if rewriting is None:
        raise RewritingError(
            f"{benchmark.name}: its suite ({benchmark.suite}) declares no description-rewriting "
            "experiment",
            field="benchmark",
        )
    return rewriting


def rewriting_task_check(benchmark: Benchmark, task: str) -> None:
    """Refuse a task whose prompts show no tool description (repeating it would change
    nothing), naming the tasks that do."""
    rewriting = rewriting_of(benchmark)
    if task not in rewriting.tasks:
        raise RewritingError(
            f"{benchmark.name} task {task!r} shows no tool descriptions; the experiment "
            f"repeats one of: {', '.join(rewriting.tasks)}",
            field="task",
        )


class _Cache:
    """The response cache as the caller sees it here: read before the calls, written after
    (the calls run in an event loop that must not touch the ORM)."""

    def __init__(self, known: dict[str, Any]) -> None:
        self.known = known
        self.new: dict[str, ResponseCache] = {}

    async def get(self, key: str) -> dict[str, Any] | None:
        return self.known.get(key)

    def put(self, key: str, origin: Origin, request: dict[str, Any], reply: dict[str, Any]) -> None:
        self.new[key] = ResponseCache(
            key=key, model=origin.model, base_url=origin.base_url, request=request, response=reply
        )


def tool_descriptions_rewrite(
    *,
    benchmark: Benchmark,
    endpoint: Endpoint,
    model: str = "",
    budget: Decimal | None = None,
    user: Any = None,
    progress: Progress | None = None,
) -> ToolRevision:
    """Have `endpoint` (with `model`, default its own) rewrite the description of every tool of
    `benchmark` with its suite's prompt, and store the answers as the benchmark's next tool
    revision (the tools keep their imported descriptions). A tool whose answer holds no
    description keeps its own in the revision (the note counts them).

    progress(done, total) is called as answers arrive. Raises RewritingError when the suite has
    no such experiment, the benchmark has no tools, the endpoint is not ready or has no key
    here, `budget` (a cost at the endpoint's prices, else tokens) runs out, or a call fails
    after its retries; then nothing is stored (the answers received are in the response cache,
    so asking again costs only the rest)."""
    rewriting = rewriting_of(benchmark)
    if endpoint.status != Endpoint.Status.READY:
        raise RewritingError(
            f"endpoint {endpoint.name!r} is {endpoint.get_status_display().lower()}",
            field="endpoint",
        )
    if budget is not None and budget < 0:
        raise RewritingError("the budget cannot be negative", field="budget")
    specs = sorted(tool_specs(benchmark).values(), key=lambda spec: spec.name)
    if not specs:
        raise RewritingError(f"{benchmark.name} has no tools to rewrite", field="benchmark")
    try:
        config = endpoint_config(endpoint, model=model)
    except ConfigurationError as exc:
        raise RewritingError(str(exc), field="endpoint") from None
    prompts = [rewriting.prompt(spec) for spec in specs]
    keys = [request_key(prompt, config) for prompt in prompts]
    cache = _Cache(dict(ResponseCache.objects.filter(key__in=keys).values_list("key", "response")))
    texts, failure = asyncio.run(
        _ask(
            config,
            cache,
            prompts,
            [spec.name for spec in specs],
            Prices.of(endpoint),
            budget,
            progress,
        )
    )
    # What was answered is kept, whatever happens next.
    ResponseCache.objects.bulk_create(cache.new.values(), ignore_conflicts=True)
    if failure:
        raise RewritingError(failure, field="endpoint" if "budget" not in failure else "budget")
    written = {spec.name: rewriting.read(text) for spec, text in zip(specs, texts, strict=True)}
    kept = sorted(name for name, text in written.items() if not text)
    note = (
        f"{len(specs)} tool descriptions rewritten by endpoint {endpoint.name!r}, model "
        f"{config.model!r}, with the prompt {rewriting.prompt_file or 'of the suite'}"
        + (
            f"; {len(kept)} answers held no description and keep the original: "
            + ", ".join(kept[:20])
            + (" ..." if len(kept) > 20 else "")
            if kept
            else ""
        )
    )
    tool_ids = dict(Tool.objects.filter(benchmark=benchmark).values_list("name", "id"))
    with transaction.atomic():
        # The benchmark row is the lock: two rewritings at once get numbers one after the other.
        Benchmark.objects.select_for_update().filter(pk=benchmark.pk).first()
        number = (
            ToolRevision.objects.filter(benchmark=benchmark).aggregate(n=Max("number"))["n"] or 0
        ) + 1
        revision = ToolRevision.objects.create(
            benchmark=benchmark,
            number=number,
            note=note,
            created_by=user if getattr(user, "is_authenticated", False) else None,
        )
        RevisedTool.objects.bulk_create(
            RevisedTool(revision=revision, tool_id=tool_ids[name], description=text)
            for name, text in written.items()
            if text and name in tool_ids
        )
    return revision


@dataclass
class _Asking:
    tokens: Tokens = field(default_factory=Tokens)
    done: int = 0
    failure: str = ""


async def _ask(
    config: Any,
    cache: _Cache,
    prompts: list[Any],
    names: list[str],
    prices: Prices | None,
    budget: Decimal | None,
    progress: Progress | None,
) -> tuple[list[str], str]:
    """Every prompt's answer text, at most the endpoint's concurrency at once (across processes:
    its slots), and the reason the work stopped ("" when it did not)."""
    # Here: the client libraries are seconds of start-up for every process that sets Django up.
    import redis.asyncio as aioredis

    redis_client = aioredis.Redis.from_url(settings.CELERY_BROKER_URL)
    client = endpoint_client(config)
    caller = Caller(
        config,
        client=client,
        cache=cache,
        slots=endpoint_slots(redis_client, config),
        rate=RateLimit(redis_client, config.id, config.requests_per_minute)
        if config.requests_per_minute
        else None,
        rng=random.Random(),
    )
    texts = [""] * len(prompts)
    state = _Asking()
    gate = asyncio.Semaphore(max(1, config.max_concurrency))

    async def one(index: int) -> None:
        async with gate:
            if state.failure:
                return
            if budget is not None and spent(state.tokens, prices) >= budget:
                state.failure = (
                    f"the budget {budget} was reached after {state.done} of {len(prompts)} "
                    "tools; nothing was stored (the answers are cached: a larger budget asks "
                    "only for the rest)"
                )
                return
            try:
                reply = await caller.call(prompts[index])
            except CallFailed as exc:
                state.failure = f"the rewriting of tool {names[index]!r} failed: {exc}"
                return
            texts[index] = reply.text
            if not reply.cached:
                state.tokens = state.tokens + Tokens.of_usage(reply.usage)
            state.done += 1
            if progress is not None:
                progress(state.done, len(prompts))

    try:
        await asyncio.gather(*(one(i) for i in range(len(prompts))))
    finally:
        await client.close()
        await redis_client.aclose()
    return texts, state.failure


# --- the report ---------------------------------------------------------------------------------


def rewrite_report(run: Run) -> dict[str, Any] | None:
    """The experiment's result for a run repeated on a tool revision (Run.rerun_of): the metric
    before (the run it repeats) and after, overall and per credited tool, with the change in
    points and in percent of before. None for a run that is not such a rerun, or whose suite
    has no experiment."""
    base = run.rerun_of
    if base is None or run.tool_revision_id is None:
        return None
    rewriting = get_suite(run.benchmark.suite).rewriting
    if rewriting is None:
        return None
    total, tools = description_change(_credited(base, rewriting), _credited(run, rewriting))
    revision = run.tool_revision
    assert revision is not None
    return {
        "run": run.pk,
        "before_run": base.pk,
        "tool_revision": revision.number,
        "note": revision.note,
        "metric": rewriting.metric,
        "overall": total.row(),
        "tools": [change.row() for change in tools],
    }


def _credited(run: Run, rewriting: DescriptionRewriting) -> list[tuple[tuple[str, ...], Any]]:
    rows = list(
        Prediction.objects.filter(run=run, repeat=0)
        .exclude(status__in=[Prediction.Status.PENDING, Prediction.Status.RUNNING])
        .values_list("sample_id", "scores")
    )
    items = items_by_sample_id(sample_id for sample_id, _ in rows)
    options = run.launch_options
    found = []
    for sample_id, scores in rows:
        scores = scores or {}
        value = scores.get(rewriting.score)
        counted = value is not None and rewriting.counted(scores, options)
        found.append((tuple(rewriting.credited(items[sample_id])), value if counted else None))
    return found


def change_rows(report: dict[str, Any]) -> list[Change]:
    """The report's rows as Change objects (overall first), for pages and commands."""
    rows = [report["overall"], *report["tools"]]
    return [Change(r["group"], r["n_before"], r["n_after"], r["before"], r["after"]) for r in rows]
