"""MetaTool's evaluation side (papers/000, appendix C; METRICS.md, MetaTool): prompts, answer
matching and scores for the protocol in benchmarks/kit/protocol.py. Pure Python, no Django.

Each task is composed of its own parts (tasks.py): select_*, prepare_*, a prompt, a parse, a
score and an aggregate, and its native form (native_messages.py). A part serves several tasks
only where they ask the same thing: the single-tool prompt and parse (similar, scenario,
reliability), the CSR of scenario and reliability, the native reading of a selection. What
differs between the selection tasks is the data a part is given: the splits a task reads, how
prepare_lists builds an item's candidates and draws its examples, and the ideal output a score
compares the choice with.

Tasks (TASKS), their splits and options (defaults in brackets):

- `awareness` (split "awareness", the Task1 file): the paper's thought prompt, built from the
  benchmark's own template (prompts/thought_prompt_single_tool.txt with the four reasons of
  prompts/tool_reason.txt), asks whether a tool is needed. Metrics: accuracy, precision, recall,
  F1 in percent, positives being the queries that need a tool.
- `similar` (split "queries"): pick the gold tool among itself and its n-1 nearest tools by
  cosine of description embeddings (`ctx.embed`, else `embedding.local_embed`), shuffled with
  the run's seed. Options: n [10, as the repository's top-10 search, the tool itself included],
  per_tool [5 queries per tool, as the paper's test set, C.1; None keeps all], tool_pool
  ["benchmark": the tools of plugin_des.json, the benchmark's merged tool set; "all": every
  tool of the benchmark]. Metrics: CSR and the error analysis Top@1/3/5 (of the wrong picks,
  the share among the k tools most similar to the gold one; paper Table 5).
- `scenario` (split "queries", aux split "scenario_lists"): the candidates are the fixed list of
  the scenario named by the option `scenario` (required: "Students", "TopTool_top5"...); only
  queries whose gold tool is on the list are asked. Options: scenario, per_tool [20, C.1].
- `reliability` (split "reliability", the Task2-Subtask3 file, or "queries"): the gold tool is
  never offered; the right answer is "None". Published items keep their published candidates;
  on "queries" the list is n tools sampled from the pool minus the gold tool and its k nearest.
  Options (for "queries" only): n [10], k [15, "the 15 tools most similar", C.4], per_tool [5],
  tool_pool.
- `multi_tool` (split "multi_tool", the Task2-Subtask4 file, or "multi_tool_golden"): choose the
  gold pair. Published items keep their candidates; on "multi_tool_golden" the list is the pair
  plus n-2 tools sampled outside the union of each gold tool's k nearest, shuffled. Options:
  variant ["one-choice": the published prompt, "choose two tools"; "multi-choice": the template
  that allows at most two, paper Table 4], n [10], k [15], tool_pool. Metrics: CSR (2/2) and
  Table 4's 1/1 (one tool picked, right) and 1/2 (two picked, one right).

Every task has the option `unparsed` ["wrong": an answer the rules cannot read counts as wrong;
"exclude": it is left out of every denominator] and reports the counts `n` (items), `unparsed`
and `failed` (no answer from the endpoint; always counted as wrong). `ctx.shots` is 0 or 5.

Answer matching (METRICS.md):
- Awareness, in order: (1) a "yes" phrase ("I need to use", ...) -> yes; (2) a "no" phrase
  ("not necessary to use", ...) -> no; (3) the word "yes" and none of the words "no", "not",
  "don't" -> yes; (4) the word "no" and not the word "yes" -> no (the paper's text says "yes"
  here, a typo); otherwise unparsed. Phrases and words match case-insensitively, whole words
  only, across any whitespace, with typographic apostrophes read as straight ones. A "yes"
  phrase that lies inside a "no" phrase is not counted ("I do not think I need to use" holds
  "I need to use"; rule 1 would otherwise make the listed "no" phrase unreachable).
- Selection: candidate names are found whole-word (no letter, digit or underscore on either
  side), case-sensitively, and only when none is found, case-insensitively; where two names
  overlap in the text the longer one counts. Single-tool tasks: no name -> None (the empty set);
  one name and no "None" -> that tool; several names, or one name beside "None" -> ambiguous
  (unparsed). Multi-tool: fewer than two names is a wrong answer; two are compared as a set with
  the gold pair; more than two are ambiguous. An empty answer is unparsed rather than "None".
- CSR: the share of items whose chosen set equals the ideal output: the gold tool (similar,
  scenario), the empty set (reliability), the gold pair (multi-tool). Percentages throughout.

Prompts: chat style sends the paper's prompt as one user message (the published prompts are
single messages); completion style (base models) sends the same text ending with an answer cue
(`... answer:` / `... tool:`), the published five-shot form's own ending, and stops at the end of
that line. Published items (awareness, reliability, multi_tool) are rebuilt from the templates
and reproduce the published prompts character for character, their tool-list block included;
built lists show the benchmark's descriptions (ToolSpec.description) in the repository's
`<n>. tool name: <name>, tool description: <text>` lines.

Five-shot (appendix C.4) in the published five-shot form: awareness and reliability items use
the examples published inside their own prompt (minus any that repeats the item's query, topped
up from the run's other items). Similar and scenario items get five examples drawn with the seed
from the run's queries (its items, and the task's whole selection before the item limit,
ctx.pool): different candidate tools, one query each, answered with the tool, as C.4 describes; when
too few candidates have a query, tools off the list fill in, answered "None" (the published
examples' convention). Reliability on "queries" keeps C.4's 2:3 or 3:2 ratio of "None" to tool
answers. Examples never use the item's own query nor its gold tool(s). The paper ran no few-shot
multi-tool selection, so `multi_tool` refuses shots=5.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from benchmarks.kit.protocol import (
    Context,
    Item,
    MetricSpec,
    Option,
    Outcome,
    Prompt,
    Scored,
    Scores,
    TaskSpec,
    metric_specs,
    percent,
    tool_mode,
)
from benchmarks.suites.metatool.importer import LIST_END, LIST_START

__all__ = [
    "NO_PHRASES",
    "TASKS",
    "YES_PHRASES",
    "action_prompt",
    "aggregate_awareness",
    "aggregate_csr",
    "aggregate_pair",
    "aggregate_similar",
    "awareness_metrics",
    "awareness_prompt",
    "choose_pair",
    "choose_single",
    "find_tools",
    "match_awareness",
    "multi_tool_prompt",
    "parse_awareness",
    "parse_pair",
    "parse_single",
    "prepare_awareness",
    "prepare_lists",
    "prepare_multi_tool",
    "prepare_reliability",
    "prepare_scenario",
    "prepare_similar",
    "score_awareness",
    "score_gold_tool",
    "score_no_tool",
    "score_pair",
    "score_similar",
    "select_awareness",
    "select_multi_tool",
    "select_reliability",
    "select_scenario",
    "select_similar",
    "single_tool_prompt",
    "thought_prompt",
    "top_at_k",
]

SHOTS = (0, 5)
UNPARSED_MODES = ("wrong", "exclude")
TOP_K = (1, 3, 5)
# This file holds the benchmark's own tool set after the authors merged overlapping plugins (199
# names; the paper reports 195); plugin_info.json is the plugin store they started from.
BENCHMARK_TOOLS_FILE = "plugin_des.json"

_COUNTS = ("n", "unparsed", "failed")

# The options of the tasks (a run's own options are read over these defaults).
_UNPARSED = Option(
    "unparsed",
    "text",
    "wrong",
    "an answer the rules cannot read counts as wrong, or is left out of every denominator",
    choices=UNPARSED_MODES,
)
_TOOL_POOL = Option(
    "tool_pool",
    "text",
    "benchmark",
    "the tools candidates are drawn from: the benchmark's merged set (plugin_des.json) or all",
    choices=("benchmark", "all"),
)
_EMBEDDING = Option(
    "embedding_endpoint",
    "text",
    None,
    "an endpoint whose /v1/embeddings ranks tools by description (default: the local embedder)",
)


def _n(minimum: int) -> Option:
    return Option(
        "n", "integer", 10, "the number of candidate tools a built list offers", minimum=minimum
    )


def _per_tool_option(default: int) -> Option:
    return Option(
        "per_tool",
        "integer",
        default,
        "at most this many queries per gold tool (the paper's test sets, C.1; null keeps all)",
        minimum=1,
        nullable=True,
    )


_K = Option("k", "integer", 15, "the nearest tools kept out of a built list (C.4: 15)", minimum=0)

# What score() and aggregate() return (MetricSpec). Per item, `correct` is the verdict; the
# rest are facts about the item: unread or failed answers, the gold and the answer of the
# awareness task, the rank of a wrong pick (the error analysis, where neither rank is right).
_CORRECT = MetricSpec.score("correct", description="1 when the chosen set is the ideal output")
_ITEM_FLAGS = (
    MetricSpec.flag("unparsed", "lower", "1 when the rules could not read the answer"),
    MetricSpec.flag("failed", "lower", "1 when the endpoint gave no answer"),
)
_RUN_COUNTS = (
    MetricSpec.count("n", description="items"),
    MetricSpec.count("unparsed", "lower", "answers the rules could not read"),
    MetricSpec.count("failed", "lower", "items the endpoint gave no answer for"),
)
_CSR = MetricSpec.score("CSR", description="% of items whose chosen set is the ideal output")
# Table 4 counts a right single pick (1/1) and two picks with one right (1/2) as kinds of CSR.
_PARTIAL = (
    MetricSpec.score("one_of_one", description="one tool picked, and it is a gold tool"),
    MetricSpec.score("one_of_two", description="two tools picked, one of them a gold tool"),
)

TASKS: dict[str, TaskSpec] = {
    "awareness": TaskSpec(
        name="awareness",
        title="Awareness of tool usage",
        splits=("awareness",),
        metrics=("accuracy", "precision", "recall", "f1", *_COUNTS, "tp", "fp", "tn", "fn"),
        percent=frozenset({"accuracy", "precision", "recall", "f1"}),
        options=(_UNPARSED,),
        native=True,
        item_metrics=metric_specs(
            _CORRECT,
            *_ITEM_FLAGS,
            MetricSpec.flag("needs_tool", description="the gold: the query needs a tool"),
            MetricSpec.flag("says_yes", description="the answer says a tool is needed"),
        ),
        run_metrics=metric_specs(
            MetricSpec.score("accuracy"),
            MetricSpec.score("precision"),
            MetricSpec.score("recall"),
            MetricSpec.score("f1"),
            *_RUN_COUNTS,
            MetricSpec.count("tp", "higher", "need a tool, answered yes"),
            MetricSpec.count("fp", "lower", "need none, answered yes"),
            MetricSpec.count("tn", "higher", "need none, answered no"),
            MetricSpec.count("fn", "lower", "need a tool, answered no"),
        ),
        description="Does the query need an external tool? Yes/no, matched with the paper's "
        "rules (appendix C.2); positives are the queries that need one.",
    ),
    "similar": TaskSpec(
        name="similar",
        title="Tool selection with similar choices",
        splits=("queries",),
        metrics=("CSR", *(f"Top@{k}" for k in TOP_K), *_COUNTS, "wrong_picks"),
        percent=frozenset({"CSR", *(f"Top@{k}" for k in TOP_K)}),
        options=(_UNPARSED, _n(2), _per_tool_option(5), _TOOL_POOL, _EMBEDDING),
        native=True,
        item_metrics=metric_specs(
            _CORRECT,
            *_ITEM_FLAGS,
            MetricSpec.count(
                "pick_rank",
                description="a wrong pick's rank among the gold tool's nearest tools (1: the "
                "nearest); error analysis: both picks are wrong",
            ),
        ),
        run_metrics=metric_specs(
            _CSR,
            *(
                MetricSpec.score(
                    f"Top@{k}",
                    None,
                    f"% of the wrong picks among the {k} tools nearest the gold (error analysis)",
                )
                for k in TOP_K
            ),
            *_RUN_COUNTS,
            MetricSpec.count("wrong_picks", "lower", "wrong answers naming one tool"),
        ),
        description="Pick the gold tool among itself and its n-1 nearest tools by description "
        "embedding; Top@k: of the wrong picks, the share among the k most similar to the gold.",
    ),
    "scenario": TaskSpec(
        name="scenario",
        title="Tool selection in specific scenarios",
        splits=("queries",),
        metrics=("CSR", *_COUNTS),
        percent=frozenset({"CSR"}),
        options=(
            _UNPARSED,
            Option(
                "scenario",
                "text",
                None,
                "the scenario whose fixed tool list is offered (required: Students, "
                "TopTool_top5...)",
            ),
            _per_tool_option(20),
        ),
        native=True,
        item_metrics=metric_specs(_CORRECT, *_ITEM_FLAGS),
        run_metrics=metric_specs(_CSR, *_RUN_COUNTS),
        aux_splits=("scenario_lists",),
        description="Pick the gold tool from a scenario's fixed list (option 'scenario').",
    ),
    "reliability": TaskSpec(
        name="reliability",
        title="Tool selection with possible reliability issues",
        splits=("reliability",),
        metrics=("CSR", *_COUNTS),
        percent=frozenset({"CSR"}),
        options=(_UNPARSED, _n(1), _K, _per_tool_option(5), _TOOL_POOL, _EMBEDDING),
        native=True,
        item_metrics=metric_specs(_CORRECT, *_ITEM_FLAGS),
        run_metrics=metric_specs(_CSR, *_RUN_COUNTS),
        description="The gold tool is not offered: the right answer is None.",
    ),
    "multi_tool": TaskSpec(
        name="multi_tool",
        title="Multi-tool selection",
        splits=("multi_tool",),
        metrics=("CSR", "one_of_one", "one_of_two", *_COUNTS),
        percent=frozenset({"CSR", "one_of_one", "one_of_two"}),
        options=(
            _UNPARSED,
            Option(
                "variant",
                "text",
                "one-choice",
                'one-choice: the published prompt ("choose two tools"); multi-choice: at most '
                "two (Table 4)",
                choices=("one-choice", "multi-choice"),
            ),
            _n(3),
            _K,
            _TOOL_POOL,
            _EMBEDDING,
        ),
        native=True,
        item_metrics=metric_specs(_CORRECT, *_ITEM_FLAGS, *_PARTIAL),
        run_metrics=metric_specs(_CSR, *_PARTIAL, *_RUN_COUNTS),
        description="Choose the two gold tools; exactly two named tools are compared as a set.",
    ),
}

_VARIANTS = {
    "one-choice": "action_prompt_multi_tool_two",
    "multi-choice": "action_prompt_multi_tool",
}


# --- templates (data files under prompts/, each naming its source) ------------------------------

PROMPTS_DIR = Path(__file__).resolve().with_name("prompts")
_PLACEHOLDER = re.compile(r"\{(user_query|tool_list|tool_reason|prompt|examples)\}")


@cache
def _template(name: str) -> str:
    text = (PROMPTS_DIR / f"{name}.txt").read_text(encoding="utf-8")
    _header, separator, body = text.partition("\n---\n")
    if not separator:
        raise RuntimeError(f"prompt file {name}.txt has no '---' line after its header")
    return body[:-1] if body.endswith("\n") else body


def _fill(template: str, **values: str) -> str:
    # One pass, so a query or description that contains "{tool_list}" is never substituted.
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def thought_prompt(query: str) -> str:
    """The paper's thought (awareness) prompt for one query, zero-shot."""
    return _fill(
        _template("thought_prompt_single_tool"),
        tool_reason=_template("tool_reason"),
        user_query=query,
    )


