"""The step-level review's part of the agreement report (the `step_review` kind's section).

An annotator's label on a trace holds one verdict per step (annotation.traces.steps_clean):
right, or wrong with an error type. Each step of each trace is a unit rated by every annotator
of the trace, and by the suite when its trace hook gave the step a verdict of its own
(TraceStep.auto_error). From these units the section builds questions as the report already
knows them (QuestionRatings) and computes each with annotation.agreement.report.question_report,
so that every statistic is the platform's own (Cohen's kappa per pair of annotators, Fleiss'
kappa and Krippendorff's alpha over them all, the suite against the human majority with its
confusion table), with the same bootstrap intervals, here over steps:

  - "steps: right or wrong": every step, right (1) or wrong (0);
  - "steps: <error type>": one per type of the suite's taxonomy, over the steps a rater judged
    wrong, the type present (1) or absent (0): whether raters who find a step wrong agree on
    what is wrong with it;
  - "steps: classification": every step as right or its error type, the suite's automatic
    classification against the human majority (agreement, kappa, the confusion table);
  - "traces: right or wrong": each trace (not step), the annotators' verdicts on the whole
    trace with the suite's own (Trace.auto_verdict) where it gives one, so that the suite's
    verdict meets the human majority there too;
  - where in the trace humans disagree: per step position, the share of steps that two or
    more annotators judged and that they did not all judge alike (right or wrong).

Pure: no Django. `section_inputs["step_review"]` (what the kind's loader read from the
database) is {"suite": name, "error_types": [[key, label], ...], "items": {item id: {"auto":
[the suite's verdict per step: "" right, a type's key wrong, null none], "auto_verdict": the
suite's on the trace (true, false or null), "labels": {annotator: [the label's steps]},
"verdicts": {annotator: "right" | "wrong"}}}}.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from annotation.agreement.ratings import CampaignRatings, QuestionRatings, Rater
from annotation.agreement.report import HUMANS, _ratio, question_report, question_rows, row

NAME = "step_review"
RIGHT, WRONG = 1.0, 0.0
PRESENT, ABSENT = 1.0, 0.0


def _units(
    ratings: CampaignRatings, data: Mapping[str, Any]
) -> list[tuple[int, int, list[Any], Any]]:
    """(item id, step index, each annotator's verdict on the step or None, the suite's) for
    every step of every item, in the items' order."""
    items = data.get("items") or {}
    humans = [rater.name for rater in ratings.humans]
    units = []
    for item_id in ratings.items:
        entry = items.get(item_id) or items.get(str(item_id))
        if not entry:
            continue
        labels = entry.get("labels") or {}
        for index, auto in enumerate(entry.get("auto") or []):
            verdicts = []
            for name in humans:
                steps = labels.get(name)
                step = steps[index] if isinstance(steps, list) and index < len(steps) else None
                verdicts.append(step if isinstance(step, Mapping) else None)
            units.append((item_id, index, verdicts, auto))
    return units


def _question(
    key: str,
    text: str,
    labels: dict[float, str],
    humans: list[Rater],
    suite: Rater,
    human_values: np.ndarray,
    suite_values: np.ndarray,
) -> QuestionRatings:
    raters, columns = list(humans), [human_values]
    if not np.isnan(suite_values).all():
        raters.append(suite)
        columns.append(suite_values[:, None])
    return QuestionRatings(
        key=key,
        text=text,
        scale="categories",
        numeric=False,
        level="nominal",
        labels=labels,
        raters=raters,
        values=np.hstack(columns),
    )


