"""BFCL's analyses of a run.

AST tasks (`error_types`): why the items it got wrong are wrong, by the platform's error kind
of BFCL's checker's verdict (checker.ErrorKind: a decoding failure, a wrong count of calls, the
wrong function, a required parameter missing, an unexpected parameter, a wrong type, a wrong
value, a call where none was due, no call where one was), and items whose model call failed.
The same analysis for every AST task: the verdict is recomputed from the stored answer as the
score was (evaluate.verdict, in the run's mode).

Multi-turn tasks, read from each entry's stored verdicts (conversation.py: `answer.verdicts`,
one per ground-truth turn, with the `kind` of rule that decided it, benchmarks/kit/stateful.py):

- `turns`: by turn index (0 = the first), the entries that have that turn (n), the % of them
  whose turn passed, and the % whose every turn up to it passed (how far entries get);
- `classes`: by involved class (GorillaFileSystem, TwitterAPI ...; an entry counts under each
  of its classes, so the groups overlap), the entries' accuracy and turn accuracy;
- `turn_errors`: each failed entry's error: forced to quit at the step limit, else the kind of
  its first failed turn (no call where the ground truth calls, a state that differs, a result
  missing, a turn not finished); or no verdict: a worker that failed, no conversation, a
  failed call;
- `failed_turns`: every failed turn by its verdict's kind: the number of turns, their share of
  all failed turns, and the entries with such a turn (n)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchmarks.kit.analyses import (
    COUNT,
    GROUP,
    Analysis,
    AnalysisInput,
    AnalysisMetric,
    RecordValue,
    Row,
    ScoreBreakdown,
    natural_key,
    rate,
    score_of,
    shares,
)
from benchmarks.kit.protocol import Context, Scored
from benchmarks.suites.bfcl.checker import ERROR_KINDS
from benchmarks.suites.bfcl.conversation import MULTI_TURN_CATEGORIES
from benchmarks.suites.bfcl.evaluate import AST_CATEGORIES, verdict

__all__ = [
    "ANALYSES",
    "ERROR_TYPES",
    "TURN_ERRORS",
    "entry_error",
    "error_type",
    "turn_verdicts",
    "wrong",
]

FAILED = "failed_call"
ERROR_TYPES: tuple[str, ...] = (*ERROR_KINDS, FAILED)


def wrong(record: Scored, ctx: Context) -> bool:
    """The items the run's accuracy counts as wrong (a failed call among them)."""
    return record.scores.get("accuracy") != 100.0


def error_type(record: Scored, ctx: Context) -> str:
    if record.outcome is None:
        return FAILED
    kind = verdict(record.outcome, record.item, ctx).kind
    return kind or "passed"


def _errors(data: AnalysisInput) -> list[Row]:
    records = [record for record in data.records if wrong(record, data.ctx)]
    return shares(records, lambda record: error_type(record, data.ctx), order=ERROR_TYPES)


def wrong_error(record: Scored, ctx: Context) -> str | None:
    """A wrong answer's error type; None for a right one."""
    return error_type(record, ctx) if wrong(record, ctx) else None


ERRORS = Analysis(
    name="error_types",
    title="Error types of wrong answers",
    by="error_type",
    by_title="error type",
    metrics=(AnalysisMetric("share", "share of wrong answers (%)"),),
    compute=_errors,
    covers=wrong,
    # each answer's error type computed once and kept with it: counted in the database
    score_breakdown=ScoreBreakdown(
        by_sample=RecordValue("error_type", wrong_error), scores={}, share="share"
    ),
    group_order=ERROR_TYPES,
    description="Each wrong answer's error as BFCL's AST checker finds it (its first failing "
    "check), in the platform's kinds; failed_call: the endpoint gave no answer. n counts items.",
)

# --- multi-turn ---------------------------------------------------------------------------------