def action_prompt(query: str, tool_list: str, form: str = "single") -> str:
    """The action (selection) prompt, zero-shot. `form`: "single", or a multi-tool variant
    ("one-choice", "multi-choice"). `tool_list` is the numbered block of candidate lines."""
    name = "action_prompt_single_tool" if form == "single" else _VARIANTS[form]
    return _fill(_template(name), user_query=query, tool_list=tool_list)


def render_tool_list(names: Sequence[str], descriptions: Mapping[str, str]) -> str:
    """The candidate block as the repository writes it: numbered lines, each ending in a newline
    (so the published prompts show an empty line before the End marker)."""
    return "".join(
        f"{number}. tool name: {name}, tool description: {descriptions.get(name, '')}\n"
        for number, name in enumerate(names, start=1)
    )


def _published_tool_list(prompt: str) -> str | None:
    start = prompt.find(LIST_START + "\n")
    if start < 0:
        return None
    start += len(LIST_START) + 1
    end = prompt.find("\n" + LIST_END, start)
    return prompt[start:end] if end >= 0 else None


# --- few-shot examples --------------------------------------------------------------------------

# The example lines as the published five-shot prompts write them (Task1.json, Task2-Subtask3.json).
_AWARENESS_LINE = 'query: "{query}" answer: {answer}'
_ACTION_LINE = 'query: "{query}" tool: {answer}'
_PUBLISHED_AWARENESS = re.compile(r'query: "(.*?)" answer: (Yes|No)\n', re.DOTALL)
_PUBLISHED_ACTION = re.compile(r'query: "(.*?)" tool: (\S+)\n', re.DOTALL)
_EXAMPLES_START = "[Examples Start]\n"


