"""The Turing test of API responses (StableToolBench): a real and a simulated response to the
same call, shown in random order, compared on three questions."""

from __future__ import annotations

from typing import Any

from annotation.agreement.sections import TURING_SHARES
from annotation.kinds.base import CampaignKind
from annotation.sources import API_PAIRS
from config.display import pretty


class Turing(CampaignKind):
    name = "turing"
    label = "Turing test of API responses"
    sided = True
    side_labels = ("Left is better", "Tie", "Right is better")
    # StableToolBench's Turing test: three annotators per pair of responses.
    labels_per_item = 3
    sources = (API_PAIRS,)
    build_help = (
        'A JSON file: a list of {"documentation", "arguments", "real", "simulated", "api"?}.'
    )
    report_sections = (TURING_SHARES,)

    def item_view(self, item: Any, assignment: Any, view: dict[str, Any]) -> None:
        payload = item.payload
        # A (real) then B (simulated): the studio puts them in the order each person is shown
        # (selectors.item_view), and nothing else on a side says which it is.
        view["sides"] = [pretty(payload.get("real")), pretty(payload.get("simulated"))]
        view["documentation"] = pretty(payload.get("documentation"))
        view["arguments"] = pretty(payload.get("arguments"))
        view["api"] = payload.get("api", "")


KIND = Turing()
