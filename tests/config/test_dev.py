"""`./dev CMD`: a command gets the development environment a fresh clone's shell lacks.

Each case runs ./dev in a subprocess with a controlled environment: a shell's basics, no DEBUG,
no SECRET_KEY, and PATH without the venv (as a new user's shell has it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOW_ENV = (
    "import json, os, sys; print(json.dumps({'python': sys.executable, **{k: os.environ.get(k) "
    "for k in ('DEBUG', 'SECRET_KEY', 'DATABASE_URL', 'REDIS_URL', 'VIRTUAL_ENV')}}))"
)


def _shell_env(**extra: str) -> dict[str, str]:
    venv_bin = str(ROOT / ".venv" / "bin")
    path = os.pathsep.join(
        p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p != venv_bin
    )
    base = {k: os.environ[k] for k in ("HOME", "LANG") if k in os.environ}
    return {**base, "PATH": path, **extra}


def _dev(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ROOT / "dev"), *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def _urls() -> dict[str, str]:
    return {k: os.environ[k] for k in ("DATABASE_URL", "REDIS_URL")}


def test_a_command_gets_the_venv_debug_and_the_development_key() -> None:
    done = _dev("python", "-c", SHOW_ENV, env=_shell_env(**_urls()))
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["python"] == str(ROOT / ".venv" / "bin" / "python")
    assert seen["VIRTUAL_ENV"] == str(ROOT / ".venv")
    assert seen["DEBUG"] == "1"
    assert seen["SECRET_KEY"] == "dev-insecure-key-never-use-in-production"
    # URLs that are set are the ones used: no embedded server is started
    assert {k: seen[k] for k in ("DATABASE_URL", "REDIS_URL")} == _urls()
    assert done.stderr == ""


def test_manage_py_fails_in_a_new_shell_and_works_through_dev() -> None:
    # given a new user's shell (the README's commands used to fail here)
    env = _shell_env(**_urls())
    bare = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "python"), "manage.py", "check"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert bare.returncode != 0
    assert "SECRET_KEY is not set" in bare.stderr
    # when the same command runs through ./dev, then it works
    done = _dev("python", "manage.py", "check", env=env)
    assert done.returncode == 0, done.stderr
    assert "System check identified no issues" in done.stdout


def test_a_production_like_environment_is_left_as_it_is() -> None:
    env = _shell_env(**_urls(), DEBUG="0", SECRET_KEY="k" * 60)
    seen = json.loads(_dev("python", "-c", SHOW_ENV, env=env).stdout)
    assert seen["DEBUG"] == "0"
    assert seen["SECRET_KEY"] == "k" * 60


def test_without_a_command_it_says_how_to_use_it() -> None:
    done = _dev(env=_shell_env(**_urls()))
    assert done.returncode == 2
    assert "usage: ./dev CMD" in done.stderr


def test_exit_status_is_the_commands() -> None:
    done = _dev("python", "-c", "raise SystemExit(7)", env=_shell_env(**_urls()))
    assert done.returncode == 7


@pytest.fixture
def data_dir() -> Iterator[Path]:
    # Under /tmp, not tmp_path: the unprivileged postgres user must traverse its parents.
    path = Path(tempfile.mkdtemp(prefix="dev-test-"))
    yield path
    subprocess.run(
        [sys.executable, "-m", "config.devstack", "down"],
        env={**_shell_env(), "DEVSTACK_DATA_DIR": str(path)},
        cwd=ROOT,
        capture_output=True,
        check=False,
        timeout=60,
    )
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.slow
def test_without_urls_it_starts_the_embedded_stack_once_and_leaves_it_running(
    data_dir: Path,
) -> None:
    env = _shell_env(DEVSTACK_DATA_DIR=str(data_dir))
    # when a first command runs, the embedded servers are started, said so, and kept
    first = _dev("python", "-c", SHOW_ENV, env=env)
    assert first.returncode == 0, first.stderr
    assert "dev: started the embedded postgres and redis" in first.stderr
    urls = json.loads(first.stdout)
    assert urls["DATABASE_URL"].startswith("postgres://postgres@127.0.0.1:")
    assert urls["REDIS_URL"].startswith("redis://127.0.0.1:")
    # then the next command finds them, silently, at the same URLs
    second = _dev("python", "-c", SHOW_ENV, env=env)
    assert second.returncode == 0, second.stderr
    assert second.stderr == ""
    assert json.loads(second.stdout) == urls
    status = subprocess.run(
        [sys.executable, "-m", "config.devstack", "status"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert "postgres: running" in status and "redis: running" in status
