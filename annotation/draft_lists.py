"""Refinement drafts of two gold shapes beyond plans and flat calls (registry.GoldEditing):

- "acceptable": expected calls whose arguments are lists of acceptable values (BFCL's
  single-turn possible answers; "" among the values: the argument may be left out). The draft
  is a list of `Call(uid, name, arguments={argument: [values]})`, so the calls' diff
  (golddiff.calls_diff) shows an edited list as an argument change, old list and new.
- "turns": expected calls grouped by turn, each written as a call string (BFCL's multi-turn
  ground truth). The draft is a flat list of `TurnCall(uid, turn, text)`; the number of turns
  is fixed (the entry has one per user turn). `turns_diff` reads each call with the suite's
  parser and diffs turn by turn, numbering a call "turn.position" ("2.1").

Uids follow draft_editing's rule: "c1", "c2", ... by position when loaded from a reference, so
the diff matches calls by uid; "n<k>" for calls added while editing. Pure Python: no Django,
never mutates its arguments. RefineError (draft_editing's) for an edit that cannot apply.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from annotation.draft_editing import RefineError, next_uid
from benchmarks.kit.golddiff import (
    Call,
    Change,
    acceptable_calls,
    calls_diff,
    in_turn,
    written_call,
)
from benchmarks.kit.registry import GoldEditing

Parse = Callable[[str], tuple[str, list[Any], dict[str, Any]]]

# --- acceptable-value lists ---------------------------------------------------------------------


def acceptable_from_reference(gold: GoldEditing, reference: Any) -> list[Call]:
    """The gold's calls as a draft, uids "c1", "c2", ... by position."""
    return acceptable_calls(reference) if gold.recognizes(reference) else []


def acceptable_to_reference(gold: GoldEditing, calls: Sequence[Call], old: Any) -> Any:
    """The reference holding the draft (the suite's write_gold); RefineError with its reason."""
    if gold.write_gold is None:
        raise RefineError("this gold cannot be written back")
    written = [{"name": call.name, "arguments": copy.deepcopy(call.arguments)} for call in calls]
    try:
        return gold.write_gold(written, old)
    except ValueError as exc:
        raise RefineError(str(exc)) from None


def value_text(value: Any) -> str:
    """An acceptable value as the editor shows it: JSON ("" for the leave-out marker shows as
    "")."""
    return json.dumps(value, ensure_ascii=False)


def value_from_text(text: str) -> Any:
    """A typed acceptable value: JSON when it reads as JSON (3, 2.5, true, null, "x", [1, 2]),
    the text itself otherwise (San Francisco). Blank text is refused."""
    if not text.strip():
        raise RefineError('type a value (write "" to mark the argument as optional)')
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return text.strip()


def values_from_text(text: str) -> list[Any] | None:
    """An acceptable-value list from its JSON text; None for blank text (the argument is
    removed). RefineError when it is not a JSON list."""
    if not text.strip():
        return None
    try:
        values = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise RefineError(
            f'the acceptable values must be a JSON list such as [5, "five", ""]: {exc}'
        ) from None
    if not isinstance(values, list):
        raise RefineError('the acceptable values must be a JSON list such as [5, "five", ""]')
    return values


def _call(calls: Sequence[Call], uid: str) -> tuple[int, Call]:
    for index, call in enumerate(calls):
        if call.uid == uid:
            return index, call
    raise RefineError(f"no call {uid!r} in this draft (reload the page)")


def _with_values(
    calls: Sequence[Call], uid: str, argument: str, values: list[Any] | None
) -> list[Call]:
    argument = argument.strip()
    if not argument:
        raise RefineError("which argument?")
    index, call = _call(calls, uid)
    arguments = copy.deepcopy(call.arguments)
    if values is None:
        arguments.pop(argument, None)
    else:
        arguments[argument] = values
    return [*calls[:index], replace(call, arguments=arguments), *calls[index + 1 :]]


def _values(calls: Sequence[Call], uid: str, argument: str) -> list[Any]:
    values = _call(calls, uid)[1].arguments.get(argument)
    return list(values) if isinstance(values, list) else []


def set_values(
    calls: Sequence[Call], uid: str, argument: str, values: list[Any] | None
) -> list[Call]:
    """The argument's acceptable values replaced (None: the argument removed)."""
    return _with_values(calls, uid, argument, copy.deepcopy(values))


def add_value(calls: Sequence[Call], uid: str, argument: str, value: Any) -> list[Call]:
    """`value` appended to the argument's list (the argument added when absent); a value
    already in the list is refused."""
    values = _values(calls, uid, argument)
    if any(value == v and type(value) is type(v) for v in values):
        raise RefineError(f"{value_text(value)} is already an acceptable value of {argument}")
    return _with_values(calls, uid, argument, [*values, copy.deepcopy(value)])


