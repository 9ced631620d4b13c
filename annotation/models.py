"""How humans judge: campaigns of questions about items, the assignment of items to annotators,
and their labels, with every label's history kept.

A label is a verdict like a judge's judgment or a metric's value: it is stored against what was
judged (a sample, a tool, a prediction, a pair of predictions, an API-response pair), and a
pairwise answer against the canonical order (A, B) with the order shown kept on the assignment.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from annotation.kinds import kind_named, kind_validator
from benchmarks.models import Benchmark, Sample, Tool
from evaluation.models import JudgeVersion, Prediction, Run


class Campaign(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        ACTIVE = "active", "Active"
        CLOSED = "closed", "Closed"

    # The researcher's own name (researcher pages, the admin); members see `shown_name`.
    name = models.CharField(max_length=200, unique=True)
    public_name = models.CharField(
        max_length=200,
        blank=True,
        help_text="The name annotators, reviewers and adjudicators see. Blank: the name, except "
        "for a blind campaign (pairwise, Turing), whose members see a neutral one (its kind and "
        "number), since its own name may say which runs or responses it compares.",
    )
    # Any kind in the registry (annotation.kinds), the one list of kinds: checked by its
    # validator, clean() and the services, not by database choices, so that a kind is added by
    # registering it, without a migration.
    kind = models.CharField(
        max_length=20, validators=[kind_validator], help_text="A registered campaign kind."
    )
    benchmark = models.ForeignKey(
        Benchmark, null=True, blank=True, on_delete=models.PROTECT, related_name="campaigns"
    )
    task = models.CharField(
        max_length=50, blank=True, help_text="Human baseline: the benchmark task answered."
    )
    guidelines = models.TextField(blank=True, help_text="Markdown, shown to annotators.")
    labels_per_item = models.PositiveSmallIntegerField(
        default=1, help_text="Distinct annotators each item needs."
    )
    randomize_sides = models.BooleanField(
        default=True, help_text="Pairwise and Turing items: show the two sides in random order."
    )
    show_gold = models.BooleanField(
        default=False,
        help_text="Pairwise and error-type items show the sample's gold answer to annotators "
        "(off: they judge the outputs on their own).",
    )
    review_stage = models.BooleanField(
        default=False, help_text="Refinements are approved or returned by a reviewer."
    )
    adjudication_stage = models.BooleanField(
        default=False, help_text="Items whose labels disagree go to an adjudicator."
    )
    lease_seconds = models.PositiveIntegerField(
        default=1800, help_text="How long an annotator holds an item before it returns."
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.DRAFT)
    # Pairwise: the two runs compared (A and B in the canonical order).
    run_a = models.ForeignKey(
        Run, null=True, blank=True, on_delete=models.PROTECT, related_name="campaigns_as_a"
    )
    run_b = models.ForeignKey(
        Run, null=True, blank=True, on_delete=models.PROTECT, related_name="campaigns_as_b"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(labels_per_item__gte=1), name="campaign_labels_per_item_positive"
            ),
            models.CheckConstraint(condition=Q(lease_seconds__gte=30), name="campaign_lease_min"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def shown_name(self) -> str:
        """The name the campaign's members see (every studio page, the studio's API): its public
        name; without one, a blind campaign's (a kind with sides) is neutral, its kind and
        number, and any other's is its name."""
        if self.public_name:
            return self.public_name
        try:
            kind = kind_named(self.kind)
        except ValueError:
            return f"Campaign {self.pk}"
        return f"{kind.label} #{self.pk}" if kind.sided else self.name

    @property
    def kind_label(self) -> str:
        try:
            return kind_named(self.kind).label
        except ValueError:
            return self.kind

    def clean(self) -> None:
        try:
            kind = kind_named(self.kind)
        except ValueError as exc:
            raise ValidationError({"kind": str(exc)}) from None
        if not kind.adjudicable and self.adjudication_stage:
            # A kind with a review settles its labels there.
            why = ": a reviewer settles their labels." if kind.reviewable else "."
            raise ValidationError(
                {"adjudication_stage": f"{kind.label} campaigns have no adjudication stage{why}"}
            )
        if not kind.reviewable and self.review_stage:
            raise ValidationError({"review_stage": "Only refinement campaigns have a review."})


