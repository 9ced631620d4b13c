"""The evaluation side of a suite: how a sample becomes a prompt, a model's text an answer, and
answers scores. Pure Python, no Django: the evaluation app drives it, tests call it directly.

A suite package (`benchmarks/suites/<name>/`) exposes, besides its importer:

    TASKS: dict[str, TaskSpec]                       the tasks it evaluates
    build_prompt(item, ctx, context) -> Prompt       the benchmark's own prompt for one item
    parse(text, item, ctx, context) -> Outcome       the benchmark's answer matching
    score(outcome, item, ctx, context) -> Scores     per-item metric values
    aggregate(scored, ctx) -> Scores                 run-level metrics (named as in METRICS.md)

and, where the default below does not fit:

    select(items, ctx) -> list[Item]                 which items a run of the task takes
    cluster(item, ctx) -> str                        the unit sampled by an item limit and
                                                     resampled by the bootstrap (a dialogue)
    prepare(items, ctx) -> list[dict]                per-item context fixed at launch (e.g. a
                                                     candidate tool list), stored with the item
    async solve(item, ctx, context, complete)        multi-step tasks (a ReAct loop); the default
                                                     asks once and parses
    read_predictions(task, path) -> Iterator[PublishedOutput]   outputs published elsewhere

`Evaluator(suite_module)` fills in the defaults, so the platform calls one interface.

Conventions:
- `context` is the JSON object `prepare` returned for the item ({} by default). It is stored
  with the prediction, so a rerun or an import of published outputs sees the same candidates.
- `score(None, ...)` is asked for an item whose model call failed for good (its error is kept
  by the platform): return the scores of a wrong answer, so failures count against the model.
- An answer that cannot be matched is an Outcome with parsed=False and the raw text kept; the
  task's "unparsed" option says whether it counts as wrong or is left out (and counted).
- Metric values are floats (None when undefined, e.g. precision with no positive prediction);
  percentages where the paper reports percentages (TaskSpec.percent names them).
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

Style = Literal["chat", "completion"]
Scores = dict[str, float | None]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A benchmark's tool as the suite sees it (a row of benchmarks.Tool)."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=dict)
    returns: dict[str, Any] = field(default_factory=dict)
    category: str = ""
    raw: Any = None


@dataclass(frozen=True, slots=True)
class Item:
    """One sample as the suite sees it at evaluation time (a row of benchmarks.Sample)."""

    split: str
    external_id: str
    input: dict[str, Any]
    reference: Any = None
    kind: str = "query"
    candidate_tools: tuple[str, ...] | list[str] = ()
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.split}/{self.external_id}"


@dataclass(frozen=True, slots=True)
class TaskSpec:
    name: str
    title: str
    # The splits a run of the task reads by default; () means the run must name one.
    splits: tuple[str, ...] = ()
    # Run-level metrics in display order; the first is the headline (leaderboards sort on it).
    metrics: tuple[str, ...] = ()
    # Of those, the ones reported as percentages (0-100).
    percent: frozenset[str] = frozenset()
    # Default options of a run of this task; a run's own options are merged over these.
    options: Mapping[str, Any] = field(default_factory=dict)
    # Multi-step (solve() calls the model several times and may call tools).
    agent: bool = False
    # Other splits the task reads whole (not as items), e.g. MetaTool's scenario lists; the
    # platform passes their items in Context.aux.
    aux_splits: tuple[str, ...] = ()
    description: str = ""


class ToolUnavailable(RuntimeError):
    """A tool an agent asked for is not served by this platform (yet)."""


@dataclass(frozen=True, slots=True)
class Tool:
    """An executable tool for agent tasks: a spec the model sees and an async call."""

    spec: ToolSpec
    call: Callable[[dict[str, Any]], Awaitable[str]]


@dataclass
class Context:
    """What every item of one run shares."""

    task: TaskSpec
    shots: int = 0
    style: Style = "chat"
    seed: int = 0
    options: dict[str, Any] = field(default_factory=dict)
    tools: Mapping[str, ToolSpec] = field(default_factory=dict)
    # Text embedder for tasks that build candidates by similarity: texts -> unit vectors.
    embed: Callable[[Sequence[str]], list[list[float]]] | None = None
    # Tools the platform serves to agents (e.g. the virtual API server's), by name.
    toolbox: Mapping[str, Tool] = field(default_factory=dict)
    # The items of TaskSpec.aux_splits, by split.
    aux: Mapping[str, Sequence[Item]] = field(default_factory=dict)
    # Every item the task selected for this run, before the item limit: the pool few-shot
    # examples may come from (a suite must never show an item its own answer).
    pool: Sequence[Item] = ()

    def option(self, name: str) -> Any:
        if name in self.options:
            return self.options[name]
        return self.task.options.get(name)


@dataclass
class Prompt:
    """A request in both forms: chat messages (always) and, for completion-style (base)
    models, a text prompt (rendered from the messages when the suite gives none)."""

    messages: list[dict[str, str]]
    text: str | None = None
    stop: tuple[str, ...] = ()
    max_tokens: int | None = None

    def completion_text(self) -> str:
        return self.text if self.text is not None else render_completion(self.messages)

    def request(self, style: Style) -> dict[str, Any]:
        """The body fields that depend on the style (model and parameters come from the run)."""
        body: dict[str, Any]
        if style == "completion":
            body = {"prompt": self.completion_text()}
            stop = self.stop or (() if self.text is not None else COMPLETION_STOP)
        else:
            body = {"messages": self.messages}
            stop = self.stop
        if stop:
            body["stop"] = list(stop)
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        return body


@dataclass
class Outcome:
    output: str
    answer: Any = None
    parsed: bool = True
    # Agent steps, each a JSON object: {"thought", "action", "arguments", "observation"} or
    # {"prompt", "output"} for a plain exchange.
    trace: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""


@dataclass
class Scored:
    item: Item
    outcome: Outcome | None  # None: the item failed (no answer from the endpoint)
    scores: Scores
    context: dict[str, Any] = field(default_factory=dict)
    # The item's cluster as the platform sees it (Evaluator.cluster). Aggregates over clusters
    # (dialogues) must group on this, not on the item's own ids: in a bootstrap resample a
    # cluster drawn twice appears twice, under two different groups.
    group: str = ""
    # 0 for a sample's first output in the run; k for the k-th further line a published file
    # gave the same sample, imported with on_duplicate="reference" (each scored against the
    # sample's gold, as a benchmark scorer that loops over the file's lines does). Means over
    # items count every repeat; an aggregate over clusters decides how a repeated member of a
    # cluster counts (MTU-Bench: the later line takes its turn's place in the dialogue).
    repeat: int = 0


@dataclass(frozen=True, slots=True)
class PublishedOutput:
    """One output made elsewhere: which sample (split may be unknown) and the text."""

    external_id: str
    output: str
    split: str | None = None
    source: str = ""  # "file, line N" for errors
    # The sample this output answers when no sample has `external_id`: MTU-Bench's reader
    # numbers the k-th line of an id "<id>#k" (its files reuse ids for different dialogues),
    # and a "#k" the split lacks is the file giving that id another answer. The import's
    # on_duplicate policy says what a second output for a sample means.
    fallback_id: str | None = None


Complete = Callable[[Prompt], Awaitable[str]]


class CallFailed(RuntimeError):
    """The endpoint gave no usable answer after every allowed attempt. Raised by `complete`;
    suites let it pass (the platform records the item as failed with this reason)."""


# --- completion prompts for base models ---------------------------------------------------------

COMPLETION_STOP = ("\nUser:", "\n\nUser:")


def render_completion(messages: Sequence[Mapping[str, str]]) -> str:
    """A chat as plain text a base model continues: the system text, then `User:` /
    `Assistant:` lines, ending with `Assistant:`. Few-shot examples are earlier user/assistant
    pairs."""
    lines: list[str] = []
    for message in messages:
        role, content = message["role"], message["content"].strip()
        if role == "system":
            lines.append(content + "\n")
        elif role == "user":
            lines.append(f"User: {content}")
        elif role == "assistant":
            lines.append(f"Assistant: {content}")
        else:
            lines.append(f"{role.capitalize()}: {content}")
    lines.append("Assistant:")
    return "\n".join(lines)


# --- small shared helpers -----------------------------------------------------------------------


def mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def percent(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(100.0 * value, digits)


def mean_scores(scored: Sequence[Scored], names: Sequence[str]) -> Scores:
    """Per metric, the mean of the items' values (items without the metric are skipped)."""
    return {name: mean([s.scores.get(name) for s in scored]) for name in names}


