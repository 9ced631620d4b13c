"""A campaign's ratings as the agreement report reads them: one matrix of codes per question
(items x raters) and who the raters are. Plain dataclasses with numpy arrays, no Django:
annotation.agreement.data builds them from the database, annotation.agreement.report computes
the report from them alone (so a test or a script can make a report without a database)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

# Krippendorff's levels of measurement.
Level = Literal["nominal", "ordinal", "interval", "ratio"]


@dataclass(frozen=True)
class Rater:
    """Who gave a column of ratings: "human:<username>", "judge:<name>" or "metric:<name>"."""

    kind: str
    name: str
    # A metric's: "lower" when its codes are its values with the sign turned.
    direction: str | None = field(default=None, compare=False)

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.name}"


@dataclass
class QuestionRatings:
    """One question's ratings: `values[i, r]` is rater r's code for item i (NaN: none)."""

    key: str
    text: str
    scale: str
    numeric: bool
    # Krippendorff's level of measurement for the scale.
    level: Level
    # The name of each code, for tables and the confusion matrix: {code: label}.
    labels: dict[float, str]
    raters: list[Rater]
    values: np.ndarray
    # Humans only: per (item, annotator) the side chosen as shown, 1 first / 0 tie / -1 second
    # (pairwise questions; NaN elsewhere). Position bias is read from it.
    shown: np.ndarray | None = None
    # Per item, the gold code when the campaign's item has one for this question (else NaN).
    gold: np.ndarray | None = None

    @property
    def humans(self) -> list[int]:
        return [i for i, rater in enumerate(self.raters) if rater.kind == "human"]

    @property
    def automatic(self) -> list[int]:
        return [i for i, rater in enumerate(self.raters) if rater.kind != "human"]


@dataclass
class CampaignRatings:
    campaign_id: int
    campaign_name: str
    kind: str
    items: list[int]
    questions: list[QuestionRatings]
    humans: list[Rater]
    # Per annotator: the time on item of their labels that have one (ms).
    times: dict[str, list[int]] = field(default_factory=dict)
    # Pairwise items: the runs behind A and B (run ids), and their names.
    pair_runs: list[tuple[int, int]] | None = None
    run_names: dict[int, str] = field(default_factory=dict)
    # Per judge of a pairwise campaign: per item, (first-shown wins, ties, second wins) over
    # its judgments: the judge's position bias.
    judge_shown: dict[str, np.ndarray] = field(default_factory=dict)
    # Per metric compared: "higher" or "lower" is better (a lower one's codes are turned).
    metric_directions: dict[str, str] = field(default_factory=dict)
    # The report's sections beyond the questions that the campaign's kind declares
    # (CampaignKind.report_sections: annotation.kinds.base.ReportSection, typed loosely here,
    # where nothing of Django is imported).
    sections: tuple[Any, ...] = ()
    # What those sections read beyond the questions' ratings (ReportSection.load), by name.
    section_inputs: dict[str, Any] = field(default_factory=dict)
