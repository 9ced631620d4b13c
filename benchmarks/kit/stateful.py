"""Tools executed locally against a per-item state, and the turn check that compares a model's
state with the gold's. Pure Python, no Django.

Some benchmarks give the model tools that we run ourselves rather than serve: a calculator, or
the methods of small simulated systems (a file system, a trading account, a vehicle) whose
state the model's calls change. Scoring those compares what the calls did, not how they were
written, so every call is executed and its effect kept.

A `Toolset` declares such tools once: the `ToolSpec`s the model is offered (JSON Schema
parameters), how a fresh state starts from an item and its launch context, how one call is
executed against a state, and how a state is snapshotted as JSON values. `stateless_toolset`
is the case without state (the state is None, every snapshot {}); `object_toolset` the case
where each tool is a method of one of the item's Python instances (`Method`) and a snapshot is
every instance's public attributes.

A `Session` is one item's run of a toolset: the suite's solve loop (a text ReAct loop or a
native tool-call loop) opens a turn per user turn, executes the model's calls through
`Session.call` (or the `Tool`s of `Session.tools`, for loops written against `Tool`) and ends
the turn. The session records every call with its observation and the state's snapshot before
and after each turn (`Session.record`, JSON values an Outcome's detail can store and a review
page can show). The gold's calls run in a session of their own, on their own fresh state
(`Session.run_turn`).

`check_turn` is the rule of stateful multi-turn benchmarks (BFCL's multi-turn checker, written
for any toolset): after a turn in which the gold calls something, the model must have called
something too, every instance's snapshot must equal the gold's, and every result the gold's
calls gave in that turn must be among the results of the model's calls so far (as a multiset,
in any order: a model may have fetched something in an earlier turn). A turn in which the gold
calls nothing is not compared (whether the model should have abstained is the suite's own
rule). One failed turn fails the entry (`entry_passed`).

Safety: the model's text is never evaluated; arguments are JSON values, checked against the
tool's schema (declared names, required names, JSON types, enums) before anything runs, and
passed as keyword arguments to the method the toolset declares for the tool, never looked up
by the model's words. A call that fails becomes an observation beginning "Error:" (unknown
tool, bad arguments, or the exception the tool raised, named); no exception of a call escapes
to the run. `Limits` bound the calls executed per turn (later ones are refused and counted, not
run or recorded), the size of a call's arguments and the length of an observation.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from benchmarks.kit.base import shown
from benchmarks.kit.native import json_type
from benchmarks.kit.protocol import Item, Tool, ToolSpec

__all__ = [
    "Call",
    "CallError",
    "Difference",
    "Instances",
    "Limits",
    "Method",
    "Session",
    "Snapshot",
    "ToolError",
    "Toolset",
    "Turn",
    "TurnKind",
    "TurnVerdict",
    "argument_problem",
    "bounded_snapshot",
    "check_turn",
    "check_turns",
    "compare_snapshots",
    "entry_passed",
    "jsonable",
    "missing_results",
    "object_toolset",
    "public_state",
    "stateless_toolset",
    "stored_differences",
]

S = TypeVar("S")

# A state as JSON values: instance name -> attribute -> value (a stateless toolset's is {}).
Snapshot = dict[str, Any]

# Why a call did not give a result: the model named no offered tool, its arguments do not fit
# the tool's schema, the tool raised, or the turn had already used its calls.
CallError = Literal["unknown_tool", "bad_arguments", "failed", "call_limit"]

ERROR = "Error: "
_MAX_DEPTH = 32
_MAX_SHOWN_VALUE = 200
_MAX_NAME = 200
_CYCLE = "(cycle)"
_TOO_DEEP = "(nested too deep)"


class ToolError(Exception):
    """Raised by a tool for a failure whose message the model should read as it is (the
    observation is "Error: <message>"); any other exception is named with its type."""


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on what one session executes: a loop that asks without end, arguments too large
    to be a real call, and a result too long for a prompt are refused or cut here, whatever
    the suite's loop bounds itself."""

    calls_per_turn: int = 100
    argument_chars: int = 20_000
    observation_chars: int = 8_000


