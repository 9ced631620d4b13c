"""StableToolBench's outputs read step by step (the suite's `trace` capability), for step-level
review: the agent's runs (text, agent.py; native, native_agent.py) and imported answers
(evaluate.parse) alike, since all store one trace step per model step {"thought", "action",
"arguments", "observation", ...}.

One TraceStep per trace step: the call it made (none for a reply without an Action) with its
observation as the result, the thought as the text. The Finish call is the last step (label
"step N (final answer)" or "(gives up)"); the trace's final is the answer given to the user.
A call of an offered tool is named by its tool key (`<category>/<api>_for_<tool>`, the item's
candidate tools, whose schemas the platform stores: traces.with_schemas fills them); a call of
a name the query does not offer keeps the name the model wrote. The hook itself gives Finish's
schema (native.finish_tool), the one tool no sample stores.

auto_error, from what the agent itself noticed (its own observations, prompts/agent.toml) or
what the trace shows:
  - "format": a reply without an Action (or, native, without a function call; a call written
    in the text, `leaked_call`), Action Input / arguments that are not a JSON object, a Finish
    whose arguments neither answer nor give up;
  - "wrong_tool": a name the query does not offer;
  - "unnecessary_call": an identical call asked once too often (the agent did not run it);
  - "api_error" (the suite's own): the server answered with an error, or the tool was not
    available. The server's error may come from the API itself or from arguments it refused,
    and the suite cannot tell which, so it is not "wrong_argument";
  - None for every other step: a call the server answered, and a Finish that answers or gives
    up. Whether that call was the right one, or the answer right, is the reviewer's (and the
    pass judge's) to say; the suite has no gold calls.

auto_verdict: False when the answer is one the reference counts Unsolved without asking a judge
(no Finish call at the end, an empty final answer, a give-up: evaluate.no_answer_reason); None
otherwise (whether it solves the query is the judges' verdict, not stored on the output).
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Mapping
from functools import cache
from typing import Any

from benchmarks.kit.context import JudgedOutput, ShownCall
from benchmarks.kit.protocol import Item
from benchmarks.kit.traces import NotATrace, StepError, Trace, TraceStep, result_value
from benchmarks.suites.stabletoolbench.agent import _templates
from benchmarks.suites.stabletoolbench.evaluate import (
    FINISH,
    GIVE_UP,
    _is_answer_object,
    no_answer_reason,
    trace_steps,
)
from benchmarks.suites.stabletoolbench.importer import shown_names
from benchmarks.suites.stabletoolbench.native import finish_tool

__all__ = ["OWN_STEP_ERRORS", "trace"]

API_ERROR = "api_error"
OWN_STEP_ERRORS = (
    StepError(
        API_ERROR,
        "API error",
        "The API server answered the call with an error, or the tool was not available.",
    ),
)


@cache
def _patterns() -> dict[str, re.Pattern[str]]:
    """The agent's own observations (prompts/agent.toml) as patterns, their $fields any text."""
    words = _templates()
    texts = {
        "unknown_tool": words["observation"]["unknown_tool"],
        "unavailable": words["observation"]["unavailable"],
        "bad_arguments": words["observation"]["bad_arguments"],
        "native_bad_arguments": words["native"]["bad_arguments"],
        "finish_incomplete": words["observation"]["finish_incomplete"],
        "repeated": words["observation"]["repeated"],
    }
    return {name: _pattern(text) for name, text in texts.items()}


def _pattern(template: str) -> re.Pattern[str]:
    """The template as a pattern: its text as is, each $field any text (string.Template's own
    pattern finds the fields)."""
    parts, last = [], 0
    for match in string.Template.pattern.finditer(template):
        parts.append(re.escape(template[last : match.start()]))
        parts.append(re.escape("$") if match.group("escaped") is not None else ".*?")
        last = match.end()
    parts.append(re.escape(template[last:]))
    return re.compile("".join(parts), re.DOTALL)


def _says(observation: Any, name: str) -> bool:
    return isinstance(observation, str) and _patterns()[name].fullmatch(observation) is not None


def _server_error(observation: Any) -> bool:
    value = result_value(observation)
    return isinstance(value, Mapping) and bool(value.get("error"))


def _offered(item: Item, steps: list[Mapping[str, Any]]) -> dict[str, str]:
    """name shown -> tool key of the tools the query offered (the names the first step lists
    when the agent stored them, else its candidate tools as the agent shows them)."""
    keys = [str(key) for key in item.candidate_tools or ()]
    offered = {name: key for key, name in shown_names(keys).items()}
    first = steps[0].get("tools") if steps else None
    if isinstance(first, list):
        return {str(name): offered.get(str(name), str(name)) for name in first}
    return offered


def _step_error(step: Mapping[str, Any], action: str, offered: Mapping[str, str]) -> str | None:
    observation = step.get("observation")
    if step.get("error") == "leaked_call" or not action:
        return "format"
    if action == FINISH:
        return "format" if _says(observation, "finish_incomplete") else None
    if _says(observation, "unknown_tool") or (
        action not in offered and not isinstance(step.get("tool"), str)
    ):
        return "wrong_tool"
    if (
        _says(observation, "bad_arguments")
        or _says(observation, "native_bad_arguments")
        or not isinstance(step.get("arguments"), Mapping)
    ):
        return "format"
    if _says(observation, "repeated"):
        return "unnecessary_call"
    if _says(observation, "unavailable") or _server_error(observation):
        return API_ERROR
    return None


def _final_label(step: Mapping[str, Any]) -> str:
    arguments = step.get("arguments")
    if isinstance(arguments, Mapping) and arguments.get("return_type") == GIVE_UP:
        return "gives up"
    return "final answer"


def _record(output: JudgedOutput) -> dict[str, Any] | None:
    try:
        value = json.loads(output.text)
    except (ValueError, TypeError, RecursionError):
        return None
    return value if _is_answer_object(value) else None


def trace(item: Item, output: JudgedOutput | None) -> Trace:
    """One output's trace (see the module docstring)."""
    if output is None:
        raise NotATrace("a StableToolBench sample is a query, not a trace: review a run's output")
    record = _record(output)
    raw = list(output.trace) if output.trace else (trace_steps(record) if record else [])
    steps = [step for step in raw if isinstance(step, Mapping)]
    if not steps:
        if output.parsed is False:
            raise NotATrace("the output is not a StableToolBench answer object")
        raise NotATrace("the output holds no agent steps")
    offered = _offered(item, steps)
    shown: list[TraceStep] = []
    for number, step in enumerate(steps, start=1):
        action = step.get("action")
        action = action if isinstance(action, str) else ""
        label = f"step {number}"
        calls: tuple[ShownCall, ...] = ()
        results: tuple[Any, ...] = ()
        if action:
            key = step.get("tool")
            name = key if isinstance(key, str) and key else offered.get(action, action)
            calls = (ShownCall(name=name, arguments=step.get("arguments"), label=label),)
            if action != FINISH or step.get("observation"):
                results = (result_value(step.get("observation", "")),)
            if action == FINISH:
                label += f" ({_final_label(step)})"
        thought = step.get("thought")
        shown.append(
            TraceStep(
                label=label,
                calls=calls,
                results=results,
                text=thought if isinstance(thought, str) else "",
                auto_error=_step_error(step, action, offered),
            )
        )
    final = output.answer if isinstance(output.answer, str) else ""
    verdict = False if record is not None and no_answer_reason(record) else None
    finish = finish_tool()
    return Trace(
        steps=tuple(shown),
        final=final,
        schemas={FINISH: finish.parameters},
        auto_verdict=verdict,
    )
