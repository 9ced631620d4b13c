"""What the BFCL suite promises, on its own cases (benchmarks/kit/conformance.py).

Metric cases: the demo entries (benchmarks/demo/bfcl/, ours, in BFCL's format) of each task's
category, in text mode and in native mode. AST tasks: answered with their gold
(evaluate.gold_text and gold_tool_calls), with a wrong call, with text that decodes to nothing,
with nothing, and not at all (a failed call). Multi-turn tasks: each entry's conversation run
through the task's own solve loop (its calls executed with BFCL's classes from the pinned wheel)
by a model that replays the ground truth (conversation.gold_steps), by one that makes a wrong
call in every turn, by one that never calls anything, and not at all (a failed call). Memory
tasks: the demo's memory entries through the task's solve loop (memory_cases). The wheel
is the one in .data/bfcl/, else downloaded there (as `manage.py fetch_bfcl` does); when it
cannot be had the multi-turn and memory cases are skipped (unittest.SkipTest) saying why. Analysis
examples: per AST task, its demo entries answered wrongly in several ways (and one failed call);
per multi-turn task, every multi-turn demo entry conversed by the three scripted models and one
failed call (the wheel needed, as above). Round trip: the demo's category files, written back by
exporter.py and read again, give the same samples and tools; each sample's metadata
"provenance" (BFCL's version and the hashes of the files read) is the written files' own
(tests/suites/bfcl/test_exporter.py covers every category family and the real wheel)."""

from __future__ import annotations

import asyncio
import unittest
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.kit.conformance import (
    AnalysisExample,
    Conformance,
    Files,
    MetricCase,
    Triple,
    answered,
    context_for,
    imported,
    parsed,
)
from benchmarks.kit.native import read_tool_calls
from benchmarks.kit.protocol import (
    Context,
    Item,
    NativeReply,
    Outcome,
    Prompt,
    Scored,
    Tool,
    ToolUnavailable,
)
from benchmarks.suites import bfcl
from benchmarks.suites.bfcl import agentic, conversation, web_search
from benchmarks.suites.bfcl.decode import Call
from benchmarks.suites.bfcl.wheel import DEFAULT_DIR, WheelError, fetch_wheel


def _demo_files(files: Files) -> list[Path]:
    folder = files.demo / "bfcl"
    return sorted(folder.glob("BFCL_v4_*.json"))


WRONG_TEXT = '[no_such_function(x="wrong")]'
WRONG_CALL = [
    {
        "id": "call_1",
        "type": "function",
        "function": {"name": "no_such_function", "arguments": '{"x": "wrong"}'},
    }
]


def metric_cases(task: str, files: Files) -> Iterator[MetricCase]:
    if task in conversation.TASKS:
        yield from conversation_cases(task, files)
        return
    if task in agentic.TASKS:
        yield from memory_cases(task, files)
        return
    if task in web_search.TASKS:
        yield from web_search_cases(task, files)
        return
    evaluator = bfcl.SUITE.evaluator
    items, tools = imported(bfcl.SUITE.import_files, _demo_files(files))
    chosen = [item for item in items if item.split == task]
    assert chosen, f"the BFCL demo has no entry of {task}"
    for mode in ("text", "native"):
        ctx = Context(task=evaluator.task(task), options={"tool_mode": mode}, tools=tools)
        triples: list[Triple] = []
        for item in chosen:
            if mode == "text":
                for text in (bfcl.gold_text(item), WRONG_TEXT, "}{ not calls", "", None):
                    triples.append(parsed(evaluator, ctx, item, text))
                continue
            native = evaluator.native_prompt(item, ctx, {})
            for tool_calls, text in (
                (bfcl.gold_tool_calls(item), ""),
                (WRONG_CALL, ""),
                ([], "I would rather answer in words."),
                ([], ""),
            ):
                reply = NativeReply(
                    text, tool_calls, read_tool_calls(tool_calls, native.names), native.names
                )
                triples.append((item, evaluator.native_outcome(reply, item, ctx, {}), {}))
            triples.append((item, None, {}))
        yield MetricCase(triples, {"tool_mode": mode})


# --- multi-turn ---------------------------------------------------------------------------------

Script = list[list[list[Call]]]  # per turn, per step, the calls the model answers with


