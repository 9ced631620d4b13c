"""BFCL's multi-turn categories (multi_turn_base, multi_turn_miss_func, multi_turn_miss_param,
multi_turn_long_context) as tasks: the entry's user turns sent in order, the model's calls
executed against BFCL's own simulator classes as it makes them, the entry scored as BFCL's
multi-turn checker scores it. Pure Python; never evaluates a model's text.

The conversation, as BFCL's handlers hold it (`base_handler.py`, `inference_multi_turn_*`):

- Each turn's messages are added in order. A turn at which held-out functions come back
  (multi_turn_miss_func, `missed_function`; its published messages are empty) is instead one
  user message: in FC mode BFCL's text "I have updated some more functions ..." with the docs
  added to the tools declared from then on, in Prompt mode the added docs written as Python
  writes a list (`str`) before that text (prompts/prompt_mode.toml, BFCL's texts). The docs
  offered at a turn are `multi_turn.functions_at`; the held-out ones come without the Python
  hint, since BFCL adds the hint after it has set them aside.
- Within a turn the model is asked step after step. Text mode (BFCL's Prompt mode): BFCL's system
  prompt with the docs (evaluate.prompt_mode), the answer `[func(a=1), ...]` read by
  decode.decode_prompt; the results go back in one user message, `repr` of
  [{"role": "tool", "name": <the call as executed>, "content": <its result>}], as BFCL writes
  them. Native mode (BFCL's FC mode): the docs declared as tools (evaluate.declarations), the
  model's tool_calls read by decode.decode_tool_calls, each result a `tool` message answering
  its call's id. An answer that decodes to no call, or does not decode, ends the turn.
- A call is executed as BFCL executes it: written as a Python call (`name(k=repr(v),...)`) and
  run, parsed with `ast`, in the item's `multi_turn.WorkerSession` (a worker subprocess under
  limits, the entry's involved classes loaded from the pinned wheel). After a step that called
  something, more than STEP_LIMIT (20, BFCL's MAXIMUM_STEP_LIMIT) steps in a turn force the
  model to quit: the entry stops there and fails, as in BFCL.

The score: after the last turn the worker executes the model's calls again on fresh instances
and checks each turn against the ground truth (`multi_turn.run_entry`: BFCL's state check and
response check). Per item `accuracy` is 100 when every turn passes (BFCL's binary score) and
`turn_accuracy` the percent of turns passed (partial credit, ours); per run their means and `n`.
The Outcome keeps what the item page shows: `answer` = {"passed", "turn_accuracy" (0..1),
"reason", "force_terminated", "force_quit", "turns" (the model's calls per turn and step, as
executed), "verdicts" (per turn: passed, kind, reason, state_diff, state_diff_omitted, missing,
bfcl_equal, refused)}; `trace` = one row per executed call (turn, step, `action`, `arguments`,
`call` as executed, `observation`; the step's raw reply as `output` on its first call), one per
answer that ended a turn (`stop`: why), and after each turn its verdict (`stop` when it passed,
`error` with the reason when it failed) with the classes' state before and after the turn as
the verdict's execution recorded it (`state_before`, `state_after`, each attribute clipped at
STATE_VALUE_CHARS: what the step review shows, traces.py); `note` = the reason when the entry
failed. The score
reads the stored verdict (the calls were executed once for it, as BFCL's checker executes them
after inference).

The classes come from the wheel `manage.py fetch_bfcl` puts in `.data/bfcl/` (checked against
its pinned sha256): `prepare` refuses a launch without it, naming the command. A lone text is
no answer to a conversation: `parse` reads it as unparsed (accuracy 0).
"""

from __future__ import annotations

