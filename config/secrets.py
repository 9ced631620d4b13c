"""The platform's own secrets: what SECRET_KEY and FIELD_ENCRYPTION_KEY must be when DEBUG is off.

SECRET_KEY signs sessions and tokens; FIELD_ENCRYPTION_KEY encrypts what the platform stores
for others (endpoints' keys: evaluation.credentials), and is never SECRET_KEY itself, so that
one leaked secret does not open the other. With DEBUG on, `make run` and `make test` need
neither: both have public development values, which are refused with DEBUG off like any short
or guessable one.

The settings refuse to load with DEBUG off when either is wrong (a web process or a worker never
starts so), and `manage.py check --deploy` reports the same rules as errors for settings that
set them another way (`deploy_check`). No Django import at module level: the settings read it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Sequence
from typing import Any

# Public by being in this repository; accepted only while DEBUG is on.
INSECURE_DEV_SECRET_KEY = "dev-insecure-key-never-use-in-production"  # noqa: S105
DEV_FIELD_ENCRYPTION_KEY = base64.urlsafe_b64encode(
    hashlib.sha256(b"toolevals: the public development field encryption key").digest()
).decode("ascii")

# Django's own rule for a key too weak to sign with (its check security.W009).
SECRET_KEY_MIN_LENGTH = 50
SECRET_KEY_MIN_UNIQUE_CHARACTERS = 5
GENERATE = (
    "python -c 'import secrets; print(secrets.token_urlsafe(64))'",
    "python -c 'import base64, os; print(base64.urlsafe_b64encode(os.urandom(32)).decode())'",
)


def secret_key_problem(key: str) -> str:
    """Why `key` cannot sign for a deployment ("" when it can)."""
    if not key:
        return f"SECRET_KEY is not set. Set a long random one, e.g. from `{GENERATE[0]}`."
    if key == INSECURE_DEV_SECRET_KEY or key.startswith("django-insecure"):
        return (
            "SECRET_KEY is the public development key. Set a real SECRET_KEY, e.g. from "
            f"`{GENERATE[0]}`."
        )
    if len(key) < SECRET_KEY_MIN_LENGTH or len(set(key)) < SECRET_KEY_MIN_UNIQUE_CHARACTERS:
        return (
            f"SECRET_KEY is short or guessable: it needs at least {SECRET_KEY_MIN_LENGTH} "
            f"characters, {SECRET_KEY_MIN_UNIQUE_CHARACTERS} of them different (it has "
            f"{len(key)}, {len(set(key))} different). Set a long random one, e.g. from "
            f"`{GENERATE[0]}`."
        )
    return ""


def encryption_keys_problem(keys: Sequence[str], secret_key: str) -> str:
    """Why `keys` (FIELD_ENCRYPTION_KEY, comma-separated: the first encrypts, each decrypts)
    cannot encrypt for a deployment ("" when they can)."""
    how = f"e.g. from `{GENERATE[1]}`"
    if not keys:
        return (
            "FIELD_ENCRYPTION_KEY is not set: it encrypts the endpoints' keys at rest. Set one, "
            f"{how}."
        )
    for number, key in enumerate(keys, start=1):
        which = "FIELD_ENCRYPTION_KEY" if len(keys) == 1 else f"FIELD_ENCRYPTION_KEY's key {number}"
        if key == DEV_FIELD_ENCRYPTION_KEY:
            return f"{which} is the public development key. Set a real one, {how}."
        if key == secret_key:
            return f"{which} is SECRET_KEY itself: give it a key of its own, {how}."
        problem = fernet_key_problem(key)
        if problem:
            return f"{which} {problem}; set one {how}."
    return ""


def fernet_key_problem(key: str) -> str:
    """Why `key` is no Fernet key ("" when it is): 32 bytes in URL-safe base64 (44 characters).
    Checked by hand, so that the settings do not load the cryptography library."""
    try:
        raw = base64.urlsafe_b64decode(key.encode("ascii"))
    except (binascii.Error, ValueError, UnicodeError):
        return "is not URL-safe base64"
    if len(raw) != 32 or len(key) != 44:
        return f"is not a Fernet key (32 bytes in URL-safe base64; this one is {len(raw)} bytes)"
    return ""


def deploy_check(app_configs: Any = None, **kwargs: Any) -> list[Any]:
    """`check --deploy`: the rules above as errors, for the settings as loaded."""
    # Here, not at the top: config.settings imports this module to read its keys.
    from django.conf import settings
    from django.core import checks

    errors = []
    problem = secret_key_problem(str(getattr(settings, "SECRET_KEY", "") or ""))
    if problem:
        errors.append(checks.Error(problem, id="config.E001"))
    problem = encryption_keys_problem(
        list(getattr(settings, "FIELD_ENCRYPTION_KEYS", []) or []),
        str(getattr(settings, "SECRET_KEY", "") or ""),
    )
    if problem:
        errors.append(checks.Error(problem, id="config.E002"))
    return errors
