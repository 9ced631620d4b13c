"""The Turing test of API responses (StableToolBench): a real and a simulated response to the
same call, shown in random order, compared on three questions."""

from __future__ import annotations

from typing import Any

from annotation.assign import AnnotationError
from annotation.kinds.base import BuildRequest, CampaignKind
from annotation.services import items_from_pairs_file
from config.display import pretty


class Turing(CampaignKind):
    name = "turing"
    label = "Turing test of API responses"
    sided = True
    side_labels = ("Left is better", "Tie", "Right is better")
    # StableToolBench's Turing test: three annotators per pair of responses.
    labels_per_item = 3
    builders = frozenset({"api_pairs"})
    build_help = (
        'A JSON file: a list of {"documentation", "arguments", "real", "simulated", "api"?}.'
    )
    report_sections = ("turing",)

    def build(self, campaign: Any, request: BuildRequest) -> int:
        if request.pairs is None:
            raise AnnotationError("upload the pairs file", field="pairs")
        return items_from_pairs_file(
            campaign=campaign, path=request.pairs, limit=request.limit, name=request.pairs_name
        )

    def item_view(self, item: Any, assignment: Any, view: dict[str, Any]) -> None:
        payload = item.payload
        # A (real) then B (simulated): the studio puts them in the order each person is shown
        # (selectors.item_view), and nothing else on a side says which it is.
        view["sides"] = [pretty(payload.get("real")), pretty(payload.get("simulated"))]
        view["documentation"] = pretty(payload.get("documentation"))
        view["arguments"] = pretty(payload.get("arguments"))
        view["api"] = payload.get("api", "")


KIND = Turing()
