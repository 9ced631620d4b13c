"""UltraTool's six tasks, each composed of its own parts (evaluate.py, native.py).

Every task takes the forms of evaluate.py for what its parts read of it (Form: the key of its
gold, its prompt's wording, the options it checks, what variant=reference fixes for it); the
parts themselves differ by what the task asks: a plan (planning), created tools (tool
creation), a 0/1 per step (the awareness tasks), a tool name per step (selection), a call's
arguments per step (usage)."""

from __future__ import annotations

from functools import partial

from benchmarks.kit.protocol import Native, Task
from benchmarks.suites.ultratool.evaluate import (
    CREATION_AWARENESS_FORM,
    CREATION_AWARENESS_READER,
    CREATION_FORM,
    PLANNING_FORM,
    SELECTION_FORM,
    SELECTION_READER,
    TASKS,
    USAGE_AWARENESS_FORM,
    USAGE_AWARENESS_READER,
    USAGE_FORM,
    USAGE_READER,
    aggregate,
    build_prompt,
    parse_created_tools,
    parse_plan,
    parse_steps,
    prepare,
    read_predictions,
    score_accuracy,
    score_created_tools,
    score_plan,
    score_usage,
    select_plans,
    select_steps,
    select_usage,
)
from benchmarks.suites.ultratool.native import (
    SELECTION_NATIVE,
    USAGE_AWARENESS_NATIVE,
    USAGE_NATIVE,
    native_solve,
)

__all__ = ["EVALUATION"]

PLANNING = Task(
    TASKS["planning"],
    prompt=partial(build_prompt, form=PLANNING_FORM),
    parse=parse_plan,
    score=partial(score_plan, form=PLANNING_FORM),
    aggregate=partial(aggregate, form=PLANNING_FORM),
    select=partial(select_plans, form=PLANNING_FORM),
    prepare=partial(prepare, form=PLANNING_FORM),
    read_predictions=partial(read_predictions, "planning"),
)
TOOL_CREATION_AWARENESS = Task(
    TASKS["tool_creation_awareness"],
    prompt=partial(build_prompt, form=CREATION_AWARENESS_FORM),
    parse=partial(parse_steps, form=CREATION_AWARENESS_FORM, reader=CREATION_AWARENESS_READER),
    score=partial(score_accuracy, form=CREATION_AWARENESS_FORM, field="value"),
    aggregate=partial(aggregate, form=CREATION_AWARENESS_FORM),
    select=partial(select_steps, form=CREATION_AWARENESS_FORM),
    prepare=partial(prepare, form=CREATION_AWARENESS_FORM),
    read_predictions=partial(read_predictions, "tool_creation_awareness"),
)
TOOL_CREATION = Task(
    TASKS["tool_creation"],
    prompt=partial(build_prompt, form=CREATION_FORM),
    parse=parse_created_tools,
    score=partial(score_created_tools, form=CREATION_FORM),
    aggregate=partial(aggregate, form=CREATION_FORM),
    select=partial(select_steps, form=CREATION_FORM),
    prepare=partial(prepare, form=CREATION_FORM),
    read_predictions=partial(read_predictions, "tool_creation"),
)
TOOL_USAGE_AWARENESS = Task(
    TASKS["tool_usage_awareness"],
    prompt=partial(build_prompt, form=USAGE_AWARENESS_FORM),
    parse=partial(parse_steps, form=USAGE_AWARENESS_FORM, reader=USAGE_AWARENESS_READER),
    score=partial(score_accuracy, form=USAGE_AWARENESS_FORM, field="value"),
    aggregate=partial(aggregate, form=USAGE_AWARENESS_FORM),
    select=partial(select_steps, form=USAGE_AWARENESS_FORM),
    prepare=partial(prepare, form=USAGE_AWARENESS_FORM),
    read_predictions=partial(read_predictions, "tool_usage_awareness"),
    native=Native(solve=partial(native_solve, native=USAGE_AWARENESS_NATIVE)),
)
TOOL_SELECTION = Task(
    TASKS["tool_selection"],
    prompt=partial(build_prompt, form=SELECTION_FORM),
    parse=partial(parse_steps, form=SELECTION_FORM, reader=SELECTION_READER),
    score=partial(score_accuracy, form=SELECTION_FORM, field="tool"),
    aggregate=partial(aggregate, form=SELECTION_FORM),
    select=partial(select_steps, form=SELECTION_FORM),
    prepare=partial(prepare, form=SELECTION_FORM),
    read_predictions=partial(read_predictions, "tool_selection"),
    native=Native(solve=partial(native_solve, native=SELECTION_NATIVE)),
)
TOOL_USAGE = Task(
    TASKS["tool_usage"],
    prompt=partial(build_prompt, form=USAGE_FORM),
    parse=partial(parse_steps, form=USAGE_FORM, reader=USAGE_READER),
    score=partial(score_usage, form=USAGE_FORM),
    aggregate=partial(aggregate, form=USAGE_FORM),
    select=partial(select_usage, form=USAGE_FORM),
    prepare=partial(prepare, form=USAGE_FORM),
    read_predictions=partial(read_predictions, "tool_usage"),
    native=Native(solve=partial(native_solve, native=USAGE_NATIVE)),
)

EVALUATION: tuple[Task, ...] = (
    PLANNING,
    TOOL_CREATION_AWARENESS,
    TOOL_CREATION,
    TOOL_USAGE_AWARENESS,
    TOOL_SELECTION,
    TOOL_USAGE,
)
