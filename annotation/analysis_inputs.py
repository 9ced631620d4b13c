"""What the annotation app gives the papers' analyses (evaluation/analyses.py, the registry of
inputs beyond a run's records): the labels humans gave a run's outputs. The evaluation app may
not import this app, so the settings name this module's PROVIDER (settings.ANALYSIS_INPUTS), which
the analyses import the first time one of them reads the labels.

"human_labels": {campaign kind: {(sample key "split/external_id", repeat): [answers, ...]}},
every current, not revoked label of every campaign item that judges one of the run's
predictions (its answers as stored: {question key: value})."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Max

from annotation.models import Label
from config.access import READ_LABELS
from evaluation.analyses import InputProvider
from evaluation.models import Run


def _labels(run: Run) -> Any:
    return Label.objects.filter(item__prediction__run=run, is_current=True, revoked_at__isnull=True)


def human_labels(run: Run) -> dict[str, dict[tuple[str, int], list[dict[str, Any]]]]:
    found: dict[str, dict[tuple[str, int], list[dict[str, Any]]]] = {}
    rows = _labels(run).values_list(
        "campaign__kind",
        "item__prediction__sample__split",
        "item__prediction__sample__external_id",
        "item__prediction__repeat",
        "answers",
    )
    for kind, split, external_id, repeat, answers in rows.order_by("item_id", "created_at"):
        key = (f"{split}/{external_id}", int(repeat))
        found.setdefault(kind, {}).setdefault(key, []).append(answers or {})
    return found


def human_labels_mark(run: Run) -> str:
    """The labels' count and newest row (an undo or a new answer makes a new row)."""
    seen = Label.objects.filter(item__prediction__run=run).aggregate(
        n=Count("id"), last=Max("id"), revoked=Max("revoked_at")
    )
    return f"{seen['n']}:{seen['last']}:{seen['revoked']}"


# Reading an analysis drawn from the labels needs what reading the labels needs (config.access
# READ_LABELS): the aggregate of everyone's answers is still their answers.
PROVIDER = InputProvider(human_labels, human_labels_mark, permissions=READ_LABELS.perms)
