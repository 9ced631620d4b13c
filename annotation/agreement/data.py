"""The ratings of a campaign's items, read from the database into matrices: one per question,
items x raters, with the human annotators' answers, the LLM judges' verdicts on the items'
predictions and the automatic metrics of those predictions.

Codes. Every answer becomes a float: a pairwise answer its 1 / 0 / -1 (against the canonical
order, as stored); an ordinal answer its value when every choice is a number, otherwise the
choice's position; a category the choice's position. A question with several choices per
answer (error types) becomes one yes/no question per choice ("types:endless_retry"); a set of
chosen items (the human baseline's tools) is one category per distinct set.

Judges: a judgment is taken for an item when it is about the item's prediction (pairwise: the
item's two predictions, in either order of the job's runs, the sign turned for the reversed
one). Per repeat, the two orders of a pairwise judgment count as a win only when both agree
(StableToolBench's rule, benchmarks.kit.judging.combine_orders); the item's verdict is the
mean over repeats for a score (an ordinal question with numeric choices), otherwise the verdict
most repeats gave (none on a tie): a pairwise verdict stays A / tie / B, so that it can be
compared with the human majority as StableToolBench's Table 8 does. A judge answers a question
when its judgments carry a value under the question's key (a dimension); otherwise a pairwise
judge answers pairwise questions, and a pass or pointwise judge answers a categorical question
whose choices name its labels (Solved / Unsure / Unsolved) and ordinal questions with numeric
choices (its score).

Metrics: the prediction's per-item score; for a pairwise item the sign of A's score minus B's
(MTU-Bench's metric-human comparison). Metrics answer pairwise and ordinal questions. Only what
the runs' tasks declare a score that is better one way (benchmarks.kit.protocol.MetricSpec)
is a rater: counts and flags (unparsed, failed, n) are not verdicts on an answer, and a name no
task declares (an older run's) means nothing certain. A lower-is-better score is compared with
its sign turned (its negative, and for a pair the sign of B's score minus A's), so that in every
statistic and leaderboard a larger code means a better answer, as it does for the humans.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.db import connection
from django.db.models import F

from annotation.agreement.ratings import CampaignRatings, QuestionRatings, Rater
from annotation.kinds import kind_of
from annotation.models import Campaign, Item, Label, Question
from benchmarks.kit.judging import combine_orders
from benchmarks.kit.protocol import MetricSpec, TaskSpec
from benchmarks.kit.registry import get_suite
from config.dbstats import by_primary_key
from config.errors import ApplicationError
from config.lookups import AnyOf
from evaluation.models import Judge, Judgment, Prediction, Run


class AgreementError(ApplicationError):
    """The report cannot be made as asked (an unknown judge or metric); the message says why."""


# --- codes --------------------------------------------------------------------------------------


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


@dataclass
class _Coder:
    """How one (possibly expanded) question turns an answer into a code."""

    key: str
    text: str
    scale: str
    numeric: bool
    level: str
    labels: dict[float, str]
    source_key: str
    choice: str | None = None  # an expanded multiple-choice question: this choice, yes or no
    codes: dict[str, float] = field(default_factory=dict)  # answer as text -> code
    open_set: bool = False  # categories found in the answers (chosen item sets)
    numeric_values: bool = False  # an ordinal scale whose choices are numbers

    def code(self, answer: Any) -> float:
        if answer is None or answer == "":
            return math.nan
        if self.choice is not None:
            chosen = answer if isinstance(answer, list) else [answer]
            return 1.0 if self.choice in {str(v) for v in chosen} else 0.0
        if self.open_set:
            text = " + ".join(str(v) for v in answer) if isinstance(answer, list) else str(answer)
            text = text or "(none)"
            if text not in self.codes:
                self.codes[text] = float(len(self.codes))
                self.labels[self.codes[text]] = text
            return self.codes[text]
        if self.scale == Question.Scale.PAIRWISE:
            number = _number(answer)
            return number if number in (1.0, 0.0, -1.0) else math.nan
        return self.codes.get(str(answer), math.nan)

    def code_all(self, answers: list[Any]) -> np.ndarray:
        """code() of many answers; each distinct (hashable) answer is coded once."""
        seen: dict[Any, float] = {}
        out = np.empty(len(answers))
        for n, answer in enumerate(answers):
            try:
                out[n] = seen[answer]
            except KeyError:
                out[n] = seen[answer] = self.code(answer)
            except TypeError:  # a list of choices
                out[n] = self.code(answer)
        return out

    def judge_code(self, value: float | None, label: str, values: Any) -> float:
        """A judge's verdict as this question's code: a pointwise score under the question's
        key (a dimension), else the pairwise preference (pairwise questions), the overall score
        (ordinal questions with numeric choices) or the label named by a choice (NaN when none
        fits)."""
        if self.choice is not None or self.open_set:
            return math.nan
        dimension = _number(values.get(self.key)) if isinstance(values, dict) else None
        if self.numeric and dimension is not None:
            return dimension
        if self.scale == Question.Scale.PAIRWISE or self.numeric_values:
            return math.nan if value is None else float(value)
        return self.codes.get(label.strip().lower(), math.nan) if label else math.nan


def _coders(question: Question) -> list[_Coder]:
    choices = [c for c in question.choices or [] if isinstance(c, dict) and "value" in c]
    scale = question.scale
    if scale == Question.Scale.CATEGORIES and question.multiple:
        return [
            _Coder(
                key=f"{question.key}:{c['value']}",
                text=f"{question.text} — {c.get('label') or c['value']}",
                scale=Question.Scale.CATEGORIES,
                numeric=False,
                level="nominal",
                labels={0.0: "no", 1.0: "yes"},
                source_key=question.key,
                choice=str(c["value"]),
            )
            for c in choices
        ]
    if scale == Question.Scale.ITEM_CHOICES:
        return [
            _Coder(
                key=question.key,
                text=question.text,
                scale=scale,
                numeric=False,
                level="nominal",
                labels={},
                source_key=question.key,
                open_set=True,
            )
        ]
    if scale == Question.Scale.PAIRWISE:
        labels = {1.0: "A better", 0.0: "tie", -1.0: "B better"}
        return [
            _Coder(
                key=question.key,
                text=question.text,
                scale=scale,
                numeric=True,
                level="ordinal",
                labels=labels,
                source_key=question.key,
            )
        ]
    numbers = [_number(c["value"]) for c in choices]
    numeric_values = scale == Question.Scale.ORDINAL and all(n is not None for n in numbers)
    codes: dict[str, float] = {}
    labels: dict[float, str] = {}
    for index, choice in enumerate(choices):
        code = float(numbers[index]) if numeric_values else float(index)  # type: ignore[arg-type]
        codes[str(choice["value"])] = code
        # Judges name their verdicts by the choice's value or its label, in any case.
        codes.setdefault(str(choice["value"]).strip().lower(), code)
        if choice.get("label"):
            codes.setdefault(str(choice["label"]).strip().lower(), code)
        labels[code] = str(choice.get("label") or choice["value"])
    return [
        _Coder(
            key=question.key,
            text=question.text,
            scale=scale,
            numeric=scale == Question.Scale.ORDINAL,
            level="ordinal" if scale == Question.Scale.ORDINAL else "nominal",
            labels=labels,
            source_key=question.key,
            codes=codes,
            numeric_values=numeric_values,
        )
    ]


# --- reading ------------------------------------------------------------------------------------

LABELS_SQL = """
SELECT l.item_id, u.username, l.answers, l.time_ms, a.shown_order
FROM annotation_label l
JOIN auth_user u ON u.id = l.annotator_id
JOIN annotation_assignment a ON a.id = l.assignment_id
JOIN annotation_item i ON i.id = l.item_id
WHERE l.campaign_id = %s AND l.is_current
ORDER BY i.position, u.username
"""


def campaign_items(campaign: Campaign) -> list[tuple[int, int | None, int | None, Any]]:
    """(item id, prediction A, prediction B, gold) of every item, in the campaign's order."""
    return list(
        Item.objects.filter(campaign=campaign)
        .order_by("position")
        .values_list("id", "prediction_id", "prediction_b_id", "gold")
    )