def _normal_query(text: str) -> str:
    return " ".join(text.strip().strip('"').split()).casefold()


def _same_query(a: str, b: str) -> bool:
    return _normal_query(a) == _normal_query(b)


def _published_examples(prompt: str, awareness: bool) -> list[dict[str, str]]:
    """The examples inside a published five-shot prompt (Task1, Task2-Subtask3), in order."""
    start = prompt.find(_EXAMPLES_START)
    if start < 0:
        return []
    start += len(_EXAMPLES_START)
    end = prompt.find("[Examples End]", start) if awareness else prompt.rfind("User query: ")
    if end < start:
        return []
    pattern = _PUBLISHED_AWARENESS if awareness else _PUBLISHED_ACTION
    block = prompt[start:end]
    if not block.endswith("\n"):
        block += "\n"
    return [{"query": q, "answer": a} for q, a in pattern.findall(block)]


def _example_lines(examples: Sequence[Mapping[str, str]], line: str) -> str:
    return "\n".join(
        line.replace("{query}", e["query"]).replace("{answer}", e["answer"]) for e in examples
    )


# --- answer matching ----------------------------------------------------------------------------

YES_PHRASES = (
    "I need to use",
    "I think it is necessary",
    "I may need to use",
    "I would need to use",
    "I believe it is necessary to use",
    "would need access",
    "might be necessary to use",
    "I might need to use",
    "tools would be necessary",
    "may be necessary to use",
    "be beneficial to use",
    "I will need to use",
    "might need to use",
    "would need to rely",
    "may need to access",
)
NO_PHRASES = (
    "not seem necessary",
    "not think it is necessary",
    "not need to use",
    "not necessary to use",
    "do not think I need to use",
)
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})


def _phrase_pattern(phrase: str) -> re.Pattern[str]:
    words = (re.escape(word) for word in phrase.split())
    return re.compile(r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)", re.IGNORECASE)


_YES_PATTERNS = tuple((p, _phrase_pattern(p)) for p in YES_PHRASES)
_NO_PATTERNS = tuple((p, _phrase_pattern(p)) for p in NO_PHRASES)
_WORD = {word: _phrase_pattern(word) for word in ("yes", "no", "not", "don't")}


def match_awareness(text: str) -> tuple[bool | None, str]:
    """(True for yes / False for no / None when no rule applies, the rule that decided)."""
    text = text.translate(_APOSTROPHES)
    no_spans = [m.span() for _, pattern in _NO_PATTERNS for m in pattern.finditer(text)]
    for phrase, pattern in _YES_PATTERNS:
        for m in pattern.finditer(text):
            if not any(s <= m.start() and m.end() <= e for s, e in no_spans):
                return True, f'rule 1: "{phrase}"'
    for phrase, pattern in _NO_PATTERNS:
        if pattern.search(text):
            return False, f'rule 2: "{phrase}"'
    has = {word: bool(pattern.search(text)) for word, pattern in _WORD.items()}
    if has["yes"] and not (has["no"] or has["not"] or has["don't"]):
        return True, 'rule 3: "yes" without a negation'
    if has["no"] and not has["yes"]:
        return False, 'rule 4: "no" without "yes"'
    return None, "no rule applies"


_NONE_WORD = re.compile(r"(?<!\w)None(?!\w)")


def _name_spans(text: str, names: Iterable[str], flags: int) -> list[tuple[int, int, str]]:
    spans: list[tuple[int, int, str]] = []
    for name in names:
        pattern = re.compile(r"(?<!\w)" + re.escape(name) + r"(?!\w)", flags)
        spans.extend((m.start(), m.end(), name) for m in pattern.finditer(text))
    return spans


