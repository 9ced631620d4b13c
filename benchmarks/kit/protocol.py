"""The evaluation side of a suite: how a sample becomes a prompt, a model's text an answer, and
answers scores. Pure Python, no Django: the evaluation app drives it, tests call it directly.

A suite declares its tasks (registry.Suite.evaluation), each a `Task`: its TaskSpec (what the
task is: splits, metrics and what each means, options) composed with the functions that run it:

    prompt(item, ctx, context) -> Prompt             the benchmark's own prompt for one item
    parse(text, item, ctx, context) -> Outcome       the benchmark's answer matching
    score(outcome, item, ctx, context) -> Scores     per-item metric values
    aggregate(scored, ctx) -> Scores                 run-level metrics (named as in METRICS.md)

and, where the default (Evaluator) does not fit:

    select(items, ctx) -> list[Item]                 which items a run of the task takes
    cluster(item, ctx) -> str                        the unit sampled by an item limit and
                                                     resampled by the bootstrap (a dialogue)
    prepare(items, ctx) -> list[dict]                per-item context fixed at launch (e.g. a
                                                     candidate tool list), stored with the item
    async solve(item, ctx, context, complete)        multi-step tasks (a ReAct loop); the default
                                                     asks once and parses
    read_predictions(path) -> Iterator[PublishedOutput]   outputs published elsewhere
    mean_metrics(ctx) -> {metric: digits | None}    the run metrics aggregate() computes as
                                                     the mean of the items' values of the same
                                                     name (items without one skipped), rounded
                                                     to `digits`: the bootstrap then resamples
                                                     those means directly (evaluation.bootstrap,
                                                     which checks the claim against aggregate's
                                                     own result); the default claims none
    native: Native                                   the task in tool_mode "native" (present
                                                     exactly when TaskSpec.native):
        answer(calls, item, ctx, context)            the calls read from tool_calls as the
                                                     answer parse() would give
        prompt(item, ctx, context) -> NativePrompt   the request: chat messages (earlier calls
                                                     as assistant tool_calls and tool messages)
                                                     and the tools declared; the default is the
                                                     text prompt's messages with the item's
                                                     candidate tools declared
        async solve(item, ctx, context, ask)         a native multi-step task (ask(prompt) gives
                                                     the text and tool_calls); the default asks
                                                     the prompt once and reads the answer
        outcome(reply, item, ctx, context) -> Outcome   a native answer (NativeReply: the text,
                                                     the tool_calls as sent, the calls read); the
                                                     default is read_native_reply() with
                                                     `answer` shaping the calls

Each part is the function of that task: a part never branches on the task's name (a task that
reads differently is a task with other parts). The suite's tools as OpenAI function tools
(native tool calling, names mapped to the API's pattern and back) are the suite's
`declare_tools`; the default reads ToolSpec.parameters as JSON Schema (native.py).

`Evaluator(suite)` (a registry Suite's `evaluator`) fills in the defaults, so the platform calls
one interface.

Conventions:
- `context` is the JSON object `prepare` returned for the item ({} by default). It is stored
  with the prediction, so a rerun or an import of published outputs sees the same candidates.
- `score(None, ...)` is asked for an item whose model call failed for good (its error is kept
  by the platform): return the scores of a wrong answer, so failures count against the model.
- An answer that cannot be matched is an Outcome with parsed=False and the raw text kept; the
  task's "unparsed" option says whether it counts as wrong or is left out (and counted).
- Metric values are floats (None when undefined, e.g. precision with no positive prediction);
  percentages where the paper reports percentages (TaskSpec.percent names them).
- Every name score() can return and every name aggregate() can return is declared on the task
  (TaskSpec.item_metrics and run_metrics, a MetricSpec each): which way is better and what kind
  of number it is. The platform reads values by these declarations: only scores that point one
  way are compared with human raters (a lower-is-better one with its sign turned), leaderboards
  sort on the headline in its direction, counts are shown as whole numbers without intervals.
  Declarations are code, not data: values stored under a name no task declares (an older run's)
  stay readable and are shown as plain values.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from benchmarks.kit.base import ImportFormatError, unstorable

# PublishedOutput is part of the protocol suites implement (read_predictions yields them).
from benchmarks.kit.base import PublishedOutput as PublishedOutput
from benchmarks.kit.native import declare, leaked_calls, read_tool_calls

if TYPE_CHECKING:
    from benchmarks.kit.native import NativeCalls, ToolDeclarations, ToolNames

# The form of prompt a run's endpoint is asked in (Context.style, Prompt.request): "completion"
# is one text, for base models; any other is the chat messages. The platform's API styles each
# say which form they send; "responses" is read as chat.
Style = Literal["chat", "completion", "responses"]
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


Direction = Literal["higher", "lower"]
MetricKind = Literal["score", "count", "flag"]
METRIC_KINDS: tuple[MetricKind, ...] = ("score", "count", "flag")
DIRECTIONS: tuple[Direction, ...] = ("higher", "lower")
# A declared name ending in this covers a family of names: "accuracy[*]" covers
# "accuracy[gsm8k]" (per-dataset values a run only knows once it has its items).
FAMILY = "[*]"


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """What one metric name of a task means.

    kind:
      "score"  how good an answer (per item) or a run is: a correctness, a similarity, a share
               or mean of such; run-level scores get bootstrap intervals. Only a score that
               points one way is compared with human raters and can head a leaderboard.
      "count"  how many of something (items, unparsed answers, true positives) or a rank: a
               whole number, shown without decimals or interval.
      "flag"   a per-item yes/no fact (1/0, or 100/0 where the task's values are percentages)
               that is not a verdict on the answer's quality: unread, failed, the gold needs a
               tool, the first step called a tool. Its run-level mean or count is declared on
               its own.
    direction: "higher" or "lower" is better; None where neither is (a fact of the gold, the
    number of items, an error analysis share)."""

    name: str
    kind: MetricKind = "score"
    direction: Direction | None = "higher"
    description: str = ""

    def __post_init__(self) -> None:
        if self.kind not in METRIC_KINDS:
            raise ValueError(f"metric {self.name!r}: kind must be one of {METRIC_KINDS}")
        if self.direction is not None and self.direction not in DIRECTIONS:
            raise ValueError(f"metric {self.name!r}: direction must be higher, lower or None")

    @classmethod
    def score(
        cls, name: str, direction: Direction | None = "higher", description: str = ""
    ) -> MetricSpec:
        return cls(name, "score", direction, description)

    @classmethod
    def count(
        cls, name: str, direction: Direction | None = None, description: str = ""
    ) -> MetricSpec:
        return cls(name, "count", direction, description)

    @classmethod
    def flag(
        cls, name: str, direction: Direction | None = None, description: str = ""
    ) -> MetricSpec:
        return cls(name, "flag", direction, description)

    @property
    def comparable(self) -> bool:
        """A score that points one way: what may be set against human raters and rank runs."""
        return self.kind == "score" and self.direction is not None

    @property
    def sign(self) -> float:
        """+1 for higher-is-better, -1 for lower-is-better: the factor that makes "larger" mean
        "better" (0 when neither side is)."""
        return {"higher": 1.0, "lower": -1.0}.get(self.direction or "", 0.0)

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "direction": self.direction, "description": self.description}


def metric_specs(*specs: MetricSpec) -> dict[str, MetricSpec]:
    """Declarations by name, in the order given (a name twice is a mistake)."""
    declared: dict[str, MetricSpec] = {}
    for spec in specs:
        if spec.name in declared:
            raise ValueError(f"metric {spec.name!r} is declared twice")
        declared[spec.name] = spec
    return declared


def lookup_metric(specs: Mapping[str, MetricSpec], name: str) -> MetricSpec | None:
    """The declaration of `name`: its own, else its family's ("accuracy[gsm8k]" ->
    "accuracy[*]"); None when undeclared."""
    spec = specs.get(name)
    if spec is None and name.endswith("]") and "[" in name:
        spec = specs.get(name[: name.index("[")] + FAMILY)
    return spec


OptionKind = Literal["text", "integer", "number", "boolean", "names"]
OPTION_KINDS: tuple[OptionKind, ...] = ("text", "integer", "number", "boolean", "names")
# What a run's option may hold beyond its declared bounds: text and names fit a form's field, a
# whole number fits the JSON a run stores (and any count a suite reads).
MAX_OPTION_TEXT = 500
MAX_OPTION_NAMES = 10_000
MAX_OPTION_INTEGER = 10**9


class OptionError(ValueError):
    """A run's option its task does not declare, or a value the declaration does not allow;
    `option` is its name."""

    def __init__(self, message: str, option: str) -> None:
        super().__init__(message)
        self.option = option


@dataclass(frozen=True, slots=True)
class Option:
    """One option a run of a task accepts (a run's `options`: `--option name=value`, the launch
    form's task options, the API's `options`).

    kind:     "text", "integer", "number" (an integer or a finite decimal), "boolean", or
              "names" (a list of texts, e.g. tool names)
    default:  what the suite reads when a run does not give it (None: "not set", which the
              suite documents)
    choices:  the values allowed, where they are few (() for any value of the kind)
    minimum, maximum: bounds of a number (inclusive)
    nullable: null is a value (None: the default's meaning, e.g. "keep all"); options whose
              default is None are nullable."""

    name: str
    kind: OptionKind
    default: Any
    description: str
    choices: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    nullable: bool = False

    def __post_init__(self) -> None:
        # Checked when the suite is imported: a declaration cannot contradict itself.
        if self.kind not in OPTION_KINDS:
            raise ValueError(f"option {self.name!r}: kind must be one of {OPTION_KINDS}")
        if not self.description.strip() or "\n" in self.description:
            raise ValueError(f"option {self.name!r}: a one-line description")
        if self.default is None:
            object.__setattr__(self, "nullable", True)
        for choice in self.choices:
            if problem := self._kind_problem(choice):
                raise ValueError(f"option {self.name!r}: choice {choice!r} {problem}")
        if self.default is not None and (problem := self.problem(self.default)):
            raise ValueError(f"option {self.name!r}: its default {self.default!r} {problem}")

    def allowed(self) -> str:
        """What the option takes, in words (the refusals and the form say it)."""
        if self.choices:
            text = "one of " + ", ".join(
                json.dumps(c) if isinstance(c, bool) else str(c) for c in self.choices
            )
        elif self.kind == "integer":
            text = "a whole number" + self._range()
        elif self.kind == "number":
            text = "a number" + self._range()
        elif self.kind == "boolean":
            text = "true or false"
        elif self.kind == "names":
            text = "a list of names"
        else:
            text = f"a text of at most {MAX_OPTION_TEXT} characters"
        return text + (" (or null)" if self.nullable else "")

    def _range(self) -> str:
        low, high = self.minimum, self.maximum
        if self.kind == "integer" and high is None:
            high = MAX_OPTION_INTEGER
        show: Callable[[float], str] = (
            (lambda v: str(int(v))) if self.kind == "integer" else (lambda v: f"{v:g}")
        )
        if low is not None and high is not None:
            return f" from {show(low)} to {show(high)}"
        if low is not None:
            return f" of at least {show(low)}"
        return f" of at most {show(high)}" if high is not None else ""

    def _kind_problem(self, value: Any) -> str:
        if self.kind == "text":
            if not isinstance(value, str):
                return "is not a text"
            if len(value) > MAX_OPTION_TEXT:
                return "is too long"
            return unstorable(value) or ""
        if self.kind == "boolean":
            return "" if isinstance(value, bool) else "is not true or false"
        if self.kind == "integer":
            return "" if isinstance(value, int) and not isinstance(value, bool) else "is not whole"
        if self.kind == "number":
            if isinstance(value, bool) or not isinstance(value, int | float):
                return "is not a number"
            return "" if isinstance(value, int) or math.isfinite(value) else "is not finite"
        if not isinstance(value, list) or len(value) > MAX_OPTION_NAMES:
            return "is not a list of names"
        if any(not isinstance(v, str) or len(v) > MAX_OPTION_TEXT or unstorable(v) for v in value):
            return "is not a list of names"
        return ""

    def problem(self, value: Any) -> str:
        """ "" when the option may take `value`, else what is wrong, in words."""
        if value is None:
            return "" if self.nullable else "may not be null"
        if problem := self._kind_problem(value):
            return problem
        if self.choices and value not in self.choices:
            return "is not one of the choices"
        if self.kind in ("integer", "number"):
            high = self.maximum
            if self.kind == "integer" and high is None:
                high = MAX_OPTION_INTEGER
            if (self.minimum is not None and value < self.minimum) or (
                high is not None and value > high
            ):
                return "is out of range"
        return ""

    def check(self, value: Any) -> Any:
        """The value, or OptionError naming the option and saying what it takes."""
        if self.problem(value):
            shown = json.dumps(value, ensure_ascii=False, default=str)
            if len(shown) > 80:
                shown = shown[:77] + "..."
            raise OptionError(
                f"option {self.name!r} must be {self.allowed()}; got {shown}", self.name
            )
        return value

    def as_dict(self) -> dict[str, Any]:
        """The declaration as the API and the form show it."""
        return {
            "name": self.name,
            "kind": self.kind,
            "default": self.default,
            "allowed": self.allowed(),
            "choices": list(self.choices),
            "description": self.description,
        }


# The platform's options, which every task takes (evaluation reads them, not the suites).
PLATFORM_OPTIONS: tuple[Option, ...] = (
    Option(
        "tool_mode",
        "text",
        "text",
        "text: the benchmark's own prompt; native: tools declared in the request, the calls "
        "read from tool_calls (a task with a native form, a chat or responses endpoint, 0 shots)",
        choices=("text", "native"),
    ),
    Option(
        "trials",
        "integer",
        1,
        "how many times each item is answered (trial t sends the run's seed + t)",
        minimum=1,
        maximum=100,
    ),
)
# The options of an agent task whose tools the virtual API server serves (the stability
# experiment sets them; evaluation.inference reads them).
SERVED_TOOL_OPTIONS: tuple[Option, ...] = (
    Option(
        "down_tools",
        "names",
        None,
        "the tools made unavailable for the run (a stability experiment's arm)",
    ),
    Option(
        "down_mode",
        "text",
        "simulate",
        "how a call to a tool that is down is answered: by the simulator, or with a failure",
        choices=("simulate", "fail"),
    ),
)


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
    # The options a run of this task takes besides the platform's (registry.Suite.options),
    # each with its default; a run's own options are read over the defaults (Context.option).
    options: tuple[Option, ...] = ()
    # Multi-step (solve() calls the model several times and may call tools).
    agent: bool = False
    # Other splits the task reads whole (not as items), e.g. MetaTool's scenario lists; the
    # platform passes their items in Context.aux.
    aux_splits: tuple[str, ...] = ()
    description: str = ""
    # What each name means (MetricSpec): item_metrics for every name score() can return,
    # run_metrics for every name aggregate() can return (each of `metrics`, and families such
    # as "accuracy[*]" for names made per dataset). A name may mean one thing per item and
    # another per run: MetaTool's per-item `unparsed` is a flag, its run-level one a count.
    item_metrics: Mapping[str, MetricSpec] = field(default_factory=dict)
    run_metrics: Mapping[str, MetricSpec] = field(default_factory=dict)
    # The task can be run in tool_mode "native" (tools declared in the request, the model's
    # calls read from its tool_calls): a task where a model calls or chooses tools, whose suite
    # builds native requests (native_prompt) and reads native answers (native_outcome).
    native: bool = False
    # Why a run of this task is not comparable with the benchmark's published scores ("": it
    # is), e.g. its tools answered by another service than the published one's. The run's page
    # says it, and an overall score never counts such a run (evaluation/overall.py).
    not_comparable: str = ""

    def __post_init__(self) -> None:
        # Checked when the suite is imported, so a task cannot ship a metric the platform
        # would have to guess the meaning of.
        for level, specs in (("item", self.item_metrics), ("run", self.run_metrics)):
            for key, spec in specs.items():
                if key != spec.name:
                    raise ValueError(f"task {self.name}: {level} metric {key!r} is {spec.name!r}")
        undeclared = [name for name in self.metrics if name not in self.run_metrics]
        if undeclared:
            raise ValueError(
                f"task {self.name}: run metrics without a declaration: {', '.join(undeclared)}"
            )
        unlisted = [
            name
            for name in self.run_metrics
            if name not in self.metrics and not name.endswith(FAMILY)
        ]
        if unlisted:
            raise ValueError(
                f"task {self.name}: declared run metrics missing from metrics: "
                f"{', '.join(unlisted)}"
            )
        names = [option.name for option in self.options]
        platform = {option.name for option in (*PLATFORM_OPTIONS, *SERVED_TOOL_OPTIONS)}
        twice = sorted({name for name in names if names.count(name) > 1 or name in platform})
        if twice:
            raise ValueError(f"task {self.name}: options declared twice: {', '.join(twice)}")
        if self.metrics and not self.run_metrics[self.metrics[0]].comparable:
            raise ValueError(
                f"task {self.name}: the headline {self.metrics[0]!r} must be a score that is "
                "better one way (leaderboards sort on it)"
            )

    @property
    def defaults(self) -> dict[str, Any]:
        """Each declared option's default, by name."""
        return {option.name: option.default for option in self.options}

    def default(self, name: str) -> Any:
        """The declared default of an option (None when the task declares none)."""
        for option in self.options:
            if option.name == name:
                return option.default
        return None

    def item_metric(self, name: str) -> MetricSpec | None:
        """What a per-item value of this name means; None when the task does not declare it
        (a value stored by an older version of the suite)."""
        return lookup_metric(self.item_metrics, name)

    def run_metric(self, name: str) -> MetricSpec | None:
        """What a run-level value of this name means; None when undeclared."""
        return lookup_metric(self.run_metrics, name)


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
    # The revision of the tool descriptions `tools` holds (a rewriting, by id); None: the
    # descriptions as imported. A suite that prints published descriptions verbatim must show
    # the revision's instead.
    tool_revision: int | None = None

    def option(self, name: str) -> Any:
        if name in self.options:
            return self.options[name]
        return self.task.default(name)


@dataclass
class Prompt:
    """A request in both forms: chat messages (always) and, for completion-style (base)
    models, a text prompt (rendered from the messages when the suite gives none)."""

    messages: list[dict[str, Any]]
    text: str | None = None
    stop: tuple[str, ...] = ()
    max_tokens: int | None = None
    # Native tool calling: the function tools declared with the request (chat only).
    tools: list[dict[str, Any]] = field(default_factory=list)
    # With tools: the tool_choice sent (a judge's forced verdict call names its function);
    # None sends none.
    tool_choice: Any = None

    def completion_text(self) -> str:
        return self.text if self.text is not None else render_completion(self.messages)

    def request(self, style: Style) -> dict[str, Any]:
        """The body fields of the prompt in the form `style` (model and parameters come from
        the run): the text for "completion", the messages (and tools) otherwise."""
        body: dict[str, Any]
        if style == "completion":
            if self.tools:
                raise ValueError("a completion-style request cannot declare tools")
            body = {"prompt": self.completion_text()}
            stop = self.stop or (() if self.text is not None else COMPLETION_STOP)
        else:
            body = {"messages": self.messages}
            if self.tools:
                body["tools"] = self.tools
                if self.tool_choice is not None:
                    body["tool_choice"] = self.tool_choice
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
    # Native runs: the server's tool_calls as sent (None in text mode), and whether a call was
    # written into the text instead (a leaked call: read by the task's text rule).
    tool_calls: list[dict[str, Any]] | None = None
    leaked: bool = False


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


Complete = Callable[[Prompt], Awaitable[str]]


class CallFailed(RuntimeError):
    """The endpoint gave no usable answer after every allowed attempt. Raised by `complete`;
    suites let it pass (the platform records the item as failed with this reason)."""


# --- native tool calling -----------------------------------------------------------------------

TOOL_MODES = ("text", "native")


def tool_mode(ctx: Context) -> str:
    """The run's tool mode: "text" (the benchmark's own prompt; the default) or "native"."""
    return str(ctx.option("tool_mode") or "text")


@dataclass
class NativePrompt:
    """A native request: the prompt (chat messages, `tools` declared) and the names the tools
    were declared under, to read the model's calls back with."""

    prompt: Prompt
    names: ToolNames


class NativeTurn(Protocol):
    """One answer of a native request as the platform gives it to a suite: the message's text
    and its tool_calls as the server sent them (JSON)."""

    text: str
    tool_calls: list[dict[str, Any]]


# A native request and its answer (the platform's: cache, limits, retries), for solve loops.
AskNative = Callable[[Prompt], Awaitable[NativeTurn]]


@dataclass
class NativeReply:
    """A native answer: the message's text, its tool_calls as the server sent them (JSON), and
    those calls read with the request's names (benchmarks.kit.native.read_tool_calls)."""

    text: str
    tool_calls: list[dict[str, Any]]
    calls: NativeCalls
    names: ToolNames


# A call the data gives no result for (the API wants every call answered by a tool message).
NO_RESULT = "(no result recorded)"


def native_history(turns: Sequence[Any], api_name: Callable[[str], str]) -> list[dict[str, Any]]:
    """A dialogue's turns ({"role": "user" | "assistant" | "tool", "content", "tool_calls"?:
    [{"name", "arguments"}], "name"?}) as chat messages for a native request: an assistant turn
    that called tools is an assistant message (its text as content, or null) with `tool_calls`
    (ids call_1, call_2 ... in dialogue order, names as `api_name` gives them, arguments as JSON
    text), each answered by a `tool` message: the tool turns that follow, in order (NO_RESULT
    for a call the data gives no result); a tool turn with no call to answer is a user message
    "Tool result (name): ...". Other turns keep their role and text; an assistant turn with
    neither text nor calls is left out."""
    messages: list[dict[str, Any]] = []
    number = 0
    for turn in turns:
        if not isinstance(turn, Mapping):
            continue
        role, content = turn.get("role"), turn.get("content")
        text = content if isinstance(content, str) else ("" if content is None else str(content))
        if role == "assistant" and turn.get("tool_calls"):
            calls = []
            for call in turn["tool_calls"]:
                if not isinstance(call, Mapping):
                    continue
                number += 1
                arguments = call.get("arguments")
                calls.append(
                    {
                        "id": f"call_{number}",
                        "type": "function",
                        "function": {
                            "name": api_name(str(call.get("name", ""))),
                            "arguments": json.dumps(
                                arguments if isinstance(arguments, Mapping) else {},
                                ensure_ascii=False,
                            ),
                        },
                    }
                )
            messages.append({"role": "assistant", "content": text or None, "tool_calls": calls})
            messages.extend(
                {"role": "tool", "tool_call_id": call["id"], "content": NO_RESULT} for call in calls
            )
        elif role == "tool":
            start = len(messages)
            while start > 0 and messages[start - 1]["role"] == "tool":
                start -= 1
            pending = [m for m in messages[start:] if m["content"] == NO_RESULT]
            if pending:
                pending[0]["content"] = text or NO_RESULT
            else:
                name = turn.get("name") or "tool"
                messages.append({"role": "user", "content": f"Tool result ({name}): {text}"})
        elif role == "assistant":
            if text:
                messages.append({"role": "assistant", "content": text})
        else:
            messages.append({"role": "user", "content": text})
    return messages


def read_native_reply(
    reply: NativeReply,
    answer: Callable[[list[dict[str, Any]]], Any],
    text_rule: Callable[[str], Outcome],
    has_call: Callable[[Any], bool],
) -> Outcome:
    """A native answer as the outcome the task scores.

    tool_calls: the answer is `answer(calls)` with every call in the order sent (a call with
    unreadable arguments keeps {} and an undeclared tool the name the model wrote, so both score
    as the wrong calls they are; the note names them). No tool_calls: the text is read by the
    task's text rule (`text_rule`). When the text holds a call (the text rule finds one, or a
    call of a declared tool is written in it: native.leaked_calls), the call leaked out of the
    tool channel: the outcome is flagged `leaked`, and when the text rule found no call the
    written calls are the answer, so a leaked call is never credited as a correct abstention."""
    if len(reply.calls):
        outcome = Outcome(
            output=reply.text,
            answer=answer(reply.calls.answer(keep_problems=True)),
            note="; ".join(reply.calls.problems),
        )
    else:
        outcome = text_rule(reply.text)
        written = leaked_calls(reply.text, reply.names)
        if has_call(outcome.answer):
            outcome.leaked = True
        elif written:
            outcome = Outcome(output=reply.text, answer=answer(written), parsed=outcome.parsed)
            outcome.leaked = True
        if outcome.leaked:
            outcome.note = "; ".join(
                n for n in (outcome.note, "a call written in the text, not in tool_calls") if n
            )
    outcome.output = reply.text
    outcome.tool_calls = reply.tool_calls
    return outcome


def item_tools(item: Item, ctx: Context) -> list[ToolSpec]:
    """The tools an item may use: its candidates that the benchmark knows, in order."""
    return [ctx.tools[name] for name in item.candidate_tools if name in ctx.tools]


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


def default_declare_tools(tools: Sequence[ToolSpec]) -> ToolDeclarations:
    """The tools as function tools, each described by its description and its parameters as
    the importers store them (JSON Schema), cleaned to a valid draft 2020-12 object schema."""
    return declare(tools)


def default_native_prompt(
    evaluator: Evaluator, item: Item, ctx: Context, context: dict[str, Any]
) -> NativePrompt:
    """The text prompt's chat messages with the item's candidate tools declared."""
    prompt = evaluator.build_prompt(item, ctx, context)
    declared = evaluator.declare_tools(item_tools(item, ctx))
    native = Prompt(messages=list(prompt.messages), max_tokens=prompt.max_tokens)
    native.tools = declared.tools
    return NativePrompt(native, declared.names)


async def solve_single(
    evaluator: Evaluator, item: Item, ctx: Context, context: dict[str, Any], complete: Complete
) -> Outcome:
    prompt = evaluator.build_prompt(item, ctx, context)
    text = await complete(prompt)
    return evaluator.parse(text, item, ctx, context)


# --- a task and its parts ---------------------------------------------------------------------

# Each part is a plain function of the item and the run's Context; `context` is the JSON object
# `prepare` stored with the item ({} by default).
BuildPrompt = Callable[[Item, Context, dict[str, Any]], Prompt]
Parse = Callable[[str, Item, Context, dict[str, Any]], Outcome]
Score = Callable[[Outcome | None, Item, Context, dict[str, Any]], Scores]
Aggregate = Callable[[Sequence[Scored], Context], Scores]
Select = Callable[[Sequence[Item], Context], Sequence[Item]]
Cluster = Callable[[Item, Context], str]
Prepare = Callable[[Sequence[Item], Context], Sequence[dict[str, Any]]]
Solve = Callable[[Item, Context, dict[str, Any], Complete], Awaitable[Outcome]]
MeanMetrics = Callable[[Context], Mapping[str, int | None]]
ReadPredictions = Callable[[Path], Iterator[PublishedOutput]]
NativePromptPart = Callable[[Item, Context, dict[str, Any]], NativePrompt]
NativeSolve = Callable[[Item, Context, dict[str, Any], AskNative], Awaitable[Outcome]]
NativeOutcome = Callable[[NativeReply, Item, Context, dict[str, Any]], Outcome]
NativeAnswer = Callable[[list[dict[str, Any]], Item, Context, dict[str, Any]], Any]
DeclareTools = Callable[[Sequence[ToolSpec]], "ToolDeclarations"]


@dataclass(frozen=True, slots=True)
class Native:
    """How a task is run in tool_mode "native" (tools declared in the request, the model's
    calls read from its tool_calls).

    answer(calls, item, ctx, context): the calls read from tool_calls as the answer parse()
        would give (answer([]) is the answer with no call: an abstention);
    prompt: the request (default: the text prompt's messages with the item's candidate tools
        declared, Suite.declare_tools);
    solve: a multi-step loop (default: ask `prompt` once and read the reply with `outcome`);
    outcome: the reply as an Outcome (default: read_native_reply with `answer` and the task's
        text rule)."""

    answer: NativeAnswer | None = None
    prompt: NativePromptPart | None = None
    solve: NativeSolve | None = None
    outcome: NativeOutcome | None = None

    def __post_init__(self) -> None:
        if self.answer is None and self.outcome is None and self.solve is None:
            raise ValueError("a native form reads its answers: give answer, outcome or solve")


@dataclass(frozen=True, slots=True)
class Task:
    """One task of a suite, composed of its parts: what it is (spec) and how an item becomes a
    prompt, a model's text an answer, answers scores. Only the first five are required; every
    other part has the default Evaluator describes.

    prompt, parse, score, aggregate: the benchmark's prompt, answer matching, per-item metrics
        and run-level metrics (named as in METRICS.md);
    select(items, ctx): the items a run of the task takes (default: all);
    cluster(item, ctx): the unit an item limit samples and the bootstrap resamples (default:
        the item; a dialogue for turn-level tasks);
    prepare(items, ctx): per-item context fixed at launch and stored with the item (a
        candidate tool list);
    solve(item, ctx, context, complete): a multi-step loop (default: ask once and parse);
    mean_metrics(ctx): the run metrics aggregate computes as plain means of the items' values
        of the same name, rounded to the digits given: the bootstrap then resamples those means
        directly (evaluation.bootstrap checks the claim against aggregate's own result);
    read_predictions(path): outputs published elsewhere, read as this task's;
    native: its native form (Native); present exactly when spec.native."""

    spec: TaskSpec
    prompt: BuildPrompt
    parse: Parse
    score: Score
    aggregate: Aggregate
    select: Select | None = None
    cluster: Cluster | None = None
    prepare: Prepare | None = None
    solve: Solve | None = None
    mean_metrics: MeanMetrics | None = None
    read_predictions: ReadPredictions | None = None
    native: Native | None = None

    def __post_init__(self) -> None:
        if self.spec.native != (self.native is not None):
            said = "is" if self.spec.native else "is not"
            raise ValueError(
                f"task {self.spec.name}: its spec says it {said} native; give Native parts "
                "exactly when it is"
            )

    @property
    def name(self) -> str:
        return self.spec.name


class Declared(Protocol):
    """What the Evaluator reads of a suite (registry.Suite): its name, its tasks and how it
    declares tools to an API."""

    @property
    def name(self) -> str: ...

    @property
    def evaluation(self) -> Sequence[Task]: ...

    @property
    def declare_tools(self) -> DeclareTools | None: ...


class Evaluator:
    """A suite's tasks behind one interface, each part's default filled in: the platform calls
    this, never a suite's functions directly."""

    def __init__(self, suite: Declared) -> None:
        self.name: str = suite.name
        self.parts: dict[str, Task] = {}
        for task in suite.evaluation:
            if task.name in self.parts:
                raise ValueError(f"suite {self.name!r} declares task {task.name!r} twice")
            self.parts[task.name] = task
        self.tasks: Mapping[str, TaskSpec] = {name: t.spec for name, t in self.parts.items()}
        self._declare_tools = suite.declare_tools or default_declare_tools

    def task(self, name: str) -> TaskSpec:
        return self.part(name).spec

    def part(self, name: str) -> Task:
        """The task of this name with its parts (ValueError naming the tasks there are)."""
        try:
            return self.parts[name]
        except KeyError:
            known = ", ".join(self.parts) or "none"
            raise ValueError(f"suite {self.name!r} has no task {name!r}; tasks: {known}") from None

    def _of(self, ctx: Context) -> Task:
        return self.part(ctx.task.name)

    def select(self, items: Sequence[Item], ctx: Context) -> list[Item]:
        fn = self._of(ctx).select
        return list(fn(items, ctx)) if fn else list(items)

    def cluster(self, item: Item, ctx: Context) -> str:
        fn = self._of(ctx).cluster
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
        fn = self._of(ctx).prepare
        contexts = list(fn(items, ctx)) if fn else [{} for _ in items]
        if len(contexts) != len(items):
            raise ValueError(f"{self.name}.prepare returned {len(contexts)} for {len(items)}")
        return contexts

    def build_prompt(self, item: Item, ctx: Context, context: dict[str, Any]) -> Prompt:
        return self._of(ctx).prompt(item, ctx, context)

    def parse(self, text: str, item: Item, ctx: Context, context: dict[str, Any]) -> Outcome:
        return self._of(ctx).parse(text, item, ctx, context)

    async def solve(
        self, item: Item, ctx: Context, context: dict[str, Any], complete: Complete
    ) -> Outcome:
        fn = self._of(ctx).solve
        if fn is not None:
            return await fn(item, ctx, context, complete)
        return await solve_single(self, item, ctx, context, complete)

    def score(
        self, outcome: Outcome | None, item: Item, ctx: Context, context: dict[str, Any]
    ) -> Scores:
        return self._of(ctx).score(outcome, item, ctx, context)

    def aggregate(self, scored: Sequence[Scored], ctx: Context) -> Scores:
        return self._of(ctx).aggregate(scored, ctx)

    def mean_metrics(self, ctx: Context) -> dict[str, int | None]:
        """The run metrics the task's aggregate computes as plain means of the items' values
        (Task.mean_metrics); {} when the task does not say."""
        fn = self._of(ctx).mean_metrics
        return dict(fn(ctx)) if fn else {}

    def declare_tools(self, tools: Sequence[ToolSpec]) -> ToolDeclarations:
        """The tools an item may use as OpenAI function tools, and the names they go by."""
        return self._declare_tools(tools)

    def _native(self, ctx: Context) -> Native:
        native = self._of(ctx).native
        if native is None:
            raise ValueError(f"{self.name} task {ctx.task.name!r} has no native form")
        return native

    def native_prompt(self, item: Item, ctx: Context, context: dict[str, Any]) -> NativePrompt:
        """The request of a native run for one item (tools declared, history as tool calls)."""
        fn = self._native(ctx).prompt
        if fn is not None:
            return fn(item, ctx, context)
        return default_native_prompt(self, item, ctx, context)

    async def native_solve(
        self, item: Item, ctx: Context, context: dict[str, Any], ask: AskNative
    ) -> Outcome:
        """A native run's item: the task's native loop (whose requests declare its tools), else
        one native_prompt, its answer read by native_outcome."""
        fn = self._native(ctx).solve
        if fn is not None:
            return await fn(item, ctx, context, ask)
        native = self.native_prompt(item, ctx, context)
        turn = await ask(native.prompt)
        calls = read_tool_calls(turn.tool_calls, native.names)
        reply = NativeReply(turn.text, turn.tool_calls, calls, native.names)
        return self.native_outcome(reply, item, ctx, context)

    def native_outcome(
        self, reply: NativeReply, item: Item, ctx: Context, context: dict[str, Any]
    ) -> Outcome:
        """A native answer as the outcome score() reads (the answer parse() would give)."""
        native = self._native(ctx)
        if native.outcome is not None:
            return native.outcome(reply, item, ctx, context)
        shape = native.answer
        if shape is None:
            raise ValueError(f"{self.name} task {ctx.task.name!r} reads no single native answer")
        return read_native_reply(
            reply,
            lambda calls: shape(calls, item, ctx, context),
            lambda text: self.parse(text, item, ctx, context),
            lambda answer: answer != shape([], item, ctx, context),
        )

    def read_predictions(self, task: str, path: Path) -> Iterator[PublishedOutput]:
        """The outputs published in `path` as `task`'s (ImportFormatError for a task the suite
        does not have or that reads none)."""
        found = self.parts.get(task)
        if found is None:
            known = ", ".join(self.parts) or "none"
            raise ImportFormatError(f"suite {self.name!r} has no task {task!r}; tasks: {known}")
        if found.read_predictions is None:
            raise ImportFormatError(f"{self.name} task {task!r} reads no published outputs")
        return found.read_predictions(path)
