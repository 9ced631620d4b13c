"""A benchmark written back out, refinements applied: the one service the export command and
the download page both call.

The published format is the suite's (its `exporter` capability, the inverse of its importer);
"jsonl" is the platform's own lossless JSON Lines: every stored field of every sample, each line
built by PostgreSQL from the stored JSON text and read by COPY in blocks (samples_jsonl; nothing
is decoded in Python, a million samples in seconds), and the tools
(benchmarks.kit.export.platform_tools_jsonl).
Either way the files come with provenance.json, which says for each changed sample which
revision it is written as, who wrote it, who approved it, when, and how it was settled.

Samples are written as they are stored. A refinement changes the stored sample only when it is
applied: at once in a campaign without a review stage, on approval in one with it (annotation's
refinement_apply, through sample_revise), so a refinement awaiting review or returned to its
author is not in an export. A sample an approved refinement dropped
(metadata["dropped_by_refinement"]) is left out and listed in provenance.json.
"""

from __future__ import annotations

import io
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import connection
from django.db.models import Q, QuerySet
from django.db.models.functions import JSONArray
from django.utils import timezone
from psycopg import sql

from benchmarks.kit.base import (
    ImportBundle,
    ImportFormatError,
    SampleRecord,
    ToolRecord,
    validate_bundle,
)
from benchmarks.kit.export import (
    PLATFORM_SAMPLES,
    PLATFORM_TOOLS,
    ExportError,
    Files,
    json_bytes,
    platform_tools_jsonl,
)
from benchmarks.kit.registry import Exporter, get_suite
from benchmarks.models import Benchmark, Sample, SampleRevision, Tool
from benchmarks.selectors import GOLD_VERSIONS, PUBLISHED_GOLD, REFINED_GOLD, as_imported
from config.errors import ApplicationError

FORMATS = ("published", "jsonl")
PROVENANCE = "provenance.json"
# Set by annotation's refinement_apply on a sample a refinement dropped.
DROPPED = "dropped_by_refinement"
BATCH = 2000


class ExportRefused(ApplicationError):
    """The benchmark cannot be written as asked (an unknown split or format, a sample the
    format has no place for)."""


@dataclass
class BenchmarkExport:
    """The files of one export, provenance.json among them."""

    benchmark: str
    suite: str
    fmt: str
    files: Files
    samples: int
    changed: int
    dropped: int
    differs: int = 0

    def write_to(self, folder: Path) -> list[Path]:
        """Write the files under `folder` (made if missing); returns the paths written."""
        written = []
        for name, data in sorted(self.files.items()):
            path = folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            written.append(path)
        return written

    def zip_bytes(self) -> bytes:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, data in sorted(self.files.items()):
                archive.writestr(name, data)
        return buffer.getvalue()

    @property
    def zip_name(self) -> str:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in self.benchmark)
        return f"{safe.strip('_.') or 'benchmark'}-{self.fmt}.zip"


def _person(user: Any) -> str | None:
    return user.get_username() if user is not None else None


def _provenance_entry(
    split: str, external_id: str, number: int, revisions: list[SampleRevision]
) -> dict[str, Any]:
    history = [
        {
            "revision": r.number,
            "author": _person(r.author),
            "reviewer": _person(r.reviewer),
            "date": r.created_at.isoformat(),
            "verdict": r.verdict,
            "note": r.note,
        }
        for r in revisions
        if r.number > 0
    ]
    current = next((h for h in history if h["revision"] == number), None)
    return {
        "external_id": external_id,
        "split": split,
        **(current or {"revision": number}),
        "history": history,
    }


@dataclass(frozen=True)
class GoldSample:
    """A sample under a gold version: its stored fields, the revision it is written as (0: as
    imported) and whether an approved refinement dropped it (the refined gold leaves it out)."""

    pk: int
    split: str
    external_id: str
    kind: str
    input: Any
    reference: Any
    candidate_tools: list[str]
    metadata: dict[str, Any]
    revision: int
    dropped: bool


