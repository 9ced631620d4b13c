"""UltraTool evaluation (Huang et al., 2024; papers/004, section 3): prompts, answer parsing and
the key-value metrics, as pure functions over the protocol in benchmarks/kit/protocol.py.

Tasks (each reads split "test" by default, and only the items whose reference holds the task's
gold: a non-empty list of steps, or for planning a non-empty plan text; see select_steps):
  - planning: given the question alone (no toolset: the paper's planning is tool-independent),
    write a tree-structured plan, one numbered step a line (1., 1.1, 1.2, 2., ...);
  - tool_creation: given the question, the plan, a toolset that lacks some tools and the steps
    whose tool is missing, create each missing tool: name, description, arguments and results
    as JSON schema;
  - tool_creation_awareness: given the question, the plan and an offered toolset that may lack
    tools, say per tool step whether a new tool must be created (1) or an offered tool fits (0);
  - tool_usage_awareness: given the question and the plan, say per child step whether it needs a
    tool (1) or not (0);
  - tool_selection: given the question, the plan and a toolset with interference tools, name the
    tool for each tool step;
  - tool_usage: given the question, the plan, the toolset and each tool step's tool, write the
    call's arguments.
  Planning and tool creation are judged by an LLM (1-10 per dimension with the reference shown
  and anchored at 8, reported / 10; METRICS.md): the judge templates "ultratool.planning" and
  "ultratool.tool_creation" in judges.py read the outputs these tasks keep. Their own per-item
  scores below are format-level only, never a measure of quality.

How the tasks are composed: tasks.py declares each task as a protocol.Task whose parts are the
functions here (native.py's loop for the native form), each bound to the task's Form, the data
its parts read of it: the key its gold, wording and offered toolset are kept under; its Wording
(its worked examples' gold and toolset, the toolset an item offers, the input block, the answer
written as the prompt asks); the options it checks; and its Reference (what variant=reference
fixes and how it reads an answer, for the three tasks it reproduces; None for the others, which
refuse the variant). The parts differ by what the task asks for:
  - planning: parse_plan, score_plan, select_plans;
  - tool_creation: parse_created_tools, score_created_tools, select_steps;
  - tool_creation_awareness, tool_usage_awareness: parse_steps with an awareness StepReader,
    score_accuracy on "value", select_steps;
  - tool_selection: parse_steps with the selection reader, score_accuracy on "tool",
    select_steps;
  - tool_usage: parse_steps with the usage reader, score_usage, select_usage;
  every task: build_prompt, aggregate, prepare and read_predictions with its own Form.

The input per task is what the paper describes: the question (input["query"]), the gold plan's
steps (reference["steps"], numbers and text only, never the gold tools), the steps to answer
(the step numbers of the task's gold, as UltraTool's own task files mark them), and the offered
toolset: input["toolsets"][task] when the task file gave one, else the sample's tools
(candidate_tools), each described from ctx.tools as {"name", "description", "arguments",
"results"}. Tool usage also shows each step's gold tool name, as the paper gives it.

Options (TaskSpec.options, a run's options override them):
  - unparsed: "wrong" (default) scores an unreadable answer as wrong on every step; "exclude"
    leaves the item out of the metrics (its `unparsed` value still counts it).
  - variant (tool_usage_awareness, tool_creation_awareness, tool_usage): "default" or
    "reference". "reference" gives what UltraTool's published evaluation code gives (and so what
    the paper reports on its published predictions): reference.py reads the text as that code
    does, with its repairs and its text-level replacements of true/None/null, bugs included;
    steps match on the first space-separated token of their step text, the gold's as the
    published task file writes it ("1.2", "2." or "2", never rebuilt from the step number:
    published.py); the run-level figures (awareness accuracies, tool usage's levenshtein_local)
    pool every gold step and are rounded to 4 decimals as fractions; tool usage reads only
    "param", scores 0 for a gold step without arguments and counts a sample without a gold step
    as one step scoring 0. It fixes unparsed=wrong, local_average=steps and
    no_argument_step=zero: giving another value with it is an error, as is variant=reference
    for the other tasks (tool selection's reading is not documented; planning and tool creation
    are judged). A launched run under it asks for tool-usage arguments under "param" (the only
    key it reads). The default keeps the safe literal reading and the safe repairs;
    deviations.md lists, item by item, where the two differ and why.
  - reference_outputs (with variant=reference): "gpt" (default) or "other": whose published
    prediction file the outputs come from; UltraTool's evaluation trims other models' text
    further (reference.py).
  - local_average: "steps" (default; as the reference scorer does, every gold step of every
    sample pooled, for awareness local accuracy and for tool usage alike) or "samples" (the
    mean over samples of each sample's local value).
  - no_argument_step (tool_usage): how a gold step whose call has no arguments scores. "answered"
    (default): 100 when the step is answered with an arguments object, which is what "mean over
    the gold keys" gives a perfect answer; "zero": 0 always, as the reference scorer does (its
    empty per-step list scores 0), under which a perfect answer scores below 100.
  - min_completion_shots: completion-style prompts show at least this many examples (default 1)
    even when the run asks for fewer shots: a base model continues a pattern and has none to
    continue without one. Chat prompts show exactly `shots`.

Metrics (all percentages, 0-100; per item and per run; rounded to 2 decimals per run):
  Steps are matched on their step number: the first number of the predicted step ("1.2" in
  "1.2 Get the forecast", 1.2, "1.2.") against the gold's; the first prediction for a step
  counts; predicted steps that are not in the gold are ignored (extra steps cost nothing, as in
  the reference scorer); a gold step without a usable prediction is wrong.
  - tool_creation_awareness, tool_usage_awareness, tool_selection:
      accuracy_global: 100 when every gold step is right (the whole list equals the gold list);
      accuracy_local: the share of gold steps that are right.
    Awareness: the predicted 0/1 equals the gold; selection: the predicted tool name equals the
    gold name exactly (after trimming and undoing the markdown escape `\\_`).
  - tool_usage:
      levenshtein_local (headline, the paper's metric): per gold step, the mean over the gold
        argument keys of 1 - normalised Levenshtein distance between str(gold value) and
        str(predicted value) (distance / length of the longer string; both empty: distance 0);
        an empty gold value ("", [], {} or null) scores 1 only against an empty prediction; a
        missing key or step scores 0; extra predicted keys are not penalised; the predicted
        tool name is not compared (the input gives it);
      kv_accuracy_local: the share of gold steps whose every gold key is predicted with the same
        value (str(gold) == str(predicted); empty against empty), i.e. steps scoring exactly 1
        above; extra keys again not penalised;
      kv_accuracy_global: 100 when every gold step of the sample is right in that sense.
  - planning (format only; the judge scores quality):
      well_formed (headline): the output's numbered lines form one plan: numbered from 1 in
        document order without gaps (1, 1.1, 1.2, 1.2.1, 2, ..., as the importer checks gold
        plans) and every step has text;
      hierarchical: well formed and at least one child step (the paper asks for a tree).
  - tool_creation (format only; the judge scores quality):
      well_formed (headline): every created tool has a non-empty name and description, and
        arguments and results that are JSON schemas (an object with "type" or "properties";
        "properties", when given, an object);
      steps_answered: the share of the gold steps that got a created tool, matched on the step
        number; tools given without a step fill the unanswered gold steps in order.
  - unparsed (every task): the share of items whose output could not be read at all (planning:
    no numbered step; tool_creation: no tool object with a name).
  A failed model call (score(None, ...)) scores like a wrong answer and is not `unparsed`.

Output format the prompts ask for: one JSON list on one line, one object per step to answer:
    tool_usage_awareness     [{"step": "1.1", "needs_tool": 0}, ...]
    tool_creation_awareness  [{"step": "1.2", "needs_new_tool": 1}, ...]
    tool_selection           [{"step": "1.2", "tool": "tool_name"}, ...]
    tool_usage               [{"step": "1.2", "tool": "tool_name", "arguments": {"key": "value"}}]
    tool_creation            [{"step": "2.1", "tool": {"name", "description", "arguments",
                              "results"}}]
    planning                 the plan as text, one step a line: "1. Check the weather",
                             "1.1 Note the city (City: Ghent)", ...
Parsing of the two judged tasks keeps the output text untouched in Outcome.output (the judge
reads it) and records what it looks like in Outcome.answer:
  - planning: {"steps": [{"step", "text"}], "well_formed", "hierarchical"}. A plan line is a
    step number (1, 1., 1.2, 1.2.) after optional markdown (#, -, *, **, "Step"), then the
    text; other lines (a preamble, code fences) are ignored and counted in the note. A step
    text may carry a call or a tool name: the prompt does not ask for one, the judge decides.
  - tool_creation: [{"step": "2.1" | None, "tool": {"name", "description", "arguments",
    "results"}, "problems": [...]}] from JSON (or a Python-style literal) anywhere in the text:
    a list of {"step", "tool": {...}}, bare tool objects, an object keyed by step number, or a
    wrapper ("tools", "created_tools", "answer", ...); the last value holding tools counts (an
    echo of the offered toolset comes first), or every single tool object when they come one
    by one (values are read whole, and lists repaired, as for the other tasks below). Field
    aliases: parameters/params/args for arguments, returns/return/output/outputs for results.
Parsing of the other tasks is tolerant and never evaluates text:
  - JSON or Python-style literals (single quotes, True/None, as UltraTool's published outputs
    write them; toolcall's safe literal reader) anywhere in the output (prose, code fences),
    each read whole (reading.values): a list that mixes quote styles or holds True is one list,
    never the run of its step objects that happen to be JSON. The last list of step objects; a
    wrapper object whose "steps"/"answer"/"result"/"output" holds one; an object keyed by step
    number ({"1.1": 0}); or a run of single step objects.
  - When no list reads as written, a repaired one (reading.repair: a closing brace missing or
    one too many, an apostrophe inside a quoted string, a missing comma, a list cut off after
    its last complete step) outranks the step objects read from inside it. The repairs add or
    remove brackets, braces, commas and string delimiters, never a character of a string
    (deviations.md compares them with UltraTool's own).
  - Lines "1.2: 1", "1.2 tool_name", "1.2 tool_name(key='value')": a step number, then the value.
  - Value spellings: awareness 0/1, "0"/"1", true/false, yes/no, under needs_tool /
    needs_new_tool or UltraTool's own key "tool" (also "value", "answer", "label"); selection
    "tool" (also "name", "tool_name", "value"), a call's name counts; usage "arguments" (also
    "param", "params", "parameters", "args"), or a call string `tool(key='value')` under "call"
    or "tool" or on a line, read by toolcall.parse_tool_call (the strict reader: a call with
    code in it is refused and the step counts as unanswered).
  No readable list (or a list none of whose entries can be read) is Outcome(parsed=False).

Published outputs (`read_predictions`): JSON Lines index-aligned with test.json and the task
files (line i, counting non-blank lines from 1, is about sample i: external_id "i", split
"test"). A line is a JSON string (the output itself) or an object holding the output under the
first present of "output", "prediction", "predict", "response", "init output" (the key of
UltraTool's published GPT outputs), "total output" → "init output" (its other published
outputs) or "data" → "init output" (its published planning evaluations, see
judges.read_planning_evaluations); a list of strings gives its first string, any other list or
object is serialised as JSON text. Anything else raises ImportFormatError naming the file, line
and field.

Prompts and few-shot examples are ours (prompts/templates.toml, prompts/examples.toml; the judge
prompts prompts/judge_*.txt), written after the paper's description: UltraTool's repository has
no licence, so none of its content ships here.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from string import Template
from typing import Any

from benchmarks.kit.base import ImportFormatError, iter_jsonl, type_name
from benchmarks.kit.predictions import python_literal
from benchmarks.kit.protocol import (
    Context,
    Item,
    MetricSpec,
    Option,
    Outcome,
    Prompt,
    PublishedOutput,
    Scored,
    Scores,
    TaskSpec,
    ToolSpec,
    mean,
    metric_specs,
    tool_mode,
)
from benchmarks.kit.toolcall import ToolCall, ToolCallError, looks_like_call, parse_tool_call
from benchmarks.suites.ultratool import published, reading, reference
from benchmarks.suites.ultratool.importer import PlanError, build_plan, step_number

__all__ = [
    "FORMS",
    "REFERENCE_TASKS",
    "TASKS",
    "VARIANTS",
    "Form",
    "Reference",
    "StepReader",
    "Wording",
    "aggregate",
    "argument_similarity",
    "build_prompt",
    "levenshtein",
    "normalized_levenshtein",
    "parse_created_tools",
    "parse_plan",
    "parse_steps",
    "prepare",
    "read_predictions",
    "reference_output",
    "score_accuracy",
    "score_created_tools",
    "score_plan",
    "score_usage",
    "select_plans",
    "select_steps",
    "select_usage",
]

PROMPTS = Path(__file__).parent / "prompts"

ACCURACY_METRICS = ("accuracy_global", "accuracy_local", "unparsed")
USAGE_METRICS = ("levenshtein_local", "kv_accuracy_global", "kv_accuracy_local", "unparsed")
PLANNING_METRICS = ("well_formed", "hierarchical", "unparsed")
CREATION_METRICS = ("well_formed", "steps_answered", "unparsed")
VARIANTS = ("default", "reference")
# The options of the tasks (TaskSpec.options; the module's docstring says what each does).
UNPARSED_OPTION = Option(
    "unparsed",
    "text",
    "wrong",
    "an unreadable answer is wrong on every step, or the item is left out (still counted)",
    choices=("wrong", "exclude"),
)
SHOTS_OPTION = Option(
    "min_completion_shots",
    "integer",
    1,
    "completion-style prompts show at least this many examples (a base model continues a pattern)",
    minimum=0,
)
LOCAL_AVERAGE_OPTION = Option(
    "local_average",
    "text",
    "steps",
    "local accuracy pools every gold step of every sample, or is the mean over samples",
    choices=("steps", "samples"),
)
VARIANT_OPTIONS: tuple[Option, ...] = (
    Option(
        "variant",
        "text",
        "default",
        "default: the safe reading; reference: what UltraTool's published evaluation code gives",
        choices=VARIANTS,
    ),
    Option(
        "reference_outputs",
        "text",
        "gpt",
        "with variant=reference: whose published predictions the outputs are (gpt or other)",
        choices=reference.OUTPUTS,
    ),
)
NO_ARGUMENT_OPTION = Option(
    "no_argument_step",
    "text",
    "answered",
    "a gold step without arguments scores 100 when answered with an arguments object, or 0 "
    "(the reference scorer)",
    choices=("answered", "zero"),
)
# Every metric but `unparsed` is a score, higher better, per item and per run (the per-run
# value is the mean, or the pooled share, of the per-item ones). Planning's and tool creation's
# scores check the format only; their quality is the judges'.
METRIC_TEXT = {
    "accuracy_global": "every gold step right",
    "accuracy_local": "% of the gold steps right",
    "levenshtein_local": "1 - normalised Levenshtein distance of the argument values (paper)",
    "kv_accuracy_global": "every gold step's arguments exactly right",
    "kv_accuracy_local": "% of the gold steps whose arguments are exactly right",
    "well_formed": "the output has the asked form (format only)",
    "hierarchical": "a well-formed plan with child steps (format only)",
    "steps_answered": "% of the gold steps that got a created tool (format only)",
}
# Per item 100 or 0, a fact about the output; per run the share of such outputs.
UNPARSED_ITEM = MetricSpec.flag("unparsed", "lower", "100 when the output could not be read")
UNPARSED_RUN = MetricSpec.score("unparsed", "lower", "% of outputs that could not be read")


def _spec(
    name: str,
    title: str,
    metrics: tuple[str, ...],
    description: str,
    native: bool = False,
    options: tuple[Option, ...] = (),
) -> TaskSpec:
    scores = [
        MetricSpec.score(metric, description=METRIC_TEXT[metric])
        for metric in metrics
        if metric != "unparsed"
    ]
    return TaskSpec(
        name=name,
        title=title,
        splits=("test",),
        metrics=metrics,
        percent=frozenset(metrics),
        options=(UNPARSED_OPTION, LOCAL_AVERAGE_OPTION, SHOTS_OPTION, *options),
        native=native,
        description=description,
        item_metrics=metric_specs(*scores, UNPARSED_ITEM),
        run_metrics=metric_specs(*scores, UNPARSED_RUN),
    )


TASKS: dict[str, TaskSpec] = {
    "planning": _spec(
        "planning",
        "Planning",
        PLANNING_METRICS,
        "The question alone: write a tree-structured plan (1., 1.1, 1.2, 2., ...). Quality is "
        "scored by the LLM judge ultratool.planning (six dimensions and Overall, 1-10, / 10); "
        "the automatic score here is format-level only (a well-formed, hierarchical plan).",
    ),
    "tool_creation_awareness": _spec(
        "tool_creation_awareness",
        "Tool creation awareness",
        ACCURACY_METRICS,
        "Per tool step: does the offered toolset hold a suitable tool, or must one be created?",
        options=VARIANT_OPTIONS,
    ),
    "tool_creation": _spec(
        "tool_creation",
        "Tool creation",
        CREATION_METRICS,
        "Per step whose tool the toolset lacks: create the tool (name, description, arguments and "
        "results as JSON schema). Quality is scored by the LLM judge ultratool.tool_creation "
        "(five dimensions and Overall, 1-10, / 10); the automatic score here is format-level "
        "only (well-formed tools, steps answered).",
    ),
    "tool_usage_awareness": _spec(
        "tool_usage_awareness",
        "Tool usage awareness",
        ACCURACY_METRICS,
        "Per child step of the plan: does it need a tool?",
        native=True,
        options=VARIANT_OPTIONS,
    ),
    "tool_selection": _spec(
        "tool_selection",
        "Tool selection",
        ACCURACY_METRICS,
        "Per tool step: the right tool from a toolset with interference tools.",
        native=True,
    ),
    "tool_usage": _spec(
        "tool_usage",
        "Tool usage",
        USAGE_METRICS,
        "Per tool step, given its tool: the call's arguments (key-value Levenshtein, accuracy).",
        native=True,
        options=(NO_ARGUMENT_OPTION, *VARIANT_OPTIONS),
    ),
}

# Where an answer's step object holds its value: awareness's 0/1 (UltraTool's own key "tool"
# too), selection's tool name, usage's arguments.
USAGE_AWARENESS_KEYS = ("needs_tool", "tool", "value", "answer", "label")
CREATION_AWARENESS_KEYS = ("needs_new_tool", "tool", "value", "answer", "label")
SELECTION_KEYS = ("tool", "name", "tool_name", "value", "answer")
ARGUMENT_KEYS = ("arguments", "param", "params", "parameters", "args")
WRAPPER_KEYS = ("steps", "answer", "answers", "result", "results", "output", "plan")
OUTPUT_KEYS = ("output", "prediction", "predict", "response", "init output")

ANSWER_HEADER = "### Answer"
# A completion answer is one line; the examples are separated by blank lines and headers.
COMPLETION_STOP = ("\n\n", "\n###")


# Options a task checks, with the values each may take.
UNPARSED_CHOICES = ("unparsed", ("wrong", "exclude"))
LOCAL_AVERAGE_CHOICES = ("local_average", ("steps", "samples"))
NO_ARGUMENT_CHOICES = ("no_argument_step", ("answered", "zero"))


# --- what a task's parts read of it -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reference:
    """What variant=reference fixes for a task whose published evaluation it reproduces.

    settings: the options UltraTool's evaluation fixes where the default lets a run choose (an
        unreadable answer is wrong; local accuracy and tool usage pool every gold step of every
        sample; tool usage scores 0 for a step whose gold has no arguments);
    rounded: the run-level figures it rounds to 4 decimals as fractions;
    reader: the reader of reference.py it reads an answer with (reference.AWARENESS, USAGE);
    entry(token, entry): one step of the answer read in the task's normal form, keyed by the
        first token of its step text, or None when the reference skips it;
    first_of_lists: whether the reference takes the first of a list of lists (tool usage)."""

    settings: Mapping[str, str]
    rounded: tuple[str, ...]
    reader: str
    entry: Callable[[str, Mapping[str, Any]], dict[str, Any] | None]
    first_of_lists: bool = False


@dataclass(frozen=True, slots=True)
class Wording:
    """What a task's prompt shows and asks, beside its table in prompts/templates.toml.

    example_gold(example, specs), example_toolset(example): a worked example's gold steps and
        offered tool names (prompts/examples.toml);
    offered(item, task, gold): the names of the tools an item's prompt offers;
    render_input(view): the input block of a sample;
    answer(view, variant): a sample's gold written as the prompt asks for the answer;
    gold_output(item, task, variant): an item's gold so written (reference_output)."""

    example_gold: Callable[[Mapping[str, Any], Mapping[str, ToolSpec]], list[dict[str, Any]]]
    example_toolset: Callable[[Mapping[str, Any]], list[str]]
    offered: Callable[[Item, str, Sequence[Mapping[str, Any]]], list[str]]
    render_input: Callable[[_View], str]
    answer: Callable[[_View, str], str]
    gold_output: Callable[[Item, str, str], str]


