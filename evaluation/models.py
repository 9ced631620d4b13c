"""How machines judge: endpoints, runs, their predictions, and the response cache."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator, URLValidator
from django.db import models
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, Coalesce

from benchmarks.models import Benchmark, Sample, ToolRevision
from evaluation.credentials import validate_key_variable
from evaluation.work.addresses import base_url_problem
from evaluation.work.styles import style_choices

# Named by migration 0001; the rule itself is evaluation.credentials'.
validate_env_name = validate_key_variable
base_url_validator = URLValidator(
    schemes=["http", "https"],
    message="Enter the API's http:// or https:// address, e.g. https://api.openai.com/v1.",
)


def validate_base_url(value: str) -> None:
    """An endpoint's base URL: http(s), a host, a path, nothing else (no user name or password,
    query or fragment: evaluation.work.addresses), and well formed."""
    problem = base_url_problem(value)
    if problem:
        raise ValidationError(problem, code="base_url")
    base_url_validator(value.strip())


# The embedded model's endpoint (`make run`), registered by evaluation.services and the
# virtual API server's simulator by default.
LOCAL_ENDPOINT = "local-gemma-3-270m"
# The embedded tool-calling model's endpoint (chat style, for tool_mode=native), served by the
# same process.
LOCAL_TOOLS_ENDPOINT = "local-smollm2-135m"


def usage_tokens(name: str) -> models.GeneratedField:
    """A count of `usage` (see evaluation.work.caller.token_counts) as a column: 0 when the
    usage does not have it (imported work, failed items)."""
    return models.GeneratedField(
        expression=Coalesce(Cast(KT(f"usage__{name}"), models.BigIntegerField()), 0),
        output_field=models.BigIntegerField(),
        db_persist=True,
    )


class Endpoint(models.Model):
    """An OpenAI-compatible API. Its key, when it needs one, is entered in the platform and
    stored sealed (encrypted, bound to the base URL; evaluation.credentials), or read from an
    environment variable the operator lists in ENDPOINT_KEY_VARIABLES."""

    class Style:
        """The built-in API styles' names, for code that makes an endpoint of one; `style`
        takes any registered style (evaluation.work.styles)."""

        CHAT = "chat"
        COMPLETION = "completion"
        RESPONSES = "responses"

    class Status(models.TextChoices):
        READY = "ready", "Ready"
        BUILDING = "building", "Building"
        STARTING = "starting", "Starting"
        DOWN = "down", "Down"
        FAILED = "failed", "Failed"

    name = models.CharField(max_length=100, unique=True)
    base_url = models.CharField(
        max_length=500,
        validators=[validate_base_url],
        help_text="e.g. https://api.openai.com/v1 or http://127.0.0.1:8001/v1",
    )
    model = models.CharField(max_length=200, help_text="The model name sent with each request.")
    # The key entered in the platform, encrypted together with the base URL it was entered for
    # (evaluation.credentials.seal), and all that is ever shown of it. Written only by
    # services.endpoint_save.
    api_key_sealed = models.TextField(blank=True, default="", editable=False)
    api_key_last4 = models.CharField(
        "key ends with", max_length=4, blank=True, default="", editable=False
    )
    api_key_env = models.CharField(
        "API key variable",
        max_length=100,
        blank=True,
        validators=[validate_key_variable],
        help_text="Instead of a key entered here: the environment variable that holds it on "
        "the workers, one the operator lists in ENDPOINT_KEY_VARIABLES. Empty for a key "
        "entered here or a server that needs no key.",
    )
    # The registered styles, read when asked: a style added needs no migration.
    style = models.CharField(max_length=20, choices=style_choices, default=Style.CHAT)
    default_params = models.JSONField(
        default=dict,
        blank=True,
        help_text='Generation parameters sent with every request, e.g. {"temperature": 0, '
        '"max_tokens": 256}. A run\'s own parameters override these.',
    )
    max_concurrency = models.PositiveIntegerField(
        default=8, help_text="Requests in flight at once, across all workers."
    )
    requests_per_minute = models.PositiveIntegerField(
        null=True, blank=True, help_text="Across all workers; empty for no limit."
    )
    timeout_seconds = models.FloatField(default=60.0)
    max_attempts = models.PositiveSmallIntegerField(
        "HTTP attempts per call",
        default=4,
        help_text="Attempts per request (retries of 429, 5xx, timeouts... with backoff) before "
        "the item is failed with the last reason.",
    )
    # Prices per million tokens, in whatever currency the provider bills (one per endpoint;
    # the pages show amounts without a unit). Cached input tokens cost the input price unless
    # a cached price is set. Empty: the endpoint's work shows tokens and no cost.
    price_in = models.DecimalField(
        "price per million input tokens",
        max_digits=12,
        decimal_places=6,
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
    )
    price_out = models.DecimalField(
        "price per million output tokens",
        max_digits=12,
        decimal_places=6,
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
    )
    price_cached = models.DecimalField(
        "price per million cached input tokens",
        max_digits=12,
        decimal_places=6,
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
        help_text="Empty: cached input tokens cost the input price.",
    )
    max_claims = models.PositiveSmallIntegerField(
        "claims per item",
        default=4,
        help_text="How many times a worker may take an item: an item whose worker was lost this "
        "many times (a poison item that kills workers) is failed instead of redone.",
    )
    is_local = models.BooleanField(
        default=False,
        editable=False,
        help_text="The embedded model that `make run` serves (manage.py serve_local_model).",
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.READY)
    status_detail = models.TextField(blank=True)
    status_changed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(max_concurrency__gte=1), name="endpoint_concurrency_positive"
            ),
            models.CheckConstraint(
                condition=models.Q(max_attempts__gte=1), name="endpoint_attempts_positive"
            ),
            models.CheckConstraint(
                condition=models.Q(max_claims__gte=1), name="endpoint_claims_positive"
            ),
            models.CheckConstraint(
                condition=models.Q(timeout_seconds__gt=0), name="endpoint_timeout_positive"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def has_stored_key(self) -> bool:
        return bool(self.api_key_sealed)

    @property
    def key_display(self) -> str:
        """What a page says of the endpoint's key: never the key."""
        if self.api_key_sealed:
            return f"stored, ends with …{self.api_key_last4}" if self.api_key_last4 else "stored"
        if self.api_key_env:
            return f"read from {self.api_key_env}"
        return "none"


