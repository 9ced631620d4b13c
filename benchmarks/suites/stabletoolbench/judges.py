"""StableToolBench's judges (papers/002 section 3.2; METRICS.md, StableToolBench) and how their
verdicts add up to SoPR and SoWR, as the reference code computes them. Pure Python, no Django.

Templates (declared by the suite, JUDGES, and registered by benchmarks.kit.judging; prompt
text from the evaluator files under prompts/, THUNLP-MT/StableToolBench @aa4ed9f, Apache-2.0,
see prompts/LICENSE-StableToolBench.txt):

  stabletoolbench.pass          kind pass, Solved / Unsure / Unsolved. `check_answer_status` of
                                the default evaluator (tooleval_gpt-3.5-turbo_default, the one
                                eval_pass_rate.py and eval_preference.py use) on the query and
                                the answer's final_answer (the Finish arguments as written).
  stabletoolbench.pass_details  kind pass, same labels. `parse_answer_status` on the query and
                                the whole answer object (json.dumps of {method, total_steps,
                                final_answer, answer_details}). The reference asks it only when
                                check_answer_status said Unsure, and its label then replaces
                                the first (rtl.py check_is_solved). FOLLOW_UP says so for the
                                platform; `pass_label_chain` combines the two.
  stabletoolbench.pass_normalized  kind pass, Solved / Unsolved. `check_solve_query` of the
                                normalized evaluator (OpenAINormalizedEvaluator): a lenient
                                yes/no ("do not be too strict") on the final answer, no Unsure.
                                Not what SoPR uses; offered because it judges differently.
  stabletoolbench.preference    kind pairwise. `select_better_answer` on the query and the two
                                answers as shown (Answer_0, Answer_1), each the answer object
                                as annotate_preference passes it: without "method", the final
                                answer cut to 1,000 characters. Verdict {"preferred": 0 | 1},
                                the index as shown; this template gives no tie.
  stabletoolbench.solvability   kind solvability, Solvable / Unsolvable / Unsure.
                                `check_task_solvable` on json.dumps({"query", "available_tools"}),
                                the tools being the item's candidate tools as ctx.tools knows
                                them ({name, description, parameters}), named as the model
                                sees them (ToolBench's `<api>_for_<tool>`; with the category
                                where two of them share it, importer.shown_names).

The reference gets the verdict through OpenAI function calling (the function forced, its
arguments JSON, a "reason" argument added). So do our judges where the endpoint's API style can
declare tools (a judge answering by forced call, benchmarks.kit.judging.call_prompt): each
template declares the published function's parameters with that "reason" as the schema of the
platform's `verdict` function (`_call`: JudgeTemplate.schema, and the published description),
whose arguments are checked against it and read by the same parser as a text reply. Our judges
may also be any OpenAI-compatible endpoint, a small local base model too, so the prompt also
describes the function in a system message and asks for the reply as JSON text:
{"reason": "...", "answer_status": "Solved" | "Unsure" | "Unsolved"} (select_better_answer:
"index": 0 | 1; check_task_solvable: "task_status"; check_solve_query: "is_solved": true |
false), which a judge answering in text gives. The user message is the template's description,
filled in, then that format line. A completion prompt (Prompt.text) is the same text followed by
the start of the JSON with the verdict's key first ('{"answer_status": "'), so that a base
model's first words are the verdict. max_tokens 1000 as the default evaluator's config.

Parsing never evaluates text. In order: a JSON object anywhere in the reply (prose, code
fences) or a Python-style dict, holding the key at any depth, also inside a function-call-like
wrapper whose "arguments" is a JSON text ({"name": "check_answer_status", "arguments":
"{\\"answer_status\\": \\"Solved\\"}"}); the last such object counts (a reply that echoes the
format first and answers after). Then `answer_status: Solved` / `"answer_status": "Solved"` in
the text, also the unfinished JSON a completion leaves. Then a bare label: the reply, or its
first line, starting with the label as a word ("Solved", "**Unsolved**", "Unsure."). Labels are
case-insensitive and "AnswerStatus.Solved" is read as Solved. Anything else is ok=False.

Prechecks (no judge asked): a pass template labels an answer Unsolved when it has no final answer
(evaluate.no_answer_reason: no Finish call at the end, an empty final answer, or a give-up), as
eval_pass_rate.py and check_is_solved do. The preference template prefers the first answer shown
when the two are identical (the reference picks one at random without asking): asked in both
orders, that makes a tie.

Adding up (pure functions; shares in 0-1):
  sopr(labels): per evaluation round, the mean over the queries of Solved 1 / Unsure 0.5 /
    Unsolved 0 (a query without a label in a round counts 0); SoPR is the mean over the rounds
    and its spread the population standard deviation of the round values (np.std), as
    eval_pass_rate.py prints them (there in percent).
  sowr(candidate_labels, reference_labels, preferences): per query, the pass label of each side
    is its most frequent label over the rounds; exactly one Solved wins; else (code, default)
    neither Solved and exactly one Unsure wins; else the preference judge decides: in each
    repeat both orders are asked and the repeat goes to a side only when both orders agree; the
    query goes to the side that won more repeats, a tie otherwise (eval_preference.py counts
    rounds the same way). SoWR = the share of queries the candidate wins; ties reported apart.
  sowr_from_counts(counts): the reference's own tally from per-query round counts (its
    preference_results JSON).
  query_solvable(votes): solvable when more than two judges say Solvable (section 3.2).

Where the paper, METRICS.md and the code differ, and what is followed (the code unless it is a
defect, METRICS.md):
  1. SoPR weights: the paper writes "Solved, Unsolved, or Unsure ... contribute 1, 0.5, and 0";
     the code (and METRICS.md) gives Unsure 0.5 and Unsolved 0. Followed: the code.
  2. SoPR spread: the code's np.std is the population std (ddof 0); judging.over_repeats uses the
     sample std (ddof 1). sopr() follows the code (ddof=0; ddof=1 on request).
  3. SoPR denominator: the code divides by the queries of the predictions file that are in the
     test ids, so a query missing from the file is not counted at all; the platform scores a
     failed item like a wrong answer. sopr() divides by the queries it is given.
  4. Rounds: eval_pass_rate.py's default is 4 evaluations, its scripts and the paper use 3. Three.
  5. The pass judge: check_answer_status first, parse_answer_status when it says Unsure (the
     second label stands). The task-solvability check in the code does not enter SoPR. The
     platform's judging runs one template per judgment, so the follow-up is declared in
     FOLLOW_UP for it; until it is wired, a run judged with stabletoolbench.pass alone keeps
     the Unsure labels the reference would have resolved.
  6. SoWR rule: the paper says a Solved answer beats an Unsolved one and the judge decides the
     rest; METRICS.md says exactly one Solved wins; the code (rtl.py
     normalized_openai_completions) lets exactly one Solved win, also over Unsure, and, when
     neither is Solved, exactly one Unsure win, before the judge. Followed: the code
     (unsure_decides=True; False gives METRICS.md's rule).
  7. Orders (defect): eval_preference.py meant to swap the answers on odd rounds but its test
     `i % 2 == 0 or i >= 0` is always true; annotate_preference (base.py) shuffles the two at
     random per call instead. Followed: METRICS.md, both orders asked, a win only when both
     agree, disagreement a tie.
  8. Labels in SoWR (defect): eval_preference.py means to take each answer's most frequent pass
     label (paper, Table 5 caption), but reads the CSV's dict text of all rounds as one string:
     its "most frequent" branch never runs, the Solved/Unsolved shortcut never matches, the
     lookup of that text in answer_status_mapping cannot succeed (caught), and the judge
     re-labels both answers in every preference round (final answers cut to 1,000 characters,
     as annotate_preference has already cut them). Followed: the intent, the most frequent
     label; a tie between labels is Unsure (ours: the reference's max over a set picks
     arbitrarily).
  9. A query one side has no answer for goes to the other side, as eval_preference.py does; a
     side whose judgments were all unreadable leaves the query incomplete.
 10. Solvability: the paper's filter used three models and its Appendix G prompt (Solvable or
     Unsolvable only); the repository's check_task_solvable also offers Unsure. Shipped: the
     repository's template (the paper's prompt is not in the published files). Unsure counts
     as not Solvable. The code passes the converted file's tool list (with Finish); ours is
     the item's candidate tools without Finish.
 11. Judge model: the config names gpt-3.5-turbo-16k at temperature 0.2; the paper used
     gpt-4-turbo-preview (EVAL_MODEL). The model and temperature are the Judge's settings here.
"""

