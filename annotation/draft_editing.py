"""Refinement drafts: an expert edits a sample's gold answer and sees what changed. What a gold
is and how an edit applies to it beyond the draft's shape comes from its suite (the registry's
GoldEditing: the calls key, the step-keyed task golds, what else follows edited calls).

Pure Python (no Django): the views keep a draft, apply one operation per request and render the
result; these functions never touch the database and never mutate their arguments.

Draft shapes
  - A plan (UltraTool, papers/004 section 2.4) is a flat list of `Step(uid, depth, text, tool,
    arguments)` in document order: depth 0 is an ancestral (top-level) step, 1 its child, 2 a
    grandchild. The tree lives in the depths: the first step has depth 0 and a step is at most
    one deeper than the step before it. Numbers ("1", "1.1", "2") are not stored: `numbering`
    computes them, so every operation renumbers for free.
  - Calls (an MTU-Bench turn's `reference["calls"]`, a generic sample's
    `reference["tool_calls"]`) are a flat list of `Call(uid, name, arguments)`.
  - Uids say which version a step or call came from. A draft loaded from a reference gets
    "s1", "s2", ... (steps) or "c1", "c2", ... (calls) by position, so loading the same version
    twice gives equal drafts, and `plan_to_reference` / the diff can find the stored step behind
    each uid. Steps and calls added while editing get "n<k>", k beyond every "n" uid in the
    draft. A draft must therefore be written back against, and diffed with, the version it was
    loaded from.

Arguments are checked against the tool's JSON schema (`arguments_errors`) with allowances for
how the published golds name an earlier call's output (each suite's GoldEditing.output_reference:
an UltraTool placeholder such as "<first connection listed>", an MTU-Bench reference
"ToolName.field" with ToolName in the toolset): they stand for a value of any type, so type and
enum checks skip them. Beyond JSON Schema,
an argument the schema's `properties` do not list is reported (a misspelt name), unless the
schema allows extra properties explicitly.

The steps and calls, loading them from a reference, their numbering and the diff
(`plan_diff`, `calls_diff`) live in benchmarks.kit.golddiff, a layer below, so that a
sample's revision history can show the same diff; they are imported here under their names.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from jsonschema import validators
from jsonschema.exceptions import SchemaError, ValidationError

from benchmarks.kit import registry

# The editor's callers use these as draft_editing.<name> too.
from benchmarks.kit.golddiff import (
    Call,
    Change,  # noqa: F401 (re-exported)
    ChangeKind,  # noqa: F401 (re-exported)
    Step,
    calls_diff,  # noqa: F401 (re-exported)
    calls_from_reference,  # noqa: F401 (re-exported)
    calls_gold,
    calls_key,  # noqa: F401 (re-exported)
    numbering,
    plan_diff,  # noqa: F401 (re-exported)
    plan_from_reference,  # noqa: F401 (re-exported)
    stored_steps,
)
from benchmarks.kit.registry import gold_editing
from config.errors import ApplicationError

Direction = Literal["up", "down"]
FieldType = Literal["string", "integer", "number", "boolean", "enum", "json"]

# Keys of a stored step that the draft holds itself; any other key is carried over by uid.
_STEP_KEYS = ("step", "text", "tool", "arguments", "children")
# Kept only while the step's tool and arguments are unchanged: they describe the published call.
_CALL_KEYS = ("call", "call_error")

_NEW_UID = re.compile(r"^n(\d+)$")
_INTEGER = re.compile(r"^[+-]?\d+$")
_NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
_TRUE = {"true", "on", "yes", "1"}
_FALSE = {"false", "off", "no", "0"}


class RefineError(ApplicationError):
    """An operation that cannot apply to this draft: an unknown uid, a bad direction or depth,
    a draft that cannot be written back. The message is for the person editing."""


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


# --- plan drafts -------------------------------------------------------------------------------


def _tree_problem(steps: Sequence[Step]) -> str | None:
    previous = -1
    for number, step in zip(numbering(steps), steps, strict=True):
        if step.depth < 0 or step.depth > previous + 1:
            where = "the first step" if previous < 0 else f"step {number}"
            return f"{where} is nested more than one level below the step before it"
        previous = step.depth
    return None


def plan_to_reference(
    steps: Sequence[Step], old_reference: Mapping[str, Any] | None
) -> dict[str, Any]:
    """A new reference holding the draft: "plan" (the tree, shaped as the UltraTool importer
    writes it) and "steps" (the same steps flat), both renumbered; every other key is kept.

    `old_reference` must be the version the draft was loaded from (uids "s<i>" name its steps).
    A surviving step keeps its stored extra keys; "call" and "call_error" (the published call
    string and why it did not parse) only while its tool and arguments are unchanged.

    Task golds keyed by step number (the suite's GoldEditing.step_keyed, e.g. UltraTool's
    "tool_usage", "tool_usage_awareness", "tool_selection", ...) follow their step by uid: an
    entry of a surviving step takes the step's new number and the entries are put in the new
    plan order; an entry of a deleted step is dropped, as is one whose number matched no step
    of the old plan. Their content (the
    gold tool, arguments, 0/1) is not changed: editing the plan does not rewrite another task's
    gold. The rest of the reference follows the draft as the suite says (GoldEditing.follow_plan:
    UltraTool's "planning", the plan as text, when it was the old plan's text, line by line in
    its own style).

    Raises RefineError for an empty plan, repeated uids, or a step nested more than one level
    below the step before it.
    """
    if not steps:
        raise RefineError("a plan has at least one step")
    uids = [step.uid for step in steps]
    if len(set(uids)) != len(uids):
        raise RefineError("two steps of the draft share a uid")
    problem = _tree_problem(steps)
    if problem:
        raise RefineError(problem)
    old = dict(old_reference) if isinstance(old_reference, Mapping) else {}
    stored = stored_steps(old)
    stored_by_uid = {f"s{index}": item for index, item in enumerate(stored, start=1)}
    numbers = numbering(steps)

    flat: list[dict[str, Any]] = []
    tree: list[dict[str, Any]] = []
    path: list[dict[str, Any]] = []  # the nodes from the root to the previous step
    for number, step in zip(numbers, steps, strict=True):
        item: dict[str, Any] = {
            "step": number,
            "text": step.text,
            "tool": step.tool,
            "arguments": copy.deepcopy(step.arguments),
        }
        before = stored_by_uid.get(step.uid)
        if before is not None:
            same_call = before.get("tool") == step.tool and before.get("arguments") == (
                step.arguments
            )
            for key, value in before.items():
                if key in _STEP_KEYS or (key in _CALL_KEYS and not same_call):
                    continue
                item[key] = copy.deepcopy(value)
        flat.append(item)
        node = {**copy.deepcopy(item), "children": []}
        del path[step.depth :]
        (path[-1]["children"] if path else tree).append(node)
        path.append(node)

    reference = copy.deepcopy(old)
    reference["plan"] = tree
    reference["steps"] = flat
    gold = gold_editing(old)
    _remap_golds(reference, stored, steps, numbers, gold.step_keyed if gold else ())
    if gold is not None and gold.follow_plan is not None and stored:
        was = [(str(item.get("step")), str(item.get("text") or "")) for item in stored]
        index_of = {f"s{index}": index - 1 for index in range(1, len(stored) + 1)}
        now = [
            (index_of.get(step.uid), (number, step.text))
            for number, step in zip(numbers, steps, strict=True)
        ]
        gold.follow_plan(reference, was, now)
    return reference


def _remap_golds(
    reference: dict[str, Any],
    stored: Sequence[Mapping[str, Any]],
    steps: Sequence[Step],
    numbers: Sequence[str],
    step_keyed: Sequence[str],
) -> None:
    uid_of_old_number = {
        str(item.get("step")): f"s{index}" for index, item in enumerate(stored, start=1)
    }
    position = {step.uid: index for index, step in enumerate(steps)}
    for key in step_keyed:
        gold = reference.get(key)
        if not isinstance(gold, list):
            continue
        kept: list[tuple[int, dict[str, Any]]] = []
        for entry in gold:
            if not isinstance(entry, dict):
                continue
            uid = uid_of_old_number.get(str(entry.get("step")))
            if uid is None or uid not in position:
                continue  # the step was deleted (or never was in the plan): nothing to grade
            index = position[uid]
            kept.append((index, {**entry, "step": numbers[index]}))
        # sorted() is stable: entries of one step keep their order.
        reference[key] = [entry for _, entry in sorted(kept, key=lambda pair: pair[0])]


class _Uided(Protocol):
    @property
    def uid(self) -> str: ...


def next_uid(items: Iterable[_Uided]) -> str:
    """The uid the next inserted step or call gets: "n<k>", k beyond every "n" uid present."""
    highest = 0
    for item in items:
        match = _NEW_UID.match(item.uid)
        if match:
            highest = max(highest, int(match.group(1)))
    return f"n{highest + 1}"


def _index(items: Sequence[Step] | Sequence[Call], uid: str) -> int:
    for index, item in enumerate(items):
        if item.uid == uid:
            return index
    raise RefineError(f"no step or call {uid!r} in this draft (reload the page)")


def _subtree_end(steps: Sequence[Step], index: int) -> int:
    """The index just past the step's subtree (the step and its descendants)."""
    end = index + 1
    while end < len(steps) and steps[end].depth > steps[index].depth:
        end += 1
    return end