def _outermost(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    # A name inside a longer matched name ("web" in "web-search") is part of that name.
    return [
        (s, e, n)
        for s, e, n in spans
        if not any(s2 <= s and e <= e2 and (e2 - s2) > (e - s) for s2, e2, _ in spans)
    ]


def find_tools(text: str, candidates: Sequence[str]) -> list[str]:
    """The candidate names the answer mentions (whole words; case-sensitive, and only when that
    finds none, case-insensitive), in candidate-list order."""
    names = [c for c in dict.fromkeys(candidates) if c.strip()]
    spans = _outermost(_name_spans(text, names, 0))
    if not spans:
        spans = _outermost(_name_spans(text, names, re.IGNORECASE))
    found = {name for _, _, name in spans}
    return [name for name in names if name in found]


def choose_single(text: str, candidates: Sequence[str]) -> tuple[list[str] | None, str]:
    """Single-tool answer: ([] for None / [tool] / None when ambiguous or empty, why)."""
    if not text.strip():
        return None, "empty answer"
    found = find_tools(text, candidates)
    if not found:
        return [], "no tool named: None"
    if len(found) > 1:
        return None, f"ambiguous: {len(found)} tools named ({', '.join(found)})"
    if _NONE_WORD.search(text):
        return None, f"ambiguous: {found[0]} and None"
    return found, f"one tool named: {found[0]}"


def choose_pair(text: str, candidates: Sequence[str]) -> tuple[list[str] | None, str]:
    """Multi-tool answer: (the names when at most two, None when more or empty, why)."""
    if not text.strip():
        return None, "empty answer"
    found = find_tools(text, candidates)
    if len(found) > 2:
        return None, f"ambiguous: {len(found)} tools named ({', '.join(found)})"
    return found, f"{len(found)} tool(s) named"


# --- metrics ------------------------------------------------------------------------------------


def awareness_metrics(gold: Sequence[bool], predicted: Sequence[bool]) -> Scores:
    """Accuracy, precision, recall, F1 (percent; None when undefined) and the confusion counts;
    positive = needs a tool."""
    if len(gold) != len(predicted):
        raise ValueError("gold and predicted labels differ in length")
    tp = sum(1 for g, p in zip(gold, predicted, strict=True) if g and p)
    fp = sum(1 for g, p in zip(gold, predicted, strict=True) if not g and p)
    fn = sum(1 for g, p in zip(gold, predicted, strict=True) if g and not p)
    tn = len(gold) - tp - fp - fn
    total = len(gold)
    return {
        "accuracy": percent((tp + tn) / total) if total else None,
        "precision": percent(tp / (tp + fp)) if tp + fp else None,
        "recall": percent(tp / (tp + fn)) if tp + fn else None,
        "f1": percent(2 * tp / (2 * tp + fp + fn)) if 2 * tp + fp + fn else None,
        "tp": float(tp),
        "fp": float(fp),
        "tn": float(tn),
        "fn": float(fn),
    }


def top_at_k(ranks: Sequence[int], ks: Sequence[int] = TOP_K) -> Scores:
    """Top@k in percent: of the wrong picks (each given as the 1-based rank of the picked tool
    among the gold tool's most similar tools), the share ranked within k."""
    return {
        f"Top@{k}": percent(sum(1 for r in ranks if r <= k) / len(ranks)) if ranks else None
        for k in ks
    }


# --- options ------------------------------------------------------------------------------------


def _check_shots(ctx: Context) -> None:
    if ctx.shots not in SHOTS:
        raise ValueError(
            f"MetaTool prompts are zero-shot or five-shot (paper appendix C.4); got shots="
            f"{ctx.shots!r}"
        )


def _check_unparsed(ctx: Context) -> None:
    mode = ctx.option("unparsed") or "wrong"
    if mode not in UNPARSED_MODES:
        raise ValueError(f"option unparsed must be one of {UNPARSED_MODES}, got {mode!r}")


def _check(ctx: Context) -> None:
    """A run's shots and options, as every task but multi_tool reads them."""
    _check_shots(ctx)
    _check_unparsed(ctx)


def _check_multi_tool(ctx: Context) -> None:
    """A multi_tool run's shots and options: zero-shot only, and a known variant."""
    _check_shots(ctx)
    if ctx.shots:
        raise ValueError(
            "the paper ran no few-shot multi-tool selection (appendix C.4: too few two-tool "
            "exemplars); run multi_tool with shots=0"
        )
    _check_unparsed(ctx)
    if _variant(ctx) not in _VARIANTS:
        raise ValueError(f"option variant must be one of {tuple(_VARIANTS)}")


def _variant(ctx: Context) -> Any:
    return ctx.option("variant") or "one-choice"


def _int_option(ctx: Context, name: str, minimum: int) -> int:
    value = ctx.option(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"option {name} must be an integer >= {minimum}, got {value!r}")
    return value


def _rng(ctx: Context, purpose: str, key: str) -> random.Random:
    # A string seed is hashed with SHA-512 by random.Random: the same in every process, and each
    # item's draw does not depend on which other items the run holds.
    return random.Random(f"metatool/{ctx.task.name}/{purpose}/{ctx.seed}/{key}")


def _gold_tool(item: Item) -> str:
    reference = item.reference or {}
    tool = reference.get("tool") if isinstance(reference, dict) else None
    if not isinstance(tool, str) or not tool:
        raise ValueError(f"{item.key}: reference has no gold tool")
    return tool


def _gold_pair(item: Item) -> list[str]:
    reference = item.reference or {}
    pair = reference.get("tools") if isinstance(reference, dict) else None
    if not isinstance(pair, list) or len(pair) != 2:
        raise ValueError(f"{item.key}: reference has no gold pair")
    return list(pair)


def _gold_tools(item: Item) -> list[str]:
    """A single-tool item's gold, as a list (what its candidates and examples are built around)."""
    return [_gold_tool(item)]


# --- select -------------------------------------------------------------------------------------


def _scenario_list(ctx: Context) -> tuple[str, list[str]]:
    lists = {
        item.external_id: list(item.candidate_tools) for item in ctx.aux.get("scenario_lists", ())
    }
    name = ctx.option("scenario")
    known = ", ".join(sorted(lists)) or "none imported"
    if not name:
        raise ValueError(f"the scenario task needs the option 'scenario'; scenarios: {known}")
    if name not in lists:
        raise ValueError(f"no scenario list {name!r}; scenarios: {known}")
    return name, lists[name]


def _per_tool(items: list[Item], ctx: Context, limit: int | None) -> list[Item]:
    """At most `limit` queries per gold tool (the paper's test sets, C.1), drawn with the seed;
    the kept items stay in their order."""
    if limit is None:
        return items
    by_tool: dict[str, list[int]] = {}
    for index, item in enumerate(items):
        by_tool.setdefault(_gold_tool(item), []).append(index)
    keep: set[int] = set()
    for tool, indices in by_tool.items():
        if len(indices) <= limit:
            keep.update(indices)
        else:
            ordered = sorted(indices, key=lambda i: items[i].key)
            keep.update(_rng(ctx, "per_tool", tool).sample(ordered, limit))
    return [item for index, item in enumerate(items) if index in keep]


def _of_splits(items: Sequence[Item], ctx: Context, accepted: Sequence[str]) -> list[Item]:
    """The items, when every one is of a split the task reads (a wrong split is an error)."""
    wrong = sorted({item.split for item in items if item.split not in accepted})
    if wrong:
        raise ValueError(
            f"task {ctx.task.name!r} reads split(s) {', '.join(accepted)}; got {', '.join(wrong)}"
        )
    return list(items)


def _at_most_per_tool(chosen: list[Item], ctx: Context) -> list[Item]:
    """At most `per_tool` queries per tool on the "queries" split; other items all stay."""
    limit = ctx.option("per_tool")
    if limit is not None:
        limit = _int_option(ctx, "per_tool", 1)
    queries = _per_tool([i for i in chosen if i.split == "queries"], ctx, limit)
    kept = {item.key for item in queries}
    return [i for i in chosen if i.split != "queries" or i.key in kept]


def select_awareness(items: Sequence[Item], ctx: Context) -> list[Item]:
    """The awareness items (split "awareness")."""
    _check(ctx)
    return _of_splits(items, ctx, ("awareness",))


def select_similar(items: Sequence[Item], ctx: Context) -> list[Item]:
    """The queries, at most `per_tool` per tool."""
    _check(ctx)
    return _at_most_per_tool(_of_splits(items, ctx, ("queries",)), ctx)


def select_scenario(items: Sequence[Item], ctx: Context) -> list[Item]:
    """The queries whose gold tool is on the scenario's list, at most `per_tool` per tool."""
    _check(ctx)
    chosen = _of_splits(items, ctx, ("queries",))
    _, tools = _scenario_list(ctx)
    listed = set(tools)
    chosen = [item for item in chosen if _gold_tool(item) in listed]
    return _at_most_per_tool(chosen, ctx)


def select_reliability(items: Sequence[Item], ctx: Context) -> list[Item]:
    """The published reliability items, or the queries at most `per_tool` per tool."""
    _check(ctx)
    return _at_most_per_tool(_of_splits(items, ctx, ("reliability", "queries")), ctx)


def select_multi_tool(items: Sequence[Item], ctx: Context) -> list[Item]:
    """The published multi-tool items, or the golden pairs (split "multi_tool_golden")."""
    _check_multi_tool(ctx)
    return _of_splits(items, ctx, ("multi_tool", "multi_tool_golden"))


# --- prepare: candidate lists and examples, fixed at launch -------------------------------------


class _Neighbours:
    """Description-embedding neighbours over the run's tool pool, embedded once."""

    def __init__(self, ctx: Context, needed: Iterable[str]) -> None:
        pool = _tool_pool(ctx)
        unknown = sorted({name for name in needed if name not in ctx.tools})
        if unknown:
            shown = ", ".join(unknown[:5]) + (" ..." if len(unknown) > 5 else "")
            raise ValueError(
                f"{len(unknown)} gold tool(s) have no description in this benchmark ({shown}); "
                "import the tool files (plugin_des.json, big_tool_des.json, plugin_info.json)"
            )
        # Here, not at the top: embeddings are numpy, a fifth of a second of start-up for every
        # process that loads the suite (an import of its files among them).
        from benchmarks.kit.embedding import cosine_matrix, local_embed, rank_by_similarity

        self.rank = rank_by_similarity
        self.names = sorted(set(pool) | set(needed))
        self.index = {name: i for i, name in enumerate(self.names)}
        embed = ctx.embed or local_embed
        texts = [ctx.tools[name].description.strip() or name for name in self.names]
        vectors = embed(texts)
        if len(vectors) != len(texts):
            raise ValueError(f"the embedder returned {len(vectors)} vectors for {len(texts)} texts")
        self.similarity = cosine_matrix(vectors)

    def nearest(self, name: str, k: int) -> list[str]:
        row = self.index[name]
        ranked = self.rank(self.similarity[row])
        return [self.names[i] for i in ranked if i != row][: max(k, 0)]


def _tool_pool(ctx: Context) -> list[str]:
    choice = ctx.option("tool_pool") or "benchmark"
    if choice not in ("benchmark", "all"):
        raise ValueError(f"option tool_pool must be 'benchmark' or 'all', got {choice!r}")
    names = list(ctx.tools)
    if choice == "benchmark":
        own = [
            name
            for name, tool in ctx.tools.items()
            if isinstance(tool.raw, dict) and tool.raw.get("source") == BENCHMARK_TOOLS_FILE
        ]
        # A benchmark imported without plugin_des.json has no marked tools: use them all.
        names = own or names
    return sorted(names)


def _query_pool(items: Sequence[Item], ctx: Context) -> dict[str, list[tuple[str, str]]]:
    """Gold tool -> (query, normalised query) available as few-shot examples: the run's items
    that name one tool (queries, reliability), and the rest of the task's selection that the
    item limit left out (ctx.pool)."""
    seen: dict[str, Item] = {}
    for item in [*items, *ctx.pool]:
        reference = item.reference
        if isinstance(reference, dict) and isinstance(reference.get("tool"), str):
            seen.setdefault(item.key, item)
    by_tool: dict[str, list[tuple[str, str]]] = {}
    for key in sorted(seen):
        text = seen[key].input["query"]
        by_tool.setdefault(_gold_tool(seen[key]), []).append((text, _normal_query(text)))
    return by_tool


def _selection_examples(
    rng: random.Random,
    item: Item,
    candidates: Sequence[str],
    by_tool: Mapping[str, Sequence[tuple[str, str]]],
    listed_wanted: int,
    avoid: Iterable[str],
    have: Sequence[Mapping[str, str]] = (),
) -> list[dict[str, str]]:
    """`have` topped up to five (query, answer) examples: up to `listed_wanted` in all for
    different candidate tools, answered with the tool, the rest for tools off the list, answered
    "None". Never the item's query, a repeated query, or a tool in `avoid` (the gold tools)."""
    avoid = set(avoid)
    examples = [dict(e) for e in have]
    taken = {_normal_query(item.input.get("query", ""))}
    taken.update(_normal_query(e["query"]) for e in examples)
    used_tools = {e["answer"] for e in examples}

    def add(tools: Iterable[str], count: int, answer: str | None) -> None:
        order = list(tools)
        rng.shuffle(order)
        for tool in order:
            if count <= 0:
                return
            choices = [(q, norm) for q, norm in by_tool.get(tool, ()) if norm not in taken]
            if choices:
                text, norm = rng.choice(choices)
                examples.append({"query": text, "answer": answer or tool})
                taken.add(norm)
                count -= 1

    listed_have = sum(1 for e in examples if e["answer"] != "None")
    listed = [t for t in dict.fromkeys(candidates) if t not in avoid and t not in used_tools]
    add(listed, min(listed_wanted - listed_have, 5 - len(examples)), None)
    on_list = set(candidates)
    add(
        (t for t in sorted(by_tool) if t not in avoid and t not in on_list),
        5 - len(examples),
        "None",
    )
    return examples


def _awareness_examples(
    item: Item, ctx: Context, pool: Sequence[tuple[Item, str]]
) -> list[dict[str, str]]:
    """The examples published in the item's prompt, without the item's own query; topped up to
    five from the run's other awareness items (`pool`: item, normalised query) if need be."""
    own = _normal_query(item.input.get("query", ""))
    published = _published_examples(item.input.get("prompt", ""), awareness=True)
    examples = [e for e in published if _normal_query(e["query"]) != own]
    if len(examples) < 5:
        taken = {own, *(_normal_query(e["query"]) for e in examples)}
        others = [
            {"query": o.input["query"], "answer": "Yes" if o.reference["needs_tool"] else "No"}
            for o, norm in pool
            if norm not in taken
        ]
        rng = _rng(ctx, "examples", item.key)
        examples += rng.sample(others, min(5 - len(examples), len(others)))
    return examples


AWARENESS_CANDIDATES = 10


def native_candidates(items: Sequence[Item], ctx: Context) -> list[dict[str, Any]]:
    """Awareness in native mode: each item's candidate list, drawn at launch with the run's
    seed: the gold tool for a query that needs one (native_messages.py says how it is asked)
    and n - 1 other tools of the pool (option n), or n tools of the pool."""
    if ctx.shots:
        raise ValueError("native MetaTool prompts are zero-shot; run with shots=0")
    n = ctx.option("n") or AWARENESS_CANDIDATES
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"option n must be an integer >= 1, got {n!r}")
    pool = _tool_pool(ctx)
    contexts = []
    for item in items:
        rng = random.Random(f"metatool/awareness/native/{ctx.seed}/{item.key}")
        gold = []
        if item.reference.get("needs_tool"):
            tool = _gold_tool(item)
            gold = [tool] if tool in ctx.tools else []
        others = [name for name in pool if name not in gold]
        chosen = gold + rng.sample(others, min(n - len(gold), len(others)))
        rng.shuffle(chosen)
        contexts.append({"candidates": chosen})
    return contexts


