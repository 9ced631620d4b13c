"""Admin for benchmarks, tools, samples and revisions.

Imports (benchmark_import) are the only way tools and samples are written, and refinement writes
revisions, so the admin shows that data read-only: an edit here would bypass both. The sample
changelist is built for 200k+ rows: no full count, an index-backed ordering, and filters whose
choices come from cheap queries.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.text import Truncator

from benchmarks.models import Benchmark, Sample, SampleRevision, Tool
from benchmarks.selectors import benchmark_list_with_counts
from config.numbers import object_id


def pretty_json(value: Any) -> SafeString:
    # format_html escapes the dumped text, so markup inside benchmark data is shown, never run.
    return format_html(
        '<pre class="json-pretty">{}</pre>', json.dumps(value, indent=2, ensure_ascii=False)
    )


class ReadOnlyAdminMixin:
    """View and search only; the data is written by imports and refinement."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Benchmark)
class BenchmarkAdmin(admin.ModelAdmin):
    list_display = ("name", "suite", "is_demo", "tool_count", "sample_count", "updated_at")
    list_filter = ("suite", "is_demo")
    search_fields = ("name",)
    fields = ("name", "suite", "description", "is_demo", "created_at", "updated_at")
    readonly_fields = ("name", "suite", "created_at", "updated_at")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Benchmark]:
        return benchmark_list_with_counts(super().get_queryset(request))

    def has_add_permission(self, request: HttpRequest) -> bool:
        # A benchmark is created by importing its files.
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # The delete confirmation page would list every sample (hundreds of thousands).
        return False

    @admin.display(description="tools", ordering="tool_total")
    def tool_count(self, obj: Benchmark) -> int:
        # annotated by benchmark_list_with_counts
        return int(obj.tool_total)  # type: ignore[attr-defined]

    @admin.display(description="samples", ordering="sample_total")
    def sample_count(self, obj: Benchmark) -> int:
        return int(obj.sample_total)  # type: ignore[attr-defined]


@admin.register(Tool)
class ToolAdmin(admin.ModelAdmin):
    list_display = ("name", "benchmark", "category")
    list_filter = ("benchmark", "category")
    list_select_related = ("benchmark",)
    search_fields = ("name", "description")
    fields = (
        "benchmark",
        "name",
        "category",
        "description",
        "parameters_pretty",
        "returns_pretty",
        "raw_pretty",
        "created_at",
        "updated_at",
    )
    readonly_fields = (
        "benchmark",
        "name",
        "parameters_pretty",
        "returns_pretty",
        "raw_pretty",
        "created_at",
        "updated_at",
    )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="parameters")
    def parameters_pretty(self, obj: Tool) -> SafeString:
        return pretty_json(obj.parameters)

    @admin.display(description="returns")
    def returns_pretty(self, obj: Tool) -> SafeString:
        return pretty_json(obj.returns)

    @admin.display(description="raw record")
    def raw_pretty(self, obj: Tool) -> SafeString:
        return pretty_json(obj.raw)


class SampleRevisionInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = SampleRevision
    fields = ("number", "author", "note", "created_at")
    readonly_fields = fields
    extra = 0
    show_change_link = True

    def get_queryset(self, request: HttpRequest) -> QuerySet[SampleRevision]:
        return super().get_queryset(request).select_related("author")


class SplitFilter(admin.SimpleListFilter):
    """Splits of the chosen benchmark only; a DISTINCT over the whole table is avoided when a
    benchmark is chosen, and the choices stay relevant."""

    title = "split"
    parameter_name = "split"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        samples = Sample.objects.order_by()
        benchmark_id = object_id(
            request.GET.get("benchmark__id__exact"), name="benchmark__id__exact"
        )
        if benchmark_id is not None:
            samples = samples.filter(benchmark_id=benchmark_id)
        splits = samples.values_list("split", flat=True).distinct().order_by("split")
        return [(split, split) for split in splits]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Sample]) -> QuerySet[Sample]:
        if self.value():
            return queryset.filter(split=self.value())
        return queryset


@admin.register(Sample)
class SampleAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ("external_id", "benchmark", "split", "kind", "revision", "query_preview")
    list_filter = ("benchmark", SplitFilter, "kind")
    list_select_related = ("benchmark",)
    search_fields = ("external_id", "input__query")
    search_help_text = "Searches the sample id and the query text."
    show_full_result_count = False
    # Facet counts are one COUNT per filter choice over the whole table.
    show_facets = admin.ShowFacets.NEVER
    # Matches the unique index (benchmark, split, external_id): pages are read from the index.
    ordering = ("benchmark_id", "split", "external_id")
    list_per_page = 100
    inlines = (SampleRevisionInline,)
    fields = (
        "benchmark",
        "split",
        "external_id",
        "kind",
        "revision",
        "input_pretty",
        "reference_pretty",
        "candidate_tools_pretty",
        "metadata_pretty",
        "created_at",
        "updated_at",
    )
    readonly_fields = fields

    @admin.display(description="query")
    def query_preview(self, obj: Sample) -> str:
        query = obj.input.get("query", "") if isinstance(obj.input, dict) else ""
        return Truncator(str(query)).chars(80)

    @admin.display(description="input")
    def input_pretty(self, obj: Sample) -> SafeString:
        return pretty_json(obj.input)

    @admin.display(description="reference")
    def reference_pretty(self, obj: Sample) -> SafeString:
        return pretty_json(obj.reference)

    @admin.display(description="candidate tools")
    def candidate_tools_pretty(self, obj: Sample) -> SafeString:
        return pretty_json(obj.candidate_tools)

    @admin.display(description="metadata")
    def metadata_pretty(self, obj: Sample) -> SafeString:
        return pretty_json(obj.metadata)


@admin.register(SampleRevision)
class SampleRevisionAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ("sample", "number", "benchmark", "author", "created_at")
    list_filter = (("sample__benchmark", admin.RelatedFieldListFilter),)
    list_select_related = ("sample__benchmark", "author")
    search_fields = ("sample__external_id", "note")
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER
    fields = (
        "sample",
        "number",
        "author",
        "note",
        "input_pretty",
        "reference_pretty",
        "candidate_tools_pretty",
        "created_at",
    )
    readonly_fields = fields

    @admin.display(description="benchmark", ordering="sample__benchmark__name")
    def benchmark(self, obj: SampleRevision) -> Benchmark:
        return obj.sample.benchmark

    @admin.display(description="input")
    def input_pretty(self, obj: SampleRevision) -> SafeString:
        return pretty_json(obj.input)

    @admin.display(description="reference")
    def reference_pretty(self, obj: SampleRevision) -> SafeString:
        return pretty_json(obj.reference)

    @admin.display(description="candidate tools")
    def candidate_tools_pretty(self, obj: SampleRevision) -> SafeString:
        return pretty_json(obj.candidate_tools)
