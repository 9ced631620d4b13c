"""MetaTool's five tasks, each composed of its own parts (evaluate.py, native_messages.py).

Awareness asks yes or no and reads the answer with the paper's rules. The four selection tasks
share the answer matching of a single tool (similar, scenario, reliability) or of a pair
(multi_tool); they differ by the items they take, the candidate list prepare() fixes for each
(built around the gold tool's nearest, a scenario's fixed list, away from the gold tool, around
the gold pair) and what an item's choice is compared with (the gold tool, "None", the pair)."""

from __future__ import annotations

from benchmarks.kit.protocol import Native, Task
from benchmarks.suites.metatool.evaluate import (
    TASKS,
    aggregate_awareness,
    aggregate_csr,
    aggregate_pair,
    aggregate_similar,
    awareness_prompt,
    multi_tool_prompt,
    parse_awareness,
    parse_pair,
    parse_single,
    prepare_awareness,
    prepare_multi_tool,
    prepare_reliability,
    prepare_scenario,
    prepare_similar,
    score_awareness,
    score_gold_tool,
    score_no_tool,
    score_pair,
    score_similar,
    select_awareness,
    select_multi_tool,
    select_reliability,
    select_scenario,
    select_similar,
    single_tool_prompt,
)
from benchmarks.suites.metatool.native_messages import (
    awareness_native_outcome,
    awareness_native_prompt,
    multi_tool_native_outcome,
    multi_tool_native_prompt,
    selection_native_outcome,
    single_tool_native_prompt,
)

__all__ = ["EVALUATION"]

AWARENESS = Task(
    TASKS["awareness"],
    prompt=awareness_prompt,
    parse=parse_awareness,
    score=score_awareness,
    aggregate=aggregate_awareness,
    select=select_awareness,
    prepare=prepare_awareness,
    native=Native(prompt=awareness_native_prompt, outcome=awareness_native_outcome),
)
SIMILAR = Task(
    TASKS["similar"],
    prompt=single_tool_prompt,
    parse=parse_single,
    score=score_similar,
    aggregate=aggregate_similar,
    select=select_similar,
    prepare=prepare_similar,
    native=Native(prompt=single_tool_native_prompt, outcome=selection_native_outcome),
)
SCENARIO = Task(
    TASKS["scenario"],
    prompt=single_tool_prompt,
    parse=parse_single,
    score=score_gold_tool,
    aggregate=aggregate_csr,
    select=select_scenario,
    prepare=prepare_scenario,
    native=Native(prompt=single_tool_native_prompt, outcome=selection_native_outcome),
)
RELIABILITY = Task(
    TASKS["reliability"],
    prompt=single_tool_prompt,
    parse=parse_single,
    score=score_no_tool,
    aggregate=aggregate_csr,
    select=select_reliability,
    prepare=prepare_reliability,
    native=Native(prompt=single_tool_native_prompt, outcome=selection_native_outcome),
)
MULTI_TOOL = Task(
    TASKS["multi_tool"],
    prompt=multi_tool_prompt,
    parse=parse_pair,
    score=score_pair,
    aggregate=aggregate_pair,
    select=select_multi_tool,
    prepare=prepare_multi_tool,
    native=Native(prompt=multi_tool_native_prompt, outcome=multi_tool_native_outcome),
)

EVALUATION: tuple[Task, ...] = (AWARENESS, SIMILAR, SCENARIO, RELIABILITY, MULTI_TOOL)
