"""BFCL's agentic memory categories (memory_kv, memory_rec_sum) as tasks, and why memory_vector
has none (NOT_RUN); the web search categories are web_search.py's, which shares BFCL's agentic
checker (`agentic_match`) and answer format with these. Pure Python; never evaluates a model's
text.

An imported `memory` entry is a question of a scenario (student, customer, finance,
healthcare, notetaker) whose prerequisite conversation (input["prereq_conversation"]: BFCL's
`memory_prereq_conversation/memory_<scenario>.json`) tells the facts it asks about. Each task
runs an entry with one of BFCL's memory backends (`memory_backend.py`: its own classes from the
pinned wheel, in a worker under limits), as BFCL's handlers run it:

- The prerequisite entries first, in order, each a multi-turn conversation like
  conversation.py's (the same steps in each mode, the same STEP_LIMIT that forces the model to
  quit an entry): its instance starts from the snapshot the previous entry flushed (empty for
  the first), and its memory is flushed after its last turn, so that the next entry, and then
  the question, start from it.
- The system prompt of every entry is BFCL's memory prompt (prompts/memory.toml: the scenario's
  setting and the memory as the backend shows it when the entry starts: kv its core memory,
  rec_sum its whole memory); a question's adds BFCL's answer format text after it. The offered
  functions are the backend's docs (input["functions_by_backend"][backend]) with the Python
  hint. Text mode (Prompt mode): BFCL's system prompt with the docs before it
  (evaluate.prompt_mode); native mode (FC mode): the docs declared as tools.
- The question, one turn: the model may call the memory functions (on its own instance: a
  question's calls are never flushed); the answer that ends the turn (one that decodes to no
  call) is its final answer. BFCL's agentic checker scores it (`agentic_match`): the answer
  passes when one of the accepted answers, standardised, occurs in it, standardised, between
  word boundaries. A question the model was forced to quit has no final answer and fails, as
  in BFCL ("agentic:no_last_message").

The platform's run model: items are independent (any worker, in any order, a lost worker's item
redone), so each item replays its scenario's prerequisite conversation in its own worker before
its question. The replays cost nothing after the first: their requests are the same, so the
response cache answers them, and the memory each question starts from is the same, as in BFCL,
where one prerequisite run per scenario and backend serves every question. Items of one
scenario answered in one worker process wait for each other's prerequisite phase (a lock per
scenario, backend and mode) so that they meet the cache; items started at the same time in
different processes each ask the model, and with a sampling model their memories can differ.
Each prediction keeps its memory after the prerequisite phase and its digest
(`answer.memory_digest`), so that this shows.

Per item `accuracy` 100 or 0; per run its mean and `n`. The Outcome: `answer` = {"passed",
"reason", "final_answer", "answers" (the accepted), "memory" (the snapshot the question started
from), "memory_digest", "prereq" (per prerequisite entry: id, the model's calls per turn and
step, force_quit), "calls" (the question's, per step), "worker_failed" when the backend's
worker was stopped (killed, out of time or memory: the item fails, saying so)}; `trace` = the
steps of every entry, each row naming its `entry` (BFCL's id) and `phase` ("prereq" or
"question") beside conversation.py's fields; `note` = the reason when it failed.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import re
import tomllib
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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
from benchmarks.suites.bfcl.conversation import (
    NOT_A_CONVERSATION,
    Mode,
    Record,
    native_mode,
    session_executor,
    step_turn,
    text_mode,
    wheel_source,
)
from benchmarks.suites.bfcl.evaluate import offered_docs, prompt_mode
from benchmarks.suites.bfcl.memory_backend import MemorySession, bfcl_id
from benchmarks.suites.bfcl.multi_turn import WorkerStopped
from benchmarks.suites.bfcl.wheel import PINNED_VERSION

__all__ = [
    "BACKENDS",
    "MEMORY_CATEGORIES",
    "NOT_RUN",
    "TASKS",
    "accepted_answers",
    "agentic_match",
    "aggregate_memory",
    "answer_format",
    "final_verdict",
    "mean_memory_metrics",
    "memory_prompt",
    "native_memory",
    "opening_prompt",
    "parse_text",
    "prepare_memory",
    "score_memory",
    "standardize",
    "text_memory",
]

MEMORY_CATEGORIES: tuple[str, ...] = ("memory_kv", "memory_rec_sum")
BACKENDS = {"memory_kv": "kv", "memory_rec_sum": "rec_sum"}
PROMPTS = Path(__file__).parent / "prompts" / "memory.toml"
NOT_RUN: dict[str, str] = {
    "memory_vector": (
        "BFCL's vector memory backend (MemoryAPI_vector) embeds with sentence-transformers "
        "(all-MiniLM-L6-v2, downloaded at run time) and searches with faiss, which the project "
        "does not install: no task runs it, so it is never scored offline."
    ),
}
"""The agentic categories of BFCL v4 no task runs, each with why. (web_search_base and
web_search_no_snippet run, web_search.py, but are never comparable with BFCL's published
scores: their TaskSpec says why, TaskSpec.not_comparable.)"""

ACCURACY_ITEM = MetricSpec.score(
    "accuracy", description="100 when the final answer holds an accepted answer (BFCL's check)"
)
ACCURACY_RUN = MetricSpec.score(
    "accuracy", description="% of questions whose final answer holds an accepted answer"
)
N_RUN = MetricSpec.count("n", description="questions scored")
_TITLES = {"memory_kv": "Memory (key-value)", "memory_rec_sum": "Memory (recursive summary)"}
_SHAPES = {
    "memory_kv": "a core memory always in context and an archival memory, both key-value",
    "memory_rec_sum": "one text the model appends to, replaces and rewrites",
}


def _spec(category: str) -> TaskSpec:
    return TaskSpec(
        name=category,
        title=f"BFCL {_TITLES[category]}",
        splits=("memory",),
        metrics=("accuracy", "n"),
        percent=frozenset({"accuracy"}),
        agent=True,
        description=(
            f"BFCL v4 {category}: a scenario's prerequisite conversation, remembered with "
            f"BFCL's {BACKENDS[category]} backend ({_SHAPES[category]}), then a question "
            "about it; the final answer passes when it holds an accepted answer. The backend "
            "runs from the pinned bfcl-eval wheel (`manage.py fetch_bfcl`)."
        ),
        item_metrics=metric_specs(ACCURACY_ITEM),
        run_metrics=metric_specs(ACCURACY_RUN, N_RUN),
        native=True,
    )


TASKS: dict[str, TaskSpec] = {category: _spec(category) for category in MEMORY_CATEGORIES}


@cache
def _texts() -> dict[str, Any]:
    with PROMPTS.open("rb") as handle:
        return tomllib.load(handle)


# --- BFCL's agentic checker's rule --------------------------------------------------------------

_PUNCTUATION = re.compile(r"[,./\-_*^()]")


def standardize(text: str) -> str:
    """BFCL's standardisation of an answer (agentic_checker.standardize_string): the
    characters , . / - _ * ^ ( ) removed, lower case, single quotes made double. Whitespace is
    kept (its docstring says otherwise; its code keeps it)."""
    return _PUNCTUATION.sub("", text).lower().replace("'", '"')


def final_verdict(final: str | None, answers: Sequence[str], quit_reason: str) -> tuple[bool, str]:
    """Whether a final answer passes BFCL's agentic check, and why: none (the model was forced
    to quit, `quit_reason`) fails; else it passes when it holds an accepted answer
    (agentic_match)."""
    if final is None:
        return False, f"no final answer: {quit_reason or 'the model never stopped calling'}"
    if agentic_match(final, answers):
        return True, "the final answer holds an accepted answer"
    return False, "none of the accepted answers is in the final answer"


def agentic_match(response: str, answers: Sequence[str]) -> bool:
    """BFCL's agentic check: some accepted answer, standardised, occurs in the standardised
    response between word boundaries (`\\b`)."""
    said = standardize(response)
    return any(re.search(rf"\b{re.escape(standardize(answer))}\b", said) for answer in answers)


# --- the entries ---------------------------------------------------------------------------------


def _scenario(item: Item) -> str:
    return str(item.metadata.get("scenario", ""))


def answer_format() -> str:
    """BFCL's answer format text, which a question's system prompt carries."""
    return str(_texts()["answer_format"])


def accepted_answers(item: Item) -> list[str]:
    """A memory entry's accepted answers (its reference's "answers")."""
    reference = item.reference
    answers = reference.get("answers") if isinstance(reference, Mapping) else None
    return [str(a) for a in answers] if isinstance(answers, list) else []


def _messages(turn: Any) -> list[dict[str, Any]]:
    return [
        {"role": str(m.get("role", "user")), "content": str(m.get("content", ""))}
        for m in (turn if isinstance(turn, list) else [])
        if isinstance(m, Mapping)
    ]


def _turns(entry: Mapping[str, Any]) -> list[list[dict[str, Any]]]:
    question = entry.get("question")
    return [_messages(turn) for turn in question] if isinstance(question, list) else []


def _prereqs(item: Item) -> list[dict[str, Any]]:
    entries = item.input.get("prereq_conversation")
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


def _docs(item: Item, backend: str) -> list[dict[str, Any]]:
    by_backend = item.input.get("functions_by_backend")
    docs = by_backend.get(backend) if isinstance(by_backend, Mapping) else None
    return [d for d in docs if isinstance(d, dict)] if isinstance(docs, list) else []


def memory_prompt(backend: str, scenario: str, memory: str) -> str:
    """BFCL's memory system prompt for `backend` (rec_sum: the unified one; kv and vector:
    core and archival) with the scenario's setting and the memory text."""
    texts = _texts()
    template = str(texts["unified" if backend == "rec_sum" else "core_archival"])
    setting = str(texts["settings"][scenario])
    return template.replace("{scenario_setting}", setting).replace("{memory_content}", memory)