def platform_options(tool_mode: str, trials: int) -> dict[str, Any]:
    """The platform's options as a run's options hold them: each only when not its default."""
    given: dict[str, Any] = {}
    if tool_mode != Run.ToolMode.TEXT:
        given["tool_mode"] = tool_mode
    if trials != 1:
        given["trials"] = trials
    return given


def platform_fields(options: dict[str, Any]) -> dict[str, Any]:
    """A run's checked options as the Run's fields it is created with: the task's own in
    `options`, the platform's (tool_mode, trials) in their own fields."""
    own = dict(options)
    return {
        "options": own,
        "tool_mode": own.pop("tool_mode", Run.ToolMode.TEXT),
        "trials": own.pop("trials", 1),
    }


class Run(models.Model):
    """One evaluation: a benchmark task on a split, by an endpoint with given settings (or
    outputs imported from elsewhere). One Prediction per sample, except in a run imported with
    on_duplicate=reference from a file that gives a sample several lines (Prediction.repeat)."""

    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        CANCELLED = "cancelled", "Cancelled"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    class Source(models.TextChoices):
        LAUNCHED = "launched", "Launched here"
        IMPORTED = "imported", "Imported outputs"

    class ToolMode(models.TextChoices):
        TEXT = "text", "Text"
        NATIVE = "native", "Native"

    name = models.CharField(max_length=200, blank=True)
    benchmark = models.ForeignKey(Benchmark, on_delete=models.PROTECT, related_name="runs")
    task = models.CharField(max_length=50)
    split = models.CharField(max_length=100, blank=True, help_text="Empty: the task's splits.")
    endpoint = models.ForeignKey(
        Endpoint, null=True, blank=True, on_delete=models.PROTECT, related_name="runs"
    )
    source = models.CharField(max_length=20, choices=Source.choices, default=Source.LAUNCHED)
    # What was asked, fixed at launch (the endpoint may be edited later).
    model_name = models.CharField(max_length=200, blank=True)
    style = models.CharField(max_length=20, choices=style_choices, blank=True)
    shots = models.PositiveSmallIntegerField(default=0)
    item_limit = models.PositiveIntegerField(null=True, blank=True)
    params = models.JSONField(default=dict, blank=True, help_text="Generation parameters.")
    options = models.JSONField(
        default=dict,
        blank=True,
        help_text="The task's own options; the platform's (tool mode, trials) are fields.",
    )
    # The platform's options, which every suite's tasks take (protocol.PLATFORM_OPTIONS): given
    # with the others at launch, stored as what they are.
    tool_mode = models.CharField(
        max_length=10,
        choices=ToolMode.choices,
        default=ToolMode.TEXT,
        db_default=ToolMode.TEXT,
        help_text="text: the benchmark's own prompt; native: tools declared in the request, "
        "the model's tool_calls read back.",
    )
    trials = models.PositiveSmallIntegerField(
        default=1,
        db_default=1,
        validators=[MinValueValidator(1)],
        help_text="How many times each item is answered; trial t is the predictions with "
        "repeat t (an imported run's repeats are lines, not trials).",
    )
    seed = models.IntegerField(default=0)
    # What the work may spend: a cost in the endpoint's currency when the endpoint has
    # prices, else tokens (input + output). Empty: no limit. See evaluation.work.budget.
    budget = models.DecimalField(
        max_digits=18,
        decimal_places=6,
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
        help_text="A cost when the endpoint has prices, else tokens (input + output); "
        "empty for no limit. Reached: the rest stays pending, resumable with a larger one.",
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.RUNNING)
    error = models.TextField(blank=True)
    metrics = models.JSONField(default=dict, blank=True)
    # {metric: [low, high]}: seeded bootstrap 95% intervals, computed after the metrics.
    intervals = models.JSONField(default=dict, blank=True)
    # When they are computed after the run finished (the reports queue): "queued", "running",
    # "done" or "failed" ("" when none are owed), and config.background's lease, attempts and
    # error of that computation.
    intervals_status = models.CharField(max_length=20, blank=True, default="")
    intervals_lease_until = models.DateTimeField(null=True, blank=True)
    intervals_attempts = models.PositiveIntegerField(default=0)
    intervals_error = models.TextField(blank=True)
    # Every score name of its predictions in the order the predictions CSV lists them (by the
    # first prediction, in position order, that has it, then its place among that
    # prediction's keys), so the CSV's header needs no scan of the scores. Stored when the run
    # finishes (evaluation.services._run_summary) and cleared when it is resumed: None unless
    # the run is done (a cancelled run's answers in flight may still land), and the CSV then
    # asks the predictions.
    score_names = models.JSONField(null=True, blank=True, default=None, editable=False)
    # Imported runs: what the file held and what was done with it, because the duplicate
    # policy changes the metrics (evaluation.services.outputs_import documents the keys).
    import_report = models.JSONField(default=dict, blank=True)
    # The tool descriptions its prompts showed: a rewriting of them (None: as imported), and
    # the run it repeats on them (the same items and candidates), whose scores it is compared to.
    tool_revision = models.ForeignKey(
        ToolRevision, null=True, blank=True, on_delete=models.PROTECT, related_name="runs"
    )
    rerun_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="reruns"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["benchmark", "task", "status"]),
            # The sweep's look at the runs whose intervals are owed (config.background).
            models.Index(
                fields=["intervals_lease_until"],
                condition=models.Q(intervals_status__in=["queued", "running"]),
                name="run_intervals_owed",
            ),
        ]

    def __str__(self) -> str:
        return self.name or f"run {self.pk}"

    @property
    def launch_options(self) -> dict[str, Any]:
        """The options as the run was launched with them and as its suite reads them
        (ctx.options): the task's own, and tool_mode and trials where not their defaults."""
        return {**(self.options or {}), **platform_options(self.tool_mode, self.trials)}

    def trial_seed(self, trial: int) -> int | None:
        """The seed trial `trial` sends: the run's seed + the trial when the run has several
        trials; None (the endpoint's parameters, as before trials existed) otherwise."""
        return self.seed + trial if self.trials > 1 else None


