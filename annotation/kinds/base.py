"""What a campaign kind is: the questions it asks by default, how its items are built, what an
item shows and with which template, whether its items have two sides, whether its labels are
reviewed or adjudicated, the report's sections beyond the questions, and what a submit does
besides storing the label.

A kind is one object (`KIND` in its module, registered in annotation.kinds); everything the
studio does differently for a kind asks it here, never `campaign.kind == ...`. The defaults
below are a plain kind: questions about a sample, labels adjudicated; a kind names its item
sources (annotation.sources).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annotation.errors import AnnotationError
from benchmarks.kit.registry import study_questions


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
    # Only the run's failed or wrong predictions (a source that takes all of them otherwise).
    failed_only: bool = False
    # Judged items chosen by a judge's calibration report (annotation.calibration.services):
    # (sample id, prediction id, other prediction id or None), in the order to show them.
    judged: list[tuple[int, int, int | None]] | None = None


@dataclass(frozen=True)
class ItemSource:
    """A way of building a campaign's items (annotation.sources): from a split's samples, a
    run's predictions, a benchmark's tools, two runs, a run's failures, a pairs file. A kind
    lists the sources it takes; the setup page's items step and the admin's build form ask the
    researcher for its `fields` (BuildRequest's)."""

    name: str
    fields: tuple[str, ...]
    # Builds the items from the request; the number added.
    build: Callable[[Any, BuildRequest], int]
    # What to ask for when the request lacks its fields.
    missing: str = ""
    # Its items are samples (with a gold answer a campaign may show or hide).
    samples: bool = True

    def given(self, request: BuildRequest) -> bool:
        return all(getattr(request, field) for field in self.fields)


def _adds_nothing(data: Any) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class ReportSection:
    """A section of the agreement report beyond its questions (annotation.agreement.sections):
    computed from the campaign's ratings into the report's data under `name`, written as rows
    of the summary CSV, and shown on the report's page by `template`, which gets the section's
    data as `section.data` and what `view` adds (its charts) as `section`'s other keys."""

    name: str
    # (ratings, *, resamples, seed, level) -> the section's data (plain, stored as JSON).
    compute: Callable[..., Any]
    # The section's data -> rows of the summary CSV (annotation.agreement.report's
    # SUMMARY_COLUMNS).
    rows: Callable[[Any], Iterable[tuple[Any, ...]]]
    template: str
    view: Callable[[Any], dict[str, Any]] = _adds_nothing
    # (campaign) -> what `compute` reads beyond the questions' ratings (the labels' answers
    # its kind stores beside them, what its items froze), put in the ratings'
    # `section_inputs` under `name` by annotation.agreement.data; None: nothing more.
    load: Callable[[Any], Any] | None = None


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
    # The ways its items are built (annotation.sources), the default first: a later one is
    # used when the researcher gives its fields (a baseline from a run rather than a split).
    sources: tuple[ItemSource, ...] = ()
    build_help: str = "One item per sample of a split of the campaign's benchmark."
    # Each annotator's answers can be scored as a run of the campaign's task.
    scored_as_runs: bool = False
    # Items pair two runs' predictions (A and B): the report ranks the runs.
    compares_runs: bool = False
    # The agreement report's sections beyond the questions (annotation.agreement.sections).
    report_sections: tuple[ReportSection, ...] = ()
    # Answers beyond the questions that a submit carries (the form's fields, the API's
    # `answers` keys) and the kind's on_submit checks and stores (a step-level review's steps).
    extra_fields: tuple[str, ...] = ()
    # A script of its own (a path under static/) the annotation page loads for its items.
    script: str = ""

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

    @property
    def builders(self) -> frozenset[str]:
        """The names of its item sources."""
        return frozenset(source.name for source in self.sources)

    def build_fields(self) -> tuple[str, ...]:
        """The items form's fields for this kind: its sources', then the limit, which every
        source honours."""
        fields = [field for source in self.sources for field in source.fields]
        return (*dict.fromkeys(fields), "limit")

    def setup_options(self) -> tuple[str, ...]:
        """The campaign's options (Campaign fields) that the setup flow's first step asks for
        this kind; its items step asks its sources' fields (build_fields)."""
        # The gold is a choice only of items that are samples, when the kind shows it on request.
        gold_choice = self.shows_reference and self.gold_on_request
        wanted = {
            "randomize_sides": self.sided,
            "show_gold": gold_choice and any(source.samples for source in self.sources),
            "review_stage": self.reviewable,
            "adjudication_stage": self.adjudicable,
        }
        return tuple(option for option, applies in wanted.items() if applies)

    def sample_item(self, sample: Any, split: str) -> dict[str, Any]:
        """An item's fields for one sample of a split."""
        return {"sample": sample}

    def build(self, campaign: Any, request: BuildRequest) -> int:
        """Build items as the researcher asked (the setup page, the admin's form): from the
        last of its sources whose fields were given; nothing given asks for the first's. The
        number added."""
        if not self.sources:
            raise AnnotationError(f"{self.label} campaigns have no way of building items")
        given = [source for source in self.sources if source.given(request)]
        if not given:
            default = self.sources[0]
            raise AnnotationError(default.missing, field=default.fields[0])
        return given[-1].build(campaign, request)

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
        """The label to store for checked answers (AnnotationError refuses the submit). The
        answers hold the kind's `extra_fields` as they were sent, for it to check."""
        return Submission(answers=answers)

    def __repr__(self) -> str:
        return f"<campaign kind {self.name}>"