@dataclass(frozen=True)
class Toolset(Generic[S]):
    """Locally executed tools (see the module docstring). `execute` returns the call's result
    (a text as it is, other values as JSON text); it may raise, `Session.call` turns that into
    an error observation. `snapshot` gives the state by instance name; the session keeps it as
    JSON values (`jsonable`), a copy the state's later changes do not reach."""

    tools: tuple[ToolSpec, ...]
    start: Callable[[Item, Mapping[str, Any]], S]
    execute: Callable[[S, str, dict[str, Any]], object]
    snapshot: Callable[[S], Snapshot]
    limits: Limits = Limits()

    def __post_init__(self) -> None:
        names = [spec.name for spec in self.tools]
        if len(set(names)) != len(names):
            raise ValueError(f"a toolset declares each tool once; got {names}")

    def spec(self, name: str) -> ToolSpec | None:
        return next((spec for spec in self.tools if spec.name == name), None)

    def session(self, item: Item, context: Mapping[str, Any]) -> Session[S]:
        """A session on a fresh state for `item` (its launch context: what `prepare` stored)."""
        return Session(self, self.start(item, context))


def _no_state(item: Item, context: Mapping[str, Any]) -> None:
    return None


def _empty_snapshot(state: object) -> Snapshot:
    return {}


def stateless_toolset(
    tools: Sequence[ToolSpec],
    execute: Callable[[str, dict[str, Any]], object],
    limits: Limits = Limits(),
) -> Toolset[None]:
    """Tools without state (a calculator): `execute(name, arguments)`; every snapshot is {}."""

    def run(state: None, name: str, arguments: dict[str, Any]) -> object:
        return execute(name, arguments)

    return Toolset(tuple(tools), _no_state, run, _empty_snapshot, limits)


# --- tools that are methods of instances --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Method:
    """Where a tool runs: the method named `method` of the state's instance `instance`."""

    instance: str
    method: str


Instances = dict[str, object]


def object_toolset(
    tools: Sequence[ToolSpec],
    methods: Mapping[str, Method],
    start: Callable[[Item, Mapping[str, Any]], Instances],
    limits: Limits = Limits(),
) -> Toolset[Instances]:
    """Tools that are methods of Python instances, one set per item: `start` builds the item's
    instances by name (loaded with the item's initial configuration), `methods` says which
    method of which instance each tool is. A snapshot is every instance's public attributes
    (`public_state`). A tool whose instance the item did not start fails with an observation
    saying so."""
    undeclared = sorted(set(methods) - {spec.name for spec in tools})
    missing = sorted({spec.name for spec in tools} - set(methods))
    if undeclared or missing:
        raise ValueError(
            f"every tool needs one method: without a spec {undeclared}, without a method {missing}"
        )

    def execute(instances: Instances, name: str, arguments: dict[str, Any]) -> object:
        where = methods[name]
        instance = instances.get(where.instance)
        if instance is None:
            raise ToolError(f"{name} is not available for this item")
        return getattr(instance, where.method)(**arguments)

    def snapshot(instances: Instances) -> Snapshot:
        # Raw attributes: the session turns the whole snapshot into JSON values once.
        return {name: _public(instance) for name, instance in instances.items()}

    return Toolset(tuple(tools), start, execute, snapshot, limits)


def _public(instance: object) -> dict[str, Any]:
    attributes = getattr(instance, "__dict__", None)
    if not isinstance(attributes, dict):
        return {}
    return {str(k): v for k, v in attributes.items() if not str(k).startswith("_")}


def public_state(instance: object) -> dict[str, Any]:
    """An instance's attributes whose names do not start with "_", as JSON values: what a
    benchmark compares (its private attributes are bookkeeping, not state)."""
    state = jsonable(_public(instance))
    return state if isinstance(state, dict) else {}


