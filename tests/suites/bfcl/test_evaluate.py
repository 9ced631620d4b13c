"""The pure parts of BFCL's AST tasks (evaluate.py), on hand-made entries (ours, in BFCL's
format): the Prompt-mode request, the FC-mode tools, the Java/JavaScript declarations, the
answer decoded and scored in each mode, the run's metrics."""

from __future__ import annotations

import json
from typing import Any

from benchmarks.kit.native import read_tool_calls
from benchmarks.kit.protocol import Context, Item, NativeReply, Outcome, Scored
from benchmarks.suites import bfcl

DOC = {
    "name": "geo.distance",
    "description": "Distance between two cities.",
    "parameters": {
        "type": "dict",
        "properties": {
            "origin": {"type": "string", "description": "From."},
            "km": {"type": "float", "description": "Rounded to."},
            "stops": {"type": "array", "description": "Via.", "items": {"type": "string"}},
            "pair": {"type": "tuple", "description": "Two points.", "items": {"type": "float"}},
            "options": {
                "type": "dict",
                "description": "Options.",
                "properties": {"fast": {"type": "boolean", "description": "Fast."}},
            },
            "tag": {"description": "No type given."},
        },
        "required": ["origin"],
    },
}
ANSWER = [{"geo.distance": {"origin": ["Ghent"], "km": [1.5, ""], "stops": [["Lyon"], ""]}}]


def item(category: str = "simple_python", **kw: Any) -> Item:
    question = kw.pop("question", [[{"role": "user", "content": "How far from Ghent?"}]])
    return Item(
        split=category,
        external_id=f"{category}_test_0",
        input={"question": question, "query": "How far from Ghent?", "functions": [DOC]},
        reference=kw.pop("reference", ANSWER),
        metadata={"category": category},
    )


def ctx(category: str = "simple_python", mode: str = "text") -> Context:
    return Context(task=bfcl.TASKS[category], options={"tool_mode": mode})


