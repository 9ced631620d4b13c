"""MTU-Bench's evaluation side (MTU-Eval): prompts, answer parsing and metrics, as pure functions.

Tasks (one per split; each reads the split of the same name; metrics in display order, the first
is the headline; every metric is a percentage rounded to 2 decimals):

    S-S  single-turn, single-tool   TS, PS, Avg
    S-M  single-turn, multi-tool    TN, TO, Avg
    M-S  multi-turn, single-tool    TS, PS, ATS, SATS, SR, TPR, Avg
    M-M  multi-turn, multi-tool     TN, TO, ATS, SATS, SR, TPR, Avg
    OOD  out of distribution        TS, PS, ATS, SATS, SR, TPR, TN, TO, Avg

Avg is the mean of the task's other (rounded) metrics, as in the paper's tables; it is computed
once (MTU-Eval's cal_score.py multiplies its S-S/S-M average by 100 twice).

OOD: the paper reports it "under the M-S setting" (Table 5: TS, PS, ATS, SATS, SR, TPR), but the
published OOD file mixes all four settings: each record carries the rules of one of them (25
single-turn single-tool questions, two M-S dialogues, 13 single-turn multi-tool questions, six
M-M conversations). A turn is scored as its own rules ask: single-tool rules ("Action: The name of
the API to be called.") by TS/PS, multi-tool rules ("Action: The name of the APIs.") by TN/TO.
TS and PS are over the single-tool turns, TN and TO over the multi-tool turns; a turn is correct
by its own kind, and ATS, SATS, SR, TPR are over every OOD conversation (a single-turn question
is a one-turn conversation). cal_score.py does not score OOD at all.

How the tasks are composed (tasks.py declares them): every task shares build_prompt, parse,
score, cluster and the native form, which read a turn's rules from its question (setting_of)
and its split from the item; each task's aggregate is make_aggregate with its own metrics and,
for M-S, M-M and OOD, the dialogue metrics; its read_predictions reads the ids of its split.

Options (a run's options are merged over these defaults):
    variant = "reference" (default) | "strict" | "paper"
        reference: MTU-Eval's cal_score.py/util.py, crash bugs and the defects METRICS.md names
                   aside (see Rules).
        strict:    as reference, but argument values must be equal after normalisation (no
                   substring match) and digits are not spelled out.
        paper:     TN and TO as the paper defines them (section 2.2.2, appendix D): every
                   predicted tool counts in the union and keeps its predicted position; TO uses
                   the longest common subsequence and its 1-based start, so a perfect answer
                   with n calls scores cos(pi/2 * 1/n) (0.866 for 3, 0 for 1). A multi-tool turn
                   is correct when the renamed predicted list equals the gold list.
    system_prompt = True: chat prompts start with the paper's system prompt for the setting
        (prompts/*.txt). The published question (the user message) already holds the rules,
        the API list and the dialogue, so False sends the question alone.

Rules (METRICS.md, "MTU-Bench"; facts checked against util.py at MTU-Bench @d0811f8):
- Prompt: the published question verbatim. Completion style (base models) continues the
  question after "\\nThought:" and stops at the next observation or user line.
- Single-call answers (S-S, M-S, OOD single-tool): the name is the text after the first
  "Action:" up to "Action Input:"; the arguments are the first {...} (up to the first "}") in the
  text after the first "Action Input:", cut after its last "}" (a "}" is added when there is
  none), with newlines removed and True/False made true/false; JSON first, then with single
  quotes made double. No "Action:"/"Action Input:" or unreadable arguments: no call. No {...} at
  all (Action Input: None): empty arguments. A name containing "None": no call; a name with
  commas keeps the part before the first one.
- Multi-call answers (S-M, M-M, OOD multi-tool): each "Action: " block in order (util.py
  splits on the colon and a space; blocks echoing "The name of the API to be called." are
  skipped; text from "Please provide your" on is cut); the name loses its double quotes; the
  arguments are the text after "Action Input:" up to the first "}" as JSON, {} when unreadable
  or absent. Calls are keyed by name: a repeated tool keeps its first position and its last
  arguments.
- compare_dicts(a, b): values as lower-cased str(); entries valued "hotel" dropped from both;
  same number of keys, every key of a in b, each normalised value of a a substring of b's.
  Normalisation, in this order: remove "my "; digits to words ("10" -> "onezero");
  "findprovider." -> "bookappointment."; 2024-01-04 ... 2024-01-10 and "today" -> monday ...
  sunday. Because the digits are spelled out first, the date table can never match under the
  reference (it only turns "today" into "monday"), exactly as util.py behaves; the strict
  variant, which keeps digits, does map the dates. Single-tool scoring compares (gold,
  predicted), multi-tool scoring (predicted, gold).
- TS: the predicted name equals the gold one ("" for no call). PS: TS and the arguments compare
  equal. A single-tool turn is correct when PS holds.
- TN, TO (reference, strict): P lists the gold tools the answer called, in gold order, each
  renamed "<name>wrong" when its arguments do not compare equal; predicted tools outside the
  gold are left out (util.py builds P so). Both empty: TN = TO = 1; one empty: 0. TN = |P & G| /
  |P | G|. TO = 1 when P == G, else cos(pi/2 * i/|P|) * L/|G| with L the longest contiguous
  common block of G and P (ties: earliest in G, then in P) and i its 0-based start in P. A turn
  is correct when TN and TO are both 1.
- Dialogues: the turns of one conversation (metadata "conversation": the published dialogue id,
  "#k" for the k-th record reusing an id; the published M-M and OOD files give different
  dialogues the same ids, which grouping by id would interleave), ordered by the integer turn.
  SR: every turn correct. ATS: share of correct turns. SATS: a turn scores 0 when wrong, 1 when
  correct before any error, 1 - e^-(j - i) when correct j - i turns after the last wrong turn i;
  mean over turns. TPR: the leading run of correct turns / the dialogue's length. Each is a mean
  over dialogues. Every turn is scored on its own (cal_score.py never resets M-S correctness
  between turns, so one correct turn made every later one count as correct). A turn that an
  imported file answers twice (on_duplicate=reference) counts twice in TS, PS, TN and TO and
  once, with its later line, in its dialogue: cal_score.py scores every line and keeps one slot
  per turn in its dialogue list, which the later line overwrites.
- A failed model call (score(None, ...)) is a wrong turn: TS = PS = TN = TO = 0.
- Model text is only ever read with json.loads; nothing is evaluated.

Where the reference variant knowingly differs from util.py/cal_score.py: inputs they crash on
(Action Input: None or missing, the turn index kept as text, a 5-into-4 unpacking) get the
readings above; M-S turns are each judged on their own; Avg is multiplied by 100 once; dialogues
are conversations rather than ids (cal_score.py, its crash fixed, would overwrite one M-M_19
dialogue's turns with the other's); OOD is scored. Differences that only change names no gold
tool can match (util.py first puts a newline before every "Action" and collapses blank lines,
and deletes the leading thought's text wherever it recurs) are not reproduced.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from benchmarks.kit.base import ImportFormatError, iter_jsonl, require
from benchmarks.kit.protocol import (
    Aggregate,
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
    mean,
    metric_specs,
    percent,
)

__all__ = [
    "TASKS",
    "VARIANTS",
    "SingleCall",
    "build_prompt",
    "cluster",
    "compare_dicts",
    "dialogue_scores",
    "make_aggregate",
    "normalize_value",
    "parse",
    "parse_multi_call",
    "parse_single_call",
    "predicted_tool_list",
    "read_predictions",
    "score",
    "setting_of",
    "soft_turn_scores",
    "system_prompt",
    "tool_number",
    "tool_order",
]

VARIANTS = ("reference", "strict", "paper")
SETTINGS = ("S-S", "S-M", "M-S", "M-M")
MULTI_TURN = ("M-S", "M-M", "OOD")

DIALOGUE_METRICS = ("ATS", "SATS", "SR", "TPR")
SPLIT_METRICS: dict[str, tuple[str, ...]] = {
    "S-S": ("TS", "PS"),
    "S-M": ("TN", "TO"),
    "M-S": ("TS", "PS", *DIALOGUE_METRICS),
    "M-M": ("TN", "TO", *DIALOGUE_METRICS),
    "OOD": ("TS", "PS", *DIALOGUE_METRICS, "TN", "TO"),
}
TITLES = {
    "S-S": "Single-turn, single-tool",
    "S-M": "Single-turn, multi-tool",
    "M-S": "Multi-turn, single-tool",
    "M-M": "Multi-turn, multi-tool",
    "OOD": "Out-of-distribution (mixed settings)",
}
OPTIONS: tuple[Option, ...] = (
    Option(
        "variant",
        "text",
        "reference",
        "reference: MTU-Eval's scorer; strict: argument values equal after normalisation; "
        "paper: TN and TO as the paper defines them",
        choices=tuple(VARIANTS),
    ),
    Option(
        "system_prompt",
        "boolean",
        True,
        "chat prompts start with the paper's system prompt for the setting (false: the "
        "question alone)",
    ),
)

# Every MTU-Eval metric is a score, higher better (paper section 2.2.2): per turn as a fraction,
# per run as a percentage.
METRIC_TEXT = {
    "TS": "tool selection: the tool name is right",
    "PS": "parameter selection: the tool and its arguments are right",
    "TN": "tool number: IoU of the predicted and gold tool sets",
    "TO": "tool order: the gold calls' order kept",
    "ATS": "average turn success rate",
    "SATS": "soft average turn success rate",
    "SR": "success rate: dialogues with every turn right",
    "TPR": "turn process rate: the leading run of right turns",
    "Avg": "mean of the task's other metrics (the paper's Avg column)",
}
TURN_METRICS = {"S-S": ("TS", "PS"), "S-M": ("TN", "TO"), "M-S": ("TS", "PS"), "M-M": ("TN", "TO")}


def _item_metrics(split: str) -> dict[str, MetricSpec]:
    names = TURN_METRICS.get(split, ("TS", "PS", "TN", "TO"))
    specs = [MetricSpec.score(name, description=METRIC_TEXT[name]) for name in names]
    if split in MULTI_TURN:
        specs.append(MetricSpec.score("correct", description="1 when the turn is right"))
    return metric_specs(*specs)


def _spec(split: str) -> TaskSpec:
    metrics = (*SPLIT_METRICS[split], "Avg")
    return TaskSpec(
        name=split,
        title=f"MTU-Bench {split}: {TITLES[split]}",
        splits=(split,),
        metrics=metrics,
        percent=frozenset(metrics),
        options=OPTIONS,
        native=True,
        item_metrics=_item_metrics(split),
        run_metrics=metric_specs(
            *(MetricSpec.score(name, description=METRIC_TEXT[name]) for name in metrics)
        ),
        description=(
            f"MTU-Eval {split}: the published question as the prompt, scored as MTU-Eval's "
            "cal_score.py does (variant=reference), with exact values (strict) or the paper's "
            "TN/TO (paper)."
        ),
    )


TASKS: dict[str, TaskSpec] = {split: _spec(split) for split in SPLIT_METRICS}

# --- prompts --------------------------------------------------------------------------------

PROMPTS = Path(__file__).resolve().parent / "prompts"
PROMPT_HEADER_END = "\n---\n"
COMPLETION_CUE = "\nThought:"
# Four at most: OpenAI's completions API refuses more. A base model that has written its call
# goes on to imagine the observation (M-S histories write it in lower case) or the next user.
COMPLETION_STOP = ("\nObservation", "\nobservation", "\nUser:", "\nuser:")

API_LIST_MARKER = "The following is a list of APIs"
MULTI_TOOL_RULE = "Action: The name of the APIs."
SINGLE_TOOL_RULE = "Action: The name of the API to be called."
M_M_RULE = "based on their input and history conversation"
M_S_RULE = '"Observation" is the information returned by API calls'


@cache
def system_prompt(setting: str) -> str:
    """The paper's system prompt for a setting (S-S, S-M, M-S, M-M), from prompts/<setting>.txt
    (a commented header naming source and license, a "---" line, then the prompt)."""
    if setting not in SETTINGS:
        raise ValueError(f"no MTU-Bench setting {setting!r}; settings: {', '.join(SETTINGS)}")
    text = (PROMPTS / f"{setting}.txt").read_text(encoding="utf-8")
    _header, found, prompt = text.partition(PROMPT_HEADER_END)
    if not found:
        raise ValueError(f"prompts/{setting}.txt has no '---' line after its header")
    return prompt.strip("\n")


def setting_of(item: Item) -> str:
    """The setting whose rules an item's question carries: its split, except for OOD, whose
    records each carry the rules of one of the four settings."""
    if item.split in SETTINGS:
        return item.split
    if item.split != "OOD":
        raise ValueError(f"MTU-Bench has no split {item.split!r}")
    question = str(item.input.get("prompt", ""))
    rules = question.split(API_LIST_MARKER, 1)[0]
    if MULTI_TOOL_RULE in rules:
        return "M-M" if M_M_RULE in rules else "S-M"
    if SINGLE_TOOL_RULE in rules and M_S_RULE not in rules:
        return "S-S"
    # The paper evaluates OOD under the M-S setting: the default for rules we do not recognise.
    return "M-S"


def _multi_tool(item: Item) -> bool:
    return setting_of(item) in ("S-M", "M-M")


def _question(item: Item) -> str:
    question = item.input.get("prompt") if isinstance(item.input, dict) else None
    if not isinstance(question, str) or not question.strip():
        raise ValueError(f"MTU-Bench item {item.key} has no question (input['prompt'])")
    return question


def build_prompt(item: Item, ctx: Context, context: dict[str, Any]) -> Prompt:
    """The paper's system prompt and the published question; for base models, the question
    continued after a "Thought:" cue, which is how every answer in the benchmark begins."""
    question = _question(item)
    messages: list[dict[str, str]] = []
    if ctx.option("system_prompt") is not False:
        messages.append({"role": "system", "content": system_prompt(setting_of(item))})
    messages.append({"role": "user", "content": question})
    return Prompt(messages=messages, text=question.rstrip() + COMPLETION_CUE, stop=COMPLETION_STOP)


# --- parsing --------------------------------------------------------------------------------

ACTION = "Action:"
ACTION_INPUT = "Action Input:"
FIRST_OBJECT = re.compile(r"\{.*?\}")
# Blocks that repeat the single-tool rule (a model echoing its prompt) are not calls.
ECHOED_RULE = "The name of the API to be called."
ECHOED_TAIL = "Please provide your"
# Python's json reads NaN and Infinity; keep them as the text str() would give, so the value
# compares as util.py compares it and the answer stays storable JSON.
JSON_CONSTANTS = {"NaN": "nan", "Infinity": "inf", "-Infinity": "-inf"}
_QUOTE_SENTINEL = "\x00"


class SingleCall(NamedTuple):
    name: str  # "" when the answer makes no call
    arguments: dict[str, Any]
    note: str = ""


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text, parse_constant=JSON_CONSTANTS.__getitem__)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _python_words(text: str) -> str:
    return text.replace("True", "true").replace("False", "false")


def parse_single_call(text: str) -> SingleCall:
    """One call from a single-tool answer, as util.py's get_predict_SIN reads it (where that
    function crashes, the answer is no call, or a call with empty arguments for an Action Input
    without any {...})."""
    if ACTION not in text or ACTION_INPUT not in text:
        return SingleCall("", {}, "no Action/Action Input: no call")
    # Between the first "Action:" and the next one, before "Action Input:".
    name = text.split(ACTION, 2)[1].split(ACTION_INPUT, 1)[0].strip()
    # Between the first "Action Input:" and the next one.
    chunk = text.split(ACTION_INPUT, 2)[1].strip()
    end = chunk.rfind("}")
    chunk = chunk[: end + 1] if end >= 0 else chunk + "}"
    chunk = _python_words(chunk.replace("\n", ""))
    match = FIRST_OBJECT.search(chunk)
    note = ""
    if match is None:
        arguments: dict[str, Any] = {}
        note = "Action Input holds no {...}: empty arguments"
    else:
        parsed = _json_object(match.group())
        if parsed is None:
            # util.py's second try: single quotes made double (an escaped \' stays a quote).
            swapped = match.group().replace("\\'", _QUOTE_SENTINEL).replace("'", '"')
            parsed = _json_object(swapped.replace(_QUOTE_SENTINEL, "'"))
        if parsed is None:
            return SingleCall("", {}, "Action Input is not a JSON object: no call")
        arguments = parsed
    if "None" in name:
        return SingleCall("", {}, "the tool name contains None: no call")
    if "," in name:
        name = name.split(",", 1)[0].strip()
    return SingleCall(name, arguments, note)


def parse_multi_call(text: str) -> dict[str, dict[str, Any]]:
    """Every call of a multi-tool answer, keyed by tool name in first-call order, as util.py's
    get_target_SIN_MUL reads them (a block without Action Input has empty arguments)."""
    calls: dict[str, dict[str, Any]] = {}
    # util.py splits on "Action: " with its space; "Action:Name" starts no block there.
    for block in text.split(ACTION + " ")[1:]:
        if ECHOED_RULE in block:
            continue
        block = block.split(ECHOED_TAIL, 1)[0]
        name = block.split("Action Input", 1)[0].replace('"', "").strip()
        arguments: dict[str, Any] = {}
        if ACTION_INPUT in block:
            raw = block.split(ACTION_INPUT, 2)[1].strip().replace("\n  ", "")
            raw = _python_words(raw.split("}", 1)[0] + "}")
            arguments = _json_object(raw) or {}
        elif not name:
            continue  # a bare "Action:" (e.g. cut off by the token limit) calls nothing
        calls[name] = arguments
    return calls


def _calls_answer(calls: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    return {"calls": [{"name": name, "arguments": args} for name, args in calls.items()]}


def parse(text: str, item: Item, ctx: Context, context: dict[str, Any]) -> Outcome:
    """The answer's calls, {"calls": [{"name", "arguments"}, ...]}. Every text is an answer
    (MTU-Eval reads an unreadable one as no call); the note says when that happened."""
    if _multi_tool(item):
        calls = parse_multi_call(text)
        note = "" if calls else "no Action block: no call"
        return Outcome(output=text, answer=_calls_answer(calls), note=note)
    call = parse_single_call(text)
    found = {call.name: call.arguments} if (call.name or call.arguments) else {}
    return Outcome(output=text, answer=_calls_answer(found), note=call.note)


# --- comparing arguments --------------------------------------------------------------------

DIGIT_WORDS = {
    "0": "zero",
    "1": "one",
    "2": "two",
    "3": "three",
    "4": "four",
    "5": "five",
    "6": "six",
    "7": "seven",
    "8": "eight",
    "9": "nine",
}
# The prompts say today is Monday, January 4, 2024.
WEEK = (
    ("2024-01-04", "monday"),
    ("2024-01-05", "tuesday"),
    ("2024-01-06", "wednesday"),
    ("2024-01-07", "thursday"),
    ("2024-01-08", "friday"),
    ("2024-01-09", "saturday"),
    ("2024-01-10", "sunday"),
)


def normalize_value(value: str, *, spell_digits: bool = True) -> str:
    """util.py's normalize_value on an already lower-cased value (spell_digits=False for the
    strict variant). The steps run in util.py's order, so with digits spelled out the dates can
    no longer match and only "today" becomes "monday"."""
    value = value.replace("my ", "")
    if spell_digits:
        value = "".join(DIGIT_WORDS.get(char, char) for char in value)
    value = value.replace("findprovider.", "bookappointment.")
    for date, day in WEEK:
        value = value.replace(date, day).replace("today", day)
    return value


def _value_texts(arguments: Mapping[str, Any]) -> dict[str, str]:
    texts = {str(key): str(value).lower() for key, value in arguments.items()}
    # Some gold calls carry a "hotel" type value the question never asks for.
    return {key: text for key, text in texts.items() if text != "hotel"}


def compare_dicts(a: Mapping[str, Any], b: Mapping[str, Any], *, strict: bool = False) -> bool:
    """Whether arguments `a` match arguments `b` (not symmetric: each of a's values must be in
    b's). strict: equal after normalisation, without spelling out digits."""
    left, right = _value_texts(a), _value_texts(b)
    if len(left) != len(right):
        return False
    for key, value in left.items():
        if key not in right:
            return False
        mine = normalize_value(value, spell_digits=not strict)
        theirs = normalize_value(right[key], spell_digits=not strict)
        if (mine != theirs) if strict else (mine not in theirs):
            return False
    return True


# --- metrics --------------------------------------------------------------------------------


def predicted_tool_list(
    predicted: Mapping[str, Mapping[str, Any]],
    gold: Mapping[str, Mapping[str, Any]],
    *,
    variant: str = "reference",
) -> list[str]:
    """P for TN and TO: predicted tools renamed "<name>wrong" when their arguments do not
    match. reference/strict: only the gold tools that were called, in gold order (util.py);
    paper: every predicted tool in predicted order."""
    pred = {name.strip(): dict(args) for name, args in predicted.items()}
    gold_calls = {name.strip(): dict(args) for name, args in gold.items()}
    if not pred or not gold_calls:
        return list(pred)
    strict = variant == "strict"

    def renamed(name: str) -> str:
        return (
            name if compare_dicts(pred[name], gold_calls[name], strict=strict) else name + "wrong"
        )

    if variant == "paper":
        return [renamed(name) if name in gold_calls else name for name in pred]
    return [renamed(name) for name in gold_calls if name in pred]


def tool_number(predicted: Sequence[str], gold: Sequence[str]) -> float:
    """TN: intersection over union of the two name sets (both empty 1, one empty 0)."""
    if not predicted and not gold:
        return 1.0
    if not predicted or not gold:
        return 0.0
    pred_set, gold_set = set(predicted), set(gold)
    return len(pred_set & gold_set) / len(pred_set | gold_set)


def _longest_block(gold: Sequence[str], predicted: Sequence[str]) -> tuple[int, int]:
    """(size, start in predicted) of the longest contiguous common block; ties go to the
    earliest start in gold, then in predicted (as difflib's find_longest_match chooses)."""
    best = (0, 0, 0)  # size, -start in gold, -start in predicted
    runs = [0] * (len(predicted) + 1)
    for g, name in enumerate(gold):
        previous = 0  # runs[p] of the row above, before it is overwritten
        for p, other in enumerate(predicted, start=1):
            above = runs[p]
            runs[p] = previous + 1 if name == other else 0
            previous = above
            size = runs[p]
            if size:
                candidate = (size, -(g - size + 1), -(p - size))
                best = max(best, candidate)
    return best[0], -best[2]


def _earliest_lcs(gold: Sequence[str], predicted: Sequence[str]) -> tuple[int, int]:
    """(length, 1-based start in predicted) of the longest common subsequence; of several, the
    one that starts earliest in predicted (the paper does not say which)."""
    rows, cols = len(gold), len(predicted)
    # suffix[g][p]: LCS length of gold[g:] and predicted[p:]
    suffix = [[0] * (cols + 1) for _ in range(rows + 1)]
    for g in range(rows - 1, -1, -1):
        for p in range(cols - 1, -1, -1):
            if gold[g] == predicted[p]:
                suffix[g][p] = suffix[g + 1][p + 1] + 1
            else:
                suffix[g][p] = max(suffix[g + 1][p], suffix[g][p + 1])
    length = suffix[0][0]
    if not length:
        return 0, 0
    for p in range(cols):
        for g in range(rows):
            if gold[g] == predicted[p] and suffix[g + 1][p + 1] + 1 == length:
                return length, p + 1
    raise AssertionError("an LCS of positive length has a first element")  # pragma: no cover


def tool_order(
    predicted: Sequence[str], gold: Sequence[str], *, variant: str = "reference"
) -> float:
    """TO of the renamed predicted list against the gold list (see the module docstring)."""
    predicted, gold = list(predicted), list(gold)
    if variant == "paper":
        if not predicted and not gold:
            return 1.0
        if not predicted or not gold:
            return 0.0
        length, start = _earliest_lcs(gold, predicted)
    else:
        if predicted == gold:
            return 1.0
        if not predicted or not gold:
            return 0.0
        length, start = _longest_block(gold, predicted)
    decay = math.cos(math.pi / 2 * start / len(predicted))
    return decay * length / len(gold)


def soft_turn_scores(correct: Sequence[bool]) -> list[float]:
    """SATS per turn: 0 when wrong, 1 before any error, 1 - e^-(j - i) after the last error i."""
    scores: list[float] = []
    last_wrong: int | None = None
    for j, ok in enumerate(correct):
        if not ok:
            last_wrong = j
            scores.append(0.0)
        elif last_wrong is None:
            scores.append(1.0)
        else:
            scores.append(1.0 - math.exp(-(j - last_wrong)))
    return scores


def dialogue_scores(correct: Sequence[bool]) -> dict[str, float]:
    """ATS, SATS, SR and TPR (fractions) of one dialogue's turns, in turn order."""
    if not correct:
        raise ValueError("a dialogue has at least one turn")
    turns = len(correct)
    leading = next((j for j, ok in enumerate(correct) if not ok), turns)
    soft = soft_turn_scores(correct)
    return {
        "ATS": sum(1 for ok in correct if ok) / turns,
        "SATS": sum(soft) / turns,
        "SR": 1.0 if all(correct) else 0.0,
        "TPR": leading / turns,
    }


# --- scoring --------------------------------------------------------------------------------


def _variant(ctx: Context) -> str:
    variant = ctx.option("variant") or "reference"
    if variant not in VARIANTS:
        raise ValueError(f"MTU-Bench variant must be one of {', '.join(VARIANTS)}; got {variant!r}")
    return str(variant)


def _gold_calls(item: Item) -> dict[str, dict[str, Any]]:
    reference = item.reference if isinstance(item.reference, dict) else {}
    calls: dict[str, dict[str, Any]] = {}
    for call in reference.get("calls") or []:
        arguments = call.get("arguments")
        calls[str(call.get("name", "")).strip()] = arguments if isinstance(arguments, dict) else {}
    return calls


def _predicted_calls(outcome: Outcome, multi: bool) -> dict[str, dict[str, Any]]:
    answer = outcome.answer
    if isinstance(answer, dict) and isinstance(answer.get("calls"), list):
        calls: dict[str, dict[str, Any]] = {}
        for call in answer["calls"]:
            if isinstance(call, dict):
                arguments = call.get("arguments")
                calls[str(call.get("name", ""))] = arguments if isinstance(arguments, dict) else {}
        return calls
    # An outcome stored without a readable answer: read its text again.
    if multi:
        return parse_multi_call(outcome.output)
    call = parse_single_call(outcome.output)
    return {call.name: call.arguments} if (call.name or call.arguments) else {}


def score(outcome: Outcome | None, item: Item, ctx: Context, context: dict[str, Any]) -> Scores:
    """Per-turn values (fractions): TS, PS or TN, TO, and for multi-turn splits "correct"."""
    variant = _variant(ctx)
    multi = _multi_tool(item)
    gold = _gold_calls(item)
    scores: Scores
    if multi:
        if outcome is None:
            tn = to = 0.0
            correct = False
        else:
            pred = predicted_tool_list(_predicted_calls(outcome, True), gold, variant=variant)
            gold_names = list(gold)
            tn = tool_number(pred, gold_names)
            to = tool_order(pred, gold_names, variant=variant)
            correct = pred == gold_names if variant == "paper" else (tn == 1.0 and to == 1.0)
        scores = {"TN": tn, "TO": to}
    else:
        if outcome is None:
            ts = ps = False
        else:
            gold_name, gold_args = next(iter(gold.items()), ("", {}))
            pred_name, pred_args = next(iter(_predicted_calls(outcome, False).items()), ("", {}))
            ts = pred_name == gold_name
            ps = ts and compare_dicts(gold_args, pred_args, strict=variant == "strict")
        correct = ps
        scores = {"TS": float(ts), "PS": float(ps)}
    if item.split in MULTI_TURN:
        scores["correct"] = float(correct)
    return scores


def cluster(item: Item, ctx: Context) -> str:
    """The unit an item limit keeps whole and the bootstrap resamples: the conversation for
    multi-turn splits, the item otherwise."""
    if item.split in MULTI_TURN:
        return f"{item.split}/{_conversation(item)}"
    return item.key


def _conversation(item: Item) -> str:
    metadata = item.metadata or {}
    for key in ("conversation", "dialogue"):
        if isinstance(metadata.get(key), str) and metadata[key]:
            return str(metadata[key])
    # Items made without the importer's metadata: the id's prefix, and its "#k" copy mark.
    base, _, copy = item.external_id.partition("#")
    dialogue = base.rsplit("_", 1)[0]
    return f"{dialogue}#{copy}" if copy else dialogue


def _turn(item: Item) -> tuple[int, int]:
    metadata = item.metadata or {}
    base, _, copy = item.external_id.partition("#")
    turn = metadata.get("turn")
    if turn is None:
        turn = base.rsplit("_", 1)[-1]
    try:
        return int(turn), int(metadata.get("copy") or copy or 1)
    except (TypeError, ValueError):
        raise ValueError(f"MTU-Bench item {item.key} has no integer turn number") from None


def _dialogues(scored: Sequence[Scored]) -> list[list[Scored]]:
    """The conversations of a scored list, each in turn order. A conversation is a `group`
    when the platform set one (a bootstrap resample gives a dialogue drawn twice two groups),
    else the item's own. A repeat (a published file's later line for the same turn, imported
    with on_duplicate=reference) takes its turn's place in the latest copy of the conversation,
    as cal_score.py overwrites the turn's slot in its per-dialogue list; the per-turn metrics
    count it as a line of its own. Should a turn otherwise appear twice in one conversation,
    its k-th appearance joins the k-th copy of the conversation."""
    copies: dict[str, list[dict[str, Scored]]] = {}
    for entry in scored:
        key = entry.group or f"{entry.item.split}/{_conversation(entry.item)}"
        instances = copies.setdefault(key, [])
        if entry.repeat and instances:
            holder = next((i for i in reversed(instances) if entry.item.key in i), instances[-1])
            holder[entry.item.key] = entry
            continue
        for instance in instances:
            if entry.item.key not in instance:
                instance[entry.item.key] = entry
                break
        else:
            instances.append({entry.item.key: entry})
    return [
        sorted(instance.values(), key=lambda entry: _turn(entry.item))
        for instances in copies.values()
        for instance in instances
    ]


def make_aggregate(metrics: Sequence[str], *, dialogues: bool) -> Aggregate:
    """A task's run-level metrics: `metrics` (its SPLIT_METRICS, in order), then Avg; with
    `dialogues`, ATS, SATS, SR and TPR over its conversations (the multi-turn tasks)."""

    def aggregate(scored: Sequence[Scored], ctx: Context) -> Scores:
        """Run-level metrics, percentages rounded to 2 decimals (None when no turn has them)."""
        _variant(ctx)
        values: Scores = {}
        for metric in ("TS", "PS", "TN", "TO"):
            if metric in metrics:
                values[metric] = percent(mean([entry.scores.get(metric) for entry in scored]))
        if dialogues:
            per_dialogue = [
                dialogue_scores([bool(entry.scores.get("correct")) for entry in turns])
                for turns in _dialogues(scored)
            ]
            for metric in DIALOGUE_METRICS:
                values[metric] = percent(mean([d[metric] for d in per_dialogue]))
        result: Scores = {metric: values.get(metric) for metric in metrics}
        present = [value for value in result.values() if value is not None]
        # The paper's Avg column averages the rounded metrics (its rows check out that way).
        result["Avg"] = round(sum(present) / len(present), 2) if present else None
        return result

    return aggregate


# --- published outputs ----------------------------------------------------------------------


def read_predictions(split: str, path: Path) -> Iterator[PublishedOutput]:
    """Model outputs published as MTU-Eval response files: JSON Lines {"id", "model",
    "response"} ("model" optional). Like the importer, the k-th record with an id is that id's
    copy k: external_id is the id, then "<id>#<k>". When the split has no copy k (the published
    S-M GPT-4 file answers S-M_23 twice and S-M_24 never), the line is another output for the
    id itself (fallback_id), and the import's on_duplicate policy decides: refuse the file,
    score every line against the id's gold as cal_score.py does (reference), or keep one.
    `split` is the task's (tasks.py gives each task its own)."""
    path = Path(path)
    copies: dict[str, int] = {}
    for line, record in iter_jsonl(path):
        sample_id = require(record, "id", str, file=path, line=line)
        response = require(record, "response", str, file=path, line=line)
        require(record, "model", str, file=path, line=line, optional=True)
        if not sample_id.startswith(f"{split}_"):
            raise ImportFormatError(
                f"expected an id of split {split} ({split}_...), got {sample_id[:80]!r}",
                file=path,
                line=line,
                field="id",
            )
        copy = copies[sample_id] = copies.get(sample_id, 0) + 1
        yield PublishedOutput(
            external_id=sample_id if copy == 1 else f"{sample_id}#{copy}",
            output=response,
            split=split,
            source=f"{path}, line {line}",
            fallback_id=None if copy == 1 else sample_id,
        )
