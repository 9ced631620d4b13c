"""Template filters every app's pages use to show tool-use data (the templates escape what
they return: benchmark text and model output are untrusted)."""

from __future__ import annotations

import json
from typing import Any

from django import template

register = template.Library()


def pretty(value: Any) -> str:
    """A value, or JSON text, as indented JSON; other text as it is."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, ensure_ascii=False, indent=2)


@register.filter
def as_json(value: Any) -> str:
    """As experts read tool arguments, schemas and API responses."""
    return pretty(value)


@register.filter
def served(observation: Any) -> dict[str, Any] | None:
    """A tool server's answer in an observation ({"error", "response"}, and from the virtual
    API server its "source"), or None for an observation of another kind."""
    if not isinstance(observation, str) or not observation.lstrip().startswith("{"):
        return None
    try:
        value = json.loads(observation)
    except ValueError:
        return None
    if (
        isinstance(value, dict)
        and "response" in value
        and set(value)
        <= {
            "error",
            "response",
            "source",
            "origin",
        }
    ):
        return value
    return None
