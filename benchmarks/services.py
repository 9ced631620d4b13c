"""State changes of the benchmarks app."""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, cast

from django.db import connection, transaction
from django.utils import timezone

from benchmarks import selectors
from benchmarks.kit.base import (
    ImportFormatError,
    Progress,
    SampleRecord,
    ToolRecord,
    check_gold_tools,
    find_unstorable,
    merge_tools,
    undescribed_gold_tools,
    validate_bundle,
)
from benchmarks.kit.registry import get_suite
from benchmarks.models import Benchmark, Sample, SampleRevision, Tool
from config.dbstats import stats_after_bulk_write
from config.errors import ApplicationError


@dataclass(frozen=True)
class ImportSummary:
    """Totals stored for the benchmark after the import, and what this import changed."""

    benchmark: str
    tools: int
    samples: dict[str, int]
    tools_written: int = 0
    samples_written: int = 0
    unchanged: int = 0
    refined_kept: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"benchmark": self.benchmark, "tools": self.tools, "samples": self.samples}


def benchmark_import(
    *,
    suite: str,
    paths: Sequence[str | Path],
    benchmark_name: str | None = None,
    is_demo: bool = False,
    progress: Progress | None = None,
    allow_known_tools: bool = False,
    on_phase: Callable[[str], None] | None = None,
) -> ImportSummary:
    """Read a benchmark's published files with its suite and store tools and samples.

    All or nothing: every file is parsed before anything is written, and the writes happen in
    one transaction, so a bad file leaves the database as it was (the last check, of each row
    as it is sent, rolls the transaction back too: _copy_samples). Idempotent: re-importing the
    same files writes no row. A sample that has been refined (revision > 0) keeps its refined
    content; the import does not overwrite an expert's work.

    A gold tool that no tool of the import describes (MetaTool's queries name their tool; the
    descriptions come in files of their own) is an error, unless `allow_known_tools` and the
    benchmark already has that tool from an earlier import.

    `progress(n)` is told of records read; `on_phase("storing")` when every file is read and
    checked and the one transaction begins.

    Raises ImportFormatError naming the file, line or record, and field.
    """
    with _gc_paused():
        return _benchmark_import(
            suite=suite,
            paths=paths,
            benchmark_name=benchmark_name,
            is_demo=is_demo,
            progress=progress,
            allow_known_tools=allow_known_tools,
            on_phase=on_phase,
        )


@contextmanager
def _gc_paused() -> Iterator[None]:
    """The cyclic garbage collector paused, and restored after, error or not. An import holds
    a record and a few containers per row (a million objects for 200,000 queries), which the
    collector, triggered by allocation counts, would walk again and again while they are read,
    checked and sent (a tenth of the import's time); none of them is in a cycle, and they are
    freed by their reference counts when the import returns."""
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def _benchmark_import(
    *,
    suite: str,
    paths: Sequence[str | Path],
    benchmark_name: str | None,
    is_demo: bool,
    progress: Progress | None,
    allow_known_tools: bool,
    on_phase: Callable[[str], None] | None,
) -> ImportSummary:
    suite_module = get_suite(suite)
    if not paths:
        raise ImportFormatError("no files given")
    bundle = suite_module.import_files([Path(p) for p in paths], progress)
    validate_bundle(bundle)
    gold_tools = suite_module.gold_tools
    undescribed = undescribed_gold_tools(bundle, gold_tools) if gold_tools else []
    if undescribed and not allow_known_tools:
        check_gold_tools(undescribed)
    tools = merge_tools(bundle.tools)
    name = benchmark_name or suite_module.default_benchmark
    if on_phase is not None:
        on_phase("storing")

    with transaction.atomic():
        benchmark, created = Benchmark.objects.select_for_update().get_or_create(
            name=name, defaults={"suite": suite, "is_demo": is_demo}
        )
        if not created and benchmark.suite != suite:
            raise ImportFormatError(
                f"benchmark {name!r} holds {benchmark.suite!r} data; import {suite!r} files "
                f"under another name (--benchmark)"
            )
        if undescribed:
            # Under the benchmark's lock, so the tools looked up are the ones imported before.
            wanted = {tool for _, _, tool in undescribed}
            known = set(benchmark.tools.filter(name__in=wanted).values_list("name", flat=True))
            check_gold_tools(undescribed, known=known, known_where=f"benchmark {name!r}")
        if is_demo and not benchmark.is_demo:
            benchmark.is_demo = True
            benchmark.save(update_fields=["is_demo", "updated_at"])
        tools_written = _upsert_tools(benchmark.pk, tools)
        samples_written, refined_kept = _upsert_samples(benchmark.pk, bundle.samples)
        stats_after_bulk_write(
            {Tool._meta.db_table: tools_written, Sample._meta.db_table: samples_written}
        )
        if tools_written or samples_written:
            benchmark.save(update_fields=["updated_at"])

    return ImportSummary(
        benchmark=benchmark.name,
        tools=selectors.tool_count(benchmark=benchmark),
        samples=selectors.sample_counts_by_split(benchmark=benchmark),
        tools_written=tools_written,
        samples_written=samples_written,
        unchanged=len(bundle.samples) - samples_written - refined_kept,
        refined_kept=refined_kept,
    )