def _direction(direction: str) -> None:
    if direction not in ("up", "down"):
        raise RefineError(f"direction must be 'up' or 'down', got {direction!r}")


def step_insert(
    steps: Sequence[Step],
    after_uid: str | None,
    *,
    text: str = "",
    depth: int | None = None,
    tool: str | None = None,
    arguments: dict[str, Any] | None = None,
) -> list[Step]:
    """A new step (uid `next_uid(steps)`) after the step `after_uid`, or first when None.

    After step X at depth d: depth None or d makes it X's next sibling (placed after X's
    children, so it does not adopt them); d + 1 makes it X's first child; a smaller depth k makes
    it the next sibling of X's ancestor at depth k (after that ancestor's subtree). First in the
    plan, the depth is 0. Raises RefineError for an unknown uid or a depth the tree cannot take.
    """
    new = Step(
        uid=next_uid(steps),
        depth=0,
        text=text.strip(),
        tool=tool,
        arguments=copy.deepcopy(arguments),
    )
    if after_uid is None:
        if depth not in (None, 0):
            raise RefineError("the first step of a plan is a top-level step")
        return [new, *steps]
    index = _index(steps, after_uid)
    anchor = steps[index]
    depth = anchor.depth if depth is None else depth
    if depth < 0 or depth > anchor.depth + 1:
        raise RefineError(
            f"a step after a step at depth {anchor.depth} can be at depth 0 to {anchor.depth + 1}"
        )
    if depth == anchor.depth + 1:
        at = index + 1
    else:
        # The ancestor-or-self of the anchor at this depth: its subtree ends where the new
        # sibling goes.
        ancestor = index
        while steps[ancestor].depth > depth:
            ancestor -= 1
        at = _subtree_end(steps, ancestor)
    return [*steps[:at], replace(new, depth=depth), *steps[at:]]


