"""MetaTool in native tool mode: the candidate list as tools, the model's choice as its calls.
Pure Python.

The request (`*_native_prompt`, one per kind of task): a system message saying what to do, the
user's query as the user message, and the item's candidate tools declared as function tools
without parameters (native.py's declare_tools; descriptions from the benchmark's tool
documents), in the order the text prompt lists them. The reply is read by `*_native_outcome`.

- Selection (similar, scenario, reliability, multi_tool): "call the tool that solves the query,
  or none when no tool fits" (multi_tool: the two tools; variant multi-choice: at most two). The
  answer is the distinct tools called, in order: what the text rule's answer is (a list of
  names, [] for "None"); a reply without calls chose no tool.
- Awareness: whether the model calls any tool. The text task lists no tools, so a native run
  offers each query a candidate list drawn at launch (`evaluate.native_candidates`, stored
  with the item):
  the gold tool for a query that needs one, and n - 1 other tools of the pool (option n, 10),
  drawn with the run's seed; a query that needs none gets n tools of the pool. The answer is
  True when it calls one, False when it answers in text.

A call written into the text instead of tool_calls is a leaked call (protocol.read_native_reply):
its tools are the answer, so a leaked choice never counts as "no tool". Native prompts are
zero-shot: the published five-shot examples are text answers (launching with shots=5 is
refused, as for every native run).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchmarks.kit.protocol import (
    Context,
    Item,
    NativePrompt,
    NativeReply,
    Outcome,
    Prompt,
    ToolSpec,
    read_native_reply,
)
from benchmarks.suites.metatool.evaluate import _candidates, _check, _check_multi_tool, _variant
from benchmarks.suites.metatool.native import declare_tools

__all__ = [
    "NATIVE_INSTRUCTIONS",
    "awareness_native_outcome",
    "awareness_native_prompt",
    "multi_tool_native_outcome",
    "multi_tool_native_prompt",
    "selection_native_outcome",
    "single_tool_native_prompt",
]

NATIVE_INSTRUCTIONS = {
    "awareness": "If one of the tools you are given is needed to answer the user's query, call "
    "it. If you can answer without a tool, answer in text and call none.",
    "single": "Call the one tool you are given that best solves the user's query. If none of "
    "them fits, call no tool and say so.",
    "one-choice": "The user's query needs two of the tools you are given: call those two.",
    "multi-choice": "Call the tools you are given that solve the user's query, at most two. If "
    "none of them fits, call no tool and say so.",
}


def _request(item: Item, ctx: Context, context: dict[str, Any], instructions: str) -> NativePrompt:
    """The system message `instructions`, the query, and the item's candidates as tools."""
    if ctx.shots:
        raise ValueError("native MetaTool prompts are zero-shot; run with shots=0")
    candidates = _candidates(item, context)
    declared = declare_tools([ctx.tools.get(name) or ToolSpec(name) for name in candidates])
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": instructions},
        {"role": "user", "content": str(item.input.get("query", ""))},
    ]
    return NativePrompt(Prompt(messages=messages, tools=declared.tools), declared.names)


def awareness_native_prompt(item: Item, ctx: Context, context: dict[str, Any]) -> NativePrompt:
    """Awareness: call a tool if one is needed (the candidates native_candidates drew)."""
    _check(ctx)
    return _request(item, ctx, context, NATIVE_INSTRUCTIONS["awareness"])


def single_tool_native_prompt(item: Item, ctx: Context, context: dict[str, Any]) -> NativePrompt:
    """Single-tool selection: call the one tool that solves the query, or none."""
    _check(ctx)
    return _request(item, ctx, context, NATIVE_INSTRUCTIONS["single"])


def multi_tool_native_prompt(item: Item, ctx: Context, context: dict[str, Any]) -> NativePrompt:
    """Multi-tool selection: the instructions of the run's variant."""
    _check_multi_tool(ctx)
    return _request(item, ctx, context, NATIVE_INSTRUCTIONS[str(_variant(ctx))])


def _read(reply: NativeReply, answer: Callable[[list[dict[str, Any]]], Any]) -> Outcome:
    """The reply read with `answer` (of the distinct tools called, in order); a reply without
    calls is answer([]), "no tool called"."""
    no_call = answer([])
    return read_native_reply(
        reply,
        answer,
        lambda text: Outcome(output=text, answer=no_call, note="no tool called"),
        lambda chosen: bool(chosen),
    )


def _called(calls: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(str(call["name"]) for call in calls))


def awareness_native_outcome(
    reply: NativeReply, item: Item, ctx: Context, context: dict[str, Any]
) -> Outcome:
    """Awareness: True when the model called a tool."""
    _check(ctx)
    return _read(reply, lambda calls: bool(_called(calls)))


def selection_native_outcome(
    reply: NativeReply, item: Item, ctx: Context, context: dict[str, Any]
) -> Outcome:
    """Selection: the tools called, as the text rule's answer is."""
    _check(ctx)
    return _read(reply, _called)


def multi_tool_native_outcome(
    reply: NativeReply, item: Item, ctx: Context, context: dict[str, Any]
) -> Outcome:
    """Multi-tool selection: the tools called (the run's options checked as multi_tool's)."""
    _check_multi_tool(ctx)
    return _read(reply, _called)
