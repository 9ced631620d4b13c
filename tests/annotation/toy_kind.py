"""A campaign kind that lives only in the test tree: is a sample's gold answer right? It proves
that a kind is one module (and, for the page, one template) registered with the studio: its
item sources, its setup options and a report section of its own are declared here."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from annotation.kinds import CampaignKind
from annotation.kinds.base import ReportSection
from annotation.sources import SPLIT


def gold_votes(ratings: Any, *, resamples: int, seed: int, level: float) -> list[dict[str, Any]]:
    """Per question: how many of the annotators' answers took each choice."""
    out = []
    for q in ratings.questions:
        humans = q.values[:, q.humans]
        votes = {label: int((humans == code).sum()) for code, label in q.labels.items()}
        out.append({"key": q.key, "text": q.text, "votes": votes})
    return out


def gold_vote_rows(questions: list[dict[str, Any]]) -> Iterator[tuple[Any, ...]]:
    for q in questions:
        for label, n in q["votes"].items():
            yield (q["key"], "humans", "", f"votes {label}", n, n, None, None)


def _total(questions: list[dict[str, Any]]) -> dict[str, Any]:
    return {"total": sum(sum(q["votes"].values()) for q in questions)}


GOLD_VOTES = ReportSection(
    name="toy_gold_votes",
    compute=gold_votes,
    rows=gold_vote_rows,
    template="toy/gold_votes.html",
    view=_total,
)


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
    report_sections = (GOLD_VOTES,)

    def item_view(self, item: Any, assignment: Any, view: dict[str, Any]) -> None:
        view["gold"] = item.sample.reference


KIND = GoldCheck()
