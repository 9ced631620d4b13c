"""StableToolBench's agent: a bounded ReAct loop that answers a ToolBench query with the tools of
its api_list, called through the platform's virtual API server (Context.toolbox).

`solve(item, ctx, context, complete)`:
  - offers the item's candidate tools (Tool keys `<category>/<api>_for_<tool>`, described by
    ctx.tools) plus ToolBench's `Finish`. The model sees each tool under ToolBench's function
    name `<api>_for_<tool>`, the name the published answers call; where two tools of the query
    share it (one name in two categories) each is shown with its category
    (`<api>_for_<tool>_for_<category>`, importer.shown_names), so every name the model sees
    means one API. ToolBench itself shows both under one name and runs the first that matches.
    The prompt (prompts/agent.toml, ours) asks for one step at a time:
        Thought: <reasoning>
        Action: <a tool name, or Finish>
        Action Input: <a JSON object of arguments>
    Finish takes {"return_type": "give_answer", "final_answer": "..."} or
    {"return_type": "give_up_and_restart"}. Chat endpoints get a system message (the tools and
    the format) and the query as the user message, then the steps so far as assistant turns and
    "Observation: ..." user turns. Completion-style (base) models get one short text with a
    worked example, the tools, the query and the steps so far, ending with "Thought:". Both stop
    at "\\nObservation:".
  - reads each reply (`parse_reply`): the last Action / Action Input pair before any
    (hallucinated) Observation; the input's JSON object is read with json, else as a Python
    literal of plain data (`parse_arguments`: single quotes, True/False/None, trailing commas,
    code fences, trailing text); model text is never evaluated. Tool names match exactly, then
    ignoring case, then ignoring everything but letters and digits, among the names shown.
  - runs the call: `ctx.toolbox[key].call(arguments)` (the key of the name shown) gives the
    server's JSON text
    {"error", "response"} (its "source" field, the response's provenance, goes to the trace and
    is not shown to the model); a tool the toolbox lacks, or ToolUnavailable from the call,
    becomes an observation saying so; any other exception (CallFailed from `complete` too)
    passes through.
  - stops on a Finish with an answer (final_answer) or a give-up (give_up), after `max_steps`
    model calls (step_limit), on a second unknown tool name in a row (invalid_action; the first
    gets a reminder listing the tools), on an identical call asked more than `max_same_call`
    times (repeated_call; not run), or on a reply without an Action after the first step
    (no_action; the first step gets one reminder).

The outcome: output = ToolBench's answer object as JSON text (evaluate.answer_record_for, method
"ReAct@1", its system and user messages empty as in the published files), so evaluate.parse,
score and the judges read it as they read published answers; answer = the final answer (None
without one); trace = one step per model call {"thought", "action" (the name as shown),
"arguments", "observation", "output", "source", "ok"}, a call of an offered tool also with
"tool" (its key), the first step with "tools" (the names shown), the last with "stop"; note =
why it stopped.
"""

from __future__ import annotations

import json
import re
import string
import tomllib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from benchmarks.kit.predictions import python_literal
from benchmarks.kit.protocol import (
    Complete,
    Context,
    Item,
    Outcome,
    Prompt,
    Tool,
    ToolSpec,
    ToolUnavailable,
)
from benchmarks.kit.toolcall import INLINE_ACTION_INPUT, marked_sections, react_marker
from benchmarks.suites.stabletoolbench.evaluate import (
    FINISH,
    GIVE_UP,
    answer_record_for,
)
from benchmarks.suites.stabletoolbench.importer import shown_names

__all__ = [
    "METHOD",
    "Reply",
    "Turn",
    "offered_tools",
    "parse_arguments",
    "parse_reply",
    "solve",
    "step_prompt",
]

PROMPTS = Path(__file__).resolve().parent / "prompts"
METHOD = "ReAct@1"
GIVE_ANSWER = "give_answer"
STOP = ("\nObservation:",)
DESCRIPTION_CHARS = 300
PARAMETER_CHARS = 150
# Longer Action Inputs are not read (a reply is at most max_tokens long anyway).
MAX_INPUT_CHARS = 20_000

# Why an attempt ended (the last trace step's "stop").
STOP_FINAL = "final_answer"
STOP_GIVE_UP = "give_up"
STOP_LIMIT = "step_limit"
STOP_INVALID = "invalid_action"
STOP_REPEAT = "repeated_call"
STOP_NO_ACTION = "no_action"

# A second unknown tool name in a row ends the attempt.
MAX_INVALID_IN_A_ROW = 2