@dataclass(frozen=True, slots=True)
class StepReader:
    """How the default variant reads one step of a step task's answer in the task's normal form:
    entry(step, entry, notes) from a step object, line(step, rest, notes) from a line "1.2 ...",
    each None when the step cannot be read (notes say why)."""

    entry: Callable[[str, Mapping[str, Any], list[str]], dict[str, Any] | None]
    line: Callable[[str, str, list[str]], dict[str, Any] | None]


@dataclass(frozen=True, slots=True)
class Form:
    """What a task's parts read of the task beyond its spec.

    name: the key its gold, prompt wording and offered toolset are kept under
        (reference[name], templates.toml [tasks.<name>], input["toolsets"][name]);
    wording: its prompt (Wording);
    checks: the options it checks, with their allowed values;
    reference: what variant=reference fixes for it; None when it has no reference reading."""

    name: str
    wording: Wording
    checks: tuple[tuple[str, tuple[str, ...]], ...] = (UNPARSED_CHOICES, LOCAL_AVERAGE_CHOICES)
    reference: Reference | None = None

    def under_reference(self, ctx: Context) -> Reference | None:
        """What variant=reference fixes when the run is under it, else None, after checking
        that the variant applies to the task and that no option given with it contradicts it."""
        variant = ctx.option("variant") or "default"
        if variant not in VARIANTS:
            raise ValueError(
                f"option variant must be one of {', '.join(VARIANTS)}, got {variant!r}"
            )
        if variant == "default":
            if "reference_outputs" in ctx.options:
                raise ValueError("option reference_outputs applies only with variant=reference")
            return None
        task = ctx.task.name
        if self.reference is None:
            raise ValueError(
                f"variant=reference reproduces UltraTool's published evaluation of "
                f"{', '.join(REFERENCE_TASKS)}; {task} has no reference reading here"
            )
        for name, value in self.reference.settings.items():
            given = ctx.options.get(name, value)
            if given != value:
                raise ValueError(
                    f"variant=reference scores {task} with {name}={value}, as UltraTool's "
                    f"evaluation does; {name}={given!r} contradicts it"
                )
        return self.reference

    def variant(self, ctx: Context) -> str:
        """The run's variant, checked as under_reference checks it."""
        return "default" if self.under_reference(ctx) is None else "reference"

    def option(self, ctx: Context, name: str, allowed: Sequence[str]) -> str:
        value = ctx.option(name)
        fixed = self.under_reference(ctx)
        if fixed is not None:
            value = fixed.settings.get(name, value)
        if value not in allowed:
            raise ValueError(f"option {name} must be one of {', '.join(allowed)}, got {value!r}")
        return str(value)

    def check(self, ctx: Context) -> None:
        """Raises ValueError naming the first option of the run that does not apply."""
        if self.under_reference(ctx) is not None:
            self.option(ctx, "reference_outputs", reference.OUTPUTS)
            if tool_mode(ctx) == "native":
                raise ValueError("variant=reference reads text answers: it needs tool_mode=text")
        for name, allowed in self.checks:
            self.option(ctx, name, allowed)


