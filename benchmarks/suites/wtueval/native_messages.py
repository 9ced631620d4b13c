"""WTU-Eval R2/R4 in native tool mode: the tool pool declared as function tools, a loop of
native requests. Pure Python.

Each step is one chat request: a system message (what to do, how to give the final answer), the
task as the user message, then every earlier step: the assistant message as the server sent it
(its text and `tool_calls`) and one `tool` message per call with its observation. The pool is
the text mode's (tool_pool: the local calculator and the served tools, as stored at launch),
declared with the suite's declare_tools. A reply without tool_calls ends the attempt: its text
is the final answer (parse_answer: the `Final Answer:` line, else an `Answer:` line, else the
whole reply), or null content when it is empty. Several tool_calls in one reply run in order,
each a trace record of that step. The text mode's limits hold: max_steps requests, an unknown
tool gets the invalid-tool observation and ends the attempt the max_invalid_actions-th time, an
identical call (tool and arguments) runs at most max_same_call times, observations are cut at
max_observation_chars; arguments that are not JSON get an error observation.

A call written in the text instead of tool_calls (native.leaked_calls, or a ReAct `Action:`
naming a pool tool) is a leaked call: recorded as that tool's call (so R4 counts the tool use,
never a correct abstention) with error "leaked_call", and the attempt ends without an answer.

The trace has the text mode's records (step, thought, action, input, arguments, observation,
output, ok, error, tools on the first, stop on the last), so score() and the error types read it
unchanged.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from benchmarks.kit.native import leaked_calls, read_tool_calls
from benchmarks.kit.protocol import AskNative, Context, Item, Outcome, Prompt
from benchmarks.suites.wtueval.evaluate import (
    FINISH,
    STOP_FINAL,
    STOP_INVALID,
    STOP_LIMIT,
    STOP_NO_ANSWER,
    STOP_NULL,
    STOP_REPEAT,
    _arguments,
    _fill,
    _find_tool,
    _item_task,
    _judge,
    _max_tokens,
    _option_int,
    _run_tool,
    _templates,
    _transcript,
    _truncate,
    parse_answer,
    parse_step,
    tool_pool,
)
from benchmarks.suites.wtueval.native import declare_tools

__all__ = ["NATIVE_INSTRUCTION", "native_solve"]

NATIVE_INSTRUCTION = (
    "Solve the task below. You may call the tools you are given when they help; a tool's "
    "result comes back to you. When you know the answer, reply without calling a tool, ending "
    'with a line "Final Answer: <the answer>".'
)
LEAKED = "leaked_call"


def _leak(text: str, pool: dict[str, Any], names: Any) -> dict[str, Any] | None:
    written = leaked_calls(text, names)
    if written:
        return {"action": written[0]["name"], "arguments": written[0]["arguments"]}
    step = parse_step(text)
    tool = _find_tool(pool, step.action) if step.kind == "action" and step.action else None
    if tool is not None:
        return {"action": tool.spec.name, "arguments": {"input": step.action_input}}
    return None


async def native_solve(
    item: Item, ctx: Context, context: dict[str, Any], ask: AskNative
) -> Outcome:
    """R2/R4's native loop (tasks.py gives only the regions with tools a native form)."""
    pool = tool_pool(ctx, context)
    declared = declare_tools([tool.spec for tool in pool.values()])
    max_steps = max(1, _option_int(ctx, "max_steps", 5))
    max_invalid = max(1, _option_int(ctx, "max_invalid_actions", 2))
    max_same = max(1, _option_int(ctx, "max_same_call", 2))
    limit = _option_int(ctx, "max_observation_chars", 2000)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": NATIVE_INSTRUCTION},
        {"role": "user", "content": _item_task(item, ctx)},
    ]
    trace: list[dict[str, Any]] = []
    sent: list[dict[str, Any]] = []
    counts: Counter[str] = Counter()
    invalid = 0
    leaked = False
    stop, answer, why = STOP_LIMIT, None, f"no final answer within {max_steps} steps"
    for index in range(max_steps):
        prompt = Prompt(messages=list(messages), tools=declared.tools, max_tokens=_max_tokens(ctx))
        turn = await ask(prompt)
        sent.extend(turn.tool_calls)
        calls = read_tool_calls(turn.tool_calls, declared.names)
        text = turn.text or ""
        base: dict[str, Any] = {
            "step": index + 1,
            "thought": text.strip(),
            "action": None,
            "arguments": {},
            "observation": None,
            "output": text,
        }
        if index == 0:
            base["tools"] = list(pool)
        if not len(calls):
            written = _leak(text, pool, declared.names)
            if written is not None:
                leaked = True
                trace.append({**base, **written, "input": text.strip(), "error": LEAKED})
                stop, why = STOP_NO_ANSWER, "a call written in the text, not in tool_calls"
            elif not text.strip():
                trace.append({**base, "error": STOP_NULL})
                stop, why = STOP_NULL, "null content: an empty reply without tool calls"
            else:
                answer, why = parse_answer(text)
                trace.append({**base, "action": FINISH, "arguments": {"answer": answer}})
                stop = STOP_FINAL
            break
        messages.append(
            {"role": "assistant", "content": text or None, "tool_calls": turn.tool_calls}
        )
        ended = False
        for number, call in enumerate(calls):
            record = {**base, "input": call.raw_arguments}
            if number:
                record.pop("tools", None)
                record["thought"] = ""
            trace.append(record)
            tool = _find_tool(pool, call.name) if call.name is not None else None
            if tool is None:
                invalid += 1
                record.update(action=call.api_name, error="invalid_tool")
                if invalid >= max_invalid:
                    stop, why = STOP_INVALID, f"invalid action {call.api_name!r} again"
                    ended = True
                    break
                observation = _fill(
                    _templates()["observation"]["invalid_tool"],
                    action=call.api_name,
                    tool_names=", ".join(pool),
                )
                record["observation"] = observation
            elif call.arguments is None:
                observation = f"Error: {call.problem}"
                record.update(action=tool.spec.name, observation=observation, ok=False)
                record["error"] = "malformed_arguments"
            else:
                record["action"] = tool.spec.name
                key = json.dumps([tool.spec.name, call.arguments], sort_keys=True, default=str)
                counts[key] += 1
                if counts[key] > max_same:
                    earlier = [r for r in trace[:-1] if r.get("call_key") == key]
                    record.update(
                        error="repeated_call",
                        repeats_failed_call=any(r.get("ok") is False for r in earlier),
                    )
                    stop, why = STOP_REPEAT, f"the same call ({tool.spec.name}) asked again"
                    ended = True
                    break
                arguments = _arguments(tool, json.dumps(call.arguments, ensure_ascii=False))
                observation, ok = await _run_tool(tool, arguments)
                observation = _truncate(observation, limit)
                record.update(arguments=arguments, observation=observation, ok=ok, call_key=key)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": observation})
        if ended:
            break
    for record in trace:
        record.pop("call_key", None)
    trace[-1]["stop"] = stop
    offered = ", ".join(pool) or "none"
    note = f"tools offered: {offered}; stopped: {stop}" + (f" ({why})" if why else "")
    parsed, _ = _judge(answer, item, ctx)
    return Outcome(
        output=_transcript(trace),
        answer=answer,
        parsed=parsed,
        trace=trace,
        note=note,
        tool_calls=sent,
        leaked=leaked,
    )
