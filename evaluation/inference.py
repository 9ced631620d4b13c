"""Answering a run's items: the suite's solve() and score() for each prediction, with agents'
tools served by the virtual API server; the engine (evaluation.work) claims, calls and writes."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from benchmarks.kit.base import jsonb_text
from benchmarks.kit.protocol import (
    CallFailed,
    Context,
    Evaluator,
    Item,
    Outcome,
    Prompt,
    tool_mode,
)
from evaluation.models import Prediction, Run
from evaluation.selectors import items_by_sample_id, run_context
from evaluation.virtualapi.server import NoCache, SimulatorUnavailable, simulator_endpoint
from evaluation.virtualapi.toolbox import VirtualToolbox, served_specs
from evaluation.work.caller import Caller, EndpointConfig
from evaluation.work.engine import (
    PROCESS_LOOP,
    ConfigurationError,
    DatabaseThread,
    ItemCalls,
    Row,
    endpoint_config,
    endpoint_slots,
    exhausted_error,
    request_key,
)
from evaluation.work.limits import Lane
from evaluation.work.locks import Claimed, WorkTable

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass
class Result:
    id: int
    status: str
    outcome: Outcome | None
    scores: dict[str, Any]
    error: str = ""
    latency_ms: int | None = None
    cached: bool = False
    usage: dict[str, Any] = field(default_factory=dict)
    prompt: Any = None

    def values(self) -> tuple[Any, ...]:
        """PREDICTIONS.written's values, then the row's id."""
        outcome = self.outcome
        return (
            self.status,
            outcome.output if outcome else "",
            jsonb_text(outcome.answer) if outcome else None,
            outcome.parsed if outcome else None,
            jsonb_text(outcome.trace if outcome else []),
            outcome.note if outcome else "",
            jsonb_text(self.scores),
            self.error,
            self.latency_ms,
            self.cached,
            jsonb_text(self.usage),
            jsonb_text(self.prompt),
            jsonb_text(outcome.tool_calls) if outcome else None,
            bool(outcome and outcome.leaked),
            self.id,
        )


PREDICTIONS = WorkTable(
    table="evaluation_prediction",
    parent="run_id",
    parent_table="evaluation_run",
    columns=("sample_id", "repeat", "context"),
    written=(
        ("status", "text"),
        ("output", "text"),
        ("answer", "jsonb"),
        ("parsed", "boolean"),
        ("trace", "jsonb"),
        ("note", "text"),
        ("scores", "jsonb"),
        ("error", "text"),
        ("latency_ms", "integer"),
        ("cached", "boolean"),
        ("usage", "jsonb"),
        ("prompt", "jsonb"),
        ("tool_calls", "jsonb"),
        ("leaked", "boolean"),
    ),
    json_columns=frozenset({"context"}),
)


class PredictionHandler:
    """A run's predictions: the suite's solve() and score() for each sample."""

    def __init__(
        self,
        run: Run,
        evaluator: Evaluator,
        ctx: Context,
        toolbox: ToolboxFactory | None = None,
    ) -> None:
        self.run = run
        self.evaluator = evaluator
        self.ctx = ctx
        self.items: dict[int, Item] = {}
        self.report = {"done": 0, "failed": 0}
        # Agent runs: the tools of one item, bound to the lane answering it (see EngineSteps).
        self.toolbox = toolbox
        self.native = tool_mode(ctx) == "native"

    def request(self, item: Item, context: dict[str, Any]) -> Prompt:
        """The item's first request: the text prompt, or the native one (tools declared)."""
        if self.native:
            return self.evaluator.native_prompt(item, self.ctx, context).prompt
        return self.evaluator.build_prompt(item, self.ctx, context)

    def seed(self, row: Claimed) -> int | None:
        """The seed the row's trial sends (Run.trial_seed)."""
        return self.run.trial_seed(int(row.data.get("repeat") or 0))

    async def load(self, rows: Sequence[Claimed], db: DatabaseThread) -> None:
        missing = [row.sample_id for row in rows if row.sample_id not in self.items]
        if missing:
            self.items.update(await db.run(items_by_sample_id, missing))

    def first_request_keys(self, rows: Sequence[Claimed], config: EndpointConfig) -> list[str]:
        if self.ctx.task.agent:
            return []  # agents ask as they go
        keys = []
        for row in rows:
            try:
                prompt = self.request(self.items[row.sample_id], row.context)
            except Exception:  # noqa: S112 - solve() meets the same error and records it
                continue
            keys.append(request_key(prompt, config, seed=self.seed(row)))
        return keys

    async def answer(self, row: Claimed, caller: Caller, lane: Lane | None) -> Row:
        item = self.items[row.sample_id]
        calls = ItemCalls(caller, lane, seed=self.seed(row))
        started = time.monotonic()
        evaluator, ctx = self.evaluator, self.ctx
        if self.toolbox is not None:
            ctx = replace(ctx, toolbox=self.toolbox(caller, lane))
        outcome: Outcome | None = None
        error = ""
        try:
            if self.native:
                # The suite's native request(s), tools declared; the answers' tool_calls read.
                outcome = await evaluator.native_solve(item, ctx, row.context, calls.reply)
            else:
                outcome = await evaluator.solve(item, ctx, row.context, calls)
        except CallFailed as exc:
            error = str(exc)
        except Exception as exc:  # a suite's bug must fail one item, loudly, not the chunk
            log.exception("solving %s of run %s failed", item.key, self.run.pk)
            error = f"{type(exc).__name__} while solving: {exc}"[:2000]
        try:
            scores = evaluator.score(outcome, item, ctx, row.context)
        except Exception as exc:
            log.exception("scoring %s of run %s failed", item.key, self.run.pk)
            scores = {}
            error = error or f"{type(exc).__name__} while scoring: {exc}"[:2000]
            outcome = None
        status = Prediction.Status.DONE if outcome is not None else Prediction.Status.FAILED
        self.report["done" if outcome is not None else "failed"] += 1
        replies = calls.replies
        return Result(
            id=row.id,
            status=status,
            outcome=outcome,
            scores=scores,
            error=error,
            latency_ms=int((time.monotonic() - started) * 1000),
            cached=bool(replies) and all(r.cached for r in replies),
            usage=calls.usage(),
            prompt=calls.prompt,
        )

    def exhausted(self, row: Claimed) -> Row:
        item = self.items[row.sample_id]
        self.report["failed"] += 1
        error = exhausted_error(row)
        try:
            scores = self.evaluator.score(None, item, self.ctx, row.context)
        except Exception as exc:  # as in answer(): the item fails with the reason, not the chunk
            log.exception("scoring %s of run %s failed", item.key, self.run.pk)
            scores, error = {}, f"{error}; {type(exc).__name__} while scoring: {exc}"[:2000]
        return Result(
            id=row.id, status=Prediction.Status.FAILED, outcome=None, scores=scores, error=error
        )


