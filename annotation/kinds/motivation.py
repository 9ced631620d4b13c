"""Tool motivation (MetaTool): one item per tool of a benchmark; why would a model need it."""

from __future__ import annotations

from typing import Any

from annotation.kinds.base import BuildRequest, CampaignKind
from annotation.services import items_from_tools


class Motivation(CampaignKind):
    name = "motivation"
    label = "Tool motivation"
    relations = ("tool",)
    # MetaTool's motivation labels: two experts per tool.
    labels_per_item = 2
    builders = frozenset({"tools"})
    build_help = "One item per tool of the campaign's benchmark."

    def build(self, campaign: Any, request: BuildRequest) -> int:
        return items_from_tools(campaign=campaign, limit=request.limit)

    def item_view(self, item: Any, assignment: Any, view: dict[str, Any]) -> None:
        view["tool"] = item.tool


KIND = Motivation()