import asyncio
import copy
import json
import tomllib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from benchmarks.kit.protocol import (
    AskNative,
    Complete,
    Context,
    Item,
    MetricSpec,
    Outcome,
    Prompt,
    Scored,
    Scores,
    TaskSpec,
    mean,
    metric_specs,
)
from benchmarks.kit.stateful import bounded_snapshot, jsonable
from benchmarks.suites.bfcl.calls import parse_call
from benchmarks.suites.bfcl.decode import (
    Call,
    Decoded,
    DecodeFailure,
    decode_prompt,
    decode_tool_calls,
    fc_name,
    restore_names,
)
from benchmarks.suites.bfcl.evaluate import declarations, prompt_mode
from benchmarks.suites.bfcl.multi_turn import (
    WorkerSession,
    WorkerStopped,
    entry_of,
    functions_at,
)
from benchmarks.suites.bfcl.wheel import (
    DEFAULT_DIR,
    PINNED_VERSION,
    WHEEL_NAME,
    WheelError,
    find_wheel,
)

__all__ = [
    "MULTI_TURN_CATEGORIES",
    "NOT_A_CONVERSATION",
    "STATE_VALUE_CHARS",
    "STEP_LIMIT",
    "TASKS",
    "Executor",
    "Mode",
    "Record",
    "Step",
    "StepsStopped",
    "TurnSteps",
    "aggregate_entries",
    "call_text",
    "gold_steps",
    "gold_text_of",
    "gold_tool_calls_of",
    "mean_entry_metrics",
    "native_converse",
    "native_mode",
    "opening_prompt",
    "parse_text",
    "prepare_entries",
    "score_entry",
    "session_executor",
    "step_turn",
    "text_converse",
    "text_mode",
    "turn_states_of",
    "wheel_source",
]

MULTI_TURN_CATEGORIES: tuple[str, ...] = (
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
)
# BFCL's MAXIMUM_STEP_LIMIT: steps that called something, per turn, before the model is forced
# to quit.
STEP_LIMIT = 20
ROOT = Path(__file__).resolve().parents[3]
PROMPTS = Path(__file__).parent / "prompts" / "prompt_mode.toml"
NOT_A_CONVERSATION = (
    "a multi-turn entry is answered in a conversation (the task's solve loop); a single text "
    "is no answer to it"
)

ACCURACY_ITEM = MetricSpec.score("accuracy", description="100 when every turn passes BFCL's check")
TURNS_ITEM = MetricSpec.score(
    "turn_accuracy", description="% of the entry's turns that pass BFCL's check"
)
ACCURACY_RUN = MetricSpec.score(
    "accuracy", description="% of entries whose every turn passes BFCL's check"
)
TURNS_RUN = MetricSpec.score("turn_accuracy", description="mean % of turns passed per entry")
N_RUN = MetricSpec.count("n", description="entries scored")

_TITLES = {
    "multi_turn_base": "Multi-turn base",
    "multi_turn_miss_func": "Multi-turn missing function",
    "multi_turn_miss_param": "Multi-turn missing parameter",
    "multi_turn_long_context": "Multi-turn long context",
}
_SHAPES = {
    "multi_turn_base": "user turns answered by calls executed against simulated systems",
    "multi_turn_miss_func": (
        "a function held out until a later turn: the model must not fake it before it is added"
    ),
    "multi_turn_miss_param": "a turn that lacks a parameter: the model must ask, not guess",
    "multi_turn_long_context": "the systems loaded with long distracting content",
}


def _spec(category: str) -> TaskSpec:
    return TaskSpec(
        name=category,
        title=f"BFCL {_TITLES[category]}",
        splits=(category,),
        metrics=("accuracy", "turn_accuracy", "n"),
        percent=frozenset({"accuracy", "turn_accuracy"}),
        agent=True,
        description=(
            f"BFCL v4 {category}: {_SHAPES[category]}. Calls executed with BFCL's classes "
            "(the pinned bfcl-eval wheel, `manage.py fetch_bfcl`); an entry passes when every "
            "turn's state and results match the ground truth's."
        ),
        item_metrics=metric_specs(ACCURACY_ITEM, TURNS_ITEM),
        run_metrics=metric_specs(ACCURACY_RUN, TURNS_RUN, N_RUN),
        native=True,
    )


TASKS: dict[str, TaskSpec] = {category: _spec(category) for category in MULTI_TURN_CATEGORIES}


@cache
def _texts() -> dict[str, Any]:
    with PROMPTS.open("rb") as handle:
        return tomllib.load(handle)


# --- the wheel ----------------------------------------------------------------------------------

