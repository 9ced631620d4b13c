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


# Rows of an outline (a plan's steps, a refinement's calls) are indented by their depth with the
# stylesheet's classes indent-0 .. indent-MAX_INDENT, never a style attribute (config.csp); a
# deeper row is indented as the deepest (its number still says where it is).
MAX_INDENT = 12


@register.filter
def indent(depth: Any) -> str:
    try:
        level = int(depth or 0)
    except (TypeError, ValueError):
        level = 0
    return f"indent-{max(0, min(level, MAX_INDENT))}"


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


# --- tool calls ---------------------------------------------------------------------------------

# A call longer than this on one line, or with a value that spans lines, shows its arguments as a
# table under the call instead.
INLINE_CALL_CHARS = 80


def _literal(value: Any) -> str:
    # JSON spells every value unambiguously (a string's quotes escaped, nested values whole).
    return json.dumps(value, ensure_ascii=False)


def _cell(value: Any) -> str:
    # In a table a string is shown as it is; anything else as indented JSON.
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2)


def _key(key: Any) -> str:
    text = str(key)
    return text if text.isidentifier() else _literal(text)


def call_parts(name: Any, arguments: Any) -> dict[str, Any]:
    """A tool call as people write it: {"text": 'get_weather(city="Paris", days=3)', "rows":
    [(key, value text)] when the call is too long for one line (the text then names the keys
    only), "raw": the arguments' text when they are not arguments at all}.

    Arguments are a dict (keyword arguments), JSON text of one, a list (positional arguments),
    None or empty (no arguments), or any other value (one positional argument); a text that is
    neither JSON nor short is kept as raw text under the name."""
    name_text = str(name) if name not in (None, "") else "(no tool)"
    if isinstance(arguments, str) and arguments.strip()[:1] in ("{", "["):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return {"text": f"{name_text}(…)", "rows": [], "raw": arguments}
    if arguments is None or arguments == {} or arguments == [] or arguments == "":
        return {"text": f"{name_text}()", "rows": [], "raw": None}
    if isinstance(arguments, dict):
        items = [(_key(k), v) for k, v in arguments.items()]
        text = f"{name_text}({', '.join(f'{k}={_literal(v)}' for k, v in items)})"
        multiline = any(isinstance(v, str) and "\n" in v for _, v in items)
        if len(text) <= INLINE_CALL_CHARS and not multiline:
            return {"text": text, "rows": [], "raw": None}
        return {
            "text": f"{name_text}({', '.join(k for k, _ in items)})",
            "rows": [(k, _cell(v)) for k, v in items],
            "raw": None,
        }
    positional = list(arguments) if isinstance(arguments, list | tuple) else [arguments]
    text = f"{name_text}({', '.join(_literal(v) for v in positional)})"
    multiline = any(isinstance(v, str) and "\n" in v for v in positional)
    if len(text) <= INLINE_CALL_CHARS and not multiline:
        return {"text": text, "rows": [], "raw": None}
    return {
        "text": f"{name_text}(…)",
        "rows": [(f"#{i}", _cell(v)) for i, v in enumerate(positional, start=1)],
        "raw": None,
    }


@register.filter
def as_call(name: Any, arguments: Any) -> dict[str, Any]:
    """`{% with c=name|as_call:arguments %}`: see call_parts; templates/_call.html shows it."""
    return call_parts(name, arguments)


# --- numbers, one format each ---------------------------------------------------------------
# Counts are whole numbers; percentages have 2 decimals, other scores 4, a pace (items per
# second) 1 and a cost 4, whatever their value, so that a column of them lines up and 50 and
# 50.5 do not read as numbers of different precision. No value: an em dash.

PLACES = {"percent": 2, "score": 4, "per_second": 1, "cost": 4}
NONE = "—"


def _real(value: Any) -> float | None:
    """A number as a float; None for no value, a flag or a text."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def fixed(value: Any, places: int) -> str:
    number = _real(value)
    if number is None:
        return NONE if value is None else str(value)
    return f"{number:.{places}f}"


@register.filter
def count(value: Any) -> str:
    """A count: a whole number ("20", not "20.0"); a mean of counts that is not whole (over
    trials) keeps two decimals."""
    number = _real(value)
    if number is None:
        return NONE if value is None else str(value)
    return str(round(number)) if number.is_integer() else f"{number:.2f}"


@register.filter
def percent(value: Any) -> str:
    return fixed(value, PLACES["percent"])


@register.filter
def score(value: Any) -> str:
    return fixed(value, PLACES["score"])


@register.filter
def per_second(value: Any) -> str:
    return fixed(value, PLACES["per_second"])


@register.filter
def cost(value: Any) -> str:
    return fixed(value, PLACES["cost"])


@register.filter
def in_unit_of(value: Any, metric: Any) -> str:
    """`value` in the unit of a metric row (evaluation.selectors.metric_row: its "count" and
    "percent" flags): a count, a percentage or another score."""
    if not isinstance(metric, dict):
        return score(value)
    if metric.get("count"):
        return count(value)
    if metric.get("percent"):
        return percent(value)
    return score(value)
