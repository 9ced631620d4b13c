"""Template filters of the studio."""

from __future__ import annotations

import json
from typing import Any

from django import template

register = template.Library()


def _number(value: float | None, digits: int = 3) -> str:
    return "\N{EN DASH}" if value is None else f"{value:.{digits}f}"


@register.filter
def estimate(value: Any, digits: int = 3) -> str:
    """An estimate ({"value", "low", "high", "n"}) as "0.412 [0.351, 0.470]"; "\N{EN DASH}" when
    undefined."""
    if not isinstance(value, dict) or value.get("value") is None:
        return "\N{EN DASH}"
    text = _number(value["value"], digits)
    if value.get("low") is not None and value.get("high") is not None:
        text += f" [{_number(value['low'], digits)}, {_number(value['high'], digits)}]"
    return text


@register.filter
def percent(value: Any) -> str:
    """An estimate of a share as "41% [35, 47]"."""
    if not isinstance(value, dict) or value.get("value") is None:
        return "\N{EN DASH}"
    text = f"{100 * value['value']:.0f}%"
    if value.get("low") is not None and value.get("high") is not None:
        text += f" [{100 * value['low']:.0f}, {100 * value['high']:.0f}]"
    return text


@register.filter
def rater_name(rater: str) -> str:
    """ "human:alice" -> "alice"; "judge:gpt" -> "gpt (judge)"."""
    kind, _, name = str(rater).partition(":")
    if not name:
        return kind
    return name if kind == "human" else f"{name} ({kind})"


@register.filter
def get(mapping: Any, key: Any) -> Any:
    return mapping.get(key) if isinstance(mapping, dict) else None


STATISTIC_NAMES = {
    "pearson": "Pearson r",
    "spearman": "Spearman \N{GREEK SMALL LETTER RHO}",
    "kendall": "Kendall \N{GREEK SMALL LETTER TAU}",
    "agreement": "Percent agreement",
    "cohen_kappa": "Cohen's \N{GREEK SMALL LETTER KAPPA}",
}


@register.filter
def statistic_name(name: str) -> str:
    return STATISTIC_NAMES.get(name, name.replace("_", " "))


@register.filter
def at(sequence: Any, index: int) -> Any:
    """The entry of a list at an index ("" beyond it)."""
    if isinstance(sequence, (list, tuple)) and 0 <= index < len(sequence):
        return sequence[index]
    return ""


@register.filter
def as_json(value: Any) -> str:
    """A value as JSON text (a form field's value; the template escapes it): text is kept as
    it is (already what a form sent)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
