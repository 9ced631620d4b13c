"""LLM-as-judge, the pure part: judge templates (a prompt, a parser, a scale) and how verdicts
add up. No Django; the evaluation app stores judgments and runs them like runs.

A judge is a rater: its verdicts must be comparable with humans' item by item, so every verdict
is kept per (sample, output or pair of outputs, repeat, order shown), and a pairwise verdict is
stored against the canonical (A, B) order whatever order the judge saw.

Kinds:
- pointwise: scores on named dimensions within a scale (UltraTool planning and tool creation,
  1-10, reported / 10);
- pass: a label among Solved / Unsure / Unsolved (StableToolBench SoPR: 1, 0.5, 0);
- pairwise: which of two outputs is better, or a tie (StableToolBench SoWR; generic A/B); the
  platform asks in both orders and counts a win only when both orders agree;
- solvability: a label among Solvable / Unsolvable / Unsure for a query alone (several judges
  vote; StableToolBench section 3.2).

A template is registered in `TEMPLATES` under a dotted name ("ultratool.planning"): a suite
declares its own (`Suite.judges`), generic_judges.py registers the benchmark-agnostic ones.

Parsing: `parse(text, judge_input)` returns a Verdict; ok=False with the reason when the text
cannot be read (the platform then asks once more with `reminder` appended, and after that keeps
the raw text as unparsed: never a silent zero). A value out of the scale is not read (ok=False
for that dimension, named in the error).

Forced function calls: a judge may answer through a call of one function, `verdict`, whose
parameters are the verdict's JSON schema (`verdict_schema`: the template's own `schema`, else
one derived from its kind, in the keys its parser reads: pass and solvability
{"label": one of its labels, "reason"}, pairwise {"better": "1" | "2" | "tie", "reason"},
pointwise every dimension a number within the scale). `call_prompt` declares it and forces it
(tool_choice naming it; no stop sequence, which would cut the call). `read_call` takes the
reply's tool calls: exactly one call of `verdict`, whose arguments are a JSON object valid
against the schema (jsonschema), which the template's own parser then reads, so a call and a
text holding the same object give the same verdict; anything else is ok=False with the reason.
`prompt_texts` is the fixed text a template's prompts are made of (`texts`, and the reminder):
what a judge version pins as its prompt.
"""

from __future__ import annotations

import importlib
import json
import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import jsonschema

from benchmarks.kit.protocol import Context, Item, Outcome, Prompt
from benchmarks.kit.registry import all_suites

Kind = Literal["pointwise", "pass", "pairwise", "solvability"]
KINDS: tuple[Kind, ...] = ("pointwise", "pass", "pairwise", "solvability")

PASS_LABELS = ("Solved", "Unsure", "Unsolved")
PASS_VALUE = {"Solved": 1.0, "Unsure": 0.5, "Unsolved": 0.0}
SOLVABILITY_LABELS = ("Solvable", "Unsolvable", "Unsure")


@dataclass(frozen=True)
class JudgeInput:
    """What the judge sees about one item. `outputs` holds one outcome (pointwise, pass), two in
    the order shown (pairwise), or none (solvability: the query alone)."""

    item: Item
    outputs: tuple[Outcome, ...] = ()
    ctx: Context | None = None


@dataclass
class Verdict:
    ok: bool
    # pointwise: {dimension: score}; pass / solvability: {"label": ...};
    # pairwise: {"preferred": 0 | 1 | None} where 0/1 index the outputs as SHOWN, None a tie.
    values: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    reasoning: str = ""


