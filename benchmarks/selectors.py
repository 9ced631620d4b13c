"""Reads of the benchmarks app."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import Count, IntegerField, OuterRef, Q, QuerySet, Subquery, TextField
from django.db.models.functions import Cast, Coalesce
from django.shortcuts import get_object_or_404

from benchmarks.kit.golddiff import (
    acceptable_calls,
    calls_from_reference,
    gold_shape,
    numbering,
    plan_from_reference,
    revision_diff,
    turn_calls,
)
from benchmarks.models import Benchmark, ImportJob, Sample, SampleRevision, Tool


def _count_per_benchmark(model: type[Tool] | type[Sample]) -> Coalesce:
    # A correlated subquery per count: two Count()s over two joins would multiply tools by
    # samples and get slow at 200k samples.
    counted = (
        model.objects.filter(benchmark=OuterRef("pk"))
        .order_by()
        .values("benchmark")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def benchmark_list_with_counts(
    benchmarks: QuerySet[Benchmark] | None = None,
) -> QuerySet[Benchmark]:
    """Benchmarks annotated with tool_total and sample_total, one query."""
    if benchmarks is None:
        benchmarks = Benchmark.objects.order_by("name")
    revised = (
        Sample.objects.filter(benchmark=OuterRef("pk"), revision__gt=0)
        .order_by()
        .values("benchmark")
        .annotate(n=Count("pk"))
        .values("n")
    )
    revisions = (
        SampleRevision.objects.filter(sample__benchmark=OuterRef("pk"), number__gt=0)
        .order_by()
        .values("sample__benchmark")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return benchmarks.annotate(
        tool_total=_count_per_benchmark(Tool),
        sample_total=_count_per_benchmark(Sample),
        revised_total=Coalesce(Subquery(revised, output_field=IntegerField()), 0),
        revision_total=Coalesce(Subquery(revisions, output_field=IntegerField()), 0),
    )


def sample_counts_by_split_for(benchmark_ids: Iterable[int]) -> dict[int, dict[str, int]]:
    """{benchmark id: {split: samples}} for several benchmarks in one grouped query."""
    rows = (
        Sample.objects.filter(benchmark_id__in=list(benchmark_ids))
        .order_by()
        .values_list("benchmark_id", "split")
        .annotate(n=Count("pk"))
        .order_by("benchmark_id", "split")
    )
    counts: dict[int, dict[str, int]] = defaultdict(dict)
    for benchmark_id, split, n in rows:
        counts[benchmark_id][split] = n
    return dict(counts)


def tool_count(*, benchmark: Benchmark) -> int:
    return Tool.objects.filter(benchmark=benchmark).count()


def sample_counts_by_split(*, benchmark: Benchmark) -> dict[str, int]:
    return sample_counts_by_split_for([benchmark.pk]).get(benchmark.pk, {})


# --- the benchmark and sample pages -------------------------------------------------------------

SAMPLES_PER_PAGE = 50


def benchmark_get(*, benchmark_id: int, counts: bool = True) -> Benchmark:
    """One benchmark (404 when there is none), with its counts unless `counts` is False (they
    read every sample: a page that does not show them need not wait for a million)."""
    found = benchmark_list_with_counts(Benchmark.objects.all()) if counts else Benchmark.objects
    return get_object_or_404(found, pk=benchmark_id)


def benchmark_count_splits(
    *, benchmark: Benchmark, splits: Sequence[Mapping[str, Any]], tools: int
) -> None:
    """Set the counts benchmark_list_with_counts gives (tool_total, sample_total, revised_total,
    revision_total) from its splits' (benchmark_splits) and its number of tools: the samples
    are read once, not twice."""
    totals = {
        "tool_total": tools,
        "sample_total": sum(row["samples"] for row in splits),
        "revised_total": sum(row["revised"] for row in splits),
        "revision_total": sum(row["revisions"] for row in splits),
    }
    for name, value in totals.items():
        setattr(benchmark, name, value)


def benchmark_splits(*, benchmark: Benchmark) -> list[dict[str, Any]]:
    """Per split: samples, samples revised, revisions made (revision 0, as imported, is not
    counted), in split order."""
    rows = (
        Sample.objects.filter(benchmark=benchmark)
        .order_by()
        .values("split")
        .annotate(samples=Count("pk"), revised=Count("pk", filter=Q(revision__gt=0)))
        .order_by("split")
    )
    revisions = dict(
        SampleRevision.objects.filter(sample__benchmark=benchmark, number__gt=0)
        .order_by()
        .values_list("sample__split")
        .annotate(n=Count("pk"))
        .values_list("sample__split", "n")
    )
    return [{**row, "revisions": revisions.get(row["split"], 0)} for row in rows]


def tool_list(*, benchmark: Benchmark) -> QuerySet[Tool]:
    return Tool.objects.filter(benchmark=benchmark).only(
        "name", "description", "category", "benchmark_id"
    )


def sample_page(
    *,
    benchmark: Benchmark,
    split: str = "",
    text: str = "",
    revised_only: bool = False,
    page: int | str = 1,
) -> Page[Sample]:
    """A page of the benchmark's samples, by split and by the natural order of their ids: of one
    split, whose id or input contains `text` (case-insensitive), revised ones only. A page
    number out of range gives the last page."""
    samples = Sample.objects.filter(benchmark=benchmark).only(
        "split", "external_id", "kind", "input", "revision", "benchmark_id"
    )
    if split:
        samples = samples.filter(split=split)
    if revised_only:
        samples = samples.filter(revision__gt=0)
    if text:
        samples = samples.annotate(input_text=Cast("input", TextField())).filter(
            Q(external_id__icontains=text) | Q(input_text__icontains=text)
        )
    # Ids in their natural order (M-S_0_2 before M-S_0_10), not in the order of the import.
    paginator = Paginator(samples.order_by("split", "natural_id", "external_id"), SAMPLES_PER_PAGE)
    return paginator.get_page(page)


def sample_query_text(sample_input: Any) -> str:
    """What a sample asks, for a list: its query, or the last user turn of its dialogue."""
    if not isinstance(sample_input, Mapping):
        return ""
    query = sample_input.get("query")
    if isinstance(query, str) and query:
        return query
    for turn in reversed(sample_input.get("turns") or []):
        if isinstance(turn, Mapping) and turn.get("role") == "user":
            return str(turn.get("content") or "")
    return ""


def sample_get(*, benchmark: Benchmark, sample_id: int) -> Sample:
    return get_object_or_404(Sample, benchmark=benchmark, pk=sample_id)


def gold_outline(reference: Any) -> dict[str, Any]:
    """A gold answer to read (the sample page, the review of a refinement): numbered steps or
    calls with their tool and arguments, or, for any other gold, its JSON
    (templates/partials/outline.html)."""
    shape = gold_shape(reference)
    if shape == "plan":
        steps = plan_from_reference(reference)
        rows = [
            {
                "number": number,
                "depth": step.depth,
                "text": step.text,
                "tool": step.tool or "",
                # As parsed: templates/partials/call.html writes the call.
                "arguments": step.arguments or None,
            }
            for step, number in zip(steps, numbering(steps), strict=True)
        ]
        return {"mode": shape, "rows": rows}
    if shape == "calls":
        rows = [
            {
                "number": str(i),
                "depth": 0,
                "text": "",
                "tool": call.name,
                "arguments": call.arguments,
            }
            for i, call in enumerate(calls_from_reference(reference), start=1)
        ]
        return {"mode": shape, "rows": rows}
    if shape == "acceptable":
        # Each argument's value is its list of acceptable values ("" among them: optional).
        rows = [
            {
                "number": str(i),
                "depth": 0,
                "text": "",
                "tool": call.name,
                "arguments": call.arguments,
            }
            for i, call in enumerate(acceptable_calls(reference), start=1)
        ]
        return {"mode": "calls", "rows": rows}
    if shape == "turns":
        rows = [
            {
                "number": f"{turn}.{i}",
                "depth": 0,
                "text": "",
                "tool": call.name,
                "arguments": call.arguments,
            }
            for turn, calls in enumerate(turn_calls(reference), start=1)
            for i, call in enumerate(calls, start=1)
        ]
        return {"mode": "calls", "rows": rows}
    return {"mode": shape, "json": json.dumps(reference, ensure_ascii=False, indent=2)}


def sample_tools(*, sample: Sample) -> list[dict[str, str]]:
    """The tools offered with a sample, with their descriptions: the ones its input carries
    (an MTU-Bench dialogue brings its own), then its candidate tools from the benchmark's."""
    tools: dict[str, dict[str, str]] = {}
    own = sample.input.get("tools") if isinstance(sample.input, Mapping) else None
    for tool in own if isinstance(own, list) else []:
        if isinstance(tool, Mapping) and isinstance(tool.get("name"), str):
            tools.setdefault(
                tool["name"],
                {
                    "name": tool["name"],
                    "description": str(tool.get("description") or ""),
                    "category": "",
                },
            )
    names = [str(n) for n in sample.candidate_tools or [] if str(n) not in tools]
    described = {
        t.name: t
        for t in Tool.objects.filter(benchmark_id=sample.benchmark_id, name__in=names).only(
            "name", "description", "category"
        )
    }
    for name in names:
        tool = described.get(name)
        tools[name] = {
            "name": name,
            "description": tool.description if tool else "",
            "category": tool.category if tool else "",
            "missing": "" if tool else "not among the benchmark's tools",
        }
    return list(tools.values())


