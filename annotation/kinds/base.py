"""What a campaign kind is: the questions it asks by default, how its items are built, what an
item shows and with which template, whether its items have two sides, whether its labels are
reviewed or adjudicated, and what a submit does besides storing the label.

A kind is one object (`KIND` in its module, registered in annotation.kinds); everything the
studio does differently for a kind asks it here, never `campaign.kind == ...`. The defaults
below are a plain kind: questions about a sample, items from a split, labels adjudicated.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annotation.errors import AnnotationError
from benchmarks.kit.registry import study_questions

# Ways of building items (annotation.services.items_from_*), named so that a kind says which
# it accepts: "split" (a benchmark split's samples), "run" (a run's predictions), "tools" (a
# benchmark's tools), "runs" (two runs' predictions of the same samples), "failures" (a run's
# failed predictions), "api_pairs" (the virtual API server's real and simulated responses).
BUILDERS = ("split", "run", "tools", "runs", "failures", "api_pairs")
# What the researcher gives for each (BuildRequest's fields): the setup page's items step and
# the admin's build form show a kind only its builders' fields, and the limit.
BUILDER_FIELDS: dict[str, tuple[str, ...]] = {
    "split": ("split",),
    "run": ("run",),
    "tools": (),
    "runs": ("run", "run_b"),
    "failures": ("run",),
    "api_pairs": ("pairs",),
}


@dataclass
class Submission:
    """What a submit stores beyond the checked answers, and what it does once stored."""

    answers: dict[str, Any]
    review: str = ""
    # Called with the new label in the submit's transaction (an error undoes the label).
    then: Callable[[Any], Any] | None = None


@dataclass
class BuildRequest:
    """What the researcher gave to build items (the admin's form)."""

    split: str = ""
    limit: int | None = None
    run: Any = None
    run_b: Any = None
    pairs: Path | None = None
    # The pairs file's name as the researcher knows it (an upload's), for messages.
    pairs_name: str = ""


class CampaignKind:
    name: str = ""
    label: str = ""
    # The default questions: [{"key", "text", "scale", "choices", ...}] (annotation.Question);
    # when empty, the question set a suite declares for this kind (its paper's human study).
    question_set: list[dict[str, Any]] = []
    # The item relations its view reads (joined on every next item).
    relations: tuple[str, ...] = ("sample",)
    # Two sides (A and B) shown in an order of their own to each annotator (and adjudicator):
    # item_view puts them in `view["sides"]` as A then B, the studio orders them for whoever
    # is shown them, and that order never leaves the server.
    sided: bool = False
    side_labels: tuple[str, str, str] = ("Left", "Tie", "Right")
    # Disagreeing labels go to an adjudicator (when the campaign has that stage).
    adjudicable: bool = True
    # Labels go to a reviewer (when the campaign has that stage).
    reviewable: bool = False
    # The annotator edits a draft of the sample (the refinement editor).
    drafts: bool = False
    # The item is shown wide (an editor beside it).
    wide: bool = False
    # The sample's gold answer may be shown (not to someone answering the same question)...
    shows_reference: bool = True
    # ...and only when the campaign asks for it (Campaign.show_gold); False: always (an editor
    # of the gold sees it).
    gold_on_request: bool = True
    # The item relations holding the model outputs judged (their suite summarises each).
    judged: tuple[str, ...] = ()
    # Distinct annotators each item needs by default (the create service's default, for the
    # setup page and the admin alike; a researcher may change it).
    labels_per_item: int = 1
    builders: frozenset[str] = frozenset({"split"})
    build_help: str = "One item per sample of a split of the campaign's benchmark."
    # Each annotator's answers can be scored as a run of the campaign's task.
    scored_as_runs: bool = False
    # Items pair two runs' predictions (A and B): the report ranks the runs.
    compares_runs: bool = False
    # Extra sections of the agreement report (annotation.agreement.report): "turing", "pairwise".
    report_sections: tuple[str, ...] = ()

    @property
    def item_template(self) -> str:
        return f"annotation/items/{self.name}.html"

    def shows_gold(self, campaign: Any) -> bool:
        """Whether this campaign's items show the sample's gold."""
        if not self.shows_reference:
            return False
        return bool(campaign.show_gold) if self.gold_on_request else True

    def questions(self) -> list[dict[str, Any]]:
        """The default questions, a fresh copy (a campaign may change its own)."""
        return copy.deepcopy(self.question_set or study_questions(self.name))

    def build_fields(self) -> tuple[str, ...]:
        """The items form's fields for this kind: its builders' (BUILDER_FIELDS), then the
        limit, which every source honours."""
        fields = [f for b in BUILDERS if b in self.builders for f in BUILDER_FIELDS.get(b, ())]
        return (*dict.fromkeys(fields), "limit")

    def sample_item(self, sample: Any, split: str) -> dict[str, Any]:
        """An item's fields for one sample of a split."""
        return {"sample": sample}

    def build(self, campaign: Any, request: BuildRequest) -> int:
        """Build items as the researcher asked (the admin's form); the number added."""
        # Imported here: the services ask the registry for kinds (this module is below them).
        from annotation.services import items_from_split

        if not request.split:
            raise AnnotationError("give the split", field="split")
        return items_from_split(campaign=campaign, split=request.split.strip(), limit=request.limit)

    def item_view(self, item: Any, assignment: Any, view: dict[str, Any]) -> None:
        """Add what the kind's template shows about the item to `view` (which holds the
        sample's query, turns, tools, gold and the judged outputs, `judged`, already)."""

    def workspace_context(self, assignment: Any) -> dict[str, Any]:
        """More for the annotation workspace around the item (the refinement editor)."""
        return {}

    def preview_context(self, assignment: Any) -> dict[str, Any]:
        """What workspace_context gives, for the setup's preview of an item: the assignment is
        never saved, and nothing may be stored."""
        return {}

    def on_submit(self, *, campaign: Any, assignment: Any, answers: dict[str, Any]) -> Submission:
        """The label to store for checked answers (AnnotationError refuses the submit)."""
        return Submission(answers=answers)

    def __repr__(self) -> str:
        return f"<campaign kind {self.name}>"