def step_delete(steps: Sequence[Step], uid: str) -> list[Step]:
    """Without the step and its descendants."""
    index = _index(steps, uid)
    return [*steps[:index], *steps[_subtree_end(steps, index) :]]


def step_move(steps: Sequence[Step], uid: str, direction: Direction) -> list[Step]:
    """The step and its subtree swapped with the neighbouring sibling subtree ("up": the one
    before, "down": the one after). A step never leaves its parent: at either end of its
    siblings this is a no-op (an equal copy of the list)."""
    _direction(direction)
    index = _index(steps, uid)
    end = _subtree_end(steps, index)
    depth = steps[index].depth
    if direction == "up":
        before = index - 1
        while before >= 0 and steps[before].depth > depth:
            before -= 1
        if before < 0 or steps[before].depth != depth:
            return list(steps)
        return [*steps[:before], *steps[index:end], *steps[before:index], *steps[end:]]
    if end >= len(steps) or steps[end].depth != depth:
        return list(steps)
    after_end = _subtree_end(steps, end)
    return [*steps[:index], *steps[end:after_end], *steps[index:end], *steps[after_end:]]


def _shift(steps: Sequence[Step], index: int, by: int) -> list[Step]:
    end = _subtree_end(steps, index)
    moved = [replace(step, depth=step.depth + by) for step in steps[index:end]]
    return [*steps[:index], *moved, *steps[end:]]