def gold_samples(samples: QuerySet[Sample], gold: str) -> Iterator[GoldSample]:
    """The samples in the queryset's order under `gold`: "refined" (each as its current
    revision) or "published" (each as imported: revision 0 of a refined sample, the dropped
    mark left out). Read in chunks of BATCH rows, as tuples rather than model instances (a
    third of the time at 20,000 samples), the four JSON fields as one array (one JSON text to
    decode a row instead of four: half the time of reading 100,000 samples)."""
    rows = samples.annotate(
        content=JSONArray("input", "reference", "candidate_tools", "metadata")
    ).values_list("pk", "split", "external_id", "kind", "content", "revision")
    imported = (
        as_imported(samples.filter(revision__gt=0).values_list("pk", flat=True))
        if gold == PUBLISHED_GOLD
        else {}
    )
    for (
        pk,
        split_name,
        external_id,
        kind,
        (given, reference, candidates, metadata),
        revision,
    ) in rows.iterator(chunk_size=BATCH):
        if gold == PUBLISHED_GOLD:
            metadata = {k: v for k, v in (metadata or {}).items() if k != DROPPED}
            if pk in imported:
                given, reference, candidates = imported[pk]
                revision = 0
        yield GoldSample(
            pk=pk,
            split=split_name,
            external_id=external_id,
            kind=kind,
            input=given,
            reference=reference,
            candidate_tools=list(candidates or []),
            metadata=dict(metadata or {}),
            revision=revision,
            dropped=gold == REFINED_GOLD and DROPPED in (metadata or {}),
        )


# The line of a sample in PLATFORM_SAMPLES, built by PostgreSQL: the stored JSON text as jsonb
# writes it (the separators and key order json.dumps gives the same value read back from the
# database; numbers as PostgreSQL writes them, 1e-07 as 0.0000001), strings escaped as json.dumps
# escapes them (ensure_ascii=False).
_LINE = sql.SQL(
    "'{{\"split\": ' || to_json(s.split)::text"
    " || ', \"external_id\": ' || to_json(s.external_id)::text"
    " || ', \"kind\": ' || to_json(s.kind)::text"
    " || ', \"input\": ' || {input}"
    " || ', \"reference\": ' || {reference}"
    " || ', \"candidate_tools\": ' || {candidate_tools}"
    " || ', \"metadata\": ' || {metadata} || '}}'"
)


def _json_or(value: sql.Composable, default: str) -> sql.Composable:
    """The JSON text of `value`, or `default` where Python holds the value false (null, false,
    0, "", [], {}), as the records' `value or default` gives it."""
    return sql.SQL(
        "CASE WHEN {value} IS NULL OR {value} IN ('null'::jsonb, 'false', '0', '\"\"', '[]',"
        " '{{}}') THEN {default} ELSE ({value})::text END"
    ).format(value=value, default=sql.Literal(default))


def _imported(field: str) -> sql.Composable:
    """A field as imported: revision 0's (r) where the sample was refined."""
    return sql.SQL("CASE WHEN r.id IS NULL THEN s.{field} ELSE r.{field} END").format(
        field=sql.Identifier(field)
    )


_GOLD_LINES = {
    REFINED_GOLD: {
        "line": _LINE.format(
            input=sql.SQL("coalesce(s.input::text, 'null')"),
            reference=sql.SQL("coalesce(s.reference::text, 'null')"),
            candidate_tools=_json_or(sql.SQL("s.candidate_tools"), "[]"),
            metadata=_json_or(sql.SQL("s.metadata"), "{}"),
        ),
        "join": sql.SQL(""),
        # Those an approved refinement dropped are left out.
        "keep": sql.SQL("AND NOT coalesce(s.metadata ? {}, false)").format(sql.Literal(DROPPED)),
    },
    PUBLISHED_GOLD: {
        "line": _LINE.format(
            input=sql.SQL(
                "CASE WHEN r.id IS NULL THEN coalesce(s.input::text, 'null') ELSE {} END"
            ).format(_json_or(sql.SQL("r.input"), "{}")),
            reference=sql.SQL("coalesce(({})::text, 'null')").format(_imported("reference")),
            candidate_tools=_json_or(_imported("candidate_tools"), "[]"),
            metadata=_json_or(
                sql.SQL(
                    "CASE WHEN jsonb_typeof(s.metadata) = 'object' THEN s.metadata - {} "
                    "ELSE s.metadata END"
                ).format(sql.Literal(DROPPED)),
                "{}",
            ),
        ),
        "join": sql.SQL(
            "LEFT JOIN {} r ON r.sample_id = s.id AND r.number = 0 AND s.revision > 0"
        ).format(sql.Identifier(SampleRevision._meta.db_table)),
        "keep": sql.SQL(""),
    },
}
# CSV with a delimiter and a quote that a JSON text never holds (jsonb and to_json escape every
# control character): each row comes as its line, unquoted and unescaped.
_COPY_LINES = sql.SQL(
    "COPY (SELECT {line} FROM {samples} s {join} WHERE s.benchmark_id = {benchmark} {split} "
    "{keep} ORDER BY s.split, s.id) TO STDOUT (FORMAT csv, DELIMITER E'\\x01', QUOTE E'\\x02')"
)


