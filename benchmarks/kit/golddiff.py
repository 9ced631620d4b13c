"""The tool-call-aware diff of a gold answer: what changed between two versions of a plan (a
tree of steps with tool calls) or of a list of expected tool calls. Pure Python (no Django), so
every app may show it: the refinement editor and the review (annotation) and a sample's revision
history (benchmarks).

Shapes
  - A plan (UltraTool, papers/004 section 2.4) is a flat list of `Step(uid, depth, text, tool,
    arguments)` in document order; depth 0 is a top-level step. Numbers ("1", "1.1", "2") are
    computed by `numbering`.
  - Calls (an MTU-Bench turn's `reference["calls"]`, a generic sample's
    `reference["tool_calls"]`; the key is the suite's GoldEditing.calls_key) are a flat list of
    `Call(uid, name, arguments)`.
  - Uids say which version a step or call came from: loaded from a reference they are "s1",
    "s2", ... (steps) or "c1", "c2", ... (calls) by position.

The diff (`plan_diff`, `calls_diff`) matches steps by uid, not by text:
  - a uid only in the new version is "inserted", one only in the old version "deleted" (every
    step of a deleted subtree once, in old order, placed after the nearest earlier step that
    kept its place, i.e. where they were);
  - "moved" when the relative order of the surviving steps changed. The steps that kept their
    place are a longest increasing subsequence of the survivors' old positions taken in new
    order, so moving one step reports one move, and an insertion before a step moves nothing.
    The children of a moved step that travelled with it (same parent before and after, same
    order among themselves) are not reported again;
  - for a surviving step, "depth" (indent/outdent), "text", "tool", then one change per argument
    ("argument_added", "argument_removed", "argument_changed" with old and new values).
  Changes come in document order of the new version.

Two stored versions (a sample's revisions) carry no uids that link them: `revision_diff` first
pairs their steps or calls by content (`align`), then diffs them as above.
"""

from __future__ import annotations

import bisect
import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from benchmarks.kit.registry import GoldEditing, gold_editing

ChangeKind = Literal[
    "inserted",
    "deleted",
    "moved",
    "depth",
    "text",
    "tool",
    "argument_changed",
    "argument_added",
    "argument_removed",
]


# --- plans --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One step of a plan draft; `tool` None is a tool-free (or ancestral) step."""

    uid: str
    depth: int
    text: str
    tool: str | None = None
    arguments: dict[str, Any] | None = None


