"""BFCL's tasks, each composed of its parts: one per single-turn AST category (evaluate.py), all
with the same parts, since what differs between categories (the checker's shape, the
declarations' language) is read from each item; one per multi-turn category (conversation.py),
all with the same parts too (what differs, held-out functions or the long context, is in each
entry); and one per memory backend the platform runs (agentic.py: memory_kv, memory_rec_sum,
both reading the `memory` entries; the backend is the task's); and one per web search category
(web_search.py: web_search_base, web_search_no_snippet, both reading the `web_search` entries,
their functions served by the virtual API server: not comparable with BFCL's published scores).
memory_vector has no task: agentic.NOT_RUN says why. Pure Python."""

from __future__ import annotations

from functools import partial

from benchmarks.kit.protocol import Native, Task
from benchmarks.suites.bfcl import agentic, conversation, regold, web_search
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
CONVERSATION_NATIVE = Native(solve=conversation.native_converse)

AST: tuple[Task, ...] = tuple(
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

MULTI_TURN: tuple[Task, ...] = tuple(
    Task(
        conversation.TASKS[category],
        prompt=conversation.opening_prompt,
        parse=conversation.parse_text,
        score=regold.score_entry,
        aggregate=conversation.aggregate_entries,
        prepare=regold.prepare_entries,
        solve=conversation.text_converse,
        mean_metrics=conversation.mean_entry_metrics,
        native=CONVERSATION_NATIVE,
    )
    for category in conversation.MULTI_TURN_CATEGORIES
)

MEMORY: tuple[Task, ...] = tuple(
    Task(
        agentic.TASKS[category],
        prompt=partial(agentic.opening_prompt, backend=backend),
        parse=agentic.parse_text,
        score=agentic.score_memory,
        aggregate=agentic.aggregate_memory,
        prepare=partial(agentic.prepare_memory, backend=backend),
        solve=partial(agentic.text_memory, backend=backend),
        mean_metrics=agentic.mean_memory_metrics,
        native=Native(solve=partial(agentic.native_memory, backend=backend)),
    )
    for category, backend in agentic.BACKENDS.items()
)

WEB_SEARCH: tuple[Task, ...] = tuple(
    Task(
        web_search.TASKS[category],
        prompt=web_search.opening_prompt,
        parse=web_search.parse_text,
        score=agentic.score_memory,
        aggregate=agentic.aggregate_memory,
        prepare=partial(web_search.prepare_search, show_snippet=show),
        solve=partial(web_search.text_search, show_snippet=show),
        mean_metrics=agentic.mean_memory_metrics,
        native=Native(solve=partial(web_search.native_search, show_snippet=show)),
    )
    for category, show in web_search.SHOW_SNIPPET.items()
)

EVALUATION: tuple[Task, ...] = AST + MULTI_TURN + MEMORY + WEB_SEARCH