def _first_turn(turn: list[dict[str, Any]], system: str, question: bool) -> list[dict[str, Any]]:
    """The first turn's messages as BFCL sends them: a question gets the answer format as a
    system message first (process_agentic_test_case); then the memory prompt goes before the
    first system message's text, or is one itself (add_memory_instruction_system_prompt)."""
    messages = copy.deepcopy(turn)
    if question:
        messages.insert(0, {"role": "system", "content": answer_format()})
    if messages and messages[0]["role"] == "system":
        messages[0]["content"] = system + "\n\n" + messages[0]["content"]
    else:
        messages.insert(0, {"role": "system", "content": system})
    return messages


# evaluate.prompt_mode reads nothing of its context
_NO_CONTEXT = Context(task=TaskSpec(name="memory", title="memory"))


def _as_item(docs: list[dict[str, Any]], turn: list[dict[str, Any]]) -> Item:
    """An entry as evaluate.py's Prompt mode reads one: its docs and its first turn."""
    return Item(split="memory", external_id="", input={"functions": docs, "question": [turn]})


def _opening(
    docs: list[dict[str, Any]], turn: list[dict[str, Any]], native: bool
) -> list[dict[str, Any]]:
    if native:
        return copy.deepcopy(turn)
    return list(prompt_mode(_as_item(docs, turn), _NO_CONTEXT, {}).messages)