def test_prompt_mode_puts_bfcls_system_prompt_with_the_docs_before_the_entrys_own() -> None:
    entry = item(
        question=[[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Q"}]]
    )
    prompt = bfcl.prompt_mode(entry, ctx(), {})
    assert [m["role"] for m in prompt.messages] == ["system", "user"]
    system = prompt.messages[0]["content"]
    assert system.startswith("You are an expert in composing functions.You are given")
    assert "func_name2(params)].  You SHOULD NOT include" in system
    docs = json.loads(system.split("that you can invoke.\n", 1)[1].rsplit("\n\nBe brief.", 1)[0])
    assert docs[0]["description"] == (
        "Distance between two cities. Note that the provided function is in Python 3 syntax."
    )
    assert docs[0]["parameters"] == DOC["parameters"]  # the published types, unchanged
    assert system.endswith("\n\nBe brief.")
    plain = bfcl.prompt_mode(item(), ctx(), {})
    assert plain.messages[0]["role"] == "system" and plain.messages[1]["content"] == (
        "How far from Ghent?"
    )


def test_the_fc_tool_is_declared_as_bfcls_openai_handler_declares_it() -> None:
    tool = bfcl.openai_tool(DOC)
    function = tool["function"]
    assert tool["type"] == "function" and function["name"] == "geo_distance"
    properties = function["parameters"]["properties"]
    assert function["parameters"]["type"] == "object"
    assert properties["km"] == {
        "type": "number",
        "format": "float",
        "description": "Rounded to. This is a float type value.",
    }
    assert properties["stops"]["type"] == "array" and properties["stops"]["items"] == {
        "type": "string"
    }
    assert properties["pair"]["type"] == "array"
    assert properties["pair"]["items"] == {"type": "number"}  # items get no float note
    assert properties["options"]["type"] == "object"
    assert properties["options"]["properties"]["fast"]["type"] == "boolean"
    assert properties["tag"]["type"] == "string"
    assert DOC["parameters"]["properties"]["km"]["type"] == "float"  # the doc is not changed


def test_native_prompt_sends_the_messages_as_they_are_and_the_tools() -> None:
    native = bfcl.native_prompt(item(), ctx(mode="native"), {})
    assert native.prompt.messages == [{"role": "user", "content": "How far from Ghent?"}]
    assert [t["function"]["name"] for t in native.prompt.tools] == ["geo_distance"]
    assert native.prompt.tools[0]["function"]["description"].endswith("Python 3 syntax.")
    assert native.names.to_api("geo.distance") == "geo_distance"


def test_java_and_javascript_parameters_are_declared_as_strings_with_their_type_noted() -> None:
    java = {
        "name": "Lists.fill",
        "description": "Fill.",
        "parameters": {
            "type": "dict",
            "properties": {
                "values": {"type": "ArrayList", "description": "V.", "items": {"type": "long"}},
                "owner": {"type": "any", "description": "O."},
            },
        },
    }
    entry = Item("simple_java", "j", {"functions": [java]}, metadata={"category": "simple_java"})
    (doc,) = bfcl.offered_docs(entry)
    assert doc["description"] == "Fill. Note that the provided function is in Java 8 SDK syntax."
    assert doc["parameters"]["properties"]["values"] == {
        "type": "string",
        "description": "V. This is Java ArrayList type parameter in string representation. "
        "The list elements are of type long; they are not in string representation.",
    }
    assert doc["parameters"]["properties"]["owner"] == {
        "type": "string",
        "description": "O. This parameter can be of any type of Java object in string "
        "representation.",
    }
    js = {
        "name": "f",
        "description": "F.",
        "parameters": {
            "type": "dict",
            "properties": {
                "o": {"type": "dict", "description": "D.", "properties": {"a": {"type": "x"}}}
            },
        },
    }
    entry = Item(
        "simple_javascript", "s", {"functions": [js]}, metadata={"category": "simple_javascript"}
    )
    (doc,) = bfcl.offered_docs(entry)
    assert doc["parameters"]["properties"]["o"] == {
        "type": "string",
        "description": "D. This is JavaScript dict type parameter in string representation. "
        "The dictionary entries have the following schema; they are not in string "
        'representation. {"a": {"type": "x"}}',
    }


def scores(entry: Item, text: str, mode: str = "text") -> dict[str, float | None]:
    context = ctx(entry.split, mode)
    outcome = bfcl.SUITE.evaluator.parse(text, entry, context, {})
    return bfcl.score_answer(outcome, entry, context, {})


def native_scores(entry: Item, calls: list[dict[str, Any]], text: str = "") -> Any:
    context = ctx(entry.split, "native")
    native = bfcl.native_prompt(entry, context, {})
    tool_calls = [
        {"id": f"c{i}", "type": "function", "function": call} for i, call in enumerate(calls)
    ]
    reply = NativeReply(text, tool_calls, read_tool_calls(tool_calls, native.names), native.names)
    outcome = bfcl.native_outcome(reply, entry, context, {})
    return outcome, bfcl.score_answer(outcome, entry, context, {})


def test_text_answers_are_decoded_and_checked() -> None:
    entry = item()
    right = '[geo.distance(origin="ghent", km=1.5)]'
    assert scores(entry, right) == {"accuracy": 100.0, "unparsed": 0.0}
    assert scores(entry, '[geo.distance(origin="Paris")]') == {"accuracy": 0.0, "unparsed": 0.0}
    assert scores(entry, "The distance is 5 km.") == {"accuracy": 0.0, "unparsed": 100.0}
    # the FC spelling is not the declared name in Prompt mode
    assert scores(entry, '[geo_distance(origin="Ghent")]')["accuracy"] == 0.0
    outcome = bfcl.SUITE.evaluator.parse(right, entry, ctx(), {})
    assert outcome.parsed and outcome.answer == {
        "calls": [{"name": "geo.distance", "arguments": {"origin": "ghent", "km": 1.5}}]
    }


def test_irrelevance_passes_on_a_declining_text_and_fails_on_a_call() -> None:
    entry = item("irrelevance", reference={"answer": None, "expected": "no_call"})
    assert scores(entry, "None of these functions help.") == {"accuracy": 100.0, "unparsed": 0.0}
    assert scores(entry, '[geo.distance(origin="x")]')["accuracy"] == 0.0
    outcome, native = native_scores(entry, [])
    assert native["accuracy"] == 100.0 and outcome.answer == {"calls": []}


def test_native_answers_are_checked_with_the_fc_names() -> None:
    entry = item()
    outcome, right = native_scores(
        entry, [{"name": "geo_distance", "arguments": '{"origin": "Ghent"}'}]
    )
    assert right == {"accuracy": 100.0, "unparsed": 0.0}
    # shown with the declared name, kept as sent beside it
    assert outcome.answer["calls"][0]["name"] == "geo.distance"
    assert outcome.tool_calls[0]["function"]["name"] == "geo_distance"
    _, dotted = native_scores(entry, [{"name": "geo.distance", "arguments": '{"origin": "Ghent"}'}])
    assert dotted["accuracy"] == 0.0
    outcome, text_only = native_scores(entry, [], text='[geo.distance(origin="Ghent")]')
    assert text_only == {"accuracy": 0.0, "unparsed": 100.0} and not outcome.parsed
    _, broken = native_scores(entry, [{"name": "geo_distance", "arguments": "{oops"}])
    assert broken == {"accuracy": 0.0, "unparsed": 100.0}


def test_java_in_text_mode_is_a_decoding_failure_with_a_note() -> None:
    entry = item("simple_java")
    outcome = bfcl.SUITE.evaluator.parse(
        '[geo.distance(origin="Ghent")]', entry, ctx("simple_java"), {}
    )
    assert not outcome.parsed and "tree-sitter" in outcome.note
    assert bfcl.score_answer(outcome, entry, ctx("simple_java"), {}) == {
        "accuracy": 0.0,
        "unparsed": 100.0,
    }


def test_a_failed_call_scores_0_and_the_run_counts() -> None:
    entry = item()
    context = ctx()
    assert bfcl.score_answer(None, entry, context, {}) == {"accuracy": 0.0}
    scored = [
        Scored(entry, None, {"accuracy": 0.0}),
        Scored(entry, Outcome(""), {"accuracy": 100.0, "unparsed": 0.0}),
        Scored(entry, Outcome(""), {"accuracy": 0.0, "unparsed": 100.0}),
    ]
    assert bfcl.aggregate(scored, context) == {"accuracy": 33.33, "n": 3.0, "unparsed": 1.0}


def test_the_gold_takes_the_first_acceptable_values_nested_ones_too() -> None:
    entry = item(
        reference=[
            {
                "geo.distance": {
                    "origin": ["Ghent", "Gent"],
                    "km": ["", 2.0],
                    "options": [{"fast": [True, False], "slow": [""]}],
                    "stops": [[{"city": ["Lyon"]}]],
                }
            }
        ]
    )
    assert bfcl.gold_text(entry) == (
        "[geo.distance(origin='Ghent', options={'fast': True}, stops=[{'city': 'Lyon'}])]"
    )
    assert bfcl.gold_tool_calls(entry)[0]["function"] == {
        "name": "geo_distance",
        "arguments": '{"origin": "Ghent", "options": {"fast": true}, "stops": [{"city": "Lyon"}]}',
    }


def test_the_error_types_of_a_run_are_the_checkers_kinds_of_its_wrong_answers() -> None:
    from benchmarks.kit.analyses import AnalysisInput

    entry = item()
    context = ctx()
    evaluator = bfcl.SUITE.evaluator
    records = []
    for text in (
        '[geo.distance(origin="Ghent")]',  # right
        '[geo.distance(origin="Paris")]',  # wrong value
        '[geo.distance(origin="Paris")]',  # wrong value
        "[other(origin='Ghent')]",  # wrong function
        "no calls here",  # decoding failure
        None,  # failed call
    ):
        outcome = None if text is None else evaluator.parse(text, entry, context, {})
        records.append(Scored(entry, outcome, bfcl.score_answer(outcome, entry, context, {})))
    (analysis,) = bfcl.SUITE.analyses_for("simple_python")
    rows = analysis.run(AnalysisInput(records, context))
    assert [(r["group"], r["n"], r["share"]) for r in rows] == [
        ("decoding_failure", 1, 20.0),
        ("wrong_function", 1, 20.0),
        ("wrong_value", 2, 40.0),
        ("failed_call", 1, 20.0),
    ]


def test_the_gold_gives_a_required_parameter_and_leaves_out_an_undeclared_optional_one() -> None:
    entry = item(
        reference=[
            {
                "geo.distance": {
                    "origin": ["", "Ghent"],  # required: "" passed over
                    "km": ["", 3.0],  # optional: left out
                    "speed": ["fast", ""],  # not declared, may be left out: left out
                }
            }
        ]
    )
    assert bfcl.gold_text(entry) == "[geo.distance(origin='Ghent')]"


def test_the_java_gold_is_written_as_java_source_text() -> None:
    java = {
        "name": "Store.update",
        "description": "Update.",
        "parameters": {
            "type": "dict",
            "properties": {
                "ids": {"type": "ArrayList", "description": "I.", "items": {"type": "long"}},
                "tags": {"type": "Array", "description": "T.", "items": {"type": "String"}},
                "meta": {"type": "HashMap", "description": "M."},
                "id": {"type": "long", "description": "Id."},
                "ratio": {"type": "float", "description": "R."},
                "on": {"type": "boolean", "description": "On."},
            },
            "required": ["ids"],
        },
    }
    entry = Item(
        "simple_java",
        "j",
        {"functions": [java]},
        reference=[
            {
                "Store.update": {
                    "ids": [[1, 2]],
                    "tags": [["a", "b"]],
                    "meta": [{"limit": [50], "mode": ["fast"]}],
                    "id": [42],
                    "ratio": [0.5],
                    "on": [True],
                }
            }
        ],
        metadata={"category": "simple_java"},
    )
    (call,) = bfcl.gold_tool_calls(entry)
    assert json.loads(call["function"]["arguments"]) == {
        "ids": "new ArrayList<>(Arrays.asList(1L, 2L))",
        "tags": "new String[]{a, b}",
        "meta": 'new HashMap<String, Object>() {{ put("limit", 50); put("mode", "fast"); }}',
        "id": "42L",
        "ratio": "0.5f",
        "on": "true",
    }
    context = ctx("simple_java", "native")
    outcome = Outcome("", tool_calls=[call])
    assert bfcl.score_answer(outcome, entry, context, {})["accuracy"] == 100.0