@dataclass(frozen=True)
class JudgeTemplate:
    name: str
    kind: Kind
    title: str
    # Where the prompt text comes from and under which license ("ours" for our own writing).
    source: str
    build: Callable[[JudgeInput], Prompt]
    parse: Callable[[str, JudgeInput], Verdict]
    # Appended as a user message when the first answer could not be parsed.
    reminder: str
    suites: tuple[str, ...] = ()  # suites whose runs it can judge; () = any
    tasks: tuple[str, ...] = ()  # tasks it can judge; () = any
    dimensions: tuple[str, ...] = ()  # pointwise
    scale: tuple[int, int] | None = None  # pointwise (low, high)
    report_divisor: float = 1.0  # pointwise scores are reported / this (UltraTool: 10)
    labels: tuple[str, ...] = ()  # pass / solvability
    # A verdict reached without asking (e.g. pass: no final answer is Unsolved), or None.
    precheck: Callable[[JudgeInput], Verdict | None] | None = None
    # (label, template): when a read verdict has this label, ask that template too; its label
    # stands (StableToolBench asks about the answer's details after an Unsure).
    follow_up: tuple[str, str] | None = None
    # Pairwise templates that let pass labels decide first (StableToolBench SoWR): given per
    # sample the pass labels of the run (A) and of the other run (B) over repeats, and the
    # (AB, BA) canonical verdicts per repeat, extra metrics for the job.
    with_pass_labels: (
        Callable[
            [
                Mapping[str, Sequence[str]],
                Mapping[str, Sequence[str]],
                Mapping[str, Sequence[tuple[int | None, int | None]]],
            ],
            dict[str, float | None],
        ]
        | None
    ) = None

    # The fixed texts its prompts are made of, by name (system message, instructions with
    # their placeholders, answer format): what a judge version pins as its prompt.
    texts: Callable[[], Mapping[str, str]] | None = None
    # The JSON schema of the verdict function's parameters, in the keys `parse` reads; None:
    # derived from the kind (verdict_schema).
    schema: Callable[[], Mapping[str, Any]] | None = None
    # What the verdict function is said to do; None: the title.
    call_description: Callable[[], str] | None = None

    def applies_to(self, suite: str, task: str) -> bool:
        return (not self.suites or suite in self.suites) and (not self.tasks or task in self.tasks)


TEMPLATES: dict[str, JudgeTemplate] = {}


def register(template: JudgeTemplate) -> JudgeTemplate:
    if template.kind not in KINDS:
        raise ValueError(f"unknown judge kind {template.kind!r}")
    TEMPLATES[template.name] = template
    return template


def template_named(name: str) -> JudgeTemplate:
    _load_all()
    try:
        return TEMPLATES[name]
    except KeyError:
        known = ", ".join(sorted(TEMPLATES)) or "none"
        raise ValueError(f"no judge template {name!r}; templates: {known}") from None


def templates() -> dict[str, JudgeTemplate]:
    _load_all()
    return dict(TEMPLATES)


def _load_all() -> None:
    """Register the judges every suite declares (Suite.judges), each once, and the ones that fit
    any benchmark (generic_judges registers its own)."""
    for suite in all_suites():
        for template in suite.judges:
            if template.name not in TEMPLATES:
                register(template)
    importlib.import_module("benchmarks.kit.generic_judges")


# --- verdicts through a forced function call ----------------------------------------------------

VERDICT_FUNCTION = "verdict"
VERDICT_CHOICE: dict[str, Any] = {"type": "function", "function": {"name": VERDICT_FUNCTION}}
_REASON = {"type": "string", "description": "Why: the evidence for the verdict."}