def opening_prompt(item: Item, ctx: Context, context: dict[str, Any], *, backend: str) -> Prompt:
    """The first request of text mode: the first prerequisite entry's first turn (or, without
    one, the question), the memory still empty. `backend` is the task's (tasks.py)."""
    entries = _prereqs(item)
    turns = _turns(entries[0]) if entries else _turns(item.input)
    system = memory_prompt(backend, _scenario(item), _empty_memory(backend))
    first = _first_turn(turns[0] if turns else [], system, question=not entries)
    return Prompt(messages=_opening(_docs(item, backend), first, native=False))


def _empty_memory(backend: str) -> str:
    # What the backends show of an empty memory (_dump_core_memory_to_context).
    if backend == "rec_sum":
        return "There is no content in the memory at this point."
    return "There is no content in the core memory at this point."


def parse_text(text: str, item: Item, ctx: Context, context: dict[str, Any]) -> Outcome:
    """A lone text is no answer: the entry is answered in its conversation."""
    return Outcome(output=text, answer=None, parsed=False, note=NOT_A_CONVERSATION)


def prepare_memory(items: Sequence[Item], ctx: Context, *, backend: str) -> list[dict[str, Any]]:
    """At launch: the wheel must be there (ValueError naming `manage.py fetch_bfcl`); each item
    must name a scenario BFCL has a setting for, bring its prerequisite conversation and the
    backend's docs (ValueError naming the item). Each item's context records the wheel's
    version and the backend."""
    wheel_source()
    settings = _texts()["settings"]
    for item in items:
        scenario = _scenario(item)
        if scenario not in settings:
            raise ValueError(
                f"{item.key}: scenario {scenario!r} has no setting in BFCL's memory prompts "
                f"(known: {', '.join(settings)})"
            )
        if not _docs(item, backend):
            raise ValueError(f"{item.key}: no function docs for the {backend} memory backend")
        if not _prereqs(item):
            raise ValueError(f"{item.key}: no prerequisite conversation for {scenario!r}")
    return [{"bfcl_eval": PINNED_VERSION, "backend": backend} for _ in items]


