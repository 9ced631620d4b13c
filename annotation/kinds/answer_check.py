"""Answer checks: one model answer per item, judged by people the way a judge of single answers
judges it (StableToolBench's human check of its pass judge, §4.2: Solved, Unsure or Unsolved).
The items are a run's finished answers, or the ones a judge's calibration report chose (the
loop asks its campaign the judge's own question: annotation.calibration.services)."""

from __future__ import annotations

from typing import Any

from annotation.kinds.base import CampaignKind
from annotation.sources import ANSWERS, JUDGED


class AnswerCheck(CampaignKind):
    name = "answer_check"
    label = "Answer check"
    # StableToolBench's pass labels, the judge of single answers the platform's suites declare.
    question_set = [
        {
            "key": "label",
            "text": "Does the answer solve the query?",
            "scale": "categories",
            "choices": [
                {"value": "Solved", "label": "Solved", "key": "1"},
                {"value": "Unsure", "label": "Unsure", "key": "2"},
                {"value": "Unsolved", "label": "Unsolved", "key": "3"},
            ],
        }
    ]
    relations = ("sample", "prediction")
    judged = ("prediction",)
    sources = (ANSWERS, JUDGED)
    build_help = "One item per finished answer of a run."

    def item_view(self, item: Any, assignment: Any, view: dict[str, Any]) -> None:
        view["answer"] = view["judged"][0]


KIND = AnswerCheck()
