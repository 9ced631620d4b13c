"""MTU-Bench example runs: each split of the seed data, answered turn by turn by six rules."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from benchmarks.kit.protocol import Evaluator, Item
from benchmarks.suites import mtubench
from tests.benchmarks.analysis_examples import Example, answered, context_for, item_of
from tests.conftest import SEEDDATA

SEED = SEEDDATA / "mtubench"


def call(name: str, arguments: dict[str, Any]) -> str:
    return f"Action: {name}\nAction Input: {json.dumps(arguments)}\n"


def output(index: int, item: Item) -> str | None:
    """Rule index % 6: the gold, other tools, the gold tools with wrong arguments, an Action
    without its input, words only, no answer."""
    calls = [(c["name"], c["arguments"]) for c in item.reference["calls"]]
    if mtubench.setting_of(item) in ("S-S", "M-S"):
        calls = calls[:1]
    rule = index % 6
    if rule == 5:
        return None
    if rule == 4 or not calls:
        return "Thought: no tool is needed.\nHere you are." if rule != 1 else call("Other", {})
    if rule == 0:
        chosen = calls
    elif rule == 1:
        chosen = [(f"Other{k}", args) for k, (_, args) in enumerate(calls)]
    elif rule == 2:
        chosen = [(name, {"wrong": "value"}) for name, _ in calls]
    else:
        return f"Thought: I call it.\nAction: {calls[0][0]}\n"
    return "Thought: calls.\n" + "".join(call(name, args) for name, args in chosen)


def example(task: str) -> Callable[[], Example]:
    def build() -> Example:
        bundle = mtubench.import_files([SEED / f"{task}_eval.jsonl"])
        evaluator = Evaluator(mtubench)
        ctx = context_for(evaluator, task)
        items = [item_of(record) for record in bundle.samples if record.split == task]
        records = [answered(evaluator, ctx, item, output(i, item)) for i, item in enumerate(items)]
        return Example(evaluator, ctx, records)

    return build


EXAMPLES = {task: example(task) for task in mtubench.TASKS}
