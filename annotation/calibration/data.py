"""What a judge version's calibration report reads: the items the version judged (its finished
judgments, grouped by the item judged: a prediction, or a prediction and the other it was
compared with) and the human labels on the same items, in every campaign whose item is that
prediction (or that pair, in either order: a label on the pair reversed has its sign turned).

An item's verdict on a question and the codes of the labels are the agreement report's
(annotation.agreement.data: the question's coder, judge_verdict over the repeats, both orders
of a pairwise judgment combined per repeat); a label is read through its own campaign's
question, and the questions of several campaigns are pooled when they have the same key, scale
and choices. An annotator who labelled an item in several campaigns counts once, with their
latest current label. The report reads the current labels whenever it is made, and is kept
until they (or the judgments) change (annotation.calibration.stored), so it moves as labels
arrive.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.db.models import F
from django.db.models.functions import Length

from annotation.agreement.data import _Coder, _coders, judge_verdict, question_coders
from annotation.models import Campaign, Item, Label, Question
from benchmarks.models import Sample
from config.lookups import AnyOf
from evaluation.models import JudgeVersion, Judgment, Prediction


@dataclass
class Unit:
    """One item the version judged: A (the judged prediction) and B (the other, or None)."""

    a: int
    b: int | None
    sample: int
    task: str  # "<benchmark> · <task>" of the judged run
    # per repeat, per order shown ("", "AB", "BA"): (value, 1.0, label, values)
    repeats: dict[int, dict[str, tuple]] = field(default_factory=lambda: defaultdict(dict))
    length_a: int = 0
    length_b: int | None = None
    external_id: str = ""  # the sample's id in its benchmark

    @property
    def length(self) -> float:
        """A's length minus B's for a pair (characters of the outputs), A's for one answer."""
        return float(self.length_a - (self.length_b or 0))


@dataclass
class HumanQuestion:
    """A question (pooled over the campaigns that ask it) and the labels on the version's items:
    per unit index, per annotator, (label id, code against the judged order)."""

    coder: _Coder
    campaigns: dict[int, str] = field(default_factory=dict)
    labels: dict[int, dict[str, tuple[int, float]]] = field(
        default_factory=lambda: defaultdict(dict)
    )

    def matrix(self, n: int) -> np.ndarray:
        """Units x annotators, NaN where none."""
        names = sorted({name for per in self.labels.values() for name in per})
        column = {name: j for j, name in enumerate(names)}
        out = np.full((n, len(names)), np.nan)
        for i, per in self.labels.items():
            for name, (_id, code) in per.items():
                out[i, column[name]] = code
        return out


def _group(coder: _Coder) -> tuple:
    return (coder.key, coder.scale, tuple(sorted(coder.labels.items())))


def version_units(version: JudgeVersion) -> list[Unit]:
    """The version's judged items (finished judgments only), in the order of their runs'
    predictions."""
    rows = (
        Judgment.objects.filter(version=version, status=Judgment.Status.DONE)
        .order_by("job_id", "position")
        .values_list(
            "prediction_id",
            "other_id",
            "sample_id",
            "repeat",
            "order",
            "value",
            "label",
            "values",
            "job__run__benchmark__name",
            "job__run__task",
        )
    )
    units: dict[tuple[int, int | None], Unit] = {}
    for a, b, sample, repeat, order, value, label, values, benchmark, task in rows:
        unit = units.get((a, b))
        if unit is None:
            unit = units[(a, b)] = Unit(a=a, b=b, sample=sample, task=f"{benchmark} · {task}")
        unit.repeats[repeat][order] = (value, 1.0, label or "", values or {})
    ids = {pid for unit in units.values() for pid in (unit.a, unit.b) if pid}
    lengths = dict(
        Prediction.objects.filter(AnyOf(F("pk"), ids))
        .annotate(n=Length("output"))
        .values_list("id", "n")
    )
    names = dict(
        Sample.objects.filter(AnyOf(F("pk"), {unit.sample for unit in units.values()})).values_list(
            "id", "external_id"
        )
    )
    for unit in units.values():
        unit.external_id = names.get(unit.sample, "")
        unit.length_a = int(lengths.get(unit.a) or 0)
        if unit.b:
            unit.length_b = int(lengths.get(unit.b) or 0)
    return list(units.values())


