"""StableToolBench's agent in native tool mode: the query's tools and `Finish` declared as
function tools, as ToolBench's function-calling runner does. Pure Python.

Each step is one chat request: a system message (prompts/agent.toml [native]), the query as the
user message, then every earlier step: the assistant message as the server sent it (its text and
`tool_calls`) and one `tool` message per call with its observation. The tools are the text
agent's (agent.offered_tools), declared under ToolBench's function names (native.declare_tools),
with native.finish_tool() last. The model's calls go to the virtual API server exactly as the text
agent's actions do, under the text agent's own rules (agent.Rules, which its loop uses too: the
server's "source" kept for the trace, not shown): at most max_steps model calls, observations cut at
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

from typing import Any

from benchmarks.kit.native import NativeCall, ToolDeclarations, leaked_calls, read_tool_calls
from benchmarks.kit.protocol import AskNative, Context, Item, Outcome, Prompt
from benchmarks.suites.stabletoolbench.agent import (
    STOP_NO_ACTION,
    Rules,
    _fill,
    _option,
    _spec,
    _templates,
    offered_tools,
)
from benchmarks.suites.stabletoolbench.evaluate import FINISH
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


async def _run_call(rules: Rules, call: NativeCall, step: dict[str, Any]) -> bool:
    """One call of a reply by the text agent's rules; True when the attempt ends."""
    step["action"] = call.api_name
    if call.name is None:
        return rules.unknown(step, call.api_name)
    if call.name == FINISH:
        return rules.finish(step, call.raw_arguments)
    step["tool"] = call.name
    if call.arguments is None:
        rules.invalid = 0
        words = _templates()["native"]
        step["observation"] = _fill(
            words["bad_arguments"], action=call.api_name, problem=call.problem
        )
        return False
    return await rules.call(step, call.name, call.api_name, call.arguments)


async def native_solve(
    item: Item, ctx: Context, context: dict[str, Any], ask: AskNative
) -> Outcome:
    """Answer one query with the native loop (see the module docstring)."""
    declared = declarations(item, ctx, context)
    tools = [declared.names.to_api(name) for name in declared.names if name != FINISH]
    rules = Rules(ctx, ", ".join(tools) or "none")
    max_tokens = _option(ctx, "max_tokens") or None
    query = str(item.input.get("query", "")).strip()
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": _templates()["native"]["system"]},
        {"role": "user", "content": query},
    ]
    trace: list[dict[str, Any]] = []
    sent: list[dict[str, Any]] = []
    leaked = False
    for index in range(rules.max_steps):
        prompt = Prompt(messages=list(messages), tools=declared.tools, max_tokens=max_tokens)
        turn = await ask(prompt)
        sent.extend(turn.tool_calls)
        text = turn.text or ""
        calls = read_tool_calls(turn.tool_calls, declared.names)
        if not len(calls):
            step = _step(text, index == 0, tools)
            trace.append(step)
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
            rules.end(STOP_NO_ACTION, "a reply without a function call")
            break
        messages.append(
            {"role": "assistant", "content": text or None, "tool_calls": turn.tool_calls}
        )
        ended = False
        for number, call in enumerate(calls):
            step = _step(text if number == 0 else "", index == 0 and number == 0, tools)
            if number:
                step["output"] = ""
            trace.append(step)
            ended = await _run_call(rules, call, step)
            if ended:
                break
            messages.append(
                {"role": "tool", "tool_call_id": call.id, "content": step["observation"]}
            )
        if ended:
            break
    outcome = rules.outcome(trace, NATIVE_METHOD, tool_calls=sent, leaked=leaked)
    if leaked:
        outcome.note += "; a call written in the text, not in tool_calls"
    return outcome
