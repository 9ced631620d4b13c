"""BFCL's multi-turn entries, executed: its simulator classes, our dispatch, its checker's rule.

The classes (GorillaFileSystem, MathAPI, MessageAPI, TwitterAPI, TicketAPI, TradingBot,
TravelAPI, VehicleControlAPI) are BFCL's own, imported from the pinned `bfcl-eval` wheel (or a
folder holding its `bfcl_eval/`) and never copied here. `load_classes` imports only
`bfcl_eval/eval_checker/multi_turn_eval/func_source_code/<module>.py` (and what those import of
each other, `long_context.py`): the packages above them are stood in by empty package modules
whose path points into the wheel, so no `__init__` of bfcl_eval runs and none of its dependencies
(numpy, torch, tree_sitter) is needed. A wheel is read in place through Python's zip importer.
What the modules import beyond the standard library: `math_api.py` imports mpmath (for its
`logarithm`); the rest only the standard library (`gorilla_file_system.py` imports subprocess and
never uses it). The web-search backend and the vector memory backend are never loaded
(requests, serpapi; faiss, sentence-transformers); the key-value and summarising memory
backends are loaded by memory_backend.py, in its own worker, through this `load_classes`.

An entry runs as BFCL's checker runs it (`multi_turn_checker.py`, `multi_turn_utils.py`): each
involved class is instantiated and, unless stateless (MathAPI), loaded with
`_load_scenario(deepcopy(initial_config[class]), long_context=...)` (long_context for the
long-context category); a call is dispatched by its name to the public methods of the involved
instances (a name two classes share goes to the later class, as BFCL's mapping does); its result
is the text BFCL makes of it (a text as it is, a dict as `json.dumps`, else `str`, an exception as
"Error during execution: <message>"). Unlike BFCL, nothing is `eval`ed: calls are parsed with
`ast` (`calls.parse_call`), arguments must be literals, and positional arguments are bound to
the method's parameter names before the call. Per turn, the model's calls run in its session
and the ground truth's in another (`benchmarks.kit.stateful`), and `check_turn` decides the turn:
where the ground truth calls something, the model must have called something, every instance's
public state must equal the ground truth's, and the ground truth's results must be among the
model's results so far. The entry passes when every turn does (BFCL's binary score), and an
entry whose model turns are fewer or more than its turns fails, as BFCL's force-terminated
entries do. Beyond BFCL, every turn gets its verdict (turns after a failed one are checked too,
each against the ground truth's state after that turn), so `turn_accuracy` is the per-turn
partial credit; each turn keeps the differences between the model's and the ground truth's
states as JSON, for display.

States are compared as JSON snapshots of the instances' public attributes, where BFCL compares
the attributes with `==`; the two agree because the classes' `__eq__` compare public fields,
except `Directory.__eq__` (the file system), which leaves out `parent`, a link back up the
tree: the snapshot leaves it out too (`BACK_LINKS`). Each turn also records `bfcl_equal`, the
state check made BFCL's way on the live instances, so a disagreement would show.

Isolation: `run_isolated` runs one entry in a worker subprocess (`python -m
benchmarks.suites.bfcl.multi_turn`) that limits its own CPU time and address space
(`resource.setrlimit`) before it loads anything, under a wall-clock timeout in the parent; a
worker that is killed, overruns or answers nothing readable gives a failed entry whose reason
says so, never a hang. `WorkerSession` is the same worker kept open for a solve loop that shows
the model each call's result: the calls run in the worker's model session as they come, and
the verdict executes them again on fresh instances, as BFCL's checker does after inference.
"""

from __future__ import annotations

import copy
import importlib
import importlib.machinery
import importlib.util
import inspect
import json
import os
import resource
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from benchmarks.kit.protocol import Item, ToolSpec
from benchmarks.kit.stateful import (
    Instances,
    Limits,
    Method,
    Session,
    Snapshot,
    Toolset,
    check_turn,
    compare_snapshots,
    jsonable,
    stored_differences,
)
from benchmarks.kit.toolcall import ToolCallError
from benchmarks.suites.bfcl.calls import parse_call