class Question(models.Model):
    """One question asked about every item of a campaign."""

    class Scale(models.TextChoices):
        CATEGORIES = "categories", "Categories"
        ORDINAL = "ordinal", "Ordinal"
        PAIRWISE = "pairwise", "Pairwise (A / tie / B)"
        ITEM_CHOICES = "item_choices", "Choices from the item (e.g. candidate tools)"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="questions")
    key = models.SlugField(max_length=50)
    text = models.CharField(max_length=500)
    scale = models.CharField(max_length=20, choices=Scale.choices)
    # [{"value": "A", "label": "Real-time or external data", "key": "1"}, ...]; pairwise scales
    # are 1 (A) / 0 (tie) / -1 (B) against the canonical order.
    choices = models.JSONField(default=list, blank=True)
    multiple = models.BooleanField(default=False, help_text="Several choices may apply.")
    min_choices = models.PositiveSmallIntegerField(default=0)
    max_choices = models.PositiveSmallIntegerField(null=True, blank=True)
    required = models.BooleanField(default=True)
    allow_note = models.BooleanField(default=False)
    order = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["campaign", "order", "id"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "key"], name="question_key_unique")
        ]

    def __str__(self) -> str:
        return f"{self.campaign}: {self.key}"


class Member(models.Model):
    class Role(models.TextChoices):
        ANNOTATOR = "annotator", "Annotator"
        REVIEWER = "reviewer", "Reviewer"
        ADJUDICATOR = "adjudicator", "Adjudicator"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="members")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="campaign_memberships"
    )
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.ANNOTATOR)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "user", "role"], name="member_unique")
        ]
        indexes = [models.Index(fields=["user", "role"])]

    def __str__(self) -> str:
        return f"{self.user} ({self.role}) in {self.campaign}"


class Item(models.Model):
    """What is judged, in a campaign. `payload` freezes what is shown when it is not a live
    row (an API-response pair, the candidates of a baseline question)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveIntegerField()
    sample = models.ForeignKey(
        Sample, null=True, blank=True, on_delete=models.CASCADE, related_name="annotation_items"
    )
    tool = models.ForeignKey(
        Tool, null=True, blank=True, on_delete=models.CASCADE, related_name="annotation_items"
    )
    prediction = models.ForeignKey(
        Prediction,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="annotation_items",
        help_text="The output judged (pairwise: A's).",
    )
    prediction_b = models.ForeignKey(
        Prediction,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="annotation_items_as_b",
        help_text="Pairwise: B's output.",
    )
    payload = models.JSONField(default=dict, blank=True)
    gold = models.JSONField(
        null=True, blank=True, help_text="Known answers {question: value} (quality checks)."
    )
    # Assignments holding the item (leased or submitted), kept in step under the item's lock;
    # open while fewer than the campaign's labels_per_item.
    active = models.PositiveSmallIntegerField(default=0)
    submitted = models.PositiveSmallIntegerField(default=0)
    is_open = models.BooleanField(default=True)

    class Meta:
        ordering = ["campaign", "position"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "position"], name="item_position_unique")
        ]
        indexes = [
            # The next-item query walks this: open items of a campaign in order.
            models.Index(
                fields=["campaign", "position"], condition=Q(is_open=True), name="item_open_idx"
            )
        ]

    def __str__(self) -> str:
        return f"{self.campaign_id}/{self.position}"


class Assignment(models.Model):
    """An item given to an annotator. Never the same item to the same annotator twice while
    it is leased or submitted (a unique constraint); an expired lease frees the item."""

    class Status(models.TextChoices):
        LEASED = "leased", "Leased"
        SUBMITTED = "submitted", "Submitted"
        SKIPPED = "skipped", "Skipped"
        EXPIRED = "expired", "Expired"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="assignments")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments"
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.LEASED)
    # "AB": A shown on the left / first; "BA": B first; "" when there are no sides.
    shown_order = models.CharField(max_length=2, blank=True)
    leased_at = models.DateTimeField(auto_now_add=True)
    lease_until = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["item", "annotator"],
                condition=Q(status__in=["leased", "submitted", "skipped"]),
                name="assignment_once_per_annotator",
            )
        ]
        indexes = [
            models.Index(fields=["campaign", "annotator", "status"]),
            models.Index(
                fields=["lease_until"], condition=Q(status="leased"), name="assignment_lease_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.item} -> {self.annotator}"


class Label(models.Model):
    """An annotator's answers about an item. Never changed in place: an undo or a new answer
    makes a new row and the old one stops being current (is_current), so the history stays."""

    class Review(models.TextChoices):
        NONE = "", "No review"
        PENDING = "pending", "Awaiting review"
        APPROVED = "approved", "Approved"
        RETURNED = "returned", "Returned"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="labels")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="labels")
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="labels")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="labels"
    )
    # {question key: value}; pairwise values are 1 / 0 / -1 against the canonical order.
    answers = models.JSONField(default=dict)
    note = models.TextField(blank=True)
    # The form's one-time token: a double click or a second tab submits it again, and the
    # unique constraint turns that into the same label.
    token = models.UUIDField(unique=True)
    is_current = models.BooleanField(default=True)
    supersedes = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="superseded_by"
    )
    revoked_at = models.DateTimeField(null=True, blank=True, help_text="Undone by its author.")
    time_ms = models.PositiveIntegerField(null=True, blank=True, help_text="Time on the item.")
    review = models.CharField(max_length=20, choices=Review.choices, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item", "created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["item", "annotator"],
                condition=Q(is_current=True),
                name="label_one_current_per_annotator",
            )
        ]
        indexes = [
            models.Index(fields=["campaign", "is_current"]),
            # An annotator's own answers in a campaign (their progress, undo): read on every
            # item they are given, so not a walk over the whole campaign's labels.
            models.Index(
                fields=["campaign", "annotator", "created_at"],
                condition=Q(is_current=True),
                name="label_current_mine_idx",
            ),
            models.Index(
                fields=["campaign", "created_at"],
                condition=Q(review="pending"),
                name="label_pending_review_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"label {self.pk} on {self.item}"


class RefinementDraft(models.Model):
    """An annotator's unsaved work on a refinement item, saved as they type."""

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="draft")
    data = models.JSONField(default=dict)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"draft of {self.assignment}"