from __future__ import annotations

import copy
import json
import re
import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from benchmarks.kit.judging import (
    PASS_LABELS,
    PASS_VALUE,
    SOLVABILITY_LABELS,
    JudgeInput,
    JudgeTemplate,
    Verdict,
    combine_orders,
    majority_solvable,
)
from benchmarks.kit.predictions import json_values, python_literal
from benchmarks.kit.protocol import Prompt
from benchmarks.suites.stabletoolbench.evaluate import answer_record, no_answer_reason
from benchmarks.suites.stabletoolbench.importer import shown_names

__all__ = [
    "FOLLOW_UP",
    "PASS",
    "PASS_DETAILS",
    "PASS_NORMALIZED",
    "PREFERENCE",
    "SOLVABILITY",
    "decide_by_labels",
    "function_descriptions",
    "function_specs",
    "majority_label",
    "pass_label",
    "pass_label_chain",
    "query_solvable",
    "sopr",
    "sopr_rounds",
    "sowr",
    "sowr_from_counts",
]

PROMPTS_DIR = Path(__file__).resolve().with_name("prompts")
DEFAULT = "tooleval_default"  # tooleval_gpt-3.5-turbo_default
NORMALIZED = "tooleval_normalized"  # tooleval_gpt-3.5-turbo_normalized
_EVALUATOR_FOLDER = {
    DEFAULT: "tooleval_gpt-3.5-turbo_default",
    NORMALIZED: "tooleval_gpt-3.5-turbo_normalized",
}
SUITES = ("stabletoolbench",)
MAX_TOKENS = 1000  # completions_kwargs.max_tokens of the default evaluator
# annotate_preference (base.py process_answer) cuts each final answer before comparing.
PREFERENCE_FINAL_ANSWER_CHARS = 1000
PREFERENCE_DETAILS_ITEMS = 3000