def question_coders(campaign: Campaign) -> list[_Coder]:
    """Every question as rated: a multiple-choice question as one yes/no question a choice."""
    return [coder for question in campaign.questions.all() for coder in _coders(question)]


def automatic_ratings(
    items: list[tuple],
    coders: list[_Coder],
    *,
    metrics: Mapping[str, str] | None = None,
    judges: Any = (),
) -> tuple[list[tuple[Rater, dict[str, np.ndarray]]], dict[str, np.ndarray]]:
    """Per metric (name -> direction, metric_directions) and named judge, its codes per
    question key (items in `items`' order); and per pairwise judge, its (first shown, tie,
    second shown) counts per item."""
    automatic: list[tuple[Rater, dict[str, np.ndarray]]] = []
    for name, direction in (metrics or {}).items():
        values = _metric_values(name, items, coders, lower=direction == "lower")
        automatic.append((Rater("metric", name, direction), values))
    judge_shown: dict[str, np.ndarray] = {}
    for name in judges:
        values, first = _judge_values(name, items, coders)
        automatic.append((Rater("judge", name), values))
        if first is not None:
            judge_shown[name] = first
    return automatic, judge_shown


def campaign_ratings(
    campaign: Campaign,
    *,
    metrics: list[str] | tuple[str, ...] = (),
    judges: list[str] | tuple[str, ...] = (),
    catalogue: dict[str, MetricInfo] | None = None,
) -> CampaignRatings:
    """Every question's ratings for the campaign's items: its annotators' current labels,
    then the named judges and metrics (AgreementError for a name that rates none of them, or
    for a metric that is not a score, metric_directions)."""
    kind = kind_of(campaign)
    directions = metric_directions(campaign, metrics, catalogue)
    items = campaign_items(campaign)
    index = {item_id: i for i, (item_id, *_rest) in enumerate(items)}
    coders = question_coders(campaign)
    with connection.cursor() as cursor:
        cursor.execute(LABELS_SQL, [campaign.pk])
        rows = cursor.fetchall()
    humans = sorted({username for _, username, *_rest in rows})
    h_index = {name: j for j, name in enumerate(humans)}
    n, h = len(items), len(humans)
    times: dict[str, list[int]] = defaultdict(list)
    cells_i, cells_j, decoded, orders = [], [], [], []
    for item_id, username, answers, time_ms, shown_order in rows:
        i = index.get(item_id)
        if i is None:
            continue
        cells_i.append(i)
        cells_j.append(h_index[username])
        # Django hands jsonb to its fields as text; this raw query decodes it itself.
        decoded.append((json.loads(answers) if isinstance(answers, str) else answers) or {})
        orders.append(shown_order)
        if time_ms is not None:
            times[username].append(int(time_ms))
    at = (np.array(cells_i, dtype=np.int64), np.array(cells_j, dtype=np.int64))
    # As stored, 1 is A; an annotator shown "BA" saw B first.
    flip = np.where(np.array(orders, dtype=object) == "BA", -1.0, 1.0)
    human_values, shown = {}, {}
    for coder in coders:
        codes = coder.code_all([answers.get(coder.source_key) for answers in decoded])
        human_values[coder.key] = np.full((n, h), np.nan)
        human_values[coder.key][at] = codes
        if coder.scale == Question.Scale.PAIRWISE:
            shown[coder.key] = np.full((n, h), np.nan)
            shown[coder.key][at] = codes * flip

    automatic, judge_shown = automatic_ratings(items, coders, metrics=directions, judges=judges)

    question_ratings = []
    for coder in coders:
        columns = [human_values[coder.key]]
        raters = [Rater("human", name) for name in humans]
        for rater, values in automatic:
            if coder.key in values:
                columns.append(values[coder.key][:, None])
                raters.append(rater)
        gold = np.array(
            [coder.code((g or {}).get(coder.source_key)) if g else np.nan for *_r, g in items],
            dtype=float,
        )
        question_ratings.append(
            QuestionRatings(
                key=coder.key,
                text=coder.text,
                scale=coder.scale,
                numeric=coder.numeric,
                level=coder.level,
                labels=dict(sorted(coder.labels.items())),
                raters=raters,
                values=np.hstack(columns),
                shown=shown.get(coder.key),
                gold=gold if not np.isnan(gold).all() else None,
            )
        )
    ratings = CampaignRatings(
        campaign_id=campaign.pk,
        campaign_name=campaign.name,
        kind=campaign.kind,
        items=[item_id for item_id, *_rest in items],
        questions=question_ratings,
        humans=[Rater("human", name) for name in humans],
        times=dict(times),
        judge_shown=judge_shown,
        metric_directions=directions,
        sections=kind.report_sections,
        section_inputs={
            section.name: section.load(campaign)
            for section in kind.report_sections
            if section.load is not None
        },
    )
    if kind.compares_runs:
        ratings.pair_runs, ratings.run_names = _pair_runs(items)
    return ratings


