"""A benchmark as a Hugging Face dataset folder (config.hfdataset): its samples under a gold
version, one split per benchmark split, and its tools as a second config. The one service the
export command (`export_benchmark --format hf`) and the export page's download both call.

The samples are those of benchmarks.exports.gold_samples: "refined" writes each as its current
revision and leaves out those an approved refinement dropped; "published" writes each as
imported. Every stored field is a column (JSON columns for the fields whose shape varies).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.db.models import QuerySet

from benchmarks.exports import ExportRefused, gold_samples
from benchmarks.models import Benchmark, Sample, Tool
from benchmarks.selectors import GOLD_VERSIONS, REFINED_GOLD, sample_counts_by_split
from config.hfdataset import (
    CardText,
    Column,
    DatasetWriter,
    HFDatasetError,
    exported_at,
    hf_split_names,
    platform_version,
    safe_name,
)

SAMPLE_COLUMNS = (
    Column("split", "string", "the benchmark's split, as named on the platform"),
    Column("external_id", "string", "the sample's id in the benchmark's own files"),
    Column("sample_id", "int64", "the sample's id on the platform (runs' predictions name it)"),
    Column("kind", "string", "the sample's kind, as the suite names it"),
    Column("input", "json", "what the model is given (the query, the dialogue so far...)"),
    Column("reference", "json", "the gold answer under this export's gold version"),
    Column("candidate_tools", "strings", "the names of the tools offered with the sample"),
    Column("metadata", "json", "the rest of the sample's record, as stored"),
    Column("revision", "int64", "the revision written: 0 as imported, n after n refinements"),
)
TOOL_COLUMNS = (
    Column("name", "string", "the tool's name"),
    Column("description", "string", "its description"),
    Column("parameters", "json", "JSON Schema of its arguments"),
    Column("returns", "json", "JSON Schema of its result"),
    Column("category", "string", "its category, where the benchmark gives one"),
    Column("raw", "json", "the tool's record as published"),
)
TOOLS_CONFIG = "tools"


@dataclass(frozen=True)
class HFBenchmarkExport:
    benchmark: str
    gold: str
    rows: dict[str, int]  # written split -> samples
    tools: int
    dropped: int
    renamed: dict[str, str]


def hf_folder_name(benchmark: Benchmark, gold: str) -> str:
    return f"{safe_name(benchmark.name, 'benchmark')}-{gold}-hf"


def benchmark_hf_export(
    *,
    benchmark: Benchmark,
    folder: Path,
    split: str | None = None,
    gold: str = REFINED_GOLD,
    license: str = "other",
    progress: Callable[[int], None] | None = None,
) -> HFBenchmarkExport:
    """Write the benchmark (or one split) under `gold` as a dataset folder at `folder`.
    ExportRefused for an unknown split or gold version, or a benchmark with no sample to
    write; `progress(n)` is called as samples are written."""
    if gold not in GOLD_VERSIONS:
        raise ExportRefused(
            f"unknown gold version {gold!r}; choose {' or '.join(GOLD_VERSIONS)}", field="gold"
        )
    counts = sample_counts_by_split(benchmark=benchmark)
    if split and split not in counts:
        raise ExportRefused(f"benchmark {benchmark.name!r} has no split {split!r}", field="split")
    names = hf_split_names(sorted(counts) if not split else [split])
    samples = Sample.objects.filter(benchmark=benchmark).order_by("split", "id")
    if split:
        samples = samples.filter(split=split)
    writer = DatasetWriter(folder, SAMPLE_COLUMNS)
    writer.config(TOOLS_CONFIG, TOOL_COLUMNS)
    try:
        tools, dropped = _write_rows(writer, samples, gold, names, benchmark.pk, progress)
    except HFDatasetError as exc:
        raise ExportRefused(f"{benchmark.name}: {exc}", field="format") from None
    renamed = {a: b for a, b in names.items() if a != b}
    card = CardText(
        pretty_name=f"{benchmark.name} ({gold} gold)",
        license=license,
        summary=(
            f"The samples of the benchmark {benchmark.name} (suite `{benchmark.suite}`), one "
            f"row per sample, under the {gold} gold: "
            + (
                "each sample as its current revision (experts' approved refinements applied, "
                "the samples a refinement dropped left out)."
                if gold == REFINED_GOLD
                else "each sample as imported, the refinements left out."
            )
            + " Its tools are the `tools` config."
        ),
        provenance={
            **platform_version(),
            "kind": "benchmark",
            "benchmark": benchmark.name,
            "suite": benchmark.suite,
            "demo": benchmark.is_demo,
            "gold": gold,
            "split": split or None,
            "dropped_samples": dropped,
            "exported_at": exported_at(),
        },
        renamed_splits=renamed,
        notes=(
            (
                "The license is the benchmark's own: `other` until you set the one its "
                "authors published, in the header above, before you share it."
            )
            if license == "other"
            else "",
        ),
    )
    try:
        rows = writer.close(card)
    except HFDatasetError as exc:
        raise ExportRefused(f"{benchmark.name}: {exc}", field="split") from None
    return HFBenchmarkExport(
        benchmark=benchmark.name,
        gold=gold,
        rows=rows["default"],
        tools=tools,
        dropped=dropped,
        renamed=renamed,
    )


def _write_rows(
    writer: DatasetWriter,
    samples: QuerySet[Sample],
    gold: str,
    names: dict[str, str],
    benchmark_id: int,
    progress: Callable[[int], None] | None,
) -> tuple[int, int]:
    """The samples and the tools written; (tools, dropped samples)."""
    dropped = 0
    for row in gold_samples(samples, gold):
        if row.dropped:
            dropped += 1
        else:
            writer.add(
                names[row.split],
                (
                    row.split,
                    row.external_id,
                    row.pk,
                    row.kind,
                    row.input,
                    row.reference,
                    row.candidate_tools,
                    row.metadata,
                    row.revision,
                ),
            )
        if progress:
            progress(1)
    tools = 0
    for tool in Tool.objects.filter(benchmark_id=benchmark_id).order_by("id").iterator():
        writer.add(
            TOOLS_CONFIG,
            (
                tool.name,
                tool.description,
                tool.parameters,
                tool.returns,
                tool.category,
                tool.raw,
            ),
            config=TOOLS_CONFIG,
        )
        tools += 1
    return tools, dropped
