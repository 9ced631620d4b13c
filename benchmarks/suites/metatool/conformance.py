"""What MetaTool promises, on its own cases (benchmarks/kit/conformance.py).

Metric cases: hand-made items per task, answered right, wrong, unreadably and not at all.
Analysis examples: the seed data's queries, reliability and multi-tool items, asked with
candidate lists of several lengths (and, for the scenario task, every scenario list, pooled as a
comparison pools a model's runs), answered right, wrong, None or unreadably."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from benchmarks.kit.base import ImportBundle
from benchmarks.kit.conformance import (
    AnalysisExample,
    Conformance,
    Files,
    MetricCase,
    answered,
    context_for,
    item_of,
    parsed,
    tools_of,
)
from benchmarks.kit.protocol import Context, Item
from benchmarks.kit.registry import get_suite
from benchmarks.suites import metatool

# --- metric cases -------------------------------------------------------------------------------

CANDIDATES = ["Weather", "Forecast", "Maps"]


def metric_cases(task: str, files: Files) -> Iterator[MetricCase]:
    suite = get_suite("metatool").evaluator
    ctx = Context(task=suite.task(task))
    if task == "awareness":
        yes = Item("awareness", "1", {"query": "Rain tomorrow?"}, {"needs_tool": True})
        no = Item("awareness", "2", {"query": "Say hi"}, {"needs_tool": False})
        texts = ["Yes, I need to use a tool.", "No.", "The moon is made of cheese", None]
        yield MetricCase([parsed(suite, ctx, it, t) for it in (yes, no) for t in texts])
        return
    if task == "multi_tool":
        gold = {"tools": ["Weather", "Maps"]}
        pair = Item("multi_tool", "1", {"query": "q"}, gold, candidate_tools=tuple(CANDIDATES))
        texts = ["Weather and Maps", "Weather", "Weather, Forecast", "", None]
        yield MetricCase([parsed(suite, ctx, pair, t) for t in texts])
        return
    split = "reliability" if task == "reliability" else "queries"
    item = Item(split, "1", {"query": "q"}, {"tool": "Weather"}, candidate_tools=("Forecast",))
    context: dict[str, Any] = {"candidates": CANDIDATES}
    if task == "similar":
        context["similar"] = ["Forecast", "Maps"]
    texts = ["Weather", "Forecast", "None", "Weather or Maps", None]
    yield MetricCase([parsed(suite, ctx, item, t, context) for t in texts])


# --- analysis examples --------------------------------------------------------------------------


def bundle(files: Files) -> ImportBundle:
    seed = files.seeddata / "metatool"
    return metatool.import_files(
        [
            seed / "all_clean_data_sample200.csv",
            seed / "plugin_des.json",
            seed / "scenario",
            seed / "Task2-Subtask3_reliability_sample100.json",
            seed / "Task2-Subtask4_multi_tool_sample100.json",
        ]
    )


def single_answer(index: int, gold: str | None, candidates: Sequence[str]) -> str:
    """Rule index % 4: the gold (None where the gold is not offered), another candidate,
    None, words naming no tool (unread)."""
    others = [name for name in candidates if name != gold]
    rule = index % 4
    if rule == 0:
        return f"{gold}" if gold else "None"
    if rule == 1:
        return others[index % len(others)]
    if rule == 2:
        return "None"
    return "I am not sure which one."


def run(task: str, **options: Any) -> Callable[[Files], AnalysisExample]:
    def build(files: Files) -> AnalysisExample:
        data = bundle(files)
        evaluator = metatool.SUITE.evaluator
        ctx = context_for(evaluator, task, **options)
        ctx.tools = tools_of(data)
        items = [item_of(record) for record in data.samples]
        records = []
        if task == "scenario":
            lists = {
                i.external_id: list(i.candidate_tools) for i in items if i.split == "scenario_lists"
            }
            index = 0
            for name, listed in lists.items():
                for item in [i for i in items if i.split == "queries"]:
                    if item.reference["tool"] not in listed:
                        continue
                    context = {"scenario": name, "candidates": listed}
                    text = single_answer(index, item.reference["tool"], listed)
                    records.append(answered(evaluator, ctx, item, text, context))
                    index += 1
            return AnalysisExample(evaluator, ctx, records)
        split = {"similar": "queries", "reliability": "reliability", "multi_tool": "multi_tool"}
        chosen = [i for i in items if i.split == split[task]][:60]
        names = sorted(ctx.tools)
        for index, item in enumerate(chosen):
            size = (3, 5, 8)[index % 3]
            if task == "similar":
                gold = item.reference["tool"]
                nearest = [name for name in names if name != gold][index : index + size - 1]
                context = {"candidates": [gold, *nearest], "similar": nearest}
                text = single_answer(index, gold, context["candidates"])
            elif task == "reliability":
                context = {"candidates": list(item.candidate_tools)[:size]}
                text = single_answer(index, None, context["candidates"])
            else:
                pair = list(item.reference["tools"])
                rest = [n for n in item.candidate_tools if n not in pair]
                context = {"candidates": [*pair, *rest[: size - 2]]}
                text = (
                    f"{pair[0]}, {pair[1]}",
                    f"{pair[0]}, {rest[0]}",
                    pair[1],
                    "None of them.",
                )[index % 4]
            records.append(answered(evaluator, ctx, item, text, context))
        return AnalysisExample(evaluator, ctx, records)

    return build


EXAMPLES = {
    # unread answers left out of the CSR, so the analyses must leave them out too
    "similar": run("similar", unparsed="exclude"),
    "scenario": run("scenario", scenario="Students"),
    "reliability": run("reliability"),
    "multi_tool": run("multi_tool"),
}


def round_trip(files: Files) -> list[Path]:
    # Every seed file: the queries CSV, the golden pairs, the three test sets, the scenario
    # lists and the three tool files.
    seed = files.seeddata / "metatool"
    return [
        seed / "all_clean_data_sample200.csv",
        seed / "multi_tool_query_golden.json",
        seed / "plugin_des.json",
        seed / "big_tool_des.json",
        seed / "plugin_info.json",
        seed / "Task1_awareness_sample200.json",
        seed / "Task2-Subtask3_reliability_sample100.json",
        seed / "Task2-Subtask4_multi_tool_sample100.json",
        seed / "scenario",
    ]


CONFORMANCE = Conformance(
    metric_cases=metric_cases, analysis_examples=EXAMPLES, round_trip=round_trip
)