_CHECKED: dict[tuple[str, int, int], Path] = {}


def _missing(folder: Path) -> ValueError:
    return ValueError(
        "BFCL's multi-turn tasks execute the model's calls with BFCL's own classes, read from "
        f"the pinned bfcl-eval wheel, which is not in {folder}: run "
        "`python manage.py fetch_bfcl` first"
    )


def wheel_source(directory: Path | None = None) -> Path:
    """The pinned bfcl-eval wheel whose classes execute the calls (`.data/bfcl/` of the
    checkout), its sha256 checked once per version of the file. Raises ValueError saying to run
    `manage.py fetch_bfcl` when it is not there, or why it is refused (a wrong hash)."""
    folder = directory if directory is not None else ROOT / DEFAULT_DIR
    path = folder / WHEEL_NAME
    try:
        stat = path.stat()
    except OSError:
        raise _missing(folder) from None
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key not in _CHECKED:
        try:
            found = find_wheel(folder)
        except WheelError as exc:
            raise ValueError(str(exc)) from None
        if found is None:
            raise _missing(folder)
        _CHECKED[key] = found
    return _CHECKED[key]


def prepare_entries(items: Sequence[Item], ctx: Context) -> list[dict[str, Any]]:
    """At launch: the wheel must be there (ValueError naming `manage.py fetch_bfcl`, which the
    platform shows as the launch's refusal); each item's context records the wheel's version."""
    wheel_source()
    return [{"bfcl_eval": PINNED_VERSION} for _ in items]


# --- what the model is offered ------------------------------------------------------------------


def _hinted(docs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    hinted = copy.deepcopy([dict(doc) for doc in docs])
    for doc in hinted:
        doc["description"] = str(doc.get("description", "")) + _texts()["hint"]["python"]
    return hinted


def _entry_docs(item: Item) -> list[dict[str, Any]]:
    functions = item.input.get("functions")
    return [f for f in functions if isinstance(f, dict)] if isinstance(functions, list) else []


def _offered(item: Item, turn: int) -> list[dict[str, Any]]:
    """The docs offered at `turn`: the entry's with the Python hint, then the held-out ones
    added so far as published (BFCL sets them aside before it adds the hint)."""
    entry = _entry_docs(item)
    every = functions_at(item.input, turn)
    return _hinted(entry) + copy.deepcopy(every[len(entry) :])


def _held_at(item: Item, turn: int) -> list[dict[str, Any]]:
    missed = item.input.get("missed_functions")
    held = missed.get(str(turn)) if isinstance(missed, Mapping) else None
    return [doc for doc in held if isinstance(doc, dict)] if isinstance(held, list) else []


def _turns(item: Item) -> list[list[dict[str, Any]]]:
    question = item.input.get("question")
    turns = question if isinstance(question, list) else []
    return [
        [
            {"role": str(m.get("role", "user")), "content": str(m.get("content", ""))}
            for m in turn
            if isinstance(m, dict)
        ]
        for turn in turns
        if isinstance(turn, list)
    ]


def opening_prompt(item: Item, ctx: Context, context: dict[str, Any]) -> Prompt:
    """The first request of text mode: BFCL's system prompt with the entry's docs, and the
    first turn's messages (what evaluate.prompt_mode builds)."""
    return prompt_mode(item, ctx, context)


def parse_text(text: str, item: Item, ctx: Context, context: dict[str, Any]) -> Outcome:
    """A lone text is no answer to a conversation: unparsed, scored 0."""
    return Outcome(output=text, answer=None, parsed=False, note=NOT_A_CONVERSATION)


# --- calls as BFCL executes them ----------------------------------------------------------------


def call_text(call: Call) -> str:
    """A decoded call as BFCL writes it to execute it: `name(k=repr(v),...)`."""
    arguments = ",".join(f"{key}={value!r}" for key, value in call.arguments.items())
    return f"{call.name}({arguments})"


@dataclass
class Step:
    """One answer of the model: its text, its tool_calls as sent (native), the assistant
    message for the history, and the calls to execute (none: the turn ends) or why not."""

    text: str
    assistant: dict[str, Any]
    decoded: tuple[Call, ...]
    ended: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)

    @property
    def calls(self) -> list[str]:
        return [call_text(call) for call in self.decoded]


