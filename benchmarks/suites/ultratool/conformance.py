"""What UltraTool promises, on its own cases (benchmarks/kit/conformance.py).

Metric cases: the test fixtures' items (gold for all six tasks; the demo has three), answered
with their gold, nothing, text that is no answer, and not at all.
Analysis examples: hand-made plans in three domains, of depth 1 to 3 and with one to three tool
steps, answered by five rules: the gold, half of it, a wrong answer, an unreadable text, no
answer from the endpoint."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from benchmarks.kit.conformance import (
    AnalysisExample,
    Conformance,
    Files,
    MetricCase,
    answered,
    gold_answered_cases,
)
from benchmarks.kit.protocol import Context, Item, Scored
from benchmarks.suites import ultratool
from benchmarks.suites.ultratool.judges import CREATION_DIMENSIONS, PLANNING_DIMENSIONS

# --- metric cases -------------------------------------------------------------------------------


def metric_cases(task: str, files: Files) -> Iterator[MetricCase]:
    # The test fixtures hold gold for all six tasks (the demo only for three).
    folder = files.fixtures / "ultratool"
    paths = [folder / "test.json", folder / "test_set"]
    yield from gold_answered_cases("ultratool", task, paths, ultratool.reference_output)


# --- analysis examples --------------------------------------------------------------------------

TOOLS = ("get_weather", "set_alarm", "send_message")


def plan(index: int) -> tuple[list[dict[str, Any]], str]:
    """Plan `index`: depth 1 + index % 3, tool steps 1 + index % 3 (one tool a top step)."""
    depth, tools = 1 + index % 3, 1 + index % 3
    steps: list[dict[str, Any]] = []
    for top in range(1, tools + 1):
        number = str(top) + ".1" * (depth - 1)
        for level in range(1, depth):
            steps.append({"step": str(top) + ".1" * (level - 1), "text": f"Part {top}"})
        steps.append(
            {
                "step": number,
                "text": f"Do step {top}",
                "tool": TOOLS[top - 1],
                "arguments": {"x": f"v{index}"},
            }
        )
    text = "\n".join(f"{s['step']}. {s['text']}" for s in steps)
    return steps, text


def item(index: int) -> Item:
    steps, text = plan(index)
    tool_steps = [s for s in steps if s.get("tool")]
    reference = {
        "steps": steps,
        "plan_text": text,
        "tool_usage_awareness": [{"step": s["step"], "value": int("tool" in s)} for s in steps],
        "tool_creation_awareness": [{"step": s["step"], "value": 0} for s in tool_steps],
        "tool_selection": [{"step": s["step"], "tool": s["tool"]} for s in tool_steps],
        "tool_usage": [
            {"step": s["step"], "tool": s["tool"], "arguments": s["arguments"]} for s in tool_steps
        ],
        "tool_creation": [
            {"step": s["step"], "tool": {"name": s["tool"], "description": "d"}} for s in tool_steps
        ],
    }
    return Item(
        split="test",
        external_id=str(index),
        input={"query": f"Question {index}"},
        reference=reference,
        kind="plan",
        candidate_tools=TOOLS,
        metadata={"domain": ("Weather", "Alarm", "Travel")[index % 3]},
    )


def answer(task: str, the_item: Item, rule: int) -> str | None:
    if rule == 4:
        return None
    if rule == 3:
        return "I cannot say."
    gold: Any = the_item.reference[task] if task not in ("planning",) else None
    if task == "planning":
        text = the_item.reference["plan_text"]
        return text if rule != 2 else "1. Something\n3. Else"
    if task == "tool_creation":
        tools = [
            {
                "step": g["step"],
                "name": g["tool"]["name"] if rule != 2 else "",
                "description": "does it",
                "arguments": {"type": "object", "properties": {}},
                "results": {"type": "object"},
            }
            for g in gold
        ]
        return json.dumps(tools if rule != 1 else tools[:1])
    keep = gold if rule == 0 else gold[: max(1, len(gold) // 2)] if rule == 1 else gold
    out: list[dict[str, Any]] = []
    for g in keep:
        if task == "tool_usage_awareness":
            value = g["value"] if rule != 2 else 1 - g["value"]
            out.append({"step": g["step"], "needs_tool": value})
        elif task == "tool_creation_awareness":
            out.append({"step": g["step"], "needs_new_tool": g["value"] if rule != 2 else 1})
        elif task == "tool_selection":
            out.append({"step": g["step"], "tool": g["tool"] if rule != 2 else "nothing"})
        else:
            arguments = g["arguments"] if rule != 2 else {"x": "other"}
            out.append({"step": g["step"], "tool": g["tool"], "arguments": arguments})
    return json.dumps(out)


def judged(task: str, records: list[Scored]) -> dict[str, Any]:
    """A judge's verdicts on the judged tasks: two rounds per item but the last, which the
    judge never answered; dimensions scored from the item's index, one left out now and then."""
    template = {"planning": "ultratool.planning", "tool_creation": "ultratool.tool_creation"}
    if task not in template:
        return {}
    dimensions = PLANNING_DIMENSIONS if task == "planning" else CREATION_DIMENSIONS
    verdicts: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for index, record in enumerate(records[:-1]):
        rounds = [
            {
                "judge": "judge",
                "value": None,
                "values": {
                    d: 1 + (index + k + r) % 10 for k, d in enumerate(dimensions) if (index + k) % 7
                },
            }
            for r in range(2)
        ]
        verdicts[(record.item.key, record.repeat)] = rounds
    return {"judgments": {template[task]: verdicts}}


def example(task: str) -> Callable[[Files], AnalysisExample]:
    def build(files: Files) -> AnalysisExample:
        evaluator = ultratool.SUITE.evaluator
        ctx = Context(task=evaluator.task(task))  # the run's options: none
        items = [item(i) for i in range(9)]
        records = [
            answered(evaluator, ctx, it, answer(task, it, (i + i // 9) % 5))
            for i, it in enumerate(items * 5)
        ]
        return AnalysisExample(evaluator, ctx, records, inputs=judged(task, records))

    return build


EXAMPLES = {task: example(task) for task in ultratool.analyses.TASK_METRICS}


def round_trip(files: Files) -> list[Path]:
    folder = files.demo / "ultratool"
    return [folder / "test.json", *sorted((folder / "test_set").glob("*.json"))]


CONFORMANCE = Conformance(
    metric_cases=metric_cases, analysis_examples=EXAMPLES, round_trip=round_trip
)