def can_indent(steps: Sequence[Step], uid: str) -> bool:
    """Whether `step_indent` would change the draft: the step has a sibling before it."""
    index = _index(steps, uid)
    return index > 0 and steps[index - 1].depth >= steps[index].depth


def can_outdent(steps: Sequence[Step], uid: str) -> bool:
    """Whether `step_outdent` would change the draft: the step is not top-level."""
    return steps[_index(steps, uid)].depth > 0


def step_indent(steps: Sequence[Step], uid: str) -> list[Step]:
    """The step, with its subtree, one level deeper: it becomes the last child of the sibling
    before it. A no-op when there is no such sibling (the tree would break)."""
    if not can_indent(steps, uid):
        return list(steps)
    return _shift(steps, _index(steps, uid), +1)


def step_outdent(steps: Sequence[Step], uid: str) -> list[Step]:
    """The step, with its subtree, one level up, in place: the order of steps never changes
    (a plan is done in order), so siblings that came after it become its children. A no-op for
    a top-level step."""
    if not can_outdent(steps, uid):
        return list(steps)
    return _shift(steps, _index(steps, uid), -1)


def step_set(
    steps: Sequence[Step],
    uid: str,
    *,
    text: str = UNSET,
    tool: str | None = UNSET,
    arguments: dict[str, Any] | None = UNSET,
) -> list[Step]:
    """The step with the given fields replaced (text stripped). Setting `tool` to None without
    giving `arguments` clears the arguments too: a tool-free step takes none."""
    index = _index(steps, uid)
    changes: dict[str, Any] = {}
    if text is not UNSET:
        changes["text"] = text.strip()
    if tool is not UNSET:
        changes["tool"] = tool or None
        if not tool and arguments is UNSET:
            changes["arguments"] = None
    if arguments is not UNSET:
        changes["arguments"] = copy.deepcopy(arguments)
    return [*steps[:index], replace(steps[index], **changes), *steps[index + 1 :]]


def steps_dump(steps: Sequence[Step]) -> list[dict[str, Any]]:
    """The draft as JSON-ready dicts (for a hidden form field or the session)."""
    return [
        {
            "uid": step.uid,
            "depth": step.depth,
            "text": step.text,
            "tool": step.tool,
            "arguments": copy.deepcopy(step.arguments),
        }
        for step in steps
    ]


def steps_load(data: Any) -> list[Step]:
    """A draft back from `steps_dump` output that came through the browser; RefineError when
    it is not one."""
    if not isinstance(data, list):
        raise RefineError("the draft is not a list of steps")
    steps = []
    for item in data:
        if not (
            isinstance(item, dict)
            and isinstance(item.get("uid"), str)
            and isinstance(item.get("depth"), int)
            and not isinstance(item.get("depth"), bool)
            and isinstance(item.get("text"), str)
            and isinstance(item.get("tool"), str | None)
            and isinstance(item.get("arguments"), dict | None)
        ):
            raise RefineError("the draft holds something that is not a step")
        steps.append(
            Step(item["uid"], item["depth"], item["text"], item["tool"], item["arguments"])
        )
    if len({step.uid for step in steps}) != len(steps):
        raise RefineError("two steps of the draft share a uid")
    return steps


# --- call drafts -------------------------------------------------------------------------------