def jsonable(value: Any, _depth: int = 0, _path: frozenset[int] = frozenset()) -> Any:
    """`value` as JSON values, copied (a snapshot must not change when the state does):
    tuples and lists as lists, sets as sorted lists, mappings with text keys, dataclasses and
    other objects as their public attributes, text with the characters PostgreSQL cannot
    store escaped; a non-finite float and anything else as its text. An object met again
    inside itself is "(cycle)", deeper than 32 levels "(nested too deep)"."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return shown(value)
    if _depth >= _MAX_DEPTH:
        return _TOO_DEEP
    if id(value) in _path:
        return _CYCLE
    path = _path | {id(value)}
    depth = _depth + 1
    if isinstance(value, Mapping):
        return {shown(str(k)): jsonable(v, depth, path) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v, depth, path) for v in value]
    if isinstance(value, set | frozenset):
        items = [jsonable(v, depth, path) for v in value]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return {k: jsonable(v, depth, path) for k, v in fields.items() if not k.startswith("_")}
    if isinstance(getattr(value, "__dict__", None), dict):
        return {
            str(k): jsonable(v, depth, path)
            for k, v in vars(value).items()
            if not str(k).startswith("_")
        }
    return shown(str(value))


# --- the arguments' check -----------------------------------------------------------------------

_PYTHON_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def _type_problem(value: Any, schema: Any, where: str, depth: int = 0) -> str | None:
    if not isinstance(schema, Mapping) or depth > _MAX_DEPTH:
        return None
    declared = schema.get("type")
    words = declared if isinstance(declared, list) else [declared]
    types = [t for t in (json_type(w) for w in words) if t is not None]
    if types and not any(_PYTHON_TYPES[t](value) for t in types):
        return f"{where} must be {' or '.join(types)}, got {_json_word(value)}"
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and value not in enum:
        return f"{where} must be one of {json.dumps(enum, default=str)[:_MAX_SHOWN_VALUE]}"
    if isinstance(value, list):
        for index, entry in enumerate(value):
            problem = _type_problem(entry, schema.get("items"), f"{where}[{index}]", depth + 1)
            if problem:
                return problem
    if isinstance(value, dict) and isinstance(schema.get("properties"), Mapping):
        for key, entry in value.items():
            sub = schema["properties"].get(key)
            problem = _type_problem(entry, sub, f"{where}.{key}", depth + 1)
            if problem:
                return problem
    return None


def _json_word(value: Any) -> str:
    for word, matches in _PYTHON_TYPES.items():
        if word != "number" and matches(value):
            return word
    return "number" if _PYTHON_TYPES["number"](value) else type(value).__name__


def argument_problem(spec: ToolSpec, arguments: Mapping[str, Any]) -> str | None:
    """What is wrong with `arguments` for `spec`'s JSON Schema, or None: names it does not
    declare (when it declares any), a required name missing, a value of the wrong JSON type or
    outside an enum. Other keywords (lengths, patterns) are the tool's to check."""
    schema = spec.parameters if isinstance(spec.parameters, Mapping) else {}
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required = [r for r in schema.get("required", ()) if isinstance(r, str)]
    if properties:
        unknown = [k for k in arguments if k not in properties]
        if unknown:
            known = ", ".join(properties)
            return f"unknown argument {unknown[0]!r}; {spec.name} takes {known}"
    absent = [name for name in required if name not in arguments]
    if absent:
        return f"missing required argument {absent[0]!r}"
    for key, value in arguments.items():
        problem = _type_problem(value, properties.get(key), repr(key))
        if problem:
            return problem
    return None


# --- a session ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Call:
    """One executed call: the tool named, its arguments, the observation the model reads, and
    why it gave no result (None when it ran and returned)."""

    tool: str
    arguments: Any
    observation: str
    error: CallError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def as_json(self) -> dict[str, Any]:
        return {
            "tool": shown(self.tool),
            "arguments": jsonable(self.arguments),
            "observation": self.observation,
            "ok": self.ok,
            "error": self.error,
        }


@dataclass
class Turn:
    """One turn of a session: the state before it, the calls executed in it, the state after
    it (None while it is open), and how many calls past the limit were refused."""

    index: int
    before: Snapshot
    calls: list[Call] = field(default_factory=list)
    after: Snapshot | None = None
    refused: int = 0

    @property
    def closed(self) -> bool:
        return self.after is not None

    def as_json(self) -> dict[str, Any]:
        return {
            "turn": self.index,
            "before": self.before,
            "calls": [call.as_json() for call in self.calls],
            "after": self.after,
            "refused": self.refused,
        }


