"""Benchmark imports started from the browser: the uploaded files are kept in a job row's folder,
a Celery task imports them with the same service as the CLI (services.benchmark_import), and the
job row says how far it got, so that its page can poll it and survive reloads.

The import itself is all or nothing (one transaction): a worker killed in the middle leaves no
half import. The job is a computed result with no fingerprint (every upload is a request of its
own), always a worker's, under config.computed's lifecycle and config.background's one rule
(IMPORT_JOBS): the worker holds it under a lease it renews while it reads and stores; when the
worker is lost, the sweep queues it again (it runs again from the start), and fails it, its
files removed, once its workers were lost MAX_ATTEMPTS times. A job whose message the broker
lost is sent again.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from benchmarks.kit.base import ImportFormatError, unstorable
from benchmarks.kit.registry import get_suite, suite_names
from benchmarks.models import Benchmark, ImportJob
from benchmarks.services import benchmark_import
from config.computed import Computed, Computing, Failure
from config.errors import ApplicationError

TASK = "benchmarks.tasks.import_job_run"
# A job whose worker was lost this many times is failed rather than tried again.
MAX_ATTEMPTS = 3
MAX_NAME_CHARS = 120
MAX_BENCHMARK_NAME_CHARS = 100
# How often the task writes the rows it has read (a file of 20,000 rows reads in a second).
PROGRESS_EVERY_SECONDS = 0.25


class UploadError(ApplicationError):
    """An upload the import page refuses: no files, too large, a name that cannot be kept."""

    code = "upload"


class UploadedFile(Protocol):
    """What the page hands over (Django's UploadedFile has it)."""

    @property
    def name(self) -> str | None: ...

    @property
    def size(self) -> int | None: ...

    def chunks(self, chunk_size: int | None = None) -> Iterable[bytes]: ...


# Letters and digits of any script, and the punctuation published file names use
# ("artists&designers.json", "588_CoT@1.json", "Finance Staff.json").
_UNSAFE = re.compile(r"[^\w.@&+,()\- ]")


def upload_name(name: str) -> str:
    """The name an uploaded file is stored under: its last path part (browsers may send a
    folder's path, with either slash), every character but letters, digits, space and
    . _ - @ & + , ( ) as "_", without leading dots or spaces, at most MAX_NAME_CHARS characters
    (the extension kept, since suites read files by their names). "" when nothing is left."""
    base = re.split(r"[\\/]", name)[-1]
    cleaned = _UNSAFE.sub("_", base).strip(" ").lstrip(".").strip(" ")
    if len(cleaned) > MAX_NAME_CHARS:
        stem, dot, ext = cleaned.rpartition(".")
        if not dot or len(ext) > 20:
            stem, ext = cleaned, ""
        cleaned = stem[: MAX_NAME_CHARS - len(ext) - (1 if ext else 0)] + (f".{ext}" if ext else "")
    return cleaned if cleaned.strip("._ ") else ""


def size_text(size: int) -> str:
    """Bytes as a person reads them: "950 bytes", "1.4 MB" (1 MB = 1,048,576 bytes)."""
    if size < 1024:
        return f"{size} bytes"
    for unit in ("KB", "MB", "GB"):
        size_f = size / 1024
        if size_f < 1024 or unit == "GB":
            return f"{size_f:.1f} {unit}"
        size = int(size_f)
    return f"{size} bytes"  # pragma: no cover


def upload_root() -> Path:
    return Path(settings.BENCHMARK_UPLOAD_DIR)


def _too_large(total: int) -> UploadError:
    limit = settings.BENCHMARK_UPLOAD_MAX_BYTES
    return UploadError(
        f"the files are {size_text(total)} together; uploads are limited to {size_text(limit)} "
        "(BENCHMARK_UPLOAD_MAX_BYTES). Import larger files with the CLI: "
        "python manage.py import_benchmark",
        field="files",
        status=413,
    )


def upload_check_size(content_length: int) -> None:
    """Refuse a request body larger than the limit before it is read (a little is allowed for
    the form's other fields and the multipart framing)."""
    if content_length > settings.BENCHMARK_UPLOAD_MAX_BYTES + 64 * 1024:
        raise _too_large(content_length)


def import_job_create(
    *,
    user: Any,
    suite: str,
    benchmark_name: str,
    files: Sequence[UploadedFile],
    allow_known_tools: bool = False,
) -> ImportJob:
    """Keep uploaded files in a new job's folder and queue their import (once the job row is
    committed). Raises UploadError (field: suite, benchmark_name or files) for an unknown suite,
    a name that cannot be stored, no files, two files that would be stored under one name, or
    files larger than settings.BENCHMARK_UPLOAD_MAX_BYTES together; nothing is kept then."""
    if suite not in suite_names():
        raise UploadError(f"choose a suite: one of {', '.join(suite_names())}", field="suite")
    name = (benchmark_name or "").strip() or get_suite(suite).default_benchmark
    if len(name) > MAX_BENCHMARK_NAME_CHARS:
        raise UploadError(
            f"the benchmark name is {len(name)} characters; at most {MAX_BENCHMARK_NAME_CHARS}",
            field="benchmark_name",
        )
    problem = unstorable(name)
    if problem:
        raise UploadError(f"the benchmark name {problem}", field="benchmark_name")
    if not files:
        raise UploadError("choose the benchmark's files (or drop them here)", field="files")
    total = sum(f.size or 0 for f in files)
    if total > settings.BENCHMARK_UPLOAD_MAX_BYTES:
        raise _too_large(total)
    stored: dict[str, str] = {}
    for upload in files:
        original = upload.name or ""
        kept = upload_name(original)
        if not kept:
            raise UploadError(f"the file name {original[:80]!r} has nothing to keep", field="files")
        if kept in stored:
            raise UploadError(
                f"two files would be stored as {kept!r} ({stored[kept]!r} and {original!r}): "
                "upload one of them",
                field="files",
            )
        stored[kept] = original

    folder_name = f"{timezone.now():%Y%m%d-%H%M%S}-{secrets.token_hex(6)}"
    folder = upload_root() / folder_name
    folder.mkdir(parents=True, exist_ok=False)
    try:
        written = 0
        records = []
        for upload, kept in zip(files, stored, strict=True):
            size = 0
            with open(folder / kept, "xb") as out:
                for chunk in upload.chunks():
                    size += len(chunk)
                    written += len(chunk)
                    if written > settings.BENCHMARK_UPLOAD_MAX_BYTES:
                        raise _too_large(written)  # a size the client under-reported
                    out.write(chunk)
            records.append({"name": kept, "size": size})
        with transaction.atomic():
            job = ImportJob.objects.create(
                created_by=user if getattr(user, "is_authenticated", False) else None,
                suite=suite,
                benchmark_name=name,
                allow_known_tools=allow_known_tools,
                folder=folder_name,
                files=records,
            )
            IMPORT_JOBS.enqueue(job.pk)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return job


def _located(exc: ImportFormatError, folder: Path) -> tuple[str, str]:
    """The error as the CLI shows it, with the job's folder left out of every path (the person
    uploaded "plugin_des.json", not a folder of the server's), and the file it names."""
    prefix = str(folder) + os.sep
    text = f"Nothing imported. {exc}".replace(prefix, "")
    file = (exc.file or "").replace(prefix, "")
    return text, file


def import_job_run(*, job_id: int) -> str:
    """Run a queued import job: read its files with its suite and store them, all or nothing
    (services.benchmark_import), writing phase and rows read as it goes. Idempotent: a job that
    ended, or that a live worker holds, is left as it is (IMPORT_JOBS.claim); a job whose
    worker was lost starts again from the start. The files are removed when the job ends.
    Returns the job's status ("gone" when there is no such job)."""
    job = IMPORT_JOBS.execute(job_id)
    return str(job.status) if job is not None else "gone"


def _import(job: ImportJob, computing: Computing) -> dict[str, Any]:
    folder = upload_root() / job.folder
    paths = [folder / record["name"] for record in job.files]
    read = 0

    def progress(n: int = 1) -> None:
        nonlocal read
        read += n
        computing.progress(read)

    def on_phase(phase: str) -> None:
        computing.note(phase=phase)

    missing = [path.name for path in paths if not path.is_file()]
    if missing:
        raise ImportFormatError(
            "the uploaded file is no longer on the server (BENCHMARK_UPLOAD_DIR); upload it again",
            file=missing[0],
        )
    summary = benchmark_import(
        suite=job.suite,
        paths=paths,
        benchmark_name=job.benchmark_name,
        progress=progress,
        allow_known_tools=job.allow_known_tools,
        on_phase=on_phase,
    )
    return {
        "phase": "done",
        "summary": {
            **summary.as_json(),
            "tools_written": summary.tools_written,
            "samples_written": summary.samples_written,
            "unchanged": summary.unchanged,
            "refined_kept": summary.refined_kept,
        },
        "benchmark": Benchmark.objects.filter(name=summary.benchmark).first(),
    }


def _failure(job: ImportJob, exc: Exception) -> Failure:
    if isinstance(exc, ImportFormatError):
        # The files' fault: said where, as the CLI says it.
        text, file = _located(exc, upload_root() / job.folder)
        located = {
            "error_file": file[:300],
            "error_line": exc.line,
            "error_field": (exc.field or "")[:200],
        }
        return Failure(text, located, expected=True)
    # Not the files' fault: a defect or the database. Said on the page, logged in full.
    return Failure(
        f"Nothing imported. The import stopped unexpectedly ({type(exc).__name__}); "
        "the server's log has the details."
    )


def _remove_files(job: ImportJob) -> None:
    if job.folder and "/" not in job.folder and job.folder not in (".", ".."):
        shutil.rmtree(upload_root() / job.folder, ignore_errors=True)


# Uploads no unfinished job needs are removed by the sweep: a finished job's folder that is
# still there (its worker died before removing it) at once; a folder that no job names (the
# upload broke off before its job was stored) once it is this old.
ORPHAN_SECONDS = 3600


def _remove_leftovers() -> dict[str, int]:
    root = upload_root()
    if not root.is_dir():
        return {}
    folders = {path.name: path for path in root.iterdir() if path.is_dir()}
    if not folders:
        return {}
    named = dict(ImportJob.objects.filter(folder__in=list(folders)).values_list("folder", "status"))
    removed = 0
    for name, path in folders.items():
        status = named.get(name)
        if status is None:
            try:
                if time.time() - path.stat().st_mtime < ORPHAN_SECONDS:
                    continue
            except OSError:
                continue
        elif status not in (ImportJob.Status.DONE, ImportJob.Status.FAILED):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed += 1
    return {"upload folders removed": removed}


IMPORT_JOBS: Computed[ImportJob] = Computed(
    name="import jobs",
    model=ImportJob,
    task=TASK,
    queue="default",
    waiting=ImportJob.Status.QUEUED,
    max_attempts=MAX_ATTEMPTS,
    lost=lambda attempts: (
        f"Nothing imported. The import was started {attempts} times and its worker was lost "
        "each time (out of memory or time?); import these files with the CLI."
    ),
    failed_fields=lambda: {"phase": "failed", "finished_at": timezone.now()},
    waiting_fields={"phase": "queued"},
    cleanup=_remove_files,
    sweep_extra=_remove_leftovers,
    done=ImportJob.Status.DONE,
    # Every upload is a request of its own: no fingerprint, and always a worker's.
    inputs=lambda job: job,
    compute=_import,
    failure=_failure,
    started=lambda job: {"phase": "reading", "rows_read": 0, "started_at": timezone.now()},
    ended=lambda: {"finished_at": timezone.now()},
    progress_fields=lambda done, total: {"rows_read": done},
    progress_every=PROGRESS_EVERY_SECONDS,
)