def _calls_of(decoded: Decoded) -> tuple[tuple[Call, ...], str]:
    if isinstance(decoded, DecodeFailure):
        return (), f"the answer does not decode ({decoded.reason}): the turn ends"
    if not decoded:
        return (), "no call: the turn ends"
    return decoded, ""


@dataclass
class Mode:
    """What differs between BFCL's two modes in the conversation."""

    opening: Callable[[Item, Context, dict[str, Any]], list[dict[str, Any]]]
    added: Callable[[list[dict[str, Any]]], dict[str, Any]]
    ask: Callable[[list[dict[str, Any]], list[dict[str, Any]]], Awaitable[Step]]
    results: Callable[[Step, list[str], list[str]], list[dict[str, Any]]]


def text_mode(complete: Complete) -> Mode:
    def opening(item: Item, ctx: Context, context: dict[str, Any]) -> list[dict[str, Any]]:
        return list(opening_prompt(item, ctx, context).messages)

    def added(docs: list[dict[str, Any]]) -> dict[str, Any]:
        text = str(_texts()["multi_turn"]["prompt_added"]).replace("{functions}", str(docs))
        return {"role": "user", "content": text}

    async def ask(messages: list[dict[str, Any]], docs: list[dict[str, Any]]) -> Step:
        text = await complete(Prompt(messages=copy.deepcopy(messages)))
        calls, ended = _calls_of(decode_prompt(text))
        return Step(text, {"role": "assistant", "content": text}, calls, ended)

    def results(step: Step, calls: list[str], observations: list[str]) -> list[dict[str, Any]]:
        rows = [
            {"role": "tool", "name": call, "content": observation}
            for call, observation in zip(calls, observations, strict=False)
        ]
        return [{"role": "user", "content": repr(rows)}]

    return Mode(opening, added, ask, results)


def native_mode(ask_native: AskNative) -> Mode:
    def opening(item: Item, ctx: Context, context: dict[str, Any]) -> list[dict[str, Any]]:
        return (_turns(item) or [[]])[0]

    def added(docs: list[dict[str, Any]]) -> dict[str, Any]:
        return {"role": "user", "content": str(_texts()["multi_turn"]["fc_added"])}

    async def ask(messages: list[dict[str, Any]], docs: list[dict[str, Any]]) -> Step:
        declared = declarations(docs)
        turn = await ask_native(Prompt(messages=copy.deepcopy(messages), tools=declared.tools))
        tool_calls = [dict(c) for c in turn.tool_calls or [] if isinstance(c, Mapping)]
        decoded = decode_tool_calls(tool_calls or None, turn.text)
        if not isinstance(decoded, DecodeFailure):
            decoded = restore_names(decoded, [str(doc.get("name", "")) for doc in docs])
        calls, ended = _calls_of(decoded)
        assistant: dict[str, Any] = {"role": "assistant", "content": turn.text}
        if tool_calls:
            assistant = {
                "role": "assistant",
                "content": turn.text or None,
                "tool_calls": tool_calls,
            }
        return Step(turn.text, assistant, calls, ended, tool_calls)

    def results(step: Step, calls: list[str], observations: list[str]) -> list[dict[str, Any]]:
        return [
            {
                "role": "tool",
                "content": observation,
                "tool_call_id": str(tool_call.get("id") or f"call_{number}"),
            }
            for number, (tool_call, observation) in enumerate(
                zip(step.tool_calls, observations, strict=False), start=1
            )
        ]

    return Mode(opening, added, ask, results)


async def _in_thread(function: Callable[..., Any], *args: Any) -> Any:
    return await asyncio.to_thread(function, *args)


def _execute(session: WorkerSession, calls: Sequence[str]) -> list[str]:
    """Each call's result, in order: one call at a time, so that a call the worker cannot read
    (its "Error: ..." comes after the others' results) keeps its place."""
    return [(session.call([call]) or ["Error: no result"])[0] for call in calls]


