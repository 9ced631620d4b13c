"""The documentation's commands work as written: every fenced ```sh block of README.md and of
every docs/**/*.md page is run, page by page in the order of pages() (the README first, then the
site's navigation; a page not in mkdocs.yml's nav fails the test), each page's blocks in the
order of the page, against one throwaway database.

How a block is run is said by an HTML comment on the line just above its fence (invisible on the
rendered page):

    <!-- readme-test: skip: REASON -->      not run: long-running (make run, make test, servers,
                                            perf scripts, --wait on a model) or needs a server
    <!-- readme-test: template: REASON -->  not run: a synopsis with placeholders (NAME, ID, <x>)
    <!-- readme-test: production -->        run in a deployment's environment (below)
    (no comment)                            run in a new user's shell (below)

A block without a comment is run by `bash -euo pipefail` from the checkout's root, in the
environment of a new user's shell: no DEBUG, no SECRET_KEY, and PATH without the venv, so a
command that works only in a prepared shell fails here as it would for them; commands go through
`./dev` (which brings the development environment). Only the database and the broker are the
test's: DATABASE_URL names a database made for this test (dropped at the end), REDIS_URL the test
broker's Redis database (flushed), so nothing touches the checkout's .data/ stack or a running
`make run`. The blocks share that database in order, as a reader's session would: the Quick
start's seeds come first and later blocks use the demo objects by name.

A `production` block gets a deployment's environment instead: DEBUG unset, a long random
SECRET_KEY and FIELD_ENCRYPTION_KEY, ALLOWED_HOSTS and CSRF_TRUSTED_ORIGINS set, STATIC_ROOT in a
temporary folder, and the venv's bin first on PATH (its virtualenv active), so `pip` and
`python` are the deployment's.

Commands that read a benchmark's published files name their folder by a variable (METATOOL,
MTU_BENCH, STABLETOOLBENCH; each page says where to get the files upstream). The test sets each
to the shared seed data beside the checkout (`../shared/seeddata/<suite>`) where it exists, and
otherwise (or with DOCS_TEST_DEMO_FILES=1) to the project's own demo files in the same layout
(`benchmarks/demo/<suite>`), so the same command runs on either.

So a command added to the docs must either run as written from a fresh clone (through `./dev`,
naming demo objects or files that exist, not placeholders) and exit 0, or carry one of the
comments with its reason. Files a block writes into the checkout (say, `--csv summary.csv`) are
removed afterwards; only those a block names, so that nothing else written meanwhile is lost.
"""

from __future__ import annotations

import base64
import json
import os
import re
import secrets
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
import redis
from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
SEEDDATA = ROOT.parent / "shared" / "seeddata"
# The variables naming a benchmark's published files: (seed data folder, demo folder).
UPSTREAM = {
    "METATOOL": ("metatool", "metatool"),
    "MTU_BENCH": ("mtubench", "mtubench"),
    "STABLETOOLBENCH": ("stabletoolbench", "stabletoolbench"),
}


def pages() -> list[Path]:
    """README.md, then the docs pages in the order of mkdocs.yml's nav."""
    nav = re.findall(
        r"^\s*- (?:[^:\n]+: )?(\S+\.md)\s*$", (ROOT / "mkdocs.yml").read_text("utf-8"), re.M
    )
    return [README, *(DOCS / name for name in nav)]


def upstream_folders() -> dict[str, str]:
    """The seed data's folders where they exist, else the demo's; DOCS_TEST_DEMO_FILES=1 takes
    the demo's even beside the seed data (how a user's clone runs the commands)."""
    demo_only = os.environ.get("DOCS_TEST_DEMO_FILES") == "1"
    folders = {}
    for variable, (seed, demo) in UPSTREAM.items():
        shared = SEEDDATA / seed
        use_shared = shared.is_dir() and not demo_only
        folders[variable] = str(shared if use_shared else ROOT / "benchmarks" / "demo" / demo)
    return folders


MARKER = re.compile(r"^<!-- readme-test: (skip|template|production)(?:: (.+?))? -->$")
RUN_TIMEOUT = 300


@dataclass(frozen=True)
class Block:
    line: int  # of the opening fence, 1-based
    code: str
    mode: str  # "run", "skip", "template" or "production"
    reason: str


def readme_blocks(text: str) -> list[Block]:
    """The ```sh blocks of a Markdown text, each with the marker on the line above its fence."""
    lines = text.splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```sh":
            start = i
            i += 1
            body = []
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            if i == len(lines):
                raise AssertionError(f"line {start + 1}: the ```sh block never closes")
            above = lines[start - 1].strip() if start else ""
            marker = MARKER.match(above)
            mode, reason = (marker[1], marker[2] or "") if marker else ("run", "")
            blocks.append(Block(start + 1, "\n".join(body) + "\n", mode, reason))
        i += 1
    return blocks


def test_readme_blocks_are_read_with_their_markers() -> None:
    text = (
        "intro\n```sh\necho one\n```\n"
        "<!-- readme-test: skip: a server -->\n```sh\nmake run\n```\n"
        "<!-- readme-test: production -->\n```sh\npip install -r requirements.txt\n```\n"
        "```python\nnot shell\n```\n"
    )
    assert readme_blocks(text) == [
        Block(2, "echo one\n", "run", ""),
        Block(6, "make run\n", "skip", "a server"),
        Block(10, "pip install -r requirements.txt\n", "production", ""),
    ]


def test_every_page_is_in_the_nav() -> None:
    listed = {p.resolve() for p in pages()}
    on_disk = {p.resolve() for p in DOCS.rglob("*.md")}
    assert on_disk <= listed, f"pages missing from mkdocs.yml's nav: {sorted(on_disk - listed)}"
    assert all(p.is_file() for p in listed)


