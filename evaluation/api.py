"""Read-only REST API of the evaluation app: endpoints, runs (with progress and metrics) and
their predictions with per-item scores. Authentication is required globally."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from benchmarks.api import BENCHMARK_PARAM, filter_by_benchmark
from benchmarks.models import Benchmark
from config.http import RequestBody
from config.numbers import BIGINT_MAX, column_bounds, object_id
from evaluation.analyses import declared, readable_by, run_analyses_get
from evaluation.credentials import KEY_MAX_LENGTH
from evaluation.models import Endpoint, Prediction, Run, RunAnalysis, validate_base_url
from evaluation.selectors import (
    run_metric_rows,
    run_spending,
    runs_with_progress,
    task_spec,
    trial_summary,
    with_progress,
)
from evaluation.services import ENDPOINT_FIELDS, RunError, endpoint_create, run_launch
from evaluation.work.styles import style_choices

ENDPOINT = Endpoint._meta.get_field
RUN = Run._meta.get_field
# An http(s) address: a host name, localhost or an IPv4 address, a port, a path (what the
# model's validator takes, said in the schema so that clients know it).
_OCTET = r"(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_PORT = r"([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])"
_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
BASE_URL = (
    rf"^https?://(localhost|({_LABEL}\.)+[A-Za-z]{{2,63}}|({_OCTET}\.){{3}}{_OCTET}|\[::1\])"
    rf"(:{_PORT})?(/[A-Za-z0-9._~-]*)*$"
)


class BaseUrlField(serializers.RegexField):
    """A base URL: the model's rule first (its refusal says why: a user name, a query...), then
    the schema's pattern, which says it to clients (and holds a little less: no IPv6 but ::1, no
    host outside ASCII, no %-escapes in the path)."""

    default_error_messages = {
        "invalid": "an address the API takes is http(s), a host name, localhost or an IPv4 "
        "address, a port and a path (e.g. https://api.openai.com/v1); add_endpoint and the admin "
        "take any address the platform can call"
    }

    def run_validators(self, value: Any) -> None:
        try:
            validate_base_url(value)
        except DjangoValidationError as exc:
            raise ValidationError(exc.messages) from None
        super().run_validators(value)


class EndpointSerializer(serializers.ModelSerializer):
    class Meta:
        model = Endpoint
        # The key itself never: only whether one is stored and its last four characters.
        fields = ["id", *ENDPOINT_FIELDS, "api_key_last4", "is_local", "status", "status_detail"]
        read_only_fields = fields


class RunSerializer(serializers.ModelSerializer):
    benchmark_name = serializers.CharField(source="benchmark.name", read_only=True)
    endpoint_name = serializers.CharField(source="endpoint.name", read_only=True, default=None)
    # Empty for imported runs (no endpoint style).
    style = serializers.ChoiceField(choices=style_choices(), allow_blank=True, read_only=True)
    items = serializers.IntegerField(source="n_total", read_only=True)
    done = serializers.IntegerField(source="n_done", read_only=True)
    failed = serializers.IntegerField(source="n_failed", read_only=True)
    options = serializers.JSONField(
        source="launch_options",
        read_only=True,
        help_text="The options the run was launched with: the task's own, and the platform's "
        "tool_mode and trials where not their defaults.",
    )
    tool_mode = serializers.CharField(
        read_only=True,
        help_text='"text" (the benchmark\'s own prompt) or "native" (tools declared in the '
        "request, the model's tool_calls read back): the run option tool_mode.",
    )
    leaked_calls = serializers.SerializerMethodField(
        help_text="Native runs: the answers that wrote a call into their text instead of "
        "tool_calls (null for text runs)."
    )
    metrics = serializers.SerializerMethodField(
        help_text="Metric name -> value, in the task's order (headline first); counts are "
        "whole numbers."
    )
    intervals = serializers.SerializerMethodField(
        help_text="Metric name -> [low, high], the bootstrap 95% interval (none for counts)."
    )
    tokens = serializers.SerializerMethodField(
        help_text="The tokens the server reported, summed over the run's calls: "
        "{prompt, completion, cached} (cached: prompt tokens served by the provider's cache)."
    )
    cost = serializers.SerializerMethodField(
        help_text="The cost of those tokens at the endpoint's prices per million tokens, as a "
        "decimal string; null when the endpoint has no prices."
    )
    trials = serializers.SerializerMethodField(
        help_text="A run of several trials (option trials): {trials: k, std: {metric: sd over "
        "the trials}, pass: [{metric, k, pass_at, pass_hat}]}; metrics hold the means. Null "
        "for one trial."
    )
    metric_specs = serializers.SerializerMethodField(
        help_text="Metric name -> {kind: score|count|flag, direction: higher|lower|null, "
        "description}, as the run's task declares it (a name it does not declare is absent)."
    )

    class Meta:
        model = Run
        fields = [
            "id",
            "name",
            "benchmark",
            "benchmark_name",
            "task",
            "split",
            "endpoint",
            "endpoint_name",
            "source",
            "model_name",
            "style",
            "tool_mode",
            "leaked_calls",
            "shots",
            "item_limit",
            "params",
            "options",
            "seed",
            "budget",
            "tokens",
            "cost",
            "status",
            "error",
            "items",
            "done",
            "failed",
            "metrics",
            "intervals",
            "trials",
            "metric_specs",
            "created_at",
            "finished_at",
        ]
        read_only_fields = fields

    def _rows(self, run: Run) -> list[dict[str, Any]]:
        # One reading of the task's declarations per run, shared by the three fields.
        cache = self.context.setdefault("metric_rows", {})
        if run.pk not in cache:
            cache[run.pk] = run_metric_rows(run, task_spec(run))
        return cache[run.pk]

    def get_leaked_calls(self, run: Run) -> int | None:
        if run.tool_mode != "native":
            return None
        leaked = getattr(run, "n_leaked", None)
        return leaked if leaked is not None else run.predictions.filter(leaked=True).count()

    def get_metrics(self, run: Run) -> dict[str, Any]:
        return {row["name"]: row["value"] for row in self._rows(run)}

    def get_intervals(self, run: Run) -> dict[str, Any]:
        return {row["name"]: row["interval"] for row in self._rows(run) if row["interval"]}

    def get_trials(self, run: Run) -> dict[str, Any] | None:
        return trial_summary(run)

    def get_tokens(self, run: Run) -> dict[str, int]:
        tokens = run_spending(run)["tokens"]
        return {"prompt": tokens.prompt, "completion": tokens.completion, "cached": tokens.cached}

    def get_cost(self, run: Run) -> str | None:
        cost = run_spending(run)["cost"]
        return None if cost is None else str(cost)

    def get_metric_specs(self, run: Run) -> dict[str, Any]:
        spec = task_spec(run)
        if spec is None:
            return {}
        declared = {name: spec.run_metric(name) for name in run.metrics}
        return {name: metric.as_dict() for name, metric in declared.items() if metric}


class PredictionSerializer(serializers.ModelSerializer):
    split = serializers.CharField(source="sample.split", read_only=True)
    external_id = serializers.CharField(source="sample.external_id", read_only=True)

    class Meta:
        model = Prediction
        fields = [
            "id",
            "run",
            "sample",
            "split",
            "external_id",
            "position",
            "status",
            "attempts",
            "output",
            "answer",
            "parsed",
            "note",
            "trace",
            "scores",
            "error",
            "latency_ms",
            "cached",
            "usage",
            "context",
            "prompt",
            "tool_calls",
            "leaked",
        ]
        read_only_fields = fields


class EndpointInputSerializer(RequestBody):
    """What `POST /api/endpoints/` takes; the model's rules check it (endpoint_create)."""

    name = serializers.CharField(max_length=100)
    base_url = BaseUrlField(BASE_URL, max_length=500, help_text="e.g. https://api.openai.com/v1")
    model = serializers.CharField(max_length=200)
    api_key = serializers.CharField(
        max_length=KEY_MAX_LENGTH,
        required=False,
        allow_blank=True,
        write_only=True,
        help_text="The endpoint's key: stored encrypted, sent only to this base URL, never "
        "shown again (the answer has its last four characters).",
    )
    # An environment variable's name (evaluation.credentials: the model checks it is listed)
    api_key_env = serializers.RegexField(
        r"^([A-Za-z_][A-Za-z0-9_]{0,99})?$",
        max_length=100,
        required=False,
        allow_blank=True,
        help_text="Instead of api_key: a variable the operator lists in ENDPOINT_KEY_VARIABLES.",
    )
    style = serializers.ChoiceField(choices=style_choices(), required=False)
    default_params = serializers.DictField(required=False)
    # numbers bounded by the columns they fill (config.numbers.column_bounds)
    max_concurrency = serializers.IntegerField(
        required=False, **column_bounds(ENDPOINT("max_concurrency"), min_value=1)
    )
    requests_per_minute = serializers.IntegerField(
        required=False,
        allow_null=True,
        **column_bounds(ENDPOINT("requests_per_minute"), min_value=1),
    )
    timeout_seconds = serializers.FloatField(min_value=0.001, required=False)
    max_attempts = serializers.IntegerField(
        min_value=1, max_value=100, required=False, help_text="HTTP attempts per call."
    )
    max_claims = serializers.IntegerField(
        min_value=1,
        max_value=100,
        required=False,
        help_text="How many times a worker may take an item before it is failed (lost workers).",
    )
    price_in = serializers.DecimalField(
        max_digits=12,
        decimal_places=6,
        min_value=Decimal(0),
        required=False,
        allow_null=True,
        help_text="Price per million input tokens (with price_out: runs show their cost).",
    )
    price_out = serializers.DecimalField(
        max_digits=12,
        decimal_places=6,
        min_value=Decimal(0),
        required=False,
        allow_null=True,
        help_text="Price per million output tokens.",
    )
    price_cached = serializers.DecimalField(
        max_digits=12,
        decimal_places=6,
        min_value=Decimal(0),
        required=False,
        allow_null=True,
        help_text="Price per million cached input tokens; empty: the input price.",
    )


class EndpointViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Endpoints. Researchers may add one, with its key (stored encrypted and never answered
    back: evaluation.credentials) or a variable the operator lists."""

    serializer_class = EndpointSerializer
    queryset = Endpoint.objects.order_by("name")

    @extend_schema(request=EndpointInputSerializer, responses={201: EndpointSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        body = EndpointInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            endpoint = endpoint_create(**body.validated_data)
        except RunError as exc:
            raise ValidationError({"detail": str(exc)}) from None
        return Response(EndpointSerializer(endpoint).data, status=status.HTTP_201_CREATED)


class RunLaunchSerializer(RequestBody):
    """What `POST /api/runs/` takes: what the page's launch form takes, checked by the same
    service (run_launch), which refuses options the task's suite does not declare."""

    benchmark = serializers.PrimaryKeyRelatedField(queryset=Benchmark.objects.all())
    task = serializers.CharField(max_length=50)
    endpoint = serializers.PrimaryKeyRelatedField(queryset=Endpoint.objects.all())
    split = serializers.CharField(
        max_length=100, required=False, allow_blank=True, help_text="Empty: the task's own."
    )
    name = serializers.CharField(max_length=200, required=False, allow_blank=True)
    shots = serializers.IntegerField(required=False, **column_bounds(RUN("shots"), min_value=0))
    item_limit = serializers.IntegerField(
        required=False, allow_null=True, **column_bounds(RUN("item_limit"), min_value=1)
    )
    params = serializers.DictField(required=False, help_text="Generation parameters.")
    options = serializers.DictField(
        required=False,
        help_text="Task options: only those the task's suite declares (the run form lists them; "
        "a refusal names the option and what it takes).",
    )
    seed = serializers.IntegerField(
        required=False, help_text="Default 0.", **column_bounds(RUN("seed"))
    )
    budget = serializers.DecimalField(
        required=False, allow_null=True, **column_bounds(RUN("budget"), min_value=Decimal(0))
    )