def verdict_schema(template: JudgeTemplate) -> dict[str, Any]:
    """The JSON schema of the verdict function's parameters (see the module docstring)."""
    if template.schema is not None:
        schema: dict[str, Any] = json.loads(json.dumps(template.schema()))  # a fresh copy
        return schema
    if template.kind in ("pass", "solvability"):
        labels = list(
            template.labels or (PASS_LABELS if template.kind == "pass" else SOLVABILITY_LABELS)
        )
        properties: dict[str, Any] = {
            "reason": _REASON,
            "label": {"type": "string", "enum": labels},
        }
        required = ["reason", "label"]
    elif template.kind == "pairwise":
        properties = {
            "reason": _REASON,
            "better": {
                "type": "string",
                "enum": ["1", "2", "tie"],
                "description": '"1" for the answer shown first, "2" for the second, "tie".',
            },
        }
        required = ["reason", "better"]
    else:
        low, high = template.scale or (1, 10)
        properties = {"reason": _REASON}
        for dimension in template.dimensions:
            properties[dimension] = {"type": "number", "minimum": low, "maximum": high}
        required = list(template.dimensions)
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def verdict_tool(template: JudgeTemplate) -> dict[str, Any]:
    """The verdict function as an OpenAI function tool."""
    return {
        "type": "function",
        "function": {
            "name": VERDICT_FUNCTION,
            "description": (
                template.call_description() if template.call_description else template.title
            ),
            "parameters": verdict_schema(template),
        },
    }


def call_prompt(prompt: Prompt, template: JudgeTemplate) -> Prompt:
    """The judge's prompt asked as a forced call of the verdict function: the same messages,
    the function declared and named by tool_choice, no stop sequence (it would cut the
    call's arguments)."""
    return Prompt(
        messages=list(prompt.messages),
        max_tokens=prompt.max_tokens,
        tools=[verdict_tool(template)],
        tool_choice=VERDICT_CHOICE,
    )


def call_reminder(prompt: Prompt, raw: str, error: str) -> Prompt:
    """The forced call asked once more after a malformed one: what it sent and why it was not
    read, as messages (no tool result: nothing was called)."""
    messages = [
        *prompt.messages,
        {"role": "assistant", "content": raw},
        {
            "role": "user",
            "content": f"That was not a valid call of {VERDICT_FUNCTION}: {error}. Call "
            f"{VERDICT_FUNCTION} once, with arguments that match its parameters.",
        },
    ]
    return Prompt(
        messages=messages,
        max_tokens=prompt.max_tokens,
        tools=prompt.tools,
        tool_choice=prompt.tool_choice,
    )


def call_text(tool_calls: Sequence[Mapping[str, Any]], content: str) -> str:
    """A reply's calls as the judgment keeps them (its `raw`): each call's name and arguments
    as sent, one a line, after any text the reply had."""
    lines = [content] if content else []
    for call in tool_calls:
        function = call.get("function")
        function = function if isinstance(function, Mapping) else {}
        lines.append(f"{function.get('name')}({function.get('arguments')})")
    return "\n".join(lines)


def read_call(
    template: JudgeTemplate, tool_calls: Sequence[Mapping[str, Any]], judge_input: JudgeInput
) -> Verdict:
    """The verdict of a forced call (see the module docstring); ok=False naming what is wrong:
    no call, several, another function, arguments that are not a JSON object or do not match
    the schema (the first problem, with its place)."""
    if not tool_calls:
        return Verdict(False, error=f"no call of {VERDICT_FUNCTION} in the answer")
    if len(tool_calls) > 1:
        return Verdict(False, error=f"{len(tool_calls)} calls; one call of {VERDICT_FUNCTION}")
    function = tool_calls[0].get("function")
    function = function if isinstance(function, Mapping) else {}
    name = function.get("name")
    if name != VERDICT_FUNCTION:
        return Verdict(False, error=f"called {name!r}, not {VERDICT_FUNCTION}")
    arguments = function.get("arguments")
    try:
        values = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError as exc:
        return Verdict(False, error=f"the arguments are not JSON: {exc}")
    if not isinstance(values, dict):
        return Verdict(False, error="the arguments are not a JSON object")
    errors = sorted(
        jsonschema.Draft202012Validator(verdict_schema(template)).iter_errors(values),
        key=lambda e: list(e.absolute_path),
    )
    if errors:
        place = "/".join(str(p) for p in errors[0].absolute_path) or "the arguments"
        return Verdict(False, error=f"{place}: {errors[0].message}"[:500])
    return template.parse(json.dumps(values), judge_input)