def _reference_of(item: Item) -> dict[str, Any]:
    return item.reference if isinstance(item.reference, dict) else {}


def _gold(item: Item, task: str) -> list[dict[str, Any]]:
    gold = _reference_of(item).get(task)
    return gold if isinstance(gold, list) else []


def _planning_gold(item: Item) -> str:
    reference = item.reference if isinstance(item.reference, dict) else {}
    gold = reference.get("planning")
    return gold if isinstance(gold, str) else ""


def prepare(items: Sequence[Item], ctx: Context, *, form: Form) -> list[dict[str, Any]]:
    """No per-item context. Checks the run's options first, so that an import with an option
    that does not apply stops with the reason before anything is scored."""
    form.check(ctx)
    return [{} for _ in items]


def select_plans(items: Sequence[Item], ctx: Context, *, form: Form) -> list[Item]:
    """Planning's items: those whose reference holds a non-empty plan text. Checks the run's
    options first, so that a launch with an option that does not apply stops with the reason."""
    form.check(ctx)
    return [item for item in items if _planning_gold(item).strip()]


def select_steps(items: Sequence[Item], ctx: Context, *, form: Form) -> list[Item]:
    """The items whose reference holds the task's gold, a non-empty list of steps. Checks the
    run's options first, as select_plans does."""
    form.check(ctx)
    return [item for item in items if _gold(item, form.name)]


def select_usage(items: Sequence[Item], ctx: Context, *, form: Form) -> list[Item]:
    """Tool usage's items: as select_steps, but under variant=reference every item whose
    reference holds a list of steps, even an empty one."""
    form.check(ctx)
    if form.under_reference(ctx) is not None:
        # UltraTool's evaluation scores every record of its task file: one without a gold step
        # counts as one step scoring 0.
        return [item for item in items if isinstance(_reference_of(item).get(form.name), list)]
    return [item for item in items if _gold(item, form.name)]


# --- Levenshtein --------------------------------------------------------------------------------


def levenshtein(a: str, b: str) -> int:
    """Edit distance with unit-cost insertions, deletions and substitutions of characters."""
    if a == b:
        return 0
    # A common prefix or suffix never changes the distance; argument values often share both.
    start = 0
    while start < len(a) and start < len(b) and a[start] == b[start]:
        start += 1
    a, b = a[start:], b[start:]
    end = 0
    while end < len(a) and end < len(b) and a[-1 - end] == b[-1 - end]:
        end += 1
    if end:
        a, b = a[:-end], b[:-end]
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return len(a)
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, start=1):
        current = [i]
        for j, char_b in enumerate(b, start=1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b))
            )
        previous = current
    return previous[-1]


def normalized_levenshtein(a: str, b: str) -> float:
    """levenshtein / the longer length, in [0, 1]; 0 for two empty strings."""
    longest = max(len(a), len(b))
    return levenshtein(a, b) / longest if longest else 0.0


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str | list | dict) and len(value) == 0)


def argument_similarity(gold: Any, predicted: Any) -> float:
    """1 - normalised Levenshtein between str(gold) and str(predicted); an empty gold value
    scores 1 only against an empty prediction."""
    if _empty(gold):
        return 1.0 if _empty(predicted) else 0.0
    return 1.0 - normalized_levenshtein(str(gold), str(predicted))


def _same_argument(gold: Any, predicted: Any) -> bool:
    if _empty(gold):
        return _empty(predicted)
    return str(gold) == str(predicted)


def _reference_usage_step(
    gold_arguments: Any, entry: Mapping[str, Any] | None
) -> tuple[float, bool]:
    """(similarity, exact) of one gold tool-usage step as UltraTool's evaluation scores it: a
    gold step without arguments, an unanswered step and a `param` that is not an object score
    0; each gold key then scores 1 - normalised Levenshtein between str(gold) and str(predicted)
    with `\\_` undone, an empty gold value 1 only against an empty prediction, a missing key 0."""
    gold = gold_arguments if isinstance(gold_arguments, dict) else {}
    predicted = entry.get("arguments") if entry is not None else None
    if not gold or not isinstance(predicted, dict):
        return 0.0, False
    similarities: list[float] = []
    exact = True
    for key, value in gold.items():
        if key not in predicted:
            similarities.append(0.0)
            exact = False
        elif _empty(value):
            right = _empty(predicted[key])
            similarities.append(1.0 if right else 0.0)
            exact = exact and right
        else:
            text = str(predicted[key]).replace("\\_", "_")
            similarities.append(1.0 - normalized_levenshtein(str(value), text))
            exact = exact and str(value) == text
    return sum(similarities) / len(similarities), exact


