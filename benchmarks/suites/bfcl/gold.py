"""BFCL's gold as an expert refines it (registry.GoldEditing), in its two shapes:

- single-turn ("acceptable"): the possible answer, a list of {function: {parameter: [acceptable
  values]}}, one entry per expected call; "" among a parameter's values means the parameter may
  be left out. The editor holds it as [{"name", "arguments": {parameter: [values]}}].
- multi-turn ("turns"): per turn, the ground truth's calls as Python call strings
  (`cd(folder='x')`), each one call with literal arguments (calls.parse_call: read with `ast`,
  never evaluated). The editor holds the strings per turn; the number of turns is the entry's
  (one per user turn of its question) and is kept.

The other references (irrelevance's {"answer": null, ...}, the agentic {"answers": [...]}) are
not claimed here: the editor shows them as JSON. Pure Python.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from benchmarks.kit.registry import GoldEditing
from benchmarks.kit.toolcall import ToolCallError
from benchmarks.suites.bfcl.calls import parse_call


def is_acceptable_gold(reference: Any) -> bool:
    """A single-turn possible answer: a non-empty list of one-key objects {function:
    {parameter: [values]}}."""
    if not isinstance(reference, list) or not reference:
        return False
    for entry in reference:
        if not (isinstance(entry, Mapping) and len(entry) == 1):
            return False
        ((name, parameters),) = entry.items()
        if not isinstance(name, str) or not isinstance(parameters, Mapping):
            return False
        if not all(isinstance(values, list) for values in parameters.values()):
            return False
    return True


def is_turns_gold(reference: Any) -> bool:
    """A multi-turn ground truth: a non-empty list of turns, each a list of call strings."""
    return (
        isinstance(reference, list)
        and bool(reference)
        and all(
            isinstance(turn, list) and all(isinstance(call, str) for call in turn)
            for turn in reference
        )
    )


def read_acceptable(reference: Any) -> list[Any]:
    """[{"name", "arguments": {parameter: [values]}}] in the possible answer's order."""
    calls = []
    for entry in reference if is_acceptable_gold(reference) else []:
        ((name, parameters),) = entry.items()
        calls.append({"name": name, "arguments": copy.deepcopy(dict(parameters))})
    return calls


def write_acceptable(calls: list[Any], old: Any) -> Any:
    """The possible answer holding `calls` ({"name", "arguments": {parameter: [values]}}).
    ValueError for no call, a call without a function name, a value list that is not a list.
    An empty list is written as it is (BFCL's data has a few: no answer can pass them, which
    the editor reports); [""] means the parameter must be left out."""
    if not calls:
        raise ValueError(
            "a single-turn possible answer expects at least one call (an entry that expects "
            "none is an irrelevance entry)"
        )
    written = []
    for position, call in enumerate(calls, start=1):
        name = str(call.get("name") or "").strip()
        if not name:
            raise ValueError(f"call {position} names no function")
        arguments = call.get("arguments")
        if not isinstance(arguments, Mapping):
            raise ValueError(f"call {position} ({name}): the parameters are not an object")
        for parameter, values in arguments.items():
            if not isinstance(values, list):
                raise ValueError(
                    f"call {position} ({name}), parameter {parameter}: the acceptable values "
                    "must be a JSON list"
                )
        written.append({name: copy.deepcopy(dict(arguments))})
    return written


def read_turns(reference: Any) -> list[Any]:
    """The call strings per turn."""
    return [list(turn) for turn in reference] if is_turns_gold(reference) else []


def parse(text: str) -> tuple[str, list[Any], dict[str, Any]]:
    """A ground-truth call string as (name, positional, keyword); ValueError saying what is
    wrong (calls.parse_call's ToolCallError)."""
    try:
        parsed = parse_call(text)
    except ToolCallError as exc:
        raise ValueError(str(exc)) from None
    return parsed.name, list(parsed.args), dict(parsed.kwargs)


def write_turns(turns: list[Any], old: Any) -> Any:
    """The ground truth holding `turns` (call strings per turn, each stripped). ValueError when
    the number of turns is not the old one's (one per user turn of the question) or a call is
    not one call with literal arguments, naming the turn and call (1-based)."""
    expected = len(old) if isinstance(old, list) else None
    if expected is not None and len(turns) != expected:
        raise ValueError(
            f"the ground truth has one entry per turn: {expected} turns, not {len(turns)}"
        )
    written: list[list[str]] = []
    for turn_number, turn in enumerate(turns, start=1):
        if not isinstance(turn, list):
            raise ValueError(f"turn {turn_number} is not a list of calls")
        kept = []
        for call_number, text in enumerate(turn, start=1):
            try:
                parse(str(text))
            except ValueError as exc:
                raise ValueError(f"turn {turn_number}, call {call_number}: {exc}") from None
            kept.append(str(text).strip())
        written.append(kept)
    return written


def functions_of(sample_input: Mapping[str, Any]) -> dict[str, Any]:
    """name -> parameters schema of the functions an entry offers: input["functions"] and, for
    multi_turn_miss_func, the ones held out until a later turn (input["missed_functions"])."""
    docs: list[Any] = list(sample_input.get("functions") or [])
    missed = sample_input.get("missed_functions")
    if isinstance(missed, Mapping):
        for held in missed.values():
            docs.extend(held if isinstance(held, list) else [])
    schemas: dict[str, Any] = {}
    for doc in docs:
        if isinstance(doc, Mapping) and isinstance(doc.get("name"), str):
            parameters = doc.get("parameters")
            schemas.setdefault(doc["name"], parameters if isinstance(parameters, Mapping) else {})
    return schemas


SINGLE_TURN = GoldEditing(
    shape="acceptable",
    recognizes=is_acceptable_gold,
    read_gold=read_acceptable,
    write_gold=write_acceptable,
    functions=functions_of,
)

MULTI_TURN = GoldEditing(
    shape="turns",
    recognizes=is_turns_gold,
    read_gold=read_turns,
    write_gold=write_turns,
    functions=functions_of,
    parse_call=parse,
)

GOLD = (SINGLE_TURN, MULTI_TURN)
