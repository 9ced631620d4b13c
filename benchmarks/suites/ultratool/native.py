"""UltraTool in native tool mode: tool usage awareness, tool selection and tool usage, the
sample's toolset declared as function tools. Pure Python.

The text mode asks for every step of an item in one answer; a function call answers one step,
so a native item is one chat request per step to answer (the steps of the task's gold, as the
text prompt lists them). Each request has the task's system message (prompts/templates.toml
[native]), the question, the whole plan and the step, and declares the toolset the text prompt
shows (evaluate._item_view: the task file's toolset, else the sample's tools; for usage
awareness, whose text prompt shows none, the sample's tools), named and described as
native.declare gives them. The requests do not depend on one another's answers. The answer is
the text mode's normal form, so the task's score reads it unchanged. Each native task's loop is
native_solve bound to its NativeForm (the toolset it declares, how a step's calls become the
step's answer, whether the request names the step's tool):
  - tool_usage_awareness: {"step", "value"}: 1 when the model calls any function (awareness is
    whether it calls one), 0 when it answers without;
  - tool_selection: {"step", "tool"}: the function it calls first;
  - tool_usage: {"step", "tool", "arguments"}: the call of the tool the step names, else the
    first call. A call with arguments that are not a JSON object keeps {} (a wrong call); an
    undeclared name keeps the name the model wrote.
A step answered without a call gives no entry for selection and usage (a wrong step). A call
written in the text instead of tool_calls (native.leaked_calls) is a leaked call: the outcome is
flagged and the written call answers the step (so awareness never credits it as no tool).
variant=reference reads UltraTool's text answers as its evaluation code does; it has no native
form. The trace has one record per step in the shape the run page shows: {"step", "thought"
("Step <n>"), "action" and "arguments" (the first call), "output" (the reply's text), "calls"
(every call read), "error": "leaked_call" for a call written in the text}.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from string import Template
from typing import Any

from benchmarks.kit.native import ToolDeclarations, declare, leaked_calls, read_tool_calls
from benchmarks.kit.protocol import AskNative, Context, Item, Outcome, Prompt, ToolSpec
from benchmarks.suites.ultratool.evaluate import (
    SELECTION_FORM,
    USAGE_AWARENESS_FORM,
    USAGE_FORM,
    Form,
    _item_view,
    _plan_text,
    _templates,
)

__all__ = ["NATIVE", "NATIVE_TASKS", "NativeForm", "native_solve", "native_step_prompts"]


@dataclass(frozen=True, slots=True)
class NativeForm:
    """What a native task's loop reads of the task: its Form (the key of its gold, its
    [native.<name>] table in prompts/templates.toml, its variants), the names of the tools it
    declares, how a step's calls become the step's answer, and whether the step's request names
    the step's tool."""

    form: Form
    toolset: Callable[[Item, Context, Form], list[str]]
    entry: Callable[[Mapping[str, Any], list[dict[str, Any]]], dict[str, Any] | None]
    names_tool: bool = False


def _sample_tools(item: Item, ctx: Context, form: Form) -> list[str]:
    """The sample's tools (usage awareness's text prompt shows none)."""
    return list(dict.fromkeys(item.candidate_tools))


def _shown_tools(item: Item, ctx: Context, form: Form) -> list[str]:
    """The toolset the text prompt shows."""
    return [str(tool["name"]) for tool in _item_view(item, ctx, form).toolset]


def native_step_prompts(
    item: Item, ctx: Context, native: NativeForm
) -> tuple[ToolDeclarations, list[tuple[dict[str, Any], Prompt]]]:
    """The declared toolset and, per gold step to answer, the step and its request."""
    form = native.form
    if form.variant(ctx) == "reference":
        raise ValueError("variant=reference reads text answers: run it with tool_mode=text")
    view = _item_view(item, ctx, form)
    specs = [ctx.tools.get(name) or ToolSpec(name=name) for name in native.toolset(item, ctx, form)]
    declared = declare(specs)
    words = _templates()["native"]
    texts = dict(view.steps)
    requests = []
    for step in view.gold:
        number = str(step["step"])
        user = Template(words["user"]).substitute(
            question=view.question,
            plan=_plan_text(view.steps),
            step=f"{number} {texts.get(number, '')}".strip(),
        )
        if native.names_tool and step.get("tool"):
            user += Template(words[form.name]["tool"]).substitute(tool=step["tool"])
        messages = [
            {"role": "system", "content": words[form.name]["system"]},
            {"role": "user", "content": user},
        ]
        requests.append((step, Prompt(messages=messages, tools=declared.tools)))
    return declared, requests


def _awareness_entry(step: Mapping[str, Any], calls: list[dict[str, Any]]) -> dict[str, Any]:
    """1 when the model calls any function, 0 when it answers without."""
    return {"step": str(step["step"]), "value": int(bool(calls))}


def _selection_entry(step: Mapping[str, Any], calls: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The function called first."""
    return {"step": str(step["step"]), "tool": calls[0]["name"]} if calls else None


def _usage_entry(step: Mapping[str, Any], calls: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The call of the tool the step names, else the first call."""
    if not calls:
        return None
    chosen = next((c for c in calls if c["name"] == step.get("tool")), calls[0])
    return {"step": str(step["step"]), "tool": chosen["name"], "arguments": chosen["arguments"]}


async def native_solve(
    item: Item, ctx: Context, context: dict[str, Any], ask: AskNative, *, native: NativeForm
) -> Outcome:
    """Answer an item's steps with one native request each (see the module docstring)."""
    declared, requests = native_step_prompts(item, ctx, native)
    answer: list[dict[str, Any]] = []
    trace: list[dict[str, Any]] = []
    sent: list[dict[str, Any]] = []
    notes: list[str] = []
    leaked = False
    for step, prompt in requests:
        turn = await ask(prompt)
        sent.extend(turn.tool_calls)
        text = turn.text or ""
        read = read_tool_calls(turn.tool_calls, declared.names)
        calls = read.answer(keep_problems=True)
        notes += [f"step {step['step']}: {problem}" for problem in read.problems]
        if not calls:
            calls = leaked_calls(text, declared.names)
            if calls:
                leaked = True
                notes.append(f"step {step['step']}: a call written in the text, not in tool_calls")
        entry = native.entry(step, calls)
        if entry is not None:
            answer.append(entry)
        # As the run page shows an agent's steps: the step, its (first) call, the reply.
        record: dict[str, Any] = {
            "step": step["step"],
            "thought": f"Step {step['step']}",
            "action": calls[0]["name"] if calls else "",
            "arguments": calls[0]["arguments"] if calls else {},
            "output": text,
            "calls": calls,
        }
        if calls and not len(read):
            record["error"] = "leaked_call"
        trace.append(record)
    return Outcome(
        output=json.dumps(answer, ensure_ascii=False),
        answer=answer,
        trace=trace,
        note="; ".join(notes),
        tool_calls=sent,
        leaked=leaked,
    )


USAGE_AWARENESS_NATIVE = NativeForm(
    USAGE_AWARENESS_FORM, toolset=_sample_tools, entry=_awareness_entry
)
SELECTION_NATIVE = NativeForm(SELECTION_FORM, toolset=_shown_tools, entry=_selection_entry)
USAGE_NATIVE = NativeForm(USAGE_FORM, toolset=_shown_tools, entry=_usage_entry, names_tool=True)

NATIVE: dict[str, NativeForm] = {
    native.form.name: native for native in (USAGE_AWARENESS_NATIVE, SELECTION_NATIVE, USAGE_NATIVE)
}
NATIVE_TASKS = tuple(NATIVE)