__all__ = [
    "BACK_LINKS",
    "CLASS_MODULES",
    "PACKAGE",
    "STATELESS",
    "WORKER",
    "LoadError",
    "MultiTurnEntry",
    "WorkerLimits",
    "WorkerSession",
    "WorkerStopped",
    "entry_of",
    "entry_toolset",
    "functions_at",
    "load_classes",
    "run_entry",
    "run_isolated",
]

PACKAGE = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
# Which module defines each class (BFCL's CLASS_FILE_PATH_MAPPING, as data).
CLASS_MODULES = {
    "GorillaFileSystem": "gorilla_file_system",
    "MathAPI": "math_api",
    "MessageAPI": "message_api",
    "TwitterAPI": "posting_api",
    "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}
STATELESS = ("MathAPI",)
# Attributes that link an object back up to what holds it, left out of snapshots because the
# class's own __eq__ leaves them out: (class name, attribute).
BACK_LINKS = frozenset({("Directory", "parent")})
ERROR = "Error during execution: "
# Names BFCL refuses to evaluate whatever they are (multi_turn_utils.py).
REFUSED_NAMES = frozenset({"kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"})
POSITIONAL = "*args"
LIMITS = Limits(calls_per_turn=200, argument_chars=50_000, observation_chars=200_000)


class LoadError(Exception):
    """BFCL's classes could not be loaded from the given wheel or folder; says why."""


# --- loading the classes ------------------------------------------------------------------------


def _package_path(source: Path, dotted: str) -> str:
    return str(source.joinpath(*dotted.split(".")))


def _stand_in(source: Path) -> None:
    """Empty package modules for bfcl_eval and the packages down to PACKAGE, whose paths point
    into `source`, so that importing a module under PACKAGE runs no __init__ of them."""
    parts = PACKAGE.split(".")
    for depth in range(1, len(parts) + 1):
        dotted = ".".join(parts[:depth])
        location = _package_path(source, dotted)
        present = sys.modules.get(dotted)
        if present is not None:
            paths = list(getattr(present, "__path__", []))
            if location not in paths:
                raise LoadError(
                    f"{dotted} is already imported from {paths or 'elsewhere'}, not from {source}"
                )
            continue
        spec = importlib.machinery.ModuleSpec(dotted, None, is_package=True)
        spec.submodule_search_locations = [location]
        sys.modules[dotted] = importlib.util.module_from_spec(spec)


def load_classes(
    source: Path,
    names: Iterable[str] | None = None,
    modules: Mapping[str, str] = CLASS_MODULES,
) -> dict[str, type]:
    """BFCL's simulator classes by name, imported from `source` (the bfcl-eval wheel, or a
    folder holding bfcl_eval/: an extracted wheel or the repository). `names`: the classes to
    load (default: every class of `modules`). Raises LoadError naming the class and why."""
    source = Path(source).resolve()
    if not source.exists():
        raise LoadError(f"{source} does not exist")
    if source.is_dir() and not (source / "bfcl_eval").is_dir():
        raise LoadError(f"{source} holds no bfcl_eval/ folder")
    _stand_in(source)
    loaded: dict[str, type] = {}
    for class_name in modules if names is None else names:
        module_name = modules.get(class_name)
        if module_name is None:
            raise LoadError(f"no simulator class {class_name!r}; known: {', '.join(modules)}")
        try:
            module = importlib.import_module(f"{PACKAGE}.{module_name}")
        except ModuleNotFoundError as exc:
            raise LoadError(
                f"{class_name} ({module_name}.py) needs the module {exc.name!r}, which is not "
                "installed" + (" (pip install mpmath)" if exc.name == "mpmath" else "")
            ) from None
        found = getattr(module, class_name, None)
        if not isinstance(found, type):
            raise LoadError(f"{module_name}.py defines no class {class_name}")
        loaded[class_name] = found
    return loaded


# --- an entry as a toolset ----------------------------------------------------------------------


@dataclass(frozen=True)
class MultiTurnEntry:
    """What executing an entry needs: its id and category, its classes and their initial
    state, and the ground truth's call strings per turn."""

    id: str
    category: str
    involved_classes: tuple[str, ...]
    initial_config: Mapping[str, Any]
    ground_truth: tuple[tuple[str, ...], ...]

    @property
    def long_context(self) -> bool:
        # BFCL decides it from the category the id names (id.rsplit("_", 1)[0]).
        category = self.id.rsplit("_", 1)[0] if "_" in self.id else self.category
        return "long_context" in category or "composite" in category

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "category": self.category,
            "involved_classes": list(self.involved_classes),
            "initial_config": self.initial_config,
            "ground_truth": [list(turn) for turn in self.ground_truth],
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> MultiTurnEntry:
        return cls(
            id=str(value["id"]),
            category=str(value.get("category", "")),
            involved_classes=tuple(value["involved_classes"]),
            initial_config=value.get("initial_config") or {},
            ground_truth=tuple(tuple(turn) for turn in value["ground_truth"]),
        )


def entry_of(item: Item) -> MultiTurnEntry:
    """The entry an imported multi-turn sample holds (see importer.py)."""
    metadata = item.metadata
    return MultiTurnEntry(
        id=str(metadata.get("id", item.external_id)),
        category=item.split,
        involved_classes=tuple(metadata.get("involved_classes", ())),
        initial_config=metadata.get("initial_config") or {},
        ground_truth=tuple(tuple(turn) for turn in (item.reference or ())),
    )


def functions_at(sample_input: Mapping[str, Any], turn: int) -> list[dict[str, Any]]:
    """The function docs a model is offered at `turn` of an imported multi-turn sample: the
    entry's docs, and the held-out ones (input["missed_functions"]) from their turn on, added at
    the end in turn order, as BFCL's handlers extend the entry's functions at that turn."""
    offered = [doc for doc in sample_input.get("functions", []) if isinstance(doc, dict)]
    missed = sample_input.get("missed_functions") or {}
    for held_turn in sorted((key for key in missed if str(key).isdigit()), key=int):
        if int(held_turn) <= turn:
            offered.extend(doc for doc in missed[held_turn] if isinstance(doc, dict))
    return offered


def _public_methods(instance: object) -> list[str]:
    return [
        name
        for name, _ in inspect.getmembers(instance, predicate=inspect.ismethod)
        if not name.startswith("_")
    ]


def _render(value: Any, depth: int = 0) -> Any:
    """Objects as their public attributes, less BACK_LINKS; containers walked; the rest as it
    is (jsonable finishes the job and guards depth and cycles)."""
    if depth > 40 or value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {k: _render(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_render(v, depth + 1) for v in value]
    attributes = getattr(value, "__dict__", None)
    if isinstance(attributes, dict):
        kind = type(value).__name__
        return {
            str(k): _render(v, depth + 1)
            for k, v in attributes.items()
            if not str(k).startswith("_") and (kind, str(k)) not in BACK_LINKS
        }
    return value


def _result_text(result: object) -> str:
    # BFCL's text of a result (multi_turn_utils.execute_multi_turn_func_call).
    if type(result) is str:
        return result
    if type(result) is dict:
        try:
            return json.dumps(result)
        except (TypeError, ValueError):
            return str(result)
    return str(result)


def entry_toolset(
    classes: Mapping[str, type], entry: MultiTurnEntry, limits: Limits = LIMITS
) -> Toolset[Instances]:
    """The entry's involved classes as a toolset (see _entry_parts)."""
    return _entry_parts(classes, entry, limits)[0]


def _entry_parts(
    classes: Mapping[str, type], entry: MultiTurnEntry, limits: Limits = LIMITS
) -> tuple[Toolset[Instances], dict[str, inspect.Signature]]:
    """The entry's involved classes as a toolset: one tool per public method (the later class
    wins a shared name), a fresh set of loaded instances per session. Tools are offered to the
    executor, not to a model: their parameters are left open, since BFCL runs whatever
    arguments the model wrote and lets the method refuse them."""
    missing = [name for name in entry.involved_classes if name not in classes]
    if missing:
        raise LoadError(f"entry {entry.id} involves {', '.join(missing)}, which is not loaded")
    methods: dict[str, Method] = {}
    signatures: dict[str, inspect.Signature] = {}
    for class_name in entry.involved_classes:
        probe = classes[class_name]()
        for method_name in _public_methods(probe):
            methods[method_name] = Method(class_name, method_name)
            signatures[method_name] = inspect.signature(getattr(probe, method_name))
    tools = tuple(ToolSpec(name=name, parameters={"type": "object"}) for name in methods)

    def start(item: Item, context: Mapping[str, Any]) -> Instances:
        instances: Instances = {}
        for class_name in entry.involved_classes:
            instance = classes[class_name]()
            if class_name not in STATELESS:
                config = copy.deepcopy(dict(entry.initial_config).get(class_name, {}))
                instance._load_scenario(config, long_context=entry.long_context)
            instances[class_name] = instance
        return instances

    def execute(instances: Instances, name: str, arguments: dict[str, Any]) -> object:
        where = methods[name]
        try:
            if name in REFUSED_NAMES:
                raise PermissionError(f"Function call {name} is not allowed.")
            method = getattr(instances[where.instance], where.method)
            args = arguments.pop(POSITIONAL, [])
            return _result_text(method(*args, **arguments))
        except Exception as error:  # the method's failure is the model's observation, as in BFCL
            return f"{ERROR}{error}"

    def snapshot(instances: Instances) -> Snapshot:
        return {name: _render(instance) for name, instance in instances.items()}

    return Toolset(tools, start, execute, snapshot, limits), signatures


def call_arguments(
    signature: inspect.Signature | None, args: Sequence[Any], kwargs: Mapping[str, Any]
) -> dict[str, Any]:
    """A call's arguments as one mapping: positional ones bound to the parameters' names when
    the signature allows, else kept under "*args" for the method to refuse as Python would."""
    if not args:
        return dict(kwargs)
    if signature is not None:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            bound = None
        plain = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        if bound is not None and all(
            signature.parameters[name].kind in plain for name in bound.arguments
        ):
            return dict(bound.arguments)
    return {POSITIONAL: list(args), **kwargs}


# --- running an entry ---------------------------------------------------------------------------


def _model_calls(turn: Any) -> tuple[list[tuple[str, Any]], list[dict[str, Any]]]:
    """A model's turn (a list of calls, or of steps each a list of calls; a call is a BFCL
    call string or {"name", "arguments"}) as (name, positional, keywords) and the refused."""
    flat: list[Any] = []
    for step in turn if isinstance(turn, list) else []:
        flat.extend(step if isinstance(step, list) else [step])
    calls: list[tuple[str, Any]] = []
    refused: list[dict[str, Any]] = []
    for call in flat:
        if isinstance(call, Mapping):
            name, arguments = call.get("name"), call.get("arguments", {})
            if isinstance(name, str) and isinstance(arguments, Mapping):
                calls.append((name, ((), dict(arguments))))
            else:
                refused.append({"call": jsonable(call), "why": "not {name, arguments}"})
            continue
        try:
            parsed = parse_call(call)
        except ToolCallError as exc:
            refused.append({"call": jsonable(call), "why": str(exc)})
            continue
        calls.append((parsed.name, (parsed.args, parsed.kwargs)))
    return calls, refused


def _bfcl_equal(model: Instances, gold: Instances) -> bool:
    """BFCL's state check on live instances: every public attribute of each ground-truth
    instance equal (==) to the model's."""
    for name, theirs in gold.items():
        ours = model.get(name)
        for attribute, value in vars(theirs).items():
            if attribute.startswith("_"):
                continue
            if getattr(ours, attribute, object()) != value:
                return False
    return True


def run_entry(
    classes: Mapping[str, type], entry: MultiTurnEntry, model_turns: Sequence[Any]
) -> dict[str, Any]:
    """The verdict on one entry, as JSON values: {"id", "passed" (BFCL's binary score),
    "turn_accuracy" (turns passed / turns), "reason", "force_terminated", "turns": [{the
    TurnVerdict's fields, "state_diff" (model vs ground truth after the turn, narrowed and bounded:
    stateful.stored_differences), "state_diff_omitted" (differences left out), "bfcl_equal",
    "refused" (calls not read)}], "model" and "gold" (the sessions' records)}. Executes the
    classes' code in this process: `run_isolated` is the way to run it under limits."""
    toolset, signatures = _entry_parts(classes, entry)
    item = Item(split=entry.category, external_id=entry.id, input={})
    model: Session[Instances] = toolset.session(item, {})
    gold: Session[Instances] = toolset.session(item, {})
    turns: list[dict[str, Any]] = []
    for index, gold_calls in enumerate(entry.ground_truth):
        refused: list[dict[str, Any]] = []
        if index < len(model_turns):
            calls, refused = _model_calls(model_turns[index])
            model.begin_turn()
            for name, (args, kwargs) in calls:
                model.call(name, call_arguments(signatures.get(name), args, kwargs))
            model.end_turn()
        gold.begin_turn()
        for position, text in enumerate(gold_calls):
            try:
                parsed = parse_call(text)
            except ToolCallError as exc:
                raise ValueError(
                    f"{entry.id}: ground truth turn {index}, call {position}: {exc}"
                ) from None
            gold.call(
                parsed.name, call_arguments(signatures.get(parsed.name), parsed.args, parsed.kwargs)
            )
        gold.end_turn()
        verdict = check_turn(model, gold, index).as_json()
        model_turn = model.turns[index] if index < len(model.turns) else None
        gold_after = gold.turns[index].after or {}
        verdict["state_diff"], verdict["state_diff_omitted"] = (
            stored_differences(compare_snapshots(model_turn.after or {}, gold_after))
            if model_turn is not None
            else ([], 0)
        )
        verdict["bfcl_equal"] = (
            _bfcl_equal(model.state, gold.state) if model_turn is not None else None
        )
        verdict["refused"] = refused
        turns.append(verdict)
    terminated = len(model_turns) != len(entry.ground_truth)
    failed = next((t for t in turns if not t["passed"]), None)
    if terminated:
        reason = (
            f"the model's turns ({len(model_turns)}) are not the entry's "
            f"({len(entry.ground_truth)}): force-terminated"
        )
    elif failed is not None:
        reason = f"turn {failed['turn']}: {failed['reason']}"
    else:
        reason = "every turn matches the ground truth"
    passed_turns = sum(1 for t in turns if t["passed"])
    return {
        "id": entry.id,
        "passed": failed is None and not terminated,
        "turn_accuracy": passed_turns / len(turns) if turns else 0.0,
        "reason": reason,
        "force_terminated": terminated,
        "turns": turns,
        "model": model.record(),
        "gold": gold.record(),
    }


# --- the worker ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class WorkerLimits:
    """What one entry's worker may use: CPU seconds (RLIMIT_CPU, and a wall-clock timeout a
    little longer) and address space in bytes (RLIMIT_AS)."""

    seconds: float = 60.0
    memory_bytes: int = 2 << 30


ROOT = Path(__file__).resolve().parents[3]
# The module a WorkerSession runs (`python -m WORKER --serve`) unless told another.
WORKER = "benchmarks.suites.bfcl.multi_turn"


def _failure(entry: MultiTurnEntry, why: str) -> dict[str, Any]:
    return {
        "id": entry.id,
        "passed": False,
        "turn_accuracy": 0.0,
        "reason": why,
        "force_terminated": False,
        "turns": [],
        "model": {"turns": []},
        "gold": {"turns": []},
        "worker_failed": True,
    }


def run_isolated(
    source: Path,
    entry: MultiTurnEntry,
    model_turns: Sequence[Any],
    limits: WorkerLimits = WorkerLimits(),
    modules: Mapping[str, str] = CLASS_MODULES,
) -> dict[str, Any]:
    """`run_entry` in a worker subprocess under `limits`, the classes loaded from `source` (see
    load_classes). A worker that is killed, runs out of time or memory, or answers nothing
    readable gives a failed entry ("worker_failed": true) whose reason says which."""
    request = {
        "source": str(source),
        "entry": entry.as_json(),
        "model_turns": list(model_turns),
        "modules": dict(modules),
        "limits": {"seconds": limits.seconds, "memory_bytes": limits.memory_bytes},
    }
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks.suites.bfcl.multi_turn"],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            timeout=limits.seconds + 5,
            env=env,
            cwd=ROOT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return _failure(entry, f"stopped: the worker ran past {limits.seconds + 5:g} s")
    if done.returncode != 0:
        return _failure(entry, _stopped_reason(done.returncode, limits, done.stderr))
    try:
        result = json.loads(done.stdout)
    except json.JSONDecodeError:
        return _failure(entry, "the worker's answer is not JSON")
    if not isinstance(result, dict) or result.get("id") != entry.id:
        return _failure(entry, "the worker answered for another entry")
    return result


def _stopped_reason(code: int, limits: WorkerLimits, stderr: str) -> str:
    if code < 0:
        try:
            signal_name = signal.Signals(-code).name
        except ValueError:
            signal_name = f"signal {-code}"
        return {
            "SIGXCPU": f"stopped: the worker used its {limits.seconds:g} s of CPU time",
            "SIGKILL": "stopped: the worker was killed (SIGKILL; out of memory?)",
        }.get(signal_name, f"stopped: the worker was killed by {signal_name}")
    last = (stderr.strip().splitlines() or ["no message"])[-1]
    return f"the worker failed (exit {code}): {last[:500]}"


def _limit_self(limits: Mapping[str, Any]) -> None:
    seconds = max(1, int(float(limits.get("seconds", 60)) + 0.999))
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))
    memory = int(limits.get("memory_bytes", 2 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))