@dataclass
class Record:
    """What a solve loop keeps of an item: its trace rows, the tool_calls sent (native), and
    the text of the model's last answer."""

    trace: list[dict[str, Any]] = field(default_factory=list)
    sent: list[dict[str, Any]] = field(default_factory=list)
    last_text: str = ""


@dataclass
class TurnSteps:
    """What one turn's steps gave: the calls executed per step, the text of the answer that
    ended the turn (None: none did), and why the loop stopped without one: forced to quit at
    the step limit (`quit_reason`) or stopped by the executor (`stopped`)."""

    calls: list[list[str]]
    final: str | None
    quit_reason: str = ""
    stopped: str = ""


class StepsStopped(Exception):
    """Raised by an executor: the turn cannot go on (its message says why)."""


# step, where (the row's turn and step) -> the calls' observations, in order, and their trace
# rows (each with "action", "arguments", "call", "observation")
Executor = Callable[[Step, dict[str, Any]], Awaitable[tuple[list[str], list[dict[str, Any]]]]]


async def step_turn(
    mode: Mode,
    messages: list[dict[str, Any]],
    docs: list[dict[str, Any]],
    execute: Executor,
    at: dict[str, Any],
    record: Record,
    calls: list[list[str]] | None = None,
) -> TurnSteps:
    """One turn, step after step, as BFCL's handlers run it: the model is asked, its calls are
    executed and their results sent back, until an answer without a call (or one that does
    not decode) ends the turn, or more than STEP_LIMIT steps that called something force the
    model to quit. `messages` grows with the turn; `record` keeps a row per executed call (the
    step's answer as `output` on its first), a `stop` row for the answer that ended the turn
    and an `error` row for a forced quit or a stop; `at` is what every row starts with (its
    turn, for one). Each step's calls are appended to `calls` as they are executed (the
    caller's list keeps them when the worker stops mid-turn)."""
    calls = [] if calls is None else calls
    while True:
        step = await mode.ask(messages, docs)
        messages.append(step.assistant)
        record.sent.extend(step.tool_calls)
        record.last_text = step.text
        where = {**at, "step": len(calls)}
        if not step.decoded:
            record.trace.append({**where, "stop": step.ended, "output": step.text})
            return TurnSteps(calls, step.text)
        try:
            observations, rows = await execute(step, where)
        except StepsStopped as exc:
            record.trace.append({**where, "error": str(exc)})
            return TurnSteps(calls, None, stopped=str(exc))
        if rows:
            rows[0]["output"] = step.text
        record.trace.extend(rows)
        calls.append(step.calls)
        messages.extend(mode.results(step, step.calls, observations))
        if len(calls) > STEP_LIMIT:
            turn = f" in turn {at['turn']}" if "turn" in at else ""
            reason = f"the model was forced to quit after {STEP_LIMIT} steps{turn}"
            record.trace.append({**where, "error": reason})
            return TurnSteps(calls, None, quit_reason=reason)


def session_executor(session: Any) -> Executor:
    """An executor running a step's calls in a worker session (multi_turn.WorkerSession, the
    memory backend's), one call at a time (`_execute`)."""

    async def execute(step: Step, where: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]]]:
        observations = await _in_thread(_execute, session, step.calls)
        rows = [
            {
                **where,
                "action": call.name,
                "arguments": jsonable(call.arguments),
                "call": text,
                "observation": observation,
            }
            for call, text, observation in zip(step.decoded, step.calls, observations, strict=True)
        ]
        return observations, rows

    return execute


