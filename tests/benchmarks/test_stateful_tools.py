"""benchmarks.kit.stateful: locally executed tools on a per-item state, the session's record and
the turn check, on a toolset that exists only here (a key-value store and a counter)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from benchmarks.kit.protocol import Context, Item, ToolSpec
from benchmarks.kit.stateful import (
    Difference,
    Instances,
    Limits,
    Method,
    Session,
    ToolError,
    Toolset,
    check_turns,
    compare_snapshots,
    entry_passed,
    jsonable,
    object_toolset,
    public_state,
    stored_differences,
)
from benchmarks.suites.wtueval import TASKS as WTUEVAL_TASKS
from benchmarks.suites.wtueval.evaluate import tool_pool

# --- the toolset -------------------------------------------------------------------------------


class Store:
    def __init__(self) -> None:
        self.items: dict[str, str] = {}
        self._reads = 0  # bookkeeping: private, so not state

    def load(self, config: Mapping[str, Any]) -> None:
        self.items = dict(config.get("items", {}))

    def put(self, key: str, value: str) -> str:
        self.items[key] = value
        return f"stored {key}"

    def get(self, key: str) -> str:
        self._reads += 1
        return self.items[key]  # KeyError for a key it does not hold

    def delete(self, key: str) -> str:
        if key not in self.items:
            raise ToolError(f"no key {key!r}")
        del self.items[key]
        return f"deleted {key}"


class Counter:
    def __init__(self) -> None:
        self.count = 0

    def load(self, config: Mapping[str, Any]) -> None:
        self.count = int(config.get("count", 0))

    def increment(self, by: int = 1) -> dict[str, int]:
        self.count += by
        return {"count": self.count}


def _key(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


SPECS = (
    ToolSpec(
        "put",
        "Store a value under a key.",
        {
            "type": "object",
            "properties": {"key": _key("the key"), "value": _key("the value")},
            "required": ["key", "value"],
        },
    ),
    ToolSpec(
        "get",
        "The value of a key.",
        {"type": "object", "properties": {"key": _key("the key")}, "required": ["key"]},
    ),
    ToolSpec(
        "delete",
        "Remove a key.",
        {"type": "object", "properties": {"key": _key("the key")}, "required": ["key"]},
    ),
    ToolSpec(
        "increment",
        "Add to the counter.",
        {"type": "object", "properties": {"by": {"type": "integer"}}},
    ),
)
METHODS = {
    "put": Method("store", "put"),
    "get": Method("store", "get"),
    "delete": Method("store", "delete"),
    "increment": Method("counter", "increment"),
}


def start(item: Item, context: Mapping[str, Any]) -> Instances:
    config = item.input["initial_config"]
    store, counter = Store(), Counter()
    store.load(config.get("store", {}))
    counter.load(config.get("counter", {}))
    return {"store": store, "counter": counter}


DEFAULT_LIMITS = Limits()


def toolset(limits: Limits = DEFAULT_LIMITS) -> Toolset[Instances]:
    return object_toolset(SPECS, METHODS, start, limits)


ITEM = Item(
    split="test",
    external_id="kv-1",
    input={"initial_config": {"store": {"items": {"a": "1"}}, "counter": {"count": 2}}},
)
GOLD = [
    [("put", {"key": "b", "value": "2"}), ("get", {"key": "a"})],
    [("get", {"key": "b"}), ("increment", {"by": 3}), ("delete", {"key": "a"})],
]
START = {"store": {"items": {"a": "1"}}, "counter": {"count": 2}}
AFTER_0 = {"store": {"items": {"a": "1", "b": "2"}}, "counter": {"count": 2}}
AFTER_1 = {"store": {"items": {"b": "2"}}, "counter": {"count": 5}}


def gold_session() -> Session[Instances]:
    gold = toolset().session(ITEM, {})
    for calls in GOLD:
        gold.run_turn(calls)
    return gold


# --- the turn check ----------------------------------------------------------------------------


def test_a_model_that_reaches_the_gold_state_passes_every_turn() -> None:
    # given the gold run on its own state
    gold = gold_session()
    assert [t.before for t in gold.turns] == [START, AFTER_0]
    assert [t.after for t in gold.turns] == [AFTER_0, AFTER_1]
    assert gold.results() == ["stored b", "1", "2", '{"count": 5}', "deleted a"]
    # when the model reaches the same state in its own way: another order, an extra read in
    # turn 0 (the gold's turn-1 read of "b" is then among its results already), the counter
    # raised by one three times
    model = toolset().session(ITEM, {})
    model.begin_turn()
    assert model.call("get", {"key": "a"}).observation == "1"
    assert model.call("put", {"key": "b", "value": "2"}).observation == "stored b"
    assert model.call("get", {"key": "b"}).observation == "2"
    model.end_turn()
    model.begin_turn()
    tools = model.tools()  # the same session through the Tool interface the loops use
    counts = [asyncio.run(tools["increment"].call({})) for _ in range(3)]
    assert counts == ['{"count": 3}', '{"count": 4}', '{"count": 5}']
    assert asyncio.run(tools["delete"].call({"key": "a"})) == "deleted a"
    model.end_turn()
    # then both turns pass and so does the entry
    verdicts = check_turns(model, gold)
    assert [(v.turn, v.passed, v.kind) for v in verdicts] == [
        (0, True, "passed"),
        (1, True, "passed"),
    ]
    assert entry_passed(verdicts)


def test_a_different_state_fails_the_turn_naming_the_attribute() -> None:
    gold = gold_session()
    model = toolset().session(ITEM, {})
    model.run_turn([("put", {"key": "b", "value": "3"}), ("get", {"key": "a"})])
    model.run_turn([("get", {"key": "b"}), ("increment", {"by": 3}), ("delete", {"key": "a"})])
    turn_0, turn_1 = check_turns(model, gold)
    assert (turn_0.passed, turn_0.kind) == (False, "state")
    assert turn_0.differences == (
        Difference("store", "items", {"a": "1", "b": "3"}, {"a": "1", "b": "2"}),
    )
    assert "store.items" in turn_0.reason
    assert '{"a": "1", "b": "3"} (gold: {"a": "1", "b": "2"})' in turn_0.reason
    # Turn 1 differs in the same attribute, and its read of "b" gave "3", not the gold's "2".
    assert (turn_1.passed, turn_1.kind) == (False, "state")
    assert not entry_passed([turn_0, turn_1])


def test_a_missing_gold_result_fails_the_turn() -> None:
    # The model never reads "a": its state is the gold's, but the gold's result "1" is not
    # among the model's results.
    gold = gold_session()
    model = toolset().session(ITEM, {})
    model.run_turn([("put", {"key": "b", "value": "2"})])
    model.run_turn([("get", {"key": "b"}), ("increment", {"by": 3}), ("delete", {"key": "a"})])
    turn_0, turn_1 = check_turns(model, gold)
    assert (turn_0.passed, turn_0.kind, turn_0.missing) == (False, "results", ("1",))
    assert '"1"' in turn_0.reason
    assert (turn_1.passed, turn_1.kind) == (True, "passed")
    assert not entry_passed([turn_0, turn_1])


def test_a_turn_without_calls_or_without_an_end_fails() -> None:
    gold = gold_session()
    model = toolset().session(ITEM, {})
    model.end_turn()  # the model answered turn 0 without calling anything
    model.begin_turn()
    model.call("increment", {"by": 3})  # and never finished turn 1
    turn_0, turn_1 = check_turns(model, gold)
    assert (turn_0.passed, turn_0.kind) == (False, "no_calls")
    assert "makes 2 call(s)" in turn_0.reason
    assert (turn_1.passed, turn_1.kind) == (False, "missing_turn")


def test_a_turn_where_the_gold_calls_nothing_is_not_compared() -> None:
    gold = toolset().session(ITEM, {})
    gold.run_turn([])
    model = toolset().session(ITEM, {})
    model.run_turn([("increment", {})])
    (verdict,) = check_turns(model, gold)
    assert (verdict.passed, verdict.kind) == (True, "no_gold_calls")


# --- the record ----------------------------------------------------------------------------------


def test_the_record_holds_each_turn_with_its_state_before_and_after() -> None:
    model = toolset().session(ITEM, {})
    model.run_turn([("put", {"key": "b", "value": "2"}), ("nope", {})])
    model.run_turn([("increment", {"by": 3})])
    record = model.record()
    assert json.loads(json.dumps(record)) == record  # JSON values, as an Outcome stores them
    assert record == {
        "turns": [
            {
                "turn": 0,
                "before": START,
                "calls": [
                    {
                        "tool": "put",
                        "arguments": {"key": "b", "value": "2"},
                        "observation": "stored b",
                        "ok": True,
                        "error": None,
                    },
                    {
                        "tool": "nope",
                        "arguments": {},
                        "observation": "Error: unknown tool 'nope'; the tools are: put, get, "
                        "delete, increment",
                        "ok": False,
                        "error": "unknown_tool",
                    },
                ],
                "after": AFTER_0,
                "refused": 0,
            },
            {
                "turn": 1,
                "before": AFTER_0,
                "calls": [
                    {
                        "tool": "increment",
                        "arguments": {"by": 3},
                        "observation": '{"count": 5}',
                        "ok": True,
                        "error": None,
                    }
                ],
                "after": {"store": {"items": {"a": "1", "b": "2"}}, "counter": {"count": 5}},
                "refused": 0,
            },
        ]
    }
    # A snapshot is a copy: what the state does later does not change it.
    model.call("put", {"key": "c", "value": "9"})
    assert model.turns[0].after == AFTER_0


# --- errors become observations ------------------------------------------------------------------


def test_errors_become_observations_and_change_nothing() -> None:
    session = toolset().session(ITEM, {})
    cases = [
        (
            "launch",
            {},
            "unknown_tool",
            "Error: unknown tool 'launch'; the tools are: put, get, delete, increment",
        ),
        (
            "put",
            {"key": "b"},
            "bad_arguments",
            "Error: bad arguments for put: missing required argument 'value'",
        ),
        (
            "increment",
            {"by": "3"},
            "bad_arguments",
            "Error: bad arguments for increment: 'by' must be integer, got string",
        ),
        (
            "increment",
            {"by": True},
            "bad_arguments",
            "Error: bad arguments for increment: 'by' must be integer, got boolean",
        ),
        (
            "get",
            {"key": "a", "default": "0"},
            "bad_arguments",
            "Error: bad arguments for get: unknown argument 'default'; get takes key",
        ),
        ("get", ["a"], "bad_arguments", "Error: the arguments of get must be a JSON object"),
        ("get", {"key": "zzz"}, "failed", "Error: get failed: KeyError: 'zzz'"),
        ("delete", {"key": "zzz"}, "failed", "Error: no key 'zzz'"),
    ]
    for name, arguments, error, observation in cases:
        call = session.call(name, arguments)
        assert (call.ok, call.error, call.observation) == (False, error, observation), name
    session.end_turn()
    assert session.turns[0].after == START
    # Through the Tool interface too, the failure is the observation.
    assert asyncio.run(session.tools()["get"].call({"key": "zzz"})) == (
        "Error: get failed: KeyError: 'zzz'"
    )


def test_a_tool_the_item_did_not_start_is_not_available() -> None:
    def store_only(item: Item, context: Mapping[str, Any]) -> Instances:
        return {"store": Store()}

    session = object_toolset(SPECS, METHODS, store_only).session(ITEM, {})
    call = session.call("increment", {})
    assert (call.error, call.observation) == (
        "failed",
        "Error: increment is not available for this item",
    )


# --- bounds --------------------------------------------------------------------------------------


def test_calls_beyond_the_turn_limit_are_refused_and_not_run() -> None:
    session = toolset(Limits(calls_per_turn=2)).session(ITEM, {})
    session.begin_turn()
    observations = [session.call("increment", {}).observation for _ in range(4)]
    assert observations == [
        '{"count": 3}',
        '{"count": 4}',
        "Error: no more calls in this turn (at most 2)",
        "Error: no more calls in this turn (at most 2)",
    ]
    turn = session.end_turn()
    assert (len(turn.calls), turn.refused, turn.after) == (2, 2, {**START, "counter": {"count": 4}})
    # The next turn has its own calls.
    assert session.call("increment", {}).observation == '{"count": 5}'


def test_observations_and_arguments_are_bounded() -> None:
    session = toolset(Limits(observation_chars=10, argument_chars=55)).session(ITEM, {})
    assert session.call("put", {"key": "long", "value": "x" * 30}).error == "bad_arguments"
    session.call("put", {"key": "long", "value": "y" * 25})
    assert (
        session.call("get", {"key": "long"}).observation == "yyyyyyyyyy... (15 more characters cut)"
    )
    # A name or arguments no tool could take are not kept whole.
    unknown = session.call("x" * 500, {})
    assert (unknown.error, len(unknown.tool)) == ("unknown_tool", 203)
    nan = session.call("get", {"key": float("nan")})
    assert (nan.observation, nan.arguments) == (
        "Error: the arguments of 'get' must be JSON values",
        {},
    )


def test_snapshots_are_json_values() -> None:
    node: dict[str, Any] = {"name": "root"}
    node["self"] = node
    value = {"tags": {"b", "a"}, "pair": (1, 2), "x": float("inf"), "node": node}
    assert jsonable(value) == {
        "tags": ["a", "b"],
        "pair": [1, 2],
        "x": "inf",
        "node": {"name": "root", "self": "(cycle)"},
    }
    assert public_state(Store()) == {"items": {}}


# --- the WTU-Eval calculator runs on it ----------------------------------------------------------


def test_the_wtueval_calculator_is_a_stateless_toolset() -> None:
    calculator = tool_pool(Context(task=WTUEVAL_TASKS["R2"]))["Calculator"]
    assert calculator.spec.category == "local"
    assert asyncio.run(calculator.call({"expression": "3 * 48 - 5"})) == "139"
    assert asyncio.run(calculator.call({"expression": "1 / 0"})).startswith(
        "Error: division by zero"
    )


# --- what is stored of a difference ---------------------------------------------------------


def test_a_stored_difference_is_narrowed_to_the_values_that_differ() -> None:
    # A file system's tree: only one file's content differs, deep inside.
    tree_model = {"name": "/", "contents": {"a": {"content": "x"}, "b": {"content": "old"}}}
    tree_gold = {"name": "/", "contents": {"a": {"content": "x"}, "b": {"content": "new"}}}
    differences = compare_snapshots({"fs": {"root": tree_model}}, {"fs": {"root": tree_gold}})
    assert stored_differences(differences) == (
        [
            {
                "instance": "fs",
                "attribute": "root",
                "path": ["contents", "b", "content"],
                "model": "old",
                "gold": "new",
                "absent": None,
            }
        ],
        0,
    )


def test_a_stored_difference_says_which_side_lacks_a_key_and_lists_compare_by_position() -> None:
    model = {"s": {"items": [1, {"k": 2}, 3], "extra": {"only": "model"}}}
    gold = {"s": {"items": [1, {"k": 5}, 3], "extra": {}}}
    stored, omitted = stored_differences(compare_snapshots(model, gold))
    assert omitted == 0
    assert stored == [
        {"instance": "s", "attribute": "items", "path": [1, "k"], "model": 2, "gold": 5,
         "absent": None},
        {"instance": "s", "attribute": "extra", "path": ["only"], "model": "model",
         "gold": None, "absent": "gold"},
    ]  # fmt: skip
    # Lists of different lengths are one difference, whole.
    stored, _ = stored_differences(compare_snapshots({"s": {"l": [1, 2]}}, {"s": {"l": [1]}}))
    assert stored == [
        {"instance": "s", "attribute": "l", "path": [], "model": [1, 2], "gold": [1],
         "absent": None},
    ]  # fmt: skip


def test_stored_differences_are_bounded_in_number_and_in_size() -> None:
    big = "y" * 5000
    model = {"s": {f"k{i}": i for i in range(30)} | {"text": big}}
    gold = {"s": {f"k{i}": i + 1 for i in range(30)} | {"text": "short"}}
    stored, omitted = stored_differences(compare_snapshots(model, gold), limit=10, max_chars=100)
    assert (len(stored), omitted) == (10, 21)
    clipped = stored_differences(compare_snapshots(model, gold), limit=40, max_chars=100)[0][-1]
    assert clipped["attribute"] == "text"
    assert clipped["model"] == {"clipped": json.dumps(big)[:100], "chars": 5002}
    assert clipped["gold"] == "short"
    assert len(json.dumps(stored)) < 3000
