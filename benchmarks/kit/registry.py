"""The registry of suites: one folder per benchmark, one line in `benchmarks/suites/__init__.py`
(SUITE_MODULES), and what each suite can do.

A suite is a package `benchmarks/suites/<name>/` whose `__init__.py` declares `SUITE`, a typed
`Suite`: its name, its importer, its tasks (protocol.Task: a TaskSpec composed with its parts)
and the optional capabilities the other apps ask for, never by the suite's name:

    declare_tools     its tools as OpenAI function tools, where the default does not fit
    gold_tools        the gold tools a sample names, which the import must describe
    served_tools      the tools the virtual API server serves to a run of it (ServedTools)
    judgment_readers  readers of judgments published with the benchmark, by format name
    gold              what its gold looks like to an expert and how an edit applies (GoldEditing)
    questions         the question sets of its human studies, by campaign kind
    item_context      what a human needs to judge its outputs (question, tools, gold, each
                      output's pick or calls; benchmarks/kit/context.py)
    exporter          writes a benchmark back in its published format, as its importer reads it
    analyses          the breakdowns its paper draws from a run, by task (analyses.Analysis)
    rewriting         its description-rewriting experiment (DescriptionRewriting, rewriting.py)
    conformance       the module of its promises shown on its own cases (conformance.py)
    judges            the LLM judges of its paper (judging.JudgeTemplate)
    overall           its leaderboard's overall score over a model's runs of its tasks
                      (overall.OverallScore: sections, how each aggregates, their weights)

Published outputs are read by a task's `read_predictions` part. A test registers a suite of
its own with `monkeypatch.setitem(SUITE_MODULES, ...)`.

Adding a suite means adding a folder and one line to SUITE_MODULES (ARCHITECTURE.md,
"Adding a suite").
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from benchmarks.kit.analyses import Analysis
from benchmarks.kit.base import (
    GoldTools,
    ImportBundle,
    ImportFormatError,
    Progress,
    SampleRecord,
    ToolRecord,
)
from benchmarks.kit.context import (
    ItemContext,
    ItemContextHook,
    JudgedOutput,
    default_item_context,
)
from benchmarks.kit.overall import OverallScore
from benchmarks.kit.protocol import (
    PLATFORM_OPTIONS,
    SERVED_TOOL_OPTIONS,
    DeclareTools,
    Evaluator,
    Item,
    Option,
    OptionError,
    PublishedOutput,
    Task,
    TaskSpec,
    ToolSpec,
)
from benchmarks.kit.rewriting import DescriptionRewriting
from benchmarks.kit.traces import StepError, TraceHook, step_errors
from benchmarks.suites import SUITE_MODULES

if TYPE_CHECKING:
    # Only annotations: judging reads the registry to load every suite's judges.
    from benchmarks.kit.judging import JudgeTemplate, Verdict


# --- capabilities -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ServedApi:
    """Where the virtual API server keeps one tool's responses: the cache folders
    <category>/<tool>/<api> (a tool folder without "_for_<category>" gets it), and the
    function name the API is known by in the suite's own prompts ("" when none)."""

    spec: ToolSpec
    category: str
    tool: str
    api: str
    function: str = ""


@dataclass(frozen=True)
class ServedTools:
    """The tools the virtual API server serves to runs of a suite.

    apis(tools): the served ones among the benchmark's tools, by tool name.
    The suite whose published server the virtual API server stands in for also gives:
    request_api(category, tool_name, api_name): the (category, tool, api) folders a client's
    request names, standardised as that server does; read_cache(root): the responses of a
    response-cache folder as published, each with category, tool, api, arguments, raw_key,
    response, error and source (raises ImportFormatError naming the file).
    agent_task: the task whose runs call these tools through the server (the stability
    experiment runs it, its first split by default).
    tasks: the agent tasks that call them (empty: every agent task of the suite)."""

    apis: Callable[[Mapping[str, ToolSpec]], dict[str, ServedApi]]
    agent_task: str = ""
    request_api: Callable[[str, str, str], tuple[str, str, str]] | None = None
    read_cache: Callable[[Path], Iterable[Any]] | None = None
    tasks: frozenset[str] = frozenset()

    def serves(self, task: str) -> bool:
        """Whether an agent run of `task` calls these tools."""
        return not self.tasks or task in self.tasks


@dataclass(frozen=True, slots=True)
class PublishedJudgment:
    """One item of a published judgment file: the sample it judges (checked against its
    question), the output judged, and per round the verdict and the text it was read from."""

    external_id: str
    split: str
    query: str
    output: PublishedOutput
    verdicts: Mapping[int, Verdict]
    raw: Mapping[int, str]
    source: str  # "file, line N" for errors
    name: str  # the sample as messages name it ("3", "G1/3")


