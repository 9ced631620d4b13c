"""What WTU-Eval promises, on its own cases (benchmarks/kit/conformance.py).

Metric cases: outcomes as its ReAct loop leaves them (right, wrong, unreadable, every way of
stopping, failed). Analysis examples: the fixture questions (two tool datasets, three general
ones), each asked six times and answered by six rules: right without a tool, right after a
call, a wrong answer, the step limit after calls, null content, no answer from the endpoint."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from benchmarks.kit.conformance import (
    AnalysisExample,
    Conformance,
    Files,
    MetricCase,
    answered,
    context_for,
    item_of,
    parsed,
)
from benchmarks.kit.protocol import Context, Item, Outcome, Scored
from benchmarks.kit.registry import get_suite
from benchmarks.suites import wtueval
from benchmarks.suites.wtueval.evaluate import REGION_KIND, WITH_TOOLS

# --- metric cases -------------------------------------------------------------------------------


def metric_cases(task: str, files: Files) -> Iterator[MetricCase]:
    suite = get_suite("wtueval").evaluator
    ctx = Context(task=suite.task(task))
    kind = "tool" if task in ("R1", "R2") else "general"
    right, wrong = (139, "139") if kind == "tool" else (True, "true")

    def item(split: str, n: int) -> Item:
        return Item(split, str(n), {"query": "q"}, {"answer": right, "kind": kind})

    if not suite.task(task).agent:
        # two datasets (per-dataset accuracy), right, wrong, unreadable and failed answers
        texts = [f"Final Answer: {wrong}", "Final Answer: 12", "Final Answer:", None]
        yield MetricCase([parsed(suite, ctx, item("ab"[n % 2], n), t) for n, t in enumerate(texts)])
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
    triples: list[tuple[Item, Outcome | None, dict[str, Any]]] = [
        (item("a" if n % 2 else "b", n), o, {}) for n, o in enumerate(outcomes)
    ]
    yield MetricCase(triples)


# --- analysis examples --------------------------------------------------------------------------

RULES = 6


def gold_text(item: Item) -> str:
    answer = item.reference["answer"]
    if isinstance(answer, list):
        answer = answer[0]
    if isinstance(answer, bool):
        return "yes" if answer else "no"
    return str(answer)


def finish(answer: str | None, stop: str = "final_answer") -> dict[str, Any]:
    return {"action": "Finish", "input": answer or "", "stop": stop}


def agent_outcome(rule: int, item: Item) -> Outcome | None:
    call = {"action": "Calculator", "input": "1+1", "observation": "2", "ok": True}
    if rule == 0:
        trace, answer = [finish(gold_text(item))], gold_text(item)
    elif rule == 1:
        trace, answer = [call, finish(gold_text(item))], gold_text(item)
    elif rule == 2:
        trace, answer = [finish("purple")], "purple"
    elif rule == 3:
        trace, answer = [call, {**call, "stop": "step_limit"}], None
    elif rule == 4:
        trace, answer = [{"action": "", "stop": "null_content"}], None
    else:
        return None
    return Outcome(output="", answer=answer, trace=trace)


def text_answer(rule: int, item: Item) -> str | None:
    return {0: gold_text(item), 1: gold_text(item), 2: "purple"}.get(rule % 3) if rule < 5 else None


def example(region: str) -> Callable[[Files], AnalysisExample]:
    def build(files: Files) -> AnalysisExample:
        bundle = wtueval.import_files([files.fixtures / "wtueval" / "questions.jsonl"])
        evaluator = wtueval.SUITE.evaluator
        ctx = context_for(evaluator, region)
        kind = REGION_KIND[region]
        items = [item_of(r) for r in bundle.samples if r.reference["kind"] == kind]
        records: list[Scored] = []
        for index, item in enumerate(items * RULES):
            rule = (index + index // len(items)) % RULES
            if region in WITH_TOOLS:
                outcome = agent_outcome(rule, item)
                records.append(
                    Scored(
                        item=item,
                        outcome=outcome,
                        scores=evaluator.score(outcome, item, ctx, {}),
                        context={},
                        repeat=index // len(items),
                    )
                )
            else:
                records.append(answered(evaluator, ctx, item, text_answer(rule, item)))
        return AnalysisExample(evaluator, ctx, records)

    return build


EXAMPLES = {region: example(region) for region in ("R1", "R2", "R3", "R4")}


def round_trip(files: Files) -> list[Path]:
    return [files.demo / "wtueval" / "questions.jsonl"]


CONFORMANCE = Conformance(
    metric_cases=metric_cases, analysis_examples=EXAMPLES, round_trip=round_trip
)