def step_questions(ratings: CampaignRatings, data: Mapping[str, Any]) -> list[QuestionRatings]:
    """The step-level questions (the module's docstring) as the report's ratings."""
    units = _units(ratings, data)
    types = [(str(key), str(label)) for key, label in data.get("error_types") or []]
    type_code = {key: float(i + 1) for i, (key, _label) in enumerate(types)}
    humans = list(ratings.humans)
    suite = Rater("suite", str(data.get("suite") or "suite"))
    n, h = len(units), len(humans)

    right = np.full((n, h), np.nan)
    classes = np.full((n, h), np.nan)
    chosen = np.full((n, h), "", dtype=object)
    auto_right = np.full(n, np.nan)
    auto_class = np.full(n, np.nan)
    auto_type = np.full(n, "", dtype=object)
    for u, (_item, _index, verdicts, auto) in enumerate(units):
        for j, verdict in enumerate(verdicts):
            if verdict is None or not isinstance(verdict.get("right"), bool):
                continue
            if verdict["right"]:
                right[u, j], classes[u, j] = RIGHT, 0.0
            else:
                right[u, j] = WRONG
                chosen[u, j] = str(verdict.get("error") or "")
                classes[u, j] = type_code.get(chosen[u, j], np.nan)
        if auto == "":
            auto_right[u], auto_class[u] = RIGHT, 0.0
        elif isinstance(auto, str):
            auto_right[u], auto_type[u] = WRONG, auto
            auto_class[u] = type_code.get(auto, np.nan)

    questions = [
        _question(
            "steps:right",
            "Steps: right or wrong",
            {WRONG: "wrong", RIGHT: "right"},
            humans,
            suite,
            right,
            auto_right,
        )
    ]
    for key, label in types:
        present = np.where(right == WRONG, np.where(chosen == key, PRESENT, ABSENT), np.nan)
        auto_present = np.where(
            auto_right == WRONG, np.where(auto_type == key, PRESENT, ABSENT), np.nan
        )
        questions.append(
            _question(
                f"steps:error:{key}",
                f"Steps judged wrong: {label}",
                {ABSENT: "absent", PRESENT: "present"},
                humans,
                suite,
                present.astype(float),
                auto_present.astype(float),
            )
        )
    questions.append(
        _question(
            "steps:classification",
            "Steps: right, or the type of error",
            {0.0: "right", **{type_code[key]: label for key, label in types}},
            humans,
            suite,
            classes,
            auto_class,
        )
    )
    questions.append(trace_question(ratings, data, humans, suite))
    return questions


TRACE_VERDICT = {"right": RIGHT, "wrong": WRONG}


def trace_question(
    ratings: CampaignRatings, data: Mapping[str, Any], humans: list[Rater], suite: Rater
) -> QuestionRatings:
    """The annotators' verdicts on each whole trace, with the suite's own where it gives one."""
    items = data.get("items") or {}
    entries = [
        entry
        for item_id in ratings.items
        if (entry := items.get(item_id) or items.get(str(item_id)))
    ]
    human_values = np.full((len(entries), len(humans)), np.nan)
    suite_values = np.full(len(entries), np.nan)
    for u, entry in enumerate(entries):
        verdicts = entry.get("verdicts") or {}
        for j, rater in enumerate(humans):
            human_values[u, j] = TRACE_VERDICT.get(str(verdicts.get(rater.name)), np.nan)
        auto = entry.get("auto_verdict")
        if isinstance(auto, bool):
            suite_values[u] = RIGHT if auto else WRONG
    return _question(
        "traces:right",
        "Traces: right or wrong",
        {WRONG: "wrong", RIGHT: "right"},
        humans,
        suite,
        human_values,
        suite_values,
    )


def disagreement_by_position(
    ratings: CampaignRatings, data: Mapping[str, Any], *, resamples: int, seed: int, level: float
) -> list[dict[str, Any]]:
    """Per step position (1 the first step of its trace): the share of steps at that position,
    among those two or more annotators judged, that they did not all judge alike."""
    by_position: dict[int, list[tuple[int, int]]] = {}
    for _item, index, verdicts, _auto in _units(ratings, data):
        marks = {v["right"] for v in verdicts if v is not None and isinstance(v.get("right"), bool)}
        judged = sum(1 for v in verdicts if v is not None and isinstance(v.get("right"), bool))
        if judged >= 2:
            by_position.setdefault(index, []).append((int(len(marks) > 1), 1))
    return [
        {
            "position": index + 1,
            "steps": len(counts),
            "disagreement": _ratio(np.array(counts, dtype=float), resamples, seed, level),
        }
        for index, counts in sorted(by_position.items())
    ]


def step_report(
    ratings: CampaignRatings, *, resamples: int, seed: int, level: float
) -> dict[str, Any]:
    """The section's data (the module's docstring)."""
    data = ratings.section_inputs.get(NAME) or {}
    options: dict[str, Any] = {"resamples": resamples, "seed": seed, "level": level}
    return {
        "suite": data.get("suite") or "",
        "error_types": [list(pair) for pair in data.get("error_types") or []],
        "questions": [question_report(q, **options) for q in step_questions(ratings, data)],
        "positions": disagreement_by_position(ratings, data, **options),
    }


def step_rows(section: Mapping[str, Any] | Sequence[Any]) -> Iterator[tuple[Any, ...]]:
    """The section's rows of the summary CSV: each step-level question's as any question's,
    then the disagreement at each step position."""
    if not isinstance(section, Mapping):
        return
    for q in section.get("questions") or []:
        yield from question_rows(q)
    for entry in section.get("positions") or []:
        yield row(
            "steps:position",
            HUMANS,
            HUMANS,
            f"disagreement at step {entry['position']}",
            entry["disagreement"],
        )