def _query(sample_input: Any) -> Any:
    return sample_input.get("query") if isinstance(sample_input, Mapping) else None


def sample_history(*, sample: Sample) -> list[dict[str, Any]]:
    """The sample's revisions, newest first, each with who made it, when, its note and the diff
    from the revision before it (revision 0, as imported, has none)."""
    revisions = list(
        SampleRevision.objects.filter(sample=sample)
        .select_related("author", "reviewer")
        .order_by("number")
    )
    history = []
    for before, revision in zip([None, *revisions], revisions, strict=False):
        diff = (
            revision_diff(
                before.reference,
                revision.reference,
                old_query=_query(before.input),
                new_query=_query(revision.input),
            )
            if before is not None
            else []
        )
        history.append({"revision": revision, "diff": diff, "first": before is None})
    return list(reversed(history))


# --- import jobs --------------------------------------------------------------------------------

PHASES = {
    "queued": "waiting for a worker",
    "reading": "reading the files",
    "storing": "storing (one transaction)",
    "done": "done",
    "failed": "failed",
}


def import_job_list(*, limit: int = 10) -> list[ImportJob]:
    return list(ImportJob.objects.select_related("created_by", "benchmark")[:limit])


def import_job_get(*, job_id: int) -> ImportJob:
    return get_object_or_404(ImportJob.objects.select_related("benchmark", "created_by"), pk=job_id)