def _usage_step(
    gold_arguments: Any, entry: Mapping[str, Any] | None, no_argument_step: str
) -> tuple[float, bool]:
    """(similarity, exact) of one gold tool-usage step."""
    if entry is None or not isinstance(entry.get("arguments"), dict):
        return 0.0, False
    predicted = entry["arguments"]
    gold = gold_arguments if isinstance(gold_arguments, dict) else {}
    if not gold:
        return (1.0, True) if no_argument_step == "answered" else (0.0, False)
    similarities = [
        argument_similarity(value, predicted[key]) if key in predicted else 0.0
        for key, value in gold.items()
    ]
    exact = all(key in predicted and _same_argument(v, predicted[key]) for key, v in gold.items())
    return sum(similarities) / len(similarities), exact


# --- parsing ------------------------------------------------------------------------------------

_LINE = re.compile(
    r"^\s*(?:[-*•]\s*)?(?:\*\*)?(?:step\s*)?(\d+(?:\.\d+)*)\.?(?:\*\*)?"
    r"(?=[\s:)=\->→]|$)[\s:)=\->→]*(.*)$",
    re.IGNORECASE,
)
_LINE_BINARY = re.compile(r"(?:^|\W)(0|1|yes|no|true|false)[\s.`*\"']*$", re.IGNORECASE)
# No space before "(": step texts carry parenthesised notes ("Get the time (City: Ghent)").
_LINE_CALL = re.compile(r"[^\W\d][\w.]*\(.*\)", re.DOTALL)
_TOOL_NAME = re.compile(r"^[^\W\d][\w.\-]*$")
_BINARY = {"0": 0, "1": 1, "no": 0, "yes": 1, "false": 0, "true": 1}


def _step_key(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        value = repr(value)
    parsed = step_number(value.strip() if isinstance(value, str) else value)
    return parsed[0] if parsed else None


def _first(entry: Mapping[str, Any], keys: Sequence[str]) -> Any:
    for key in keys:
        if entry.get(key) is not None:
            return entry[key]
    return None


def _binary(value: Any) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float) and value in (0, 1):
        return int(value)
    if isinstance(value, str):
        return _BINARY.get(value.strip().strip("'\"`*").strip().lower())
    return None


def _unescape(value: Any) -> Any:
    # Models writing markdown escape underscores (`get\_weather`); the reference scorer undoes it.
    if isinstance(value, str):
        return value.replace("\\_", "_")
    if isinstance(value, dict):
        return {_unescape(key): _unescape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_unescape(item) for item in value]
    return value


def _tool_name(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    text = _unescape(value).strip().strip("`'\"*").strip()
    called = looks_like_call(text)
    if called:
        return called
    return text or None


def _read_call(text: str, step: str, notes: list[str]) -> tuple[str, dict[str, Any]] | None:
    try:
        call = parse_tool_call(_unescape(text))
    except ToolCallError as exc:
        notes.append(f"step {step}: call refused ({exc})")
        return None
    return call.name, call.arguments


def _read_arguments(value: Any, step: str, notes: list[str]) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return dict(_unescape(value))
    if isinstance(value, str) and value.strip():
        text = value.strip()
        if looks_like_call(text):
            call = _read_call(text, step, notes)
            return call[1] if call else None
        for reader in (json.loads, python_literal):
            try:
                parsed = reader(text)
            except (ValueError, RecursionError):
                continue
            if isinstance(parsed, dict):
                return dict(_unescape(parsed))
    notes.append(f"step {step}: arguments are not an object")
    return None


def _read_entry(
    reader: StepReader, entry: Mapping[str, Any], notes: list[str]
) -> dict[str, Any] | None:
    """One predicted step in the task's normal form, or None when it cannot be read."""
    step = _step_key(entry.get("step"))
    if step is None:
        return None
    return reader.entry(step, entry, notes)


def _awareness_entry(
    step: str, entry: Mapping[str, Any], notes: list[str], *, keys: Sequence[str]
) -> dict[str, Any] | None:
    """An awareness step: {"step", "value"}, the 0/1 under the first of `keys` present."""
    value = _binary(_first(entry, keys))
    if value is None:
        notes.append(f"step {step}: no 0/1 answer")
        return None
    return {"step": step, "value": value}


def _selection_entry(
    step: str, entry: Mapping[str, Any], notes: list[str]
) -> dict[str, Any] | None:
    """A selection step: {"step", "tool"}, the tool's name (a call's name counts)."""
    tool = _tool_name(_first(entry, SELECTION_KEYS))
    if tool is None:
        notes.append(f"step {step}: no tool name")
        return None
    return {"step": step, "tool": tool}


def _usage_entry(step: str, entry: Mapping[str, Any], notes: list[str]) -> dict[str, Any] | None:
    """A usage step: {"step", "tool", "arguments"}, from an arguments object or a call."""
    tool = _first(entry, ("tool", "name", "tool_name"))
    arguments_value = _first(entry, (*ARGUMENT_KEYS, "value"))
    call_text = _first(entry, ("call",))
    if call_text is None and isinstance(tool, str) and looks_like_call(tool.strip()):
        call_text = tool
    if arguments_value is None and isinstance(call_text, str):
        call = _read_call(call_text.strip(), step, notes)
        if call is None:
            return None
        return {"step": step, "tool": call[0], "arguments": call[1]}
    arguments = _read_arguments(arguments_value, step, notes)
    if arguments is None:
        return None
    return {"step": step, "tool": _tool_name(tool), "arguments": arguments}


def _as_steps(value: Any) -> list[dict[str, Any]] | None:
    """The step objects a parsed JSON value holds, [] for an explicit empty list, else None."""
    if isinstance(value, list):
        entries = [entry for entry in value if isinstance(entry, dict) and "step" in entry]
        if entries or not value:
            return entries
        if len(value) == 1:
            return _as_steps(value[0])
        return None
    if isinstance(value, dict):
        if "step" in value:
            return [value]
        for key in WRAPPER_KEYS:
            if isinstance(value.get(key), list | dict):
                inner = _as_steps(value[key])
                if inner is not None:
                    return inner
        if value and all(_step_key(key) is not None for key in value):
            return [{"step": key, "value": item} for key, item in value.items()]
    return None


def _pick(values: Sequence[Any]) -> tuple[list[dict[str, Any]] | None, bool]:
    """The steps the values hold, and whether they come from one list read whole (rather than
    from step objects written one by one, or nothing)."""
    lists: list[list[dict[str, Any]]] = []
    singles: list[dict[str, Any]] = []
    for value in values:
        if isinstance(value, dict) and "step" in value:
            singles.append(value)
            continue
        steps = _as_steps(value)
        if steps is not None:
            lists.append(steps)
    filled = [steps for steps in lists if steps]
    if filled:
        return filled[-1], True  # the answer follows any echo of the input
    if singles:
        return singles, False
    return ([] if lists else None), False


def _repaired(
    text: str, fragments: Sequence[reading.Found], accept: Callable[[Any], bool]
) -> Any | None:
    """A list that reads only once repaired (reading.repair), where the values read one by one
    are fragments of it: it must reach past them. Tried from the `[` that opens the list around
    the first fragment, then from the text's first `[`."""
    if fragments:
        starts = [text.rfind("[", 0, fragments[0].start), text.find("[")]
    else:
        starts = [text.find("[")]
    for start in dict.fromkeys(start for start in starts if start >= 0):
        fixed = reading.repair(text, start, accept)
        if fixed is not None and (not fragments or fixed.end >= fragments[-1].end):
            return fixed.value
    return None


def _line_entries(reader: StepReader, text: str, notes: list[str]) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for line in text.splitlines():
        match = _LINE.match(line)
        if not match:
            continue
        step = _step_key(match.group(1))
        rest = _unescape(match.group(2)).strip()
        if step is None or not rest:
            continue
        entry = reader.line(step, rest, notes)
        if entry is not None:
            entries.append(entry)
    return entries


def _awareness_line(step: str, rest: str, notes: list[str]) -> dict[str, Any] | None:
    """ "1.2: 1", "1.2 yes": the step's 0/1 at the end of the line."""
    found = _LINE_BINARY.search(rest)
    return {"step": step, "value": _BINARY[found.group(1).lower()]} if found else None


def _selection_line(step: str, rest: str, notes: list[str]) -> dict[str, Any] | None:
    """ "1.2 tool_name", "1.2 -> tool_name", "1.2 tool_name(...)": the step's tool name."""
    call = _LINE_CALL.search(rest)
    if call:
        name = looks_like_call(call.group(0))
    else:
        tail = re.split(r"->|→|:|=", rest)[-1]
        name = _unescape(tail).strip().strip("`'\"*.").strip()
    return {"step": step, "tool": name} if name and _TOOL_NAME.match(name) else None


def _usage_line(step: str, rest: str, notes: list[str]) -> dict[str, Any] | None:
    """ "1.2 tool_name(key='value')": the step's call, read by the strict reader."""
    call = _LINE_CALL.search(rest)
    if not call:
        return None
    read = _read_call(call.group(0), step, notes)
    return {"step": step, "tool": read[0], "arguments": read[1]} if read else None


# --- parsing the judged tasks (format only) -----------------------------------------------------

# A plan line: optional markdown (heading, bullet, bold, "Step"), the step number, then the text.
_PLAN_LINE = re.compile(
    r"^\s*(?:#{1,6}\s*)?(?:[-*•+]\s+)?(?:\*\*|__)?\s*(?:step\s+)?(\d+(?:\.\d+)*)\.?"
    r"(?=[\s:)\-\u2013\u2014*_]|$)[\s:)\-\u2013\u2014]*(?:\*\*|__)?\s*(.*)$",
    re.IGNORECASE,
)
ARGUMENT_ALIASES = ("arguments", "parameters", "params", "args")
RESULT_ALIASES = ("results", "returns", "return", "output", "outputs")
TOOL_WRAPPERS = ("tools", "created_tools", "new_tools", "tool_list", "answer", "result", "steps")


def _plan_lines(text: str) -> tuple[list[dict[str, str]], int]:
    """The numbered lines of a plan as [{"step", "text"}], and how many other non-blank lines
    there were (a preamble, code fences, commentary)."""
    steps: list[dict[str, str]] = []
    other = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        match = _PLAN_LINE.match(line)
        if not match:
            other += 1
            continue
        number = ".".join(str(int(part)) for part in match.group(1).split("."))
        body = match.group(2).strip()
        # Bold markers closing after the text ("**1. Check the weather**").
        body = re.sub(r"(?:\*\*|__)\s*$", "", body).strip()
        steps.append({"step": number, "text": body})
    return steps, other


def parse_plan(text: str, item: Item, ctx: Context, context: dict[str, Any]) -> Outcome:
    """Planning's answer: the output kept as written, with its numbered steps and whether they
    form one plan in `answer` (the module docstring)."""
    steps, other = _plan_lines(text)
    notes = [f"{other} line(s) outside the numbered steps"] if other else []
    if not steps:
        return Outcome(output=text, parsed=False, note="no numbered step (1., 1.1, ...) found")
    problems: list[str] = []
    try:
        # The importer's check of gold plans: numbers in document order, without gaps.
        build_plan([{"step": step["step"], "text": step["text"]} for step in steps])
    except PlanError as exc:
        problems.append(exc.message)
    untitled = [step["step"] for step in steps if not step["text"]]
    if untitled:
        problems.append(f"step(s) without text: {', '.join(untitled)}")
    well_formed = not problems
    hierarchical = well_formed and any("." in step["step"] for step in steps)
    if well_formed and not hierarchical:
        notes.append("a flat plan: no child step")
    answer = {"steps": steps, "well_formed": well_formed, "hierarchical": hierarchical}
    return Outcome(output=text, answer=answer, note="; ".join(problems + notes))


def _schema_problem(value: Any) -> str | None:
    if not isinstance(value, dict):
        return f"is {type_name(value)}, not a JSON schema object"
    if "type" not in value and "properties" not in value:
        return 'is not a JSON schema (neither "type" nor "properties")'
    if "properties" in value and not isinstance(value["properties"], dict):
        return '"properties" is not an object'
    return None


def _read_tool(value: Mapping[str, Any]) -> dict[str, Any]:
    """A created tool in normal form, with the format problems it has."""
    tool: dict[str, Any] = {
        "name": _unescape(value.get("name")),
        "description": value.get("description"),
        "arguments": _first(value, ARGUMENT_ALIASES),
        "results": _first(value, RESULT_ALIASES),
    }
    problems = []
    if not isinstance(tool["name"], str) or not tool["name"].strip():
        problems.append("name: missing or empty")
    if not isinstance(tool["description"], str) or not tool["description"].strip():
        problems.append("description: missing or empty")
    for key in ("arguments", "results"):
        if tool[key] is None:
            problems.append(f"{key}: missing")
        else:
            problem = _schema_problem(tool[key])
            if problem:
                problems.append(f"{key}: {problem}")
    return {"tool": tool, "problems": problems}


def _is_tool(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("name"), str)
        and any(key in value for key in ("description", *ARGUMENT_ALIASES, *RESULT_ALIASES))
    )


