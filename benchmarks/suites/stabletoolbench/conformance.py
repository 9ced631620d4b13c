"""What StableToolBench promises, on its own cases (benchmarks/kit/conformance.py).

Metric cases: a finished answer record, text that is none, a failed call.
Analysis example of the agent task: hand-made queries offering tools of two categories,
answered with calls the virtual API server served from its cache, the real API or the
simulator, or failed; half the items from a stability run with 20% of the tools down; two
pass-judge rounds per item and two solvability judges that disagree now and then."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from benchmarks.kit.conformance import AnalysisExample, Conformance, Files, MetricCase, parsed
from benchmarks.kit.protocol import Context, Evaluator, Item, Outcome, Scored, ToolSpec
from benchmarks.kit.registry import get_suite
from benchmarks.suites import stabletoolbench
from benchmarks.suites.stabletoolbench import evaluate as stb

# --- metric cases -------------------------------------------------------------------------------


def metric_cases(task: str, files: Files) -> Iterator[MetricCase]:
    suite = get_suite("stabletoolbench").evaluator
    ctx = Context(task=suite.task(task))
    item = Item("G1_instruction", "1", {"query": "q"})
    finished = json.dumps(stb.answer_record_for(Outcome(output="", answer="It is sunny.")))
    texts = [finished, "not an answer object", None]
    yield MetricCase([parsed(suite, ctx, item, t) for t in texts])


# --- analysis examples --------------------------------------------------------------------------

TOOLS = {
    "weather_api": "Weather",
    "forecast_api": "Weather",
    "flights_api": "Travel",
    "hotels_api": "Travel",
}
SOURCES = ("cache", "cache", "real", "simulated", "failed")
PASS = ("Solved", "Unsolved", "Unsure")
VOTES = ("Solvable", "Unsolvable", "Unsure")


def record(index: int, evaluator: Evaluator, ctx: Context) -> Scored:
    tools = list(TOOLS)
    item = Item(
        split="G1_instruction",
        external_id=str(index),
        input={"query": f"Question {index}"},
        reference={},
        candidate_tools=tuple(tools),
    )
    calls = [
        {"action": tools[(index + k) % 4], "tool": tools[(index + k) % 4],
         "source": SOURCES[(index + k) % 5], "observation": "{}", "ok": True}
        for k in range(index % 3)
    ]  # fmt: skip
    outcome = None if index % 7 == 6 else Outcome(output="", answer="done", trace=calls)
    context: dict[str, Any] = {"tools_down": 25.0} if index % 2 else {}
    return Scored(item=item, outcome=outcome, scores={}, context=context)


def build(files: Files) -> AnalysisExample:
    evaluator = stabletoolbench.SUITE.evaluator
    ctx = Context(
        task=evaluator.task("pass_rate"),
        tools={name: ToolSpec(name, category=category) for name, category in TOOLS.items()},
    )
    records = [record(i, evaluator, ctx) for i in range(14)]
    passes: dict[tuple[str, int], list[dict[str, Any]]] = {}
    votes: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for i, r in enumerate(records):
        key = (r.item.key, r.repeat)
        labels = [PASS[i % 3], PASS[(i + 1) % 3]]
        passes[key] = [
            {"judge": "pass", "value": {"Solved": 1.0, "Unsure": 0.5, "Unsolved": 0.0}[label],
             "values": {"label": label}}
            for label in labels
        ]  # fmt: skip
        votes[key] = [
            {"judge": "judge A", "value": None, "values": {"label": VOTES[i % 2]}},
            {"judge": "judge B", "value": None, "values": {"label": VOTES[(i // 3) % 3]}},
        ]
    inputs = {
        "judgments": {
            "stabletoolbench.pass": passes,
            "stabletoolbench.solvability": votes,
        }
    }
    return AnalysisExample(evaluator, ctx, records, inputs=inputs)


EXAMPLES: dict[str, Callable[[Files], AnalysisExample]] = {"pass_rate": build}


def round_trip(files: Files) -> list[Path]:
    return [files.seeddata / "stabletoolbench" / "solvable_queries"]


CONFORMANCE = Conformance(
    metric_cases=metric_cases, analysis_examples=EXAMPLES, round_trip=round_trip
)