@cache
def _templates() -> dict[str, Any]:
    with (PROMPTS / "agent.toml").open("rb") as handle:
        return tomllib.load(handle)


def _fill(template: str, **values: Any) -> str:
    return string.Template(template).substitute({k: str(v) for k, v in values.items()})


def _option(ctx: Context, name: str) -> int:
    return int(ctx.option(name))


# --- the tools offered ---------------------------------------------------------------------------


def offered_tools(item: Item, ctx: Context, context: Mapping[str, Any] | None = None) -> list[str]:
    """The tool names offered for an item: a list `prepare` stored in the context, else the
    item's candidate tools (its api_list), else every tool of the toolbox; in order, once."""
    names: Sequence[Any] = ()
    if context and isinstance(context.get("tools"), list):
        names = context["tools"]
    elif item.candidate_tools:
        names = item.candidate_tools
    else:
        names = list(ctx.toolbox)
    return list(dict.fromkeys(str(name) for name in names if str(name) and str(name) != FINISH))


def _spec(ctx: Context, name: str) -> ToolSpec:
    if name in ctx.tools:
        return ctx.tools[name]
    tool = ctx.toolbox.get(name)
    return tool.spec if tool is not None else ToolSpec(name=name)


def _one_line(text: Any, limit: int) -> str:
    words = " ".join(str(text or "").split())
    if len(words) > limit:
        return words[:limit].rstrip() + str(_templates()["tool"]["cut"])
    return words


def _describe_parameter(name: str, schema: Any, required: bool) -> str:
    words = _templates()["tool"]
    schema = schema if isinstance(schema, dict) else {}
    kind = str(schema.get("type") or "string")
    if schema.get("format"):
        kind += f", {schema['format']}"
    need = words["required"] if required else words["optional"]
    description = _one_line(schema.get("description", ""), PARAMETER_CHARS)
    examples = schema.get("examples")
    if isinstance(examples, list) and examples and not description:
        description = "e.g. " + _one_line(json.dumps(examples[0], ensure_ascii=False), 60)
    if description:
        return _fill(
            words["parameter_described"], name=name, type=kind, need=need, description=description
        )
    return _fill(words["parameter"], name=name, type=kind, need=need)


def _describe_tool(spec: ToolSpec, name: str) -> str:
    words = _templates()["tool"]
    schema = spec.parameters if isinstance(spec.parameters, dict) else {}
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = {r for r in schema.get("required", []) if isinstance(r, str)}
    # Required parameters first, as ToolBench lists them.
    order = [k for k in properties if k in required] + [k for k in properties if k not in required]
    parameters = "; ".join(_describe_parameter(k, properties[k], k in required) for k in order)
    description = _one_line(spec.description, DESCRIPTION_CHARS)
    if description and description[-1] not in ".!?":
        description += "."
    return _fill(
        words["line"],
        name=name,
        description=description,
        parameters=parameters or words["no_parameters"],
    )


def _tool_list(ctx: Context, keys: Sequence[str], shown: Mapping[str, str]) -> str:
    lines = [_describe_tool(_spec(ctx, key), shown[key]) for key in keys]
    lines.append(_templates()["tool"]["finish"])
    return "\n".join(lines)


def _key(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.lower())


def _match(action: str, names: Sequence[str]) -> str | None:
    """The offered name an Action means: exact, then ignoring case, then ignoring everything but
    letters and digits; None when no (single) name fits."""
    if action in names:
        return action
    for fold in (str.lower, _key):
        wanted = fold(action)
        if not wanted:
            return None
        found = [name for name in names if fold(name) == wanted]
        if len(found) == 1:
            return found[0]
    return None


# --- prompts -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Turn:
    """A step already taken, as the next prompt shows it: the model's step and the observation."""

    reply: str
    observation: str


def _texts(item: Item, ctx: Context, keys: Sequence[str]) -> tuple[str, str, str]:
    """(the chat system message, the chat user message, the completion text before any step)."""
    query = str(item.input.get("query", "")).strip()
    shown = shown_names(keys)
    tools = _tool_list(ctx, keys, shown)
    words = _templates()
    tool_names = ", ".join(shown[key] for key in keys)
    system = _fill(words["chat"]["system"], tools=tools, tool_names=tool_names)
    user = _fill(words["chat"]["user"], query=query)
    text = _fill(words["completion"]["text"], tools=tools, tool_names=tool_names, query=query)
    return system, user, text