# --- the conversation ----------------------------------------------------------------------------


@dataclass
class _Entry:
    """An entry's outcome: the model's calls per turn and step, the text of the answer that
    ended its last turn (None: it was forced to quit), and why it was forced to."""

    turns: list[list[list[str]]]
    final: str | None
    quit_reason: str


async def _in_thread(function: Any, *args: Any) -> Any:
    return await asyncio.to_thread(function, *args)


async def _run_entry(
    session: MemorySession,
    mode: Mode,
    messages: list[dict[str, Any]],
    turns: list[list[dict[str, Any]]],
    docs: list[dict[str, Any]],
    where: dict[str, Any],
    record: Record,
) -> _Entry:
    """One entry's turns, step by step, as conversation.py runs a multi-turn entry's."""
    model_turns: list[list[list[str]]] = []
    final: str | None = None
    quit_reason = ""
    execute = session_executor(session)
    for turn, turn_messages in enumerate(turns):
        if turn > 0:
            messages.extend(turn_messages)
        steps: list[list[str]] = []
        model_turns.append(steps)
        await _in_thread(session.begin_turn)
        done = await step_turn(
            mode, messages, docs, execute, {**where, "turn": turn}, record, steps
        )
        final, quit_reason = done.final, done.quit_reason
        await _in_thread(session.end_turn)
        if quit_reason:
            break
    return _Entry(model_turns, final, quit_reason)


_PREREQ_LOCKS: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[str, str, str, str], asyncio.Lock]
] = weakref.WeakKeyDictionary()


def _prereq_lock(backend: str, item: Item, native: bool) -> asyncio.Lock:
    """The lock of a scenario's prerequisite phase in this process and event loop (see the
    module docstring): one per backend, scenario, mode and prerequisite conversation; a loop's
    locks go with it."""
    conversation = hashlib.sha256(json.dumps(_prereqs(item), sort_keys=True).encode()).hexdigest()
    key = (backend, _scenario(item), "native" if native else "text", conversation)
    locks = _PREREQ_LOCKS.setdefault(asyncio.get_running_loop(), {})
    return locks.setdefault(key, asyncio.Lock())


def _digest(snapshot: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(snapshot, sort_keys=True).encode()).hexdigest()[:16]