# One encoder for every value: json.dumps with options builds a new encoder per call, which was
# the largest single cost of importing 20,000 rows. JSONEncoder.encode still builds the C
# encoder (and a closure) on every call, half of the time of encoding a query: the C encoder is
# made once here, with the same options, so the text is the same. Without the check for
# circular references: what is stored comes from parsed files, trees that hold no cycle (one
# would raise RecursionError instead of ValueError, and the import would fail all the same).
_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_make_c_encoder = getattr(json.encoder, "c_make_encoder", None)
_encode: Callable[[Any, int], Sequence[str]] = (
    _make_c_encoder(
        None,  # no markers: no check for cycles
        _encoder.default,
        json.encoder.encode_basestring,  # ensure_ascii=False's escaping
        None,  # indent
        ":",
        ",",
        False,  # sort_keys
        False,  # skipkeys
        True,  # allow_nan
    )
    if _make_c_encoder is not None
    else lambda value, _level: (_encoder.encode(value),)  # a Python without the accelerator
)


def dumps_json(value: Any) -> str | None:
    if value is None:
        return None
    if not value and type(value) in (list, dict):
        return "[]" if type(value) is list else "{}"  # most rows' candidate_tools and metadata
    return "".join(_encode(value, 0))


# How json's encoder writes NUL; jsonb refuses the escape as text refuses the character.
_JSON_NUL = "\\u0000"


def _refuse_unstorable(record: SampleRecord | ToolRecord, fields: Sequence[str]) -> None:
    """Raise ImportFormatError naming the record's place and the stored field of the first
    value PostgreSQL cannot store (NUL, a lone surrogate), if there is one."""
    for name in fields:
        found = find_unstorable(getattr(record, name), name)
        if found:
            raise ImportFormatError(found[1], file=record.source or None, field=found[0])


def _nul_in(texts: Sequence[str | None]) -> bool:
    """Whether a row's text holds NUL, as text or as json's escape: the server would refuse it
    only at the end of the COPY, naming no record. (The escape may be a backslash written
    before "u0000", which is storable: _refuse_unstorable walks the record to see.)"""
    return any(text and ("\x00" in text or _JSON_NUL in text) for text in texts)


# Rows go in through COPY into a temporary table, then one INSERT ... ON CONFLICT moves them.
# COPY is PostgreSQL's fastest way in, and the conflict clause's IS DISTINCT FROM makes a
# re-import of the same files a no-op (no dead tuples, no updated_at churn).


TOOL_FIELDS = ("name", "description", "parameters", "returns", "category", "raw")


def _upsert_tools(benchmark_id: int, tools: Sequence[ToolRecord]) -> int:
    if not tools:
        return 0
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TEMP TABLE import_tool (name text, description text, parameters jsonb, "
            "returns jsonb, category text, raw jsonb)"
        )
        with cursor.cursor.copy("COPY import_tool FROM STDIN") as copy:
            for tool in tools:
                row = (
                    tool.name,
                    tool.description,
                    dumps_json(tool.parameters),
                    dumps_json(tool.returns),
                    tool.category,
                    dumps_json(tool.raw),
                )
                # The last check before PostgreSQL (see _copy_samples).
                if _nul_in(row):
                    _refuse_unstorable(tool, TOOL_FIELDS)
                try:
                    copy.write_row(row)
                except UnicodeEncodeError:
                    _refuse_unstorable(tool, TOOL_FIELDS)
                    raise
        cursor.execute(
            """
            INSERT INTO benchmarks_tool
                (benchmark_id, name, description, parameters, returns, category, raw,
                 created_at, updated_at)
            SELECT %s, name, description, parameters, returns, category, raw, now(), now()
            FROM import_tool
            ON CONFLICT (benchmark_id, name) DO UPDATE SET
                description = EXCLUDED.description, parameters = EXCLUDED.parameters,
                returns = EXCLUDED.returns, category = EXCLUDED.category, raw = EXCLUDED.raw,
                updated_at = now()
            WHERE (benchmarks_tool.description, benchmarks_tool.parameters,
                   benchmarks_tool.returns, benchmarks_tool.category, benchmarks_tool.raw)
                IS DISTINCT FROM
                  (EXCLUDED.description, EXCLUDED.parameters, EXCLUDED.returns,
                   EXCLUDED.category, EXCLUDED.raw)
            """,
            [benchmark_id],
        )
        written: int = cursor.rowcount
        cursor.execute("DROP TABLE import_tool")
    return written