class Review(models.Model):
    """A reviewer's decision on a refinement label."""

    class Decision(models.TextChoices):
        APPROVED = "approved", "Approved"
        RETURNED = "returned", "Returned"

    label = models.ForeignKey(Label, on_delete=models.CASCADE, related_name="reviews")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reviews"
    )
    decision = models.CharField(max_length=20, choices=Decision.choices)
    comment = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.decision} by {self.reviewer}"


class Adjudication(models.Model):
    """The answers an adjudicator settles on for an item whose labels disagree."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="adjudications")
    adjudicator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="adjudications"
    )
    answers = models.JSONField(default=dict)
    note = models.TextField(blank=True)
    is_current = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["item"], condition=Q(is_current=True), name="adjudication_one_current"
            )
        ]

    def __str__(self) -> str:
        return f"adjudication of {self.item}"


class StoredReport(models.Model):
    """A report computed by a worker (config.computed) for one choice of figures (`params`,
    keyed by their hash), kept until its inputs change: `fingerprint` is what they looked like
    when it was made."""

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for a worker"
        RUNNING = "running", "Computing"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    key = models.CharField(max_length=64, help_text="A hash of params.")
    params = models.JSONField(default=dict)
    fingerprint = models.CharField(max_length=200)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    # How often a worker started this computation, and until when the one holding it (or its
    # message, while pending) counts as alive: config.background's one recovery rule.
    attempts = models.PositiveIntegerField(default=0)
    lease_until = models.DateTimeField(null=True, blank=True)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    data = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    seconds = models.FloatField(null=True, blank=True, help_text="Time the computation took.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class AgreementReport(StoredReport):
    """A computed agreement report of a campaign for one choice of raters and questions
    (`params`), kept until the labels change: `fingerprint` is what the campaign's labels,
    items and the chosen judges' judgments looked like when it was made."""

    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="agreement_reports"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "key"], name="agreement_report_unique")
        ]

    def __str__(self) -> str:
        return f"agreement report {self.key[:8]} of {self.campaign}"


class CalibrationReport(StoredReport):
    """A judge version's computed calibration report for one choice of figures (`params`:
    resamples, seed), with the trend across the judge's versions, kept until its inputs change:
    `fingerprint` is what every version's judgments and the labels of the campaigns that hold
    the judged items looked like when it was made (annotation.calibration.stored)."""

    version = models.ForeignKey(
        JudgeVersion, on_delete=models.CASCADE, related_name="calibration_reports"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["version", "key"], name="calibration_report_unique")
        ]

    def __str__(self) -> str:
        return f"calibration report {self.key[:8]} of {self.version}"
