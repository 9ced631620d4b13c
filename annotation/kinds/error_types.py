"""Error types of failed traces (WTU-Eval): one item per failed or wrong prediction of a run;
every type of error that applies."""

from __future__ import annotations

from typing import Any

from annotation.kinds.base import CampaignKind
from annotation.sources import FAILURES


class ErrorTypes(CampaignKind):
    name = "error_types"
    label = "Error types of failed traces"
    relations = ("sample", "prediction")
    judged = ("prediction",)
    sources = (FAILURES,)
    build_help = "One item per failed or wrong prediction of a run."

    def item_view(self, item: Any, assignment: Any, view: dict[str, Any]) -> None:
        view["failed"] = view["judged"][0]


KIND = ErrorTypes()