def calls_to_reference(
    calls: Sequence[Call], old_reference: Mapping[str, Any] | None, *, split: str | None = None
) -> dict[str, Any]:
    """A new reference with the draft's calls under the key the old one used (its suite's
    GoldEditing.calls_key: "calls" for MTU-Bench; "tool_calls" otherwise, also when there was no
    reference); other keys kept, except what the suite's `write_calls` rebuilds from the calls.

    MTU-Bench ("calls"): "answer", the published object, is rebuilt as {name: arguments} in
    call order, and kept as it was when the calls did not change (it tells {"": {}} from {}, a
    name written with a leading space, arguments written as a JSON string). An empty list keeps
    the old no-call encoding; when the old answer had calls, the empty answer is {"": {}} for
    the S-S and M-S splits (`split`) and {} otherwise, as the published files write it. The
    published answer holds one call per tool name, so a repeated name raises RefineError
    (`calls_errors(..., one_call_per_tool=True)` reports it first). A generic sample's "answer"
    (the expected final answer) is not touched.
    """
    gold = calls_gold(old_reference)
    key = gold.calls_key if gold is not None else "tool_calls"
    old = dict(old_reference) if isinstance(old_reference, Mapping) else {}
    reference = copy.deepcopy(old)
    written = [{"name": call.name, "arguments": copy.deepcopy(call.arguments)} for call in calls]
    reference[key] = written
    if gold is None or gold.write_calls is None:
        return reference
    try:
        gold.write_calls(written, old, reference, split)
    except ValueError as exc:
        raise RefineError(str(exc)) from None
    return reference


def call_insert(
    calls: Sequence[Call],
    after_uid: str | None,
    *,
    name: str = "",
    arguments: dict[str, Any] | None = None,
) -> list[Call]:
    """A new call (uid `next_uid(calls)`) after `after_uid`, or first when None."""
    new = Call(uid=next_uid(calls), name=name.strip(), arguments=copy.deepcopy(arguments or {}))
    at = 0 if after_uid is None else _index(calls, after_uid) + 1
    return [*calls[:at], new, *calls[at:]]


def call_delete(calls: Sequence[Call], uid: str) -> list[Call]:
    """Without the call."""
    index = _index(calls, uid)
    return [*calls[:index], *calls[index + 1 :]]


def call_move(calls: Sequence[Call], uid: str, direction: Direction) -> list[Call]:
    """The call swapped with its neighbour; a no-op at either end."""
    _direction(direction)
    index = _index(calls, uid)
    other = index - 1 if direction == "up" else index + 1
    if not 0 <= other < len(calls):
        return list(calls)
    moved = list(calls)
    moved[index], moved[other] = moved[other], moved[index]
    return moved


def call_set(
    calls: Sequence[Call],
    uid: str,
    *,
    name: str = UNSET,
    arguments: dict[str, Any] = UNSET,
) -> list[Call]:
    """The call with the given fields replaced (name stripped)."""
    index = _index(calls, uid)
    changes: dict[str, Any] = {}
    if name is not UNSET:
        changes["name"] = name.strip()
    if arguments is not UNSET:
        changes["arguments"] = copy.deepcopy(arguments)
    return [*calls[:index], replace(calls[index], **changes), *calls[index + 1 :]]


def calls_dump(calls: Sequence[Call]) -> list[dict[str, Any]]:
    """The draft as JSON-ready dicts."""
    return [
        {"uid": call.uid, "name": call.name, "arguments": copy.deepcopy(call.arguments)}
        for call in calls
    ]


def calls_load(data: Any) -> list[Call]:
    """A draft back from `calls_dump` output; RefineError when it is not one."""
    if not isinstance(data, list):
        raise RefineError("the draft is not a list of calls")
    calls = []
    for item in data:
        if not (
            isinstance(item, dict)
            and isinstance(item.get("uid"), str)
            and isinstance(item.get("name"), str)
            and isinstance(item.get("arguments"), dict)
        ):
            raise RefineError("the draft holds something that is not a call")
        calls.append(Call(item["uid"], item["name"], item["arguments"]))
    if len({call.uid for call in calls}) != len(calls):
        raise RefineError("two calls of the draft share a uid")
    return calls


# --- argument forms ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    """One argument of a tool as a form field. `type` "json" is for objects, arrays and
    anything the schema does not type plainly; `schema` is the property's own schema."""

    name: str
    type: FieldType
    required: bool = False
    enum: list[Any] = field(default_factory=list)
    description: str = ""
    default: Any = None
    examples: list[Any] = field(default_factory=list)
    schema: dict[str, Any] = field(default_factory=dict)