def remove_value(calls: Sequence[Call], uid: str, argument: str, index: int) -> list[Call]:
    """The argument's list without its value at `index` (0-based)."""
    values = _values(calls, uid, argument)
    if not 0 <= index < len(values):
        raise RefineError(f"{argument} has no value number {index + 1} (reload the page)")
    return _with_values(calls, uid, argument, values[:index] + values[index + 1 :])


def toggle_optional(calls: Sequence[Call], uid: str, argument: str) -> list[Call]:
    """The argument marked optional ("" added to its values) or required ("" removed)."""
    values = _values(calls, uid, argument)
    if "" in values:
        return _with_values(calls, uid, argument, [v for v in values if v != ""])
    return _with_values(calls, uid, argument, [*values, ""])


def acceptable_errors(
    calls: Sequence[Call], functions: Mapping[str, Mapping[str, Any] | None]
) -> dict[str, str]:
    """What stops the draft being saved, {call uid: message} ("" for the whole gold): no call,
    a function that is not one of the item's (`functions`: name -> parameters schema), an
    argument the function does not have, an argument without acceptable values (BFCL's checker
    then fails every answer). [""] is valid: the argument must be left out."""
    if not calls:
        return {"": "a single-turn gold expects at least one call"}
    problems: dict[str, list[str]] = {}
    for call in calls:
        found = problems.setdefault(call.uid, [])
        if not call.name.strip():
            found.append("the call names no function")
            continue
        if call.name not in functions:
            listed = ", ".join(functions) or "none"
            found.append(f"{call.name} is not one of this item's functions ({listed})")
            continue
        schema = functions[call.name] or {}
        properties = schema.get("properties") if isinstance(schema, Mapping) else None
        for argument, values in call.arguments.items():
            if isinstance(properties, Mapping) and argument not in properties:
                found.append(f"{call.name} has no argument {argument}")
            elif not isinstance(values, list):
                found.append(f"argument {argument}: the acceptable values must be a list")
            elif not values:
                found.append(
                    f"argument {argument}: no acceptable value, so no answer can pass (give "
                    'one, or "" alone if it must be left out, or remove the argument)'
                )
    return {uid: "; ".join(found) for uid, found in problems.items() if found}