SAMPLE_COLUMNS = Sample.CONTENT_FIELDS


def _copy_field(value: str) -> str:
    """`value` as a field of COPY's text format: backslash, tab, newline and carriage return
    escaped (what PostgreSQL asks of a field; every other character stands for itself)."""
    if "\\" in value or "\t" in value or "\n" in value or "\r" in value:
        return (
            value.replace("\\", "\\\\")
            .replace("\t", "\\t")
            .replace("\n", "\\n")
            .replace("\r", "\\r")
        )
    return value


def _copy_constant(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, int):
        return str(value)
    raise TypeError(f"no COPY text for a constant of type {type(value).__name__}")


# Rows per write to the COPY: big enough that the calls cost nothing, small enough to stream.
_COPY_BATCH = 2000


def _copy_samples(
    cursor: Any,
    table: str,
    samples: Sequence[SampleRecord],
    constants: dict[str, Any] | None = None,
) -> None:
    """COPY the samples into `table`; `constants` are columns with one value for every row.

    The rows are written as COPY's text format here, a batch of lines per write: psycopg's
    write_row formats each value of each row through its dumpers, three times this loop's
    cost, on the hot path of the largest imports."""
    constants = constants or {}
    columns = ", ".join([*SAMPLE_COLUMNS, *constants])
    tail = "".join("\t" + _copy_field(_copy_constant(value)) for value in constants.values())
    tail += "\n"
    # Every value dumped here but the reference is present, so its JSON is text.
    dumps = cast(Callable[[Any], str], dumps_json)
    field = _copy_field
    nul = _JSON_NUL
    lines: list[bytes] = []
    with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
        for sample in samples:
            split, external_id = sample.split, sample.external_id
            data = dumps(sample.input)
            reference = dumps(sample.reference)
            candidates = dumps(sample.candidate_tools)
            metadata = dumps(sample.metadata)
            # The last check before PostgreSQL: the readers refuse what it cannot store naming
            # file, line and field; this catches what a suite built after them (a name from a
            # file name, a character an escape made), naming the record and the stored field.
            # NUL is looked for (kind is one of ours, see validate_bundle); a lone surrogate is
            # what UTF-8 cannot encode, so the encoding's error is the check, free for other
            # rows. Inline and without a call: this loop is the hot path of the largest imports.
            if (
                "\x00" in split
                or "\x00" in external_id
                or nul in data
                or nul in candidates
                or nul in metadata
                or (reference is not None and nul in reference)
            ):
                _refuse_unstorable(sample, SAMPLE_COLUMNS)
            line = "\t".join(
                (
                    field(split),
                    field(external_id),
                    sample.kind,
                    field(data),
                    "\\N" if reference is None else field(reference),
                    field(candidates),
                    field(metadata),
                )
            )
            try:
                lines.append((line + tail).encode())
            except UnicodeEncodeError:
                _refuse_unstorable(sample, SAMPLE_COLUMNS)
                raise
            if len(lines) == _COPY_BATCH:
                copy.write(b"".join(lines))
                lines.clear()
        if lines:
            copy.write(b"".join(lines))


