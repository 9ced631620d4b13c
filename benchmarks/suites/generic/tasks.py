"""The generic suite's tasks, each composed of its own parts (evaluate.py, native.py): what an
item becomes as a prompt, how a model's text is read and scored. Pure Python."""

from __future__ import annotations

from benchmarks.kit.predictions import read_generic_predictions
from benchmarks.kit.protocol import Native, Task
from benchmarks.suites.generic.evaluate import (
    TASKS,
    aggregate,
    make_prompt,
    mean_metrics,
    parse_answer,
    parse_tool_calls,
    score_answer,
    score_tool_calls,
    select_answer,
    select_tool_calls,
)
from benchmarks.suites.generic.native import native_answer, native_outcome, native_prompt

__all__ = ["EVALUATION"]

# The answer's stop ends the reply at its one line; the calls' at the blank line or the next
# block a model writes after its JSON object.
ANSWER = Task(
    TASKS["answer"],
    prompt=make_prompt("answer", show_tools=False, stop=("\n",)),
    parse=parse_answer,
    score=score_answer,
    aggregate=aggregate,
    select=select_answer,
    mean_metrics=mean_metrics,
    read_predictions=read_generic_predictions,
)

TOOL_CALLS = Task(
    TASKS["tool_calls"],
    prompt=make_prompt("tool_calls", show_tools=True, stop=("\n\n", "\n###")),
    parse=parse_tool_calls,
    score=score_tool_calls,
    aggregate=aggregate,
    select=select_tool_calls,
    mean_metrics=mean_metrics,
    read_predictions=read_generic_predictions,
    native=Native(prompt=native_prompt, answer=native_answer, outcome=native_outcome),
)

EVALUATION: tuple[Task, ...] = (ANSWER, TOOL_CALLS)
