"""StableToolBench's agent in native tool mode: the query's tools and `Finish` declared as
function tools, as ToolBench's function-calling runner does. Pure Python.

Each step is one chat request: a system message (prompts/agent.toml [native]), the query as the
user message, then every earlier step: the assistant message as the server sent it (its text and
`tool_calls`) and one `tool` message per call with its observation. The tools are the text
agent's (agent.offered_tools), declared under ToolBench's function names (native.declare_tools),
with native.finish_tool() last. The model's calls go to the virtual API server exactly as the text
agent's actions do (agent._run_tool: the server's "source" kept for the trace, not shown), and the
text agent's rules hold: at most max_steps model calls, observations cut at
max_observation_chars, an identical call asked more than max_same_call times ends the attempt
(repeated_call), a second unknown function name in a row ends it (invalid_action), a reply
without tool_calls gets one reminder on the first step and ends the attempt later (no_action).
Finish's arguments are read as the text agent reads its Action Input (agent._read_finish, so a
malformed Finish with a readable final_answer still answers); give_answer ends with the answer,
give_up_and_restart gives up, anything else is answered with the Finish reminder. A tool call
with arguments that are not a JSON object is not run: its observation says so.

Several tool_calls in one reply run in order, one trace step each (the step's thought and output
on the first). A call written in the text instead of tool_calls (native.leaked_calls) is not run:
the outcome is flagged `leaked` and the step counts as a reply without a call.

The trace has the text agent's steps ({"thought", "action" (the name declared), "arguments",
"observation", "output", "source", "ok"}, "tool" (the key) for a call of an offered tool, "tools"
on the first, "stop" on the last), and the output is ToolBench's answer object (method
NATIVE_METHOD), so the run page, the answer record and the pass-rate judges read it unchanged.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from benchmarks.suites.native import NativeCall, ToolDeclarations, leaked_calls, read_tool_calls
from benchmarks.suites.protocol import AskNative, Context, Item, Outcome, Prompt
from benchmarks.suites.stabletoolbench.agent import (
    MAX_INVALID_IN_A_ROW,
    STOP_FINAL,
    STOP_GIVE_UP,
    STOP_INVALID,
    STOP_LIMIT,
    STOP_NO_ACTION,
    STOP_REPEAT,
    _cut,
    _fill,
    _option,
    _read_finish,
    _run_tool,
    _spec,
    _templates,
    offered_tools,
)
from benchmarks.suites.stabletoolbench.evaluate import FINISH, answer_record_for
from benchmarks.suites.stabletoolbench.native import declare_tools, finish_tool

__all__ = ["NATIVE_METHOD", "native_solve"]

# ToolBench's name for one chain of function calls (its function-calling runner, CoT@1).
NATIVE_METHOD = "CoT@1"


def declarations(item: Item, ctx: Context, context: dict[str, Any]) -> ToolDeclarations:
    """The query's tools, then Finish, as function tools."""
    keys = offered_tools(item, ctx, context)
    return declare_tools([*(_spec(ctx, key) for key in keys), finish_tool()])


def _step(text: str, first: bool, tools: list[str]) -> dict[str, Any]:
    step: dict[str, Any] = {
        "thought": text.strip(),
        "action": "",
        "arguments": {},
        "observation": "",
        "output": text,
        "source": "",
        "ok": False,
    }
    if first:
        step["tools"] = tools
    return step