def _zero_or_five(ctx: Context) -> bool:
    """Whether the run is five-shot; a native run is refused five-shot (its prompts are
    zero-shot)."""
    five = ctx.shots == 5
    if tool_mode(ctx) == "native" and five:
        raise ValueError("native MetaTool prompts are zero-shot; run with shots=0")
    return five


def prepare_awareness(items: Sequence[Item], ctx: Context) -> list[dict[str, Any]]:
    """Per item, five-shot: the examples ("examples"). A native run draws each item's
    candidate list instead (native_candidates)."""
    _check(ctx)
    if tool_mode(ctx) == "native":
        return native_candidates(items, ctx)
    if ctx.shots != 5:
        return [{} for _ in items]
    pool = [(i, _normal_query(i.input["query"])) for i in sorted(items, key=lambda i: i.key)]
    return [{"examples": _awareness_examples(i, ctx, pool)} for i in items]


def prepare_scenario(items: Sequence[Item], ctx: Context) -> list[dict[str, Any]]:
    """Per item: the scenario's list ("scenario", "candidates") and, five-shot, the examples."""
    _check(ctx)
    five = _zero_or_five(ctx)
    name, tools = _scenario_list(ctx)
    missing = [t for t in tools if t not in ctx.tools]
    if missing:
        raise ValueError(
            f"scenario {name!r} lists tools with no description in this benchmark: "
            f"{', '.join(missing)}"
        )
    by_tool = _query_pool(items, ctx) if five else {}
    contexts: list[dict[str, Any]] = []
    for item in items:
        context: dict[str, Any] = {"scenario": name, "candidates": list(tools)}
        if five:
            context["examples"] = _drawn_examples(
                item, ctx, context["candidates"], by_tool, _gold_tools(item)
            )
        contexts.append(context)
    return contexts


