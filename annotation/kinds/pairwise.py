"""Pairwise comparison of two runs (MTU-Bench's win / tie / lose): each sample both runs
answered, their two outputs in random order."""

from __future__ import annotations

from typing import Any

from annotation.agreement.sections import RUN_LEADERBOARD
from annotation.kinds.base import CampaignKind
from annotation.sources import JUDGED, RUNS

# 1: A is better; 0: a tie; -1: B is better (against the canonical order).
PAIRWISE_CHOICES = [
    {"value": 1, "label": "A is better", "key": "1"},
    {"value": 0, "label": "Tie", "key": "2"},
    {"value": -1, "label": "B is better", "key": "3"},
]


class Pairwise(CampaignKind):
    name = "pairwise"
    label = "Pairwise comparison of two runs"
    question_set = [
        {
            "key": "better",
            "text": "Which output serves the user better?",
            "scale": "pairwise",
            "choices": PAIRWISE_CHOICES,
            "allow_note": True,
        }
    ]
    relations = ("sample", "prediction", "prediction_b")
    judged = ("prediction", "prediction_b")
    sided = True
    side_labels = ("Left is better", "Tie", "Right is better")
    # MTU-Bench's human comparison: three annotators per pair of outputs.
    labels_per_item = 3
    # Two runs' answers; or the pairs a pairwise judge's calibration report sends back.
    sources = (RUNS, JUDGED)
    build_help = "One item per sample both runs answered (A and B in that order)."
    compares_runs = True
    report_sections = (RUN_LEADERBOARD,)

    def item_view(self, item: Any, assignment: Any, view: dict[str, Any]) -> None:
        # A then B: the studio puts them in the order each person is shown (selectors.item_view).
        view["sides"] = list(view["judged"])


KIND = Pairwise()
