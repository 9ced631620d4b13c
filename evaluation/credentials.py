"""Keys of model endpoints and real APIs: only ever read from an environment variable whose name
says it holds such a key, and never from one the platform's own settings read.

An endpoint's key is sent to its base URL as `Authorization: Bearer ...` (a real API's as
`X-RapidAPI-Key`), so whoever may add an endpoint chooses where that variable's value goes. A
free choice of variable would let them send SECRET_KEY or DATABASE_URL to a listener of their
own. The rule is a model validator (admin, API and command share it) and is checked again
where the key is read, for rows written before the rule or around the model.
"""

from __future__ import annotations

import os
import re

from django.conf import settings
from django.core.exceptions import ValidationError

from config.errors import ApplicationError

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
KEY_SUFFIXES = ("_API_KEY", "_TOKEN")
# Shapes of real keys; a key pasted where the variable's *name* belongs must not be stored. A
# long run of mixed-case letters and digits is a key; a long UPPER_CASE name is a variable.
KEY_PREFIXES = re.compile(r"^(sk-|sk_|gsk_|xai-|AIza|hf_)")
LONG_TOKEN = re.compile(r"^[A-Za-z0-9_\-]{32,}$")
# Never a key variable whatever the settings list: the platform's own secrets and connections.
PLATFORM_VARIABLES = frozenset(
    {"SECRET_KEY", "DATABASE_URL", "REDIS_URL", "VIRTUAL_API_KEYS", "CELERY_BROKER_URL"}
)


class KeyVariableError(ApplicationError):
    """A key variable the rule refuses; says why."""


def key_variable_problem(name: str) -> str:
    """Why `name` may not hold an endpoint's key ("" when it may; an empty name means no key)."""
    if not name:
        return ""
    looks_random = (
        LONG_TOKEN.match(name) and any(c.islower() for c in name) and any(c.isdigit() for c in name)
    )
    if KEY_PREFIXES.search(name) or looks_random:
        return (
            "This looks like an API key. Store the key in an environment variable of the "
            "workers and give that variable's name here (e.g. OPENAI_API_KEY)."
        )
    if not ENV_NAME.match(name):
        return f"{name!r} is not an environment variable name (letters, digits, underscores)."
    platform = PLATFORM_VARIABLES | getattr(settings, "ENVIRONMENT_VARIABLES", frozenset())
    if name.upper() in {variable.upper() for variable in platform}:
        return (
            f"{name} is one of the platform's own settings; its value would be sent to the "
            "endpoint. Put the endpoint's key in a variable of its own (e.g. OPENAI_API_KEY)."
        )
    listed = getattr(settings, "ENDPOINT_KEY_VARIABLES", [])
    if not name.endswith(KEY_SUFFIXES) and name not in listed:
        return (
            f"{name} does not look like a key variable: give a name ending in "
            f"{' or '.join(KEY_SUFFIXES)} (e.g. OPENAI_API_KEY), or list it in the "
            "ENDPOINT_KEY_VARIABLES setting."
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
