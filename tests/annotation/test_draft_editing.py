"""annotation.draft_editing: plan and call drafts, argument forms, validation and the diff
(pure)."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path

import pytest

from annotation import draft_editing
from annotation.draft_editing import Call, Change, RefineError, Step
from benchmarks.suites import mtubench, ultratool

ROOT = Path(__file__).resolve().parents[2]
ULTRATOOL_DEMO = ROOT / "benchmarks" / "demo" / "ultratool"
MTUBENCH_SEED = Path("/work/shared/seeddata/mtubench")


def plan() -> list[Step]:
    """1 A / 1.1 A1 / 1.2 A2 / 2 B / 2.1 B1 / 3 C."""
    return [
        Step("a", 0, "A"),
        Step("a1", 1, "A1"),
        Step("a2", 1, "A2", "get_weather", {"city": "Delft"}),
        Step("b", 0, "B"),
        Step("b1", 1, "B1"),
        Step("c", 0, "C"),
    ]


def shape(steps: list[Step]) -> list[tuple[str, int]]:
    return [(step.uid, step.depth) for step in steps]


WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "City name"},
        "days": {"type": "integer", "default": 1},
        "units": {"type": "string", "enum": ["metric", "imperial"]},
        "hourly": {"type": "boolean"},
        "threshold": {"type": "number"},
        "hours": {"type": "array", "items": {"type": "integer"}},
        "extra": {},
    },
    "required": ["city"],
}
TOOLS = {"get_weather": WEATHER, "send_sms": {"type": "object", "properties": {}}}


# --- plan operations ---------------------------------------------------------------------------


def test_numbering_follows_depths():
    assert draft_editing.numbering(plan()) == ["1", "1.1", "1.2", "2", "2.1", "3"]
    deep = [Step("x", 0, "X"), Step("y", 1, "Y"), Step("z", 2, "Z"), Step("w", 0, "W")]
    assert draft_editing.numbering(deep) == ["1", "1.1", "1.1.1", "2"]
    assert draft_editing.numbering([]) == []


def test_insert_at_the_top():
    steps = draft_editing.step_insert(plan(), None, text="  First  ")
    assert shape(steps)[0] == ("n1", 0)
    assert steps[0].text == "First"
    assert draft_editing.numbering(steps)[:2] == ["1", "2"]
    with pytest.raises(RefineError):
        draft_editing.step_insert(plan(), None, depth=1)


def test_insert_after_a_step_is_its_next_sibling_after_its_children():
    steps = draft_editing.step_insert(plan(), "a", text="New")
    # Placed after A's subtree, so it does not adopt A1 and A2.
    assert shape(steps) == [
        ("a", 0),
        ("a1", 1),
        ("a2", 1),
        ("n1", 0),
        ("b", 0),
        ("b1", 1),
        ("c", 0),
    ]
    assert draft_editing.numbering(steps)[3] == "2"


def test_insert_as_a_child_and_at_an_ancestor_depth():
    child = draft_editing.step_insert(plan(), "b", depth=1)
    assert shape(child)[3:6] == [("b", 0), ("n1", 1), ("b1", 1)]
    assert draft_editing.numbering(child)[4] == "2.1"
    # After A1 at depth 0: the next sibling of A1's ancestor A.
    outer = draft_editing.step_insert(plan(), "a1", depth=0)
    assert shape(outer)[:4] == [("a", 0), ("a1", 1), ("a2", 1), ("n1", 0)]
    with pytest.raises(RefineError):
        draft_editing.step_insert(plan(), "a", depth=2)
    with pytest.raises(RefineError):
        draft_editing.step_insert(plan(), "missing")


def test_new_uids_are_unique():
    steps = draft_editing.step_insert(plan(), "a")
    steps = draft_editing.step_insert(steps, "n1")
    assert [step.uid for step in steps].count("n2") == 1
    assert draft_editing.next_uid(steps) == "n3"
    assert draft_editing.next_uid(draft_editing.step_delete(steps, "n1")) == "n3"


def test_delete_takes_the_children():
    steps = draft_editing.step_delete(plan(), "a")
    assert shape(steps) == [("b", 0), ("b1", 1), ("c", 0)]
    assert draft_editing.numbering(steps) == ["1", "1.1", "2"]
    assert shape(draft_editing.step_delete(plan(), "a2")) == [
        ("a", 0),
        ("a1", 1),
        ("b", 0),
        ("b1", 1),
        ("c", 0),
    ]


def test_move_takes_the_subtree_past_the_sibling_subtree():
    down = draft_editing.step_move(plan(), "a", "down")
    assert shape(down) == [("b", 0), ("b1", 1), ("a", 0), ("a1", 1), ("a2", 1), ("c", 0)]
    up = draft_editing.step_move(plan(), "b", "up")
    assert shape(up) == shape(down)
    assert shape(draft_editing.step_move(plan(), "a2", "up")) == [
        ("a", 0),
        ("a2", 1),
        ("a1", 1),
        ("b", 0),
        ("b1", 1),
        ("c", 0),
    ]


def test_move_is_a_no_op_at_the_ends_and_never_leaves_the_parent():
    for uid, direction in [("a", "up"), ("c", "down"), ("a1", "up"), ("a2", "down"), ("b1", "up")]:
        assert draft_editing.step_move(plan(), uid, direction) == plan()
    with pytest.raises(RefineError):
        draft_editing.step_move(plan(), "a", "left")  # type: ignore[arg-type]


def test_indent_needs_a_sibling_before_and_takes_the_children():
    assert not draft_editing.can_indent(plan(), "a")
    assert not draft_editing.can_indent(plan(), "a1")
    assert draft_editing.step_indent(plan(), "a") == plan()
    assert draft_editing.step_indent(plan(), "a1") == plan()
    steps = draft_editing.step_indent(plan(), "b")
    assert shape(steps) == [("a", 0), ("a1", 1), ("a2", 1), ("b", 1), ("b1", 2), ("c", 0)]
    assert draft_editing.numbering(steps) == ["1", "1.1", "1.2", "1.3", "1.3.1", "2"]
    assert shape(draft_editing.step_indent(plan(), "a2"))[2] == ("a2", 2)


def test_outdent_keeps_the_order_and_takes_the_children():
    assert draft_editing.step_outdent(plan(), "a") == plan()
    steps = draft_editing.step_outdent(plan(), "a1")
    # In place: A2, the sibling after A1, becomes A1's child.
    assert shape(steps) == [("a", 0), ("a1", 0), ("a2", 1), ("b", 0), ("b1", 1), ("c", 0)]
    nested = [Step("x", 0, "X"), Step("y", 1, "Y"), Step("z", 2, "Z")]
    assert shape(draft_editing.step_outdent(nested, "y")) == [("x", 0), ("y", 0), ("z", 1)]


def test_set_replaces_fields_and_a_tool_free_step_drops_its_arguments():
    original = plan()
    steps = draft_editing.step_set(original, "a1", text=" Look ", tool="get_weather", arguments={})
    assert steps[1] == Step("a1", 1, "Look", "get_weather", {})
    cleared = draft_editing.step_set(original, "a2", tool=None)
    assert (cleared[2].tool, cleared[2].arguments) == (None, None)
    assert original == plan()  # never mutated


def test_steps_dump_and_load():
    steps = plan()
    assert (
        draft_editing.steps_load(json.loads(json.dumps(draft_editing.steps_dump(steps)))) == steps
    )
    with pytest.raises(RefineError):
        draft_editing.steps_load([{"uid": "a", "depth": "0", "text": "", "tool": None}])
    with pytest.raises(RefineError):
        draft_editing.steps_load(draft_editing.steps_dump([Step("a", 0, "A"), Step("a", 0, "B")]))


# --- plans and references ----------------------------------------------------------------------


def demo_samples():
    files = [ULTRATOOL_DEMO / "test.json", *sorted((ULTRATOOL_DEMO / "test_set").glob("*.json"))]
    return ultratool.import_files(files).samples


def test_plan_round_trip_on_the_demo_samples():
    samples = demo_samples()
    assert samples
    for sample in samples:
        reference = sample.reference
        kept = copy.deepcopy(reference)
        steps = draft_editing.plan_from_reference(reference)
        assert draft_editing.plan_from_reference(reference) == steps  # uids come from positions
        written = draft_editing.plan_to_reference(steps, reference)
        assert written == reference
        assert json.dumps(written) == json.dumps(reference)  # same key order too
        assert reference == kept


def test_plan_to_reference_renumbers_and_remaps_task_golds():
    sample = demo_samples()[0]  # 1 / 1.1 / 1.2 (get_weather_forecast) / 1.3 / 2 / 2.1 (set_alarm)
    reference = sample.reference
    steps = draft_editing.plan_from_reference(reference)
    assert [step.uid for step in steps] == ["s1", "s2", "s3", "s4", "s5", "s6"]
    steps = draft_editing.step_delete(steps, "s2")  # 1.1, tool-free
    steps = draft_editing.step_move(steps, "s5", "up")  # step 2 (and 2.1) before step 1
    written = draft_editing.plan_to_reference(steps, reference)

    assert [step["step"] for step in written["steps"]] == ["1", "1.1", "2", "2.1", "2.2"]
    assert [step["text"] for step in written["steps"]][:2] == [
        "Set the reminder",
        "Set an alarm at 6:30 if it will be windy",
    ]
    assert written["plan"][0]["children"][0]["tool"] == "set_alarm"
    assert [node["step"] for node in written["plan"][1]["children"]] == ["2.1", "2.2"]
    # The call string stays while the call is unchanged.
    assert written["steps"][1]["call"].startswith("set_alarm(")
    # tool_usage follows its steps (1.2 -> 2.1, 2.1 -> 1.1), in the new order.
    assert [(g["step"], g["tool"]) for g in written["tool_usage"]] == [
        ("1.1", "set_alarm"),
        ("2.1", "get_weather_forecast"),
    ]
    # The deleted step's awareness gold is dropped; the others are renumbered.
    assert [(g["step"], g["value"]) for g in written["tool_usage_awareness"]] == [
        ("1.1", 1),
        ("2.1", 1),
        ("2.2", 0),
    ]
    # planning was the old plan's text, so it is the new plan's text now.
    assert written["planning"].splitlines()[:2] == [
        "1. Set the reminder",
        "1.1 Set an alarm at 6:30 if it will be windy",
    ]
    assert reference["steps"][0]["step"] == "1"  # the old reference is untouched


def test_plan_to_reference_drops_the_call_string_of_a_changed_call_and_keeps_other_planning():
    reference = {
        "plan": [
            {
                "step": "1",
                "text": "Look",
                "tool": "get_weather",
                "arguments": {"city": "Delft"},
                "call": "get_weather(city='Delft')",
                "children": [],
            }
        ],
        "steps": [
            {
                "step": "1",
                "text": "Look",
                "tool": "get_weather",
                "arguments": {"city": "Delft"},
                "call": "get_weather(city='Delft')",
            }
        ],
        "planning": "1. Something else entirely",
    }
    steps = draft_editing.step_set(
        draft_editing.plan_from_reference(reference), "s1", arguments={"city": "Leiden"}
    )
    steps = draft_editing.step_insert(steps, "s1", text="Tell")
    written = draft_editing.plan_to_reference(steps, reference)
    assert "call" not in written["steps"][0]
    assert "call" not in written["plan"][0]
    assert written["steps"][1] == {"step": "2", "text": "Tell", "tool": None, "arguments": None}
    assert written["planning"] == "1. Something else entirely"


def test_planning_follows_the_plan_line_by_line_in_its_own_style():
    # UltraTool's published planning gold writes some top-level steps without a full stop
    # ("2 Log in") and keeps its own spacing; it is the old plan's text all the same, so it
    # follows the edit: the edited and renumbered lines only, each in its own style.
    def step(number, text):
        return {"step": number, "text": text, "tool": None, "arguments": None}

    steps = [
        step("1", "Find the train"),
        step("1.1", "Note  the trip"),
        step("2", "Log in"),
        step("3", "Book train ticket"),
    ]
    reference = {
        "plan": [],
        "steps": steps,
        "planning": "1. Find the train\n1.1 Note  the trip\n2 Log in\n3 Book train ticket\n",
    }
    draft = draft_editing.plan_from_reference(reference)
    draft = draft_editing.step_set(draft, "s4", text="Book the train ticket")
    draft = draft_editing.step_insert(draft, "s1", text="Pick a train", depth=0)
    written = draft_editing.plan_to_reference(draft, reference)
    assert written["planning"] == (
        "1. Find the train\n1.1 Note  the trip\n2. Pick a train\n3 Log in\n"
        "4 Book the train ticket\n"
    )
    # text that is not the plan's is kept as it is
    other = {**reference, "planning": "1. Find the train\n2 Log in"}
    assert draft_editing.plan_to_reference(draft, other)["planning"] == other["planning"]


def test_plan_to_reference_refuses_a_broken_draft():
    with pytest.raises(RefineError):
        draft_editing.plan_to_reference([], {})
    with pytest.raises(RefineError):
        draft_editing.plan_to_reference([Step("a", 0, "A"), Step("b", 2, "B")], {})
    with pytest.raises(RefineError):
        draft_editing.plan_to_reference([Step("a", 0, "A"), Step("a", 0, "B")], {})


# --- calls -------------------------------------------------------------------------------------


def mtubench_samples(*splits: str):
    files = [MTUBENCH_SEED / f"{split}_eval.jsonl" for split in splits]
    return mtubench.import_files(files).samples


def test_calls_round_trip_on_mtubench_seed_samples():
    samples = mtubench_samples("S-M", "M-S")
    references = [sample.reference for sample in samples]
    # The seed data holds the cases that matter: output references and no-call turns.
    assert any(
        isinstance(value, str) and value.startswith("get_current_temperature.")
        for reference in references
        for call in reference["calls"]
        for value in call["arguments"].values()
    )
    assert any(reference["answer"] == {"": {}} for reference in references)
    for sample in samples:
        reference = sample.reference
        calls = draft_editing.calls_from_reference(reference)
        assert [call.uid for call in calls] == [f"c{i}" for i in range(1, len(calls) + 1)]
        written = draft_editing.calls_to_reference(calls, reference, split=sample.split)
        assert written == reference
        assert json.dumps(written) == json.dumps(reference)


def test_mtubench_answer_is_rebuilt_from_changed_calls():
    reference = {
        "calls": [{"name": "A", "arguments": {"x": 1}}, {"name": "B", "arguments": {}}],
        "answer": {" A": {"x": 1}, "B": "{}"},
    }
    calls = draft_editing.calls_from_reference(reference)
    moved = draft_editing.call_move(calls, "c2", "up")
    written = draft_editing.calls_to_reference(moved, reference)
    assert written["calls"] == [
        {"name": "B", "arguments": {}},
        {"name": "A", "arguments": {"x": 1}},
    ]
    assert list(written["answer"].items()) == [("B", {}), ("A", {"x": 1})]

    empty = draft_editing.call_delete(draft_editing.call_delete(calls, "c1"), "c2")
    assert draft_editing.calls_to_reference(empty, reference, split="S-S")["answer"] == {"": {}}
    assert draft_editing.calls_to_reference(empty, reference, split="M-M")["answer"] == {}
    ood = {"calls": [], "answer": {"": "{}"}}
    assert draft_editing.calls_to_reference([], ood, split="OOD")["answer"] == {"": "{}"}

    twice = draft_editing.call_insert(calls, "c2", name="A")
    with pytest.raises(RefineError):
        draft_editing.calls_to_reference(twice, reference)


def test_generic_tool_calls_keep_the_final_answer():
    reference = {"answer": "42", "tool_calls": [{"name": "calc", "arguments": {"q": "6*7"}}]}
    calls = draft_editing.call_set(
        draft_editing.calls_from_reference(reference), "c1", arguments={"q": "42"}
    )
    written = draft_editing.calls_to_reference(calls, reference)
    assert written == {"answer": "42", "tool_calls": [{"name": "calc", "arguments": {"q": "42"}}]}
    assert draft_editing.calls_from_reference(None) == []
    added = draft_editing.call_insert([], None, name=" calc ")
    assert draft_editing.calls_to_reference(added, None) == {
        "tool_calls": [{"name": "calc", "arguments": {}}]
    }


def test_call_operations():
    calls = [Call("c1", "A"), Call("c2", "B"), Call("c3", "C")]
    assert [c.uid for c in draft_editing.call_insert(calls, "c1", name="X")] == [
        "c1",
        "n1",
        "c2",
        "c3",
    ]
    assert [c.uid for c in draft_editing.call_insert(calls, None)] == ["n1", "c1", "c2", "c3"]
    assert [c.uid for c in draft_editing.call_delete(calls, "c2")] == ["c1", "c3"]
    assert [c.uid for c in draft_editing.call_move(calls, "c1", "down")] == ["c2", "c1", "c3"]
    assert draft_editing.call_move(calls, "c1", "up") == calls
    assert draft_editing.call_move(calls, "c3", "down") == calls
    assert draft_editing.call_set(calls, "c2", name=" D ")[1] == Call("c2", "D", {})
    assert draft_editing.calls_load(draft_editing.calls_dump(calls)) == calls
    with pytest.raises(RefineError):
        draft_editing.call_delete(calls, "c9")


# --- argument forms ----------------------------------------------------------------------------


def test_schema_fields():
    fields = {item.name: item for item in draft_editing.schema_fields(WEATHER)}
    assert list(fields) == ["city", "days", "units", "hourly", "threshold", "hours", "extra"]
    assert fields["city"].type == "string"
    assert fields["city"].required
    assert fields["city"].description == "City name"
    assert (fields["days"].type, fields["days"].default) == ("integer", 1)
    assert (fields["units"].type, fields["units"].enum) == ("enum", ["metric", "imperial"])
    assert fields["hourly"].type == "boolean"
    assert fields["threshold"].type == "number"
    assert fields["hours"].type == "json"
    assert fields["extra"].type == "json"
    nullable = draft_editing.schema_fields({"properties": {"x": {"type": ["integer", "null"]}}})
    assert nullable[0].type == "integer"
    assert draft_editing.schema_fields({}) == []
    assert draft_editing.schema_fields(None) == []


def test_arguments_from_form_types_the_texts():
    form = {
        "city": "Delft",
        "days": " 3 ",
        "units": "metric",
        "hourly": "on",
        "threshold": "0.5",
        "hours": "[6, 7]",
        "extra": "plain words",
    }
    arguments, errors = draft_editing.arguments_from_form(WEATHER, form)
    assert errors == {}
    assert arguments == {
        "city": "Delft",
        "days": 3,
        "units": "metric",
        "hourly": True,
        "threshold": 0.5,
        "hours": [6, 7],
        "extra": "plain words",
    }
    assert draft_editing.arguments_from_form(WEATHER, {"hourly": "false", "threshold": "2"})[0] == {
        "hourly": False,
        "threshold": 2,
    }


def test_arguments_from_form_blank_is_absent_and_bad_text_is_an_error():
    arguments, errors = draft_editing.arguments_from_form(
        WEATHER,
        {"city": "", "days": "three", "units": "kelvin", "hourly": "maybe", "hours": "[6,"},
    )
    assert arguments == {}
    assert errors["days"] == "expected a whole number"
    assert errors["units"] == "must be one of: metric, imperial"
    assert errors["hourly"] == "expected true or false"
    assert errors["hours"].startswith("is not valid JSON")
    assert "city" not in errors  # required is arguments_errors' concern


def test_arguments_from_form_keeps_output_references_and_reads_a_prefix():
    arguments, errors = draft_editing.arguments_from_form(
        WEATHER,
        {"arg-days": "get_forecast.days", "arg-threshold": "<the rate found>"},
        prefix="arg-",
    )
    assert errors == {}
    assert arguments == {"days": "get_forecast.days", "threshold": "<the rate found>"}


def test_form_from_arguments_is_the_inverse():
    arguments = {"city": "Delft", "days": 3, "hourly": False, "hours": [6], "threshold": 1.5}
    form = draft_editing.form_from_arguments(WEATHER, arguments)
    assert form["days"] == "3"
    assert form["hourly"] == "false"
    assert form["hours"] == "[6]"
    assert form["units"] == ""
    assert draft_editing.arguments_from_form(WEATHER, form) == (arguments, {})


def test_arguments_from_json():
    assert draft_editing.arguments_from_json('{"a": 1}') == ({"a": 1}, None)
    assert draft_editing.arguments_from_json("  ") == ({}, None)
    assert draft_editing.arguments_from_json("[1]")[1] is not None
    assert draft_editing.arguments_from_json("{a: 1}")[1].startswith("is not valid JSON")


# --- schema checks -----------------------------------------------------------------------------


def test_arguments_errors_names_each_argument():
    errors = draft_editing.arguments_errors(
        WEATHER, {"days": "3", "units": "kelvin", "hours": [1, "x"], "cty": "Delft"}
    )
    assert errors["city"] == "is required"
    assert errors["days"] == 'expected a whole number, got the text "3"'
    assert errors["units"] == 'must be one of: metric, imperial (got the text "kelvin")'
    assert errors["hours"] == 'at [1]: expected a whole number, got the text "x"'
    assert errors["cty"].startswith("is not an argument of this tool (its arguments: city, days")
    assert draft_editing.arguments_errors(WEATHER, {"city": "Delft", "hourly": True}) == {}
    assert draft_editing.arguments_errors(WEATHER, ["Delft"]) == {
        "": "the arguments must be an object, got a list"
    }


def test_arguments_errors_allows_what_the_schema_allows():
    open_schema = {"type": "object", "properties": {"a": {}}, "additionalProperties": True}
    assert draft_editing.arguments_errors(open_schema, {"b": 1}) == {}
    assert draft_editing.arguments_errors({}, {"anything": [1]}) == {}
    closed = {"type": "object", "properties": {"a": {}}, "additionalProperties": False}
    assert draft_editing.arguments_errors(closed, {"b": 1})["b"].startswith("is not an argument")


def test_arguments_errors_skips_output_references():
    arguments = {"city": "Delft", "days": "get_forecast.days", "threshold": "<rate found>"}
    assert draft_editing.arguments_errors(WEATHER, arguments, tools=["get_forecast"]) == {}
    # A dotted value naming no tool of the sample is an ordinary wrong value.
    assert "days" in draft_editing.arguments_errors(WEATHER, arguments, tools=["other"])


def test_arguments_errors_reports_an_unusable_schema_instead_of_crashing():
    broken = {"type": "object", "properties": {"a": {"type": "strnig"}}}
    assert list(draft_editing.arguments_errors(broken, {"a": "x"})) == [""]
    bad_regex = {"type": "object", "properties": {"a": {"type": "string", "pattern": "("}}}
    assert list(draft_editing.arguments_errors(bad_regex, {"a": "x"})) == [""]


def test_plan_errors():
    steps = [
        Step("s1", 0, "Check the weather"),
        Step("s2", 1, "Look it up", "get_weather", {"city": 3, "days": 2}),
        Step("s3", 1, "Text it", "send_email", {"to": "me"}),
        Step("s4", 1, "Think", None, {"x": 1}),
        Step("s5", 1, "   "),
        Step("s6", 1, "Ask", "get_weather", None),
        Step("s7", 3, "Too deep"),
        Step("s8", 1, "Fine", "get_weather", {"city": "Delft"}),
    ]
    errors = draft_editing.plan_errors(steps, TOOLS)
    assert errors["s2"] == "argument city: expected text, got the number 3"
    assert errors["s3"] == "tool send_email is not in this sample's toolset"
    assert errors["s4"] == "a tool-free step takes no arguments"
    assert errors["s5"] == "the step has no text"
    assert errors["s6"] == "the call's arguments are not given"
    assert errors["s7"] == "is nested more than one level below the step before it"
    assert set(errors) == {"s2", "s3", "s4", "s5", "s6", "s7"}
    assert draft_editing.plan_errors([], TOOLS) == {"": "a plan has at least one step"}
    missing = draft_editing.plan_errors([Step("s1", 0, "Go", "get_weather", {})], TOOLS)
    assert missing == {"s1": "argument city: is required"}


def test_demo_plans_are_valid_against_their_toolsets():
    files = [ULTRATOOL_DEMO / "test.json"]
    bundle = ultratool.import_files(files)
    schemas = {tool.name: tool.parameters for tool in bundle.tools}
    for sample in bundle.samples:
        tools = {name: schemas[name] for name in sample.candidate_tools}
        assert (
            draft_editing.plan_errors(draft_editing.plan_from_reference(sample.reference), tools)
            == {}
        )


def test_calls_errors():
    calls = [
        Call("c1", "get_weather", {"city": "Delft"}),
        Call("c2", "", {}),
        Call("c3", "book", {}),
        Call("c4", "get_weather", {"days": 1}),
    ]
    errors = draft_editing.calls_errors(calls, TOOLS)
    assert errors == {
        "c2": "the call names no tool",
        "c3": "tool book is not in this sample's toolset",
        "c4": "argument city: is required",
    }
    once = draft_editing.calls_errors(calls, TOOLS, one_call_per_tool=True)
    assert once["c4"].endswith("the answer holds one call per tool")
    assert draft_editing.calls_errors([], TOOLS) == {}


# --- diff --------------------------------------------------------------------------------------


def kinds(changes: list[Change]) -> list[tuple[str, str]]:
    return [(change.kind, change.uid) for change in changes]


def test_diff_of_equal_plans_is_empty():
    assert draft_editing.plan_diff(plan(), plan()) == []


def test_one_moved_step_is_one_change():
    flat = [Step(uid, 0, uid.upper()) for uid in "abcdef"]
    moved = [flat[5], *flat[:5]]  # f to the top: every other step shifts down
    changes = draft_editing.plan_diff(flat, moved)
    assert changes == [Change("moved", "f", "6", "1")]


def test_a_moved_subtree_is_one_change():
    new = draft_editing.step_move(plan(), "b", "up")
    assert kinds(draft_editing.plan_diff(plan(), new)) == [("moved", "b")]


def test_an_insertion_does_not_move_the_steps_after_it():
    new = draft_editing.step_insert(plan(), None, text="Start")
    changes = draft_editing.plan_diff(plan(), new)
    assert len(changes) == 1
    assert changes[0].kind == "inserted"
    assert (changes[0].uid, changes[0].new_number) == ("n1", "1")
    assert changes[0].new["text"] == "Start"


def test_argument_changes_name_old_and_new_values():
    new = draft_editing.step_set(
        plan(), "a2", text="A2 again", arguments={"city": "Leiden", "days": 2}
    )
    new = draft_editing.step_set(new, "b1", tool="get_weather", arguments={"city": "Delft"})
    changes = draft_editing.plan_diff(plan(), new)
    assert changes == [
        Change("text", "a2", "1.2", "1.2", old="A2", new="A2 again"),
        Change("argument_changed", "a2", "1.2", "1.2", key="city", old="Delft", new="Leiden"),
        Change("argument_added", "a2", "1.2", "1.2", key="days", new=2),
        Change("tool", "b1", "2.1", "2.1", old=None, new="get_weather"),
        Change("argument_added", "b1", "2.1", "2.1", key="city", new="Delft"),
    ]
    removed = draft_editing.plan_diff(plan(), draft_editing.step_set(plan(), "a2", arguments={}))
    assert removed == [Change("argument_removed", "a2", "1.2", "1.2", key="city", old="Delft")]
    retyped = draft_editing.plan_diff(
        [Step("a", 0, "A", "t", {"flag": "True"})], [Step("a", 0, "A", "t", {"flag": True})]
    )
    assert kinds(retyped) == [("argument_changed", "a")]


def test_a_deleted_subtree_is_reported_once_per_step_where_it_was():
    new = draft_editing.step_delete(plan(), "a")
    new = draft_editing.step_set(new, "c", text="C2")
    changes = draft_editing.plan_diff(plan(), new)
    assert kinds(changes) == [
        ("deleted", "a"),
        ("deleted", "a1"),
        ("deleted", "a2"),
        ("text", "c"),
    ]
    assert [change.old_number for change in changes[:3]] == ["1", "1.1", "1.2"]
    assert changes[2].old["tool"] == "get_weather"
    middle = draft_editing.plan_diff(plan(), draft_editing.step_delete(plan(), "b"))
    assert kinds(middle) == [("deleted", "b"), ("deleted", "b1")]
    # After the last step that kept its place (A2), before what was inserted there.
    replaced = draft_editing.step_insert(draft_editing.step_delete(plan(), "b"), "a2")
    assert kinds(draft_editing.plan_diff(plan(), replaced)) == [
        ("deleted", "b"),
        ("deleted", "b1"),
        ("inserted", "n1"),
    ]


def test_indent_is_a_depth_change_not_a_move():
    new = draft_editing.step_indent(plan(), "b")
    assert draft_editing.plan_diff(plan(), new) == [
        Change("depth", "b", "2", "1.3", old=0, new=1),
        Change("depth", "b1", "2.1", "1.3.1", old=1, new=2),
    ]


def test_a_subtree_moved_and_reordered_reports_both():
    new = draft_editing.step_move(plan(), "b", "up")
    new = draft_editing.step_move(new, "a2", "up")
    assert sorted(kinds(draft_editing.plan_diff(plan(), new))) == [("moved", "a2"), ("moved", "b")]


def test_a_step_joining_a_moved_subtree_does_not_report_its_siblings():
    old = [
        Step("x", 0, "X"),
        Step("r", 0, "R"),
        Step("r1", 1, "R1"),
        Step("r2", 1, "R2"),
        Step("y", 0, "Y"),
        Step("z", 0, "Z"),
        Step("z1", 1, "Z1"),
        Step("z2", 1, "Z2"),
        Step("z3", 1, "Z3"),
    ]
    # R's subtree moved after Z's (the larger one stays), and Y became R's first child.
    x, r, r1, r2, y, z, z1, z2, z3 = old
    new = [x, z, z1, z2, z3, r, replace(y, depth=1), r1, r2]
    assert kinds(draft_editing.plan_diff(old, new)) == [
        ("moved", "r"),
        ("moved", "y"),
        ("depth", "y"),
    ]


def test_calls_diff():
    old = [Call("c1", "A", {"x": 1}), Call("c2", "B"), Call("c3", "C")]
    new = draft_editing.call_move(old, "c3", "up")
    new = draft_editing.call_move(new, "c3", "up")
    new = draft_editing.call_set(new, "c1", name="A2", arguments={"x": 2})
    new = draft_editing.call_delete(new, "c2")
    new = draft_editing.call_insert(new, "c1", name="D")
    assert [c.uid for c in new] == ["c3", "c1", "n1"]
    assert draft_editing.calls_diff(old, new) == [
        Change("moved", "c3", "3", "1"),
        Change("tool", "c1", "1", "2", old="A", new="A2"),
        Change("argument_changed", "c1", "1", "2", key="x", old=1, new=2),
        Change("deleted", "c2", "2", None, old={"name": "B", "arguments": {}}),
        Change("inserted", "n1", None, "3", new={"name": "D", "arguments": {}}),
    ]