# The splits whose items carry no candidate list: the task's prepare builds one. Published items
# (reliability, multi_tool) keep theirs.
_BUILT_SPLITS = ("queries", "multi_tool_golden")

# What a task gives prepare_lists: its gold tools, how it builds a candidate list around them
# (the item, the run, the neighbours, the item's generator) and how it draws five-shot examples
# (the item, the run, its candidates, the query pool, its gold tools).
_Gold = Callable[[Item], list[str]]
_BuildList = Callable[[Item, Context, _Neighbours, random.Random], dict[str, Any]]
_DrawExamples = Callable[
    [Item, Context, Sequence[str], Mapping[str, Sequence[tuple[str, str]]], list[str]],
    list[dict[str, str]],
]


def prepare_lists(
    items: Sequence[Item],
    ctx: Context,
    *,
    check: Callable[[Context], None],
    gold: _Gold,
    build: _BuildList,
    examples: _DrawExamples,
) -> list[dict[str, Any]]:
    """Per item: the candidate list ("candidates": the published one, or one `build` makes on a
    built split, with what it adds) and, five-shot, the examples ("examples")."""
    check(ctx)
    five = _zero_or_five(ctx)
    built = {item.key for item in items if item.split in _BUILT_SPLITS}
    neighbours = None
    if built:
        needed = [t for item in items if item.key in built for t in gold(item)]
        neighbours = _Neighbours(ctx, needed)
    by_tool = _query_pool(items, ctx) if five else {}

    contexts: list[dict[str, Any]] = []
    for item in items:
        context: dict[str, Any]
        if neighbours is None or item.key not in built:
            context = {"candidates": list(item.candidate_tools)}
        else:
            context = build(item, ctx, neighbours, _rng(ctx, "candidates", item.key))
        if five:
            context["examples"] = examples(item, ctx, context["candidates"], by_tool, gold(item))
        contexts.append(context)
    return contexts


def _similar_list(
    item: Item, ctx: Context, neighbours: _Neighbours, rng: random.Random
) -> dict[str, Any]:
    """Similar: the gold tool and its n-1 nearest, shuffled; "similar" keeps the nearest, most
    similar first (the error analysis ranks a wrong pick among them)."""
    size = _int_option(ctx, "n", 2)
    gold = _gold_tool(item)
    nearest = neighbours.nearest(gold, size - 1)
    candidates = [gold, *nearest]
    rng.shuffle(candidates)
    return {"candidates": candidates, "similar": nearest}


def _outside_nearest(
    item: Item,
    neighbours: _Neighbours,
    rng: random.Random,
    gold: Sequence[str],
    k: int,
    n: int,
    wanted: int,
) -> list[str]:
    """`wanted` tools sampled outside the gold tools and each one's k nearest."""
    excluded = set(gold)
    for tool in gold:
        excluded.update(neighbours.nearest(tool, k))
    rest = [name for name in neighbours.names if name not in excluded]
    if len(rest) < wanted:
        raise ValueError(
            f"{item.key}: only {len(rest)} tools remain outside the gold and its {k} nearest; "
            f"lower n ({n}) or k"
        )
    return rng.sample(rest, wanted)


def _reliability_list(
    item: Item, ctx: Context, neighbours: _Neighbours, rng: random.Random
) -> dict[str, Any]:
    """Reliability: n tools outside the gold tool and its k nearest."""
    gold = _gold_tools(item)
    k = _int_option(ctx, "k", 0)
    n = _int_option(ctx, "n", 1)
    return {"candidates": _outside_nearest(item, neighbours, rng, gold, k, n, n)}


def _multi_tool_list(
    item: Item, ctx: Context, neighbours: _Neighbours, rng: random.Random
) -> dict[str, Any]:
    """Multi-tool: the gold pair and n-2 tools outside the pair and the union of each one's k
    nearest, shuffled."""
    gold = _gold_pair(item)
    k = _int_option(ctx, "k", 0)
    n = _int_option(ctx, "n", 3)
    chosen = _outside_nearest(item, neighbours, rng, gold, k, n, n - 2) + gold
    rng.shuffle(chosen)
    return {"candidates": chosen}