async def _converse(item: Item, ctx: Context, context: dict[str, Any], mode: Mode) -> Outcome:
    entry = entry_of(item)
    source = wheel_source()
    session: WorkerSession = await _in_thread(WorkerSession, source, entry)
    record = Record()
    model_turns: list[list[list[str]]] = []
    quit_reason = ""
    execute = session_executor(session)
    try:
        messages: list[dict[str, Any]] = []
        for turn, turn_messages in enumerate(_turns(item)):
            held = _held_at(item, turn)
            if turn == 0:
                # The first request: the first turn's messages (text mode: after BFCL's system
                # prompt, the entry's own system text merged into it).
                messages = mode.opening(item, ctx, context)
            else:
                messages.extend([mode.added(held)] if held else turn_messages)
            steps: list[list[str]] = []
            model_turns.append(steps)
            await _in_thread(session.begin_turn)
            done = await step_turn(
                mode, messages, _offered(item, turn), execute, {"turn": turn}, record, steps
            )
            quit_reason = done.quit_reason
            await _in_thread(session.end_turn)
            if quit_reason:
                break
        verdict = await _in_thread(session.score)
    except WorkerStopped:
        verdict = await _in_thread(session.score)
    finally:
        await _in_thread(session.close)
    return _outcome(verdict, model_turns, record.trace, record.last_text, quit_reason, record.sent)


def _outcome(
    verdict: Mapping[str, Any],
    model_turns: list[list[list[str]]],
    trace: list[dict[str, Any]],
    last_text: str,
    quit_reason: str,
    sent: list[dict[str, Any]],
) -> Outcome:
    keep = (
        "turn",
        "passed",
        "kind",
        "reason",
        "state_diff",
        "state_diff_omitted",
        "missing",
        "bfcl_equal",
        "refused",
    )
    verdicts = [
        {key: turn.get(key) for key in keep}
        for turn in verdict.get("turns", [])
        if isinstance(turn, Mapping)
    ]
    trace = _with_verdicts(trace, verdicts, turn_states_of(verdict))
    passed = verdict.get("passed") is True and not quit_reason
    reason = quit_reason or str(verdict.get("reason", ""))
    answer = {
        "passed": passed,
        "turn_accuracy": float(verdict.get("turn_accuracy") or 0.0),
        "reason": reason,
        "force_terminated": bool(verdict.get("force_terminated")),
        "force_quit": bool(quit_reason),
        "turns": model_turns,
        "verdicts": verdicts,
    }
    if verdict.get("worker_failed"):
        answer["worker_failed"] = True
    outcome = Outcome(output=last_text, answer=answer, trace=trace, note="" if passed else reason)
    if sent:
        outcome.tool_calls = sent
    return outcome


# A state's attribute longer than this many characters of JSON is stored clipped
# (stateful.bounded_snapshot): a turn's states are kept with its verdict for the step review.
STATE_VALUE_CHARS = 2000


def turn_states_of(result: Mapping[str, Any]) -> list[tuple[Any, Any]] | None:
    """(state before, state after) of each turn of the model's calls that a verdict
    (multi_turn.run_entry's result: the calls executed again on fresh instances) recorded, each
    attribute bounded; None when the worker failed or recorded none. What the step review shows
    around a turn (traces.py), kept with the turn's verdict when the entry is scored."""
    model = result.get("model") if not result.get("worker_failed") else None
    recorded = model.get("turns") if isinstance(model, Mapping) else None
    if not isinstance(recorded, list):
        return None
    return [
        (
            bounded_snapshot(turn.get("before"), STATE_VALUE_CHARS),
            bounded_snapshot(turn.get("after"), STATE_VALUE_CHARS),
        )
        for turn in recorded
        if isinstance(turn, Mapping)
    ]


def _with_verdicts(
    trace: list[dict[str, Any]],
    verdicts: list[dict[str, Any]],
    states: Sequence[tuple[Any, Any]] | None = None,
) -> list[dict[str, Any]]:
    """The steps with, after each turn's, a row saying whether the turn passed and why (as
    `stop` when it passed, `error` when it failed: how a trace is shown), and the state before
    and after the turn when the verdict recorded it (`state_before`, `state_after`: what the
    step review shows, never recomputed then)."""
    rows: list[dict[str, Any]] = []
    by_turn = {v.get("turn"): v for v in verdicts}
    turns = sorted({row["turn"] for row in trace} | {t for t in by_turn if isinstance(t, int)})
    for turn in turns:
        rows.extend(row for row in trace if row["turn"] == turn)
        found = by_turn.get(turn)
        if found is None:
            continue
        said = f"turn {turn} {'passed' if found.get('passed') else 'failed'}: {found.get('reason')}"
        row = {"turn": turn, "verdict": bool(found.get("passed"))} | (
            {"stop": said} if found.get("passed") else {"error": said}
        )
        if states is not None and 0 <= turn < len(states):
            row["state_before"], row["state_after"] = states[turn]
        rows.append(row)
    return rows