def _pair_runs(items: list[tuple]) -> tuple[list[tuple[int, int]], dict[int, str]]:
    ids = {pid for _, a, b, _g in items for pid in (a, b) if pid}
    run_of = dict(Prediction.objects.filter(AnyOf(F("pk"), ids)).values_list("id", "run_id"))
    pairs = [(run_of.get(a, 0), run_of.get(b, 0)) for _, a, b, _g in items]
    names = {
        run.pk: run.name or run.model_name or f"run {run.pk}"
        for run in Run.objects.filter(pk__in={r for pair in pairs for r in pair if r})
    }
    return pairs, names


def _metric_values(
    name: str, items: list[tuple], coders: list[_Coder], *, lower: bool = False
) -> dict[str, np.ndarray]:
    """The metric's code per item: its value, or the sign of A's minus B's for a pair; turned
    when lower is better (a pair's then is the sign of B's minus A's)."""
    ids = {pid for _, a, b, _g in items for pid in (a, b) if pid}
    scores = dict(Prediction.objects.filter(AnyOf(F("pk"), ids)).values_list("id", "scores"))
    sign = -1.0 if lower else 1.0

    def score(prediction_id: int | None) -> float:
        value = _number((scores.get(prediction_id) or {}).get(name)) if prediction_id else None
        return math.nan if value is None else sign * value

    per_item = np.array(
        [np.sign(score(a) - score(b)) if b else score(a) for _, a, b, _g in items],
        dtype=float,
    )
    if np.isnan(per_item).all():
        raise AgreementError(f"no prediction behind these items has a score named {name!r}")
    return {c.key: per_item for c in coders if c.numeric and c.choice is None}