def argument_rows(call: Call, schema: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The editor's rows for a call's arguments: every argument the function declares, in its
    order, then any other the gold gives; each with its values as JSON texts, whether it is
    required by the function, optional in the gold ("" among its values) and given at all."""
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    declared = list(properties) if isinstance(properties, Mapping) else []
    required = schema.get("required") if isinstance(schema, Mapping) else None
    required_names = set(required) if isinstance(required, list) else set()
    rows = []
    for name in [*declared, *(a for a in call.arguments if a not in declared)]:
        values = call.arguments.get(name)
        given = isinstance(values, list)
        rows.append(
            {
                "name": name,
                "required": name in required_names,
                "declared": name in declared,
                "given": given,
                "optional": given and "" in values,
                "values": [
                    {"index": i, "text": value_text(v), "blank": v == ""}
                    for i, v in enumerate(values if given else [])
                ],
                "json": value_text(values) if given else "",
            }
        )
    return rows


# --- calls grouped by turn ----------------------------------------------------------------------


@dataclass(frozen=True)
class TurnCall:
    """One expected call of a turn (0-based), as its call string."""

    uid: str
    turn: int
    text: str


def turns_from_reference(gold: GoldEditing, reference: Any) -> tuple[list[TurnCall], int]:
    """The gold's calls as a draft (uids "c1", "c2", ... in turn order) and its number of
    turns."""
    turns = (gold.read_gold or (lambda _reference: []))(reference)
    calls, position = [], 0
    for turn, texts in enumerate(turns):
        for text in texts:
            position += 1
            calls.append(TurnCall(f"c{position}", turn, str(text)))
    return calls, len(turns)


def grouped(calls: Sequence[TurnCall], turn_count: int) -> list[list[TurnCall]]:
    """The calls per turn, in draft order."""
    turns: list[list[TurnCall]] = [[] for _ in range(turn_count)]
    for call in calls:
        if 0 <= call.turn < turn_count:
            turns[call.turn].append(call)
    return turns


def turns_to_reference(
    gold: GoldEditing, calls: Sequence[TurnCall], turn_count: int, old: Any
) -> Any:
    """The reference holding the draft (the suite's write_gold); RefineError with its reason."""
    if gold.write_gold is None:
        raise RefineError("this gold cannot be written back")
    texts = [[call.text for call in turn] for turn in grouped(calls, turn_count)]
    try:
        return gold.write_gold(texts, old)
    except ValueError as exc:
        raise RefineError(str(exc)) from None


def turn_insert(
    calls: Sequence[TurnCall], turn: int, after_uid: str | None, turn_count: int, text: str = ""
) -> list[TurnCall]:
    """A new call (uid next_uid) in `turn`, after `after_uid` (which must be in that turn) or
    first in the turn when None."""
    if not 0 <= turn < turn_count:
        raise RefineError(f"there is no turn {turn + 1} (the entry has {turn_count})")
    new = TurnCall(next_uid(calls), turn, text.strip())
    if after_uid is None:
        at = next((i for i, c in enumerate(calls) if c.turn >= turn), len(calls))
    else:
        index, anchor = _turn_call(calls, after_uid)
        if anchor.turn != turn:
            raise RefineError("that call is in another turn (reload the page)")
        at = index + 1
    return [*calls[:at], new, *calls[at:]]


def _turn_call(calls: Sequence[TurnCall], uid: str) -> tuple[int, TurnCall]:
    for index, call in enumerate(calls):
        if call.uid == uid:
            return index, call
    raise RefineError(f"no call {uid!r} in this draft (reload the page)")


def turn_delete(calls: Sequence[TurnCall], uid: str) -> list[TurnCall]:
    index, _ = _turn_call(calls, uid)
    return [*calls[:index], *calls[index + 1 :]]


def turn_move(calls: Sequence[TurnCall], uid: str, direction: str) -> list[TurnCall]:
    """The call swapped with its neighbour in the same turn; a no-op at either end of it."""
    if direction not in ("up", "down"):
        raise RefineError(f"direction must be 'up' or 'down', got {direction!r}")
    index, call = _turn_call(calls, uid)
    other = index - 1 if direction == "up" else index + 1
    if not 0 <= other < len(calls) or calls[other].turn != call.turn:
        return list(calls)
    moved = list(calls)
    moved[index], moved[other] = moved[other], moved[index]
    return moved


def turn_set(calls: Sequence[TurnCall], uid: str, text: str) -> list[TurnCall]:
    index, call = _turn_call(calls, uid)
    return [*calls[:index], replace(call, text=text.strip()), *calls[index + 1 :]]


def turns_dump(calls: Sequence[TurnCall]) -> list[dict[str, Any]]:
    return [{"uid": c.uid, "turn": c.turn, "text": c.text} for c in calls]


def turns_load(data: Any) -> list[TurnCall]:
    """A draft back from `turns_dump` output; RefineError when it is not one."""
    if not isinstance(data, list):
        raise RefineError("the draft is not a list of calls")
    calls = []
    for item in data:
        if not (
            isinstance(item, dict)
            and isinstance(item.get("uid"), str)
            and isinstance(item.get("turn"), int)
            and not isinstance(item.get("turn"), bool)
            and isinstance(item.get("text"), str)
        ):
            raise RefineError("the draft holds something that is not a call")
        calls.append(TurnCall(item["uid"], item["turn"], item["text"]))
    if len({call.uid for call in calls}) != len(calls):
        raise RefineError("two calls of the draft share a uid")
    return calls


def turns_errors(
    calls: Sequence[TurnCall],
    functions: Mapping[str, Any],
    parse: Parse,
) -> dict[str, str]:
    """What stops the draft being saved, {call uid: message}: a call that is not one call with
    literal arguments (the suite's parser says why), a function that is not one of the item's."""
    problems: dict[str, str] = {}
    for call in calls:
        try:
            name, _args, _kwargs = parse(call.text)
        except ValueError as exc:
            problems[call.uid] = str(exc)
            continue
        if functions and name not in functions:
            problems[call.uid] = f"{name} is not one of this item's functions"
    return problems


def _declared(functions: Mapping[str, Any]) -> dict[str, list[str]]:
    names: dict[str, list[str]] = {}
    for name, schema in functions.items():
        properties = schema.get("properties") if isinstance(schema, Mapping) else None
        names[name] = list(properties) if isinstance(properties, Mapping) else []
    return names


def turns_diff(
    gold: GoldEditing,
    old: Sequence[TurnCall],
    new: Sequence[TurnCall],
    turn_count: int,
    functions: Mapping[str, Any],
) -> list[Change]:
    """The changes from `old` to `new` turn by turn (golddiff.calls_diff of each turn's
    calls, read by the suite's parse_call; a positional argument named by the function's
    parameter in `functions`), a call numbered "turn.position" (1-based)."""
    declared = _declared(functions)
    changes: list[Change] = []
    old_turns, new_turns = grouped(old, turn_count), grouped(new, turn_count)
    for turn, (before, after) in enumerate(zip(old_turns, new_turns, strict=True), start=1):
        diff = calls_diff(
            [written_call(gold, c.text, c.uid, declared) for c in before],
            [written_call(gold, c.text, c.uid, declared) for c in after],
        )
        changes.extend(in_turn(diff, turn))
    return changes
