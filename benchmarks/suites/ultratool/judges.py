"""UltraTool's LLM judges (Huang et al., 2024; papers/004, sections 3.1 to 3.3), and a reader of
the planning evaluations UltraTool published.

The paper scores planning and tool creation with a multi-dimensional pointwise judge: given the
dimensions, the query, the model's response and the reference answer, the judge gives each
dimension and an overall score from 1 to 10; results are reported / 10 (METRICS.md). Two
templates, declared by the suite (JUDGES) and registered by benchmarks.kit.judging:

  - ultratool.planning (task planning): Accuracy, Completeness, Executability, Syntactic
    Soundness, Structural Rationality, Efficiency, Overall;
  - ultratool.tool_creation (task tool_creation): Format Compliance, Accuracy, Content
    Reasonableness, Executability, Richness, Overall.

What the judge is asked (prompts/judge_planning.txt, prompts/judge_tool_creation.txt; ours,
written after the paper's description: UltraTool's repository has no licence): the user's
request, the reference answer from the item's reference (the gold plan text; for tool creation
the plan, the steps whose tool is missing and the gold created tools), the model's output exactly
as it was given (JudgeInput.outputs[0].output), what each dimension checks, and the anchoring:
the reference deserves 8 on every dimension, so the model's answer scores 8 where it is as good,
above 8 only where it is clearly better, below 8 where it falls short. The judge answers with
JSON only: [{"dimension": "Accuracy", "reasoning": "...", "score": 7}, ...], one object per
dimension in order, Overall last. The texts shown are marked as data, not instructions.

Parsing (`parse_scores`) reads real judge texts, never evaluating them:
  1. JSON anywhere in the text (code fences and commentary around it are skipped; a Python-style
     literal is read when no JSON holds a score) in any of these shapes, nested at any depth:
       - objects naming their dimension: {"dimension" | "name" | "aspect" | "criterion":
         "Accuracy", "score" | "rating" | "value": 7, "reasoning" | "reason" | ...: "..."};
       - UltraTool's published shape, a list of {"Reasoning": "...", "Accuracy Score": 7};
       - dimensions as keys: {"Accuracy": 7, "Overall Score": "8/10"} or {"Accuracy":
         {"score": 7, "reasoning": "..."}}, also inside wrappers such as {"scores": {...}}.
     Dimension names are matched ignoring case, spaces, "_" and "-", and a trailing "score" or
     "rating". When a dimension appears in several JSON values, the last one counts (an example
     or a draft comes before the answer).
  2. For every dimension the JSON did not give, the prose: an object-like fragment that did not
     parse ({"dimension": "Accuracy", ..., "score": 7}); then the dimension's name followed by
     its score ("Accuracy: 7/10", "Completeness score - 9", "**Efficiency**: 8",
     "| Overall | 8 |", "Overall score is 8"); then, under a line starting with the dimension's
     name, the first "Score: 7" or "7/10" before the next dimension.
  Scores are integers or decimals, possibly written "7/10" or "7 out of 10". A score outside
  the scale (1-10), written out of another total ("4/5") or not a number is not read: the
  dimension is left out of Verdict.values and named in Verdict.error, as is every dimension not
  found. ok=False only when no dimension at all could be read (the platform then asks again
  with `reminder`); a verdict with some dimensions read is ok=True and its error lists the
  rest, so a partial verdict is kept, never padded. Verdict.reasoning collects the reasoning
  per dimension ("Accuracy: ..." lines), or the judge's whole text when it wrote prose.

`overall(verdict)` is the item's headline: the Overall score on the reported scale (/ 10), or
None when Overall was not read (never the mean of the others in its place).

`read_planning_evaluations(path)` reads UltraTool's published planning evaluations (see its
docstring) into PlanningEvaluation records, each of which gives its Verdict.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from string import Template
from typing import Any

from benchmarks.kit.base import ImportFormatError, iter_jsonl, type_name
from benchmarks.kit.judging import JudgeInput, JudgeTemplate, Verdict
from benchmarks.kit.predictions import json_values, python_literal
from benchmarks.kit.protocol import Item, Prompt, PublishedOutput
from benchmarks.kit.registry import PublishedJudgment, PublishedJudgments

__all__ = [
    "CREATION_DIMENSIONS",
    "PLANNING",
    "PLANNING_DIMENSIONS",
    "SCALE",
    "TOOL_CREATION",
    "PlanningEvaluation",
    "answer_format",
    "build_planning",
    "build_tool_creation",
    "overall",
    "parse_scores",
    "planning_judgments",
    "read_planning_evaluations",
    "read_score",
    "reminder_text",
]

PROMPTS = Path(__file__).parent / "prompts"

PLANNING_DIMENSIONS = (
    "Accuracy",
    "Completeness",
    "Executability",
    "Syntactic Soundness",
    "Structural Rationality",
    "Efficiency",
    "Overall",
)
CREATION_DIMENSIONS = (
    "Format Compliance",
    "Accuracy",
    "Content Reasonableness",
    "Executability",
    "Richness",
    "Overall",
)
SCALE = (1, 10)
REPORT_DIVISOR = 10.0
# The paper anchors the reference answer at this score.
ANCHOR = 8
# A JSON list of seven short reasonings and scores fits well within this; a base model that
# does not stop is cut here rather than writing on for minutes.
MAX_TOKENS = 600

NAME_KEYS = ("dimension", "name", "aspect", "criterion", "criteria", "metric", "category")
SCORE_KEYS = ("score", "rating", "value", "points", "grade", "mark")
REASON_KEYS = (
    "reasoning",
    "reason",
    "explanation",
    "rationale",
    "justification",
    "comment",
    "comments",
    "analysis",
)


# --- prompts ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _PromptFile:
    system: str
    user: Template
    dimensions: dict[str, str]


@cache
def _prompt_file(name: str, dimensions: tuple[str, ...]) -> _PromptFile:
    """A judge prompt file: "#" lines are comments, "@@ name" starts a section (system,
    dimensions, user). The dimensions section must name exactly `dimensions`, in order."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in (PROMPTS / name).read_text("utf-8").splitlines():
        if line.startswith("#"):
            continue
        if line.startswith("@@"):
            current = sections.setdefault(line[2:].strip(), [])
            continue
        if current is not None:
            current.append(line)
    text = {key: "\n".join(lines).strip() for key, lines in sections.items()}
    explained: dict[str, str] = {}
    for line in text.get("dimensions", "").splitlines():
        if line.strip():
            dimension, _, meaning = line.partition(":")
            explained[dimension.strip()] = meaning.strip()
    if tuple(explained) != dimensions or not text.get("system") or not text.get("user"):
        raise ValueError(
            f"{PROMPTS / name}: needs sections system, dimensions ({', '.join(dimensions)}, in "
            "this order) and user"
        )
    return _PromptFile(system=text["system"], user=Template(text["user"]), dimensions=explained)