class WorkItem:
    """What a page shows of a work item (a prediction, a judgment): a running item is
    "Claimed" while an execution holds it and no lane has sent it yet, and "Running" once sent
    (`started_at`), so that no more rows read "Running" than the endpoint answers at once."""

    CLAIMED = "claimed"
    STATES = {
        "pending": ("Pending", "waiting for a worker"),
        CLAIMED: ("Claimed", "held by a worker, waiting for a free lane to the endpoint"),
        "running": ("Running", "sent to the endpoint, waiting for its answer"),
    }

    status: str
    started_at: Any

    @property
    def state(self) -> str:
        if self.status == "running" and self.started_at is None:
            return self.CLAIMED
        return self.status

    @property
    def state_label(self) -> str:
        shown = self.STATES.get(self.state)
        return shown[0] if shown else self.get_status_display()  # type: ignore[attr-defined]

    @property
    def state_title(self) -> str:
        shown = self.STATES.get(self.state)
        return shown[1] if shown else ""


class Prediction(WorkItem, models.Model):
    """A run's answer for one sample, with its per-item scores. Unique on (run, sample, repeat):
    `repeat` is 0 except for the further lines a published file gave the same sample, imported
    with on_duplicate=reference, each scored against the sample's gold as the benchmark's own
    scorer does (1 for the second line, 2 for the third...)."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="predictions")
    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, related_name="predictions")
    position = models.PositiveIntegerField(help_text="Order within the run; chunks are ranges.")
    # A database default too: launches write predictions by COPY without naming the column.
    repeat = models.PositiveIntegerField(
        default=0,
        db_default=0,
        help_text="0, or k for the k-th further line an imported file gave the same sample.",
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    # The chunk execution that holds the item, and until when; a lost worker's items are
    # taken back when the lease runs out.
    claim = models.UUIDField(null=True, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    # When a lane sent the item under its current claim (null while pending, or claimed and
    # not yet sent: see WorkItem.state); written in the engine's next write window.
    started_at = models.DateTimeField(null=True, blank=True)
    context = models.JSONField(
        default=dict, blank=True, help_text="Per-item context fixed at launch."
    )
    prompt = models.JSONField(null=True, blank=True, help_text="The (first) request sent.")
    output = models.TextField(blank=True)
    answer = models.JSONField(null=True, blank=True)
    parsed = models.BooleanField(null=True)
    trace = models.JSONField(default=list, blank=True)
    note = models.TextField(
        blank=True, help_text="What the parser noticed, e.g. an ambiguous answer."
    )
    scores = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    cached = models.BooleanField(default=False)
    usage = models.JSONField(default=dict, blank=True)
    # Native tool mode: the answer's tool_calls as the server sent them (null in text mode),
    # and whether a call was written into the text instead of tool_calls (a leaked call).
    tool_calls = models.JSONField(null=True, blank=True)
    leaked = models.BooleanField(default=False, db_default=False)
    # The values of the record its suite's analyses count it by (benchmarks.kit.analyses
    # .RecordValue: {name: value}), computed once (evaluation.analyses.fill_record_values).
    # A change to the answer, its scores or its sample empties it (triggers of migration 0023):
    # the values are then computed again when next needed.
    derived = models.JSONField(
        default=dict, blank=True, db_default=models.Value({}, models.JSONField())
    )
    # The server's token counts summed over the item's calls, read from `usage` by the
    # database itself, so that sums per run and per job are plain SUMs.
    prompt_tokens = usage_tokens("prompt_tokens")
    completion_tokens = usage_tokens("completion_tokens")
    cached_tokens = usage_tokens("cached_tokens")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["run", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "sample", "repeat"], name="prediction_unique_per_run"
            ),
            models.UniqueConstraint(fields=["run", "position"], name="prediction_position_unique"),
        ]
        indexes = [
            models.Index(fields=["run", "status"]),
            # The claim's scan (evaluation.work.locks): a run's unsettled items in position
            # order, without walking the answered ones first (each refill would re-read them).
            models.Index(
                fields=["run", "position"],
                name="prediction_unsettled",
                condition=models.Q(status__in=["pending", "running"]),
            ),
        ]

    def __str__(self) -> str:
        suffix = f" (repeat {self.repeat})" if self.repeat else ""
        return f"{self.run_id}/{self.sample_id}{suffix}"


class ResponseCache(models.Model):
    """A server's answer to one exact request: keyed by sha256 of who answered (the normalised
    base URL, the model, the style) and the whole request (evaluation.work.caller.cache_key),
    so an answer is reused only for the server that gave it. Only clean answers are stored, so
    a rerun is free and gives the same text."""

    key = models.CharField(max_length=64, primary_key=True)
    model = models.CharField(max_length=200)
    # The normalised base URL of the server that answered; empty for an answer stored before
    # the key named the server whose writer could not be told (migration 0017: no endpoint's
    # key reaches it).
    base_url = models.CharField(max_length=500, blank=True, default="", db_default="")
    request = models.JSONField()
    response = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.key[:12]


class Judge(models.Model):
    """An LLM judge: an endpoint, a judge template (prompt, parser, scale; see
    benchmarks.kit.judging) and generation parameters. A judge whose verdicts were imported
    (published evaluations) has no endpoint."""

    class Kind(models.TextChoices):
        POINTWISE = "pointwise", "Pointwise scores"
        PASS = "pass", "Pass (Solved / Unsure / Unsolved)"
        PAIRWISE = "pairwise", "Pairwise (A / tie / B)"
        SOLVABILITY = "solvability", "Solvability vote"

    name = models.CharField(max_length=100, unique=True)
    template = models.CharField(
        max_length=100,
        help_text="The judge template a suite registers for its evaluator prompt (the admin "
        "form offers every registered one).",
    )
    kind = models.CharField(max_length=20, choices=Kind.choices, editable=False)
    endpoint = models.ForeignKey(
        Endpoint, null=True, blank=True, on_delete=models.PROTECT, related_name="judges"
    )
    params = models.JSONField(
        default=dict,
        blank=True,
        help_text='Generation parameters over the endpoint\'s, e.g. {"temperature": 0}.',
    )

    class AnswerMode(models.TextChoices):
        CALL = "call", "Forced call of the verdict function (text where the style cannot)"
        TEXT = "text", "Text, read by the template's parser"

    # Judges defined before forced calls were migrated to text (how they had answered).
    answer_mode = models.CharField(
        max_length=10,
        choices=AnswerMode.choices,
        default=AnswerMode.CALL,
        help_text="How the judge answers: a forced call of a `verdict` function whose "
        "parameters are the verdict's JSON schema, where the endpoint's API style can declare "
        "tools (text otherwise); or always text.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class JudgeVersion(models.Model):
    """What a judge was when it gave a verdict, pinned: its template's prompt texts, the model,
    the endpoint (address and API style), the generation parameters sent (the endpoint's with
    the judge's over them), the verdict's JSON schema and the answer mode used. Made by
    evaluation.judge_versions.version_for whenever the judge is saved or launched in a state no
    version of it has; never changed afterwards."""

    class Mode(models.TextChoices):
        CALL = "call", "Forced function call"
        TEXT = "text", "Text"

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    mode = models.CharField(max_length=10, choices=Mode.choices)
    model = models.CharField(max_length=200, blank=True)
    endpoint = models.ForeignKey(
        Endpoint, null=True, blank=True, on_delete=models.SET_NULL, related_name="judge_versions"
    )
    # {"template", "kind", "prompt": {name: text}, "model", "endpoint": {"id", "base_url",
    # "style"} | null, "params", "schema", "mode"}: what `digest` hashes.
    pinned = models.JSONField()
    digest = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["judge", "number"]
        constraints = [
            models.UniqueConstraint(fields=["judge", "number"], name="judge_version_number"),
            models.UniqueConstraint(fields=["judge", "digest"], name="judge_version_digest"),
        ]

    def __str__(self) -> str:
        return f"{self.judge} v{self.number}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise ValueError("a judge version is never changed; a change makes a new version")
        super().save(*args, **kwargs)


class JudgeJob(models.Model):
    """A judge applied to a run (pairwise: to a run against another), each item judged
    `repeats` times (pairwise: in both orders each time)."""

    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        CANCELLED = "cancelled", "Cancelled"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    class Source(models.TextChoices):
        LAUNCHED = "launched", "Judged here"
        IMPORTED = "imported", "Imported judgments"

    judge = models.ForeignKey(Judge, on_delete=models.PROTECT, related_name="jobs")
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="judge_jobs")
    against = models.ForeignKey(
        Run,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="judge_jobs_against",
        help_text="Pairwise: the run compared with (B in the canonical order A, B).",
    )
    repeats = models.PositiveSmallIntegerField(default=3)
    # What the work may spend: a cost in the endpoint's currency when the endpoint has
    # prices, else tokens (input + output). Empty: no limit. See evaluation.work.budget.
    budget = models.DecimalField(
        max_digits=18,
        decimal_places=6,
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
        help_text="A cost when the endpoint has prices, else tokens (input + output); "
        "empty for no limit. Reached: the rest stays pending, resumable with a larger one.",
    )
    source = models.CharField(max_length=20, choices=Source.choices, default=Source.LAUNCHED)
    # The judge's version it was launched (or imported) with; every judgment records it too.
    version = models.ForeignKey(
        JudgeVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="jobs"
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.RUNNING)
    error = models.TextField(blank=True)
    metrics = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=models.Q(repeats__gte=1), name="job_repeats_positive")
        ]

    def __str__(self) -> str:
        return f"{self.judge} on run {self.run_id}" + (
            f" vs {self.against_id}" if self.against_id else ""
        )


class Judgment(WorkItem, models.Model):
    """One verdict of a judge about one item: a prediction (or a pair of predictions of the
    same sample, shown in `order`), in one repeat. Keeps what was asked, the raw answer and
    what was read from it."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        UNPARSED = "unparsed", "Unparsed"
        FAILED = "failed", "Failed"

    job = models.ForeignKey(JudgeJob, on_delete=models.CASCADE, related_name="judgments")
    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, related_name="judgments")
    prediction = models.ForeignKey(Prediction, on_delete=models.CASCADE, related_name="judgments")
    other = models.ForeignKey(
        Prediction,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="judgments_as_other",
        help_text="Pairwise: the prediction of the run compared with (canonical B).",
    )
    # The judge version that gave the verdict (its job's: judging.judge_launch and the import
    # write it; null only for rows written outside them).
    version = models.ForeignKey(
        JudgeVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="judgments"
    )
    repeat = models.PositiveSmallIntegerField(default=0)
    # "AB": the run's output shown first; "BA": the other run's first; "" when single.
    order = models.CharField(max_length=2, blank=True)
    position = models.PositiveIntegerField()
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    claim = models.UUIDField(null=True, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    # When a lane sent the item under its current claim (null while pending, or claimed and
    # not yet sent: see WorkItem.state); written in the engine's next write window.
    started_at = models.DateTimeField(null=True, blank=True)
    prompt = models.JSONField(null=True, blank=True)
    raw = models.TextField(blank=True, help_text="The judge's answer as given.")
    raw_first = models.TextField(
        blank=True,
        help_text="The earlier answer: before the format reminder, or the first question's "
        "when the template asks a follow-up.",
    )
    values = models.JSONField(default=dict, blank=True, help_text="What was read from the answer.")
    # The item-level verdict as one number, for agreement with other raters: pass 1 / 0.5 / 0,
    # pairwise 1 / 0 / -1 against the canonical order, pointwise the Overall score (reported
    # scale), solvability 1 / 0.5 / 0.
    value = models.FloatField(null=True, blank=True)
    label = models.CharField(max_length=30, blank=True)
    reasoning = models.TextField(blank=True)
    error = models.TextField(blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    cached = models.BooleanField(default=False)
    usage = models.JSONField(default=dict, blank=True)
    # The server's token counts summed over the item's calls, read from `usage` by the
    # database itself, so that sums per run and per job are plain SUMs.
    prompt_tokens = usage_tokens("prompt_tokens")
    completion_tokens = usage_tokens("completion_tokens")
    cached_tokens = usage_tokens("cached_tokens")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["job", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["job", "prediction", "repeat", "order"], name="judgment_unique_per_job"
            ),
            models.UniqueConstraint(fields=["job", "position"], name="judgment_position_unique"),
        ]
        indexes = [
            models.Index(fields=["job", "status"]),
            models.Index(fields=["sample", "job"]),
            # The claim's scan, as for predictions (prediction_unsettled).
            models.Index(
                fields=["job", "position"],
                name="judgment_unsettled",
                condition=models.Q(status__in=["pending", "running"]),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.job_id}/{self.position}"


# --- the virtual API server ---------------------------------------------------------------------


class VirtualApi(models.Model):
    """An API the virtual API server knows: its names in StableToolBench's cache layout
    (<category>/<tool>_for_<category>/<api>) and its documentation, shown to the simulator and
    to Turing-test annotators. Made from a benchmark's tools, from an imported cache, or from
    the platform's own tool definitions (WTU-Eval's search tools)."""

    category = models.CharField(max_length=300)
    tool = models.CharField(max_length=300)
    api = models.CharField(max_length=300)
    function = models.CharField(
        max_length=300, blank=True, help_text="The name agents call it by (<api>_for_<tool>)."
    )
    documentation = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["category", "tool", "api"]
        constraints = [
            models.UniqueConstraint(fields=["category", "tool", "api"], name="virtual_api_unique")
        ]
        # Calling the server over HTTP writes (the cache, the call log) and may spend the
        # simulator's tokens: a permission of its own, not view_apiresponse.
        permissions = [("call_virtualapi", "Can call the virtual API server over HTTP")]

    def __str__(self) -> str:
        return f"{self.category}/{self.tool}/{self.api}"


class ApiResponse(models.Model):
    """A cached response of the virtual API server: one API called with one set of arguments
    (keyed by the hash of their canonical form), and where the response came from."""

    class Origin(models.TextChoices):
        IMPORTED = "imported", "Imported cache (as published)"
        REAL = "real", "Real API"
        SIMULATED = "simulated", "Simulated"

    api = models.ForeignKey(VirtualApi, on_delete=models.CASCADE, related_name="responses")
    key = models.CharField(max_length=64, help_text="SHA-256 of the canonical arguments.")
    arguments = models.JSONField(default=dict, blank=True)
    raw_key = models.TextField(blank=True, help_text="The key as an imported cache wrote it.")
    response = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    origin = models.CharField(max_length=20, choices=Origin.choices)
    simulator = models.CharField(max_length=200, blank=True, help_text="The simulating model.")
    source = models.CharField(max_length=500, blank=True, help_text="File and line, or URL.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["api", "key"], name="api_response_unique")]
        indexes = [models.Index(fields=["api", "origin"])]

    def __str__(self) -> str:
        return f"{self.api} {self.key[:8]} ({self.origin})"


class ServedCall(models.Model):
    """One call the virtual API server answered, and how: the log cache hit rates and the
    stability experiment read."""

    class Source(models.TextChoices):
        CACHE = "cache", "Cache"
        REAL = "real", "Real API"
        SIMULATED = "simulated", "Simulated"
        DOWN = "down", "Tool marked down (failure response)"
        FAILED = "failed", "No answer"

    api = models.ForeignKey(VirtualApi, on_delete=models.CASCADE, related_name="served")
    key = models.CharField(max_length=64)
    source = models.CharField(max_length=20, choices=Source.choices)
    detail = models.TextField(blank=True, help_text="Why the real API or the simulator failed.")
    run = models.ForeignKey(
        Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="served_calls"
    )
    latency_ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["run", "source"])]

    def __str__(self) -> str:
        return f"{self.api} {self.key[:8]}: {self.source}"


class RealApi(models.Model):
    """Where a tool's real API answers, when it may be called at all: only hosts in the
    VIRTUAL_API_ALLOWED_HOSTS setting (empty by default: no real calls), only public addresses,
    also after redirects. The arguments go as the query (GET) or a JSON body (POST)."""

    class Method(models.TextChoices):
        GET = "GET", "GET"
        POST = "POST", "POST"

    category = models.CharField(max_length=300)
    tool = models.CharField(max_length=300, help_text="The tool folder (<tool>_for_<category>).")
    api = models.CharField(max_length=300, blank=True, help_text="Empty: every API of the tool.")
    url = models.URLField(
        max_length=1000, help_text="May contain {api}, replaced by the API's name."
    )
    method = models.CharField(max_length=10, choices=Method.choices, default=Method.GET)
    key_env = models.CharField(
        max_length=100,
        blank=True,
        validators=[validate_key_variable],
        help_text="Environment variable holding the key (sent as X-RapidAPI-Key), named as "
        "an endpoint's key variable is.",
    )
    enabled = models.BooleanField(default=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["category", "tool", "api"], name="real_api_unique")
        ]

    def __str__(self) -> str:
        return f"{self.category}/{self.tool}/{self.api or '*'} -> {self.url}"


class TuringPair(models.Model):
    """A real response and a simulated one to the same call (StableToolBench section 4.3), for
    experts to tell apart."""

    api = models.ForeignKey(VirtualApi, on_delete=models.CASCADE, related_name="turing_pairs")
    key = models.CharField(max_length=64)
    arguments = models.JSONField(default=dict, blank=True)
    real = models.JSONField(null=True, blank=True)
    simulated = models.JSONField(null=True, blank=True)
    simulator = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["api", "key", "simulator"], name="turing_pair_unique")
        ]

    def __str__(self) -> str:
        return f"{self.api} {self.key[:8]}"


class RunAnalysis(models.Model):
    """The analyses a run's suite declares for its task (benchmarks/kit/analyses.py),
    computed from the run's stored predictions and kept until the run changes: `fingerprint` is
    what the run, its predictions, their samples and the declarations looked like when it was
    made. One row per run; `data` is the `run_analysis` command's JSON."""

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for a worker"
        RUNNING = "running", "Computing"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="analysis")
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

    def __str__(self) -> str:
        return f"analyses of run {self.run_id}"
