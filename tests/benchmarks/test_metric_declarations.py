"""Every metric a suite's score() or aggregate() can return is declared on its task (MetricSpec:
kind and direction), and every declaration is returned by some answer: walked over every task
of every registered suite, with items made here or read from the suites' demo files, scored for
a right answer, wrong ones, an unreadable one and a failed call. Pure: no database."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from benchmarks.kit.base import merge_tools
from benchmarks.kit.protocol import (
    FAMILY,
    Context,
    Evaluator,
    Item,
    MetricSpec,
    Outcome,
    Scored,
    TaskSpec,
    ToolSpec,
    lookup_metric,
    metric_specs,
)
from benchmarks.kit.registry import get_suite, suite_names
from benchmarks.suites import generic, ultratool
from benchmarks.suites.stabletoolbench import evaluate as stb

DEMO = Path(__file__).resolve().parents[2] / "benchmarks" / "demo"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


Triple = tuple[Item, Outcome | None, dict[str, Any]]


@dataclass
class Case:
    """One run of a task: its options and its (item, outcome or None for a failed call,
    context) triples."""

    items: list[Triple]
    options: dict[str, Any] = field(default_factory=dict)


def answered(
    evaluator: Evaluator,
    ctx: Context,
    item: Item,
    text: str | None,
    context: dict[str, Any] | None = None,
) -> Triple:
    """The item with the suite's reading of `text` (None: the call failed)."""
    context = context or {}
    outcome = None if text is None else evaluator.parse(text, item, ctx, context)
    return item, outcome, context


# --- MetaTool ----------------------------------------------------------------------------------

CANDIDATES = ["Weather", "Forecast", "Maps"]


def metatool_cases(task: str) -> Iterator[Case]:
    suite = Evaluator(get_suite("metatool"))
    ctx = Context(task=suite.task(task))
    if task == "awareness":
        yes = Item("awareness", "1", {"query": "Rain tomorrow?"}, {"needs_tool": True})
        no = Item("awareness", "2", {"query": "Say hi"}, {"needs_tool": False})
        texts = ["Yes, I need to use a tool.", "No.", "The moon is made of cheese", None]
        yield Case([answered(suite, ctx, it, t) for it in (yes, no) for t in texts])
        return
    if task == "multi_tool":
        gold = {"tools": ["Weather", "Maps"]}
        pair = Item("multi_tool", "1", {"query": "q"}, gold, candidate_tools=tuple(CANDIDATES))
        texts = ["Weather and Maps", "Weather", "Weather, Forecast", "", None]
        yield Case([answered(suite, ctx, pair, t) for t in texts])
        return
    split = "reliability" if task == "reliability" else "queries"
    item = Item(split, "1", {"query": "q"}, {"tool": "Weather"}, candidate_tools=("Forecast",))
    context: dict[str, Any] = {"candidates": CANDIDATES}
    if task == "similar":
        context["similar"] = ["Forecast", "Maps"]
    texts = ["Weather", "Forecast", "None", "Weather or Maps", None]
    yield Case([answered(suite, ctx, item, t, context) for t in texts])


# --- MTU-Bench ---------------------------------------------------------------------------------

SINGLE_RULES = "Action: The name of the API to be called.\nThe following is a list of APIs\n"
MULTI_RULES = "Action: The name of the APIs.\nThe following is a list of APIs\n"


def mtu_item(split: str, external_id: str, rules: str, calls: dict[str, dict]) -> Item:
    return Item(
        split=split,
        external_id=external_id,
        input={"prompt": rules + "User: what is the weather?"},
        reference={"calls": [{"name": n, "arguments": a} for n, a in calls.items()]},
    )


def mtu_text(calls: dict[str, dict]) -> str:
    return "\n".join(
        f"Action: {name}\nAction Input: {json.dumps(args)}" for name, args in calls.items()
    )


def mtubench_cases(task: str) -> Iterator[Case]:
    suite = Evaluator(get_suite("mtubench"))
    ctx = Context(task=suite.task(task))
    single = {"get_weather": {"city": "ghent"}}
    multi = {"get_weather": {"city": "ghent"}, "set_alarm": {"time": "7"}}
    kinds = {
        "S-S": [(SINGLE_RULES, single)],
        "S-M": [(MULTI_RULES, multi)],
        "M-S": [(SINGLE_RULES, single)],
        "M-M": [(MULTI_RULES, multi)],
        "OOD": [(SINGLE_RULES, single), (MULTI_RULES, multi)],
    }[task]
    triples = []
    for k, (rules, calls) in enumerate(kinds):
        for turn in range(2):
            item = mtu_item(task, f"{task}_{k}_{turn}", rules, calls)
            triples.append(answered(suite, ctx, item, mtu_text(calls) if turn == 0 else None))
    yield Case(triples)


# --- StableToolBench ---------------------------------------------------------------------------