def answer_format(dimensions: Sequence[str]) -> str:
    """The exact answer format the judge is asked for (repeated by the reminder)."""
    first = dimensions[0]
    return (
        "Answer with JSON only: a list with one object per dimension, in this order: "
        f"{', '.join(dimensions)}. Each object is "
        '{"dimension": "<the name>", "reasoning": "<one or two sentences>", '
        f'"score": <a number from {SCALE[0]} to {SCALE[1]}>}}, for example '
        f'[{{"dimension": "{first}", "reasoning": "...", "score": ...}}, ...]. '
        "Write nothing after the list."
    )


def reminder_text(dimensions: Sequence[str]) -> str:
    return "Your answer could not be read. " + answer_format(dimensions)


def _dimension_list(prompt_file: _PromptFile) -> str:
    return "\n".join(f"- {name}: {meaning}" for name, meaning in prompt_file.dimensions.items())


def _output_of(judge_input: JudgeInput) -> str:
    if not judge_input.outputs:
        raise ValueError("a pointwise judge needs the model's output")
    # Shown exactly as the model wrote it: the judge rates the output, not our reading of it.
    return judge_input.outputs[0].output


def _reference(item: Item) -> dict[str, Any]:
    return item.reference if isinstance(item.reference, dict) else {}


def _plan_lines(item: Item) -> str:
    steps = [
        (str(step.get("step", "")), str(step.get("text", "")))
        for step in _reference(item).get("steps") or []
        if isinstance(step, dict)
    ]
    return "\n".join(
        f"{number}. {text}" if "." not in number else f"{number} {text}" for number, text in steps
    )