def _judge_values(
    name: str, items: list[tuple], coders: list[_Coder]
) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
    judge = Judge.objects.filter(name=name).first()
    if judge is None:
        raise AgreementError(f"no judge named {name!r}")
    item_of: dict[tuple[int, int | None], tuple[int, float]] = {}
    for i, (_id, a, b, _g) in enumerate(items):
        if a:
            item_of[(a, b)] = (i, 1.0)
            if b:
                item_of[(b, a)] = (i, -1.0)
    predictions = {pid for pid, _other in item_of}
    judgments = Judgment.objects.filter(
        AnyOf(F("prediction_id"), predictions), job__judge=judge, status=Judgment.Status.DONE
    ).values_list("prediction_id", "other_id", "repeat", "order", "value", "label", "values")
    # Per item and repeat: the verdicts by order (pairwise) or the one verdict.
    verdicts: dict[int, dict[int, dict[str, tuple]]] = defaultdict(lambda: defaultdict(dict))
    for prediction_id, other_id, repeat, order, value, label, values in judgments:
        found = item_of.get((prediction_id, other_id))
        if found is None:
            continue
        i, sign = found
        verdicts[i][repeat][order] = (value, sign, label or "", values or {})
    if not verdicts:
        raise AgreementError(f"judge {name!r} judged none of these items")
    n = len(items)
    out: dict[str, np.ndarray] = {}
    first = np.zeros((n, 3)) if judge.kind == Judge.Kind.PAIRWISE else None
    for coder in coders:
        if coder.choice is not None or coder.open_set:
            continue
        column = np.full(n, np.nan)
        for i, repeats in verdicts.items():
            column[i], _codes = judge_verdict(coder, repeats)
        if not np.isnan(column).all():
            out[coder.key] = column
    if first is not None:
        for i, repeats in verdicts.items():
            for by_order in repeats.values():
                for order, (value, _sign, _label, _values) in by_order.items():
                    if value is None or order not in ("AB", "BA"):
                        continue
                    # The value is the job's run's preference; "AB" showed that run first.
                    chose_first = value if order == "AB" else -value
                    first[i, 0 if chose_first > 0 else 1 if chose_first == 0 else 2] += 1
    if not out:
        raise AgreementError(f"judge {name!r} answers none of this campaign's questions")
    return out, first