async def text_converse(
    item: Item, ctx: Context, context: dict[str, Any], complete: Complete
) -> Outcome:
    """The entry in BFCL's Prompt mode (see the module docstring)."""
    return await _converse(item, ctx, context, text_mode(complete))


async def native_converse(
    item: Item, ctx: Context, context: dict[str, Any], ask: AskNative
) -> Outcome:
    """The entry in BFCL's FC mode (see the module docstring)."""
    return await _converse(item, ctx, context, native_mode(ask))


# --- the score ----------------------------------------------------------------------------------


def score_entry(
    outcome: Outcome | None, item: Item, ctx: Context, context: dict[str, Any]
) -> Scores:
    """BFCL's verdict stored with the outcome: accuracy 100 when every turn passed; the percent
    of turns passed. No verdict (a failed call, a lone text): 0 and 0."""
    answer = outcome.answer if outcome is not None else None
    if not isinstance(answer, Mapping) or "passed" not in answer:
        return {"accuracy": 0.0, "turn_accuracy": 0.0}
    fraction = answer.get("turn_accuracy")
    share = float(fraction) if isinstance(fraction, int | float) else 0.0
    return {
        "accuracy": 100.0 if answer["passed"] is True else 0.0,
        "turn_accuracy": round(100.0 * share, 2),
    }


def aggregate_entries(scored: Sequence[Scored], ctx: Context) -> Scores:
    accuracy = mean([s.scores.get("accuracy") for s in scored])
    turns = mean([s.scores.get("turn_accuracy") for s in scored])
    return {
        "accuracy": None if accuracy is None else round(accuracy, 2),
        "turn_accuracy": None if turns is None else round(turns, 2),
        "n": float(len(scored)),
    }


def mean_entry_metrics(ctx: Context) -> dict[str, int | None]:
    return {"accuracy": 2, "turn_accuracy": 2}


# --- the ground truth, as a model that replays it answers ---------------------------------------


def _parameter_names(item: Item) -> dict[str, list[str]]:
    names: dict[str, list[str]] = {}
    missed = item.input.get("missed_functions")
    held = [d for docs in missed.values() for d in docs] if isinstance(missed, Mapping) else []
    for doc in [*_entry_docs(item), *held]:
        if not isinstance(doc, Mapping):
            continue
        parameters = doc.get("parameters")
        properties = parameters.get("properties") if isinstance(parameters, Mapping) else None
        names.setdefault(str(doc.get("name", "")), list(properties or {}))
    return names


def gold_steps(item: Item) -> list[list[list[Call]]]:
    """Per turn, the steps of a model that replays the ground truth: its calls in one step, then
    an answer without a call that ends the turn (a turn without ground-truth calls: that answer
    alone). Positional arguments are named after the doc's parameters, in their order."""
    names = _parameter_names(item)
    turns: list[list[list[Call]]] = []
    for turn in item.reference if isinstance(item.reference, list) else []:
        calls = []
        for text in turn:
            parsed = parse_call(text)
            arguments = dict(zip(names.get(parsed.name, []), parsed.args, strict=False))
            calls.append(Call(parsed.name, {**arguments, **parsed.kwargs}))
        turns.append([calls, []] if calls else [[]])
    return turns


def gold_text_of(calls: Sequence[Call]) -> str:
    """One step's calls as Prompt mode's answer (no call: the empty answer)."""
    return "[" + ", ".join(call_text(call) for call in calls) + "]" if calls else ""


def gold_tool_calls_of(calls: Sequence[Call], step: int = 0) -> list[dict[str, Any]]:
    """One step's calls as FC mode's tool_calls (ids unique per step)."""
    return [
        {
            "id": f"call_{step}_{number}",
            "type": "function",
            "function": {"name": fc_name(call.name), "arguments": json.dumps(call.arguments)},
        }
        for number, call in enumerate(calls, start=1)
    ]