# A failed entry's error: the model was forced to quit (more than 20 steps in a turn, whatever
# its turns' verdicts), else the kind of its first failed turn (stateful.TurnKind); or why there
# is no verdict: the worker that executes the calls failed, the answer was no conversation (a
# lone text), the endpoint gave no answer.
TURN_ERRORS: tuple[str, ...] = (
    "step_limit",
    "no_calls",
    "state",
    "results",
    "missing_turn",
    "worker_failed",
    "unparsed",
    FAILED,
)


def turn_verdicts(record: Scored) -> list[Mapping[str, Any]]:
    """The entry's stored per-turn verdicts, in turn order ([] when it has none: a failed
    call, a lone text, a worker that failed)."""
    answer = record.outcome.answer if record.outcome is not None else None
    found = answer.get("verdicts") if isinstance(answer, Mapping) else None
    if not isinstance(found, list):
        return []
    turns = [v for v in found if isinstance(v, Mapping) and isinstance(v.get("turn"), int)]
    return sorted(turns, key=lambda v: int(v["turn"]))


def _checked(record: Scored, ctx: Context) -> bool:
    return bool(turn_verdicts(record))


def entry_error(record: Scored, ctx: Context) -> str:
    """A failed entry's error (TURN_ERRORS; see there)."""
    if record.outcome is None:
        return FAILED
    answer = record.outcome.answer
    if not isinstance(answer, Mapping) or "passed" not in answer:
        return "unparsed"
    if answer.get("worker_failed"):
        return "worker_failed"
    if answer.get("force_quit"):
        return "step_limit"
    for turn in turn_verdicts(record):
        if turn.get("passed") is not True:
            return str(turn.get("kind") or "state")
    # no turn failed, yet the entry did: its turns are not the ground truth's
    return "missing_turn"


def _turns(data: AnalysisInput) -> list[Row]:
    by_turn: dict[int, list[tuple[bool, bool]]] = {}
    for record in data.records:
        so_far = True
        for turn in turn_verdicts(record):
            passed = turn.get("passed") is True
            so_far = so_far and passed
            by_turn.setdefault(int(turn["turn"]), []).append((passed, so_far))
    return [
        {
            GROUP: index,
            COUNT: len(found),
            "passed": rate([1.0 if passed else 0.0 for passed, _ in found]),
            "all_passed": rate([1.0 if so_far else 0.0 for _, so_far in found]),
        }
        for index, found in sorted(by_turn.items())
    ]


TURNS = Analysis(
    name="turns",
    title="Turns passed by turn index",
    by="turn",
    by_title="turn (0 = the first)",
    metrics=(
        AnalysisMetric("passed", "turn passed (%)"),
        AnalysisMetric("all_passed", "every turn so far passed (%)"),
    ),
    compute=_turns,
    reads=("answer",),  # the verdicts stored in the answer
    chart="line",
    covers=_checked,
    partition=False,
    description="Per turn index, the entries that have that turn (n), the % whose turn passed "
    "BFCL's check, and the % whose every turn up to it passed. Entries without verdicts (a "
    "failed call, a lone text, a worker that failed) are left out.",
)


def _classes_of(record: Scored) -> list[str]:
    found = record.item.metadata.get("involved_classes")
    return [str(name) for name in found] if isinstance(found, list | tuple) else []


def _classes(data: AnalysisInput) -> list[Row]:
    names = sorted({name for r in data.records for name in _classes_of(r)}, key=natural_key)
    accuracy, turns = score_of("accuracy"), score_of("turn_accuracy")
    rows: list[Row] = []
    for name in names:
        members = [r for r in data.records if name in _classes_of(r)]
        rows.append(
            {
                GROUP: name,
                COUNT: len(members),
                # the stored scores are percentages already
                "accuracy": rate([accuracy(r) for r in members], percent=False),
                "turn_accuracy": rate([turns(r) for r in members], percent=False),
            }
        )
    return rows