def import_job_panel(job: ImportJob) -> dict[str, Any]:
    """What the progress panel of an import job shows, and whether it keeps polling."""
    return {
        "status": job.status,
        "status_label": job.get_status_display(),
        "phase": PHASES.get(job.phase, job.phase),
        "rows_read": job.rows_read,
        "polling": not job.finished,
        "error": job.error,
        "error_file": job.error_file,
        "error_line": job.error_line,
        "error_field": job.error_field,
        "summary": job.summary,
        "splits": sorted((job.summary.get("samples") or {}).items()) if job.summary else [],
        "benchmark": job.benchmark,
        "attempts": job.attempts,
    }


# A benchmark's gold versions: the samples as published (as imported: a refined sample's
# revision 0) and as refined (each sample's newest revision, what the sample holds).
PUBLISHED_GOLD = "published"
REFINED_GOLD = "refined"
GOLD_VERSIONS = (PUBLISHED_GOLD, REFINED_GOLD)


def as_imported(sample_ids: Iterable[int]) -> dict[int, tuple[Any, Any, list[str]]]:
    """(input, reference, candidate tools) as imported, for each of these samples that was
    refined since (its revision 0, which the first refinement records); the others are as
    they are."""
    return {
        sample_id: (given or {}, reference, list(candidates or []))
        for sample_id, given, reference, candidates in SampleRevision.objects.filter(
            sample_id__in=list(sample_ids), number=0
        ).values_list("sample_id", "input", "reference", "candidate_tools")
    }