def judge_verdict(
    coder: _Coder, repeats: Mapping[int, dict[str, tuple]]
) -> tuple[float, list[float]]:
    """An item's verdict on the question from the judge's repeats (per repeat, per order shown,
    (value, sign, label, values); sign -1 for a judgment of the item's pair reversed): the mean
    of the repeats' codes for a score, otherwise the code most repeats gave (NaN on a tie); and
    each repeat's code that the question could read."""
    codes = [_repeat_code(coder, by_order) for by_order in repeats.values()]
    codes = [c for c in codes if not math.isnan(c)]
    if not codes:
        return math.nan, codes
    if coder.numeric_values:
        return float(np.mean(codes)), codes
    top = Counter(codes).most_common(2)
    if len(top) == 1 or top[0][1] > top[1][1]:
        return top[0][0], codes
    return math.nan, codes


def _repeat_code(coder: _Coder, by_order: dict[str, tuple]) -> float:
    """One repeat's verdict on the question; for a pairwise judge asked in both orders, a win
    only when both orders agree."""
    codes = {
        order: coder.judge_code(None if value is None else value * sign, label, values)
        for order, (value, sign, label, values) in by_order.items()
    }
    if "AB" in codes and "BA" in codes and coder.scale == Question.Scale.PAIRWISE:
        ab, ba = codes["AB"], codes["BA"]
        if math.isnan(ab) or math.isnan(ba):
            return math.nan
        combined = combine_orders(int(ab), int(ba))
        return math.nan if combined is None else float(combined)
    present = [c for c in codes.values() if not math.isnan(c)]
    return float(np.mean(present)) if present else math.nan


@dataclass(frozen=True)
class MetricInfo:
    """What a per-item value behind a campaign's items is, by the declarations of the tasks of
    the runs that carry it: a rater (a score better one way), or not and why."""

    name: str
    kind: str | None  # None: some task behind the items does not declare it
    direction: str | None
    why_not: str = ""  # why it is not a rater ("" for a rater)

    @property
    def rater(self) -> bool:
        return not self.why_not


def _task_spec(suite: str, task: str) -> TaskSpec | None:
    try:
        return get_suite(suite).evaluator.task(task)
    except ValueError:  # a suite or task this version no longer has
        return None