def _source(evaluator: str, function: str) -> str:
    return (
        f"THUNLP-MT/StableToolBench @aa4ed9f, toolbench/tooleval/evaluators/"
        f"{_EVALUATOR_FOLDER[evaluator]}/template.txt, function {function} (Apache-2.0); "
        "the JSON reply in place of function calling is ours"
    )


# --- the evaluator files ------------------------------------------------------------------------


@cache
def _published(name: str) -> str:
    """A prompts/ file without its header (the lines up to the first `---` line)."""
    text = (PROMPTS_DIR / name).read_text(encoding="utf-8")
    _header, separator, body = text.partition("\n---\n")
    if not separator:
        raise RuntimeError(f"prompt file {name} has no '---' line after its header")
    return body


@cache
def function_descriptions(evaluator: str = DEFAULT) -> dict[str, str]:
    """The evaluator template's functions: name -> description (the prompt, with placeholders),
    read the way the reference reads template.txt (<function><name>..<description>..)."""
    body = _published(f"{evaluator}_template.txt")
    functions: dict[str, str] = {}
    for block in re.findall(r"<function>(.*?)</function>", body, re.DOTALL):
        name = re.search(r"<name>(.*?)</name>", block, re.DOTALL)
        description = re.search(r"<description>(.*?)</description>", block, re.DOTALL)
        if name and description:
            functions[name.group(1).strip()] = description.group(1)
    return functions


@cache
def function_specs(evaluator: str = DEFAULT) -> dict[str, dict[str, Any]]:
    """The function schemas of the evaluator's config (completions_kwargs.functions) by name."""
    import yaml  # PyYAML, a dependency of drf-spectacular; only this data file needs it

    config = yaml.safe_load(_published(f"{evaluator}_config.yaml"))
    return {spec["name"]: spec for spec in config["completions_kwargs"]["functions"]}


_PLACEHOLDER = re.compile(r"\{(query|answer|answer_0|answer_1|task|final_answer)\}")


def _fill(template: str, **values: str) -> str:
    # One pass, so an answer that contains "{query}" is never substituted.
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def _function_with_reason(evaluator: str, function: str) -> dict[str, Any]:
    # The reference asks with return_reason=True: a required "reason" argument is added.
    spec = copy.deepcopy(function_specs(evaluator)[function])
    spec["parameters"]["properties"]["reason"] = {
        "type": "string",
        "description": "explain your answer.",
    }
    spec["parameters"]["required"] = [*spec["parameters"].get("required", []), "reason"]
    return spec


def _system(evaluator: str, function: str) -> str:
    spec = _function_with_reason(evaluator, function)
    return (
        "You are an evaluator. You answer by calling the function below, which you cannot "
        "call directly: write its arguments as one JSON object and nothing else.\n\n"
        f"Function:\n{json.dumps(spec, indent=2, ensure_ascii=False)}"
    )


def _texts(evaluator: str, function: str, fmt: str) -> dict[str, str]:
    """The fixed text of a template's prompts (what a judge version pins)."""
    return {
        "system": _system(evaluator, function),
        "description": function_descriptions(evaluator)[function],
        "format": fmt,
    }


def _call(evaluator: str, function: str) -> dict[str, Any]:
    """What a forced verdict call declares (JudgeTemplate.schema, call_description): the
    published function's parameters with the reference's "reason", and its description."""
    return {
        "schema": lambda: {
            **_function_with_reason(evaluator, function)["parameters"],
            "additionalProperties": False,
        },
        "call_description": lambda: str(function_specs(evaluator)[function]["description"]),
        "texts": lambda: _texts(evaluator, function, _FORMATS[function]),
    }


def _prompt(evaluator: str, function: str, fmt: str, prefix: str, **values: str) -> Prompt:
    system = _system(evaluator, function)
    user = _fill(function_descriptions(evaluator)[function], **values).strip("\n")
    user = f"{user}\n\n{fmt}"
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    # A base model continues the JSON it has been started on, verdict first.
    text = f"{system}\n\n{user}\n\n{prefix}"
    return Prompt(messages=messages, text=text, stop=("}", "\n\n"), max_tokens=MAX_TOKENS)


