"""Refinement of samples (UltraTool's manual refinement, MTU-Bench's calibration): the annotator
edits the sample's gold in an editor and gives a verdict; the refined sample becomes the
sample's next revision once a reviewer approves it (at once without a review stage)."""

from __future__ import annotations

from typing import Any

from annotation.kinds.base import CampaignKind, Submission
from annotation.models import Label
from annotation.refinement_workflow import (
    editor_context,
    editor_preview,
    refinement_answers,
    refinement_apply,
)
from annotation.sources import SPLIT

VERDICT_CHOICES = [
    {"value": "keep", "label": "Keep as it is", "key": "k"},
    {"value": "fixed", "label": "Fixed (my edits)", "key": "f"},
    {"value": "drop", "label": "Drop the sample", "key": "d"},
]


class Refinement(CampaignKind):
    name = "refinement"
    label = "Refinement of samples"
    question_set = [
        {
            "key": "verdict",
            "text": "Your verdict on this sample",
            "scale": "categories",
            "choices": VERDICT_CHOICES,
            "allow_note": True,
        }
    ]
    # Settled by the review stage instead.
    adjudicable = False
    reviewable = True
    drafts = True
    # The gold is what its annotators edit.
    gold_on_request = False
    wide = True
    sources = (SPLIT,)

    def workspace_context(self, assignment: Any) -> dict[str, Any]:
        return editor_context(assignment)

    def preview_context(self, assignment: Any) -> dict[str, Any]:
        return editor_preview(assignment)

    def on_submit(self, *, campaign: Any, assignment: Any, answers: dict[str, Any]) -> Submission:
        answers = {
            **answers,
            **refinement_answers(assignment=assignment, verdict=str(answers.get("verdict"))),
        }
        if campaign.review_stage:
            return Submission(answers=answers, review=Label.Review.PENDING)

        def apply(label: Label) -> None:
            # No review stage: the refinement is the sample's new revision now.
            refinement_apply(label=label)

        return Submission(answers=answers, review=Label.Review.APPROVED, then=apply)


KIND = Refinement()