CLASSES = Analysis(
    name="classes",
    title="Accuracy by involved class",
    by="involved_class",
    by_title="involved class",
    metrics=(
        AnalysisMetric("accuracy", "accuracy (%)"),
        AnalysisMetric("turn_accuracy", "turn accuracy (%)"),
    ),
    compute=_classes,
    reads=("metadata", "answer"),  # the involved classes, the verdicts
    partition=False,
    description="Per class of BFCL's simulated systems an entry involves, those entries' "
    "accuracy (every turn passed) and turn accuracy; an entry involving two classes counts "
    "under both, and a failed call counts 0 as in the run's figures.",
)


def failed_entry_error(record: Scored, ctx: Context) -> str | None:
    """A failed entry's error; None for an entry that passed."""
    return entry_error(record, ctx) if wrong(record, ctx) else None


def _turn_errors(data: AnalysisInput) -> list[Row]:
    failed = [record for record in data.records if wrong(record, data.ctx)]
    return shares(failed, lambda record: entry_error(record, data.ctx), order=TURN_ERRORS)


TURN_ERROR_TYPES = Analysis(
    name="turn_errors",
    title="Error types of failed entries",
    by="error_type",
    by_title="error type",
    metrics=(AnalysisMetric("share", "share of failed entries (%)"),),
    compute=_turn_errors,
    covers=wrong,
    # each failed entry's error computed once and kept with it: counted in the database
    score_breakdown=ScoreBreakdown(
        by_sample=RecordValue("entry_error", lambda record, ctx: failed_entry_error(record, ctx)),
        scores={},
        share="share",
    ),
    group_order=TURN_ERRORS,
    description="Each failed entry's error: step_limit (forced to quit after 20 steps in a "
    "turn), else its first failed turn by the rule that failed it: no_calls (the ground truth "
    "calls, the model did not), state (a system's state differs from the ground truth's), "
    "results (a result of the ground truth's calls is not among the model's), missing_turn "
    "(the model did not finish the turn); or worker_failed, unparsed (no conversation), "
    "failed_call (no answer). n counts entries.",
)

# The kinds of a failed turn's verdict (stateful.TurnKind), in the order the check tries them.
FAILED_TURN_KINDS: tuple[str, ...] = ("no_calls", "state", "results", "missing_turn")


def _failed_turns(data: AnalysisInput) -> list[Row]:
    counts: dict[str, int] = {}
    entries: dict[str, int] = {}
    for record in data.records:
        kinds = [
            str(turn.get("kind") or "state")
            for turn in turn_verdicts(record)
            if turn.get("passed") is not True
        ]
        for kind in kinds:
            counts[kind] = counts.get(kind, 0) + 1
        for kind in set(kinds):
            entries[kind] = entries.get(kind, 0) + 1
    total = sum(counts.values())
    rank = {kind: index for index, kind in enumerate(FAILED_TURN_KINDS)}
    kinds = sorted(counts, key=lambda k: (rank.get(k, len(rank)), natural_key(k)))
    return [
        {
            GROUP: kind,
            COUNT: entries[kind],
            "turns": counts[kind],
            "share": round(100.0 * counts[kind] / total, 2),
        }
        for kind in kinds
    ]


FAILED_TURNS = Analysis(
    name="failed_turns",
    title="Failed turns by verdict kind",
    by="verdict_kind",
    by_title="verdict kind",
    metrics=(
        AnalysisMetric("turns", "failed turns", percent=False),
        AnalysisMetric("share", "share of failed turns (%)"),
    ),
    compute=_failed_turns,
    covers=_checked,
    reads=("answer",),  # the verdicts stored in the answer
    group_order=FAILED_TURN_KINDS,
    partition=False,
    description="Every failed turn of every entry, by the rule that failed it (no_calls, "
    "state, results, missing_turn: see the error types): how many turns, their share of all "
    "failed turns, and n, the entries with at least one such turn.",
)

MULTI_TURN_ANALYSES: tuple[Analysis, ...] = (TURNS, CLASSES, TURN_ERROR_TYPES, FAILED_TURNS)

ANALYSES: dict[str, tuple[Analysis, ...]] = {
    **{category: (ERRORS,) for category in AST_CATEGORIES},
    **{category: MULTI_TURN_ANALYSES for category in MULTI_TURN_CATEGORIES},
}