def _created_tools(value: Any, depth: int = 0) -> list[tuple[str | None, dict[str, Any]]]:
    """(step number or None, tool object) for every created tool a parsed JSON value holds."""
    if depth > 4:
        return []
    if isinstance(value, list):
        return [found for entry in value for found in _created_tools(entry, depth + 1)]
    if not isinstance(value, dict):
        return []
    step = _step_key(value["step"]) if "step" in value else None
    for key in ("tool", "created_tool", "new_tool"):
        if _is_tool(value.get(key)):
            return [(step, value[key])]
    if _is_tool(value):
        return [(step, value)]
    for key in TOOL_WRAPPERS:
        if isinstance(value.get(key), list | dict):
            inner = _created_tools(value[key], depth + 1)
            if inner:
                return inner
    if value and all(_step_key(key) is not None for key in value):
        return [
            (_step_key(key), tool)
            for key, item in value.items()
            for _, tool in _created_tools(item, depth + 1)
        ]
    return []


def _is_single(value: Any) -> bool:
    """A JSON value that is one created tool, bare or as {"step", "tool"}."""
    return isinstance(value, dict) and (
        _is_tool(value) or any(_is_tool(value.get(k)) for k in ("tool", "created_tool", "new_tool"))
    )


def parse_created_tools(text: str, item: Item, ctx: Context, context: dict[str, Any]) -> Outcome:
    """Tool creation's answer: the output kept as written, with the created tools and their
    format problems in `answer` (the module docstring)."""
    read = reading.values(text)
    found = [
        (tools, _is_single(entry.value)) for entry in read if (tools := _created_tools(entry.value))
    ]
    if all(single for _, single in found):
        # No list of tools read as written: a repaired one outranks its own fragments.
        singles = [entry for entry in read if _is_single(entry.value)]
        fixed = _repaired(text, singles, lambda value: bool(_created_tools(value)))
        if fixed is not None:
            found = [(_created_tools(fixed), False)]
    if not found:
        return Outcome(output=text, parsed=False, note="no created tool (an object with a name)")
    # The answer follows any echo of the offered toolset, so the last value holding tools counts;
    # tools written one object at a time (no enclosing list) count together.
    chosen, single = found[-1]
    if single:
        run: list[tuple[str | None, dict[str, Any]]] = []
        for tools, is_single in reversed(found):
            if not is_single:
                break
            run[:0] = tools
        chosen = run
    answer = [{"step": step, **_read_tool(tool)} for step, tool in chosen]
    problems = [
        f"{entry['tool']['name'] or '?'}: {problem}"
        for entry in answer
        for problem in entry["problems"]
    ]
    return Outcome(output=text, answer=answer, note="; ".join(problems))


def _steps_answered(outcome: Outcome, gold: Sequence[Mapping[str, Any]]) -> float | None:
    if not gold:
        return None
    wanted = [str(step["step"]) for step in gold]
    entries = outcome.answer if isinstance(outcome.answer, list) else []
    answered = {entry["step"] for entry in entries if entry.get("step") in wanted}
    # Tools written without a step number fill the gold steps still open, in order.
    spare = sum(1 for entry in entries if entry.get("step") is None)
    for step in wanted:
        if step not in answered and spare:
            answered.add(step)
            spare -= 1
    return 100.0 * len(answered) / len(wanted)


def _excluded(outcome: Outcome | None, ctx: Context, form: Form) -> Scores | None:
    """The scores of an unreadable answer the run leaves out (option unparsed=exclude): every
    metric None but `unparsed`; None when the answer is scored."""
    unparsed = outcome is not None and not outcome.parsed
    if unparsed and form.option(ctx, *UNPARSED_CHOICES) == "exclude":
        return {**{name: None for name in ctx.task.metrics}, "unparsed": 100.0}
    return None


def score_plan(
    outcome: Outcome | None, item: Item, ctx: Context, context: dict[str, Any], *, form: Form
) -> Scores:
    """Planning's format-level scores: well_formed, hierarchical (the judge scores quality)."""
    if outcome is None:  # a failed call: no output, nothing well formed
        return {name: 0.0 for name in ctx.task.metrics}
    excluded = _excluded(outcome, ctx, form)
    if excluded is not None:
        return excluded
    answer = outcome.answer if isinstance(outcome.answer, dict) else {}
    return {
        "well_formed": 100.0 if answer.get("well_formed") else 0.0,
        "hierarchical": 100.0 if answer.get("hierarchical") else 0.0,
        "unparsed": 0.0 if outcome.parsed else 100.0,
    }


def score_created_tools(
    outcome: Outcome | None, item: Item, ctx: Context, context: dict[str, Any], *, form: Form
) -> Scores:
    """Tool creation's format-level scores: well_formed, steps_answered (the judge scores
    quality)."""
    gold = _gold(item, form.name)
    if outcome is None:  # a failed call: no output, nothing well formed
        scores: Scores = {name: 0.0 for name in ctx.task.metrics}
        if not gold:
            scores["steps_answered"] = None
        return scores
    excluded = _excluded(outcome, ctx, form)
    if excluded is not None:
        return excluded
    entries = outcome.answer if isinstance(outcome.answer, list) else []
    well_formed = bool(entries) and all(not entry["problems"] for entry in entries)
    return {
        "well_formed": 100.0 if well_formed else 0.0,
        "steps_answered": _steps_answered(outcome, gold),
        "unparsed": 0.0 if outcome.parsed else 100.0,
    }


def _first_token(value: Any) -> str | None:
    """UltraTool's evaluation matches steps on the first whitespace-separated token of their
    step text ("1.2" in "1.2 Get the forecast", "1." in "1. Check the weather", "2" in
    "2 Obtain the ticket")."""
    words = str(value).split()
    return words[0] if words else None


