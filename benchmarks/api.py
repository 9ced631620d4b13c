"""Read-only REST API of the benchmarks app (authentication is required globally)."""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import serializers, viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from benchmarks.models import Benchmark, Sample, SampleRevision, Tool
from benchmarks.selectors import benchmark_list_with_counts, sample_counts_by_split_for
from config.numbers import id_or_none


class BenchmarkSerializer(serializers.ModelSerializer[Benchmark]):
    tool_count = serializers.IntegerField(source="tool_total", read_only=True)
    sample_count = serializers.IntegerField(source="sample_total", read_only=True)
    samples_by_split = serializers.DictField(
        child=serializers.IntegerField(),
        source="split_counts",
        read_only=True,
        help_text="Number of samples in each split.",
    )

    class Meta:
        model = Benchmark
        fields = [
            "id",
            "name",
            "suite",
            "description",
            "is_demo",
            "tool_count",
            "sample_count",
            "samples_by_split",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields


class ToolSerializer(serializers.ModelSerializer[Tool]):
    benchmark_name = serializers.CharField(source="benchmark.name", read_only=True)

    class Meta:
        model = Tool
        fields = [
            "id",
            "benchmark",
            "benchmark_name",
            "name",
            "description",
            "category",
            "parameters",
            "returns",
            "raw",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields


class SampleSerializer(serializers.ModelSerializer[Sample]):
    class Meta:
        model = Sample
        fields = ["id", "benchmark", *Sample.CONTENT_FIELDS, "revision", "created_at", "updated_at"]
        read_only_fields = fields


class SampleRevisionSerializer(serializers.ModelSerializer[SampleRevision]):
    author = serializers.CharField(
        source="author.username", read_only=True, allow_null=True, default=None
    )

    class Meta:
        model = SampleRevision
        fields = ["number", "input", "reference", "candidate_tools", "author", "note", "created_at"]
        read_only_fields = fields


class SampleDetailSerializer(SampleSerializer):
    revisions = SampleRevisionSerializer(many=True, read_only=True)

    class Meta(SampleSerializer.Meta):
        fields = [*SampleSerializer.Meta.fields, "revisions"]
        read_only_fields = fields


BENCHMARK_PARAM = OpenApiParameter(
    "benchmark",
    OpenApiTypes.STR,
    description="Benchmark id, or its exact name.",
)


def filter_by_benchmark(queryset: QuerySet[Any], value: str | None) -> QuerySet[Any]:
    if not value:
        return queryset
    benchmarks = Benchmark.objects.filter(name=value)
    if (pk := id_or_none(value)) is not None:
        # A name made of digits is still a name: match either.
        benchmarks = Benchmark.objects.filter(Q(pk=pk) | Q(name=value))
    # Resolved in a subquery on the small table, so the filter on samples stays a plain
    # benchmark_id lookup that the (benchmark, split, external_id) index serves.
    return queryset.filter(benchmark_id__in=benchmarks.values("pk"))


class BenchmarkViewSet(viewsets.ReadOnlyModelViewSet[Benchmark]):
    """Benchmarks with their tool count and the number of samples in each split."""

    serializer_class = BenchmarkSerializer

    def get_queryset(self) -> QuerySet[Benchmark]:
        return benchmark_list_with_counts()

    def _attach_split_counts(self, benchmarks: list[Benchmark]) -> None:
        counts = sample_counts_by_split_for(b.pk for b in benchmarks)
        for benchmark in benchmarks:
            # read by BenchmarkSerializer's split_counts field
            benchmark.split_counts = counts.get(benchmark.pk, {})  # type: ignore[attr-defined]

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        queryset = self.filter_queryset(self.get_queryset())
        page = self.paginate_queryset(queryset)
        benchmarks = list(page) if page is not None else list(queryset)
        self._attach_split_counts(benchmarks)
        serializer = self.get_serializer(benchmarks, many=True)
        if page is not None:
            return self.get_paginated_response(serializer.data)
        return Response(serializer.data)

    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        benchmark = self.get_object()
        self._attach_split_counts([benchmark])
        return Response(self.get_serializer(benchmark).data)


@extend_schema_view(
    list=extend_schema(
        parameters=[
            BENCHMARK_PARAM,
            OpenApiParameter("category", OpenApiTypes.STR, description="Exact category."),
            OpenApiParameter(
                "q", OpenApiTypes.STR, description="Text in the tool's name or description."
            ),
        ]
    )
)
class ToolViewSet(viewsets.ReadOnlyModelViewSet[Tool]):
    """Tools of the benchmarks, as imported."""

    serializer_class = ToolSerializer

    def get_queryset(self) -> QuerySet[Tool]:
        tools = Tool.objects.select_related("benchmark").order_by("benchmark__name", "name", "id")
        if self.action != "list":
            return tools
        params = self.request.query_params
        tools = filter_by_benchmark(tools, params.get("benchmark"))
        if category := params.get("category"):
            tools = tools.filter(category=category)
        if q := params.get("q", "").strip():
            tools = tools.filter(Q(name__icontains=q) | Q(description__icontains=q))
        return tools


@extend_schema_view(
    list=extend_schema(
        parameters=[
            BENCHMARK_PARAM,
            OpenApiParameter("split", OpenApiTypes.STR, description="Exact split name."),
            OpenApiParameter(
                "kind", OpenApiTypes.STR, enum=["", *Sample.Kind.values], description="Empty: any."
            ),
        ]
    ),
    retrieve=extend_schema(responses=SampleDetailSerializer),
)
class SampleViewSet(viewsets.ReadOnlyModelViewSet[Sample]):
    """Samples in their current revision; the detail lists every revision."""

    def get_serializer_class(self) -> type[serializers.ModelSerializer[Sample]]:
        return SampleDetailSerializer if self.action == "retrieve" else SampleSerializer

    def get_queryset(self) -> QuerySet[Sample]:
        # Ordered like the unique index (benchmark, split, external_id) so pages come from it.
        samples = Sample.objects.order_by("benchmark_id", "split", "external_id")
        if self.action == "retrieve":
            return samples.prefetch_related("revisions__author")
        if self.action != "list":
            return samples
        params = self.request.query_params
        samples = filter_by_benchmark(samples, params.get("benchmark"))
        if split := params.get("split"):
            samples = samples.filter(split=split)
        if kind := params.get("kind"):
            if kind not in Sample.Kind.values:
                raise ValidationError(
                    {"kind": f"unknown kind {kind!r}; one of {', '.join(Sample.Kind.values)}"}
                )
            samples = samples.filter(kind=kind)
        return samples
