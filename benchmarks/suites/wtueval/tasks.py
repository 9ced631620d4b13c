"""WTU-Eval's tasks, one per region of the paper's Figure 2, each composed of its parts
(evaluate.py, native_messages.py). Pure Python.

R1 and R3 answer once without tools: the answer prompt, the reply's final answer, one
completion. R2 and R4 offer the tool pool: the pool stored at launch (prepare), the first
ReAct step as the prompt, the ReAct loop (react) and its native form, a published transcript
read as a whole. What the region's datasets are (select) and whether a tool call is an error
(R4) are the data the shared factories take."""

from __future__ import annotations

from benchmarks.kit.protocol import Native, Task
from benchmarks.suites.wtueval.evaluate import (
    REGION_KIND,
    TASKS,
    answer_once,
    build_answer_prompt,
    build_react_prompt,
    make_aggregate,
    make_score,
    make_select,
    parse_published_transcript,
    parse_reply,
    prepare,
    react,
)
from benchmarks.suites.wtueval.native_messages import native_solve

__all__ = ["EVALUATION"]


def _without_tools(region: str) -> Task:
    return Task(
        TASKS[region],
        prompt=build_answer_prompt,
        parse=parse_reply,
        score=make_score(agent=False),
        aggregate=make_aggregate(agent=False),
        select=make_select(REGION_KIND[region]),
        solve=answer_once,
    )


def _with_tools(region: str, *, tool_errors: bool) -> Task:
    return Task(
        TASKS[region],
        prompt=build_react_prompt,
        parse=parse_published_transcript,
        score=make_score(agent=True),
        aggregate=make_aggregate(agent=True, tool_errors=tool_errors),
        select=make_select(REGION_KIND[region]),
        prepare=prepare,
        solve=react,
        native=Native(solve=native_solve),
    )


EVALUATION: tuple[Task, ...] = (
    _without_tools("R1"),
    _with_tools("R2", tool_errors=False),
    _without_tools("R3"),
    _with_tools("R4", tool_errors=True),
)
