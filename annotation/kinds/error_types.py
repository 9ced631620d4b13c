"""Error types of failed traces (WTU-Eval): one item per failed or wrong prediction of a run;
every type of error that applies."""

from __future__ import annotations

from typing import Any

from annotation.assign import AnnotationError
from annotation.kinds.base import BuildRequest, CampaignKind
from annotation.services import items_from_failures


class ErrorTypes(CampaignKind):
    name = "error_types"
    label = "Error types of failed traces"
    relations = ("sample", "prediction")
    judged = ("prediction",)
    builders = frozenset({"failures"})
    build_help = "One item per failed or wrong prediction of a run."

    def build(self, campaign: Any, request: BuildRequest) -> int:
        if not request.run:
            raise AnnotationError("choose the run whose failures are labelled", field="run")
        return items_from_failures(campaign=campaign, run=request.run, limit=request.limit)

    def item_view(self, item: Any, assignment: Any, view: dict[str, Any]) -> None:
        view["failed"] = view["judged"][0]


KIND = ErrorTypes()