# --- reading a judge's reply --------------------------------------------------------------------

_FENCE = re.compile(r"```[a-zA-Z]*")
_DICT_TEXT = re.compile(r"\{[^{}]*\}")
_LABEL_TYPE = re.compile(r"^(?:answerstatus|taskstatus)\.", re.IGNORECASE)


def _norm_key(key: Any) -> str:
    return re.sub(r"[^a-z0-9]", "", str(key).lower())


def _decoded(value: Any) -> Any:
    """A JSON (or Python-literal) object written inside a string, as function-call arguments
    are; the value itself otherwise."""
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            return json.loads(value)
        except ValueError:
            try:
                return python_literal(value)
            except ValueError:
                return value
    return value


def _find(value: Any, keys: frozenset[str], found: list[tuple[Any, Any]], depth: int = 0) -> None:
    """Every (value, the object holding it) under one of `keys`, depth first, in order."""
    if depth > 8:
        return
    value = _decoded(value)
    if isinstance(value, dict):
        for key, inner in value.items():
            if _norm_key(key) in keys:
                found.append((_decoded(inner), value))
            else:
                _find(inner, keys, found, depth + 1)
    elif isinstance(value, list):
        for inner in value:
            _find(inner, keys, found, depth + 1)


def _objects(text: str) -> list[Any]:
    """The JSON values in the text, and the Python-style dicts JSON cannot read."""
    values = json_values(text)
    for match in _DICT_TEXT.finditer(text):
        if "'" not in match.group(0):
            continue  # JSON already had its chance
        try:
            values.append(python_literal(match.group(0)))
        except ValueError:
            continue
    return values


# The reason of an unfinished JSON object (a completion stopped before its end).
_LOOSE_REASON = re.compile(r'"reason"\s*:\s*"((?:[^"\\]|\\.)*)', re.DOTALL)


def _unescape(text: str) -> str:
    try:
        return str(json.loads(f'"{text}"'))
    except ValueError:
        return text


def _reason(holder: Any) -> str:
    if isinstance(holder, dict):
        for key in ("reason", "content", "explanation"):
            if isinstance(reason := holder.get(key), str):
                return reason
    return ""


def _read(
    text: str,
    *,
    keys: frozenset[str],
    value: Callable[[Any], Any],
    key_pattern: str,
    value_pattern: str,
    prefix: str,
    bare: re.Pattern[str],
    error: str,
) -> tuple[bool, Any, str]:
    """(read, value, reasoning) from a judge's reply, in the order of the module docstring.
    `value` turns a raw value into the verdict's value (None: not a value of the scale)."""
    cleaned = _FENCE.sub("", text)
    for candidate in (cleaned, prefix + cleaned):
        found: list[tuple[Any, Any]] = []
        for obj in _objects(candidate):
            _find(obj, keys, found)
        for raw, holder in reversed(found):
            read = value(raw)
            if read is not None:
                return True, read, _reason(holder)
        pairs = re.findall(
            rf"{key_pattern}[\"'`*\s]*[:=][\"'`*\s]*({value_pattern})",
            candidate,
            re.IGNORECASE,
        )
        for raw in reversed(pairs):
            read = value(raw)
            if read is not None:
                loose = _LOOSE_REASON.search(candidate)
                return True, read, _unescape(loose.group(1)) if loose else cleaned.strip()
    stripped = cleaned.strip()
    first = next((line for line in stripped.splitlines() if line.strip()), "")
    match = bare.match(first)
    if match:
        read = value(match.group(1))
        if read is not None:
            return True, read, stripped
    return False, None, error


def _label_reader(labels: Sequence[str]) -> Callable[[Any], str | None]:
    by_lower = {label.lower(): label for label in labels}

    def read(raw: Any) -> str | None:
        if not isinstance(raw, str):
            return None
        text = _LABEL_TYPE.sub("", raw.strip().strip("\"'`*_. ").strip())
        return by_lower.get(text.lower())

    return read


def _bare(words: Sequence[str]) -> re.Pattern[str]:
    # The reply's first line starts with the word (markdown and quotes around it allowed).
    return re.compile(
        rf"^[\s\"'`*_#>:-]*((?:AnswerStatus\.|TaskStatus\.)?(?:{'|'.join(words)}))\b",
        re.IGNORECASE,
    )


def _index(raw: Any) -> int | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int | float) and raw in (0, 1):
        return int(raw)
    if isinstance(raw, str):
        match = re.fullmatch(
            r"\s*[\"'`*]*\s*(?:answer[\s_]*)?([01])(?:\.0)?\s*[\"'`*.]*\s*", raw, re.IGNORECASE
        )
        if match:
            return int(match.group(1))
    return None


def _boolean(raw: Any) -> bool | None:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str):
        text = raw.strip().strip("\"'`*. ").lower()
        if text in {"true", "yes", "solved"}:
            return True
        if text in {"false", "no", "unsolved"}:
            return False
    return None


