"""MetaTool example runs: the seed data's queries, reliability and multi-tool items, asked with
candidate lists of several lengths (and, for the scenario task, every scenario list, pooled as a
comparison pools a model's runs), answered right, wrong, None or unreadably."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchmarks.kit.base import ImportBundle
from benchmarks.kit.protocol import Evaluator
from benchmarks.suites import metatool
from tests.benchmarks.analysis_examples import (
    Example,
    answered,
    context_for,
    item_of,
    tools_of,
)
from tests.conftest import SEEDDATA

SEED = SEEDDATA / "metatool"


def bundle() -> ImportBundle:
    return metatool.import_files(
        [
            SEED / "all_clean_data_sample200.csv",
            SEED / "plugin_des.json",
            SEED / "scenario",
            SEED / "Task2-Subtask3_reliability_sample100.json",
            SEED / "Task2-Subtask4_multi_tool_sample100.json",
        ]
    )


def single_answer(index: int, gold: str | None, candidates: list[str]) -> str:
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


def run(task: str, **options: Any) -> Callable[[], Example]:
    def build() -> Example:
        data = bundle()
        evaluator = Evaluator(metatool)
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
            return Example(evaluator, ctx, records)
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
        return Example(evaluator, ctx, records)

    return build


EXAMPLES = {
    # unread answers left out of the CSR, so the analyses must leave them out too
    "similar": run("similar", unparsed="exclude"),
    "scenario": run("scenario", scenario="Students"),
    "reliability": run("reliability"),
    "multi_tool": run("multi_tool"),
}