def _load_for(request: Mapping[str, Any]) -> tuple[MultiTurnEntry, dict[str, type]]:
    _limit_self(request.get("limits", {}))
    entry = MultiTurnEntry.from_json(request["entry"])
    modules = request.get("modules") or CLASS_MODULES
    return entry, load_classes(Path(request["source"]), entry.involved_classes, modules)


def _worker() -> int:
    request = json.loads(sys.stdin.read())
    try:
        entry, classes = _load_for(request)
    except LoadError as exc:
        print(f"LoadError: {exc}", file=sys.stderr)
        return 2
    result = run_entry(classes, entry, request["model_turns"])
    sys.stdout.write(json.dumps(result, ensure_ascii=False, default=str))
    return 0


def _answer(value: Mapping[str, Any]) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def _serve() -> int:
    """The interactive worker (WorkerSession): a request line, then one line per operation."""
    request = json.loads(sys.stdin.readline())
    try:
        entry, classes = _load_for(request)
    except LoadError as exc:
        _answer({"error": str(exc)})
        return 2
    toolset, signatures = _entry_parts(classes, entry)
    item = Item(split=entry.category, external_id=entry.id, input={})
    session: Session[Instances] = toolset.session(item, {})
    turns: list[list[Any]] = []
    _answer({"ready": True})
    for line in sys.stdin:
        operation = json.loads(line)
        op = operation.get("op")
        if op == "begin_turn":
            session.begin_turn()
            turns.append([])
            _answer({"turn": len(turns) - 1})
        elif op == "call":
            if not turns:
                session.begin_turn()
                turns.append([])
            raw = operation.get("calls", [])
            turns[-1].append(raw)
            calls, refused = _model_calls([raw])
            observations = [
                session.call(name, call_arguments(signatures.get(name), args, kwargs)).observation
                for name, (args, kwargs) in calls
            ]
            _answer({"observations": observations, "refused": refused})
        elif op == "end_turn":
            session.end_turn()
            _answer({"turn": len(turns) - 1})
        elif op == "score":
            # BFCL scores by executing the model's calls again on fresh instances.
            _answer({"result": run_entry(classes, entry, turns)})
            return 0
        else:
            _answer({"error": f"unknown operation {op!r}"})
    return 0