# --- templates ----------------------------------------------------------------------------------

STATUS_FORMAT = (
    'Reply with JSON only, in exactly this form: {"reason": "<why>", "answer_status": '
    '"<Solved, Unsure or Unsolved>"}'
)
PREFERENCE_FORMAT = (
    'Reply with JSON only, in exactly this form: {"reason": "<why>", "index": <0 for Answer_0, '
    "1 for Answer_1>}"
)
SOLVABILITY_FORMAT = (
    'Reply with JSON only, in exactly this form: {"reason": "<why>", "task_status": '
    '"<Solvable, Unsolvable or Unsure>"}'
)
NORMALIZED_FORMAT = (
    'Reply with JSON only, in exactly this form: {"reason": "<why>", "is_solved": <true or false>}'
)

_FORMATS = {
    "check_answer_status": STATUS_FORMAT,
    "parse_answer_status": STATUS_FORMAT,
    "select_better_answer": PREFERENCE_FORMAT,
    "check_task_solvable": SOLVABILITY_FORMAT,
    "check_solve_query": NORMALIZED_FORMAT,
}

_PASS_KEYS = frozenset({"answerstatus", "status", "label"})
_STATUS_PREFIX = '{"answer_status": "'
_pass_value = _label_reader(PASS_LABELS)


def _query(judge_input: JudgeInput) -> str:
    return str(judge_input.item.input.get("query") or "")


def _precheck_pass(judge_input: JudgeInput) -> Verdict | None:
    reason = no_answer_reason(answer_record(judge_input.outputs[0]))
    if reason is None:
        return None
    return Verdict(True, {"label": "Unsolved"}, reasoning=f"Unsolved without a judge: {reason}")


def parse_pass(text: str, judge_input: JudgeInput) -> Verdict:
    ok, label, reasoning = _read(
        text,
        keys=_PASS_KEYS,
        value=_pass_value,
        key_pattern=r"answer[\s_]*status",
        value_pattern=r"(?:AnswerStatus\.)?\w+",
        prefix=_STATUS_PREFIX,
        bare=_bare(("unsolved", "solved", "unsure")),
        error='no {"answer_status": "Solved" | "Unsure" | "Unsolved"} in the answer',
    )
    if not ok:
        return Verdict(False, error=reasoning)
    return Verdict(True, {"label": label}, reasoning=reasoning)


def build_pass(judge_input: JudgeInput) -> Prompt:
    record = answer_record(judge_input.outputs[0])
    return _prompt(
        DEFAULT,
        "check_answer_status",
        STATUS_FORMAT,
        _STATUS_PREFIX,
        query=_query(judge_input),
        answer=record["final_answer"],
    )


def build_pass_details(judge_input: JudgeInput) -> Prompt:
    record = answer_record(judge_input.outputs[0])
    return _prompt(
        DEFAULT,
        "parse_answer_status",
        STATUS_FORMAT,
        _STATUS_PREFIX,
        query=_query(judge_input),
        # json.dumps(answer) with its defaults, as check_is_solved writes it.
        answer=json.dumps(record),
    )


def _preference_view(record: dict[str, Any]) -> dict[str, Any]:
    """The answer as annotate_preference shows it (base.py process_answer)."""
    view = {key: value for key, value in record.items() if key != "method"}
    view["final_answer"] = str(view.get("final_answer", ""))[:PREFERENCE_FINAL_ANSWER_CHARS]
    details = view.get("answer_details")
    if isinstance(details, list | str):
        view["answer_details"] = details[:PREFERENCE_DETAILS_ITEMS]
    return view


def build_preference(judge_input: JudgeInput) -> Prompt:
    first, second = (answer_record(outcome) for outcome in judge_input.outputs)
    return _prompt(
        DEFAULT,
        "select_better_answer",
        PREFERENCE_FORMAT,
        '{"index": ',
        query=_query(judge_input),
        answer_0=json.dumps(_preference_view(first)),
        answer_1=json.dumps(_preference_view(second)),
    )


def _precheck_preference(judge_input: JudgeInput) -> Verdict | None:
    first, second = (answer_record(outcome) for outcome in judge_input.outputs)
    # rtl.py check_identity_answers: same final answer and same details.
    if first.get("final_answer") == second.get("final_answer") and str(
        first.get("answer_details")
    ) == str(second.get("answer_details")):
        return Verdict(
            True,
            {"preferred": 0},
            reasoning="identical answers: the first shown, without a judge (asked in both "
            "orders this is a tie)",
        )
    return None


