"""A campaign kind that lives only in the test tree: is a sample's gold answer right? It proves
that a kind is one module (and, for the page, one template) registered with the studio."""

from __future__ import annotations

from typing import Any

from annotation.kinds import CampaignKind
from annotation.sources import SPLIT


class GoldCheck(CampaignKind):
    name = "toy_gold_check"
    label = "Is the gold answer right? (toy)"
    question_set = [
        {
            "key": "right",
            "text": "Is the gold answer right?",
            "scale": "categories",
            "choices": [
                {"value": "yes", "label": "Yes", "key": "1"},
                {"value": "no", "label": "No", "key": "2"},
            ],
        }
    ]
    sources = (SPLIT,)

    def item_view(self, item: Any, assignment: Any, view: dict[str, Any]) -> None:
        view["gold"] = item.sample.reference


KIND = GoldCheck()