async def _solve(item: Item, ctx: Context, mode: Mode, native: bool, backend: str) -> Outcome:
    scenario = _scenario(item)
    docs = _docs(item, backend)
    offered = offered_docs(_as_item(docs, []))
    record = Record()
    prereq: list[dict[str, Any]] = []
    snapshot: dict[str, Any] = {}
    session: MemorySession = await _in_thread(MemorySession, wheel_source(), backend, scenario)
    turns = _turns(item.input)
    question = _Entry([], None, "")
    try:
        async with _prereq_lock(backend, item, native):
            for entry in _prereqs(item):
                entry_id = bfcl_id(str(entry.get("id", "")), backend)
                memory = await _in_thread(session.load, entry_id)
                entry_turns = _turns(entry)
                entry_first = _first_turn(
                    entry_turns[0] if entry_turns else [],
                    memory_prompt(backend, scenario, memory),
                    question=False,
                )
                done = await _run_entry(
                    session,
                    mode,
                    _opening(docs, entry_first, native),
                    entry_turns,
                    offered,
                    {"phase": "prereq", "entry": entry_id},
                    record,
                )
                snapshot = await _in_thread(session.flush)
                prereq.append(
                    {"id": entry_id, "turns": done.turns, "force_quit": bool(done.quit_reason)}
                )
        test_id = bfcl_id(item.external_id, backend)
        memory = await _in_thread(session.load, test_id)
        first = _first_turn(
            turns[0] if turns else [], memory_prompt(backend, scenario, memory), True
        )
        messages = _opening(docs, first, native)
        where = {"phase": "question", "entry": test_id}
        question = await _run_entry(
            session, mode, messages, turns[:1] or [[]], offered, where, record
        )
    except WorkerStopped as exc:
        question = _Entry(question.turns, None, f"the memory backend's worker failed ({exc})")
    finally:
        await _in_thread(session.close)
    return _outcome(item, question, prereq, snapshot, record, len(turns), session.stopped)


def _outcome(
    item: Item,
    question: _Entry,
    prereq: list[dict[str, Any]],
    snapshot: dict[str, Any],
    record: Record,
    question_turns: int,
    stopped: str | None = None,
) -> Outcome:
    answers = accepted_answers(item)
    final = question.final
    if stopped is not None:
        passed, reason = False, question.quit_reason
    elif question_turns != 1:
        passed, reason = False, f"a question has one turn; this one has {question_turns}"
    else:
        passed, reason = final_verdict(final, answers, question.quit_reason)
    answer = {
        "passed": passed,
        "reason": reason,
        "final_answer": final,
        "answers": answers,
        "memory": snapshot,
        "memory_digest": _digest(snapshot),
        "prereq": prereq,
        "calls": question.turns[0] if question.turns else [],
    }
    if stopped is not None:
        answer["worker_failed"] = True
    outcome = Outcome(
        output=final if final is not None else record.last_text,
        answer=answer,
        trace=record.trace,
        note="" if passed else reason,
    )
    if record.sent:
        outcome.tool_calls = record.sent
    return outcome


async def text_memory(
    item: Item, ctx: Context, context: dict[str, Any], complete: Complete, *, backend: str
) -> Outcome:
    """The entry with its prerequisite conversation in BFCL's Prompt mode."""
    return await _solve(item, ctx, text_mode(complete), native=False, backend=backend)


async def native_memory(
    item: Item, ctx: Context, context: dict[str, Any], ask: AskNative, *, backend: str
) -> Outcome:
    """The entry with its prerequisite conversation in BFCL's FC mode."""
    return await _solve(item, ctx, native_mode(ask), native=True, backend=backend)


# --- the score -----------------------------------------------------------------------------------


def score_memory(
    outcome: Outcome | None, item: Item, ctx: Context, context: dict[str, Any]
) -> Scores:
    """100 when the stored verdict passed; 0 otherwise (no outcome, a lone text)."""
    answer = outcome.answer if outcome is not None else None
    passed = isinstance(answer, Mapping) and answer.get("passed") is True
    return {"accuracy": 100.0 if passed else 0.0}


def aggregate_memory(scored: Sequence[Scored], ctx: Context) -> Scores:
    accuracy = mean([s.scores.get("accuracy") for s in scored])
    return {
        "accuracy": None if accuracy is None else round(accuracy, 2),
        "n": float(len(scored)),
    }


def mean_memory_metrics(ctx: Context) -> dict[str, int | None]:
    return {"accuracy": 2}