SCORE_CUE = "Scores, one per line, each a whole number from 1 to 10:"


def _messages(system: str, user: str, dimensions: Sequence[str]) -> Prompt:
    """Chat: the JSON answer format in the user message. Completion (a base model): the same
    text, then the answer started as score lines ("Accuracy:"), ending at a blank line; the
    parser reads "<Dimension>: n" lines, and an answer that starts with a number continues
    the first cue."""
    text = f"{system}\n\n{user}\n\n{SCORE_CUE}\n{dimensions[0]}:"
    return Prompt(
        messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
        text=text,
        stop=("\n\n",),
        max_tokens=MAX_TOKENS,
    )


def _texts(name: str, dimensions: tuple[str, ...]) -> dict[str, str]:
    """The fixed text of a judge's prompts (what a judge version pins)."""
    prompt_file = _prompt_file(name, dimensions)
    return {
        "system": prompt_file.system,
        "user": prompt_file.user.template,
        "dimensions": _dimension_list(prompt_file),
        "anchor": str(ANCHOR),
        "format": answer_format(dimensions),
    }


def build_planning(judge_input: JudgeInput) -> Prompt:
    """The planning judge's prompt: the request, the gold plan (scored 8), the model's plan."""
    item = judge_input.item
    reference = _reference(item).get("planning")
    if not isinstance(reference, str) or not reference.strip():
        reference = _plan_lines(item)
    if not reference.strip():
        raise ValueError(f"item {item.key} has no reference plan to show the judge")
    prompt_file = _prompt_file("judge_planning.txt", PLANNING_DIMENSIONS)
    user = prompt_file.user.substitute(
        question=str(item.input.get("query", "")).strip(),
        reference=reference.strip(),
        output=_output_of(judge_input),
        dimensions=_dimension_list(prompt_file),
        anchor=ANCHOR,
        answer_format=answer_format(PLANNING_DIMENSIONS),
    )
    return _messages(prompt_file.system, user, PLANNING_DIMENSIONS)


def build_tool_creation(judge_input: JudgeInput) -> Prompt:
    """The tool-creation judge's prompt: the request, the plan, the steps whose tool is missing,
    the gold created tools (scored 8) and the model's tools."""
    item = judge_input.item
    gold = _reference(item).get("tool_creation")
    if not isinstance(gold, list) or not gold:
        raise ValueError(f"item {item.key} has no reference tool to show the judge")
    rows = [
        {"step": step.get("step"), "tool": step.get("tool")}
        for step in gold
        if isinstance(step, dict)
    ]
    prompt_file = _prompt_file("judge_tool_creation.txt", CREATION_DIMENSIONS)
    user = prompt_file.user.substitute(
        question=str(item.input.get("query", "")).strip(),
        plan=_plan_lines(item),
        steps=", ".join(str(row["step"]) for row in rows),
        reference=json.dumps(rows, ensure_ascii=False, indent=2),
        output=_output_of(judge_input),
        dimensions=_dimension_list(prompt_file),
        anchor=ANCHOR,
        answer_format=answer_format(CREATION_DIMENSIONS),
    )
    return _messages(prompt_file.system, user, CREATION_DIMENSIONS)


# --- parsing ------------------------------------------------------------------------------------