def parse_preference(text: str, judge_input: JudgeInput) -> Verdict:
    ok, index, reasoning = _read(
        text,
        keys=frozenset({"index", "preferred", "preference", "better", "bestanswerindex"}),
        value=_index,
        key_pattern=r"(?:index|preferred|preference|better)",
        value_pattern=r"(?:answer[\s_]*)?\d+(?:\.0)?",
        prefix='{"index": ',
        bare=re.compile(r"^[\s\"'`*_#>:-]*((?:answer[\s_]*)?[01])\b", re.IGNORECASE),
        error='no {"index": 0 | 1} in the answer',
    )
    if not ok:
        return Verdict(False, error=reasoning)
    return Verdict(True, {"preferred": index}, reasoning=reasoning)


def _available_tools(judge_input: JudgeInput) -> list[dict[str, Any]]:
    """The item's tools as the converted answers list them: under the names the model saw
    (importer.shown_names: ToolBench's `<api>_for_<tool>`), not the platform's keys."""
    tools = judge_input.ctx.tools if judge_input.ctx is not None else {}
    keys = judge_input.item.candidate_tools
    shown = shown_names(keys)
    listed: list[dict[str, Any]] = []
    for key in keys:
        spec = tools.get(key)
        if spec is None:
            listed.append({"name": shown[key]})
        else:
            listed.append(
                {"name": shown[key], "description": spec.description, "parameters": spec.parameters}
            )
    return listed


def build_solvability(judge_input: JudgeInput) -> Prompt:
    task = {"query": _query(judge_input), "available_tools": _available_tools(judge_input)}
    return _prompt(
        DEFAULT,
        "check_task_solvable",
        SOLVABILITY_FORMAT,
        '{"task_status": "',
        task=json.dumps(task),
    )


def parse_solvability(text: str, judge_input: JudgeInput) -> Verdict:
    ok, label, reasoning = _read(
        text,
        keys=frozenset({"taskstatus", "status", "label"}),
        value=_label_reader(SOLVABILITY_LABELS),
        key_pattern=r"task[\s_]*status",
        value_pattern=r"(?:TaskStatus\.)?\w+",
        prefix='{"task_status": "',
        bare=_bare(("unsolvable", "solvable", "unsure")),
        error='no {"task_status": "Solvable" | "Unsolvable" | "Unsure"} in the answer',
    )
    if not ok:
        return Verdict(False, error=reasoning)
    return Verdict(True, {"label": label}, reasoning=reasoning)


def build_pass_normalized(judge_input: JudgeInput) -> Prompt:
    record = answer_record(judge_input.outputs[0])
    return _prompt(
        NORMALIZED,
        "check_solve_query",
        NORMALIZED_FORMAT,
        '{"is_solved": ',
        query=_query(judge_input),
        final_answer=record["final_answer"],
    )


def parse_pass_normalized(text: str, judge_input: JudgeInput) -> Verdict:
    ok, solved, reasoning = _read(
        text,
        keys=frozenset({"issolved", "solved"}),
        value=_boolean,
        key_pattern=r"is[\s_]*solved",
        value_pattern=r"\w+",
        prefix='{"is_solved": ',
        bare=re.compile(r"^[\s\"'`*_#>:-]*(true|false|yes|no|unsolved|solved)\b", re.IGNORECASE),
        error='no {"is_solved": true | false} in the answer',
    )
    if not ok:
        return Verdict(False, error=reasoning)
    return Verdict(True, {"label": "Solved" if solved else "Unsolved"}, reasoning=reasoning)


PASS = JudgeTemplate(
    name="stabletoolbench.pass",
    kind="pass",
    title="StableToolBench: does the final answer solve the query (check_answer_status)",
    source=_source(DEFAULT, "check_answer_status"),
    build=build_pass,
    parse=parse_pass,
    reminder=STATUS_FORMAT,
    suites=SUITES,
    labels=PASS_LABELS,
    precheck=_precheck_pass,
    follow_up=("Unsure", "stabletoolbench.pass_details"),
    **_call(DEFAULT, "check_answer_status"),
)
PASS_DETAILS = JudgeTemplate(
    name="stabletoolbench.pass_details",
    kind="pass",
    title="StableToolBench: is the answer solved, judged on its execution details "
    "(parse_answer_status, asked after an Unsure)",
    source=_source(DEFAULT, "parse_answer_status"),
    build=build_pass_details,
    parse=parse_pass,
    reminder=STATUS_FORMAT,
    suites=SUITES,
    labels=PASS_LABELS,
    precheck=_precheck_pass,
    **_call(DEFAULT, "parse_answer_status"),
)
PASS_NORMALIZED = JudgeTemplate(
    name="stabletoolbench.pass_normalized",
    kind="pass",
    title="StableToolBench, normalized evaluator: does the answer solve the query, "
    "leniently, yes or no (check_solve_query)",
    source=_source(NORMALIZED, "check_solve_query"),
    build=build_pass_normalized,
    parse=parse_pass_normalized,
    reminder=NORMALIZED_FORMAT,
    suites=SUITES,
    labels=("Solved", "Unsolved"),
    precheck=_precheck_pass,
    **_call(NORMALIZED, "check_solve_query"),
)
PREFERENCE = JudgeTemplate(
    name="stabletoolbench.preference",
    kind="pairwise",
    title="StableToolBench: the better of two answers (select_better_answer)",
    source=_source(DEFAULT, "select_better_answer"),
    build=build_preference,
    parse=parse_preference,
    reminder=PREFERENCE_FORMAT,
    suites=SUITES,
    precheck=_precheck_preference,
    with_pass_labels=lambda a, b, prefs: sowr_metrics(a, b, prefs),
    **_call(DEFAULT, "select_better_answer"),
)
SOLVABILITY = JudgeTemplate(
    name="stabletoolbench.solvability",
    kind="solvability",
    title="StableToolBench: can the query be solved with its tools (check_task_solvable)",
    source=_source(DEFAULT, "check_task_solvable"),
    build=build_solvability,
    parse=parse_solvability,
    reminder=SOLVABILITY_FORMAT,
    suites=SUITES,
    labels=SOLVABILITY_LABELS,
    **_call(DEFAULT, "check_task_solvable"),
)