class _Attempt:
    """One query's loop state: the text agent's counters and the trace."""

    def __init__(self, ctx: Context, tools: list[str]) -> None:
        self.ctx = ctx
        self.tools = tools
        self.max_same = max(1, _option(ctx, "max_same_call"))
        self.limit = _option(ctx, "max_observation_chars")
        self.trace: list[dict[str, Any]] = []
        self.calls: Counter[tuple[str, str]] = Counter()
        self.invalid = 0
        self.stop = STOP_LIMIT
        self.answer: str | None = None
        self.why = ""

    def end(self, stop: str, why: str = "", answer: str | None = None) -> bool:
        self.stop, self.why, self.answer = stop, why, answer
        return True

    async def run(self, call: NativeCall, step: dict[str, Any]) -> tuple[str, bool]:
        """(the observation for the tool message, whether the attempt ends) of one call."""
        words = _templates()["observation"]
        if call.name is None:
            self.invalid += 1
            step["action"] = call.api_name
            step["observation"] = _fill(
                words["unknown_tool"], action=call.api_name, tool_names=", ".join(self.tools)
            )
            if self.invalid >= MAX_INVALID_IN_A_ROW:
                return step["observation"], self.end(
                    STOP_INVALID, f"unknown tool {call.api_name!r} after a reminder"
                )
            return step["observation"], False
        self.invalid = 0
        step["action"] = call.api_name
        if call.name == FINISH:
            kind, final, arguments = _read_finish(call.raw_arguments)
            step["arguments"] = arguments
            if kind == "answer":
                step["ok"] = True
                return "", self.end(STOP_FINAL, answer=final)
            if kind == "give_up":
                step["ok"] = True
                return "", self.end(STOP_GIVE_UP, "Finish with give_up_and_restart")
            step["observation"] = words["finish_incomplete"]
            return step["observation"], False
        step["tool"] = call.name
        if call.arguments is None:
            step["observation"] = _fill(
                _templates()["native"]["bad_arguments"], action=call.api_name, problem=call.problem
            )
            return step["observation"], False
        step["arguments"] = call.arguments
        key = (call.name, json.dumps(call.arguments, sort_keys=True, ensure_ascii=False))
        self.calls[key] += 1
        if self.calls[key] > self.max_same:
            step["observation"] = _fill(
                words["repeated"], count=self.calls[key] - 1, limit=self.max_same
            )
            return step["observation"], self.end(
                STOP_REPEAT, f"the same call to {call.api_name} asked again"
            )
        observation, source, ok = await _run_tool(
            self.ctx, call.name, call.api_name, call.arguments
        )
        observation = _cut(observation, self.limit)
        step.update(observation=observation, source=source, ok=ok)
        return observation, False


async def native_solve(
    item: Item, ctx: Context, context: dict[str, Any], ask: AskNative
) -> Outcome:
    """Answer one query with the native loop (see the module docstring)."""
    declared = declarations(item, ctx, context)
    tools = [declared.names.to_api(name) for name in declared.names if name != FINISH]
    max_steps = max(1, _option(ctx, "max_steps"))
    max_tokens = _option(ctx, "max_tokens") or None
    query = str(item.input.get("query", "")).strip()
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": _templates()["native"]["system"]},
        {"role": "user", "content": query},
    ]
    attempt = _Attempt(ctx, tools)
    attempt.why = f"no Finish within {max_steps} model calls"
    sent: list[dict[str, Any]] = []
    leaked = False
    for index in range(max_steps):
        turn = await ask(
            Prompt(messages=list(messages), tools=declared.tools, max_tokens=max_tokens)
        )
        sent.extend(turn.tool_calls)
        text = turn.text or ""
        calls = read_tool_calls(turn.tool_calls, declared.names)
        if not len(calls):
            step = _step(text, index == 0, tools)
            attempt.trace.append(step)
            written = leaked_calls(text, declared.names)
            if written:
                leaked = True
                step["action"] = declared.names.to_api(written[0]["name"])
                step["arguments"] = written[0]["arguments"]
                step["error"] = "leaked_call"
            if index == 0:
                step["observation"] = _templates()["native"]["no_call"]
                messages.append({"role": "assistant", "content": text})
                messages.append({"role": "user", "content": step["observation"]})
                continue
            attempt.end(STOP_NO_ACTION, "a reply without a function call")
            break
        messages.append(
            {"role": "assistant", "content": text or None, "tool_calls": turn.tool_calls}
        )
        ended = False
        for number, call in enumerate(calls):
            step = _step(text if number == 0 else "", index == 0 and number == 0, tools)
            if number:
                step["output"] = ""
            attempt.trace.append(step)
            observation, ended = await attempt.run(call, step)
            if ended:
                break
            messages.append({"role": "tool", "tool_call_id": call.id, "content": observation})
        if ended:
            break
    attempt.trace[-1]["stop"] = attempt.stop
    note = f"stopped: {attempt.stop}" + (f" ({attempt.why})" if attempt.why else "")
    if leaked:
        note += "; a call written in the text, not in tool_calls"
    outcome = Outcome(
        output="",
        answer=attempt.answer,
        trace=attempt.trace,
        note=note,
        tool_calls=sent,
        leaked=leaked,
    )
    # As the text agent's: the system and user nodes empty (the judges read published answers so).
    record = answer_record_for(outcome, method=NATIVE_METHOD, system="", user="")
    outcome.output = json.dumps(record, ensure_ascii=False)
    return outcome
