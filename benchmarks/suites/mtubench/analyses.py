"""MTU-Bench's analyses (papers/001): tool selection by dialogue turn and by number of tools
(Fig. 5), and the error types of wrong turns (Fig. 7, appendix E Table 16).

Groups:
- turn: the turn's number in its dialogue, 1 for the first (the published ids count from 0:
  M-S_7_0 is turn 1), from the importer's metadata or the id's suffix, as Fig. 5a's
  "dialogue turns";
- tools: how many tools the sample's own API list offers (its candidate tools), Fig. 5b;
- error type: a wrong turn's first error, in appendix E's order of checking:
    format      the answer writes a call MTU-Eval cannot read: an Action without its Action
                Input (or the reverse), or an Action Input that is not a JSON object; in a
                native run, a tool call whose arguments are not a JSON object;
    action      the tool names are wrong: "missed" (fewer tools than the gold: no call where
                one was due, or some gold tools left out), "excessive" (more: a call where none
                was due, or tools beyond the gold), "incorrect" (other tools, or the gold tools
                in another order);
    parameter   the right tools in the right order, some arguments wrong;
    no answer   the endpoint gave no answer (the platform's own group: not a model error).
  A wrong turn is one MTU-Eval counts wrong: a single-tool turn without PS, a multi-tool turn
  whose TN or TO is below 1.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchmarks.kit.analyses import (
    Analysis,
    AnalysisInput,
    AnalysisMetric,
    RecordValue,
    Row,
    SampleValue,
    ScoreBreakdown,
    breakdown,
    score_of,
    shares,
)
from benchmarks.kit.protocol import Context, Scored
from benchmarks.suites.mtubench.evaluate import (
    ACTION,
    ACTION_INPUT,
    MULTI_TURN,
    SPLIT_METRICS,
    TURN_METRICS,
    _gold_calls,
    _json_object,
    _multi_tool,
    _predicted_calls,
    _python_words,
    _turn,
    parse_single_call,
)

__all__ = ["ANALYSES", "ERROR_TYPES", "error_type", "wrong_turn"]

MISSED = "action: missed"
EXCESSIVE = "action: excessive"
INCORRECT = "action: incorrect"
PARAMETER = "parameter"
FORMAT = "format"
NO_ANSWER = "no answer"
ERROR_TYPES = (MISSED, EXCESSIVE, INCORRECT, PARAMETER, FORMAT, NO_ANSWER)
NATIVE_FORMAT_PROBLEMS = ("arguments are", "not a tool call")

_TITLES = {
    "TS": "TS (tool selection)",
    "PS": "PS (parameter selection)",
    "TN": "TN (tool number)",
    "TO": "TO (tool order)",
}


def wrong_turn(record: Scored, ctx: Context | None = None) -> bool:
    """Whether MTU-Eval counts the turn wrong (a failed item is wrong)."""
    if record.outcome is None:
        return True
    scores = record.scores
    if "correct" in scores and scores["correct"] is not None:
        return not scores["correct"]
    if _multi_tool(record.item):
        return not (scores.get("TN") == 1.0 and scores.get("TO") == 1.0)
    return not scores.get("PS")


def _unreadable(text: str, multi: bool) -> bool:
    """The answer writes a call in a form MTU-Eval's reader cannot take."""
    if multi:
        for block in text.split(ACTION + " ")[1:]:
            if ACTION_INPUT not in block:
                continue
            raw = block.split(ACTION_INPUT, 2)[1].strip().replace("\n  ", "")
            raw = raw.split("}", 1)[0] + "}"
            if _json_object(_python_words(raw)) is None:
                return True
        return False
    if (ACTION in text) != (ACTION_INPUT in text):
        return True
    return parse_single_call(text).note.startswith("Action Input is not a JSON object")


def error_type(record: Scored) -> str:
    """A wrong turn's error type (see the module's docstring)."""
    outcome = record.outcome
    if outcome is None:
        return NO_ANSWER
    multi = _multi_tool(record.item)
    if outcome.tool_calls is None and _unreadable(outcome.output or "", multi):
        return FORMAT
    # A native answer's tool_calls are read by the platform, which notes what it could not
    # read (benchmarks/kit/native.py): arguments that are no JSON object, or no call at all.
    if outcome.tool_calls is not None and any(
        problem in outcome.note for problem in NATIVE_FORMAT_PROBLEMS
    ):
        return FORMAT
    gold = [name for name in _gold_calls(record.item) if name]
    predicted = [name for name in _predicted_calls(outcome, multi) if name]
    if predicted == gold:
        return PARAMETER
    have, want = set(predicted), set(gold)
    if have < want:
        return MISSED
    if have > want:
        return EXCESSIVE
    return INCORRECT