def _normal(name: str) -> str:
    """A dimension name or key compared ignoring case, spaces, "_", "-" and a final "score"."""
    letters = re.sub(r"[^a-z]", "", name.lower())
    return re.sub(r"(?:scores?|ratings?)$", "", letters)


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


def read_score(raw: Any, scale: tuple[int, int] = SCALE) -> tuple[int | float | None, str]:
    """(score, "") or (None, why not): a number within the scale, possibly a string "7",
    "7.5", "7/10", "7 out of 10"."""
    low, high = scale
    denominator: str | None = None
    if isinstance(raw, bool) or raw is None:
        return None, f"{json.dumps(raw)} is not a number"
    if isinstance(raw, int | float):
        number = float(raw)
    elif isinstance(raw, str):
        match = re.fullmatch(
            r"\s*(-?\d+(?:\.\d+)?)\s*(?:(?:/|out\s+of)\s*(\d+(?:\.\d+)?))?\s*(?:points?)?[\s.]*",
            raw,
            re.IGNORECASE,
        )
        if not match:
            return None, f"{json.dumps(raw)[:40]} is not a number"
        number, denominator = float(match.group(1)), match.group(2)
    else:
        return None, f"{type_name(raw)} is not a number"
    if not math.isfinite(number):
        return None, f"{raw} is not a number"
    if denominator is not None and float(denominator) != high:
        return (
            None,
            f"{_number(number)}/{_number(float(denominator))} is not on the {high}-point scale",
        )
    if not low <= number <= high:
        return None, f"{_number(number)} is outside the scale {low}-{high}"
    return _number(number), ""


