"""Template filters of the studio."""

from __future__ import annotations

from typing import Any

from django import template

from annotation.selectors import pretty

register = template.Library()


@register.filter
def as_json(value: Any) -> str:
    """A value (or JSON text) as indented JSON, as experts read tool arguments and schemas; the
    template still escapes it."""
    return pretty(value)