def _turn_number(record: Scored) -> int:
    # The published ids count a dialogue's turns from 0 (M-S_0_0 is the first).
    return _turn(record.item)[0] + 1


def _tool_count(record: Scored) -> int:
    return len(record.item.candidate_tools)


def _turn_of(turn: Any, suffix: str) -> int:
    """The turn number _turn_number gives of the sample's metadata "turn" and its id's suffix."""
    try:
        return int(turn if turn is not None else suffix) + 1
    except (TypeError, ValueError):
        raise ValueError(f"MTU-Bench turn {turn!r} (id suffix {suffix!r}) is no integer") from None


def _in_database(task: str, *read: SampleValue, group: Any = None) -> ScoreBreakdown:
    """The breakdown of the task's metrics as data: the platform computes it in the database."""
    names = [metric.name for metric in _metrics(task)]
    return ScoreBreakdown(by_sample=read, scores={name: name for name in names}, group=group)


def _metrics(task: str) -> tuple[AnalysisMetric, ...]:
    # OOD mixes single- and multi-tool turns: each metric has values on some turns only, so no
    # group's mean weighs up to the run's figure by the group's size.
    names = TURN_METRICS.get(task, ("TS", "PS", "TN", "TO"))
    whole = task in TURN_METRICS
    return tuple(
        AnalysisMetric(name, _TITLES[name], mean_of=name if whole else None) for name in names
    )


def _by(group_of: Callable[[Scored], Any], task: str) -> Callable[[AnalysisInput], list[Row]]:
    metrics = {metric.name: score_of(metric.name) for metric in _metrics(task)}
    return lambda data: breakdown(data.records, group_of, metrics)


def _errors(data: AnalysisInput) -> list[Row]:
    wrong = [record for record in data.records if wrong_turn(record, data.ctx)]
    return shares(wrong, error_type, order=ERROR_TYPES)


def wrong_turn_error(record: Scored, ctx: Context) -> str | None:
    """A wrong turn's error type; None for a turn MTU-Eval counts right."""
    return error_type(record) if wrong_turn(record, ctx) else None


# Each answer's error type, computed once and kept with it: the platform counts the wrong turns
# by it in the database (_errors stays the definition).
ERROR_TYPE = RecordValue("error_type", wrong_turn_error)


def _analyses(task: str) -> tuple[Analysis, ...]:
    declared: list[Analysis] = []
    if task in MULTI_TURN:
        declared.append(
            Analysis(
                name="by_turn",
                title="Tool selection by dialogue turn",
                by="turn",
                by_title="dialogue turn",
                metrics=_metrics(task),
                compute=_by(_turn_number, task),
                score_breakdown=_in_database(
                    task,
                    SampleValue("metadata", ("turn",)),
                    SampleValue("id_suffix"),
                    group=_turn_of,
                ),
                chart="line",
                source="Fig. 5a",
                description="Each turn of a dialogue is an item; the group is its turn number "
                "(1 for the first user turn).",
            )
        )
    declared.append(
        Analysis(
            name="by_tools",
            title="Tool selection by number of tools in the sample",
            by="tools",
            by_title="tools in the sample's API list",
            metrics=_metrics(task),
            compute=_by(_tool_count, task),
            score_breakdown=_in_database(task, SampleValue("tool_count")),
            chart="line",
            source="Fig. 5b",
            description="The group is how many tools the sample's own API list offers.",
        )
    )
    declared.append(
        Analysis(
            name="error_types",
            title="Error types of wrong turns",
            by="error_type",
            by_title="error type",
            metrics=(AnalysisMetric("share", "share of wrong turns (%)"),),
            compute=_errors,
            covers=wrong_turn,
            score_breakdown=ScoreBreakdown(by_sample=ERROR_TYPE, scores={}, share="share"),
            group_order=ERROR_TYPES,
            source="Fig. 7, appendix E Table 16",
            description="Each wrong turn's first error: format (a call MTU-Eval cannot read), "
            "action (missed, excessive or incorrect tools), parameter (right tools, wrong "
            "arguments); n counts the turns.",
        )
    )
    return tuple(declared)


ANALYSES: dict[str, tuple[Analysis, ...]] = {task: _analyses(task) for task in SPLIT_METRICS}
