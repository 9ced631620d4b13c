"""MTU-Bench's tasks, one per split, each composed of its parts (evaluate.py,
native_messages.py). Pure Python.

Every task shares the prompt, parse, score and cluster functions and the native form: they read
the rules a turn's question carries (setting_of: OOD mixes all four settings) and its split, so
they need not know the task. What differs by task is data: its metrics and whether it has
dialogue metrics (make_aggregate), and the split whose ids its published outputs carry
(read_predictions)."""

from __future__ import annotations

from functools import partial

from benchmarks.kit.protocol import Native, Task
from benchmarks.suites.mtubench.evaluate import (
    SPLIT_METRICS,
    TASKS,
    build_prompt,
    cluster,
    make_aggregate,
    parse,
    read_predictions,
    score,
)
from benchmarks.suites.mtubench.native_messages import native_answer, native_outcome, native_prompt

__all__ = ["EVALUATION"]

NATIVE = Native(prompt=native_prompt, answer=native_answer, outcome=native_outcome)


def _split_task(split: str, *, dialogues: bool) -> Task:
    """The task that reads `split`; with dialogues, scored per conversation too."""
    return Task(
        TASKS[split],
        prompt=build_prompt,
        parse=parse,
        score=score,
        aggregate=make_aggregate(SPLIT_METRICS[split], dialogues=dialogues),
        cluster=cluster,
        read_predictions=partial(read_predictions, split),
        native=NATIVE,
    )


EVALUATION: tuple[Task, ...] = (
    _split_task("S-S", dialogues=False),
    _split_task("S-M", dialogues=False),
    _split_task("M-S", dialogues=True),
    _split_task("M-M", dialogues=True),
    _split_task("OOD", dialogues=True),
)