@dataclass(frozen=True, slots=True)
class PublishedJudgments:
    """What a judgment reader returns: the judge template the verdicts follow, the task of
    the run the judged outputs make, and the items, all of one split, each with a verdict for
    every round (a round is a repeat of the judge)."""

    template: str
    task: str
    items: Sequence[PublishedJudgment]
    # For the messages that refuse a file: where its samples are ("the test split"), the field
    # holding the question, and what a question that does not match suggests.
    where: str
    query_field: str = "query"
    mismatch_hint: str = ""

    @property
    def rounds(self) -> list[int]:
        return list(self.items[0].verdicts) if self.items else []


@dataclass(frozen=True)
class JudgmentReader:
    """A reader of judgments published with a benchmark.

    read(path, answers, task) -> PublishedJudgments; `answers` (a file of the judged outputs)
    and `task` only where `takes_answers`; raises ImportFormatError or ApplicationError naming
    the file and line."""

    read: Callable[[Path, Path | None, str], PublishedJudgments]
    help: str = ""
    takes_answers: bool = False
    answers_help: str = ""
    task_help: str = ""


GoldShape = Literal["plan", "calls", "acceptable", "turns"]


@dataclass(frozen=True)
class GoldEditing:
    """What a suite's gold is to an expert who refines it, and how an edit applies.

    shape: "plan" (a tree of steps), "calls" (expected tool calls), "acceptable" (expected
      calls whose arguments are lists of acceptable values, "" among them: the argument may be
      left out) or "turns" (expected calls grouped by turn, each written as a call string).
    recognizes(reference): whether a stored reference (any JSON value) is this suite's gold.
    calls_key: the reference key holding the gold calls ("calls" shape).
    step_keyed: reference keys of task golds keyed by step number ({"step": "1.2", ...}) that
      follow their step when the plan is renumbered ("plan" shape).
    one_call_per_tool: the gold holds at most one call per tool name.
    write_calls(calls, old, new, split): how the rest of the reference follows edited calls
      (new already holds them under calls_key); raises ValueError for calls the gold cannot
      hold.
    output_reference(text, tools): whether an argument text names an earlier call's output
      rather than giving a value, as the suite's golds write it; `tools` is the sample's tool
      names, None before they are known (the looser test a form field applies).
    follow_plan(reference, old, new): how the rest of the reference follows an edited plan
      beyond the step-keyed golds (UltraTool's planning gold, the plan as text), in place:
      `old` is the old plan, (number, text) per step; `new` the new one, per step the index in
      `old` of the step it was (None: a new step) and its (number, text) ("plan" shape).
    read_gold(reference): the gold as the editor holds it: "acceptable", [{"name", "arguments":
      {argument: [acceptable values]}}]; "turns", [[call string, ...] per turn].
    write_gold(edited, old): the reference holding the edited gold (read_gold's shape) in the
      old one's place; raises ValueError naming what it cannot hold.
    functions(sample_input): the functions a sample offers, name -> arguments schema, where the
      sample keeps them in its input ("acceptable" and "turns" shapes).
    parse_call(text): a call string as (name, positional arguments, keyword arguments), never
      evaluated; raises ValueError saying what is wrong ("turns" shape)."""

    shape: GoldShape
    recognizes: Callable[[Any], bool]
    calls_key: str = "tool_calls"
    step_keyed: tuple[str, ...] = ()
    one_call_per_tool: bool = False
    write_calls: (
        Callable[[list[dict[str, Any]], Mapping[str, Any], dict[str, Any], str | None], None] | None
    ) = None
    output_reference: Callable[[str, Collection[str] | None], bool] | None = None
    follow_plan: (
        Callable[
            [
                dict[str, Any],
                Sequence[tuple[str, str]],
                Sequence[tuple[int | None, tuple[str, str]]],
            ],
            None,
        ]
        | None
    ) = None
    read_gold: Callable[[Any], list[Any]] | None = None
    write_gold: Callable[[list[Any], Any], Any] | None = None
    functions: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None
    parse_call: Callable[[str], tuple[str, list[Any], dict[str, Any]]] | None = None


@dataclass(frozen=True)
class Exporter:
    """Writes a benchmark in the suite's published format, the one its importer reads.

    write(samples, tools) -> {relative path: bytes}: the samples in stored order as the records
    the importer made (a refined sample holds its current revision), every tool of the
    benchmark; raises export.ExportError naming the sample and field it cannot write.
    import_paths(folder): what to give the importer to read the written folder back (default:
    every entry of the folder but provenance.json).
    cannot_carry: what the platform stores that the format has no place for (said in the
    provenance file, the suites' docs pages and the round-trip tests)."""

    write: Callable[[Sequence[SampleRecord], Sequence[ToolRecord]], dict[str, bytes]]
    import_paths: Callable[[Path], list[Path]] | None = None
    cannot_carry: str = ""

    def paths_to_import(self, folder: Path) -> list[Path]:
        if self.import_paths is not None:
            return self.import_paths(folder)
        return sorted(p for p in folder.iterdir() if p.name != "provenance.json")