def have_wheel() -> Path:
    """The pinned wheel the multi-turn tasks execute calls with: in .data/bfcl/, else downloaded
    there; unittest.SkipTest (a skip for the test runner) when it cannot be had."""
    try:
        return fetch_wheel(conversation.ROOT / DEFAULT_DIR)
    except WheelError as exc:
        raise unittest.SkipTest(f"the bfcl-eval wheel cannot be had: {exc}") from None


def wrong_script(item: Item) -> Script:
    """A model that, in every turn, makes a call the ground truth never makes (a folder nobody
    asked for, or an unknown function), then stops."""
    wrong = (
        Call("mkdir", {"dir_name": "not_asked_for"})
        if "GorillaFileSystem" in item.metadata.get("involved_classes", ())
        else Call("no_such_function", {"x": "wrong"})
    )
    return [[[wrong], []] for _ in conversation.gold_steps(item)]


def silent_script(item: Item) -> Script:
    """A model that never calls anything."""
    return [[[]] for _ in conversation.gold_steps(item)]


@dataclass
class ScriptedModel:
    """Answers each request with the next step of its script (flattened in order), in text
    mode as Prompt mode's `[f(a=1)]`, in native mode as tool_calls; nothing when it has run
    out. `requests` keeps what it was asked."""

    script: Script
    steps: list[list[Call]] = field(default_factory=list)
    requests: list[Prompt] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.steps = [step for turn in self.script for step in turn]

    def _next(self, prompt: Prompt) -> list[Call]:
        self.requests.append(prompt)
        return self.steps.pop(0) if self.steps else []

    async def complete(self, prompt: Prompt) -> str:
        return conversation.gold_text_of(self._next(prompt))

    async def ask(self, prompt: Prompt) -> _Turn:
        number = len(self.requests)
        calls = self._next(prompt)
        return _Turn("", conversation.gold_tool_calls_of(calls, number))


@dataclass
class _Turn:
    text: str
    tool_calls: list[dict[str, Any]]


def converse(item: Item, ctx: Context, script: Script) -> Outcome:
    """The item's conversation through the task's solve loop in the run's mode, the model
    answering with `script`."""
    evaluator = bfcl.SUITE.evaluator
    model = ScriptedModel(script)
    context = evaluator.prepare([item], ctx)[0]
    if ctx.option("tool_mode") == "native":
        return asyncio.run(evaluator.native_solve(item, ctx, context, model.ask))
    return asyncio.run(evaluator.solve(item, ctx, context, model.complete))


def conversation_cases(task: str, files: Files) -> Iterator[MetricCase]:
    have_wheel()
    evaluator = bfcl.SUITE.evaluator
    items, tools = imported(bfcl.SUITE.import_files, _demo_files(files))
    chosen: Sequence[Item] = [item for item in items if item.split == task]
    assert chosen, f"the BFCL demo has no entry of {task}"
    scripts: tuple[Callable[[Item], Script], ...] = (
        conversation.gold_steps,
        wrong_script,
        silent_script,
    )
    for mode in ("text", "native"):
        ctx = Context(task=evaluator.task(task), options={"tool_mode": mode}, tools=tools)
        triples: list[Triple] = []
        for item in chosen:
            for script in scripts:
                triples.append((item, converse(item, ctx, script(item)), {}))
            triples.append((item, None, {}))
        yield MetricCase(triples, {"tool_mode": mode})


# --- memory -------------------------------------------------------------------------------------


@dataclass
class Answerer:
    """Says `prereq` to every prerequisite turn and `final` to the question (a question is
    the entry whose system prompt asks for BFCL's answer format), never calling anything."""

    final: str
    prereq: str = "Thanks, noted."

    def _text(self, prompt: Prompt) -> str:
        system = str(prompt.messages[0].get("content", "")) if prompt.messages else ""
        return self.final if agentic.answer_format() in system else self.prereq

    async def complete(self, prompt: Prompt) -> str:
        return self._text(prompt)

    async def ask(self, prompt: Prompt) -> _Turn:
        return _Turn(self._text(prompt), [])


def memory_cases(task: str, files: Files) -> Iterator[MetricCase]:
    """The demo's memory entries run through the task's solve loop (the backend from the
    pinned wheel), answered with the first accepted answer, with "I do not know", and not at
    all (a failed call)."""
    have_wheel()
    yield from _final_answer_cases(task, files, "memory", "memory", None)


