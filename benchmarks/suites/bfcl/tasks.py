"""BFCL's tasks, each composed of its parts (evaluate.py): one per single-turn AST category, all
with the same parts, since what differs between categories (the checker's shape, the
declarations' language) is read from each item. Pure Python."""

from __future__ import annotations

from benchmarks.kit.protocol import Native, Task
from benchmarks.suites.bfcl.evaluate import (
    AST_CATEGORIES,
    TASKS,
    aggregate,
    mean_metrics,
    native_outcome,
    native_prompt,
    parse_answer,
    prompt_mode,
    score_answer,
)

__all__ = ["EVALUATION"]

NATIVE = Native(prompt=native_prompt, outcome=native_outcome)

EVALUATION: tuple[Task, ...] = tuple(
    Task(
        TASKS[category],
        prompt=prompt_mode,
        parse=parse_answer,
        score=score_answer,
        aggregate=aggregate,
        mean_metrics=mean_metrics,
        native=NATIVE,
    )
    for category in AST_CATEGORIES
)