@dataclass
class _Reading:
    dimensions: tuple[str, ...]
    scale: tuple[int, int]
    values: dict[str, int | float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    general: list[str] = field(default_factory=list)
    lookup: dict[str, str] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self.lookup = {_normal(name): name for name in self.dimensions}

    def dimension(self, key: Any) -> str | None:
        return self.lookup.get(_normal(key)) if isinstance(key, str) else None

    def seen(self, dimension: str) -> bool:
        return dimension in self.values or dimension in self.errors

    def record(self, dimension: str, raw: Any, reason: Any = "") -> None:
        value, error = read_score(raw, self.scale)
        if value is None:
            self.values.pop(dimension, None)
            self.errors[dimension] = error
        else:
            self.errors.pop(dimension, None)
            self.values[dimension] = value
        if isinstance(reason, str) and reason.strip():
            self.reasons[dimension] = reason.strip()


def _lowered(value: Mapping[Any, Any]) -> dict[str, Any]:
    return {str(key).strip().lower(): item for key, item in value.items()}


def _first_present(lowered: Mapping[str, Any], keys: Sequence[str]) -> tuple[bool, Any]:
    for key in keys:
        if key in lowered:
            return True, lowered[key]
    return False, None


def _first_text(lowered: Mapping[str, Any], keys: Sequence[str]) -> str:
    for key in keys:
        if isinstance(text := lowered.get(key), str) and text.strip():
            return text
    return ""


def _walk(value: Any, reading: _Reading, depth: int = 0) -> None:
    """Record every dimension score a parsed JSON value holds (see the module docstring)."""
    if depth > 8:
        return
    if isinstance(value, list):
        for entry in value:
            _walk(entry, reading, depth + 1)
        return
    if not isinstance(value, dict):
        return
    lowered = _lowered(value)
    reason = _first_text(lowered, REASON_KEYS)
    for key in NAME_KEYS:
        named = reading.dimension(lowered.get(key))
        if named:
            present, score = _first_present(lowered, SCORE_KEYS)
            # Without a score it is not a verdict (e.g. a created tool named like a dimension).
            if present:
                reading.record(named, score, reason)
                return
    keyed = [(reading.dimension(key), item) for key, item in value.items()]
    dimensions = [(name, item) for name, item in keyed if name]
    for name, item in dimensions:
        own_reason = reason if len(dimensions) == 1 else ""
        if isinstance(item, dict):
            inner = _lowered(item)
            present, score = _first_present(inner, SCORE_KEYS)
            if present:
                reading.record(name, score, _first_text(inner, REASON_KEYS) or own_reason)
        elif not isinstance(item, list):
            reading.record(name, item, own_reason)
    if reason and len(dimensions) != 1:
        reading.general.append(reason.strip())
    for key_name, item in keyed:
        if not key_name and isinstance(item, dict | list):
            _walk(item, reading, depth + 1)


def _literal_spans(text: str) -> list[Any]:
    """Python-style literals (single quotes) in fences or between the outer brackets."""
    spans = re.findall(r"```[^\n`]*\n?(.*?)(?:```|$)", text, re.DOTALL)
    for opening, closing in (("[", "]"), ("{", "}")):
        first, last = text.find(opening), text.rfind(closing)
        if 0 <= first < last:
            spans.append(text[first : last + 1])
    values = []
    for span in spans:
        try:
            values.append(python_literal(span))
        except ValueError:
            continue
    return values


# A score: not part of a longer number, not negative, not the low end of a range ("1-10").
_NUMBER = r"(?<![\-\u2212\d.])(\d+(?:\.\d+)?)(?!\d|\.\d|\s*(?:-|\u2013|to)\s*\d)"
_OUT_OF = r"(?:\s*\(?\s*(?:/|out\s+of)\s*(\d+(?:\.\d+)?))?"
_SEGMENT_SCORE = re.compile(
    r"(?:score|rating)\s*\**\s*[:=\-\u2013\u2014]?\s*\**\s*(?:is\s+|of\s+)?" + _NUMBER + _OUT_OF,
    re.IGNORECASE,
)
_SEGMENT_FRACTION = re.compile(_NUMBER + r"\s*(?:/|out\s+of)\s*(10)\b", re.IGNORECASE)
_FRAGMENT = re.compile(r"\{[^{}]*\}")
_FRAGMENT_NAME = re.compile(
    r"[\"']?(?:" + "|".join(NAME_KEYS) + r")[\"']?\s*:\s*[\"']([^\"']+)[\"']", re.IGNORECASE
)
_FRAGMENT_SCORE = re.compile(
    r"[\"']?(?:" + "|".join(SCORE_KEYS) + r")[\"']?\s*:\s*[\"']?(-?\d+(?:\.\d+)?(?:\s*/\s*\d+)?)",
    re.IGNORECASE,
)


def _name_pattern(dimension: str) -> str:
    return r"[\s_\-]*".join(re.escape(word) for word in dimension.split())


def _scored(match: re.Match[str]) -> str:
    number, total = match.group(1), match.group(2)
    return f"{number}/{total}" if total else number


def _prose(text: str, reading: _Reading) -> None:
    """Fill the dimensions the JSON did not give from fragments and prose."""
    for fragment in _FRAGMENT.finditer(text):
        named = _FRAGMENT_NAME.search(fragment.group(0))
        score = _FRAGMENT_SCORE.search(fragment.group(0))
        dimension = reading.dimension(named.group(1)) if named else None
        if dimension and score and not reading.seen(dimension):
            reading.record(dimension, score.group(1))
    names = {dimension: _name_pattern(dimension) for dimension in reading.dimensions}
    headings = re.compile(
        r"^[\s#>*\-•|]*(?:\d+[.)]\s*)?[*_]*\s*(?:" + "|".join(names.values()) + r")(?![a-z])",
        re.IGNORECASE | re.MULTILINE,
    )
    starts = [match.start() for match in headings.finditer(text)]
    for dimension, pattern in names.items():
        if reading.seen(dimension):
            continue
        inline = re.search(
            r"(?<![a-z])" + pattern + r"(?:[\s_\-]*(?:score|rating))?(?![a-z])"
            # A scale note between the name and the score: "Accuracy (1-10): 8".
            r"(?:\s*\(\s*1\s*(?:-|\u2013|to)\s*10\s*\))?"
            r"[\s\"'*:=|()\[\]\-\u2013\u2014]*(?:(?:is|of|was)\s*[:\-]?\s*)?" + _NUMBER + _OUT_OF,
            text,
            re.IGNORECASE,
        )
        if inline:
            reading.record(dimension, _scored(inline))
            continue
        heading = re.search(
            r"^[\s#>*\-•|]*(?:\d+[.)]\s*)?[*_]*\s*" + pattern + r"(?![a-z])",
            text,
            re.IGNORECASE | re.MULTILINE,
        )
        if not heading:
            continue
        end = min((start for start in starts if start > heading.start()), default=len(text))
        segment = text[heading.end() : end]
        found = [
            m for m in (_SEGMENT_SCORE.search(segment), _SEGMENT_FRACTION.search(segment)) if m
        ]
        if found:
            reading.record(dimension, _scored(min(found, key=lambda m: m.start())))


def parse_scores(text: str, dimensions: Sequence[str], scale: tuple[int, int] = SCALE) -> Verdict:
    """A pointwise verdict from a judge's text (rules in the module docstring)."""
    reading = _Reading(tuple(dimensions), scale)
    if not text or not text.strip():
        return Verdict(False, error="the answer is empty")
    for value in json_values(text):
        _walk(value, reading)
    if not reading.values and not reading.errors:
        for value in _literal_spans(text):
            _walk(value, reading)
    from_json = bool(reading.values or reading.errors)
    _prose(text, reading)
    values = {name: reading.values[name] for name in dimensions if name in reading.values}
    problems = []
    unreadable = [
        f"{name} ({reading.errors[name]})" for name in dimensions if name in reading.errors
    ]
    if unreadable:
        problems.append("not read: " + "; ".join(unreadable))
    missing = [name for name in dimensions if not reading.seen(name)]
    if missing:
        problems.append("missing: " + ", ".join(missing))
    lines = list(reading.general)
    lines += [f"{name}: {reading.reasons[name]}" for name in dimensions if name in reading.reasons]
    reasoning = "\n".join(lines) if lines or from_json else text.strip()
    if not values:
        problems.insert(0, "no dimension's score could be read")
    return Verdict(bool(values), values, error="; ".join(problems), reasoning=reasoning)


def _continued(text: str, dimensions: Sequence[str]) -> str:
    """A completion answer starts after the prompt's "<first dimension>:" cue."""
    return f"{dimensions[0]}:{text}" if re.match(r"\s*\d", text) else text


def parse_planning(text: str, judge_input: JudgeInput) -> Verdict:
    return parse_scores(_continued(text, PLANNING_DIMENSIONS), PLANNING_DIMENSIONS)


def parse_tool_creation(text: str, judge_input: JudgeInput) -> Verdict:
    return parse_scores(_continued(text, CREATION_DIMENSIONS), CREATION_DIMENSIONS)


def overall(verdict: Verdict, divisor: float = REPORT_DIVISOR) -> float | None:
    """The item's headline: Overall on the reported scale (/ 10); None when it was not read."""
    value = verdict.values.get("Overall") if verdict.ok else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) / divisor