def _json_safe(value: Any) -> bool:
    if value is None or isinstance(value, bool | str | int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_json_safe(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and _json_safe(item) for key, item in value.items())
    return False


def _reference_arguments(value: Any) -> Any:
    """A predicted `param` as stored: keys with `\\_` undone (the reference undoes it in keys
    and values; values are compared as str(), so their `\\_` is undone when scored). A value
    that JSON cannot hold (a tuple, a set, a complex number, bytes, a non-finite float, a
    non-text key inside) is stored as its str(), which is all the scoring reads of it."""
    if not isinstance(value, dict):
        return value if _json_safe(value) else str(value)
    return {
        str(key).replace("\\_", "_"): item if _json_safe(item) else str(item)
        for key, item in value.items()
    }


def _reference_value(
    token: str, entry: Mapping[str, Any], *, keys: Sequence[str]
) -> dict[str, Any] | None:
    """An awareness step as the reference reads it, its value read as the default reads it."""
    return {"step": token, "value": _binary(_first(entry, keys))}


def _reference_call(token: str, entry: Mapping[str, Any]) -> dict[str, Any] | None:
    """A tool-usage step as the reference reads it: only a step with "param" counts."""
    if "param" not in entry:
        return None
    tool = entry.get("tool")
    return {
        "step": token,
        "tool": tool if isinstance(tool, str) else None,
        "arguments": _reference_arguments(entry["param"]),
    }


def _parse_reference(text: str, ctx: Context, form: Form, fixed: Reference) -> Outcome:
    """The answer as UltraTool's published evaluation reads it (reference.py), in the task's
    normal form with each step keyed by its first token. Awareness values are read as the
    default reads them; tool usage takes only steps with "step" and "param"."""
    outputs = form.option(ctx, "reference_outputs", reference.OUTPUTS)
    result = reference.read(text, fixed.reader, outputs)
    if not result.ok:
        note = f"bad format: {result.how} (UltraTool's evaluation reads an empty answer)"
        return Outcome(output=text, answer=[], parsed=False, note=note)
    value = result.value
    if fixed.first_of_lists and isinstance(value, list) and value and isinstance(value[0], list):
        value = value[0]  # the reference takes the first of a list of lists
    answer: list[dict[str, Any]] = []
    seen: set[str] = set()
    for entry in value if isinstance(value, list | tuple) else []:
        if not isinstance(entry, dict) or "step" not in entry:
            continue
        token = _first_token(entry["step"])
        if token is None or token in seen:
            continue
        read = fixed.entry(token, entry)
        if read is None:
            continue
        seen.add(token)
        answer.append(read)
    notes = [f"read {result.how}"]
    if not answer:
        notes.append("no step the reference scores")
    return Outcome(output=text, answer=answer, note="; ".join(notes))


def parse_steps(
    text: str,
    item: Item,
    ctx: Context,
    context: dict[str, Any],
    *,
    form: Form,
    reader: StepReader,
) -> Outcome:
    """The predicted steps in the task's normal form, as `reader` reads each:
    [{"step", "value"}] (awareness), [{"step", "tool"}] (selection), [{"step", "tool",
    "arguments"}] (usage); under variant=reference as the task's Reference reads them."""
    fixed = form.under_reference(ctx)
    if fixed is not None:
        return _parse_reference(text, ctx, form, fixed)
    notes: list[str] = []
    found = reading.values(text)
    raw, whole = _pick([entry.value for entry in found])
    if not whole:
        # No list read as written: a repaired one outranks its own fragments (the step objects
        # that read one by one) and the lines.
        singles = [e for e in found if isinstance(e.value, dict) and "step" in e.value]
        fixed = _repaired(text, singles, lambda value: bool(_as_steps(value)))
        if fixed is not None:
            raw = _as_steps(fixed)
            notes.append("the list was read once repaired")
    if raw is not None:
        entries = [entry for entry in (_read_entry(reader, r, notes) for r in raw) if entry]
        if raw and not entries:
            note = "; ".join(["no step of the answer could be read", *notes])
            return Outcome(output=text, parsed=False, note=note)
    else:
        entries = _line_entries(reader, text, notes)
        if not entries:
            note = "; ".join(["no list of steps found", *notes])
            return Outcome(output=text, parsed=False, note=note)
    answer: list[dict[str, Any]] = []
    seen: set[str] = set()
    for entry in entries:
        if entry["step"] not in seen:  # the first answer for a step counts
            seen.add(entry["step"])
            answer.append(entry)
    return Outcome(output=text, answer=answer, note="; ".join(notes))


# --- scoring ------------------------------------------------------------------------------------


def _predicted(outcome: Outcome | None) -> dict[str, Mapping[str, Any]]:
    if outcome is None or not outcome.parsed or not isinstance(outcome.answer, list):
        return {}
    by_step: dict[str, Mapping[str, Any]] = {}
    for entry in outcome.answer:
        if isinstance(entry, dict) and isinstance(entry.get("step"), str):
            by_step.setdefault(entry["step"], entry)
    return by_step


def _step_key_of(item: Item, form: Form, as_reference: bool) -> Callable[[Mapping[str, Any]], str]:
    """How a gold step is looked up among the predicted ones: by its step number; under
    variant=reference by the first token of its step text, the gold's as its task file writes
    it (published.py), which is how the reference keys its answers."""
    if not as_reference:
        return lambda step: str(step["step"])
    texts = published.gold_step_texts(form.name, item.reference, item.metadata)

    def key(step: Mapping[str, Any]) -> str:
        text = texts.get(step["step"])
        return (_first_token(text) if text is not None else None) or step["step"]

    return key


def score_accuracy(
    outcome: Outcome | None,
    item: Item,
    ctx: Context,
    context: dict[str, Any],
    *,
    form: Form,
    field: str,
) -> Scores:
    """accuracy_global and accuracy_local of an answer per gold step, a step right when its
    `field` equals the gold's (awareness "value", selection "tool")."""
    excluded = _excluded(outcome, ctx, form)
    if excluded is not None:
        return excluded
    gold = _gold(item, form.name)
    predicted = _predicted(outcome)
    flag = 100.0 if outcome is not None and not outcome.parsed else 0.0
    as_reference = form.under_reference(ctx) is not None
    if not gold:
        return {**{name: None for name in ctx.task.metrics}, "unparsed": flag}
    key = _step_key_of(item, form, as_reference)
    right = [
        key(step) in predicted and predicted[key(step)].get(field) == step.get(field)
        for step in gold
    ]
    return {
        "accuracy_global": 100.0 if all(right) else 0.0,
        "accuracy_local": 100.0 * sum(right) / len(right),
        "unparsed": flag,
    }


def score_usage(
    outcome: Outcome | None, item: Item, ctx: Context, context: dict[str, Any], *, form: Form
) -> Scores:
    """Tool usage's levenshtein_local, kv_accuracy_global and kv_accuracy_local of an answer's
    arguments per gold step."""
    excluded = _excluded(outcome, ctx, form)
    if excluded is not None:
        return excluded
    gold = _gold(item, form.name)
    predicted = _predicted(outcome)
    flag = 100.0 if outcome is not None and not outcome.parsed else 0.0
    as_reference = form.under_reference(ctx) is not None
    if not gold:
        scores: Scores = {**{name: None for name in ctx.task.metrics}, "unparsed": flag}
        if as_reference:
            scores["levenshtein_local"] = 0.0  # one step scoring 0 (see select_usage)
        return scores
    key = _step_key_of(item, form, as_reference)
    mode = form.option(ctx, *NO_ARGUMENT_CHOICES)
    steps = [
        _reference_usage_step(step.get("arguments"), predicted.get(key(step)))
        if as_reference
        else _usage_step(step.get("arguments"), predicted.get(step["step"]), mode)
        for step in gold
    ]
    exact = [right for _, right in steps]
    return {
        "levenshtein_local": 100.0 * sum(sim for sim, _ in steps) / len(steps),
        "kv_accuracy_global": 100.0 if all(exact) else 0.0,
        "kv_accuracy_local": 100.0 * sum(exact) / len(exact),
        "unparsed": flag,
    }


def aggregate(scored: Sequence[Scored], ctx: Context, *, form: Form) -> Scores:
    """Run-level metrics: global values and `unparsed` are means over items; local values pool
    every gold step (option local_average "steps"; an item without a gold step counts as one)
    or average the items ("samples"). Under variant=reference, the figures the task's
    Reference names (the awareness accuracies, tool usage's levenshtein_local) are rounded to 4
    decimals as fractions before they become percentages, as UltraTool's evaluation reports
    them."""
    fixed = form.under_reference(ctx)
    rounded = fixed.rounded if fixed is not None else ()
    pooled = form.option(ctx, *LOCAL_AVERAGE_CHOICES) == "steps"
    result: Scores = {}
    for metric in ctx.task.metrics:
        value: float | None
        if pooled and metric.endswith("_local"):
            pairs: list[tuple[float, int]] = []
            for s in scored:
                item_value = s.scores.get(metric)
                if item_value is not None:
                    pairs.append((item_value, max(1, len(_gold(s.item, form.name)))))
            total = sum(count for _, count in pairs)
            value = sum(v * count for v, count in pairs) / total if total else None
        else:
            value = mean([s.scores.get(metric) for s in scored])
        if value is not None and metric in rounded:
            value = round(value / 100, 4) * 100
        result[metric] = None if value is None else round(value, 2)
    return result


# --- prompts ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _View:
    """What a prompt shows of one sample (an item or one of our examples)."""

    question: str
    steps: list[tuple[str, str]]  # (number, text) of every plan step
    gold: list[dict[str, Any]]
    toolset: list[dict[str, Any]]


@cache
def _templates() -> dict[str, Any]:
    with open(PROMPTS / "templates.toml", "rb") as handle:
        return tomllib.load(handle)


@cache
def _example_data() -> dict[str, Any]:
    with open(PROMPTS / "examples.toml", "rb") as handle:
        return tomllib.load(handle)


def _tool_json(spec: ToolSpec | None, name: str) -> dict[str, Any]:
    if spec is None:
        return {"name": name}
    shown: dict[str, Any] = {"name": spec.name}
    if spec.description:
        shown["description"] = spec.description
    if spec.parameters:
        shown["arguments"] = spec.parameters
    if spec.returns:
        shown["results"] = spec.returns
    return shown


def _to_create(example: Mapping[str, Any]) -> set[str]:
    """The tools a tool-creation example asks for: its `create` list, else its `missing`."""
    return set(example.get("create") or example.get("missing") or [])


def _nothing(*_: Any) -> list[Any]:
    """No gold steps, no tools: what planning's prompt shows beside the question."""
    return []


def _example_calls(example: Mapping[str, Any]) -> list[tuple[str, ToolCall | None]]:
    """(step number, its call or None) for every step of an example's plan."""
    return [
        (step["step"], parse_tool_call(step["call"]) if step.get("call") else None)
        for step in example["plan"]
    ]


def _usage_awareness_examples(
    example: Mapping[str, Any], specs: Mapping[str, ToolSpec]
) -> list[dict[str, Any]]:
    """Every child step: 1 when it calls a tool."""
    calls = _example_calls(example)
    return [{"step": step, "value": int(call is not None)} for step, call in calls if "." in step]


def _creation_awareness_examples(
    example: Mapping[str, Any], specs: Mapping[str, ToolSpec]
) -> list[dict[str, Any]]:
    """Every tool step: 1 when its tool is missing from the toolset."""
    missing = set(example.get("missing", []))
    calls = _example_calls(example)
    return [
        {"step": step, "value": int(call.name in missing)}
        for step, call in calls
        if call is not None
    ]


def _creation_examples(
    example: Mapping[str, Any], specs: Mapping[str, ToolSpec]
) -> list[dict[str, Any]]:
    """Every step whose tool is to be created, with the tool."""
    created = _to_create(example)
    return [
        {"step": step, "tool": _tool_json(specs.get(call.name), call.name)}
        for step, call in _example_calls(example)
        if call is not None and call.name in created
    ]


def _selection_examples(
    example: Mapping[str, Any], specs: Mapping[str, ToolSpec]
) -> list[dict[str, Any]]:
    """Every tool step, with its tool's name."""
    calls = _example_calls(example)
    return [{"step": step, "tool": call.name} for step, call in calls if call is not None]


def _usage_examples(
    example: Mapping[str, Any], specs: Mapping[str, ToolSpec]
) -> list[dict[str, Any]]:
    """Every tool step, with its tool's name and the call's arguments."""
    return [
        {"step": step, "tool": call.name, "arguments": call.arguments}
        for step, call in _example_calls(example)
        if call is not None
    ]


def _creation_awareness_toolset(example: Mapping[str, Any]) -> list[str]:
    """The example's tools but the missing ones, then the interference tools."""
    missing = set(example.get("missing", []))
    tools = [name for name in example.get("tools", []) if name not in missing]
    return tools + list(example.get("interference", []))


def _creation_toolset(example: Mapping[str, Any]) -> list[str]:
    """The example's tools but the ones to create, then the interference tools."""
    created = _to_create(example)
    tools = [name for name in example.get("tools", []) if name not in created]
    return tools + list(example.get("interference", []))


def _selection_toolset(example: Mapping[str, Any]) -> list[str]:
    """The example's tools, then the interference tools."""
    return list(example.get("tools", [])) + list(example.get("interference", []))


def _usage_toolset(example: Mapping[str, Any]) -> list[str]:
    """The example's tools."""
    return list(example.get("tools", []))


def _examples(wording: Wording) -> list[_View]:
    data = _example_data()
    specs = {
        name: ToolSpec(
            name=name,
            description=tool.get("description", ""),
            parameters=tool.get("arguments", {}),
            returns=tool.get("results", {}),
        )
        for name, tool in data.get("tools", {}).items()
    }
    views = []
    for example in data["examples"]:
        views.append(
            _View(
                question=example["question"],
                steps=[(step["step"], step["text"]) for step in example["plan"]],
                gold=wording.example_gold(example, specs),
                toolset=[
                    _tool_json(specs.get(name), name) for name in wording.example_toolset(example)
                ],
            )
        )
    return views


def _offered(item: Item, task: str, gold: Sequence[Mapping[str, Any]]) -> list[str]:
    """The toolset the task file gave the item, else the sample's tools."""
    return list((item.input.get("toolsets") or {}).get(task) or item.candidate_tools)


def _offered_for_creation(item: Item, task: str, gold: Sequence[Mapping[str, Any]]) -> list[str]:
    """As _offered, but the sample's own tools include the ones to create: never offer those."""
    offered = (item.input.get("toolsets") or {}).get(task)
    if offered:
        return list(offered)
    created = {s["tool"].get("name") for s in gold if isinstance(s["tool"], dict)}
    return [name for name in item.candidate_tools if name not in created]


def _item_view(item: Item, ctx: Context, form: Form) -> _View:
    reference = item.reference if isinstance(item.reference, dict) else {}
    gold = _gold(item, form.name)
    steps = [
        (str(step.get("step", "")), str(step.get("text", "")))
        for step in reference.get("steps") or []
        if isinstance(step, dict)
    ] or [(str(step.get("step", "")), "") for step in gold]
    offered = form.wording.offered(item, form.name, gold)
    return _View(
        question=str(item.input.get("query", "")).strip(),
        steps=steps,
        gold=gold,
        toolset=[_tool_json(ctx.tools.get(name), name) for name in dict.fromkeys(offered)],
    )


def _plan_text(steps: Sequence[tuple[str, str]]) -> str:
    """A plan as UltraTool writes it: "1. text" for a top-level step, "1.1 text" below."""
    return "\n".join(
        f"{number}. {text}" if "." not in number else f"{number} {text}" for number, text in steps
    )


def _question_input(view: _View) -> str:
    """Planning's input: the question alone."""
    return f"### Question\n{view.question}"


def _step_list(gold: Sequence[Mapping[str, Any]]) -> str:
    """The steps to answer, by number: "1.2, 2.1"."""
    return ", ".join(str(step["step"]) for step in gold)


def _steps_with_tools(gold: Sequence[Mapping[str, Any]]) -> str:
    """The steps to answer, one a line with the tool each calls: "1.2 get_weather"."""
    return "\n".join(f"{step['step']} {step.get('tool', '')}" for step in gold)


def _steps_input(view: _View, *, asked: Callable[[Sequence[Mapping[str, Any]]], str]) -> str:
    """The question, the plan, the toolset when one is offered, and the steps to answer."""
    parts = [f"### Question\n{view.question}", f"### Plan\n{_plan_text(view.steps)}"]
    if view.toolset:
        tools = "\n".join(json.dumps(tool, ensure_ascii=False) for tool in view.toolset)
        parts.append(f"### Toolset\n{tools}")
    parts.append(f"### Steps to answer\n{asked(view.gold)}")
    return "\n".join(parts)


Rows = Callable[[Sequence[Mapping[str, Any]], str], list[dict[str, Any]]]


def _value_rows(
    gold: Sequence[Mapping[str, Any]], variant: str, *, key: str
) -> list[dict[str, Any]]:
    """Awareness: the 0/1 of each step under the key the prompt names."""
    return [{"step": s["step"], key: s.get("value")} for s in gold]


def _tool_rows(gold: Sequence[Mapping[str, Any]], variant: str) -> list[dict[str, Any]]:
    """Selection and creation: each step's tool (a name, a created tool)."""
    return [{"step": s["step"], "tool": s.get("tool")} for s in gold]


def _call_rows(gold: Sequence[Mapping[str, Any]], variant: str) -> list[dict[str, Any]]:
    """Usage: each step's tool and arguments."""
    # UltraTool's evaluation reads a step's arguments under "param" only.
    arguments = "param" if variant == "reference" else "arguments"
    return [
        {"step": s["step"], "tool": s.get("tool"), arguments: s.get("arguments") or {}}
        for s in gold
    ]


def _render_answer(
    rows: Rows,
    gold: Sequence[Mapping[str, Any]],
    variant: str = "default",
    texts: Mapping[str, Any] | None = None,
) -> str:
    if texts:  # each step written as given (its text as the task file writes it)
        gold = [{**s, "step": texts.get(s["step"], s["step"])} for s in gold]
    return json.dumps(rows(gold, variant), ensure_ascii=False)


def _plan_answer(view: _View, variant: str) -> str:
    """Planning's answer: the plan itself."""
    return _plan_text(view.steps)


def _steps_answer(view: _View, variant: str, *, rows: Rows) -> str:
    """A step task's answer: its gold steps as one JSON list."""
    return _render_answer(rows, view.gold, variant)


def _plan_output(item: Item, task: str, variant: str) -> str:
    """The gold plan text (or, without one, the plan rendered from its steps)."""
    reference = item.reference if isinstance(item.reference, dict) else {}
    steps = [
        (str(step.get("step", "")), str(step.get("text", "")))
        for step in reference.get("steps") or []
        if isinstance(step, dict)
    ]
    return _planning_gold(item) or _plan_text(steps)


def _steps_output(item: Item, task: str, variant: str, *, rows: Rows) -> str:
    """The gold steps as one JSON list; under variant=reference each step written with its text
    as the task file writes it (the reference matches its first token)."""
    texts = (
        published.gold_step_texts(task, item.reference, item.metadata)
        if variant == "reference"
        else None
    )
    return _render_answer(rows, _gold(item, task), variant, texts)


def reference_output(item: Item, task: str, variant: str = "default") -> str:
    """The gold answer written in the format the prompt asks for (a perfect model's output);
    for planning the gold plan text (or, without one, the plan rendered from its steps). Under
    variant=reference each step is written with its text as the task file writes it (the
    reference matches its first token) and a tool-usage answer puts the arguments under
    "param"."""
    return FORMS[task].wording.gold_output(item, task, variant)


def build_prompt(item: Item, ctx: Context, context: dict[str, Any], *, form: Form) -> Prompt:
    """System instructions, `shots` worked examples of ours, then the item's input block; for
    completion style also the same as one text ending in "### Answer" with stop sequences."""
    variant = form.variant(ctx)
    templates = _templates()
    wording = templates["tasks"][form.name]
    answer_format = wording["answer_format"]
    if variant == "reference":
        answer_format = wording.get("answer_format_reference", answer_format)
    system = Template(wording.get("system", templates["system"])).substitute(
        instructions=wording["instructions"].strip(),
        answer_format=answer_format.strip(),
    )
    parts = form.wording
    examples = _examples(parts)
    shots = max(int(ctx.shots or 0), 0)
    query = parts.render_input(_item_view(item, ctx, form))
    messages = [{"role": "system", "content": system}]
    for example in examples[:shots]:
        messages.append({"role": "user", "content": parts.render_input(example)})
        messages.append({"role": "assistant", "content": parts.answer(example, variant)})
    messages.append({"role": "user", "content": query})
    if ctx.style != "completion":
        return Prompt(messages=messages)
    floor = int(ctx.option("min_completion_shots") or 0)
    blocks = [system]
    for example in examples[: max(shots, floor)]:
        answer = parts.answer(example, variant)
        blocks.append(f"{parts.render_input(example)}\n{ANSWER_HEADER}\n{answer}")
    blocks.append(f"{query}\n{ANSWER_HEADER}\n")
    return Prompt(messages=messages, text="\n\n".join(blocks), stop=COMPLETION_STOP)


# --- published outputs --------------------------------------------------------------------------


def _output_text(value: Any, key: str, path: Path, line: int) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return str(
            value[0]
        )  # UltraTool's outputs keep a list of sampled outputs; the first is scored
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    raise ImportFormatError(
        f"expected the model output as a string, got {type_name(value)}",
        file=path,
        line=line,
        field=key,
    )


def read_predictions(task: str, path: Path) -> Iterator[PublishedOutput]:
    """Published outputs for `task`, index-aligned with test.json (see the module docstring).
    The whole file is read before the first output is returned."""
    if task not in TASKS:
        raise ImportFormatError(
            f"ultratool has no task {task!r} to read outputs for; tasks: {', '.join(TASKS)}",
            file=path,
        )
    outputs: list[PublishedOutput] = []
    for ordinal, (line, record) in enumerate(iter_jsonl(path), start=1):
        if isinstance(record, str):
            text = record
        elif isinstance(record, dict):
            key = next((k for k in OUTPUT_KEYS if record.get(k) is not None), None)
            if key is not None:
                text = _output_text(record[key], key, path, line)
            elif isinstance(record.get("total output"), dict):
                inner = record["total output"].get("init output")
                if inner is None:
                    raise ImportFormatError(
                        "missing", file=path, line=line, field="total output.init output"
                    )
                text = _output_text(inner, "total output.init output", path, line)
            elif isinstance(record.get("data"), dict) and "init output" in record["data"]:
                # UltraTool's published planning evaluations: {"data": {..., "init output"}}.
                inner = record["data"]["init output"]
                text = _output_text(inner, "data.init output", path, line)
            else:
                keys = ", ".join(sorted(record)) or "none"
                raise ImportFormatError(
                    f"holds no model output: expected one of the keys "
                    f"{', '.join(OUTPUT_KEYS)}, total output (the line has: {keys})",
                    file=path,
                    line=line,
                    field="output",
                )
        else:
            raise ImportFormatError(
                f"expected an object holding the output, or the output as a JSON string; got "
                f"{type_name(record)}",
                file=path,
                line=line,
            )
        outputs.append(
            PublishedOutput(
                external_id=str(ordinal), output=text, split="test", source=f"{path}, line {line}"
            )
        )
    return iter(outputs)


# --- the tasks' forms ---------------------------------------------------------------------------

USAGE_AWARENESS_READER = StepReader(
    entry=partial(_awareness_entry, keys=USAGE_AWARENESS_KEYS), line=_awareness_line
)
CREATION_AWARENESS_READER = StepReader(
    entry=partial(_awareness_entry, keys=CREATION_AWARENESS_KEYS), line=_awareness_line
)
SELECTION_READER = StepReader(entry=_selection_entry, line=_selection_line)
USAGE_READER = StepReader(entry=_usage_entry, line=_usage_line)

# What UltraTool's evaluation fixes for the awareness tasks: an unreadable answer is wrong and
# local accuracy pools every gold step of every sample.
AWARENESS_SETTINGS = {"unparsed": "wrong", "local_average": "steps"}
AWARENESS_ROUNDED = ("accuracy_global", "accuracy_local")

PLANNING_FORM = Form(
    "planning",
    Wording(
        example_gold=_nothing,
        example_toolset=_nothing,
        offered=_nothing,
        render_input=_question_input,
        answer=_plan_answer,
        gold_output=_plan_output,
    ),
    checks=(UNPARSED_CHOICES,),
)
CREATION_AWARENESS_FORM = Form(
    "tool_creation_awareness",
    Wording(
        example_gold=_creation_awareness_examples,
        example_toolset=_creation_awareness_toolset,
        offered=_offered,
        render_input=partial(_steps_input, asked=_step_list),
        answer=partial(_steps_answer, rows=partial(_value_rows, key="needs_new_tool")),
        gold_output=partial(_steps_output, rows=partial(_value_rows, key="needs_new_tool")),
    ),
    reference=Reference(
        settings=AWARENESS_SETTINGS,
        rounded=AWARENESS_ROUNDED,
        reader=reference.AWARENESS,
        entry=partial(_reference_value, keys=CREATION_AWARENESS_KEYS),
    ),
)
CREATION_FORM = Form(
    "tool_creation",
    Wording(
        example_gold=_creation_examples,
        example_toolset=_creation_toolset,
        offered=_offered_for_creation,
        render_input=partial(_steps_input, asked=_step_list),
        answer=partial(_steps_answer, rows=_tool_rows),
        gold_output=partial(_steps_output, rows=_tool_rows),
    ),
    checks=(UNPARSED_CHOICES,),
)
USAGE_AWARENESS_FORM = Form(
    "tool_usage_awareness",
    Wording(
        example_gold=_usage_awareness_examples,
        example_toolset=_nothing,
        offered=_nothing,
        render_input=partial(_steps_input, asked=_step_list),
        answer=partial(_steps_answer, rows=partial(_value_rows, key="needs_tool")),
        gold_output=partial(_steps_output, rows=partial(_value_rows, key="needs_tool")),
    ),
    reference=Reference(
        settings=AWARENESS_SETTINGS,
        rounded=AWARENESS_ROUNDED,
        reader=reference.AWARENESS,
        entry=partial(_reference_value, keys=USAGE_AWARENESS_KEYS),
    ),
)
SELECTION_FORM = Form(
    "tool_selection",
    Wording(
        example_gold=_selection_examples,
        example_toolset=_selection_toolset,
        offered=_offered,
        render_input=partial(_steps_input, asked=_step_list),
        answer=partial(_steps_answer, rows=_tool_rows),
        gold_output=partial(_steps_output, rows=_tool_rows),
    ),
)
USAGE_FORM = Form(
    "tool_usage",
    Wording(
        example_gold=_usage_examples,
        example_toolset=_usage_toolset,
        offered=_offered,
        render_input=partial(_steps_input, asked=_steps_with_tools),
        answer=partial(_steps_answer, rows=_call_rows),
        gold_output=partial(_steps_output, rows=_call_rows),
    ),
    checks=(UNPARSED_CHOICES, LOCAL_AVERAGE_CHOICES, NO_ARGUMENT_CHOICES),
    reference=Reference(
        # and a gold step without arguments scores 0
        settings={**AWARENESS_SETTINGS, "no_argument_step": "zero"},
        rounded=("levenshtein_local",),
        reader=reference.USAGE,
        entry=_reference_call,
        first_of_lists=True,
    ),
)

FORMS: dict[str, Form] = {
    form.name: form
    for form in (
        PLANNING_FORM,
        CREATION_AWARENESS_FORM,
        CREATION_FORM,
        USAGE_AWARENESS_FORM,
        SELECTION_FORM,
        USAGE_FORM,
    )
}
# The tasks whose reading and scoring variant=reference reproduces (the reading document covers
# their two readers; tool selection's is not described, and planning and tool creation are
# judged).
REFERENCE_TASKS = tuple(name for name, form in FORMS.items() if form.reference is not None)