def prediction_handler(run: Run) -> PredictionHandler:
    """The handler of a run's chunk: its suite and context, and agents' tools when it has any."""
    evaluator, ctx = run_context(run)
    toolbox = agent_toolbox(run, evaluator, ctx) if ctx.task.agent else None
    return PredictionHandler(run, evaluator, ctx, toolbox)


# --- agents' tools: the virtual API server ------------------------------------------------------

ToolboxFactory = Callable[[Caller, "Lane | None"], Any]


class EngineSteps:
    """The virtual API server inside a chunk execution: its queries on the execution's database
    thread, the simulator through a Caller of its endpoint. When the simulator is the run's own
    endpoint, its requests go on the lane of the item being answered (the lane already holds
    that endpoint's slot: asking for another would wait on itself with one slot)."""

    def __init__(self, caller: Caller | None, lane: Lane | None, model: str, completion: bool):
        self.caller = caller
        self.lane = lane
        self.simulator_name = model
        self.completion = completion

    async def db(self, fn: Callable[..., T], *args: Any) -> T:
        return await PROCESS_LOOP.database().run(fn, *args)

    async def simulate(self, prompt: Prompt) -> str:
        if self.caller is None:
            raise SimulatorUnavailable("VIRTUAL_API_SIMULATOR names no endpoint")
        reply = await self.caller.call(prompt, self.lane)
        return reply.text


def agent_toolbox(run: Run, evaluator: Evaluator, ctx: Context) -> ToolboxFactory | None:
    """For an agent run whose suite uses the virtual API server, a factory of each item's
    toolbox; None otherwise. Options: down_tools (names made unavailable) and down_mode
    ("simulate", the default: answered by the simulator at once; or "fail")."""
    specs = served_specs(evaluator.name, ctx.tools, ctx.task.name)
    if not specs:
        return None
    mode = str(ctx.option("down_mode") or "simulate")
    down = {str(name): mode for name in ctx.option("down_tools") or []}
    endpoint = simulator_endpoint()
    config = None
    if endpoint is not None:
        try:
            config = endpoint_config(endpoint)
        except ConfigurationError:
            log.warning("the simulator endpoint %s has no key here: tools fail", endpoint.name)
    same_endpoint = config is not None and config.id == (run.endpoint_id or -1)

    def make(caller: Caller, lane: Lane | None) -> VirtualToolbox:
        simulator = None
        if config is not None:
            redis_client = PROCESS_LOOP.redis_client()
            simulator = Caller(
                config,
                client=PROCESS_LOOP.openai_client(config),
                cache=NoCache(),
                slots=None if same_endpoint else endpoint_slots(redis_client, config),
                rate=None,
            )
        steps = EngineSteps(
            simulator,
            lane if same_endpoint else None,
            config.model if config else "",
            bool(config and config.api.prompt_form == "completion"),
        )
        return VirtualToolbox(specs, steps, run_id=run.pk, down=down)

    return make