PLANNING = JudgeTemplate(
    name="ultratool.planning",
    kind="pointwise",
    title="UltraTool planning: six dimensions and Overall, 1-10 (reported / 10)",
    source="ours (written after Huang et al. 2024, section 3.2)",
    build=build_planning,
    parse=parse_planning,
    reminder=reminder_text(PLANNING_DIMENSIONS),
    suites=("ultratool",),
    tasks=("planning",),
    dimensions=PLANNING_DIMENSIONS,
    scale=SCALE,
    report_divisor=REPORT_DIVISOR,
    texts=lambda: _texts("judge_planning.txt", PLANNING_DIMENSIONS),
)

TOOL_CREATION = JudgeTemplate(
    name="ultratool.tool_creation",
    kind="pointwise",
    title="UltraTool tool creation: five dimensions and Overall, 1-10 (reported / 10)",
    source="ours (written after Huang et al. 2024, section 3.3)",
    build=build_tool_creation,
    parse=parse_tool_creation,
    reminder=reminder_text(CREATION_DIMENSIONS),
    suites=("ultratool",),
    tasks=("tool_creation",),
    dimensions=CREATION_DIMENSIONS,
    scale=SCALE,
    report_divisor=REPORT_DIVISOR,
    texts=lambda: _texts("judge_tool_creation.txt", CREATION_DIMENSIONS),
)