async def _not_served(arguments: dict[str, Any]) -> str:
    raise ToolUnavailable("the cases never call a function")


def web_search_cases(task: str, files: Files) -> Iterator[MetricCase]:
    """The demo's web search entries run through the task's solve loop, answered at once (no
    call) with the first accepted answer, with "I do not know", and not at all (a failed
    call). The functions are named as served (prepare checks them) but never called."""
    yield from _final_answer_cases(task, files, "web_search", "searched", _not_served)


def _final_answer_cases(
    task: str, files: Files, split: str, said_context: str, unserved: Any
) -> Iterator[MetricCase]:
    """The demo's entries of `split` through the task's solve loop in each mode, answered at
    once in BFCL's answer format ({'answer': ..., 'context': said_context}) with the first
    accepted answer, with "I do not know", and not at all. `unserved`: where given, the
    toolbox serves the web search functions with it."""
    evaluator = bfcl.SUITE.evaluator
    items, tools = imported(bfcl.SUITE.import_files, _demo_files(files))
    chosen = [item for item in items if item.split == split]
    assert chosen, f"the BFCL demo has no {split} entry"
    for mode in ("text", "native"):
        ctx = Context(task=evaluator.task(task), options={"tool_mode": mode}, tools=tools)
        if unserved is not None:
            ctx.toolbox = {name: Tool(tools[name], unserved) for name in web_search.FUNCTIONS}
        triples: list[Triple] = []
        for item in chosen:
            context = evaluator.prepare([item], ctx)[0]
            for said in (agentic.accepted_answers(item)[0], "I do not know"):
                model = Answerer(repr({"answer": said, "context": said_context}))
                if mode == "native":
                    outcome = asyncio.run(evaluator.native_solve(item, ctx, context, model.ask))
                else:
                    outcome = asyncio.run(evaluator.solve(item, ctx, context, model.complete))
                triples.append((item, outcome, context))
            triples.append((item, None, context))
        yield MetricCase(triples, {"tool_mode": mode})


def _example(task: str, files: Files) -> AnalysisExample:
    evaluator = bfcl.SUITE.evaluator
    ctx = context_for(evaluator, task)
    items, _ = imported(bfcl.SUITE.import_files, _demo_files(files))
    records = []
    for item in (item for item in items if item.split == task):
        for text in (bfcl.gold_text(item), WRONG_TEXT, "}{ not calls", "", None):
            records.append(answered(evaluator, ctx, item, text))
    return AnalysisExample(evaluator, ctx, records)


_CONVERSED: dict[Path, list[Scored]] = {}


def _conversation_example(task: str, files: Files) -> AnalysisExample:
    """Every multi-turn demo entry (of all four categories, so that a task's example involves
    several classes), conversed in text mode by the replaying, the wrong and the silent model,
    and not at all (a failed call); conversed once for all four tasks."""
    have_wheel()
    evaluator = bfcl.SUITE.evaluator
    ctx = context_for(evaluator, task)
    if files.demo not in _CONVERSED:
        items, _ = imported(bfcl.SUITE.import_files, _demo_files(files))
        records: list[Scored] = []
        for item in (item for item in items if item.split in conversation.TASKS):
            spoken = context_for(evaluator, item.split)
            scripts = (conversation.gold_steps, wrong_script, silent_script)
            for outcome in [converse(item, spoken, script(item)) for script in scripts] + [None]:
                scores = evaluator.score(outcome, item, spoken, {})
                records.append(Scored(item=item, outcome=outcome, scores=scores))
        _CONVERSED[files.demo] = records
    return AnalysisExample(evaluator, ctx, list(_CONVERSED[files.demo]))


def _examples() -> dict[str, Callable[[Files], AnalysisExample]]:
    return {
        **{task: partial(_example, task) for task in bfcl.AST_CATEGORIES},
        **{task: partial(_conversation_example, task) for task in conversation.TASKS},
    }


def round_trip(files: Files) -> list[Path]:
    return _demo_files(files)


CONFORMANCE = Conformance(
    metric_cases=metric_cases,
    analysis_examples=_examples(),
    round_trip=round_trip,
    not_carried=("provenance",),
)