def test_every_block_is_run_or_says_why_not() -> None:
    run = 0
    for page in pages():
        name = page.relative_to(ROOT)
        blocks = readme_blocks(page.read_text("utf-8"))
        run += len([b for b in blocks if b.mode == "run"])
        for block in blocks:
            if block.mode in {"skip", "template"}:
                assert block.reason, f"{name} line {block.line}: a {block.mode} needs its reason"
        # A marker must sit right above a fence, or it marks nothing.
        lines = page.read_text("utf-8").splitlines()
        for number, line in enumerate(lines, 1):
            if line.startswith("<!-- readme-test"):
                assert MARKER.match(line), f"{name} line {number}: unreadable marker {line!r}"
                assert lines[number].strip() == "```sh", f"{name} line {number}: no block below"
    assert run >= 15


def test_no_command_reads_files_outside_the_checkout() -> None:
    for page in pages():
        for block in readme_blocks(page.read_text("utf-8")):
            assert "../" not in block.code, (
                f"{page.relative_to(ROOT)} line {block.line}: {block.code}"
            )


def _names(code: str) -> Iterator[tuple[str, str]]:
    """(command, benchmark name) for each manage.py command of a block that names a benchmark."""
    for line in code.replace("\\\n", " ").splitlines():
        command = re.search(r"manage\.py (\w+)", line)
        if not command:
            continue
        name = re.search(r"--benchmark (?:\"([^\"]+)\"|(\S+))", line)
        if command[1] == "export_benchmark":
            name = re.search(r"export_benchmark (?:\"([^\"]+)\"|(\S+))", line)
        if name:
            yield command[1], name[1] or name[2]


def test_every_benchmark_a_command_names_exists_by_then() -> None:
    """A command names a benchmark that seed_demo creates (a demo manifest's) or that an import
    of an earlier block creates; an import may create a new one."""
    known = {
        json.loads(m.read_text("utf-8"))["benchmark"]
        for m in (ROOT / "benchmarks" / "demo").glob("*/manifest.json")
    }
    for page in pages():
        for block in readme_blocks(page.read_text("utf-8")):
            if block.mode not in {"run", "production"}:
                continue
            for command, name in _names(block.code):
                if command == "import_benchmark":
                    known.add(name)
                else:
                    where = f"{page.relative_to(ROOT)} line {block.line}"
                    assert name in known, (
                        f"{where}: {command} names {name!r}, which no seed creates"
                    )


@pytest.fixture
def throwaway_database() -> Iterator[str]:
    db = settings.DATABASES["default"]
    name = f"toolevals_readme_{uuid.uuid4().hex[:8]}"
    server = {
        "host": db["HOST"],
        "port": db["PORT"],
        "user": db["USER"],
        "password": db["PASSWORD"] or None,
        "dbname": "postgres",
        "autocommit": True,
    }
    with psycopg.connect(**server) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    try:
        yield f"postgres://{auth}@{db['HOST']}:{db['PORT']}/{name}"
    finally:
        with psycopg.connect(**server) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _untracked() -> set[str]:
    done = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return set(done.stdout.splitlines())


def _shell_path(with_venv: bool) -> str:
    venv_bin = str(ROOT / ".venv" / "bin")
    parts = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p != venv_bin]
    return os.pathsep.join([venv_bin, *parts] if with_venv else parts)


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_the_documented_commands_run_as_written(throwaway_database: str, tmp_path: Path) -> None:
    blocks = [
        (page.relative_to(ROOT), b)
        for page in pages()
        for b in readme_blocks(page.read_text("utf-8"))
        if b.mode in {"run", "production"}
    ]
    broker = settings.CELERY_BROKER_URL  # the test broker's own Redis database
    base = {k: os.environ[k] for k in ("HOME", "LANG", "TZ", "TMPDIR") if k in os.environ}
    base.update(DATABASE_URL=throwaway_database, REDIS_URL=broker, **upstream_folders())
    new_user = {**base, "PATH": _shell_path(with_venv=False)}
    deployment = {
        **base,
        "PATH": _shell_path(with_venv=True),
        "VIRTUAL_ENV": str(ROOT / ".venv"),
        "SECRET_KEY": secrets.token_urlsafe(60),
        "FIELD_ENCRYPTION_KEY": base64.urlsafe_b64encode(os.urandom(32)).decode(),
        "ALLOWED_HOSTS": "evals.example.org",
        "CSRF_TRUSTED_ORIGINS": "https://evals.example.org",
        "STATIC_ROOT": str(tmp_path / "static"),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    before = _untracked()
    try:
        for name, block in blocks:
            done = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", block.code],
                cwd=ROOT,
                env=deployment if block.mode == "production" else new_user,
                capture_output=True,
                text=True,
                check=False,
                timeout=RUN_TIMEOUT,
            )
            assert done.returncode == 0, (
                f"{name} line {block.line} ({block.mode}) exited {done.returncode}:\n"
                f"{block.code}\n--- stdout\n{done.stdout[-3000:]}\n"
                f"--- stderr\n{done.stderr[-3000:]}"
            )
    finally:
        # Only what a block names: a file someone else writes into the checkout meanwhile (a
        # test being written while this one runs) stays.
        written = " ".join(block.code for _name, block in blocks)
        for name in _untracked() - before:
            path = Path(name)
            if path.name in written or path.parts[0] in written:
                (ROOT / name).unlink(missing_ok=True)
        redis.from_url(broker).flushdb()