# The reference asks a second template when the first gives a label: template -> (label, next)
# (the templates carry it as JudgeTemplate.follow_up, which the platform's judge runner reads).
FOLLOW_UP: dict[str, tuple[str, str]] = {
    "stabletoolbench.pass": ("Unsure", "stabletoolbench.pass_details"),
}


def pass_label_chain(first: str, details: str | None) -> str:
    """The pass label as check_is_solved gives it: the first label, unless it is Unsure and the
    details judgment has a label, which then stands."""
    first = pass_label(first)
    if first == "Unsure" and details is not None:
        return pass_label(details)
    return first


# --- adding verdicts up -------------------------------------------------------------------------


def pass_label(value: str) -> str:
    """A pass label in its canonical spelling ("AnswerStatus.Solved", "solved" -> "Solved");
    ValueError for anything else."""
    read = _pass_value(value)
    if read is None:
        raise ValueError(f"not a pass label: {value!r} (expected one of {', '.join(PASS_LABELS)})")
    return read


RoundLabels = Sequence[str | None] | Mapping[Any, str | None]


def _by_round(labels: RoundLabels) -> dict[int, str]:
    """{round: label} from a list (index = round) or a mapping keyed by round number (the
    reference's is_solved {"0": "AnswerStatus.Solved", ...}, keys in any order)."""
    items = labels.items() if isinstance(labels, Mapping) else enumerate(labels)
    return {int(key): pass_label(label) for key, label in items if label is not None}


def sopr_rounds(labels: Mapping[str, RoundLabels], *, rounds: int | None = None) -> list[float]:
    """Per evaluation round, the mean over the queries of Solved 1 / Unsure 0.5 / Unsolved 0; a
    query without a label in a round counts 0 there (eval_pass_rate.py)."""
    per_query = [_by_round(value) for value in labels.values()]
    if rounds is None:
        rounds = max((max(q, default=-1) + 1 for q in per_query), default=0)
    if not per_query:
        return []
    return [
        sum(PASS_VALUE[q[r]] for q in per_query if r in q) / len(per_query) for r in range(rounds)
    ]


def sopr(
    labels: Mapping[str, RoundLabels], *, rounds: int | None = None, ddof: int = 0
) -> dict[str, float | None]:
    """SoPR (0-1) over the queries given, from each query's labels per evaluation round: the mean
    of the per-round values and their standard deviation (ddof 0, np.std, as the reference).
    {"sopr", "sopr_std", "n" (queries), "rounds"}; None values for no query or no round."""
    values = sopr_rounds(labels, rounds=rounds)
    result: dict[str, float | None] = {
        "sopr": None,
        "sopr_std": None,
        "n": float(len(labels)),
        "rounds": float(len(values)),
    }
    if values:
        result["sopr"] = statistics.fmean(values)
        if ddof == 0:
            result["sopr_std"] = statistics.pstdev(values)
        else:
            result["sopr_std"] = statistics.stdev(values) if len(values) > 1 else 0.0
    return result


def majority_label(labels: str | RoundLabels) -> str | None:
    """An answer's pass label over several evaluations: the most frequent; a tie between labels
    is Unsure (the evaluations disagree); None without any label."""
    if isinstance(labels, str):
        return pass_label(labels)
    counts = Counter(_by_round(labels).values())
    if not counts:
        return None
    top = max(counts.values())
    winners = [label for label, count in counts.items() if count == top]
    return winners[0] if len(winners) == 1 else "Unsure"