def _properties(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    if not isinstance(schema, Mapping):
        return {}
    properties = schema.get("properties")
    return dict(properties) if isinstance(properties, Mapping) else {}


def _field_type(schema: Mapping[str, Any]) -> FieldType:
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return "enum"
    declared = schema.get("type")
    if isinstance(declared, list):
        # ["string", "null"]: a nullable string is edited as a string ("" leaves it out).
        plain = [kind for kind in declared if kind != "null"]
        declared = plain[0] if len(plain) == 1 else None
    if declared in ("string", "integer", "number", "boolean"):
        return declared
    return "json"


def schema_fields(schema: Mapping[str, Any] | None) -> list[Field]:
    """The form fields of a tool's arguments schema, in the schema's property order."""
    required = schema.get("required") if isinstance(schema, Mapping) else None
    required_names = set(required) if isinstance(required, list) else set()
    fields = []
    for name, raw in _properties(schema).items():
        prop = dict(raw) if isinstance(raw, Mapping) else {}
        examples = prop.get("examples")
        examples = list(examples) if isinstance(examples, list) else []
        if "example" in prop:  # MTU-Bench keeps its published hint under this name
            examples.append(prop["example"])
        fields.append(
            Field(
                name=str(name),
                type=_field_type(prop),
                required=name in required_names,
                enum=list(prop["enum"]) if isinstance(prop.get("enum"), list) else [],
                description=str(prop.get("description") or ""),
                default=prop.get("default"),
                examples=examples,
                schema=prop,
            )
        )
    return fields


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def field_text(item: Field, value: Any) -> str:
    """The text a form field shows for an argument value ("" when absent)."""
    if value is None:
        return ""
    if isinstance(value, str) and (item.type in ("string", "enum") or _looks_like_reference(value)):
        return value
    if isinstance(value, str) and item.type == "json" and not item.schema.get("type"):
        return value  # an untyped field reads plain text back as a string
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    return _json_text(value)


def form_from_arguments(
    schema: Mapping[str, Any] | None, arguments: Mapping[str, Any] | None, *, prefix: str = ""
) -> dict[str, str]:
    """The form's initial texts for a call's arguments: the inverse of `arguments_from_form`.
    Arguments the schema does not list have no field (arguments_errors reports them)."""
    arguments = arguments or {}
    return {
        prefix + item.name: field_text(item, arguments.get(item.name))
        for item in schema_fields(schema)
    }


def _looks_like_reference(text: str) -> bool:
    return registry.is_output_reference(text, None)


def is_output_reference(value: Any, tools: Collection[str] = ()) -> bool:
    """Whether an argument value names an earlier call's output rather than giving a value:
    an UltraTool placeholder "<obtained flight number>", or an MTU-Bench "ToolName.field" whose
    ToolName is in `tools` (the suites' GoldEditing.output_reference)."""
    return isinstance(value, str) and registry.is_output_reference(value, tools)


def _coerce(item: Field, text: str) -> tuple[Any, str | None]:
    """(value, None) or (None, message) for one field's text, which is not blank."""
    stripped = text.strip()
    if item.type == "string":
        return text, None
    if item.type == "integer" and _INTEGER.match(stripped):
        return int(stripped), None
    if item.type == "number":
        if _INTEGER.match(stripped):
            return int(stripped), None  # 5 stays 5, as the gold wrote it, not 5.0
        if _NUMBER.match(stripped) and math.isfinite(float(stripped)):
            return float(stripped), None
    if item.type == "boolean":
        if stripped.lower() in _TRUE:
            return True, None
        if stripped.lower() in _FALSE:
            return False, None
    if item.type == "enum":
        for choice in item.enum:
            if choice in (text, stripped):
                return choice, None
        for choice in item.enum:
            if not isinstance(choice, str) and _json_text(choice) == stripped:
                return choice, None
    if item.type != "json":
        if _looks_like_reference(stripped):
            return stripped, None  # another call's output: arguments_errors judges it
        return None, {
            "integer": "expected a whole number",
            "number": "expected a number",
            "boolean": "expected true or false",
        }.get(item.type, f"must be one of: {_choices(item.enum)}")
    try:
        return json.loads(stripped), None
    except (json.JSONDecodeError, RecursionError):
        if not item.schema.get("type"):
            return text, None  # untyped: plain text is a string, not a JSON mistake
        return None, "is not valid JSON (text in double quotes, lists in [ ], objects in { })"


def _choices(values: Sequence[Any]) -> str:
    return ", ".join(value if isinstance(value, str) else _json_text(value) for value in values)


def arguments_from_form(
    schema: Mapping[str, Any] | None, form: Mapping[str, str], *, prefix: str = ""
) -> tuple[dict[str, Any], dict[str, str]]:
    """Typed arguments from a form's texts, and the fields whose text cannot be read.

    One field per schema property, read from form[prefix + name]: "" (or only spaces, or no
    key) leaves the argument out; integers and numbers are parsed (never evaluated); booleans
    read "true"/"on"/"yes"/"1" and "false"/"off"/"no"/"0"; an enum takes one of its values (a
    non-string value written as JSON); json fields are parsed as JSON, except that an untyped
    field takes text that is not JSON as a string. In a non-string field, a placeholder
    "<...>" or "Tool.field" is kept as a string for `arguments_errors` to judge. Errors are
    {argument name: message}; schema rules (required, enum on json fields, ranges) are
    `arguments_errors`'s.
    """
    arguments: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for item in schema_fields(schema):
        text = form.get(prefix + item.name) or ""
        if not text.strip():
            continue
        value, error = _coerce(item, text)
        if error:
            errors[item.name] = error
        else:
            arguments[item.name] = value
    return arguments, errors


def arguments_from_json(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """(arguments, None) from a JSON object's text, for a tool whose schema lists no
    properties; (None, message) when it is not one. Blank text is no arguments."""
    if not text.strip():
        return {}, None
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        return None, f"is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
    if not isinstance(value, dict):
        return None, 'must be a JSON object, {"name": value, ...}'
    return value, None


# --- schema checks -----------------------------------------------------------------------------

_TYPE_WORDS = {
    "string": "text",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "object": "an object",
    "array": "a list",
    "null": "null",
}


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the text {_json_text(shown)}"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _where(path: Sequence[Any]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out.lstrip(".")


def _message(error: ValidationError) -> str:
    """A sentence a person can read for one jsonschema error below an argument."""
    kind = error.validator
    if kind == "type":
        expected = error.validator_value
        kinds = expected if isinstance(expected, list) else [expected]
        words = " or ".join(_TYPE_WORDS.get(str(k), str(k)) for k in kinds)
        message = f"expected {words}, got {_describe(error.instance)}"
    elif kind == "enum":
        message = (
            f"must be one of: {_choices(error.validator_value)} (got {_describe(error.instance)})"
        )
    elif kind == "const":
        message = f"must be {_json_text(error.validator_value)}"
    elif kind == "required":
        missing = [
            name
            for name in error.validator_value
            if isinstance(error.instance, dict) and name not in error.instance
        ]
        message = f"{', '.join(missing) or 'a property'} is required"
    else:
        message = error.message
    inner = _where(list(error.path)[1:])
    return f"at {inner}: {message}" if inner else message


def arguments_errors(
    schema: Mapping[str, Any] | None, arguments: Any, *, tools: Collection[str] = ()
) -> dict[str, str]:
    """The ways the arguments break the tool's schema, {argument name: message}: a missing
    required argument ("is required"), a wrong type or enum value, an argument the schema does
    not list, and any other JSON Schema rule (format hints are not checked: the published ones
    are not JSON Schema formats). A value that names an earlier call's output
    (`is_output_reference`, with `tools` the sample's tool names) is not checked. Errors that
    belong to no one argument, or a schema that cannot be used, are under "".
    """
    if not isinstance(arguments, Mapping):
        return {"": f"the arguments must be an object, got {_describe(arguments)}"}
    schema = dict(schema) if isinstance(schema, Mapping) else {}
    errors: dict[str, str] = {}

    def add(name: str, message: str) -> None:
        errors.setdefault(name, message)  # the first problem of an argument is enough to fix

    properties = _properties(schema)
    additional = schema.get("additionalProperties")
    # JSON Schema allows unlisted properties by default; a refined gold should not carry a
    # misspelt argument name, so they are reported unless the schema allows them explicitly.
    closed = additional is None or additional is False
    if closed and "properties" in schema and "patternProperties" not in schema:
        listed = ", ".join(properties) or "none"
        for name in arguments:
            if name not in properties:
                add(name, f"is not an argument of this tool (its arguments: {listed})")

    try:
        validator_class = validators.validator_for(schema, default=validators.Draft202012Validator)
        validator_class.check_schema(schema)
        found = sorted(
            validator_class(schema).iter_errors(dict(arguments)),
            key=lambda e: [str(p) for p in e.path],
        )
    except SchemaError as exc:
        return {"": f"the tool's schema is not valid JSON Schema ({exc.message}); not checked"}
    except (
        Exception
    ) as exc:  # a published schema (a bad regex, a lost $ref) never crashes the editor
        return {"": f"the tool's schema cannot be used ({exc}); not checked"}

    for error in found:
        path = list(error.path)
        if not path:
            if error.validator == "required":
                for name in error.validator_value:
                    if name not in arguments:
                        add(str(name), "is required")
                continue
            if error.validator == "additionalProperties" and additional is False:
                continue  # reported above, naming each argument
            add("", _message(error))
            continue
        name = str(path[0])
        if is_output_reference(arguments.get(name), tools):
            continue
        add(name, _message(error))
    return errors


def _argument_problems(errors: Mapping[str, str]) -> list[str]:
    return [f"argument {name}: {message}" if name else message for name, message in errors.items()]


def plan_errors(
    steps: Sequence[Step], tools: Mapping[str, Mapping[str, Any] | None]
) -> dict[str, str]:
    """What stops the draft being saved, {step uid: message} (several problems of a step joined
    by "; "; "" for the whole plan): an empty plan, a step nested more than one level below the
    step before it, empty text or text over more than one line (the planning gold is one step a
    line), a tool not in `tools` (name -> arguments schema: this sample's toolset), arguments
    that break the tool's schema (naming the argument), arguments on a tool-free step, a tool
    step whose arguments are not given (None: the published call did not parse; {} is "no
    arguments")."""
    if not steps:
        return {"": "a plan has at least one step"}
    problems: dict[str, list[str]] = {}
    previous = -1
    for step in steps:
        found = problems.setdefault(step.uid, [])
        if step.depth < 0 or step.depth > previous + 1:
            found.append("is nested more than one level below the step before it")
        previous = step.depth
        if not step.text.strip():
            found.append("the step has no text")
        elif "\n" in step.text.strip() or "\r" in step.text.strip():
            found.append("a step's text is one line")
        if step.tool is None:
            if step.arguments is not None:
                found.append("a tool-free step takes no arguments")
        elif step.tool not in tools:
            found.append(f"tool {step.tool} is not in this sample's toolset")
        elif step.arguments is None:
            # The published call did not parse, or named the tool bare: the gold is incomplete.
            found.append("the call's arguments are not given")
        else:
            errors = arguments_errors(tools[step.tool], step.arguments, tools=tools)
            found.extend(_argument_problems(errors))
    return {uid: "; ".join(found) for uid, found in problems.items() if found}


def calls_errors(
    calls: Sequence[Call],
    tools: Mapping[str, Mapping[str, Any] | None],
    *,
    one_call_per_tool: bool = False,
) -> dict[str, str]:
    """What stops the calls being saved, {call uid: message}: no tool name, a tool not in
    `tools` (this sample's toolset), arguments that break its schema. An empty list is valid
    (the right move is to call no tool). With `one_call_per_tool` (MTU-Bench, whose answer is
    an object keyed by tool name) a second call of a tool is reported."""
    problems: dict[str, list[str]] = {}
    seen: set[str] = set()
    for call in calls:
        found = problems.setdefault(call.uid, [])
        if not call.name.strip():
            found.append("the call names no tool")
        elif call.name not in tools:
            found.append(f"tool {call.name} is not in this sample's toolset")
        else:
            errors = arguments_errors(tools[call.name], call.arguments, tools=tools)
            found.extend(_argument_problems(errors))
        if one_call_per_tool and call.name in seen:
            found.append(
                f"tool {call.name} is already called above; the answer holds one call per tool"
            )
        seen.add(call.name)
    return {uid: "; ".join(found) for uid, found in problems.items() if found}