class Session(Generic[S]):
    """One item's run of a toolset on its own state (see the module docstring). A call outside
    an open turn opens one; `end_turn` closes the open turn (or records an empty one)."""

    def __init__(self, toolset: Toolset[S], state: S) -> None:
        self.toolset = toolset
        self.state = state
        self.turns: list[Turn] = []

    @property
    def open_turn(self) -> Turn | None:
        last = self.turns[-1] if self.turns else None
        return last if last is not None and not last.closed else None

    def begin_turn(self) -> Turn:
        """Opens the next turn (closing an open one first) with the state's snapshot."""
        if self.open_turn is not None:
            self.end_turn()
        turn = Turn(index=len(self.turns), before=self._snapshot())
        self.turns.append(turn)
        return turn

    def end_turn(self) -> Turn:
        turn = self.open_turn or self.begin_turn()
        turn.after = self._snapshot()
        return turn

    def call(self, name: str, arguments: Any) -> Call:
        """Executes one call in the open turn and records it; never raises for anything the
        call's name, arguments or the tool itself do (see the module docstring)."""
        turn = self.open_turn or self.begin_turn()
        limits = self.toolset.limits
        if len(turn.calls) >= limits.calls_per_turn:
            turn.refused += 1
            text = f"{ERROR}no more calls in this turn (at most {limits.calls_per_turn})"
            return Call(str(name), arguments, text, "call_limit")
        result = self._execute(str(name), arguments)
        turn.calls.append(result)
        return result

    def run_turn(self, calls: Iterable[tuple[str, Any]]) -> Turn:
        """One whole turn of (tool, arguments) calls: how the gold's calls are executed."""
        self.begin_turn()
        for name, arguments in calls:
            self.call(name, arguments)
        return self.end_turn()

    def results(self, through: int | None = None) -> list[str]:
        """The observations of every call of the turns up to `through` (None: all turns)."""
        last = len(self.turns) - 1 if through is None else through
        return [call.observation for turn in self.turns[: last + 1] for call in turn.calls]

    def tools(self) -> dict[str, Tool]:
        """The toolset as `Tool`s whose calls run in this session, by name, for the loops
        written against `Tool` (the observation is the call's)."""
        return {
            spec.name: Tool(spec=spec, call=self._caller(spec.name)) for spec in self.toolset.tools
        }

    def record(self) -> dict[str, Any]:
        """The session as JSON values: its turns (`Turn.as_json`), for an Outcome's detail."""
        return {"turns": [turn.as_json() for turn in self.turns]}

    def _caller(self, name: str) -> Callable[[dict[str, Any]], Awaitable[str]]:
        async def call(arguments: dict[str, Any]) -> str:
            return self.call(name, arguments).observation

        return call

    def _snapshot(self) -> Snapshot:
        snapshot = jsonable(self.toolset.snapshot(self.state))
        return snapshot if isinstance(snapshot, dict) else {"state": snapshot}

    def _execute(self, name: str, arguments: Any) -> Call:
        limits = self.toolset.limits
        # Sizes first: nothing the model sends is kept whole in the record unless it is small.
        if len(name) > _MAX_NAME:
            name = name[:_MAX_NAME] + "..."
        try:
            size = len(json.dumps(arguments, ensure_ascii=False, allow_nan=False))
        except (TypeError, ValueError, RecursionError):
            text = f"{ERROR}the arguments of {shown(name)!r} must be JSON values"
            return Call(name, {}, text, "bad_arguments")
        if size > limits.argument_chars:
            text = (
                f"{ERROR}the arguments of {shown(name)!r} are longer than "
                f"{limits.argument_chars} characters"
            )
            return Call(name, {}, text, "bad_arguments")
        spec = self.toolset.spec(name)
        if spec is None:
            offered = ", ".join(s.name for s in self.toolset.tools) or "none"
            text = f"{ERROR}unknown tool {shown(name)!r}; the tools are: {offered}"
            return Call(name, arguments, self._cut(text), "unknown_tool")
        if not isinstance(arguments, dict):
            text = f"{ERROR}the arguments of {name} must be a JSON object"
            return Call(name, arguments, text, "bad_arguments")
        problem = argument_problem(spec, arguments)
        if problem:
            text = f"{ERROR}bad arguments for {name}: {problem}"
            return Call(name, arguments, self._cut(text), "bad_arguments")
        try:
            # A tool may keep or change what it is given; the record keeps what the model sent.
            result = self.toolset.execute(self.state, name, json.loads(json.dumps(arguments)))
        except ToolError as error:
            return Call(name, arguments, self._cut(f"{ERROR}{error}"), "failed")
        except Exception as error:  # the tool's failure is the model's observation, by design
            text = f"{ERROR}{name} failed: {type(error).__name__}: {error}"
            return Call(name, arguments, self._cut(text), "failed")
        return Call(name, arguments, self._cut(_observation(result)))

    def _cut(self, text: str) -> str:
        limit = self.toolset.limits.observation_chars
        text = shown(text)
        if len(text) <= limit:
            return text
        return f"{text[:limit]}... ({len(text) - limit} more characters cut)"


