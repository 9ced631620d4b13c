"""Tool motivation (MetaTool): one item per tool of a benchmark; why would a model need it."""

from __future__ import annotations

from typing import Any

from annotation.kinds.base import CampaignKind
from annotation.sources import TOOLS


class Motivation(CampaignKind):
    name = "motivation"
    label = "Tool motivation"
    relations = ("tool",)
    # MetaTool's motivation labels: two experts per tool.
    labels_per_item = 2
    sources = (TOOLS,)
    build_help = "One item per tool of the campaign's benchmark."

    def item_view(self, item: Any, assignment: Any, view: dict[str, Any]) -> None:
        view["tool"] = item.tool


KIND = Motivation()