def _metric_info(name: str, declared: dict[str, MetricSpec | None]) -> MetricInfo:
    """`declared`: per task ("suite/task") carrying the name, its declaration there."""
    missing = sorted(task for task, spec in declared.items() if spec is None)
    if missing:
        return MetricInfo(
            name,
            None,
            None,
            f"not declared by {', '.join(missing)} (a value from an older version of the "
            "suite: shown as stored, never compared)",
        )
    specs = [spec for spec in declared.values() if spec is not None]
    meanings = {(spec.kind, spec.direction) for spec in specs}
    first = specs[0]
    if len(meanings) > 1:
        ways = "; ".join(
            f"{task}: {spec.kind}, {spec.direction or 'no'} direction"
            for task, spec in sorted(declared.items())
            if spec is not None
        )
        return MetricInfo(name, first.kind, None, f"declared differently by the runs ({ways})")
    if first.kind != "score":
        return MetricInfo(
            name, first.kind, first.direction, f"a {first.kind}, not a score of the answer"
        )
    if first.direction is None:
        return MetricInfo(name, "score", None, "a score neither side of which is better")
    return MetricInfo(name, "score", first.direction)


def _prediction_ids(campaign: Campaign) -> Any:
    """The ids of the predictions behind the campaign's items (A's and B's), as a subquery."""
    items = Item.objects.filter(campaign=campaign).order_by()  # a set: no sort, no join
    return items.values("prediction_id").union(
        items.filter(prediction_b_id__isnull=False).values("prediction_b_id"), all=True
    )


# Per (suite, task) of the runs behind the predictions, the names their scores carry; the
# predictions are _prediction_ids' subquery.
METRIC_NAMES_SQL = """
SELECT DISTINCT b.suite, r.task, k.name
FROM evaluation_prediction p
JOIN evaluation_run r ON r.id = p.run_id
JOIN benchmarks_benchmark b ON b.id = r.benchmark_id
CROSS JOIN LATERAL jsonb_object_keys(
    CASE WHEN jsonb_typeof(p.scores) = 'object' THEN p.scores ELSE '{{}}'::jsonb END
) AS k(name)
WHERE p.id IN ({ids})
"""


def metric_catalogue(campaign: Campaign) -> dict[str, MetricInfo]:
    """Every per-item value name the predictions behind the items carry, with what it is."""
    ids, params = _prediction_ids(campaign).query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(METRIC_NAMES_SQL.format(ids=ids), params)
        rows = cursor.fetchall()
    tasks = {(suite, task): _task_spec(suite, task) for suite, task, _name in rows}
    declared: dict[str, dict[str, MetricSpec | None]] = defaultdict(dict)
    for suite, task, name in rows:
        spec = tasks[(suite, task)]
        declared[name][f"{suite}/{task}"] = spec.item_metric(name) if spec else None
    return {name: _metric_info(name, declared[name]) for name in sorted(declared)}


def metric_directions(
    campaign: Campaign,
    names: list[str] | tuple[str, ...],
    catalogue: dict[str, MetricInfo] | None = None,
) -> dict[str, str]:
    """Per named metric, "higher" or "lower" (is better); AgreementError for a name the
    items' predictions do not carry, or one that is not a score better one way. `catalogue`:
    metric_catalogue(campaign), when the caller has read it already."""
    if not names:
        return {}
    catalogue = metric_catalogue(campaign) if catalogue is None else catalogue
    directions: dict[str, str] = {}
    for name in names:
        info = catalogue.get(name)
        if info is None:
            raise AgreementError(f"no prediction behind these items has a score named {name!r}")
        if not info.rater:
            scores = [other.name for other in catalogue.values() if other.rater]
            raise AgreementError(not_a_rater(name, info.why_not, scores))
        directions[name] = str(info.direction)
    return directions


def not_a_rater(name: str, why: str, scores: list[str]) -> str:
    """Why a metric asked for cannot rate, and what can."""
    return (
        f"metric {name!r} is {why}: only scores that are better one way are compared with "
        f"raters (scores here: {', '.join(scores) or 'none'})"
    )