@extend_schema_view(
    list=extend_schema(
        parameters=[
            BENCHMARK_PARAM,
            OpenApiParameter("task", OpenApiTypes.STR),
            OpenApiParameter(
                "status", OpenApiTypes.STR, enum=["", *Run.Status.values], description="Empty: any."
            ),
        ]
    )
)
class RunViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Runs with their progress, metrics and bootstrap 95% intervals, newest first. Researchers
    may launch one (the same service as the page, the admin and `launch_run`)."""

    serializer_class = RunSerializer

    @extend_schema(request=RunLaunchSerializer, responses={201: RunSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        body = RunLaunchSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        run = run_launch(
            benchmark=data["benchmark"],
            task=data["task"],
            endpoint=data["endpoint"],
            split=data.get("split", "").strip(),
            shots=data.get("shots", 0),
            item_limit=data.get("item_limit"),
            params=data.get("params"),
            options=data.get("options"),
            seed=data.get("seed", 0),
            name=data.get("name", ""),
            user=request.user,
            budget=data.get("budget"),
        )
        shown = self.get_queryset().get(pk=run.pk)
        return Response(RunSerializer(shown).data, status=status.HTTP_201_CREATED)

    def get_queryset(self) -> QuerySet[Run]:
        runs = Run.objects.select_related("benchmark", "endpoint").order_by("-created_at", "-id")
        if self.action != "list":
            # One run (the detail, a launch's answer): its own counts.
            return runs_with_progress(runs)
        params = self.request.query_params
        runs = filter_by_benchmark(runs, params.get("benchmark"))
        if task := params.get("task"):
            runs = runs.filter(task=task)
        if status := params.get("status"):
            if status not in Run.Status.values:
                raise ValidationError({"status": f"one of {', '.join(Run.Status.values)}"})
            runs = runs.filter(status=status)
        return runs

    def paginate_queryset(self, queryset: Any) -> list[Run] | None:
        """The list's page, its runs counted (selectors.with_progress): not every run's
        predictions."""
        page = super().paginate_queryset(queryset)
        return None if page is None else with_progress(page)

    # --- run analyses (the papers' breakdowns): the command's JSON ---------------------------
    @extend_schema(
        responses={
            200: OpenApiResponse(
                OpenApiTypes.OBJECT,
                description='{"run": ID, "analyses": {NAME: {"by": FIELD, "rows": [{"group", '
                '"n", METRIC...}]}}}, as `run_analysis --json` prints it (see docs/evaluating.md).',
            ),
            202: inline_serializer(
                "RunAnalysesPending",
                {
                    "status": serializers.CharField(),
                    "done": serializers.IntegerField(),
                    "total": serializers.IntegerField(),
                },
            ),
            409: inline_serializer(
                "RunAnalysesFailed",
                {"status": serializers.CharField(), "error": serializers.CharField()},
            ),
        },
    )
    @action(detail=True, methods=["get"])
    def analyses(self, request: Request, pk: Any = None) -> Response:
        """The analyses its suite declares for the run's task: 200 with them, 202 with the
        progress while a worker on the reports queue computes them (ask again), 409 with the
        error when they failed."""
        run = self.get_object()
        stored = run_analyses_get(run)
        if stored.status == RunAnalysis.Status.DONE and stored.data:
            # Without the analyses the user may not read (what their inputs need).
            hidden = {a.name for a in declared(run) if not readable_by(request.user, a)}
            data = dict(stored.data)
            data["analyses"] = {
                name: found
                for name, found in (stored.data.get("analyses") or {}).items()
                if name not in hidden
            }
            return Response(data)
        if stored.status == RunAnalysis.Status.FAILED:
            return Response(
                {"status": stored.status, "error": stored.error}, status=status.HTTP_409_CONFLICT
            )
        return Response(
            {"status": stored.status, "done": stored.done, "total": stored.total},
            status=status.HTTP_202_ACCEPTED,
        )


@extend_schema_view(
    list=extend_schema(
        parameters=[
            OpenApiParameter(
                "run",
                {"type": "integer", "minimum": 1, "maximum": BIGINT_MAX},
                required=True,
                description="Run id.",
            ),
            OpenApiParameter(
                "status",
                OpenApiTypes.STR,
                enum=["", *Prediction.Status.values],
                description="Empty: any.",
            ),
        ]
    )
)
class PredictionViewSet(viewsets.ReadOnlyModelViewSet):
    """A run's predictions in order, with per-item scores."""

    serializer_class = PredictionSerializer

    def get_queryset(self) -> QuerySet[Prediction]:
        predictions = Prediction.objects.select_related("sample").order_by("run_id", "position")
        if self.action != "list":
            return predictions
        params = self.request.query_params
        run = object_id(params.get("run"), name="run", label="run (the run's id, e.g. ?run=12)")
        if run is None:
            raise ValidationError({"run": "give the run's id, e.g. ?run=12"})
        predictions = predictions.filter(run_id=run)
        if status := params.get("status"):
            if status not in Prediction.Status.values:
                raise ValidationError({"status": f"one of {', '.join(Prediction.Status.values)}"})
            predictions = predictions.filter(status=status)
        return predictions
