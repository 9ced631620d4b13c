"""The JSON an import stores: the text json.dumps makes with the import's options, however the
encoder is built (benchmarks.services.dumps_json keeps one C encoder for every value)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.services import dumps_json


def reference(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


VALUES = [
    {"query": "Can you find a flight?"},
    {"tool": "WeatherTool"},
    'a bare string with "quotes", a backslash \\ and a tab\t',
    {"query": "caf\u00e9 \u6f22\u5b57 \U0001f600 \u2028 line\nbreak \x01 \x7f"},
    {"nested": [{"a": 1, "b": [True, False, None]}, [], {}], "n": -0.0},
    [1, 2.5, 1e300, -1e-300, 12345678901234567890, 3.141592653589793],
    {1: "int key", 2.5: "float key", False: "bool key", None: "null key"},
    {"empty": {"list": [], "dict": {}}},
    ["x"],
    0,
    False,
    "",
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_dumps_json_is_json_dumps_with_the_import_options(value: Any) -> None:
    assert dumps_json(value) == reference(value)


def test_empty_containers_and_none() -> None:
    assert (dumps_json(None), dumps_json([]), dumps_json({})) == (None, "[]", "{}")


def test_an_unencodable_value_raises_and_the_next_one_is_encoded() -> None:
    # The encoder is shared: a failure inside a container must leave nothing behind.
    with pytest.raises(TypeError):
        dumps_json({"a": [{"b": {1, 2}}]})
    value = {"a": [{"b": [1, 2]}]}
    assert dumps_json(value) == reference(value)
    assert json.loads(dumps_json(value) or "") == value