def _drawn_examples(
    item: Item,
    ctx: Context,
    candidates: Sequence[str],
    by_tool: Mapping[str, Sequence[tuple[str, str]]],
    gold: list[str],
) -> list[dict[str, str]]:
    """Five examples drawn from the run's queries (similar, scenario), in a shuffled order."""
    rng = _rng(ctx, "examples", item.key)
    examples = _selection_examples(rng, item, candidates, by_tool, 5, gold)
    rng.shuffle(examples)
    return examples


def _reliability_examples(
    item: Item,
    ctx: Context,
    candidates: Sequence[str],
    by_tool: Mapping[str, Sequence[tuple[str, str]]],
    gold: list[str],
) -> list[dict[str, str]]:
    """The examples published in the item's prompt (minus its own query and any answered with
    its gold tool); when some were dropped or none are published, topped up from the run's
    queries in C.4's ratio, in a shuffled order."""
    query = item.input.get("query", "")
    rng = _rng(ctx, "examples", item.key)
    published = _published_examples(item.input.get("prompt", ""), awareness=False)
    have = [e for e in published if not _same_query(e["query"], query) and e["answer"] != gold[0]]
    if published and len(have) == len(published):
        return have
    # C.4: the ratio of "None" to tool answers is 2:3 or 3:2.
    listed_wanted = rng.choice((2, 3))
    examples = _selection_examples(rng, item, candidates, by_tool, listed_wanted, gold, have)
    rng.shuffle(examples)
    return examples


def prepare_similar(items: Sequence[Item], ctx: Context) -> list[dict[str, Any]]:
    """Per item: the gold tool and its n-1 nearest ("candidates", "similar") and, five-shot,
    examples drawn from the run's queries."""
    return prepare_lists(
        items, ctx, check=_check, gold=_gold_tools, build=_similar_list, examples=_drawn_examples
    )


def prepare_reliability(items: Sequence[Item], ctx: Context) -> list[dict[str, Any]]:
    """Per item: the published candidates, or on "queries" n tools away from the gold tool, and,
    five-shot, the published examples or ones drawn in C.4's ratio."""
    return prepare_lists(
        items,
        ctx,
        check=_check,
        gold=_gold_tools,
        build=_reliability_list,
        examples=_reliability_examples,
    )


def prepare_multi_tool(items: Sequence[Item], ctx: Context) -> list[dict[str, Any]]:
    """Per item: the published candidates, or on "multi_tool_golden" the gold pair among n-2
    tools away from it. Never five-shot (_check_multi_tool refuses it)."""
    return prepare_lists(
        items,
        ctx,
        check=_check_multi_tool,
        gold=_gold_pair,
        build=_multi_tool_list,
        examples=_drawn_examples,
    )


# --- prompts ------------------------------------------------------------------------------------

# Ours: the completion-style cue ending a zero-shot prompt, the same words that end the published
# five-shot prompts, so a base model's first line is the answer.
_AWARENESS_CUE = '\n\nUser query: "{user_query}" answer:'
_SINGLE_CUE = '\nUser query: "{user_query}" tool:'
_MULTI_CUE = '\nUser query: "{user_query}" tools:'
# One answer line; the next line would be the model inventing another example.
COMPLETION_STOP = ("\n",)


def _candidates(item: Item, context: Mapping[str, Any]) -> list[str]:
    candidates = context.get("candidates")
    if candidates is None:
        if item.split in _BUILT_SPLITS:
            raise ValueError(f"{item.key}: no candidate list; prepare() builds it at launch")
        candidates = item.candidate_tools
    return list(candidates)


def _tool_list(item: Item, ctx: Context, candidates: list[str]) -> str:
    # Published items keep their published block verbatim (its descriptions are the store's,
    # as the authors printed them), unless the run shows rewritten descriptions (section 4.3);
    # built lists use the benchmark's descriptions (of the run's revision).
    published = _published_tool_list(item.input.get("prompt", ""))
    if (
        published is not None
        and candidates == list(item.candidate_tools)
        and ctx.tool_revision is None
    ):
        return published
    missing = [name for name in candidates if name not in ctx.tools]
    if missing:
        raise ValueError(f"{item.key}: candidates without a description: {', '.join(missing)}")
    return render_tool_list(candidates, {name: ctx.tools[name].description for name in candidates})


def _prompt(
    ctx: Context,
    query: str,
    base: str,
    examples: Sequence[Mapping[str, str]] | None,
    line: str,
    wrapper: str,
    cue: str,
) -> Prompt:
    """The zero-shot prompt `base` (ending with `cue` for completion), or five-shot the
    `examples` in `line`s inside the template `wrapper`."""
    if ctx.shots == 5:
        chat = _fill(
            _template(wrapper),
            prompt=base,
            examples=_example_lines(examples or [], line),
            user_query=query,
        )
        text = chat.rstrip(" ")
    else:
        chat = base
        text = base + _fill(cue, user_query=query)
    completion = ctx.style == "completion"
    return Prompt(
        messages=[{"role": "user", "content": chat}],
        text=text,
        stop=COMPLETION_STOP if completion else (),
    )


def awareness_prompt(item: Item, ctx: Context, context: dict[str, Any]) -> Prompt:
    """The thought prompt; five-shot, with the examples prepare() drew, else the ones published
    in the item's prompt (minus its own query)."""
    _check(ctx)
    query = item.input.get("query", "")
    base = thought_prompt(query)
    examples = context.get("examples")
    if ctx.shots == 5 and examples is None:
        examples = [
            e
            for e in _published_examples(item.input.get("prompt", ""), awareness=True)
            if not _same_query(e["query"], query)
        ]
    return _prompt(
        ctx, query, base, examples, _AWARENESS_LINE, "awareness_examples", _AWARENESS_CUE
    )


def _action(item: Item, ctx: Context, context: dict[str, Any], form: str, cue: str) -> Prompt:
    """The action prompt in `form` over the item's candidates (five-shot: prepare()'s examples)."""
    query = item.input.get("query", "")
    candidates = _candidates(item, context)
    base = action_prompt(query, _tool_list(item, ctx, candidates), form)
    examples = context.get("examples")
    if ctx.shots == 5 and examples is None:
        raise ValueError(f"{item.key}: no few-shot examples; prepare() draws them at launch")
    return _prompt(ctx, query, base, examples, _ACTION_LINE, "action_examples", cue)


def single_tool_prompt(item: Item, ctx: Context, context: dict[str, Any]) -> Prompt:
    """The single-tool action prompt (similar, scenario, reliability)."""
    _check(ctx)
    return _action(item, ctx, context, "single", _SINGLE_CUE)


def multi_tool_prompt(item: Item, ctx: Context, context: dict[str, Any]) -> Prompt:
    """The multi-tool action prompt of the run's variant."""
    _check_multi_tool(ctx)
    return _action(item, ctx, context, _variant(ctx), _MULTI_CUE)


# --- parse, score, aggregate --------------------------------------------------------------------