def stored_steps(reference: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The stored steps in plan order: reference["steps"], or the "plan" tree flattened."""
    if not isinstance(reference, Mapping):
        return []
    flat = reference.get("steps")
    if isinstance(flat, list):
        return [step for step in flat if isinstance(step, dict)]
    out: list[dict[str, Any]] = []

    def walk(nodes: Any) -> None:
        for node in nodes if isinstance(nodes, list) else []:
            if isinstance(node, dict):
                out.append({k: v for k, v in node.items() if k != "children"})
                walk(node.get("children"))

    walk(reference.get("plan"))
    return out


def _depth_of(number: Any) -> int:
    return str(number).count(".")


def plan_from_reference(reference: Mapping[str, Any] | None) -> list[Step]:
    """The plan of an UltraTool reference as a draft, uids "s1", "s2", ... by position."""
    steps = []
    for index, stored in enumerate(stored_steps(reference), start=1):
        arguments = stored.get("arguments")
        steps.append(
            Step(
                uid=f"s{index}",
                depth=_depth_of(stored.get("step", "")),
                text=str(stored.get("text") or ""),
                tool=stored.get("tool") if isinstance(stored.get("tool"), str) else None,
                arguments=copy.deepcopy(arguments) if isinstance(arguments, dict) else None,
            )
        )
    return steps


def numbering(steps: Sequence[Step]) -> list[str]:
    """The step numbers, "1", "1.1", "1.2", "2", ... in draft order.

    A step nested too deep (more than one below the step before it) is numbered as if it were
    only one deeper, so a broken draft still renders; `plan_errors` reports it.
    """
    counters: list[int] = []
    numbers = []
    for step in steps:
        depth = max(0, min(step.depth, len(counters)))
        if depth < len(counters):
            del counters[depth + 1 :]
            counters[depth] += 1
        else:
            counters.append(1)
        numbers.append(".".join(map(str, counters)))
    return numbers


@dataclass(frozen=True)
class Call:
    """One expected tool call of an MTU-Bench turn or a generic sample."""

    uid: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


def calls_gold(reference: Mapping[str, Any] | None) -> GoldEditing | None:
    gold = gold_editing(reference)
    return gold if gold is not None and gold.shape == "calls" else None


def calls_key(reference: Mapping[str, Any] | None) -> str:
    # The suite's key (MTU-Bench writes "calls"); "tool_calls" (the generic suite's) otherwise.
    gold = calls_gold(reference)
    return gold.calls_key if gold is not None else "tool_calls"


def calls_from_reference(reference: Mapping[str, Any] | None) -> list[Call]:
    """The gold calls ("calls" or "tool_calls") as a draft, uids "c1", "c2", ... by position."""
    stored = reference.get(calls_key(reference)) if isinstance(reference, Mapping) else None
    calls = []
    for index, item in enumerate(stored if isinstance(stored, list) else [], start=1):
        if not isinstance(item, dict):
            continue
        arguments = item.get("arguments")
        calls.append(
            Call(
                uid=f"c{index}",
                name=str(item.get("name") or ""),
                arguments=copy.deepcopy(arguments) if isinstance(arguments, dict) else {},
            )
        )
    return calls


@dataclass(frozen=True)
class Change:
    """One difference between two versions of a plan or a call list. `old_number`/`new_number`
    are the step numbers ("1.2") or call positions ("2") in each version (None where the item
    is absent); `key` is the argument name for argument changes; `old`/`new` the values (for
    "inserted"/"deleted", the whole step or call as a dict)."""

    kind: ChangeKind
    uid: str
    old_number: str | None = None
    new_number: str | None = None
    key: str | None = None
    old: Any = None
    new: Any = None


def _lis(sequence: Sequence[int]) -> set[int]:
    """The positions (into `sequence`) of one longest strictly increasing subsequence."""
    tails: list[int] = []  # tails[k]: smallest last value of an increasing run of length k + 1
    tail_at: list[int] = []  # the position of that value
    parent = [-1] * len(sequence)
    for position, value in enumerate(sequence):
        k = bisect.bisect_left(tails, value)
        if k == len(tails):
            tails.append(value)
            tail_at.append(position)
        else:
            tails[k] = value
            tail_at[k] = position
        parent[position] = tail_at[k - 1] if k else -1
    kept: set[int] = set()
    position = tail_at[-1] if tail_at else -1
    while position >= 0:
        kept.add(position)
        position = parent[position]
    return kept


def _parents(steps: Sequence[Step]) -> dict[str, str | None]:
    parents: dict[str, str | None] = {}
    path: list[Step] = []
    for step in steps:
        while path and path[-1].depth >= step.depth:
            path.pop()
        parents[step.uid] = path[-1].uid if path else None
        path.append(step)
    return parents


def _moved_steps(old: Sequence[Step], new: Sequence[Step]) -> set[str]:
    """The uids reported "moved": survivors outside the longest run that kept its order, less
    the descendants that travelled with a moved ancestor (same parent, same order among them)."""
    old_position = {step.uid: index for index, step in enumerate(old)}
    survivors = [step.uid for step in new if step.uid in old_position]
    kept = _lis([old_position[uid] for uid in survivors])
    moved = {uid for position, uid in enumerate(survivors) if position not in kept}
    old_parent, new_parent = _parents(old), _parents(new)

    def carried(uid: str) -> bool:
        parent = new_parent.get(uid)
        return parent is not None and parent in moved and old_parent.get(uid) == parent

    # A block: a moved step not carried by its parent, with the moved descendants it carries.
    # Inside a block, order is checked again, so a subtree moved and reordered reports both.
    blocks: dict[str, list[str]] = {}
    block_of: dict[str, str] = {}
    for uid in survivors:
        if uid not in moved:
            continue
        parent = new_parent.get(uid)
        root = block_of.get(parent) if parent is not None and carried(uid) else None
        if root is None:
            root = uid
            blocks[root] = []
        else:
            blocks[root].append(uid)
        block_of[uid] = root
    reported = set(blocks)
    for inner in blocks.values():
        kept_inside = _lis([old_position[uid] for uid in inner])
        reported.update(uid for position, uid in enumerate(inner) if position not in kept_inside)
    return reported


def _argument_changes(
    uid: str,
    numbers: tuple[str | None, str | None],
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any] | None,
) -> list[Change]:
    before = before or {}
    after = after or {}
    changes = []
    for key, value in after.items():
        if key not in before:
            changes.append(Change("argument_added", uid, *numbers, key=key, new=value))
        elif _key(before[key]) != _key(value):
            # 1 == 1.0 == True in Python, also inside a list of acceptable values; "True" ->
            # true or 5 -> 5.0 is a real fix the expert should see: compared as typed JSON.
            changes.append(
                Change("argument_changed", uid, *numbers, key=key, old=before[key], new=value)
            )
    for key, value in before.items():
        if key not in after:
            changes.append(Change("argument_removed", uid, *numbers, key=key, old=value))
    return changes


def _step_dict(step: Step) -> dict[str, Any]:
    return {"text": step.text, "tool": step.tool, "arguments": step.arguments, "depth": step.depth}


def _call_dict(call: Call) -> dict[str, Any]:
    return {"name": call.name, "arguments": call.arguments}


def _with_deletions(
    ordered: list[tuple[str, list[Change]]],
    old_uids: Sequence[str],
    new_uids: set[str],
    moved: set[str],
    deleted: Mapping[str, Change],
) -> list[Change]:
    """Interleave the deletions with the new version's changes: each after the nearest earlier
    old item that survived in place (moved items are somewhere else now), or first."""
    anchored: dict[str | None, list[Change]] = {}
    anchor: str | None = None
    for uid in old_uids:
        if uid in deleted:
            anchored.setdefault(anchor, []).append(deleted[uid])
        elif uid in new_uids and uid not in moved:
            anchor = uid
    out = list(anchored.get(None, []))
    for uid, changes in ordered:
        out.extend(changes)
        out.extend(anchored.get(uid, []))
    return out


def plan_diff(old: Sequence[Step], new: Sequence[Step]) -> list[Change]:
    """The changes from plan `old` to plan `new`, matched by uid (see the module docstring)."""
    old_numbers = dict(zip((s.uid for s in old), numbering(old), strict=True))
    new_numbers = dict(zip((s.uid for s in new), numbering(new), strict=True))
    old_by_uid = {step.uid: step for step in old}
    moved = _moved_steps(old, new)
    ordered: list[tuple[str, list[Change]]] = []
    for step in new:
        numbers = (old_numbers.get(step.uid), new_numbers[step.uid])
        before = old_by_uid.get(step.uid)
        if before is None:
            change = Change("inserted", step.uid, *numbers, new=_step_dict(step))
            ordered.append((step.uid, [change]))
            continue
        changes = []
        if step.uid in moved:
            changes.append(Change("moved", step.uid, *numbers))
        if before.depth != step.depth:
            changes.append(Change("depth", step.uid, *numbers, old=before.depth, new=step.depth))
        if before.text != step.text:
            changes.append(Change("text", step.uid, *numbers, old=before.text, new=step.text))
        if before.tool != step.tool:
            changes.append(Change("tool", step.uid, *numbers, old=before.tool, new=step.tool))
        changes.extend(_argument_changes(step.uid, numbers, before.arguments, step.arguments))
        ordered.append((step.uid, changes))
    new_uids = {step.uid for step in new}
    deleted = {
        step.uid: Change("deleted", step.uid, old_numbers[step.uid], None, old=_step_dict(step))
        for step in old
        if step.uid not in new_uids
    }
    return _with_deletions(ordered, [s.uid for s in old], new_uids, moved, deleted)


def calls_diff(old: Sequence[Call], new: Sequence[Call]) -> list[Change]:
    """The changes from call list `old` to `new`, matched by uid; numbers are 1-based positions
    and a renamed call is a "tool" change."""
    old_position = {call.uid: index for index, call in enumerate(old)}
    old_by_uid = {call.uid: call for call in old}
    survivors = [call.uid for call in new if call.uid in old_position]
    kept = _lis([old_position[uid] for uid in survivors])
    moved = {uid for position, uid in enumerate(survivors) if position not in kept}
    ordered: list[tuple[str, list[Change]]] = []
    for index, call in enumerate(new, start=1):
        before = old_by_uid.get(call.uid)
        numbers = (
            str(old_position[call.uid] + 1) if before is not None else None,
            str(index),
        )
        if before is None:
            ordered.append(
                (call.uid, [Change("inserted", call.uid, *numbers, new=_call_dict(call))])
            )
            continue
        changes = []
        if call.uid in moved:
            changes.append(Change("moved", call.uid, *numbers))
        if before.name != call.name:
            changes.append(Change("tool", call.uid, *numbers, old=before.name, new=call.name))
        changes.extend(_argument_changes(call.uid, numbers, before.arguments, call.arguments))
        ordered.append((call.uid, changes))
    new_uids = {call.uid for call in new}
    deleted = {
        call.uid: Change("deleted", call.uid, str(index + 1), None, old=_call_dict(call))
        for index, call in enumerate(old)
        if call.uid not in new_uids
    }
    return _with_deletions(ordered, [c.uid for c in old], new_uids, moved, deleted)


# --- two stored versions ------------------------------------------------------------------------

GoldShape = Literal["plan", "calls", "acceptable", "turns", "json"]


def gold_shape(reference: Any) -> GoldShape:
    """How a stored gold is diffed: a plan (reference["steps"] or a "plan" tree), expected
    calls (reference["calls"] or ["tool_calls"]), a suite's "acceptable" or "turns" gold (its
    GoldEditing says: BFCL's possible answers and multi-turn ground truth), or any other JSON."""
    listed = list_gold(reference)
    if listed is not None:
        return listed.shape
    if isinstance(reference, Mapping):
        if isinstance(reference.get("steps"), list) or isinstance(reference.get("plan"), list):
            return "plan"
        if isinstance(reference.get("calls"), list) or isinstance(
            reference.get("tool_calls"), list
        ):
            return "calls"
    return "json"


def _lcs_pairs(old: Sequence[str], new: Sequence[str]) -> list[tuple[int, int]]:
    """(old index, new index) of one longest common subsequence of two key lists."""
    rows, cols = len(old), len(new)
    table = [[0] * (cols + 1) for _ in range(rows + 1)]
    for i in range(rows - 1, -1, -1):
        for j in range(cols - 1, -1, -1):
            table[i][j] = (
                table[i + 1][j + 1] + 1
                if old[i] == new[j]
                else max(table[i + 1][j], table[i][j + 1])
            )
    pairs, i, j = [], 0, 0
    while i < rows and j < cols:
        if old[i] == new[j]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def align(
    old_keys: Sequence[str],
    new_keys: Sequence[str],
    old_names: Sequence[str] | None = None,
    new_names: Sequence[str] | None = None,
) -> list[int | None]:
    """For each new item, the index of the old item it is a version of (None: a new item).

    Items equal in content (`keys`) in the same order are the same item (a longest common
    subsequence); an equal item elsewhere is the same item moved; what is left in a gap between
    two paired items is paired by position within the gap, so an edited item reads as changed
    rather than as deleted and inserted."""
    match: list[int | None] = [None] * len(new_keys)
    used: set[int] = set()
    for i, j in _lcs_pairs(old_keys, new_keys):
        match[j] = i
        used.add(i)
    # Moves: an unpaired new item equal to an unpaired old one.
    free: dict[str, list[int]] = {}
    for i, key in enumerate(old_keys):
        if i not in used:
            free.setdefault(key, []).append(i)
    for j, key in enumerate(new_keys):
        if match[j] is None and free.get(key):
            index = free[key].pop(0)
            match[j] = index
            used.add(index)
    # Edits: within each gap between paired items (in old order), pair by position.
    j = 0
    while j < len(new_keys):
        if match[j] is not None:
            j += 1
            continue
        start = j
        while j < len(new_keys) and match[j] is None:
            j += 1
        before = max((m for m in match[:start] if m is not None), default=-1)
        after = min((m for m in match[j:] if m is not None), default=len(old_keys))
        gap = [i for i in range(before + 1, after) if i not in used]
        unpaired = list(range(start, j))
        if old_names is not None and new_names is not None:
            for k in list(unpaired):
                same = [i for i in gap if old_names[i] == new_names[k]]
                if same:
                    match[k] = same[0]
                    gap.remove(same[0])
                    unpaired.remove(k)
        for k, i in zip(unpaired, gap, strict=False):
            match[k] = i
        used.update(m for m in match[start:j] if m is not None)
    return match


def step_pairs(old_steps: Sequence[Step], new_steps: Sequence[Step]) -> list[int | None]:
    """For each step of a new version of a plan, the index of the old version's step it is a
    version of (None: a new step), paired by content (`align`): how a sample's revision history
    and UltraTool's export (which writes a changed step in its published style) pair them."""
    return align(
        [_key(_step_dict(s)) for s in old_steps],
        [_key(_step_dict(s)) for s in new_steps],
        [s.tool or s.text for s in old_steps],
        [s.tool or s.text for s in new_steps],
    )


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _relabel(items: Sequence[Any], old: Sequence[Any], match: Sequence[int | None]) -> list[Any]:
    """The new items with the uids of the old items they are versions of ("n1", "n2", ... for
    new ones)."""
    out, fresh = [], 0
    for item, index in zip(items, match, strict=True):
        if index is None:
            fresh += 1
            uid = f"n{fresh}"
        else:
            uid = old[index].uid
        out.append(replace(item, uid=uid))
    return out


def revision_diff(
    old_reference: Any,
    new_reference: Any,
    *,
    old_query: Any = None,
    new_query: Any = None,
) -> list[Change]:
    """The changes from one stored version of a sample to the next: its query (a "text" change
    keyed "query"), then its gold as plan_diff or calls_diff show it, the steps or calls paired
    by `align`; a gold of any other shape changes key by key (an argument change per top-level
    key, the whole value under the key "gold" when it is not an object)."""
    changes: list[Change] = []
    if old_query != new_query:
        changes.append(Change("text", "query", key="query", old=old_query, new=new_query))
    shape = gold_shape(new_reference)
    if shape != gold_shape(old_reference):
        shape = "json"
    if shape == "plan":
        old_steps = plan_from_reference(old_reference)
        new_steps = plan_from_reference(new_reference)
        match = step_pairs(old_steps, new_steps)
        changes.extend(plan_diff(old_steps, _relabel(new_steps, old_steps, match)))
    elif shape == "calls":
        old_calls = calls_from_reference(old_reference)
        new_calls = calls_from_reference(new_reference)
        match = align(
            [_key(_call_dict(c)) for c in old_calls],
            [_key(_call_dict(c)) for c in new_calls],
            [c.name for c in old_calls],
            [c.name for c in new_calls],
        )
        changes.extend(calls_diff(old_calls, _relabel(new_calls, old_calls, match)))
    elif shape == "acceptable":
        old_calls = acceptable_calls(old_reference)
        new_calls = acceptable_calls(new_reference)
        match = align(
            [_key(_call_dict(c)) for c in old_calls],
            [_key(_call_dict(c)) for c in new_calls],
            [c.name for c in old_calls],
            [c.name for c in new_calls],
        )
        changes.extend(calls_diff(old_calls, _relabel(new_calls, old_calls, match)))
    elif shape == "turns" and len(turn_calls(old_reference)) == len(turn_calls(new_reference)):
        for turn, (old_calls, new_calls) in enumerate(
            zip(turn_calls(old_reference), turn_calls(new_reference), strict=True), start=1
        ):
            match = align(
                [_key(_call_dict(c)) for c in old_calls],
                [_key(_call_dict(c)) for c in new_calls],
                [c.name for c in old_calls],
                [c.name for c in new_calls],
            )
            diff = calls_diff(old_calls, _relabel(new_calls, old_calls, match))
            changes.extend(in_turn(diff, turn))
    elif old_reference != new_reference:
        if isinstance(old_reference, Mapping) and isinstance(new_reference, Mapping):
            changes.extend(_argument_changes("gold", (None, None), old_reference, new_reference))
        else:
            changes.append(
                Change("argument_changed", "gold", key="gold", old=old_reference, new=new_reference)
            )
    return changes


# --- golds of calls with acceptable values, and of calls per turn ---------------------------------


def list_gold(reference: Any) -> GoldEditing | None:
    """The suite's gold editing of an "acceptable" or "turns" gold (None for other golds)."""
    gold = gold_editing(reference)
    return gold if gold is not None and gold.shape in ("acceptable", "turns") else None


def acceptable_calls(reference: Any) -> list[Call]:
    """An "acceptable" gold's calls, each argument's value its list of acceptable values, uids
    "c1", "c2", ... by position ([] for another gold)."""
    gold = list_gold(reference)
    if gold is None or gold.shape != "acceptable" or gold.read_gold is None:
        return []
    return [
        Call(f"c{index}", str(call["name"]), copy.deepcopy(dict(call["arguments"])))
        for index, call in enumerate(gold.read_gold(reference), start=1)
    ]


def written_call(
    gold: GoldEditing, text: str, uid: str, declared: Mapping[str, Sequence[str]] | None = None
) -> Call:
    """A call string of a "turns" gold as a Call (read by the suite's parse_call, never
    evaluated): keyword arguments by name, a positional one by the function's parameter at
    its position in `declared` (function -> parameter names), else "argument <n>"; a call that
    does not parse is named by its text, without arguments."""
    if gold.parse_call is None:
        return Call(uid, text, {})
    try:
        name, args, kwargs = gold.parse_call(text)
    except ValueError:
        return Call(uid, text, {})
    names = list((declared or {}).get(name, ()))
    arguments: dict[str, Any] = {
        names[i] if i < len(names) else f"argument {i + 1}": value for i, value in enumerate(args)
    }
    arguments.update(kwargs)
    return Call(uid, name, arguments)


def turn_calls(reference: Any) -> list[list[Call]]:
    """A "turns" gold's calls per turn ([] for another gold), uids "c1", "c2", ... in turn
    order."""
    gold = list_gold(reference)
    if gold is None or gold.shape != "turns" or gold.read_gold is None:
        return []
    turns, position = [], 0
    for texts in gold.read_gold(reference):
        calls = []
        for text in texts:
            position += 1
            calls.append(written_call(gold, str(text), f"c{position}"))
        turns.append(calls)
    return turns


def in_turn(changes: Sequence[Change], turn: int) -> list[Change]:
    """A turn's changes, its calls numbered "turn.position" (`turn` 1-based)."""
    return [
        replace(
            change,
            old_number=f"{turn}.{change.old_number}" if change.old_number else None,
            new_number=f"{turn}.{change.new_number}" if change.new_number else None,
        )
        for change in changes
    ]