# --- the suite ----------------------------------------------------------------------------------


class ImportFiles(Protocol):
    """paths, progress -> the samples and tools of a benchmark's published files."""

    def __call__(self, paths: Sequence[Path], progress: Progress | None = None) -> ImportBundle: ...


@dataclass(frozen=True, eq=False)
class Suite:
    """One benchmark: its importer, its tasks (protocol.Task, each composed of its parts) and
    its capabilities. Each suite's `__init__.py` builds one and names it SUITE."""

    name: str
    # The benchmark an import creates when the user names none.
    default_benchmark: str
    # paths, progress -> the samples and tools of the published files (benchmarks/kit/base.py)
    import_files: ImportFiles
    # Its tasks, in the order the pages list them.
    evaluation: tuple[Task, ...]
    # The tools an item may use as OpenAI function tools, where the default (ToolSpec.parameters
    # read as JSON Schema, benchmarks/kit/native.py) does not fit.
    declare_tools: DeclareTools | None = None
    # A suite whose tools come in files of their own: the gold tools a sample names, which a
    # tool of the import must describe (base.check_gold_tools).
    gold_tools: GoldTools | None = None
    served_tools: ServedTools | None = None
    judgment_readers: Mapping[str, JudgmentReader] = field(default_factory=dict)
    # what its gold is to an expert; several when its samples' golds come in several shapes
    gold: GoldEditing | tuple[GoldEditing, ...] | None = None
    # campaign kind -> the questions its campaigns ask (plain data, as the kind reads it)
    questions: Mapping[str, list[dict[str, Any]]] = field(default_factory=dict)
    # (item, show_gold, outputs) -> what a human needs beside the outputs judged, where the
    # default (a sample's query or turns, candidate tools and reference, the answers' calls)
    # does not fit (benchmarks/kit/context.py)
    item_context: ItemContextHook | None = None
    # writes the benchmark back in its published format (None: only the platform's JSONL)
    exporter: Exporter | None = None
    # task -> the analyses its paper draws from a run of it (benchmarks/kit/analyses.py)
    analyses: Mapping[str, tuple[Analysis, ...]] = field(default_factory=dict)
    # an LLM rewrites its tool descriptions and a run is repeated on them (rewriting.py)
    rewriting: DescriptionRewriting | None = None
    # the module whose CONFORMANCE shows what the suite promises, on its own cases
    # (benchmarks/kit/conformance.py); a path, since only the tests load those cases
    conformance: str = ""
    # the LLM judges of its paper (benchmarks.kit.judging registers them under their names)
    judges: tuple[JudgeTemplate, ...] = ()
    # its overall score over one model's runs of its tasks (benchmarks/kit/overall.py)
    overall: OverallScore | None = None
    # (item, output) -> the output's trace step by step, for step-level review
    # (benchmarks/kit/traces.py); None: its outputs are not reviewed step by step
    trace: TraceHook | None = None
    # error types of a wrong step beyond the common ones (traces.COMMON_STEP_ERRORS)
    own_step_errors: tuple[StepError, ...] = ()

    def __post_init__(self) -> None:
        for task, declared in self.analyses.items():
            names = [analysis.name for analysis in declared]
            if len(set(names)) != len(names):
                raise ValueError(f"task {task!r} declares an analysis name twice")

    @property
    def golds(self) -> tuple[GoldEditing, ...]:
        """Its gold editings (none, one or several)."""
        if self.gold is None:
            return ()
        return self.gold if isinstance(self.gold, tuple) else (self.gold,)

    @cached_property
    def step_errors(self) -> tuple[StepError, ...]:
        """The error types a wrong step of its traces may have: the common ones, then its own."""
        return step_errors(self.own_step_errors)

    def analyses_for(self, task: str) -> tuple[Analysis, ...]:
        """The analyses declared for a task, in the order the page shows them (() if none)."""
        return tuple(self.analyses.get(task, ()))

    @property
    def tasks(self) -> Mapping[str, TaskSpec]:
        """The tasks it evaluates, by name: each Task's spec, in declared order."""
        return self.evaluator.tasks

    def options(self, task: str) -> tuple[Option, ...]:
        """Every option a run of `task` takes: the platform's (tool mode, trials), those of an
        agent whose tools the virtual API server serves (tools down), and the task's own
        (TaskSpec.options). ValueError for a task the suite does not have."""
        spec = self.evaluator.task(task)
        served = (
            SERVED_TOOL_OPTIONS
            if spec.agent and self.served_tools is not None and self.served_tools.serves(task)
            else ()
        )
        return (*PLATFORM_OPTIONS, *served, *spec.options)

    def check_options(self, task: str, given: Mapping[str, Any]) -> dict[str, Any]:
        """A run's options as given, each checked against its declaration (Suite.options):
        the one check every way of launching goes through. OptionError naming the first option
        the task does not declare (listing the ones it does) or whose value its declaration
        does not allow (saying what it takes)."""
        declared = {option.name: option for option in self.options(task)}
        checked: dict[str, Any] = {}
        for name, value in given.items():
            option = declared.get(name)
            if option is None:
                raise OptionError(
                    f"{self.name} task {task!r} has no option {str(name)[:80]!r}; its options: "
                    f"{', '.join(declared)}",
                    str(name)[:200],
                )
            checked[name] = option.check(value)
        return checked

    @property
    def splits(self) -> tuple[str, ...]:
        """Every split its tasks read, in task order."""
        seen: dict[str, None] = {}
        for spec in self.tasks.values():
            for split in (*spec.splits, *spec.aux_splits):
                seen.setdefault(split, None)
        return tuple(seen)

    @cached_property
    def evaluator(self) -> Evaluator:
        return Evaluator(self)

    def context(
        self, item: Item, *, show_gold: bool = False, outputs: Sequence[JudgedOutput] = ()
    ) -> ItemContext:
        """What a human needs beside these outputs of one of this suite's samples to judge them
        (a summary of each, in the order given)."""
        return (self.item_context or default_item_context)(item, show_gold, outputs)

    def judgment_reader(self, fmt: str) -> JudgmentReader:
        try:
            return self.judgment_readers[fmt]
        except KeyError:
            raise ImportFormatError(
                f"suite {self.name!r} reads no judgment format {fmt!r}"
            ) from None