def decide_by_labels(candidate: str, reference: str, *, unsure_decides: bool = True) -> int | None:
    """1 (candidate wins) / -1 (reference wins) when the pass labels decide, None when the
    preference judge must: exactly one Solved wins; with `unsure_decides` (the code's rule),
    when neither is Solved, exactly one Unsure wins."""
    candidate, reference = pass_label(candidate), pass_label(reference)
    for label in ("Solved", "Unsure") if unsure_decides else ("Solved",):
        if (candidate == label) != (reference == label):
            return 1 if candidate == label else -1
        if candidate == label:
            return None  # both: the judge compares them
    return None


def _shares(outcomes: Sequence[int], incomplete: int, **extra: float) -> dict[str, float | None]:
    n = len(outcomes)
    win = sum(1 for o in outcomes if o == 1) / n if n else None
    return {
        "sowr": win,
        "win": win,
        "tie": sum(1 for o in outcomes if o == 0) / n if n else None,
        "loss": sum(1 for o in outcomes if o == -1) / n if n else None,
        "n": float(n),
        "incomplete": float(incomplete),
        **extra,
    }


def sowr(
    candidate_labels: Mapping[str, str | RoundLabels],
    reference_labels: Mapping[str, str | RoundLabels],
    preferences: Mapping[str, Sequence[tuple[int | None, int | None]]],
    *,
    unsure_decides: bool = True,
) -> dict[str, float | None]:
    """SoWR of a candidate run against a reference run (see the module docstring).

    candidate_labels / reference_labels: per query, the answer's pass label, or its labels over
    the evaluation rounds (a list, or a mapping keyed by round). preferences: per query, one
    (verdict shown AB, verdict shown BA) pair per repeat, canonical with the candidate as A
    (judging.canonical_preference: 1 candidate better, -1 reference better, None missing).
    Returns shares in 0-1 of the decided queries: {"sowr" (= win), "win", "tie", "loss", "n",
    "incomplete" (queries without a decision: left out of the shares), "by_labels" (queries the
    pass labels decided)}."""
    queries = list(dict.fromkeys([*candidate_labels, *reference_labels]))
    outcomes: list[int] = []
    incomplete = 0
    by_labels = 0
    for query in queries:
        if query not in reference_labels:
            outcomes.append(1)  # eval_preference.py: no reference answer, the candidate wins
            continue
        if query not in candidate_labels:
            outcomes.append(-1)
            continue
        candidate = majority_label(candidate_labels[query])
        reference = majority_label(reference_labels[query])
        if candidate is None or reference is None:
            incomplete += 1
            continue
        decided = decide_by_labels(candidate, reference, unsure_decides=unsure_decides)
        if decided is not None:
            by_labels += 1
            outcomes.append(decided)
            continue
        repeats = [combine_orders(ab, ba) for ab, ba in preferences.get(query, ())]
        complete = [r for r in repeats if r is not None]
        if not complete:
            incomplete += 1
            continue
        wins, losses = complete.count(1), complete.count(-1)
        outcomes.append(1 if wins > losses else -1 if losses > wins else 0)
    return _shares(outcomes, incomplete, by_labels=float(by_labels))


def sowr_from_counts(counts: Mapping[str, tuple[int, int]]) -> dict[str, float | None]:
    """The reference's tally (eval_preference.py) from per-query (rounds the candidate won,
    rounds the reference won): more rounds wins, equal is a tie; shares over every query."""
    outcomes = [1 if c > r else -1 if r > c else 0 for c, r in counts.values()]
    return _shares(outcomes, 0)


def query_solvable(votes: Sequence[str], *, more_than: int = 2) -> bool | None:
    """Section 3.2's filter: solvable when more than `more_than` judges say Solvable (three
    judges: all three); Unsolvable and Unsure votes count against. None without votes."""
    read = _label_reader(SOLVABILITY_LABELS)
    normalised = []
    for vote in votes:
        label = read(vote)
        if label is None:
            raise ValueError(f"not a solvability label: {vote!r}")
        normalised.append(label)
    return majority_solvable(normalised, more_than=more_than)


def sowr_metrics(
    candidate_labels: Mapping[str, Sequence[str]],
    reference_labels: Mapping[str, Sequence[str]],
    preferences: Mapping[str, Sequence[tuple[int | None, int | None]]],
) -> dict[str, float | None]:
    """SoWR for a judge job's metrics, as percentages: the run (A) against the other (B), the
    pass labels deciding first (see sowr)."""
    result = sowr(candidate_labels, reference_labels, preferences)
    percent = {
        "SoWR": result.get("sowr"),
        "SoWR_tie": result.get("tie"),
        "SoWR_loss": result.get("loss"),
    }
    metrics: dict[str, float | None] = {
        name: None if value is None else round(100.0 * float(value), 2)
        for name, value in percent.items()
    }
    metrics["SoWR_by_labels"] = result.get("by_labels")
    return metrics


# What the suite declares (Suite.judges); benchmarks.kit.judging registers them.
JUDGES = (PASS, PASS_DETAILS, PASS_NORMALIZED, PREFERENCE, SOLVABILITY)