class WorkerStopped(Exception):
    """The interactive worker was stopped (killed, out of time or memory) or answered
    nothing readable; the message says which."""


class WorkerSession:
    """One entry's model session in a worker subprocess under `limits`, for a solve loop
    that shows the model each call's result: `begin_turn`, `call` (a step's calls, BFCL call
    strings or {"name", "arguments"}; their observations back, a call that is not read gives
    "Error: ..."), `end_turn`, and `score` (the verdict as run_entry gives it, the model's
    calls executed again on fresh instances, as BFCL's checker does). A worker that dies or
    overruns raises WorkerStopped; `score` then gives the failed entry instead. Use it as a
    context manager: the worker is ended on leaving. `worker` names another module serving the
    same line protocol (`python -m <worker> --serve`; memory_backend.py), `extra` adds to the
    request line it reads first."""

    def __init__(
        self,
        source: Path,
        entry: MultiTurnEntry,
        limits: WorkerLimits = WorkerLimits(),
        modules: Mapping[str, str] = CLASS_MODULES,
        worker: str = WORKER,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        self.entry = entry
        self.limits = limits
        self.stopped: str | None = None
        self._buffer = b""
        self._process = subprocess.Popen(
            [sys.executable, "-m", worker, "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            cwd=ROOT,
        )
        request = {
            "source": str(source),
            "entry": entry.as_json(),
            "modules": dict(modules),
            "limits": {"seconds": limits.seconds, "memory_bytes": limits.memory_bytes},
            **(extra or {}),
        }
        ready = self._ask(request)
        if "error" in ready:
            self.close()
            raise LoadError(str(ready["error"]))

    def __enter__(self) -> WorkerSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _stop(self, why: str) -> NoReturn:
        self.stopped = why
        self.close()
        raise WorkerStopped(why)

    def _read_line(self, deadline: float) -> bytes:
        stdout = self._process.stdout
        assert stdout is not None
        descriptor = stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                self._stop(
                    f"stopped: the worker did not answer within {self.limits.seconds + 5:g} s"
                )
            # poll, not select: select() cannot watch a descriptor numbered 1024 or more, which
            # a long-lived process (a worker, a test session) with many files open reaches.
            poller = select.poll()
            poller.register(descriptor, select.POLLIN)
            if not poller.poll(left * 1000):
                continue
            chunk = os.read(descriptor, 1 << 16)
            if not chunk:
                code = self._process.wait()
                self._stop(_stopped_reason(code, self.limits, ""))
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def _ask(self, message: Mapping[str, Any]) -> dict[str, Any]:
        if self.stopped is not None:
            raise WorkerStopped(self.stopped)
        stdin = self._process.stdin
        assert stdin is not None
        try:
            stdin.write(json.dumps(message).encode() + b"\n")
            stdin.flush()
        except (BrokenPipeError, OSError):
            self._stop(_stopped_reason(self._process.wait(), self.limits, ""))
        line = self._read_line(time.monotonic() + self.limits.seconds + 5)
        try:
            answer = json.loads(line)
        except json.JSONDecodeError:
            self._stop("the worker's answer is not JSON")
        if not isinstance(answer, dict):
            self._stop("the worker's answer is not an object")
        return answer

    def ask(self, message: Mapping[str, Any]) -> dict[str, Any]:
        """One operation of the worker's protocol, its answer back (WorkerStopped when the
        worker is gone): for a worker module with operations of its own."""
        return self._ask(message)

    def begin_turn(self) -> None:
        self._ask({"op": "begin_turn"})

    def call(self, calls: Sequence[Any]) -> list[str]:
        answer = self._ask({"op": "call", "calls": list(calls)})
        refused = [f"Error: {r['why']}" for r in answer.get("refused", [])]
        return [str(o) for o in answer.get("observations", [])] + refused

    def end_turn(self) -> None:
        self._ask({"op": "end_turn"})

    def score(self) -> dict[str, Any]:
        if self.stopped is not None:
            return _failure(self.entry, self.stopped)
        try:
            result = self._ask({"op": "score"}).get("result")
        except WorkerStopped as exc:
            return _failure(self.entry, str(exc))
        if not isinstance(result, dict):
            return _failure(self.entry, "the worker gave no verdict")
        return result

    def close(self) -> None:
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        for stream in (self._process.stdin, self._process.stdout):
            if stream is not None:
                stream.close()


if __name__ == "__main__":
    sys.exit(_serve() if "--serve" in sys.argv[1:] else _worker())