# --- lookups ------------------------------------------------------------------------------------


def suite_names() -> list[str]:
    return list(SUITE_MODULES)


def get_suite(name: str) -> Suite:
    try:
        module_path = SUITE_MODULES[name]
    except KeyError:
        raise ImportFormatError(
            f"unknown suite {name!r}; known suites: {', '.join(SUITE_MODULES)}"
        ) from None
    suite = getattr(importlib.import_module(module_path), "SUITE", None)
    if not isinstance(suite, Suite):
        raise ImportFormatError(f"{module_path} names no SUITE (a registry.Suite)")
    return suite


def all_suites() -> Iterator[Suite]:
    for name in SUITE_MODULES:
        yield get_suite(name)


def judgment_formats() -> dict[str, tuple[Suite, JudgmentReader]]:
    """Every published-judgment format any suite reads: format -> (suite, reader)."""
    return {
        fmt: (suite, reader)
        for suite in all_suites()
        for fmt, reader in suite.judgment_readers.items()
    }


def suites_serving_cache() -> list[Suite]:
    """The suites whose tools the virtual API server serves from a published response cache."""
    return [
        suite
        for suite in all_suites()
        if suite.served_tools is not None and suite.served_tools.read_cache is not None
    ]


def cache_protocol() -> ServedTools:
    """The served tools of the suite whose published API server the virtual API server stands in
    for (its clients' requests and its response caches)."""
    found = [s.served_tools for s in suites_serving_cache() if s.served_tools is not None]
    if len(found) != 1:
        raise ImportFormatError(
            f"{len(found)} suites publish a response cache; the virtual API server speaks one's"
        )
    return found[0]


def study_questions(kind: str) -> list[dict[str, Any]]:
    """The question set a suite declares for a campaign kind (the human study of its paper:
    MetaTool's tool motivations, StableToolBench's Turing test, WTU-Eval's error types); []
    when no suite declares one."""
    for suite in all_suites():
        if kind in suite.questions:
            return list(suite.questions[kind])
    return []


def gold_editing(reference: Any) -> GoldEditing | None:
    """The gold editing of the suite whose gold this stored reference is (None: none claims it)."""
    if not isinstance(reference, Mapping | list):
        return None
    for suite in all_suites():
        for gold in suite.golds:
            if gold.recognizes(reference):
                return gold
    return None


def step_keyed_golds() -> tuple[str, ...]:
    """Every registered plan gold's step-keyed task golds."""
    keys: dict[str, None] = {}
    for suite in all_suites():
        for gold in suite.golds:
            for key in gold.step_keyed:
                keys.setdefault(key, None)
    return tuple(keys)


def is_output_reference(text: str, tools: Collection[str] | None) -> bool:
    """Whether any registered gold writes `text` as a reference to an earlier call's output."""
    return any(
        gold.output_reference(text, tools)
        for suite in all_suites()
        for gold in suite.golds
        if gold.output_reference is not None
    )