def prompt_texts(template: JudgeTemplate) -> dict[str, str]:
    """The fixed text of a template's prompts (its `texts`, and the reminder), by name."""
    texts = dict(template.texts()) if template.texts is not None else {}
    texts["reminder"] = template.reminder
    return texts


# --- adding verdicts up -------------------------------------------------------------------------


def mean_std(values: Sequence[float]) -> tuple[float | None, float | None]:
    """Mean and population standard deviation over the repeats, as StableToolBench's own
    scorer reports SoPR (numpy's std); 0 for one value, None for none."""
    if not values:
        return None, None
    return statistics.fmean(values), statistics.pstdev(values)


def over_repeats(per_repeat: Sequence[Mapping[str, float | None]]) -> dict[str, float | None]:
    """Each metric as mean and std over the repeats that defined it: {name, name_std}."""
    names: list[str] = []
    for metrics in per_repeat:
        names.extend(name for name in metrics if name not in names)
    result: dict[str, float | None] = {}
    for name in names:
        values = [
            float(value)
            for m in per_repeat
            if isinstance(value := m.get(name), (int, float)) and math.isfinite(value)
        ]
        mean, std = mean_std(values)
        result[name] = mean
        result[f"{name}_std"] = std
    return result


def pass_rate(labels: Sequence[str]) -> float | None:
    """SoPR: Solved 1, Unsure 0.5, Unsolved 0, mean over the items (None for no item)."""
    if not labels:
        return None
    return sum(PASS_VALUE[label] for label in labels) / len(labels)


def canonical_preference(preferred_shown: int | None, order: str) -> int:
    """A pairwise verdict against the canonical (A, B) order: 1 (A better), 0 (tie), -1 (B
    better), from the index preferred among the outputs as shown (order "AB" or "BA")."""
    if preferred_shown is None:
        return 0
    first_is_a = order == "AB"
    prefers_a = (preferred_shown == 0) == first_is_a
    return 1 if prefers_a else -1


def combine_orders(ab: int | None, ba: int | None) -> int | None:
    """The item's verdict from its two orders: a win only when both orders agree; a tie
    otherwise. None when either order has no verdict (unparsed or failed)."""
    if ab is None or ba is None:
        return None
    return ab if ab == ba else 0


def pairwise_summary(pairs: Sequence[tuple[int | None, int | None]]) -> dict[str, float | None]:
    """From (verdict shown AB, verdict shown BA) per item, both canonical (1 / 0 / -1):
    win, tie and loss shares of A after combining the orders; `position_bias` = share of the
    items with both verdicts whose two orders disagree because each preferred the answer shown
    first (or each the one shown second: `second_position_bias`); `consistency` = share where
    the two orders agree. Shares in 0-1; items with a missing order are left out (counted in
    `incomplete`)."""
    complete = [(ab, ba) for ab, ba in pairs if ab is not None and ba is not None]
    n = len(complete)
    summary: dict[str, float | None] = {"n": float(n), "incomplete": float(len(pairs) - n)}
    if not n:
        summary.update(
            {"win": None, "tie": None, "loss": None, "position_bias": None, "consistency": None}
        )
        return summary
    combined = [combine_orders(ab, ba) for ab, ba in complete]
    summary["win"] = sum(1 for v in combined if v == 1) / n
    summary["tie"] = sum(1 for v in combined if v == 0) / n
    summary["loss"] = sum(1 for v in combined if v == -1) / n
    # Shown AB, the first is A (verdict 1); shown BA, the first is B (verdict -1).
    summary["position_bias"] = sum(1 for ab, ba in complete if ab == 1 and ba == -1) / n
    summary["second_position_bias"] = sum(1 for ab, ba in complete if ab == -1 and ba == 1) / n
    summary["consistency"] = sum(1 for ab, ba in complete if ab == ba) / n
    return summary


