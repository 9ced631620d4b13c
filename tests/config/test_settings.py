"""Settings refuse an unsafe production configuration; a correct one passes `check --deploy`.

With DEBUG off, a SECRET_KEY that is missing, public, short or guessable, and an encryption key
(FIELD_ENCRYPTION_KEY) that is missing, public, malformed or SECRET_KEY itself, stop the settings
from loading, so `check --deploy` (and every process) refuses them; settings made another way
meet the same rules as `check --deploy` errors (config.E001, config.E002).

Each case runs in a subprocess with a controlled environment (settings are read once per
process). DATABASE_URL and REDIS_URL are passed through so that no second stack is started."""

from __future__ import annotations

import base64
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PASSED = ("PATH", "HOME", "LANG", "DATABASE_URL", "REDIS_URL", "DEVSTACK_DATA_DIR")


def _run(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: os.environ[k] for k in PASSED if k in os.environ}
    return subprocess.run(
        [sys.executable, *args],
        env={**base, **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


IMPORT_SETTINGS = ["-c", "import config.settings"]
CHECK_DEPLOY = ["manage.py", "check", "--deploy"]
DEV_SECRET_KEY = "dev-insecure-key-never-use-in-production"


def fernet_key() -> str:
    return base64.urlsafe_b64encode(os.urandom(32)).decode()


def production(**env: str) -> dict[str, str]:
    """A production environment, with `env` over it."""
    return {
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(60),
        "FIELD_ENCRYPTION_KEY": fernet_key(),
        "ALLOWED_HOSTS": "toolevals.example.org",
        **env,
    }


def test_debug_off_without_secret_key_is_refused() -> None:
    done = _run(IMPORT_SETTINGS, DEBUG="0")
    assert done.returncode != 0
    assert "ImproperlyConfigured: SECRET_KEY is not set" in done.stderr


@pytest.mark.parametrize(
    "key", ["dev-insecure-key-never-use-in-production", "django-insecure-abc123"]
)
def test_debug_off_with_a_public_key_is_refused(key: str) -> None:
    done = _run(IMPORT_SETTINGS, DEBUG="0", SECRET_KEY=key)
    assert done.returncode != 0
    assert "SECRET_KEY is the public development key" in done.stderr


def test_debug_off_with_a_real_key_loads() -> None:
    done = _run(
        IMPORT_SETTINGS,
        DEBUG="0",
        SECRET_KEY=secrets.token_urlsafe(50),
        FIELD_ENCRYPTION_KEY=fernet_key(),
    )
    assert done.returncode == 0, done.stderr


def test_check_deploy_is_clean_for_a_production_configuration() -> None:
    done = _run([*CHECK_DEPLOY, "--fail-level", "WARNING"], **production())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues" in done.stdout


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("abc", "SECRET_KEY is short or guessable"),
        ("k" * 60, "SECRET_KEY is short or guessable"),  # long, one character
        ("abcd" * 20, "SECRET_KEY is short or guessable"),  # four different characters
        (secrets.token_urlsafe(60)[:49], "SECRET_KEY is short or guessable"),
        (DEV_SECRET_KEY, "SECRET_KEY is the public development key"),
        ("django-insecure-" + secrets.token_urlsafe(50), "SECRET_KEY is the public development"),
    ],
    # named, not by the random keys: the parallel processes collect the same tests
    ids=["short", "one-character", "four-characters", "49-characters", "dev-key", "insecure"],
)
def test_check_deploy_refuses_a_short_or_guessable_secret_key(key: str, why: str) -> None:
    done = _run(CHECK_DEPLOY, **production(SECRET_KEY=key))
    assert done.returncode != 0
    assert f"ImproperlyConfigured: {why}" in done.stderr
    assert key not in done.stderr  # a key is named, never printed


def test_check_deploy_refuses_a_missing_or_unusable_encryption_key() -> None:
    secret_key = secrets.token_urlsafe(60)
    cases = {
        "": "FIELD_ENCRYPTION_KEY is not set",
        "abc": "FIELD_ENCRYPTION_KEY is not URL-safe base64",
        base64.urlsafe_b64encode(b"x" * 16).decode(): "FIELD_ENCRYPTION_KEY is not a Fernet key",
        secret_key: "FIELD_ENCRYPTION_KEY is SECRET_KEY itself",
        f"{fernet_key()},abc": "FIELD_ENCRYPTION_KEY's key 2 is not URL-safe base64",
    }
    from config.secrets import DEV_FIELD_ENCRYPTION_KEY

    cases[DEV_FIELD_ENCRYPTION_KEY] = "FIELD_ENCRYPTION_KEY is the public development key"
    for key, why in cases.items():
        done = _run(CHECK_DEPLOY, **production(SECRET_KEY=secret_key, FIELD_ENCRYPTION_KEY=key))
        assert done.returncode != 0, key
        assert f"ImproperlyConfigured: {why}" in done.stderr, (key, done.stderr[-2000:])
    # two good keys (a rotation in progress) are taken
    rotating = f"{fernet_key()},{fernet_key()}"
    done = _run(CHECK_DEPLOY, **production(FIELD_ENCRYPTION_KEY=rotating))
    assert done.returncode == 0, done.stderr


def test_with_debug_on_neither_key_is_needed() -> None:
    done = _run(IMPORT_SETTINGS, DEBUG="1")
    assert done.returncode == 0, done.stderr


def test_settings_made_another_way_meet_the_same_rules_as_deploy_errors(tmp_path: Path) -> None:
    # given a settings module that loads the project's, then sets weak keys in code
    (tmp_path / "weak_settings.py").write_text(
        "from config.settings import *  # noqa\nSECRET_KEY = 'abc'\nFIELD_ENCRYPTION_KEYS = []\n"
    )
    env = production(
        DJANGO_SETTINGS_MODULE="weak_settings", PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}"
    )
    done = _run(CHECK_DEPLOY, **env)
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert "config.E001" in output and "SECRET_KEY is short or guessable" in output
    assert "config.E002" in output and "FIELD_ENCRYPTION_KEY is not set" in output
    # an Error, not a warning: `check` without --deploy does not ask, and passes
    assert _run(["manage.py", "check"], **env).returncode == 0