def stabletoolbench_cases(task: str) -> Iterator[Case]:
    suite = Evaluator(get_suite("stabletoolbench"))
    ctx = Context(task=suite.task(task))
    item = Item("G1_instruction", "1", {"query": "q"})
    finished = json.dumps(stb.answer_record_for(Outcome(output="", answer="It is sunny.")))
    texts = [finished, "not an answer object", None]
    yield Case([answered(suite, ctx, item, t) for t in texts])


# --- UltraTool and the generic suite: their own files, answered with the gold -----------------


def demo_items(module: Any, files: list[Path]) -> tuple[list[Item], dict[str, ToolSpec]]:
    bundle = module.import_files(files)
    tools = {
        t.name: ToolSpec(t.name, t.description, t.parameters, t.returns, t.category, t.raw)
        for t in merge_tools(bundle.tools)
    }
    items = [
        Item(
            split=s.split,
            external_id=s.external_id,
            input=s.input,
            reference=s.reference,
            kind=s.kind,
            candidate_tools=tuple(s.candidate_tools),
            metadata=s.metadata,
        )
        for s in bundle.samples
    ]
    return items, tools


def gold_answered_cases(
    name: str, task: str, files: list[Path], reference_output: Callable[[Item, str], str]
) -> Iterator[Case]:
    suite = Evaluator(get_suite(name))
    items, tools = demo_items(suite.module, files)
    for options in ({}, {"unparsed": "exclude"}):
        ctx = Context(task=suite.task(task), options=options, tools=tools)
        chosen = suite.select(items, ctx)
        assert chosen, f"{name} demo has no item for {task}"
        triples = []
        for item in chosen:
            for text in (reference_output(item, task), "", "}{ not an answer", None):
                triples.append(answered(suite, ctx, item, text))
        yield Case(triples, options)


def ultratool_cases(task: str) -> Iterator[Case]:
    # The test fixtures hold gold for all six tasks (the demo only for three).
    files = [FIXTURES / "ultratool" / "test.json", FIXTURES / "ultratool" / "test_set"]
    yield from gold_answered_cases("ultratool", task, files, ultratool.reference_output)


def generic_cases(task: str) -> Iterator[Case]:
    files = [DEMO / "generic" / "questions.jsonl"]
    yield from gold_answered_cases("generic", task, files, generic.reference_output)


# --- WTU-Eval: outcomes as its ReAct loop leaves them -----------------------------------------


def wtueval_cases(task: str) -> Iterator[Case]:
    suite = Evaluator(get_suite("wtueval"))
    ctx = Context(task=suite.task(task))
    kind = "tool" if task in ("R1", "R2") else "general"
    right, wrong = (139, "139") if kind == "tool" else (True, "true")

    def item(split: str, n: int) -> Item:
        return Item(split, str(n), {"query": "q"}, {"answer": right, "kind": kind})

    if not suite.task(task).agent:
        # two datasets (per-dataset accuracy), right, wrong, unreadable and failed answers
        texts = [f"Final Answer: {wrong}", "Final Answer: 12", "Final Answer:", None]
        yield Case([answered(suite, ctx, item("ab"[n % 2], n), t) for n, t in enumerate(texts)])
        return
    call = {"action": "Calculator", "input": "1+1", "observation": "2"}
    finish = {"action": "Finish", "stop": "final_answer"}
    outcomes = [
        Outcome("", answer=wrong, trace=[call, finish]),  # right, after a call
        Outcome("", answer="12", trace=[finish]),  # wrong answer
        Outcome("", answer="", parsed=False, trace=[finish]),  # unreadable
        Outcome("", trace=[{"action": "", "stop": "null_content"}]),
        Outcome("", trace=[{**call, "stop": "invalid_tool_repeated"}]),
        Outcome("", trace=[{**call, "stop": "repeated_call"}]),
        Outcome("", trace=[{**call, "stop": "repeated_call", "repeats_failed_call": True}]),
        Outcome("", trace=[{**call, "stop": "step_limit"}]),
        Outcome("", trace=[{**call, "stop": "no_answer"}]),
        None,
    ]
    triples = [(item("a" if n % 2 else "b", n), o, {}) for n, o in enumerate(outcomes)]
    yield Case(triples)


CASES: dict[str, Callable[[str], Iterator[Case]]] = {
    "metatool": metatool_cases,
    "mtubench": mtubench_cases,
    "stabletoolbench": stabletoolbench_cases,
    "ultratool": ultratool_cases,
    "wtueval": wtueval_cases,
    "generic": generic_cases,
}


def every_task() -> list[tuple[str, str]]:
    return [(name, task) for name in suite_names() for task in Evaluator(get_suite(name)).tasks]