def majority_solvable(votes: Sequence[str], *, more_than: int = 2) -> bool | None:
    """StableToolBench section 3.2: a query is solvable when more than `more_than` judges say
    Solvable (three judges: all three). None when no judge voted."""
    if not votes:
        return None
    return sum(1 for vote in votes if vote == "Solvable") > more_than


# --- a job's verdicts as metrics ----------------------------------------------------------------


@dataclass(frozen=True)
class JudgmentRecord:
    """One stored verdict, as the summary needs it."""

    sample: str  # the sample's key (split/external id)
    repeat: int
    order: str  # "" single, "AB" / "BA" pairwise
    ok: bool  # read (not unparsed, not failed)
    values: Mapping[str, Any] = field(default_factory=dict)
    value: float | None = None  # item-level number (see Judgment.value)
    label: str = ""


# What summarize counts; every other figure of a job is a percentage, or for a pointwise
# template a dimension's mean score.
JOB_COUNTS = ("items", "judgments", "unparsed_or_failed", "repeats")


def metric_unit(kind: str, name: str) -> str:
    """ "count", "percent" or "score": the unit of a job's metric (its `_std` too) for a
    template of this kind."""
    base = name.removesuffix("_std")
    if base in JOB_COUNTS:
        return "count"
    return "score" if kind == "pointwise" else "percent"


def _percent(value: float | None) -> float | None:
    return None if value is None else round(100.0 * value, 2)


def summarize(
    template: JudgeTemplate, records: Sequence[JudgmentRecord]
) -> dict[str, float | None]:
    """A job's metrics: each computed per repeat, then mean and std over the repeats
    (`<name>_std`). Unread verdicts are left out and counted (`unparsed_or_failed`), never
    scored as zeros.

    pointwise: the mean of each dimension, divided by the template's report_divisor;
    pass: SoPR (%) and the shares of Solved / Unsure / Unsolved (%);
    pairwise: win / tie / loss of the canonical A against B after combining both orders, the
    position bias and the consistency of the two orders (%);
    solvability: the share of Solvable verdicts (%)."""
    repeats = sorted({r.repeat for r in records})
    per_repeat = [
        _summarize_repeat(template, [r for r in records if r.repeat == repeat])
        for repeat in repeats
    ]
    metrics = over_repeats(per_repeat)
    metrics["items"] = float(len({r.sample for r in records}))
    metrics["judgments"] = float(len(records))
    metrics["unparsed_or_failed"] = float(sum(1 for r in records if not r.ok))
    metrics["repeats"] = float(len(repeats))
    return metrics


def _summarize_repeat(
    template: JudgeTemplate, records: Sequence[JudgmentRecord]
) -> dict[str, float | None]:
    read = [r for r in records if r.ok]
    if template.kind == "pointwise":
        result: dict[str, float | None] = {}
        for dimension in template.dimensions:
            scores = [
                float(r.values[dimension])
                for r in read
                if isinstance(r.values.get(dimension), (int, float))
            ]
            result[dimension] = (
                round(statistics.fmean(scores) / template.report_divisor, 4) if scores else None
            )
        return result
    if template.kind == "pass":
        labels = [r.label for r in read if r.label in PASS_VALUE]
        shares = {
            label: _percent(labels.count(label) / len(labels)) if labels else None
            for label in PASS_LABELS
        }
        return {"SoPR": _percent(pass_rate(labels)), **shares}
    if template.kind == "pairwise":
        by_sample: dict[str, dict[str, int | None]] = {}
        for r in records:
            verdict = int(r.value) if r.ok and r.value is not None else None
            by_sample.setdefault(r.sample, {})[r.order] = verdict
        pairs = [(orders.get("AB"), orders.get("BA")) for orders in by_sample.values()]
        summary = pairwise_summary(pairs)
        return {
            name: _percent(value) if name not in ("n", "incomplete") else value
            for name, value in summary.items()
            if name not in ("n", "incomplete")
        }
    # solvability
    labels = [r.label for r in read]
    return {"solvable": _percent(labels.count("Solvable") / len(labels)) if labels else None}