def human_questions(units: list[Unit]) -> list[HumanQuestion]:
    """The questions humans answered about the units, with their labels (see the module
    docstring); only the questions the judge's verdicts answer."""
    where: dict[tuple[int, int | None], tuple[int, float]] = {}
    for i, unit in enumerate(units):
        where[(unit.a, unit.b)] = (i, 1.0)
        if unit.b:
            where[(unit.b, unit.a)] = (i, -1.0)
    firsts = {key[0] for key in where}
    items = list(
        Item.objects.filter(AnyOf(F("prediction_id"), firsts)).values_list(
            "id", "campaign_id", "prediction_id", "prediction_b_id"
        )
    )
    item_unit = {
        item_id: (campaign_id, *where[(a, b)])
        for item_id, campaign_id, a, b in items
        if (a, b) in where
    }
    if not item_unit:
        return []
    campaigns = Campaign.objects.filter(pk__in={c for c, _i, _s in item_unit.values()})
    pooled: dict[tuple, HumanQuestion] = {}
    # Per campaign, its questions the judge answers: (pooled question, the campaign's coder).
    answering: dict[int, list[tuple[HumanQuestion, _Coder]]] = defaultdict(list)
    units_of: dict[int, set[int]] = defaultdict(set)
    for campaign_id, i, _sign in item_unit.values():
        units_of[campaign_id].add(i)
    for campaign in campaigns.prefetch_related("questions"):
        for coder in question_coders(campaign):
            if not any(
                not math.isnan(unit_verdict(coder, units[i])[0]) for i in units_of[campaign.pk]
            ):
                continue
            question = pooled.setdefault(_group(coder), HumanQuestion(coder=coder))
            question.campaigns[campaign.pk] = campaign.name
            answering[campaign.pk].append((question, coder))
    labels = (
        Label.objects.filter(AnyOf(F("item_id"), item_unit), is_current=True)
        .order_by("id")
        .values_list("id", "item_id", "annotator__username", "answers")
    )
    for label_id, item_id, username, answers in labels:
        campaign_id, i, sign = item_unit[item_id]
        for question, coder in answering.get(campaign_id, ()):
            code = coder.code((answers or {}).get(coder.source_key))
            if math.isnan(code):
                continue
            if coder.scale == Question.Scale.PAIRWISE:
                code *= sign
            # Labels come in id order: a later one of the same annotator replaces theirs.
            question.labels[i][username] = (label_id, code)
    return [q for q in pooled.values() if q.labels or q.campaigns]


def unit_verdict(coder: _Coder, unit: Unit) -> tuple[float, float | None]:
    """The judge's verdict on the unit for the question, and its confidence: the share of the
    repeats with a verdict that gave the item's verdict (None for a score, whose verdict is the
    mean of the repeats, or without a verdict)."""
    verdict, codes = judge_verdict(coder, unit.repeats)
    if math.isnan(verdict) or coder.numeric_values:
        return verdict, None
    return verdict, sum(1 for c in codes if c == verdict) / len(codes)


def kind_coder(questions: list[dict[str, Any]], units: list[Unit]) -> _Coder | None:
    """The first of a campaign kind's default questions that the judge's verdicts answer (on
    any of the units), as a coder; None when none does."""
    for spec in questions:
        question = Question(
            key=spec["key"],
            text=spec.get("text", spec["key"]),
            scale=spec["scale"],
            choices=spec.get("choices") or [],
            multiple=bool(spec.get("multiple")),
        )
        for coder in _coders(question):
            if any(not math.isnan(unit_verdict(coder, unit)[0]) for unit in units):
                return coder
    return None


def judge_shown(unit: Unit) -> tuple[list[tuple[str, float | None]], list[tuple[Any, Any]]]:
    """A pairwise unit's (order shown, canonical verdict) judgments, and per repeat its
    (verdict shown AB, verdict shown BA)."""
    shown = []
    pairs = []
    for by_order in unit.repeats.values():
        for order, (value, _sign, _label, _values) in by_order.items():
            shown.append((order, value))
        if "AB" in by_order or "BA" in by_order:
            pairs.append((by_order.get("AB", (None,))[0], by_order.get("BA", (None,))[0]))
    return shown, pairs


def versions_of(version: JudgeVersion) -> list[JudgeVersion]:
    """Every version of the judge, in order."""
    return list(JudgeVersion.objects.filter(judge_id=version.judge_id).order_by("number"))