# --- the defaults -------------------------------------------------------------------------------


def default_cluster(item: Item, ctx: Context) -> str:
    return item.key


async def solve_single(
    evaluator: Evaluator, item: Item, ctx: Context, context: dict[str, Any], complete: Complete
) -> Outcome:
    prompt = evaluator.build_prompt(item, ctx, context)
    text = await complete(prompt)
    return evaluator.parse(text, item, ctx, context)


class Evaluator:
    """A suite module's evaluation functions, with the protocol's defaults filled in."""

    def __init__(self, module: ModuleType) -> None:
        self.module = module
        self.name: str = module.name
        self.tasks: Mapping[str, TaskSpec] = getattr(module, "TASKS", {})

    def task(self, name: str) -> TaskSpec:
        try:
            return self.tasks[name]
        except KeyError:
            known = ", ".join(self.tasks) or "none"
            raise ValueError(f"suite {self.name!r} has no task {name!r}; tasks: {known}") from None

    def select(self, items: Sequence[Item], ctx: Context) -> list[Item]:
        fn = getattr(self.module, "select", None)
        return list(fn(items, ctx)) if fn else list(items)

    def cluster(self, item: Item, ctx: Context) -> str:
        fn = getattr(self.module, "cluster", None)
        return fn(item, ctx) if fn else default_cluster(item, ctx)

    def limit(self, items: Sequence[Item], ctx: Context, limit: int | None) -> list[Item]:
        """At most `limit` items, chosen with the run's seed a whole cluster at a time (a
        dialogue keeps all its turns), in their original order."""
        if not limit or limit >= len(items):
            return list(items)
        clusters: dict[str, list[int]] = {}
        for index, item in enumerate(items):
            clusters.setdefault(self.cluster(item, ctx), []).append(index)
        order = list(clusters)
        random.Random(ctx.seed).shuffle(order)
        chosen: list[int] = []
        for key in order:
            members = clusters[key]
            if chosen and len(chosen) + len(members) > limit:
                continue
            chosen.extend(members)
            if len(chosen) >= limit:
                break
        return [items[i] for i in sorted(chosen)]

    def prepare(self, items: Sequence[Item], ctx: Context) -> list[dict[str, Any]]:
        fn = getattr(self.module, "prepare", None)
        contexts = list(fn(items, ctx)) if fn else [{} for _ in items]
        if len(contexts) != len(items):
            raise ValueError(f"{self.name}.prepare returned {len(contexts)} for {len(items)}")
        return contexts

    def build_prompt(self, item: Item, ctx: Context, context: dict[str, Any]) -> Prompt:
        return self.module.build_prompt(item, ctx, context)

    def parse(self, text: str, item: Item, ctx: Context, context: dict[str, Any]) -> Outcome:
        return self.module.parse(text, item, ctx, context)

    async def solve(
        self, item: Item, ctx: Context, context: dict[str, Any], complete: Complete
    ) -> Outcome:
        fn = getattr(self.module, "solve", None)
        if fn is not None:
            return await fn(item, ctx, context, complete)
        return await solve_single(self, item, ctx, context, complete)

    def score(
        self, outcome: Outcome | None, item: Item, ctx: Context, context: dict[str, Any]
    ) -> Scores:
        return self.module.score(outcome, item, ctx, context)

    def aggregate(self, scored: Sequence[Scored], ctx: Context) -> Scores:
        return self.module.aggregate(scored, ctx)

    def read_predictions(self, task: str, path: Path) -> Iterator[PublishedOutput]:
        fn = getattr(self.module, "read_predictions", None)
        if fn is None:
            raise ValueError(f"suite {self.name!r} reads no published outputs")
        return fn(task, path)