def _upsert_samples(benchmark_id: int, samples: Sequence[SampleRecord]) -> tuple[int, int]:
    """Returns (rows written, refined samples left as they were)."""
    if not samples:
        return 0, 0
    splits = sorted({sample.split for sample in samples})
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT EXISTS (SELECT 1 FROM benchmarks_sample WHERE benchmark_id = %s "
            "AND split = ANY(%s))",
            [benchmark_id, splits],
        )
        if not cursor.fetchone()[0]:
            # The first import of these splits: the caller holds the benchmark's row lock and
            # validate_bundle refused duplicate ids, so no row can conflict and the rows go
            # straight into the table, as fast as a plain COPY.
            now = timezone.now()
            _copy_samples(
                cursor,
                "benchmarks_sample",
                samples,
                {"benchmark_id": benchmark_id, "revision": 0, "created_at": now, "updated_at": now},
            )
            return len(samples), 0
        cursor.execute(
            "CREATE TEMP TABLE import_sample (split text, external_id text, kind text, "
            "input jsonb, reference jsonb, candidate_tools jsonb, metadata jsonb)"
        )
        _copy_samples(cursor, "import_sample", samples)
        cursor.execute(
            """
            SELECT count(*) FROM import_sample i
            JOIN benchmarks_sample s ON s.benchmark_id = %s AND s.split = i.split
                AND s.external_id = i.external_id
            WHERE s.revision > 0
            """,
            [benchmark_id],
        )
        refined_kept = cursor.fetchone()[0]
        cursor.execute(
            """
            INSERT INTO benchmarks_sample
                (benchmark_id, split, external_id, kind, input, reference, candidate_tools,
                 metadata, revision, created_at, updated_at)
            SELECT %s, split, external_id, kind, input, reference, candidate_tools, metadata,
                   0, now(), now()
            FROM import_sample
            ON CONFLICT (benchmark_id, split, external_id) DO UPDATE SET
                kind = EXCLUDED.kind, input = EXCLUDED.input, reference = EXCLUDED.reference,
                candidate_tools = EXCLUDED.candidate_tools, metadata = EXCLUDED.metadata,
                updated_at = now()
            WHERE benchmarks_sample.revision = 0
              AND (benchmarks_sample.kind, benchmarks_sample.input, benchmarks_sample.reference,
                   benchmarks_sample.candidate_tools, benchmarks_sample.metadata)
                  IS DISTINCT FROM
                  (EXCLUDED.kind, EXCLUDED.input, EXCLUDED.reference, EXCLUDED.candidate_tools,
                   EXCLUDED.metadata)
            """,
            [benchmark_id],
        )
        written: int = cursor.rowcount
        cursor.execute("DROP TABLE import_sample")
    return written, refined_kept


def samples_annotate(*, values: dict[int, dict[str, Any]]) -> int:
    """Merge keys into samples' metadata ({sample id: {key: value}}), e.g. the solvability
    judges' verdict. The sample's content and revision are untouched. Returns rows changed."""
    if not values:
        return 0
    changed = 0
    with transaction.atomic():
        for sample in Sample.objects.select_for_update().filter(pk__in=list(values)):
            merged = {**sample.metadata, **values[sample.pk]}
            if merged != sample.metadata:
                sample.metadata = merged
                sample.save(update_fields=["metadata", "updated_at"])
                changed += 1
    return changed


class RevisionConflict(ApplicationError):
    """The sample changed since the refinement began."""


def sample_revise(
    *,
    sample_id: int,
    base_revision: int,
    input: dict[str, Any],
    reference: Any,
    author: Any = None,
    note: str = "",
    reviewer: Any = None,
    verdict: str = "",
) -> Any:
    """A refined sample becomes its new revision; the history is kept (revision 0, the sample
    as imported, is recorded the first time). `reviewer` and `verdict` say how the change was
    settled (an export's provenance reads them). Raises RevisionConflict when the sample is no
    longer at `base_revision` (another refinement landed first). Returns the new revision."""
    with transaction.atomic():
        sample = Sample.objects.select_for_update().get(pk=sample_id)
        if sample.revision != base_revision:
            raise RevisionConflict(
                f"sample {sample.external_id} is at revision {sample.revision} now, not "
                f"{base_revision}: refine it again from the current version"
            )
        if not sample.revisions.exists():
            SampleRevision.objects.create(
                sample=sample,
                number=0,
                input=sample.input,
                reference=sample.reference,
                candidate_tools=sample.candidate_tools,
                note="as imported",
            )
        revision = SampleRevision.objects.create(
            sample=sample,
            number=sample.revision + 1,
            input=input,
            reference=reference,
            candidate_tools=sample.candidate_tools,
            author=author if getattr(author, "is_authenticated", False) else None,
            note=note,
            reviewer=reviewer if getattr(reviewer, "is_authenticated", False) else None,
            verdict=verdict,
        )
        sample.input, sample.reference, sample.revision = input, reference, revision.number
        sample.save(update_fields=["input", "reference", "revision", "updated_at"])
    return revision