def parse_awareness(text: str, item: Item, ctx: Context, context: dict[str, Any]) -> Outcome:
    """Yes (True), no (False) or unread, by the rules of match_awareness."""
    label, rule = match_awareness(text)
    return Outcome(output=text, answer=label, parsed=label is not None, note=rule)


def _parse_choice(
    text: str,
    item: Item,
    context: dict[str, Any],
    choose: Callable[[str, Sequence[str]], tuple[list[str] | None, str]],
) -> Outcome:
    candidates = _candidates(item, context)
    answer, why = choose(text, candidates)
    if answer is None:
        return Outcome(output=text, answer=find_tools(text, candidates), parsed=False, note=why)
    return Outcome(output=text, answer=answer, note=why)


def parse_single(text: str, item: Item, ctx: Context, context: dict[str, Any]) -> Outcome:
    """The one tool named, [] for None, or unread (choose_single); an unread answer keeps the
    names found."""
    return _parse_choice(text, item, context, choose_single)


def parse_pair(text: str, item: Item, ctx: Context, context: dict[str, Any]) -> Outcome:
    """The tools named, at most two, or unread (choose_pair); an unread answer keeps the names
    found."""
    return _parse_choice(text, item, context, choose_pair)


def _base_scores(outcome: Outcome | None) -> tuple[Scores, Any]:
    """correct (0 until the task decides), unparsed and failed (1/0), and the read answer (None
    when unread or failed)."""
    failed = outcome is None
    answer = None if outcome is None or not outcome.parsed else outcome.answer
    scores: Scores = {
        "correct": 0.0,
        "unparsed": float(not failed and answer is None),
        "failed": float(failed),
    }
    return scores, answer


def score_awareness(
    outcome: Outcome | None, item: Item, ctx: Context, context: dict[str, Any]
) -> Scores:
    """Per item: correct, unparsed, failed (1/0), needs_tool (the gold) and says_yes (None when
    unread)."""
    scores, answer = _base_scores(outcome)
    gold = bool(item.reference["needs_tool"])
    says = None if answer is None else bool(answer)
    scores.update(needs_tool=float(gold), says_yes=None if says is None else float(says))
    scores["correct"] = float(says is not None and says == gold)
    return scores


def _chosen(outcome: Outcome | None, ideal: set[str]) -> tuple[Scores, list[str], bool]:
    """A selection's scores (correct: the chosen set is `ideal`), the tools chosen and whether
    the answer went unread."""
    scores, answer = _base_scores(outcome)
    unread = answer is None
    chosen = [] if answer is None else list(answer)
    scores["correct"] = float(not unread and set(chosen) == ideal)
    return scores, chosen, unread


def score_similar(
    outcome: Outcome | None, item: Item, ctx: Context, context: dict[str, Any]
) -> Scores:
    """Per item: correct (the gold tool chosen), unparsed, failed (1/0), and pick_rank: a wrong
    pick's rank among the gold tool's nearest (context "similar"; None otherwise)."""
    ideal = {_gold_tool(item)}
    scores, chosen, unread = _chosen(outcome, ideal)
    similar = list(context.get("similar") or ())
    wrong_pick = not unread and len(chosen) == 1 and chosen[0] not in ideal
    rank = similar.index(chosen[0]) + 1 if wrong_pick and chosen[0] in similar else None
    scores["pick_rank"] = None if rank is None else float(rank)
    return scores


def score_gold_tool(
    outcome: Outcome | None, item: Item, ctx: Context, context: dict[str, Any]
) -> Scores:
    """Per item: correct (the gold tool chosen), unparsed, failed (1/0)."""
    return _chosen(outcome, {_gold_tool(item)})[0]


def score_no_tool(
    outcome: Outcome | None, item: Item, ctx: Context, context: dict[str, Any]
) -> Scores:
    """Per item: correct ("None" chosen: the gold tool is not offered), unparsed, failed
    (1/0)."""
    return _chosen(outcome, set())[0]


def score_pair(
    outcome: Outcome | None, item: Item, ctx: Context, context: dict[str, Any]
) -> Scores:
    """Per item: correct (the gold pair chosen), unparsed, failed (1/0), one_of_one and
    one_of_two (paper Table 4)."""
    ideal = set(_gold_pair(item))
    scores, chosen, unread = _chosen(outcome, ideal)
    right = len(set(chosen) & ideal)
    scores["one_of_one"] = float(not unread and len(chosen) == 1 and right == 1)
    scores["one_of_two"] = float(not unread and len(chosen) == 2 and right == 1)
    return scores


def _counted(scored: Sequence[Scored], ctx: Context) -> tuple[Scores, list[Scored]]:
    """The counts n, unparsed and failed, and the items every denominator counts: with
    unparsed="exclude" the unparsed items leave them but are still counted in `unparsed`."""
    mode = ctx.option("unparsed") or "wrong"
    counts: Scores = {
        "n": float(len(scored)),
        "unparsed": float(sum(1 for s in scored if s.scores.get("unparsed"))),
        "failed": float(sum(1 for s in scored if s.scores.get("failed"))),
    }
    counted = [s for s in scored if not (mode == "exclude" and s.scores.get("unparsed"))]
    return counts, counted


def _share(counted: Sequence[Scored], name: str) -> float | None:
    """The percentage of the counted items whose `name` is 1 (None when none is counted)."""
    return (
        percent(sum(s.scores.get(name) or 0.0 for s in counted) / len(counted)) if counted else None
    )


def aggregate_awareness(scored: Sequence[Scored], ctx: Context) -> Scores:
    """Accuracy, precision, recall, F1 and the confusion counts, with n, unparsed, failed."""
    _check(ctx)
    counts, counted = _counted(scored, ctx)
    gold = [bool(s.scores.get("needs_tool")) for s in counted]
    # An unread or failed answer counts as the wrong label, so it lowers every metric.
    predicted = [
        bool(s.scores["says_yes"]) if s.scores.get("says_yes") is not None else not g
        for s, g in zip(counted, gold, strict=True)
    ]
    return {**awareness_metrics(gold, predicted), **counts}


def aggregate_csr(scored: Sequence[Scored], ctx: Context) -> Scores:
    """CSR, with n, unparsed, failed (scenario, reliability)."""
    _check(ctx)
    counts, counted = _counted(scored, ctx)
    return {"CSR": _share(counted, "correct"), **counts}


def aggregate_similar(scored: Sequence[Scored], ctx: Context) -> Scores:
    """CSR, Top@1/3/5 over the wrong picks, with n, unparsed, failed and wrong_picks."""
    _check(ctx)
    counts, counted = _counted(scored, ctx)
    result: Scores = {"CSR": _share(counted, "correct")}
    ranks = [int(r) for s in counted if (r := s.scores.get("pick_rank")) is not None]
    result.update(top_at_k(ranks))
    counts["wrong_picks"] = float(len(ranks))
    return {**result, **counts}


def aggregate_pair(scored: Sequence[Scored], ctx: Context) -> Scores:
    """CSR, one_of_one and one_of_two, with n, unparsed, failed."""
    _check_multi_tool(ctx)
    counts, counted = _counted(scored, ctx)
    result: Scores = {"CSR": _share(counted, "correct")}
    for name in ("one_of_one", "one_of_two"):
        result[name] = _share(counted, name)
    return {**result, **counts}