# --- UltraTool's published planning evaluations -------------------------------------------------


@dataclass(frozen=True)
class PlanningEvaluation:
    """One line of a published planning evaluation: a model's plan and the judge's scores."""

    line: int
    # The line's ordinal among the non-blank lines: the planning test set's sample id.
    external_id: str
    query: str
    reference: str
    output: str
    scores: dict[str, int | float]
    reasonings: dict[str, str]
    source: str = ""

    def verdict(self) -> Verdict:
        missing = [name for name in PLANNING_DIMENSIONS if name not in self.scores]
        reasoning = "\n".join(f"{name}: {text}" for name, text in self.reasonings.items())
        return Verdict(
            True,
            dict(self.scores),
            error=f"missing: {', '.join(missing)}" if missing else "",
            reasoning=reasoning,
        )

    def published_output(self) -> PublishedOutput:
        return PublishedOutput(
            external_id=self.external_id, output=self.output, split="test", source=self.source
        )


def _text_field(value: Any, where: str, path: Path, line: int) -> str:
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        value = "\n".join(value)  # a plan given as a list of step lines
    if not isinstance(value, str):
        raise ImportFormatError(
            f"expected text, got {type_name(value)}", file=path, line=line, field=where
        )
    return value


def _nested(record: Any, keys: Sequence[str], path: Path, line: int) -> Any:
    value = record
    for depth, key in enumerate(keys):
        where = ".".join(keys[: depth + 1])
        if not isinstance(value, dict):
            parent = ".".join(keys[:depth]) or None
            raise ImportFormatError(
                f"expected an object, got {type_name(value)}", file=path, line=line, field=parent
            )
        if key not in value:
            raise ImportFormatError("missing", file=path, line=line, field=where)
        value = value[key]
    return value