def samples_jsonl(
    benchmark: Benchmark,
    split: str | None,
    gold: str,
    progress: Callable[[int], None] | None = None,
) -> tuple[bytes, int]:
    """PLATFORM_SAMPLES of the benchmark (or one split) under `gold`, and how many lines it
    holds: the samples in the order of their split and id, those the refined gold drops left
    out. Each line is made by PostgreSQL (_LINE) and read by COPY in blocks, so no sample is
    decoded in Python; `progress(n)` is called as lines arrive."""
    copy_sql = _COPY_LINES.format(
        samples=sql.Identifier(Sample._meta.db_table),
        benchmark=sql.Literal(benchmark.pk),
        split=sql.SQL("AND s.split = {}").format(sql.Literal(split)) if split else sql.SQL(""),
        **_GOLD_LINES[gold],
    )
    blocks: list[bytes] = []
    lines = 0
    with connection.cursor() as cursor, cursor.cursor.copy(copy_sql) as copy:
        while view := copy.read():
            block = bytes(view)
            blocks.append(block)
            count = block.count(b"\n")
            lines += count
            if progress:
                progress(count)
    return b"".join(blocks), lines


def benchmark_export(
    *,
    benchmark: Benchmark,
    split: str | None = None,
    fmt: str = "published",
    gold: str = REFINED_GOLD,
    progress: Callable[[int], None] | None = None,
) -> BenchmarkExport:
    """The benchmark (or one split of it) in `fmt` under a gold version, with provenance.json:
    "refined" (each sample as its current revision, those a refinement dropped left out) or
    "published" (each sample as imported, all of them). Reads only. Raises ExportRefused for an
    unknown split, format or gold version, a suite without a published format, and a sample
    the format cannot hold (naming it and the field); `progress(n)` is called as samples are
    read."""
    if fmt not in FORMATS:
        raise ExportRefused(
            f"unknown format {fmt!r}; choose {' or '.join(FORMATS)}", field="format"
        )
    if gold not in GOLD_VERSIONS:
        raise ExportRefused(
            f"unknown gold version {gold!r}; choose {' or '.join(GOLD_VERSIONS)}", field="gold"
        )
    suite = get_suite(benchmark.suite)
    if fmt == "published" and suite.exporter is None:
        raise ExportRefused(
            f"the {benchmark.suite} suite has no published format to write; choose jsonl",
            field="format",
        )
    samples = Sample.objects.filter(benchmark=benchmark).order_by("split", "id")
    if split:
        if not samples.filter(split=split).exists():
            raise ExportRefused(
                f"benchmark {benchmark.name!r} has no split {split!r}", field="split"
            )
        samples = samples.filter(split=split)

    jsonl = fmt == "jsonl"
    records: list[SampleRecord] = []
    changed: list[tuple[int, str, str, int]] = []  # (pk, split, external_id, revision)
    dropped: list[dict[str, Any]] = []
    # For jsonl only the samples refined or dropped are read here, for provenance.json; the
    # lines themselves come from PostgreSQL (samples_jsonl).
    marked = samples.filter(Q(revision__gt=0) | Q(metadata__has_key=DROPPED))
    for row in gold_samples(marked if jsonl else samples, gold):
        if row.dropped:
            dropped.append({"external_id": row.external_id, "split": row.split})
        else:
            if not jsonl:
                records.append(
                    SampleRecord(
                        split=row.split,
                        external_id=row.external_id,
                        input=row.input,
                        reference=row.reference,
                        kind=row.kind,
                        candidate_tools=row.candidate_tools,
                        metadata=row.metadata,
                    )
                )
            if row.revision > 0:
                changed.append((row.pk, row.split, row.external_id, row.revision))
        if progress and not jsonl:
            progress(1)
    tools = [
        ToolRecord(
            name=t.name,
            description=t.description,
            parameters=t.parameters,
            returns=t.returns,
            category=t.category,
            raw=t.raw,
        )
        for t in Tool.objects.filter(benchmark=benchmark).order_by("id")
    ]

    written = len(records)
    if jsonl:
        lines, written = samples_jsonl(benchmark, split, gold, progress)
        if progress:
            progress(len(dropped))  # read too, and counted in the total
    try:
        if jsonl:
            files = {PLATFORM_SAMPLES: lines, PLATFORM_TOOLS: platform_tools_jsonl(tools)}
        else:
            assert suite.exporter is not None
            files = suite.exporter.write(records, tools)
    except ExportError as exc:
        raise ExportRefused(
            f"{benchmark.name}: {exc}", field=exc.field or "format", code="cannot_export"
        ) from None
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        # A stored value of a shape the writer does not expect (a gold edited as free JSON):
        # refused, not a server error.
        raise ExportRefused(
            f"{benchmark.name}: a stored sample is not in the shape the {benchmark.suite} "
            f"format needs ({type(exc).__name__}: {exc})",
            field="format",
            code="cannot_export",
        ) from None
    differences: list[dict[str, Any]] = []
    if fmt == "published":
        assert suite.exporter is not None
        read = _check_reads_back(suite.exporter, suite.import_files, files)
        differences = _differences(records, read)

    revisions: dict[int, list[SampleRevision]] = {}
    for made in (
        SampleRevision.objects.filter(sample__in=[pk for pk, *_ in changed])
        .select_related("author", "reviewer")
        .order_by("sample_id", "number")
    ):
        revisions.setdefault(made.sample_id, []).append(made)
    cannot_carry = suite.exporter.cannot_carry if fmt == "published" and suite.exporter else ""
    files[PROVENANCE] = json_bytes(
        {
            "benchmark": benchmark.name,
            "suite": benchmark.suite,
            "format": fmt,
            "gold": gold,
            "split": split or None,
            "exported_at": timezone.now().isoformat(),
            "samples": written,
            "not_carried": cannot_carry,
            "changed": [
                _provenance_entry(split_name, external_id, revision, revisions.get(pk, []))
                for pk, split_name, external_id, revision in changed
            ],
            "dropped": dropped,
            "differs_when_read_back": differences,
        }
    )
    return BenchmarkExport(
        benchmark=benchmark.name,
        suite=benchmark.suite,
        fmt=fmt,
        files=files,
        samples=written,
        changed=len(changed),
        dropped=len(dropped),
        differs=len(differences),
    )