def step_prompt(
    item: Item, ctx: Context, keys: Sequence[str], turns: Sequence[Turn] = ()
) -> Prompt:
    """The request for the next step, the tools given by key (shown by shown_names): the
    messages for chat endpoints and, for completion-style models, one text ending with
    "Thought:"; both stop at a new Observation."""
    system, user, text = _texts(item, ctx, keys)
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    pad = ""
    for turn in turns:
        messages.append({"role": "assistant", "content": turn.reply})
        messages.append({"role": "user", "content": f"Observation: {turn.observation}"})
        pad += f"{turn.reply}\nObservation: {turn.observation}\n"
    return Prompt(
        messages=messages,
        text=f"{text}{pad}Thought:",
        stop=STOP,
        max_tokens=_option(ctx, "max_tokens") or None,
    )


# --- reading a reply -----------------------------------------------------------------------------

_MARKER = react_marker("Thought", "Action Input", "Action", "Observation")
_FENCE = re.compile(r"^[ \t]*```[\w-]*[ \t]*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Reply:
    """One model reply read as a ReAct step. action is None when the reply names no Action;
    action_input is None when it gives no Action Input."""

    thought: str
    action: str | None
    action_input: str | None


def _clean_name(line: str) -> str:
    return line.strip().strip("`'\"*[]").strip().rstrip(".:,;").strip()


def parse_reply(text: str) -> Reply:
    """The step a reply takes: the last Action (and the Action Input after it) before any
    Observation the model wrote itself; the Thought lines before that Action are its thought."""
    before, pairs = marked_sections(text, _MARKER)
    for index, (name, _) in enumerate(pairs):
        if name == "observation":
            pairs = pairs[:index]
            break
    actions = [i for i, (name, _) in enumerate(pairs) if name == "action"]
    if not actions:
        thoughts = [before] + [content for name, content in pairs if name == "thought"]
        return Reply(
            thought="\n".join(t.strip() for t in thoughts if t.strip()),
            action=None,
            action_input=None,
        )
    last = actions[-1]
    start = actions[-2] + 1 if len(actions) > 1 else 0
    thoughts = [] if len(actions) > 1 else [before]
    thoughts += [content for name, content in pairs[start:last] if name == "thought"]
    content = pairs[last][1].strip()
    first, _, rest = content.partition("\n")
    inline = INLINE_ACTION_INPUT.split(first, maxsplit=1)
    action = _clean_name(inline[0])
    action_input: str | None = inline[1] if len(inline) == 2 else None
    following = [c for name, c in pairs[last + 1 :] if name == "actioninput"]
    if following:
        action_input = following[0]
    elif action_input is None and rest.strip():
        # The arguments on the lines after the Action, without an "Action Input:" marker.
        action_input = rest
    return Reply(
        thought="\n".join(t.strip() for t in thoughts if t.strip()),
        action=action,
        action_input=None if action_input is None else action_input.strip(),
    )


def _object_text(text: str) -> str | None:
    """The text of the first {...} in `text` (braces inside strings skipped; to the end when it
    is never closed), or None without a "{"."""
    start = text.find("{")
    if start < 0:
        return None
    depth, quote, escaped = 0, "", False
    for index in range(start, len(text)):
        char = text[index]
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[start : index + 1]
    return text[start:]


def parse_arguments(text: str | None) -> dict[str, Any] | None:
    """The arguments an Action Input gives, as a JSON object; {} for an empty input; None when
    no JSON object can be read. Code fences, backticks and text around the object are ignored;
    an object written as a Python literal of plain data is read as one, never evaluated
    (predictions.python_literal)."""
    if text is None or not text.strip():
        return {}
    if len(text) > MAX_INPUT_CHARS:
        return None
    body = _object_text(_FENCE.sub("", text).strip().strip("`"))
    if body is None:
        return None
    for read in (json.loads, python_literal):
        try:
            value = read(body)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


# The final_answer field of Finish arguments that are not valid JSON (a cut or mis-escaped
# string): the string's body up to its closing quote or the end of the text.
_LOOSE_FINAL = re.compile(r"""["']final_answer["']\s*:\s*(["'])((?:(?!\1)[^\\]|\\.)*)""", re.S)


def _answer_text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _read_finish(text: str | None) -> tuple[str, str | None, dict[str, Any]]:
    """A Finish call: ("answer", the answer, arguments), ("give_up", None, arguments) or
    ("incomplete", None, the arguments read, if any)."""
    arguments = parse_arguments(text)
    if arguments is not None:
        kind = str(arguments.get("return_type", "")).strip()
        answer = _answer_text(arguments.get("final_answer")).strip()
        if kind == GIVE_UP:
            return "give_up", None, arguments
        if answer and kind in (GIVE_ANSWER, ""):
            return "answer", answer, arguments
        return "incomplete", None, arguments
    raw = text or ""
    loose = _LOOSE_FINAL.search(raw)
    if loose and loose.group(2).strip():
        body = loose.group(2)
        try:
            answer = str(json.loads(f'"{body}"'))
        except ValueError:
            answer = body
        return "answer", answer.strip(), {"return_type": GIVE_ANSWER, "final_answer": answer}
    if GIVE_UP in raw:
        return "give_up", None, {"return_type": GIVE_UP}
    return "incomplete", None, {}


# --- running a call ------------------------------------------------------------------------------


def _toolbox_tool(ctx: Context, name: str) -> Tool | None:
    tool = ctx.toolbox.get(name)
    if tool is not None:
        return tool
    found = [tool for key, tool in ctx.toolbox.items() if _key(key) == _key(name)]
    return found[0] if len(found) == 1 else None


async def _run_tool(
    ctx: Context, key: str, name: str, arguments: dict[str, Any]
) -> tuple[str, str, bool]:
    """(observation, source, ok) of one call of the tool `key`, shown to the model as `name`.
    The server's "source" field is taken out of the observation; ok is False when the tool is
    unavailable or the server reports an error."""
    words = _templates()["observation"]
    tool = _toolbox_tool(ctx, key)
    if tool is None:
        reason = "the platform does not serve it"
        return _fill(words["unavailable"], action=name, reason=reason), "", False
    try:
        text = await tool.call(arguments)
    except ToolUnavailable as error:
        reason = str(error) or "no reason given"
        return _fill(words["unavailable"], action=name, reason=reason), "", False
    text = "" if text is None else str(text)
    try:
        value = json.loads(text)
    except ValueError:
        return text, "", True
    if not isinstance(value, dict):
        return text, "", True
    source = value.get("source")
    if isinstance(source, str):
        value = {key: item for key, item in value.items() if key != "source"}
        text = json.dumps(value, ensure_ascii=False)
    else:
        source = ""
    return text, source, not value.get("error")


def _cut(text: str, limit: int) -> str:
    if limit > 0 and len(text) > limit:
        return text[:limit] + _fill(_templates()["observation"]["truncated"], total=len(text))
    return text


def _reply_text(reply: Reply, action: str, action_input: str) -> str:
    lines = [f"Thought: {reply.thought}", f"Action: {action}", f"Action Input: {action_input}"]
    return "\n".join(lines)


def _input_text(reply: Reply, arguments: dict[str, Any] | None) -> str:
    if arguments is not None:
        return json.dumps(arguments, ensure_ascii=False)
    return (reply.action_input or "").strip()


# --- the rules of a step (the text loop's and native_agent.py's) ----------------------------------


class Rules:
    """One attempt's limits and outcome, shared by the text loop and the native one: the step
    limit, unknown names in a row, identical calls, the observation cut, and why it stopped."""

    def __init__(self, ctx: Context, tool_names: str) -> None:
        self.ctx = ctx
        self.tool_names = tool_names
        self.max_steps = max(1, _option(ctx, "max_steps"))
        self.max_same = max(1, _option(ctx, "max_same_call"))
        self.limit = _option(ctx, "max_observation_chars")
        self.calls: Counter[tuple[str, str]] = Counter()
        self.invalid = 0
        self.stop = STOP_LIMIT
        self.answer: str | None = None
        self.why = f"no Finish within {self.max_steps} model calls"

    def end(self, stop: str, why: str = "", answer: str | None = None) -> bool:
        self.stop, self.why, self.answer = stop, why, answer
        return True

    def unknown(self, step: dict[str, Any], action: str) -> bool:
        """An unknown tool name: the reminder as the observation; True when the attempt ends
        (the second in a row)."""
        self.invalid += 1
        words = _templates()["observation"]
        step["observation"] = _fill(
            words["unknown_tool"], action=action, tool_names=self.tool_names
        )
        if self.invalid >= MAX_INVALID_IN_A_ROW:
            return self.end(STOP_INVALID, f"unknown tool {action!r} after a reminder")
        return False

    def finish(self, step: dict[str, Any], action_input: str | None) -> bool:
        """A Finish call: True when it answers or gives up (the attempt ends), else the
        reminder of Finish's arguments as the observation."""
        self.invalid = 0
        kind, final, arguments = _read_finish(action_input)
        step["arguments"] = arguments
        if kind == "answer":
            step["ok"] = True
            return self.end(STOP_FINAL, answer=final)
        if kind == "give_up":
            step["ok"] = True
            return self.end(STOP_GIVE_UP, "Finish with give_up_and_restart")
        step["observation"] = _templates()["observation"]["finish_incomplete"]
        return False

    async def call(
        self, step: dict[str, Any], key: str, name: str, arguments: dict[str, Any]
    ) -> bool:
        """A call of the tool `key` (shown as `name`) on the virtual API server, its observation
        cut; True when it is an identical call asked once too often (not run; the attempt
        ends)."""
        self.invalid = 0
        step["arguments"] = arguments
        call = (key, json.dumps(arguments, sort_keys=True, ensure_ascii=False))
        self.calls[call] += 1
        if self.calls[call] > self.max_same:
            words = _templates()["observation"]
            count = self.calls[call] - 1
            step["observation"] = _fill(words["repeated"], count=count, limit=self.max_same)
            return self.end(STOP_REPEAT, f"the same call to {name} asked again")
        observation, source, ok = await _run_tool(self.ctx, key, name, arguments)
        step.update(observation=_cut(observation, self.limit), source=source, ok=ok)
        return False

    def outcome(self, trace: list[dict[str, Any]], method: str, **extra: Any) -> Outcome:
        """The attempt's Outcome: the stop on the last step, the note, and ToolBench's answer
        object as the output."""
        trace[-1]["stop"] = self.stop
        note = f"stopped: {self.stop}" + (f" ({self.why})" if self.why else "")
        outcome = Outcome(output="", answer=self.answer, trace=trace, note=note, **extra)
        # The system and user nodes stay empty, as in StableToolBench's converted answers: the
        # judges then read our answers exactly as they read published ones (and a small judge
        # model's context is not spent on the tool list).
        record = answer_record_for(outcome, method=method, system="", user="")
        outcome.output = json.dumps(record, ensure_ascii=False)
        return outcome


# --- the loop ------------------------------------------------------------------------------------


async def solve(item: Item, ctx: Context, context: dict[str, Any], complete: Complete) -> Outcome:
    """Answer one query with the ReAct loop (see the module docstring)."""
    words = _templates()["observation"]
    keys = offered_tools(item, ctx, context)
    shown = shown_names(keys)
    names = [shown[key] for key in keys]
    key_of = {name: key for key, name in shown.items()}
    completion = ctx.style == "completion"
    rules = Rules(ctx, ", ".join(names) or "none")

    trace: list[dict[str, Any]] = []
    turns: list[Turn] = []

    for index in range(rules.max_steps):
        output = await complete(step_prompt(item, ctx, keys, turns))
        output = "" if output is None else str(output)
        # A completion prompt ends with "Thought:", so the reply starts inside the thought.
        reply = parse_reply("Thought: " + output if completion else output)
        step: dict[str, Any] = {
            "thought": reply.thought,
            "action": reply.action or "",
            "arguments": {},
            "observation": "",
            "output": output,
            "source": "",
            "ok": False,
        }
        if index == 0:
            step["tools"] = list(names)
        trace.append(step)

        if not reply.action:
            if index == 0:
                step["observation"] = words["no_action"]
                turns.append(Turn(f"Thought: {reply.thought}".rstrip(), words["no_action"]))
                continue
            rules.end(STOP_NO_ACTION, "a reply without an Action")
            break

        name = _match(reply.action, [*names, FINISH])
        if name is None:
            if rules.unknown(step, reply.action):
                break
            text = _input_text(reply, parse_arguments(reply.action_input))
            turns.append(Turn(_reply_text(reply, reply.action, text), step["observation"]))
            continue
        step["action"] = name
        key = key_of.get(name, name)

        if name == FINISH:
            if rules.finish(step, reply.action_input):
                break
            text = _input_text(reply, parse_arguments(reply.action_input))
            turns.append(Turn(_reply_text(reply, FINISH, text), step["observation"]))
            continue

        step["tool"] = key
        parsed = parse_arguments(reply.action_input)
        if parsed is None:
            rules.invalid = 0
            observation = _fill(words["bad_arguments"], action=name)
            step["observation"] = observation
            turns.append(Turn(_reply_text(reply, name, _input_text(reply, None)), observation))
            continue
        if await rules.call(step, key, name, parsed):
            break
        turns.append(
            Turn(_reply_text(reply, name, _input_text(reply, parsed)), step["observation"])
        )

    return rules.outcome(trace, METHOD)