def _observation(result: object) -> str:
    if isinstance(result, str):
        return result
    if result is None:
        return ""
    if isinstance(result, dict | list):
        try:
            return json.dumps(result, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            return str(result)
    return str(result)


# --- the turn check -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Difference:
    """An attribute of an instance whose value is not the gold's after a turn. `attribute` is
    None when the whole instance is on one side only; `absent` says which side lacks it."""

    instance: str
    attribute: str | None
    model: Any
    gold: Any
    absent: Literal["model", "gold"] | None = None

    def describe(self) -> str:
        where = self.instance if self.attribute is None else f"{self.instance}.{self.attribute}"
        if self.absent is not None:
            return f"{where} is missing on the {self.absent}'s side"
        return f"{where} is {_short(self.model)} (gold: {_short(self.gold)})"

    def as_json(self) -> dict[str, Any]:
        return {
            "instance": self.instance,
            "attribute": self.attribute,
            "model": self.model,
            "gold": self.gold,
            "absent": self.absent,
        }


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= _MAX_SHOWN_VALUE else text[:_MAX_SHOWN_VALUE] + "..."


TurnKind = Literal["passed", "no_gold_calls", "missing_turn", "no_calls", "state", "results"]


@dataclass(frozen=True, slots=True)
class TurnVerdict:
    """Whether a turn passed and why: `kind` says which rule decided, `reason` says it in
    words, `differences` and `missing` (gold results the model never got) are the details."""

    turn: int
    passed: bool
    kind: TurnKind
    reason: str
    differences: tuple[Difference, ...] = ()
    missing: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "passed": self.passed,
            "kind": self.kind,
            "reason": self.reason,
            "differences": [d.as_json() for d in self.differences],
            "missing": list(self.missing),
        }


def compare_snapshots(model: Snapshot, gold: Snapshot) -> list[Difference]:
    """Every attribute whose value differs between the two snapshots, instance by instance (an
    instance's snapshot that is not a mapping is compared whole)."""
    differences: list[Difference] = []
    for instance in list(gold) + [name for name in model if name not in gold]:
        if instance not in model or instance not in gold:
            absent: Literal["model", "gold"] = "model" if instance not in model else "gold"
            differences.append(
                Difference(instance, None, model.get(instance), gold.get(instance), absent)
            )
            continue
        ours, theirs = model[instance], gold[instance]
        if not isinstance(ours, dict) or not isinstance(theirs, dict):
            if ours != theirs:
                differences.append(Difference(instance, None, ours, theirs))
            continue
        for attribute in list(theirs) + [name for name in ours if name not in theirs]:
            if attribute not in ours or attribute not in theirs:
                side: Literal["model", "gold"] = "model" if attribute not in ours else "gold"
                value = ours.get(attribute), theirs.get(attribute)
                differences.append(Difference(instance, attribute, *value, side))
            elif ours[attribute] != theirs[attribute]:
                differences.append(
                    Difference(instance, attribute, ours[attribute], theirs[attribute])
                )
    return differences


# What a stored difference may hold: a failed turn of a long-context entry differs in a whole
# file-system tree, which stored as is makes each answer tens of kilobytes.
STORED_DIFFERENCES = 50
STORED_VALUE_CHARS = 1000


def stored_differences(
    differences: Iterable[Difference],
    limit: int = STORED_DIFFERENCES,
    max_chars: int = STORED_VALUE_CHARS,
) -> tuple[list[dict[str, Any]], int]:
    """The differences as JSON values to store with a verdict, and how many were left out.

    Each is narrowed to the values that differ: where both sides are mappings (or lists of the
    same length) it is followed into the keys (positions) whose values differ, which its
    "path" names below the attribute; a key on one side only is a difference whose "absent"
    names the side without it. At most `limit` are kept, in order, and a value whose JSON is
    longer than `max_chars` is stored as {"clipped": the first max_chars characters of its
    JSON, "chars": its length}."""
    stored: list[dict[str, Any]] = []
    total = 0
    for difference in differences:
        for path, model, gold, absent in _narrowed(
            difference.model, difference.gold, [], difference.absent
        ):
            total += 1
            if len(stored) < limit:
                stored.append(
                    {
                        "instance": difference.instance,
                        "attribute": difference.attribute,
                        "path": path,
                        "model": _clipped(model, max_chars),
                        "gold": _clipped(gold, max_chars),
                        "absent": absent,
                    }
                )
    return stored, total - len(stored)


