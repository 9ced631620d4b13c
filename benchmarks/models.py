"""What is evaluated: benchmarks, their tools, their samples, and the samples' revisions."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex, OpClass
from django.db import models
from django.db.models.functions import Cast, Upper


class Benchmark(models.Model):
    name = models.CharField(max_length=100, unique=True)
    suite = models.CharField(max_length=50, help_text="The suite module that reads and scores it.")
    description = models.TextField(blank=True)
    is_demo = models.BooleanField(
        default=False, help_text="Demo data written for this platform, not the published benchmark."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        # Demo benchmarks are usually named as such already ("MetaTool (demo)").
        if self.is_demo and "demo" not in self.name.lower():
            return f"{self.name} (demo)"
        return self.name


class Tool(models.Model):
    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="tools")
    name = models.CharField(max_length=300)
    description = models.TextField(blank=True)
    parameters = models.JSONField(
        default=dict, blank=True, help_text="JSON schema of the arguments."
    )
    returns = models.JSONField(default=dict, blank=True, help_text="JSON schema of the result.")
    category = models.CharField(max_length=200, blank=True)
    raw = models.JSONField(default=dict, blank=True, help_text="The record as published.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["benchmark", "name"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "name"], name="tool_unique_per_benchmark"),
        ]

    def __str__(self) -> str:
        return self.name


# The natural order of ids: each run of digits left-padded with zeros to NATURAL_DIGITS digits,
# so that M-S_0_2 comes before M-S_0_10 in any collation. Two passes of regexp_replace (both
# immutable, as a stored generated column needs): put NATURAL_DIGITS zeros in front of every
# run, then keep the run's last NATURAL_DIGITS digits. A run longer than that is left whole (it
# sorts after every shorter number, as it should, while it starts with 1-9).
NATURAL_DIGITS = 20


def natural_key(field: str) -> models.Func:
    padded = models.Func(
        models.F(field),
        models.Value(r"([0-9]+)"),
        models.Value("0" * NATURAL_DIGITS + r"\1"),
        models.Value("g"),
        function="regexp_replace",
    )
    return models.Func(
        padded,
        models.Value(rf"0*([0-9]{{{NATURAL_DIGITS}}})"),
        models.Value(r"\1"),
        models.Value("g"),
        function="regexp_replace",
        output_field=models.TextField(),
    )


class Sample(models.Model):
    class Kind(models.TextChoices):
        QUERY = "query", "Query"
        DIALOGUE = "dialogue", "Dialogue"
        PLAN = "plan", "Plan"

    # What a sample is, as an import writes it and a suite reads it (an Item): the columns
    # every reader and writer of samples names, in this order.
    CONTENT_FIELDS = (
        "split",
        "external_id",
        "kind",
        "input",
        "reference",
        "candidate_tools",
        "metadata",
    )

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="samples")
    split = models.CharField(max_length=100)
    external_id = models.CharField(max_length=300)
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.QUERY)
    input = models.JSONField(
        default=dict,
        help_text='{"query": ...}; {"turns": [...]} for a dialogue; {"query", ...} for a plan.',
    )
    reference = models.JSONField(null=True, blank=True, help_text="The gold answer.")
    candidate_tools = models.JSONField(
        default=list, blank=True, help_text="Names of the tools offered with this sample."
    )
    metadata = models.JSONField(default=dict, blank=True)
    revision = models.PositiveIntegerField(
        default=0, help_text="Number of the current revision; 0 is the sample as imported."
    )
    # What lists sort by (then by external_id, which breaks the ties of 7 and 007): computed by
    # PostgreSQL as rows are written, so COPY and bulk inserts need not know of it.
    natural_id = models.GeneratedField(
        expression=natural_key("external_id"), output_field=models.TextField(), db_persist=True
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["benchmark", "split", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["benchmark", "split", "external_id"], name="sample_unique_per_split"
            ),
        ]
        # The benchmark page's text search (selectors.sample_page: icontains on the id and the
        # input's JSON text, UPPER(...) LIKE UPPER('%text%')) by trigrams: a word among a
        # million samples is found from the index instead of reading every input. Created by
        # SQL in migration 0009: Django writes these elements as `(UPPER(...) gin_trgm_ops)`,
        # which PostgreSQL refuses.
        indexes = [
            GinIndex(
                OpClass(Upper(Cast("input", models.TextField())), name="gin_trgm_ops"),
                name="sample_input_trgm",
            ),
            GinIndex(OpClass(Upper("external_id"), name="gin_trgm_ops"), name="sample_id_trgm"),
            # The revised samples of a benchmark (few among many: a run's page counts those
            # it answered, gold_versions.refined_sample_count).
            models.Index(
                fields=["benchmark"], condition=models.Q(revision__gt=0), name="sample_revised"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.split}/{self.external_id}"


class SampleRevision(models.Model):
    """One version of a sample. Refinement writes these; the sample holds the newest."""

    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    input = models.JSONField(default=dict)
    reference = models.JSONField(null=True, blank=True)
    candidate_tools = models.JSONField(default=list, blank=True)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    note = models.TextField(blank=True)
    # Who approved the refinement that made this revision, and how it was settled: recorded
    # when the refinement is applied, so that an export can say it without reading the
    # annotation app (which the benchmarks layer may not import).
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="reviewed_revisions",
    )
    verdict = models.CharField(
        max_length=40,
        blank=True,
        help_text='How the refinement was settled: "approved" by a reviewer, "unreviewed" '
        "where its campaign had no review stage; blank for revisions made otherwise.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["sample", "number"]
        constraints = [
            models.UniqueConstraint(fields=["sample", "number"], name="revision_unique_number"),
        ]

    def __str__(self) -> str:
        return f"{self.sample} r{self.number}"


class ToolRevision(models.Model):
    """One rewriting of a benchmark's tool descriptions (MetaTool's description-rewriting
    experiment, papers/000 section 4.3): the new description of each tool it covers. The tools
    keep their descriptions as imported (revision 0, never stored here); a run that used a
    revision names it (evaluation.Run.tool_revision)."""

    benchmark = models.ForeignKey(
        Benchmark, on_delete=models.CASCADE, related_name="tool_revisions"
    )
    number = models.PositiveIntegerField(help_text="1 for the first rewriting; 0 is as imported.")
    note = models.TextField(blank=True, help_text="Who wrote it: endpoint, model and prompt.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["benchmark", "number"]
        constraints = [
            models.UniqueConstraint(
                fields=["benchmark", "number"], name="tool_revision_unique_number"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.benchmark} tools r{self.number}"


class RevisedTool(models.Model):
    """A tool's description in one revision (a tool a revision does not cover keeps its own)."""

    revision = models.ForeignKey(ToolRevision, on_delete=models.CASCADE, related_name="tools")
    tool = models.ForeignKey(Tool, on_delete=models.CASCADE, related_name="revisions")
    description = models.TextField()

    class Meta:
        ordering = ["revision", "tool"]
        constraints = [
            models.UniqueConstraint(fields=["revision", "tool"], name="revised_tool_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.tool} r{self.revision.number}"


class ImportJob(models.Model):
    """A benchmark import started from the browser: the uploaded files (under
    settings.BENCHMARK_UPLOAD_DIR/<folder>/ until the import ends), who started it, and how it
    went, so that its page survives reloads and shows the same located error as the CLI."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    suite = models.CharField(max_length=50)
    benchmark_name = models.CharField(max_length=100)
    allow_known_tools = models.BooleanField(default=False)
    folder = models.CharField(max_length=100, help_text="Under BENCHMARK_UPLOAD_DIR.")
    files = models.JSONField(default=list, help_text='[{"name", "size"}] as stored.')
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    phase = models.CharField(max_length=20, default="queued")
    rows_read = models.PositiveIntegerField(default=0)
    # How often a worker started it, and until when the worker holding it (or its message, while
    # it is queued) counts as alive: config.background's one recovery rule.
    attempts = models.PositiveIntegerField(default=0)
    lease_until = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True, help_text="As the CLI shows it: file, line, field.")
    error_file = models.CharField(max_length=300, blank=True)
    error_line = models.PositiveIntegerField(null=True, blank=True)
    error_field = models.CharField(max_length=200, blank=True)
    summary = models.JSONField(default=dict, blank=True)
    benchmark = models.ForeignKey(
        Benchmark, null=True, blank=True, on_delete=models.SET_NULL, related_name="import_jobs"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"import {self.pk} of {self.benchmark_name} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED)
