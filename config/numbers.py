"""Numbers from strangers: the one reader of whole numbers and ids in query strings and form
fields, and the bounds every form and serializer field takes from the column it fills.

Why a reader: `str.isdigit()` is true for "²" and "٣", and `int()` refuses the first (a 500
wherever `isdigit` guarded an `int`); a number of any length converts, and reaches a column that
holds 32 or 64 bits (a 500 from the database). `whole_number` takes ASCII digits only, within
the bounds given (by default what a PostgreSQL `integer` holds; ids: a `bigint`), and refuses
anything else with a `ParameterError` naming the parameter, which the API answers with a 400
(config.errors) and pages too (config.http.UntrustedInputMiddleware).

Why bounds from the model: a form or serializer field that fills a column refuses what the column
cannot hold, in the terms of that column (`column_bounds`), so the rule is written once, by the
model: an IntegerField's range (Django's, for the database in use), a PositiveIntegerField's 0,
a DecimalField's digits.

Pure Django (no app import): the apps pass their own model fields.
"""

from __future__ import annotations

import re
from typing import Any

from django.core import validators
from django.core.exceptions import ValidationError

from config.errors import ApplicationError

# What PostgreSQL's integer types hold.
INTEGER_MAX = 2**31 - 1
BIGINT_MAX = 2**63 - 1

_WHOLE = re.compile(r"-?[0-9]+")


class ParameterError(ApplicationError):
    """A query parameter or form field that is not what it must be; `field` names it."""


def whole_number(
    value: Any,
    *,
    name: str,
    least: int | None = None,
    most: int | None = None,
    default: int | None = None,
    label: str = "",
    column: Any = None,
) -> int | None:
    """`value` (a request's text) as an int from `least` to `most`; `default` when it is empty
    or absent; ParameterError naming `name` otherwise (its message starts with `label`, the
    name as the person who typed it knows it, when one is given). Only ASCII digits (and a
    minus sign when `least` is negative): "²", "٣", "1e3", " 1", "1.0" are refused, and a
    number is never longer than its bounds allow (no 4,300-digit conversion). The bounds not
    given are those of `column` (a model field: column_bounds), else 0 and what an `integer`
    holds."""
    text = "" if value is None else str(value)
    if text == "":
        return default
    if column is not None:
        bounds = column_bounds(column)
        least = bounds.get("min_value", -INTEGER_MAX - 1) if least is None else least
        most = bounds.get("max_value", INTEGER_MAX) if most is None else most
    least = 0 if least is None else least
    most = INTEGER_MAX if most is None else most
    longest = max(len(str(least)), len(str(most)))
    if len(text) <= longest and _WHOLE.fullmatch(text) and least <= int(text) <= most:
        return int(text)
    shown = text if len(text) <= 20 else f"{text[:12]}... ({len(text):,} characters)"
    named = "" if not label or name in label else f" ({name})"
    raise ParameterError(
        f"{label or name}: a whole number from {least:,} to {most:,}, not {shown!r}{named}",
        field=name,
    )


def object_id(value: Any, *, name: str, default: int | None = None, label: str = "") -> int | None:
    """An id (a bigint primary key: 1 up to 2**63 - 1) from a request, as whole_number."""
    return whole_number(value, name=name, least=1, most=BIGINT_MAX, default=default, label=label)


def id_or_none(value: Any) -> int | None:
    """`value` as an id when it is one, else None: for a parameter that may be an id or a name
    (?benchmark=12 or ?benchmark=ToolE)."""
    try:
        return object_id(value, name="id")
    except ParameterError:
        return None


def object_ids(values: list[Any], *, name: str) -> list[int]:
    """Every id of a repeated parameter (?run=1&run=2), empty ones skipped."""
    return [n for v in values if (n := object_id(v, name=name)) is not None]


def column_bounds(model_field: Any, **stricter: Any) -> dict[str, Any]:
    """The keyword arguments that make a form or serializer field refuse what `model_field`'s
    column cannot hold: min_value/max_value for an integer (the database's range, as Django's
    validators of the field say), max_digits/decimal_places for a decimal. `stricter` bounds
    (min_value, max_value) are kept where they are tighter."""
    bounds: dict[str, Any] = {}
    if getattr(model_field, "max_digits", None) is not None:
        bounds["max_digits"] = model_field.max_digits
        bounds["decimal_places"] = model_field.decimal_places
    for validator in model_field.validators:
        if isinstance(validator, validators.MinValueValidator):
            bounds["min_value"] = max(
                bounds.get("min_value", validator.limit_value), validator.limit_value
            )
        elif isinstance(validator, validators.MaxValueValidator):
            bounds["max_value"] = min(
                bounds.get("max_value", validator.limit_value), validator.limit_value
            )
    least, most = stricter.pop("min_value", None), stricter.pop("max_value", None)
    if least is not None:
        bounds["min_value"] = max(least, bounds.get("min_value", least))
    if most is not None:
        bounds["max_value"] = min(most, bounds.get("max_value", most))
    return {**bounds, **stricter}


def decimal_problem(value: Any, column: Any) -> str:
    """Why `column` (a model DecimalField) cannot hold `value` ("" when it can): too many
    digits in all or before the point, or not a finite number."""
    try:
        validators.DecimalValidator(column.max_digits, column.decimal_places)(value)
    except ValidationError as exc:
        return " ".join(exc.messages)
    return ""