def emitted(name: str, task: str) -> tuple[set[str], set[str]]:
    """The per-item and run-level names the task's score() and aggregate() return on its
    cases."""
    suite = Evaluator(get_suite(name))
    spec = suite.task(task)
    per_item: set[str] = set()
    per_run: set[str] = set()
    for case in CASES[name](task):
        ctx = Context(task=spec, options=case.options)
        scored = []
        for item, outcome, context in case.items:
            scores = suite.score(outcome, item, ctx, context)
            per_item.update(scores)
            scored.append(Scored(item, outcome, scores, context))
        per_run.update(suite.aggregate(scored, ctx))
    return per_item, per_run


def test_every_registered_suite_has_cases_here() -> None:
    # A new suite must show here what its scores mean before it can ship.
    assert set(suite_names()) == set(CASES)


def undeclared(names: set[str], specs: dict[str, MetricSpec]) -> set[str]:
    return {name for name in names if lookup_metric(specs, name) is None}


def unreturned(names: set[str], specs: dict[str, MetricSpec]) -> set[str]:
    """Declarations no returned name falls under (a family needs one member)."""
    return {
        key
        for key in specs
        if not any(
            name == key or (key.endswith(FAMILY) and lookup_metric({key: specs[key]}, name))
            for name in names
        )
    }


@pytest.mark.parametrize(("name", "task"), every_task())
def test_every_metric_a_task_returns_is_declared_and_every_declaration_is_returned(
    name: str, task: str
) -> None:
    spec = Evaluator(get_suite(name)).task(task)
    per_item, per_run = emitted(name, task)
    assert not undeclared(per_item, dict(spec.item_metrics)), "per-item names without a MetricSpec"
    assert not undeclared(per_run, dict(spec.run_metrics)), "run-level names without a MetricSpec"
    assert not unreturned(per_item, dict(spec.item_metrics)), "per-item declarations never returned"
    assert not unreturned(per_run, dict(spec.run_metrics)), "run declarations never returned"


@pytest.mark.parametrize(("name", "task"), every_task())
def test_headlines_point_one_way_and_counts_and_flags_are_never_raters(
    name: str, task: str
) -> None:
    spec = Evaluator(get_suite(name)).task(task)
    headline = spec.run_metrics[spec.metrics[0]]
    assert headline.kind == "score" and headline.direction in ("higher", "lower")
    for metric in (*spec.item_metrics.values(), *spec.run_metrics.values()):
        assert metric.comparable == (metric.kind == "score" and metric.direction is not None)
        if metric.kind != "score":
            assert not metric.comparable


def test_what_the_issue_named_is_no_longer_a_score() -> None:
    # "unparsed", "failed", "pick_rank" and "n" were offered as raters and leaderboards.
    metatool = Evaluator(get_suite("metatool"))
    similar = metatool.task("similar")
    assert {n: similar.item_metric(n).kind for n in ("unparsed", "failed", "pick_rank")} == {
        "unparsed": "flag",
        "failed": "flag",
        "pick_rank": "count",
    }
    assert similar.run_metric("n").kind == "count"
    assert similar.item_metric("correct").comparable
    # a name means one thing per item and another per run
    assert similar.run_metric("unparsed").kind == "count"
    # lower is better where the papers say so: a tool call on a general question (WTU-Eval R4)
    r4 = Evaluator(get_suite("wtueval")).task("R4")
    assert r4.item_metric("tool_errors").direction == "lower"
    assert r4.item_metric("tool_errors").comparable
    assert r4.run_metric("call_rate[boolq]").direction == "lower"
    assert Evaluator(get_suite("wtueval")).task("R2").run_metric("call_rate").direction is None


def test_a_task_cannot_ship_an_undeclared_or_pointless_headline() -> None:
    score = MetricSpec.score("acc")
    with pytest.raises(ValueError, match="without a declaration: n"):
        TaskSpec("t", "T", metrics=("acc", "n"), run_metrics=metric_specs(score))
    with pytest.raises(ValueError, match="missing from metrics: extra"):
        TaskSpec(
            "t",
            "T",
            metrics=("acc",),
            run_metrics=metric_specs(score, MetricSpec.count("extra")),
        )
    with pytest.raises(ValueError, match="headline 'n' must be a score"):
        TaskSpec("t", "T", metrics=("n",), run_metrics=metric_specs(MetricSpec.count("n")))
    with pytest.raises(ValueError, match="declared twice"):
        metric_specs(score, score)
    with pytest.raises(ValueError, match="kind must be one of"):
        MetricSpec("x", "rank")  # type: ignore[arg-type]
    # a family covers the names made from it, and nothing else
    family = metric_specs(MetricSpec.score("accuracy[*]"))
    assert lookup_metric(family, "accuracy[gsm8k]") is family["accuracy[*]"]
    assert lookup_metric(family, "accuracy") is None
    assert lookup_metric(family, "call_rate[gsm8k]") is None