def available_raters(
    campaign: Campaign, catalogue: dict[str, MetricInfo] | None = None
) -> dict[str, Any]:
    """What a report on this campaign can be asked for: the metrics that may rate (the
    items' per-item scores that point one way, `lower_is_better` naming those compared with
    the sign turned) and the judges that judged the items; and the items' other per-item
    values (counts, flags, undeclared names) with why they are not raters. `catalogue`:
    metric_catalogue(campaign), when the caller has read it already."""
    catalogue = metric_catalogue(campaign) if catalogue is None else catalogue
    judges = sorted(
        set(
            Judge.objects.filter(jobs__judgments__prediction_id__in=_prediction_ids(campaign))
            .values_list("name", flat=True)
            .distinct()
        )
    )
    raters = [info for info in catalogue.values() if info.rater]
    return {
        "metrics": [info.name for info in raters],
        "judges": judges,
        "lower_is_better": [info.name for info in raters if info.direction == "lower"],
        "not_raters": {info.name: info.why_not for info in catalogue.values() if not info.rater},
    }


def campaigns_state(cursor: Any, campaign_ids: list[int]) -> list[str]:
    """What the campaigns' labels look like, in a few numbers (a part of a fingerprint): their
    items and gold answers, their questions, and their labels (added, undone, returned). The
    agreement report's fingerprint and the calibration report's take it alike."""
    cursor.execute(
        """
        SELECT (SELECT count(*) FROM annotation_item WHERE campaign_id = ANY(%(c)s)),
               (SELECT coalesce(sum(hashtext(gold::text)), 0) FROM annotation_item
                WHERE campaign_id = ANY(%(c)s) AND gold IS NOT NULL),
               (SELECT coalesce(sum(hashtext(concat_ws('|', key, scale, choices::text,
                                                      multiple::text))), 0)
                FROM annotation_question WHERE campaign_id = ANY(%(c)s)),
               count(*), coalesce(max(l.id), 0),
               count(*) FILTER (WHERE l.is_current),
               coalesce(max(l.revoked_at)::text, '')
        FROM annotation_label l WHERE l.campaign_id = ANY(%(c)s)
        """,
        {"c": list(campaign_ids)},
    )
    return [str(v) for v in cursor.fetchone()]


def labels_fingerprint(
    campaign: Campaign,
    judges: list[str] | tuple[str, ...] = (),
    metrics: list[str] | tuple[str, ...] = (),
    catalogue: dict[str, MetricInfo] | None = None,
) -> str:
    """What a report reads, in a few numbers: the campaign's questions, its items and their gold
    answers, its labels (added, undone, returned), and the named judges' judgments and the
    items' predictions' scores when the report compares them. A report made under another
    fingerprint is stale."""
    with connection.cursor() as cursor:
        parts = campaigns_state(cursor, [campaign.pk])
        if judges:
            cursor.execute(
                """
                SELECT count(*), coalesce(max(j.updated_at)::text, '')
                FROM evaluation_judgment j
                JOIN evaluation_judgejob jj ON jj.id = j.job_id
                JOIN evaluation_judge g ON g.id = jj.judge_id
                WHERE g.name = ANY(%s)
                """,
                [list(judges)],
            )
            parts += [str(v) for v in cursor.fetchone()]
        if metrics:
            cursor.execute(
                """
                SELECT coalesce(sum(hashtext(p.scores::text)), 0) FROM evaluation_prediction p
                JOIN annotation_item i ON p.id IN (i.prediction_id, i.prediction_b_id)
                WHERE i.campaign_id = %s
                """,
                [campaign.pk],
            )
            parts.append(str(cursor.fetchone()[0]))
    if metrics:
        # Declarations are code: a report made before a metric's direction was declared (or
        # changed) compared it the other way, so it is stale.
        catalogue = metric_catalogue(campaign) if catalogue is None else catalogue
        parts.append(
            ",".join(
                f"{name}:{catalogue[name].direction if name in catalogue else '?'}"
                for name in sorted(metrics)
            )
        )
    return "/".join(parts)