def read_planning_evaluations(path: Path) -> list[PlanningEvaluation]:
    """UltraTool's published planning evaluations: JSON Lines in the order of the planning test
    set, each line
        {"data": {"data": {"input": QUERY, "reference": GOLD_PLAN}, "init output": MODEL_PLAN},
         "eval": [{"Reasoning": TEXT, "Accuracy Score": 7}, {"Reasoning": TEXT,
                   "Completeness Score": 10}, ...]}
    with the dimensions Accuracy, Completeness, Executability, Syntactic Soundness, Structural
    Rationality, Efficiency and Overall. An eval object holds "Reasoning" (any case; also
    "reason") and one or more "<Dimension> Score" keys ("Score" optional, case, spaces and "_"
    ignored); a score is a number or a numeric string within 1-10. A dimension missing from a
    line is left out of its scores; a dimension given twice, a score out of 1-10 or not a
    number, an unknown key, a line without any score, bad JSON or a missing key raise
    ImportFormatError naming the file, line and field (e.g. "eval[2].Accuracy Score")."""
    lookup = {_normal(name): name for name in PLANNING_DIMENSIONS}
    records: list[PlanningEvaluation] = []
    for ordinal, (line, record) in enumerate(iter_jsonl(path), start=1):
        if not isinstance(record, dict):
            raise ImportFormatError(
                f"expected a JSON object, got {type_name(record)}", file=path, line=line
            )
        query = _text_field(
            _nested(record, ("data", "data", "input"), path, line), "data.data.input", path, line
        )
        reference = _text_field(
            _nested(record, ("data", "data", "reference"), path, line),
            "data.data.reference",
            path,
            line,
        )
        output = _text_field(
            _nested(record, ("data", "init output"), path, line), "data.init output", path, line
        )
        evaluations = _nested(record, ("eval",), path, line)
        if not isinstance(evaluations, list):
            raise ImportFormatError(
                f"expected a list of scored dimensions, got {type_name(evaluations)}",
                file=path,
                line=line,
                field="eval",
            )
        scores: dict[str, int | float] = {}
        reasonings: dict[str, str] = {}
        for index, entry in enumerate(evaluations):
            where = f"eval[{index}]"
            if not isinstance(entry, dict):
                raise ImportFormatError(
                    f"expected an object, got {type_name(entry)}", file=path, line=line, field=where
                )
            reason = ""
            named: list[tuple[str, str, Any]] = []
            for key, value in entry.items():
                if str(key).strip().lower() in ("reasoning", "reason"):
                    if not isinstance(value, str):
                        raise ImportFormatError(
                            f"expected text, got {type_name(value)}",
                            file=path,
                            line=line,
                            field=f"{where}.{key}",
                        )
                    reason = value.strip()
                    continue
                dimension = lookup.get(_normal(str(key)))
                if dimension is None:
                    known = ", ".join(PLANNING_DIMENSIONS)
                    raise ImportFormatError(
                        f"unknown dimension {key!r} (known: {known})",
                        file=path,
                        line=line,
                        field=f"{where}.{key}",
                    )
                named.append((dimension, str(key), value))
            if not named:
                raise ImportFormatError(
                    "holds no '<Dimension> Score' key", file=path, line=line, field=where
                )
            for dimension, key, value in named:
                if dimension in scores:
                    raise ImportFormatError(
                        f"{dimension} is scored twice on this line",
                        file=path,
                        line=line,
                        field=f"{where}.{key}",
                    )
                score, error = read_score(value)
                if score is None:
                    raise ImportFormatError(error, file=path, line=line, field=f"{where}.{key}")
                scores[dimension] = score
                if reason:
                    reasonings[dimension] = reason
        if not scores:
            raise ImportFormatError("holds no score", file=path, line=line, field="eval")
        records.append(
            PlanningEvaluation(
                line=line,
                external_id=str(ordinal),
                query=query,
                reference=reference,
                output=output,
                scores={name: scores[name] for name in PLANNING_DIMENSIONS if name in scores},
                reasonings={
                    name: reasonings[name] for name in PLANNING_DIMENSIONS if name in reasonings
                },
                source=f"{path}, line {line}",
            )
        )
    return records


# --- published planning evaluations as judgments ------------------------------------------------


def planning_judgments(path: Path, answers: Path | None, task: str) -> PublishedJudgments:
    """The `ultratool-planning` judgment format (a registry.JudgmentReader): the planning
    evaluations of one file as one round of `ultratool.planning` verdicts on the plans they
    judged, sample i of the planning test set being line i."""
    evaluations = read_planning_evaluations(path)
    if not evaluations:
        raise ImportFormatError(f"{path} holds no evaluation")
    return PublishedJudgments(
        template="ultratool.planning",
        task="planning",
        items=[
            PublishedJudgment(
                external_id=e.external_id,
                split="test",
                query=e.query,
                output=e.published_output(),
                verdicts={0: e.verdict()},
                raw={
                    0: json.dumps(
                        {"scores": e.scores, "reasonings": e.reasonings}, ensure_ascii=False
                    )
                },
                source=e.source,
                name=e.external_id,
            )
            for e in evaluations
        ],
        where="the test split",
        query_field="data.data.input",
        mismatch_hint="; is the file in the order of the planning test set?",
    )


# What the suite declares (Suite.judges); benchmarks.kit.judging registers them.
JUDGES = (PLANNING, TOOL_CREATION)