def _check_reads_back(
    exporter: Exporter, read: Callable[[list[Path]], ImportBundle], files: Files
) -> ImportBundle:
    """Read the written files with the suite's importer, so that an export that would not
    import back (a refined gold the format cannot hold, an edit the importer refuses) is
    refused here, with the importer's file, line and field, rather than found later."""
    with tempfile.TemporaryDirectory(prefix="export-") as tmp:
        folder = Path(tmp)
        for name, data in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(data)
        try:
            bundle = read(exporter.paths_to_import(folder))
            validate_bundle(bundle)
        except ImportFormatError as exc:
            where = str(exc).replace(f"{folder}/", "")
            raise ExportRefused(
                f"the export would not import back: {where}",
                field=exc.field or "format",
                code="cannot_export",
            ) from None
    return bundle


COMPARED = ("kind", "input", "reference", "candidate_tools")


def _differences(records: list[SampleRecord], read: ImportBundle) -> list[dict[str, Any]]:
    """The samples that the written files, read back, do not give as stored, and the fields
    that differ (what the format could not carry, e.g. a refined query that the published
    prompt around it does not follow): said in provenance.json rather than silently lost."""
    again = {(r.split, r.external_id): r for r in read.samples}
    found = []
    for record in records:
        twin = again.get((record.split, record.external_id))
        fields = (
            ["external_id"]
            if twin is None
            else [name for name in COMPARED if getattr(twin, name) != getattr(record, name)]
        )
        if fields:
            found.append(
                {"external_id": record.external_id, "split": record.split, "fields": fields}
            )
    return found


def benchmark_get_by_name(name: str) -> Benchmark:
    try:
        return Benchmark.objects.get(name=name)
    except Benchmark.DoesNotExist:
        known = ", ".join(Benchmark.objects.order_by("name").values_list("name", flat=True))
        raise ExportRefused(
            f"no benchmark named {name!r}; known: {known or 'none'}", field="benchmark"
        ) from None
