"""WTU-Eval example runs: the fixture questions (two tool datasets, three general ones), each
asked six times and answered by six rules: right without a tool, right after a call, a wrong
answer, the step limit after calls, null content, no answer from the endpoint."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.kit.protocol import Evaluator, Item, Outcome, Scored
from benchmarks.suites import wtueval
from benchmarks.suites.wtueval.evaluate import REGION_KIND, WITH_TOOLS
from tests.benchmarks.analysis_examples import Example, answered, context_for, item_of

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "wtueval" / "questions.jsonl"
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


def example(region: str) -> Callable[[], Example]:
    def build() -> Example:
        bundle = wtueval.import_files([FIXTURE])
        evaluator = Evaluator(wtueval)
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
        return Example(evaluator, ctx, records)

    return build


EXAMPLES = {region: example(region) for region in ("R1", "R2", "R3", "R4")}
