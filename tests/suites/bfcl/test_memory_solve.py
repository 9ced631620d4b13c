"""The memory tasks' solve loop on the demo scenario (benchmarks/demo/bfcl/: two prerequisite
entries of 2 and 1 turns, three questions), with BFCL's kv backend from the pinned wheel: BFCL's
step limit in a question (no final answer: the question fails) and in a prerequisite entry
(the entry stops there, its memory is still written and the next entry starts from it, as
BFCL's handler flushes after a forced quit). Skipped, saying why, when the wheel cannot be had."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from benchmarks.kit.conformance import imported
from benchmarks.kit.protocol import Context, Item, Outcome, Prompt
from benchmarks.suites import bfcl
from benchmarks.suites.bfcl import agentic
from tests.suites.bfcl.real_wheel import real_wheel  # noqa: F401 - a fixture

DEMO = Path(__file__).resolve().parents[3] / "benchmarks" / "demo" / "bfcl"
EMPTY = "There is no content in the core memory at this point."


def _solve(item: Item, model: Any) -> Outcome:
    evaluator = bfcl.SUITE.evaluator
    ctx = Context(task=evaluator.task("memory_kv"), options={"tool_mode": "text"})
    context = evaluator.prepare([item], ctx)[0]
    outcome = asyncio.run(evaluator.solve(item, ctx, context, model))
    assert outcome is not None
    return outcome


def _dentist() -> Item:
    items, _ = imported(bfcl.SUITE.import_files, [DEMO / "BFCL_v4_memory.json"])
    return next(item for item in items if item.external_id == "memory_demo_0-notetaker-0")


def _is_question(prompt: Prompt) -> bool:
    return agentic.answer_format() in str(prompt.messages[0]["content"])


def test_a_question_the_model_never_stops_calling_in_fails(real_wheel: Path) -> None:  # noqa: F811
    asked: list[Prompt] = []

    async def model(prompt: Prompt) -> str:
        asked.append(prompt)
        return "[core_memory_list_keys()]" if _is_question(prompt) else "Thanks."

    outcome = _solve(_dentist(), model)
    assert outcome.answer is not None
    answer = outcome.answer
    assert answer["passed"] is False
    assert answer["final_answer"] is None
    assert answer["reason"] == (
        "no final answer: the model was forced to quit after 20 steps in turn 0"
    )
    assert len(answer["calls"]) == 21  # 21 steps that called something; the 21st ends it
    assert len(asked) == 3 + 21  # the prerequisite turns (2 + 1), then the question's steps
    assert asked[3].messages[-1] == {"role": "user", "content": "When is my dentist appointment?"}
    assert bfcl.SUITE.evaluator.score(
        outcome, _dentist(), Context(task=agentic.TASKS["memory_kv"]), {}
    ) == {"accuracy": 0.0}


def test_a_prerequisite_entry_forced_to_quit_still_leaves_its_memory(
    real_wheel: Path,  # noqa: F811
) -> None:
    asked: list[Prompt] = []

    async def model(prompt: Prompt) -> str:
        asked.append(prompt)
        if _is_question(prompt):
            return "{'answer': 'I do not know', 'context': 'I do not know'}"
        if EMPTY in str(prompt.messages[0]["content"]):  # entry 0: store, again and again
            return f"[core_memory_add(key='note_{len(asked)}', value='fact {len(asked)}')]"
        return "Thanks."

    outcome = _solve(_dentist(), model)
    assert outcome.answer is not None
    answer = outcome.answer
    first, second = answer["prereq"]
    # entry 0 quit in its turn 0 after 21 steps; its turn 1 was never asked
    assert first["force_quit"] is True and len(first["turns"]) == 1
    assert len(first["turns"][0]) == 21
    assert second["force_quit"] is False
    # the core memory holds 7 entries at most (BFCL's MAX_CORE_MEMORY_SIZE): the first 7 adds
    assert answer["memory"]["core_memory"] == {f"note_{n}": f"fact {n}" for n in range(1, 8)}
    full = [row for row in outcome.trace if "Core memory is full" in str(row.get("observation"))]
    assert len(full) == 21 - 7
    quit_rows = [row for row in outcome.trace if "error" in row]
    assert quit_rows[0]["entry"] == "memory_kv_prereq_demo_0-notetaker-0"
    # entry 1 and the question were shown entry 0's memory
    entry_one, question = asked[21], asked[22]
    for prompt in (entry_one, question):
        assert '"note_7": "fact 7"' in str(prompt.messages[0]["content"])
    assert len(asked) == 21 + 1 + 1
    assert answer["passed"] is False
    assert answer["reason"] == "none of the accepted answers is in the final answer"
