"""Keys of model endpoints and real APIs: entered in the platform and stored sealed, or read from
an environment variable an operator listed. Nothing else.

An endpoint's key is sent to its base URL as `Authorization: Bearer ...` (a real API's as
`X-RapidAPI-Key`), so whoever may add an endpoint chooses where a key goes. Hence:

- A key entered in the platform (the endpoint pages and the admin's form, one form;
  `POST /api/endpoints/`; `add_endpoint --key-stdin`: one service,
  evaluation.services.endpoint_save) is sealed: encrypted with Fernet
  under the FIELD_ENCRYPTION_KEY setting (never SECRET_KEY; several keys rotate: the first seals,
  any opens), together with the address it was entered for. It is never shown again, only its
  last four characters, and opened only to be sent to that address: a sealed key whose
  endpoint now names another address (changed around the service) opens to nothing.
- A key read from an environment variable of the workers: only from a variable the operator
  lists in ENDPOINT_KEY_VARIABLES, and never one the platform's own settings read (its value
  would go to whatever listens at the base URL). The rule is a model validator (admin, API and
  command share it) and is checked again where the key is read, for rows written before the
  rule or around the model: a variable the operator has not listed sends nothing.
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.exceptions import ValidationError

from config.errors import ApplicationError

if TYPE_CHECKING:
    from cryptography.fernet import MultiFernet

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Shapes of real keys; a key pasted where the variable's *name* belongs must not be stored. A
# long run of mixed-case letters and digits is a key; a long UPPER_CASE name is a variable.
KEY_PREFIXES = re.compile(r"^(sk-|sk_|gsk_|xai-|AIza|hf_)")
LONG_TOKEN = re.compile(r"^[A-Za-z0-9_\-]{32,}$")
# What a variable's name looks like: typed where the key itself belongs, it would be sent as the
# key (and fail at the server, with the name in its log).
VARIABLE_NAME = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$")
# Never a key variable whatever the settings list: the platform's own secrets and connections.
PLATFORM_VARIABLES = frozenset(
    {
        "SECRET_KEY",
        "FIELD_ENCRYPTION_KEY",
        "DATABASE_URL",
        "REDIS_URL",
        "VIRTUAL_API_KEYS",
        "CELERY_BROKER_URL",
    }
)
KEY_MAX_LENGTH = 4096


class KeyVariableError(ApplicationError):
    """A key variable the rule refuses; says why."""


class SealedKeyError(ApplicationError):
    """A stored key that cannot be sent: sealed under an encryption key this machine does not
    have, or entered for another address than the endpoint's."""


def key_variable_problem(name: str) -> str:
    """Why `name` may not hold an endpoint's key ("" when it may; an empty name means no key)."""
    if not name:
        return ""
    looks_random = (
        LONG_TOKEN.match(name) and any(c.islower() for c in name) and any(c.isdigit() for c in name)
    )
    if KEY_PREFIXES.search(name) or looks_random:
        return (
            "This looks like an API key. Enter the key itself as the endpoint's key (it is "
            "stored encrypted and never shown again), not as a variable's name."
        )
    if not ENV_NAME.match(name):
        return f"{name!r} is not an environment variable name (letters, digits, underscores)."
    platform = PLATFORM_VARIABLES | getattr(settings, "ENVIRONMENT_VARIABLES", frozenset())
    if name.upper() in {variable.upper() for variable in platform}:
        return (
            f"{name} is one of the platform's own settings; its value would be sent to the "
            "endpoint. Enter the endpoint's key itself instead."
        )
    if name not in getattr(settings, "ENDPOINT_KEY_VARIABLES", []):
        return (
            f"{name} is not a variable the operator lists in ENDPOINT_KEY_VARIABLES, so its "
            "value is not sent anywhere: enter the endpoint's key itself (stored encrypted), "
            "or ask the operator to list the variable."
        )
    return ""


def validate_key_variable(value: str) -> None:
    """Model field validator (Endpoint.api_key_env, RealApi.key_env)."""
    problem = key_variable_problem(value)
    if problem:
        raise ValidationError(problem, code="key_variable")


def key_from_environment(name: str) -> str:
    """The key in variable `name` on this machine ("" when unset). Raises KeyVariableError for
    a name the rule refuses, so a row that got around the validator sends nothing."""
    problem = key_variable_problem(name)
    if problem:
        raise KeyVariableError(problem)
    return os.environ.get(name, "")


# --- keys entered in the platform -----------------------------------------------------------


def key_problem(key: str) -> str:
    """Why `key` cannot be stored as an endpoint's key ("" when it can)."""
    if len(key) > KEY_MAX_LENGTH:
        return f"A key is at most {KEY_MAX_LENGTH} characters."
    if not key.isascii() or not key.isprintable() or any(ch.isspace() for ch in key):
        return "A key is printable ASCII without spaces (paste the key alone)."
    if VARIABLE_NAME.match(key):
        return (
            f"{key} looks like the name of an environment variable, not a key: enter the key "
            "itself, or give a variable the operator lists as the key variable."
        )
    return ""


@lru_cache(maxsize=4)
def _fernet(keys: tuple[str, ...]) -> MultiFernet:
    # Here, not at start-up: the library is loaded by the processes that seal or open a key.
    from cryptography.fernet import Fernet, MultiFernet

    return MultiFernet([Fernet(key.encode("ascii")) for key in keys])


def fernet() -> MultiFernet:
    """The settings' encryption keys (FIELD_ENCRYPTION_KEYS; config.secrets checks them): the
    first seals, each opens."""
    return _fernet(tuple(settings.FIELD_ENCRYPTION_KEYS))


def seal(key: str, destination: str) -> str:
    """`key`, encrypted together with the one address it may be sent to."""
    payload = json.dumps({"to": destination, "key": key}, separators=(",", ":"))
    return fernet().encrypt(payload.encode("utf-8")).decode("ascii")


def _open(sealed: str) -> dict[str, str]:
    # On first use, as in fernet().
    from cryptography.fernet import InvalidToken

    try:
        payload = json.loads(fernet().decrypt(sealed.encode("ascii")))
    except (InvalidToken, ValueError, UnicodeError):
        raise SealedKeyError(
            "the stored key cannot be opened with this machine's FIELD_ENCRYPTION_KEY (it was "
            "stored under another one): enter the key again",
            field="api_key",
        ) from None
    return {"to": str(payload.get("to", "")), "key": str(payload.get("key", ""))}


def sealed_for(sealed: str) -> str:
    """The address a sealed key was entered for."""
    return _open(sealed)["to"]


def unseal(sealed: str, destination: str) -> str:
    """The key, for sending to `destination` only. Raises SealedKeyError when it was entered
    for another address or cannot be opened here."""
    opened = _open(sealed)
    if opened["to"] != destination:
        raise SealedKeyError(
            f"the stored key was entered for {opened['to']}, not {destination}: it is sent "
            "only there; enter the key again for the new address",
            field="api_key",
        )
    return opened["key"]


def reseal(sealed: str) -> str:
    """The same sealed key under the first encryption key (after a new one is put first)."""
    return fernet().rotate(sealed.encode("ascii")).decode("ascii")


def last_four(key: str) -> str:
    """What is ever shown of a key: its last four characters (none of a key that short)."""
    return key[-4:] if len(key) >= 12 else ""