# The labels of the long-format CSV in the order it lists them, read by a server-side cursor
# without building ORM rows (the answers arrive as JSON text and are decoded as the ORM would).
# A campaign's labels with their item, annotator and assignment (l, i, u, a), and the order
# label_rows gives them in: the labels CSV and its open-set codes (first appearance) read the
# labels through these too. Each label's item, annotator and assignment by primary key, one
# probe each (config.dbstats.by_primary_key): as joins, stale statistics planned a nested loop
# that read the whole users table for every label.
LABELS_FROM = " ".join(
    [
        "annotation_label l",
        by_primary_key(
            "annotation_item",
            "id, position, sample_id, tool_id, prediction_id, prediction_b_id, payload",
            "l.item_id",
            "i",
        ),
        by_primary_key("auth_user", "username", "l.annotator_id", "u"),
        by_primary_key("annotation_assignment", "shown_order", "l.assignment_id", "a"),
    ]
)
LABEL_ORDER = "i.position, u.username"

LABEL_ROWS_SQL = f"""
SELECT l.item_id, u.username, l.answers, a.shown_order, l.time_ms, l.created_at
FROM {LABELS_FROM}
WHERE l.campaign_id = %s AND l.is_current
ORDER BY {LABEL_ORDER}
"""  # noqa: S608 - constants of this module


def label_rows(campaign: Campaign, chunk: int = 5000) -> Any:
    """The campaign's current labels for the long-format CSV, streamed from the database (a
    server-side cursor, so memory stays flat however many labels there are): per label, the
    item id, the annotator, the answers, the order shown, the time on item and when."""
    loads = json.loads
    with connection.chunked_cursor() as cursor:
        cursor.execute(LABEL_ROWS_SQL, [campaign.pk])
        while rows := cursor.fetchmany(chunk):
            for item_id, username, answers, shown_order, time_ms, created_at in rows:
                yield (
                    item_id,
                    username,
                    None if answers is None else loads(answers),
                    shown_order,
                    time_ms,
                    created_at,
                )


def item_keys(campaign: Campaign) -> dict[int, tuple]:
    """Per item id, what identifies the item outside the platform (ITEM_KEY_COLUMNS)."""
    return {
        row[0]: row
        for row in Item.objects.filter(campaign=campaign)
        .order_by("position")
        .values_list(
            "id",
            "position",
            "sample_id",
            "sample__external_id",
            "tool__name",
            "prediction_id",
            "prediction_b_id",
            "prediction__run_id",
            "prediction_b__run_id",
            "payload__api",
        )
    }


ITEM_KEY_COLUMNS = (
    "item_id",
    "item_position",
    "sample_id",
    "sample_external_id",
    "tool",
    "prediction_a",
    "prediction_b",
    "run_a",
    "run_b",
    "api",
)


def step_review_inputs(campaign: Campaign) -> dict[str, Any]:
    """What the step-level review's section reads (annotation.agreement.steps): the suite's
    error types and, per item, the suite's own verdict on each step of its frozen trace and on
    the whole trace, and each annotator's current verdicts on the steps and on the trace."""
    suite = get_suite(campaign.benchmark.suite) if campaign.benchmark_id else None
    items: dict[int, dict[str, Any]] = {}
    for item_id, payload in campaign.items.values_list("id", "payload"):
        trace = (payload or {}).get("trace") or {}
        auto = [step.get("auto_error") for step in trace.get("steps") or []]
        items[item_id] = {
            "auto": auto,
            "auto_verdict": trace.get("auto_verdict"),
            "labels": {},
            "verdicts": {},
        }
    labels = Label.objects.filter(campaign=campaign, is_current=True).values_list(
        "item_id", "annotator__username", "answers"
    )
    for item_id, username, answers in labels:
        if item_id in items and isinstance(answers, dict):
            items[item_id]["labels"][username] = answers.get("steps") or []
            items[item_id]["verdicts"][username] = answers.get("verdict")
    return {
        "suite": suite.name if suite else "",
        "error_types": [[error.key, error.label] for error in suite.step_errors] if suite else [],
        "items": items,
    }
