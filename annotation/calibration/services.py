"""The loop: from a judge version's calibration report, a human campaign of the items where the
judge and the human majority disagree, or where the judge is least sure. The report's page, the
admin's form and the `calibration_campaign` command all call calibration_campaign_create."""

from __future__ import annotations

import math
from typing import Any

from django.db import transaction

from annotation.agreement import stats
from annotation.calibration import data
from annotation.calibration.report import least_sure_key
from annotation.errors import AnnotationError
from annotation.kinds import BuildRequest, CampaignKind, kinds
from annotation.services import campaign_create, items_build
from evaluation.models import JudgeVersion, Prediction

DISAGREEMENTS = "disagreements"
LEAST_SURE = "least_sure"
SELECTIONS = {
    DISAGREEMENTS: "where the judge and the human majority disagree",
    LEAST_SURE: "where the judge is least sure",
}
MAX_ITEMS = 10_000


def loop_kind(version: JudgeVersion) -> CampaignKind:
    """The campaign kind that asks humans about the items this judge judges: a kind that builds
    items from judged items (the `judged` item source) and shows as many answers per item as the
    judge saw (two for a pairwise judge). AnnotationError when no registered kind does."""
    pairwise = version.judge.kind == "pairwise"
    fitting = [
        kind
        for kind in kinds().values()
        if "judged" in kind.builders and len(kind.judged) == (2 if pairwise else 1)
    ]
    if not fitting:
        shown = "two answers" if pairwise else "one answer"
        raise AnnotationError(
            f"no campaign kind asks humans about {shown} the way a {version.judge.kind} judge "
            "judges it; the loop builds campaigns of the kinds that take judged items "
            f"({', '.join(k.name for k in kinds().values() if 'judged' in k.builders) or 'none'})",
            field="selection",
        )
    return fitting[0]


def select_items(
    version: JudgeVersion, *, selection: str, size: int, task: str = ""
) -> tuple[CampaignKind, list[tuple[int, int, int | None]]]:
    """The loop's kind and up to `size` judged items as (sample, A, B or None), chosen from
    the version's report: `disagreements` (the judge's verdict differs from the human
    majority's on the kind's question; the judge's surest first) or `least_sure` (the judge's
    lowest confidence first, labelled or not). Ties keep the report's order. `task` limits the
    choice to one of the report's tasks."""
    if selection not in SELECTIONS:
        raise AnnotationError(
            f"choose the items {' or '.join(SELECTIONS)}, not {selection!r}", field="selection"
        )
    if not 1 <= size <= MAX_ITEMS:
        raise AnnotationError(f"the size must be between 1 and {MAX_ITEMS}", field="size")
    kind = loop_kind(version)
    units = data.version_units(version)
    if task:
        units = [unit for unit in units if unit.task == task]
    if not units:
        raise AnnotationError(
            f"{version} judged no item{f' of {task}' if task else ''} (finished judgments)",
            field="task" if task else "selection",
        )
    coder = data.kind_coder(kind.questions(), units)
    if coder is None:
        raise AnnotationError(
            f"the judge's verdicts answer none of the {kind.label.lower()} questions",
            field="selection",
        )
    verdicts = [data.unit_verdict(coder, unit) for unit in units]
    ranked: list[tuple[float, int]] = []
    if selection == DISAGREEMENTS:
        majority = _human_majority(coder, units)
        for i, (verdict, confidence) in enumerate(verdicts):
            human = majority.get(i, math.nan)
            if math.isnan(verdict) or math.isnan(human) or verdict == human:
                continue
            ranked.append((-(confidence if confidence is not None else 1.0), i))
        if not ranked:
            raise AnnotationError(
                "the judge and the human majority disagree on no item yet", field="selection"
            )
    else:
        for i, (verdict, confidence) in enumerate(verdicts):
            if not math.isnan(verdict):
                ranked.append((least_sure_key(coder, verdict, confidence), i))
    ranked.sort()
    chosen = [units[i] for _key, i in ranked[:size]]
    return kind, [(unit.sample, unit.a, unit.b) for unit in chosen]


def _human_majority(coder: Any, units: list[data.Unit]) -> dict[int, float]:
    """Per unit, the human majority on the kind's question: the labelled question of the same
    key and scale, else one of the same scale and codes (a pairwise question by another key)."""
    questions = [q for q in data.human_questions(units) if q.labels]
    same = [q for q in questions if (q.coder.key, q.coder.scale) == (coder.key, coder.scale)]
    alike = [
        q
        for q in questions
        if q.coder.scale == coder.scale and q.coder.labels.keys() == coder.labels.keys()
    ]
    for question in same or alike[:1]:
        majority = stats.majority(question.matrix(len(units)))
        return {i: float(v) for i, v in enumerate(majority) if not math.isnan(v)}
    return {}


def _guidelines(kind: CampaignKind) -> str:
    # Nothing of the judge: the annotators judge the answers afresh.
    return (
        "Compare the answers as you would in any campaign of this kind. "
        "Read each answer in full before choosing."
        if kind.sided
        else "Judge the answer as you would in any campaign of this kind."
    )


def calibration_campaign_create(
    *,
    version: JudgeVersion,
    selection: str,
    size: int,
    task: str = "",
    name: str = "",
    labels_per_item: int | None = None,
    user: Any = None,
) -> Any:
    """A draft campaign of the loop's kind (loop_kind) over the items select_items chooses,
    with the kind's default questions, named after the version and the selection unless named;
    the researcher adds annotators and opens it (the setup flow). Its items are the judged
    answers alone: nothing of the judge's verdicts is stored with them or shown. Raises
    AnnotationError for a selection, size or task the report cannot give, or a taken name."""
    kind, chosen = select_items(version, selection=selection, size=size, task=task)
    name = name.strip() or (
        f"Calibration of {version.judge.name} v{version.number}: "
        f"{selection.replace('_', ' ')} ({len(chosen)})"
    )
    first = Prediction.objects.select_related("run__benchmark").get(pk=chosen[0][1])
    with transaction.atomic():
        campaign = campaign_create(
            name=name,
            kind=kind.name,
            benchmark=first.run.benchmark,
            labels_per_item=labels_per_item,
            guidelines=_guidelines(kind),
            # What its members see: the kind, not the judge or why the items were chosen.
            public_name=kind.label,
            user=user,
            task=first.run.task,
        )
        items_build(campaign=campaign, request=BuildRequest(judged=chosen))
    return campaign
