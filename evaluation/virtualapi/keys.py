"""Which cached response a call is: the API as StableToolBench's cache names it, and the call's
arguments in a canonical form. Pure Python.

StableToolBench keys its cache by `str(arguments)`, so the same arguments in another key order,
or 10 written as 10.0, miss. Here a call is keyed by a hash of its canonical arguments: keys
sorted; numbers by value (10, 10.0, 1e1 and the text "10" are one number; True stays a boolean,
never 1); texts as they are (a numeric text with leading zeros, "007", is an identifier and
stays text); nested objects and lists the same way, list order kept.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from benchmarks.kit.registry import cache_protocol

# A number written as text (spaces around it ignored): optional sign, digits without a leading
# zero (or a single 0), an optional fraction and exponent. "007", "1,000" and "0x10" are not.
_NUMBER_TEXT = re.compile(r"^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$")


@dataclass(frozen=True)
class ApiName:
    """An API as the virtual server's cache folders name it: <category>/<tool>/<api>.json, the
    tool folder being "<tool>_for_<category>"."""

    category: str
    tool: str
    api: str

    @classmethod
    def from_request(cls, category: str, tool_name: str, api_name: str) -> ApiName:
        """The names a client sends (as published), standardised as the server the virtual API
        server stands in for does before looking in its cache (that suite's request_api)."""
        request_api = cache_protocol().request_api
        assert request_api is not None  # cache_protocol() is a suite that serves a cache
        return cls(*request_api(category, tool_name, api_name))

    @classmethod
    def from_folders(cls, category: str, tool: str, api: str) -> ApiName:
        """As stored in a cache folder (a tool folder without "_for_<category>" gets it)."""
        suffix = f"_for_{category}"
        if not tool.endswith(suffix):
            tool = f"{tool}{suffix}"
        return cls(category, tool, api)

    @property
    def path(self) -> str:
        return f"{self.category}/{self.tool}/{self.api}"


def _number(value: float | int | Decimal) -> Any:
    number = Decimal(str(value)) if not isinstance(value, Decimal) else value
    if number == number.to_integral_value():
        return int(number)
    return float(number)


def canonical(value: Any) -> Any:
    """The value with every number by value and every object's keys sorted (json.dumps sorts
    them); see the module docstring. Precondition: JSON-like data (dict, list, str, int, float,
    bool, None)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            return repr(value)
        return _number(value)
    if isinstance(value, str):
        text = value.strip()
        if _NUMBER_TEXT.match(text):
            try:
                return _number(Decimal(text))
            except InvalidOperation:
                return value
        return value
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    return str(value)


def canonical_text(arguments: Any) -> str:
    return json.dumps(
        canonical(arguments), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )


def call_key(arguments: Any) -> str:
    """The cache key of a call's arguments: a SHA-256 of their canonical JSON (a lone surrogate
    a model wrote in them hashed as it is)."""
    return hashlib.sha256(canonical_text(arguments).encode("utf-8", "surrogatepass")).hexdigest()