def _narrowed(
    model: Any, gold: Any, path: list[str | int], absent: Literal["model", "gold"] | None
) -> Iterable[tuple[list[str | int], Any, Any, Literal["model", "gold"] | None]]:
    if absent is None and isinstance(model, dict) and isinstance(gold, dict):
        for key in list(gold) + [key for key in model if key not in gold]:
            if key not in model or key not in gold:
                side: Literal["model", "gold"] = "model" if key not in model else "gold"
                yield [*path, key], model.get(key), gold.get(key), side
            elif model[key] != gold[key]:
                yield from _narrowed(model[key], gold[key], [*path, key], None)
        return
    if (
        absent is None
        and isinstance(model, list)
        and isinstance(gold, list)
        and len(model) == len(gold)
    ):
        for index, (ours, theirs) in enumerate(zip(model, gold, strict=True)):
            if ours != theirs:
                yield from _narrowed(ours, theirs, [*path, index], None)
        return
    yield path, model, gold, absent


def bounded_snapshot(snapshot: Any, max_chars: int = STORED_VALUE_CHARS) -> Any:
    """A snapshot (instance -> attribute -> value) to store for display: each attribute's value
    whose JSON is longer than `max_chars` stored as {"clipped": the first max_chars characters
    of its JSON, "chars": its length}, as stored_differences stores values."""
    if not isinstance(snapshot, Mapping):
        return _clipped(snapshot, max_chars)
    return {
        name: (
            {key: _clipped(value, max_chars) for key, value in attributes.items()}
            if isinstance(attributes, Mapping)
            else _clipped(attributes, max_chars)
        )
        for name, attributes in snapshot.items()
    }


def _clipped(value: Any, max_chars: int) -> Any:
    if value is None or isinstance(value, bool | int | float):
        return value
    text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) <= max_chars:
        return value
    return {"clipped": text[:max_chars], "chars": len(text)}


def missing_results(expected: Sequence[str], got: Sequence[str]) -> list[str]:
    """The entries of `expected` not among `got`, each entry of `got` matching once."""
    left = list(got)
    missing = []
    for result in expected:
        if result in left:
            left.remove(result)
        else:
            missing.append(result)
    return missing


def check_turn(model: Session[Any], gold: Session[Any], index: int) -> TurnVerdict:
    """The verdict on turn `index` (see the module docstring for the rule). Both sessions must
    have closed the gold's turn; a model session that has not is a failed turn."""
    gold_turn = gold.turns[index]
    if gold_turn.after is None:
        raise ValueError(f"the gold's turn {index} is still open")
    if not gold_turn.calls:
        return TurnVerdict(index, True, "no_gold_calls", "the gold calls nothing in this turn")
    model_turn = model.turns[index] if index < len(model.turns) else None
    if model_turn is None or model_turn.after is None:
        return TurnVerdict(index, False, "missing_turn", f"the model did not finish turn {index}")
    if not model_turn.calls:
        count = len(gold_turn.calls)
        reason = f"the model called no tool in turn {index}; the gold makes {count} call(s)"
        return TurnVerdict(index, False, "no_calls", reason)
    differences = compare_snapshots(model_turn.after, gold_turn.after)
    if differences:
        shown_ = "; ".join(d.describe() for d in differences[:3])
        more = f" (and {len(differences) - 3} more)" if len(differences) > 3 else ""
        reason = f"the state after turn {index} differs from the gold's: {shown_}{more}"
        return TurnVerdict(index, False, "state", reason, tuple(differences))
    expected = [call.observation for call in gold_turn.calls]
    missing = missing_results(expected, model.results(index))
    if missing:
        reason = (
            f"{len(missing)} result(s) of the gold's calls in turn {index} are not among the "
            f"model's: {_short(missing[0])}"
        )
        return TurnVerdict(index, False, "results", reason, missing=tuple(missing))
    return TurnVerdict(index, True, "passed", "the state and the results match the gold's")


def check_turns(model: Session[Any], gold: Session[Any]) -> list[TurnVerdict]:
    """The verdict on every turn of the gold's session, in order."""
    return [check_turn(model, gold, index) for index in range(len(gold.turns))]


def entry_passed(verdicts: Sequence[TurnVerdict]) -> bool:
    """An entry passes when every turn does (one failed turn fails it)."""
    return all(verdict.passed for verdict in verdicts)
