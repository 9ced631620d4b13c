"""Imports from the browser: the page keeps the upload in a job row and a real Celery worker
imports it with the CLI's service, all or nothing; the job says how far it got and, for a bad
file, the error exactly as the CLI gives it. Uploads are untrusted: names are cleaned, sizes are
limited."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from benchmarks.import_jobs import UploadError, import_job_create, size_text, upload_name
from benchmarks.models import Benchmark, ImportJob, Sample, Tool
from tests.factories import make_researcher
from tests.workers import celery_beat, celery_worker, flush_test_broker
from tests.workers import test_database_url as database_url

SS_LINES = 104  # records of the seed data's MTU-Bench S-S file


# --- pure -------------------------------------------------------------------------------------


def test_upload_names_keep_the_published_name_and_nothing_that_could_escape_the_folder() -> None:
    assert upload_name("S-S_eval.jsonl") == "S-S_eval.jsonl"
    assert upload_name("artists&designers.json") == "artists&designers.json"
    assert upload_name("588_CoT@1.json") == "588_CoT@1.json"
    assert upload_name("Finance Staff.json") == "Finance Staff.json"
    assert upload_name("../../etc/passwd") == "passwd"
    assert upload_name("C:\\Users\\me\\plugin_des.json") == "plugin_des.json"
    assert upload_name(".bashrc") == "bashrc"
    assert upload_name("a\x00b;rm -rf $x.json") == "a_b_rm -rf _x.json"
    assert upload_name("..") == "" and upload_name("/") == "" and upload_name("") == ""
    long = "x" * 200 + ".jsonl"
    assert upload_name(long) == "x" * 114 + ".jsonl" and len(upload_name(long)) == 120


def test_sizes_read_as_people_read_them() -> None:
    assert size_text(950) == "950 bytes"
    assert size_text(1536) == "1.5 KB"
    assert size_text(100 << 20) == "100.0 MB"


# --- the page, no worker ------------------------------------------------------------------------


@pytest.fixture
def uploads(settings: Any, tmp_path: Path) -> Path:
    folder = tmp_path / "uploads"
    settings.BENCHMARK_UPLOAD_DIR = folder
    return folder


@pytest.mark.django_db
def test_an_upload_over_the_limit_is_refused_with_a_message_and_nothing_kept(
    client: Client, uploads: Path, settings: Any
) -> None:
    settings.BENCHMARK_UPLOAD_MAX_BYTES = 100
    client.force_login(make_researcher())
    big = SimpleUploadedFile("questions.jsonl", b'{"id": 1}\n' * 20)
    response = client.post(
        "/benchmarks/import/", {"suite": "generic", "benchmark_name": "Mine", "files": [big]}
    )
    assert response.status_code == 413
    html = response.content.decode()
    assert "uploads are limited to 100 bytes (BENCHMARK_UPLOAD_MAX_BYTES)" in html
    assert 'value="Mine"' in html  # what was typed is kept
    assert not ImportJob.objects.exists()
    assert not uploads.exists() or not any(uploads.iterdir())


@pytest.mark.django_db
def test_a_file_larger_than_it_said_is_refused_while_it_is_written(
    uploads: Path, settings: Any
) -> None:
    settings.BENCHMARK_UPLOAD_MAX_BYTES = 100

    class Lying:
        name = "questions.jsonl"
        size = 10

        def chunks(self, chunk_size: int | None = None) -> Iterator[bytes]:
            yield b"x" * 64
            yield b"x" * 64

    with pytest.raises(UploadError, match="limited to 100 bytes"):
        import_job_create(user=None, suite="generic", benchmark_name="", files=[Lying()])
    assert not ImportJob.objects.exists()
    assert not any(uploads.iterdir())


@pytest.mark.django_db
def test_refusals_name_the_field(client: Client, uploads: Path) -> None:
    client.force_login(make_researcher())
    response = client.post("/benchmarks/import/", {"suite": "generic"})
    assert response.status_code == 400
    assert "choose the benchmark&#x27;s files" in response.content.decode()
    response = client.post(
        "/benchmarks/import/",
        {"suite": "nope", "files": [SimpleUploadedFile("a.jsonl", b"{}")]},
    )
    assert response.status_code == 400 and "choose a suite" in response.content.decode()
    twins = [SimpleUploadedFile("a/q.jsonl", b"{}"), SimpleUploadedFile("b/q.jsonl", b"{}")]
    response = client.post("/benchmarks/import/", {"suite": "generic", "files": twins})
    assert (
        response.status_code == 400 and "two files would be stored as" in response.content.decode()
    )
    assert not ImportJob.objects.exists()


@pytest.mark.django_db
def test_an_annotator_cannot_start_an_import(client: Client, uploads: Path) -> None:
    from tests.factories import make_user

    client.force_login(make_user())
    files = [SimpleUploadedFile("q.jsonl", b"{}")]
    assert (
        client.post("/benchmarks/import/", {"suite": "generic", "files": files}).status_code == 403
    )
    assert not ImportJob.objects.exists()


# --- through a real worker ----------------------------------------------------------------------


def wait_for(
    job_id: int, *, until: tuple[str, ...] = ("done", "failed"), seconds: float = 90
) -> ImportJob:
    deadline = time.monotonic() + seconds
    while True:
        job = ImportJob.objects.get(pk=job_id)
        if job.status in until:
            return job
        if time.monotonic() > deadline:
            raise AssertionError(f"job {job_id} still {job.status}/{job.phase}")
        time.sleep(0.2)


def post_files(client: Client, paths: list[Path], **fields: str) -> int:
    with contextlib.ExitStack() as stack:
        files = [stack.enter_context(open(path, "rb")) for path in paths]
        response = client.post("/benchmarks/import/", {"files": files, **fields})
    assert response.status_code == 302, response.content.decode()[:2000]
    return int(response["Location"].rstrip("/").rsplit("/", 1)[1])


@pytest.fixture
def worker_uploads(uploads: Path, tmp_path: Path) -> Iterator[Path]:
    flush_test_broker()
    yield uploads


@pytest.mark.django_db(transaction=True)
def test_a_worker_imports_the_uploaded_seed_file_and_the_page_follows_it(
    client: Client, worker_uploads: Path, tmp_path: Path, seeddata: Path
) -> None:
    client.force_login(make_researcher())
    ss = seeddata / "mtubench" / "S-S_eval.jsonl"
    with celery_worker(tmp_path, queues="default", BENCHMARK_UPLOAD_DIR=str(worker_uploads)):
        job_id = post_files(client, [ss], suite="mtubench", benchmark_name="Uploaded MTU")
        page = client.get(f"/benchmarks/import/{job_id}/").content.decode()
        assert 'hx-trigger="every 1s"' in page  # polls until the job ends (unless it already did)
        job = wait_for(job_id)
    assert job.status == "done", job.error
    assert job.rows_read >= SS_LINES and job.attempts == 1
    benchmark = Benchmark.objects.get(name="Uploaded MTU")
    assert job.benchmark == benchmark and job.suite == "mtubench"
    assert Sample.objects.filter(benchmark=benchmark).count() == SS_LINES
    assert job.summary["samples"] == {"S-S": SS_LINES}
    assert job.files == [{"name": "S-S_eval.jsonl", "size": ss.stat().st_size}]
    assert not (worker_uploads / job.folder).exists()  # the upload is removed once imported
    # the progress partial, as htmx polls it: the summary and the benchmark's page, no polling
    part = client.get(
        f"/benchmarks/import/{job_id}/", {"part": "progress"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert part.lstrip().startswith('<section id="progress"') and "hx-trigger" not in part
    assert f'href="/benchmarks/{benchmark.pk}/"' in part and f"S-S {SS_LINES}" in part


@pytest.mark.django_db(transaction=True)
def test_a_broken_file_fails_with_the_clis_located_error_and_imports_nothing(
    client: Client, worker_uploads: Path, tmp_path: Path, seeddata: Path, monkeypatch: Any
) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    broken = folder / "S-S_eval.jsonl"
    lines = (seeddata / "mtubench" / "S-S_eval.jsonl").read_text(encoding="utf-8").splitlines()
    broken.write_text("\n".join([*lines[:2], '{"id": "S-S_x", "question": "q"}']) + "\n")
    # the CLI's message, given the file by its name as the page's user gave it
    monkeypatch.chdir(folder)
    with pytest.raises(CommandError) as cli:
        call_command("import_benchmark", "mtubench", "S-S_eval.jsonl", "--benchmark", "Broken")
    client.force_login(make_researcher())
    with celery_worker(tmp_path, queues="default", BENCHMARK_UPLOAD_DIR=str(worker_uploads)):
        job_id = post_files(client, [broken], suite="mtubench", benchmark_name="Broken")
        job = wait_for(job_id)
    assert job.status == "failed"
    assert job.error == str(cli.value)
    assert job.error == "Nothing imported. S-S_eval.jsonl, line 3, field 'answer': missing"
    assert (job.error_file, job.error_line, job.error_field) == ("S-S_eval.jsonl", 3, "answer")
    assert not Benchmark.objects.filter(name="Broken").exists()
    assert not Sample.objects.exists() and not Tool.objects.exists()
    html = client.get(f"/benchmarks/import/{job_id}/").content.decode()
    assert "line 3, field &#x27;answer&#x27;: missing" in html and 'role="alert"' in html


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found.extend(int(child) for child in text)
    return found


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_while_storing_leaves_nothing_and_the_import_is_redone_once(
    client: Client, worker_uploads: Path, tmp_path: Path, seeddata: Path
) -> None:
    """The samples table is locked by another session, so the import stops inside its one
    transaction (benchmark and tools written, samples not yet) until the process running it is
    killed. Its lease runs out and the sweep (beat sends it) queues it again; when the
    lock goes, the dead session's transaction is rolled back and the second attempt stores the
    file once: nothing of the first attempt was ever visible, nothing of it is left. (The task
    the broker delivers again at once finds the job under the dead process's live lease and
    leaves it.)"""
    client.force_login(make_researcher())
    ss = seeddata / "mtubench" / "S-S_eval.jsonl"
    blocker = psycopg.connect(database_url())
    blocker.execute("LOCK TABLE benchmarks_sample IN SHARE MODE")
    try:
        with (
            celery_beat(tmp_path),
            celery_worker(
                tmp_path, queues="default", concurrency=1, BENCHMARK_UPLOAD_DIR=str(worker_uploads)
            ) as worker,
        ):
            job_id = post_files(client, [ss], suite="mtubench", benchmark_name="Killed")
            deadline = time.monotonic() + 60
            while ImportJob.objects.get(pk=job_id).phase != "storing" or not _lock_waiters():
                assert time.monotonic() < deadline, "the import never reached the locked table"
                time.sleep(0.1)
            (child,) = _children(worker.proc.pid)
            os.kill(child, signal.SIGKILL)
            deadline = time.monotonic() + 60
            while ImportJob.objects.get(pk=job_id).attempts < 2:
                assert time.monotonic() < deadline, worker.text()[-3000:]
                time.sleep(0.1)
            assert not Benchmark.objects.filter(name="Killed").exists()
            assert not Tool.objects.exists()
            blocker.rollback()
            job = wait_for(job_id)
            assert "WorkerLostError" in worker.text()
    finally:
        blocker.close()
    assert job.status == "done", job.error
    assert job.attempts == 2
    assert Sample.objects.filter(benchmark__name="Killed").count() == SS_LINES
    assert Benchmark.objects.filter(name="Killed").count() == 1


def _lock_waiters() -> int:
    """Sessions waiting for a lock on the samples table."""
    with psycopg.connect(database_url(), autocommit=True) as other:
        row = other.execute(
            "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
            "WHERE c.relname = 'benchmarks_sample' AND NOT l.granted"
        ).fetchone()
    return int(row[0]) if row else 0
