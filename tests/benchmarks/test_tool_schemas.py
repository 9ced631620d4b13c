"""Every suite's tools as OpenAI function tools (native tool calling): valid draft 2020-12 JSON
Schema parameters, names the API accepts and that map back, and the server's tool_calls read back
as the calls the suites score. Pure: no database."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from openai.types.chat import ChatCompletionMessageToolCall
from openai.types.responses import ResponseFunctionToolCall

from benchmarks.kit.base import ToolRecord
from benchmarks.kit.native import (
    ToolDeclarations,
    ToolNames,
    clean_schema,
    declare,
    json_type,
    leaked_calls,
    object_schema,
    read_tool_calls,
    sanitize_name,
)
from benchmarks.kit.protocol import Context, Evaluator, ToolSpec, default_declare_tools
from benchmarks.kit.registry import get_suite
from benchmarks.suites import stabletoolbench
from benchmarks.suites.wtueval.evaluate import tool_pool
from benchmarks.suites.wtueval.served import served_apis

DEMO = Path(__file__).resolve().parents[2] / "benchmarks" / "demo"
API_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def specs_of(records: Iterable[ToolRecord]) -> list[ToolSpec]:
    return [
        ToolSpec(r.name, r.description, r.parameters, r.returns, r.category, r.raw) for r in records
    ]


def declared(suite: str, specs: Sequence[ToolSpec]) -> ToolDeclarations:
    return get_suite(suite).evaluator.declare_tools(specs)


def assert_valid(declarations: ToolDeclarations, specs: Sequence[ToolSpec]) -> None:
    """Every tool declared once, with a valid object schema, under an API name that maps back."""
    names = list(dict.fromkeys(spec.name for spec in specs))
    assert len(declarations.tools) == len(names)
    api_names = []
    for tool, name in zip(declarations.tools, names, strict=True):
        assert tool["type"] == "function"
        function = tool["function"]
        assert API_NAME.match(function["name"]), function["name"]
        assert declarations.names.to_api(name) == function["name"]
        assert declarations.names.from_api(function["name"]) == name
        parameters = function["parameters"]
        Draft202012Validator.check_schema(parameters)
        assert parameters["type"] == "object"
        assert isinstance(parameters["properties"], dict)
        api_names.append(function["name"])
    assert len(set(api_names)) == len(api_names)


# --- every suite's tools, from the seed data and our demo data ---------------------------------


def test_mtubench_tools_validate_and_round_trip(seeddata: Path) -> None:
    suite = get_suite("mtubench")
    bundle = suite.import_files(sorted((seeddata / "mtubench").glob("*_eval.jsonl")))
    specs = specs_of(bundle.tools)
    assert len(specs) > 100
    assert_valid(declared("mtubench", specs), specs)
    # Each sample keeps its own definitions (a name has up to seven): declared per sample too.
    for sample in bundle.samples:
        own = [
            ToolSpec(t["name"], t["description"], t["parameters"], t["returns"])
            for t in sample.input["tools"]
        ]
        assert_valid(declared("mtubench", own), own)


def test_mtubench_keeps_the_published_documents(seeddata: Path) -> None:
    bundle = get_suite("mtubench").import_files([seeddata / "mtubench" / "S-S_eval.jsonl"])
    specs = {spec.name: spec for spec in specs_of(bundle.tools)}
    restaurant = declared("mtubench", [specs["ReserveRestaurant"]]).tools[0]["function"]
    assert restaurant["description"].startswith("Reserve a table at a restaurant")
    # The result fields a later call may name as "ReserveRestaurant.field".
    assert "Returns: restaurant_name, date, time" in restaurant["description"]
    parameters = restaurant["parameters"]
    assert parameters["required"] == ["restaurant_name", "city", "time"]
    # Published without types: no type constraint, the default kept.
    assert parameters["properties"]["city"] == {}
    assert parameters["properties"]["date"] == {"default": "2019-03-01"}


def test_stabletoolbench_tools_validate_and_round_trip(seeddata: Path) -> None:
    suite = get_suite("stabletoolbench")
    folder = seeddata / "stabletoolbench" / "solvable_queries" / "test_instruction"
    bundle = suite.import_files(sorted(folder.glob("*.json")))
    specs = {spec.name: spec for spec in specs_of(bundle.tools)}
    assert len(specs) > 1000
    # The tools of one query are what a run declares.
    for sample in bundle.samples:
        offered = [specs[name] for name in sample.candidate_tools]
        assert_valid(declared("stabletoolbench", offered), offered)
    everything = list(specs.values())
    assert_valid(declared("stabletoolbench", everything), everything)


def test_stabletoolbench_reads_the_rapidapi_parameters(seeddata: Path) -> None:
    folder = seeddata / "stabletoolbench" / "solvable_queries" / "test_instruction"
    bundle = get_suite("stabletoolbench").import_files([folder / "G1_category.first50.json"])
    specs = {spec.name: spec for spec in specs_of(bundle.tools)}
    offered = [specs["Logistics/latest_for_suivi_colis"], specs["Logistics/all_for_suivi_colis"]]
    declarations = declared("stabletoolbench", offered)
    latest = declarations.tools[0]["function"]
    # ToolBench's function name, the parameter names standardized as its server reads them.
    assert latest["name"] == "latest_for_suivi_colis"
    assert latest["description"] == "L'état courant (ie. le dernier état du colis)."
    assert latest["parameters"] == {
        "type": "object",
        "properties": {"colisid": {"type": "string", "examples": ["CA107308006SI"]}},
        "required": ["colisid"],
    }
    assert declarations.names.from_api("latest_for_suivi_colis") == (
        "Logistics/latest_for_suivi_colis"
    )


def test_stabletoolbench_types_it_cannot_map_have_no_type() -> None:
    raw = {
        "category_name": "Data",
        "tool_name": "Clock",
        "api_name": "At",
        "required_parameters": [
            {"name": "when", "type": "TIME (24-hour HH:MM)", "description": "a time"},
            {"name": "day", "type": "DATE (YYYY-MM-DD)", "default": "2024-01-01"},
        ],
        "optional_parameters": [{"name": "Count", "type": "NUMBER", "description": "how many"}],
    }
    spec = ToolSpec("Data/at_for_clock", "What time it is.", {}, raw=raw)
    parameters = declared("stabletoolbench", [spec]).tools[0]["function"]["parameters"]
    assert parameters["properties"] == {
        "when": {"description": "a time"},
        "day": {"type": "string", "format": "date", "examples": ["2024-01-01"]},
        "count": {"type": "number", "description": "how many"},
    }
    assert parameters["required"] == ["when", "day"]


def test_stabletoolbench_declares_finish_beside_the_apis(seeddata: Path) -> None:
    folder = seeddata / "stabletoolbench" / "solvable_queries" / "test_instruction"
    bundle = get_suite("stabletoolbench").import_files([folder / "G1_category.first50.json"])
    specs = {spec.name: spec for spec in specs_of(bundle.tools)}
    sample = bundle.samples[0]
    offered = [specs[name] for name in sample.candidate_tools] + [stabletoolbench.finish_tool()]
    declarations = declared("stabletoolbench", offered)
    assert_valid(declarations, offered)
    finish = declarations.tools[-1]["function"]
    assert finish["name"] == "Finish" == declarations.names.from_api("Finish")
    assert finish["parameters"]["properties"]["return_type"]["enum"] == [
        "give_answer",
        "give_up_and_restart",
    ]


def test_stabletoolbench_one_name_in_two_categories_gets_its_category() -> None:
    offered = [ToolSpec("Data/search_for_x"), ToolSpec("Movies/search_for_x")]
    names = declared("stabletoolbench", offered).names
    assert names.to_api("Data/search_for_x") == "search_for_x_for_data"
    assert names.to_api("Movies/search_for_x") == "search_for_x_for_movies"


def test_metatool_tools_have_no_parameters(seeddata: Path) -> None:
    folder = seeddata / "metatool"
    bundle = get_suite("metatool").import_files(
        [folder / "plugin_des.json", folder / "big_tool_des.json"]
    )
    specs = list({spec.name: spec for spec in specs_of(bundle.tools)}.values())
    declarations = declared("metatool", specs)
    assert_valid(declarations, specs)
    for tool, spec in zip(declarations.tools, specs, strict=True):
        assert tool["function"]["parameters"] == {"type": "object", "properties": {}}
        assert tool["function"].get("description", "") == spec.description
    assert declarations.names.from_api("PDF_URLTool") == "PDF&URLTool"


def test_ultratool_tools_validate_and_round_trip() -> None:
    folder = DEMO / "ultratool"
    bundle = get_suite("ultratool").import_files([folder / "test.json", folder / "test_set"])
    specs = list({spec.name: spec for spec in specs_of(bundle.tools)}.values())
    declarations = declared("ultratool", specs)
    assert_valid(declarations, specs)
    forecast = next(
        t["function"] for t in declarations.tools if t["function"]["name"] == "get_weather_forecast"
    )
    assert forecast["parameters"]["properties"]["city"] == {
        "type": "string",
        "description": "City name",
    }
    for sample in bundle.samples:
        toolset = [spec for spec in specs if spec.name in sample.candidate_tools]
        assert_valid(declared("ultratool", toolset), toolset)


def test_generic_tools_validate_and_round_trip() -> None:
    bundle = get_suite("generic").import_files([DEMO / "generic" / "questions.jsonl"])
    specs = specs_of(bundle.tools)
    declarations = declared("generic", specs)
    assert_valid(declarations, specs)
    weather = declarations.tools[0]["function"]
    assert weather["parameters"] == specs[0].parameters  # already clean JSON Schema


def test_wtueval_tools_validate_and_round_trip() -> None:
    # The tools a run offers: the local calculator and the served search tools.
    ctx = Context(task=next(iter(get_suite("wtueval").tasks.values())))
    toolbox = {name: api.spec for name, api in served_apis({}).items()}
    calculator = tool_pool(ctx)["Calculator"].spec
    described_only = ToolSpec("WikiSearch", "")  # a toolbox tool with no documents of its own
    plain_mapping = ToolSpec("Lookup", "Looks a word up.", {"word": "the word"})
    specs = [calculator, *toolbox.values()]
    declarations = declared("wtueval", specs)
    assert_valid(declarations, specs)
    assert declarations.tools[0]["function"]["parameters"]["required"] == ["expression"]
    bare = declared("wtueval", [described_only, plain_mapping])
    wiki, lookup = (tool["function"] for tool in bare.tools)
    assert wiki["description"]  # from the prompt templates
    assert wiki["parameters"]["required"] == ["input"]
    assert lookup["parameters"]["properties"] == {
        "word": {"type": "string", "description": "the word"}
    }


def test_the_default_reads_the_stored_json_schema() -> None:
    # A suite without declare_tools of its own gets the default.
    bare = replace(get_suite("generic"), name="bare", declare_tools=None)
    spec = ToolSpec("t", "A tool.", {"type": "object", "properties": {"x": {"type": "int"}}})
    declarations = Evaluator(bare).declare_tools([spec])
    assert declarations.tools == default_declare_tools([spec]).tools
    assert declarations.tools[0]["function"] == {
        "name": "t",
        "description": "A tool.",
        "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}},
    }


# --- names --------------------------------------------------------------------------------------


def test_valid_names_are_kept() -> None:
    names = ToolNames.of(["get_weather", "Search-2", "x" * 64])
    assert [names.to_api(n) for n in names] == ["get_weather", "Search-2", "x" * 64]


def test_dots_spaces_and_unicode_are_made_api_names() -> None:
    names = ToolNames.of(["maps.search", "web search", "café.menu", "天气查询", "Ünïcode tool"])
    assert names.to_api("maps.search") == "maps_search"
    assert names.to_api("web search") == "web_search"
    assert names.to_api("café.menu") == "cafe_menu"
    assert names.to_api("Ünïcode tool") == "Unicode_tool"
    chinese = names.to_api("天气查询")
    assert re.fullmatch(r"tool_[0-9a-f]{8}", chinese)
    for name in names:
        assert API_NAME.match(names.to_api(name))
        assert names.from_api(names.to_api(name)) == name


def test_long_names_are_cut_to_64_and_stay_distinct() -> None:
    first, second = "a" * 70 + "_one", "a" * 70 + "_two"
    names = ToolNames.of([first, second])
    assert len(names.to_api(first)) == 64 == len(names.to_api(second))
    assert names.to_api(first) != names.to_api(second)
    assert names.to_api(first).startswith("a" * 55 + "_")
    assert names.from_api(names.to_api(second)) == second


def test_collisions_after_sanitizing_are_settled_deterministically() -> None:
    tools = ["a.b", "a b", "a_b", "a/b"]
    names = ToolNames.of(tools)
    # The tool whose own name is the API name keeps it; the others get a hash of their name.
    assert names.to_api("a_b") == "a_b"
    others = [names.to_api(n) for n in ("a.b", "a b", "a/b")]
    assert all(re.fullmatch(r"a_b_[0-9a-f]{8}", api) for api in others)
    assert len(set(others)) == 3
    # Whatever the order they are offered in.
    again = ToolNames.of(list(reversed(tools)))
    assert again.as_dict() == names.as_dict()
    # Two colliding names without a keeper: both hashed.
    pair = ToolNames.of(["x.y", "x y"])
    assert pair.to_api("x.y") != pair.to_api("x y")
    assert pair.to_api("x.y") != "x_y" != pair.to_api("x y")


def test_a_hashed_name_that_meets_a_real_one_is_told_apart() -> None:
    hashed = sanitize_name("天")
    names = ToolNames.of(["天", hashed])
    assert names.to_api(hashed) == hashed
    assert names.to_api("天") != hashed
    assert API_NAME.match(names.to_api("天"))
    assert names.from_api(names.to_api("天")) == "天"


def test_preferred_names_and_unknowns() -> None:
    names = ToolNames.of(["Cat/search_for_x"], preferred={"Cat/search_for_x": "search_for_x"})
    assert names.to_api("Cat/search_for_x") == "search_for_x"
    assert names.from_api("Cat/search_for_x") is None
    assert names.from_api("nothing") is None
    assert names.from_api(None) is None
    with pytest.raises(KeyError):
        names.to_api("never declared")


def test_names_are_stored_and_read_back() -> None:
    names = ToolNames.of(["maps.search", "get_weather", "天气"])
    again = ToolNames.from_dict(json.loads(json.dumps(names.as_dict())))
    assert again.as_dict() == names.as_dict()
    assert again.from_api("maps_search") == "maps.search"
    with pytest.raises(ValueError):
        ToolNames.from_dict({"a": "x", "b": "x"})
    with pytest.raises(ValueError):
        ToolNames.from_dict({"a": "not valid"})


def test_a_repeated_tool_is_declared_once() -> None:
    declarations = declare([ToolSpec("t", "first"), ToolSpec("t", "second")])
    assert [tool["function"]["description"] for tool in declarations.tools] == ["first"]


# --- schemas ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("string", "string"),
        ("str", "string"),
        ("Text", "string"),
        ("int", "integer"),
        ("INTEGER", "integer"),
        ("float", "number"),
        ("double", "number"),
        ("bool", "boolean"),
        ("list", "array"),
        ("dict", "object"),
        ("null", "null"),
        ("DATE (YYYY-MM-DD)", None),
        ("enum", None),
        ("List[str]", None),
        (None, None),
        (3, None),
    ],
)
def test_type_words_map_to_json_schema_types(word: Any, expected: str | None) -> None:
    assert json_type(word) == expected


def test_clean_schema_keeps_what_is_valid_and_drops_the_rest() -> None:
    published = {
        "type": "object",
        "properties": {
            "city": {"type": "str", "description": "City name", "example": "Ghent"},
            "days": {"type": "int", "minimum": 1, "maximum": "seven"},
            "tags": {"type": "list", "items": {"type": "str"}},
            "site": {"type": "url"},
            "when": {"type": "timestamp", "description": 5},
            "mode": {"type": ["string", "null"], "enum": "fast"},
            "level": {"enum": ["low", "high"], "required": True},
        },
        "required": ["city", 3, "city"],
    }
    schema = clean_schema(published)
    Draft202012Validator.check_schema(schema)
    assert schema["properties"] == {
        "city": {"type": "string", "description": "City name", "examples": ["Ghent"]},
        "days": {"type": "integer", "minimum": 1},
        "tags": {"type": "array", "items": {"type": "string"}},
        "site": {"type": "string", "format": "uri"},
        "when": {"description": "5"},
        "mode": {"type": ["string", "null"]},
        "level": {"enum": ["low", "high"]},
    }
    assert schema["required"] == ["city", "level"]


KEYWORDS = (
    "type", "description", "title", "default", "enum", "const", "examples", "example",
    "format", "pattern", "minimum", "maximum", "multipleOf", "minLength", "maxItems",
    "items", "properties", "required", "additionalProperties", "options", "name",
)  # fmt: skip


def junk(rng: random.Random, depth: int = 0) -> Any:
    """A random schema-like document: keywords with values of any shape."""
    roll = rng.random()
    if depth > 4 or roll < 0.3:
        return rng.choice(
            ["string", "int", "List[str]", "", "^(", "^[a-z]+$", 3, -1, 0.5, True, None, [], {}]
        )
    if roll < 0.45:
        return [junk(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {
        rng.choice(KEYWORDS) if rng.random() < 0.8 else f"p{rng.randint(0, 9)}": junk(
            rng, depth + 1
        )
        for _ in range(rng.randint(0, 6))
    }


def test_any_document_gives_a_valid_schema() -> None:
    rng = random.Random(16)
    for _ in range(2000):
        document = junk(rng)
        Draft202012Validator.check_schema(clean_schema(document))
        parameters = object_schema(document)
        Draft202012Validator.check_schema(parameters)
        assert parameters["type"] == "object" and isinstance(parameters["properties"], dict)


def test_the_parameters_are_always_an_object() -> None:
    assert object_schema(None) == {"type": "object", "properties": {}}
    assert object_schema({"type": "string", "enum": ["a"]}) == {"type": "object", "properties": {}}
    assert object_schema({"city": "the city", "day": {"type": "str"}}) == {
        "type": "object",
        "properties": {"city": {"description": "the city"}, "day": {"type": "string"}},
    }
    assert object_schema({"required": ["q"]}) == {
        "type": "object",
        "properties": {},
        "required": ["q"],
    }
    assert object_schema({"properties": {"q": {}}, "required": ["q"]}) == {
        "type": "object",
        "properties": {"q": {}},
        "required": ["q"],
    }


# --- tool calls ---------------------------------------------------------------------------------

NAMES = ToolNames.of(["maps.search", "get_weather"])


def chat_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_several_calls_are_read_in_order_with_their_names_mapped_back() -> None:
    calls = read_tool_calls(
        [
            chat_call("call_1", "get_weather", '{"city": "Ghent"}'),
            chat_call("call_2", "maps_search", '{"q": "bakery", "limit": 3}'),
            chat_call("call_3", "get_weather", '{"city": "Lyon"}'),
        ],
        NAMES,
    )
    assert [c.id for c in calls] == ["call_1", "call_2", "call_3"]
    assert calls.answer() == [
        {"name": "get_weather", "arguments": {"city": "Ghent"}},
        {"name": "maps.search", "arguments": {"q": "bakery", "limit": 3}},
        {"name": "get_weather", "arguments": {"city": "Lyon"}},
    ]
    assert calls.problems == []


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ('{"city": "Ghent"', "not valid JSON"),
        ("city=Ghent", "not valid JSON"),
        ('["Ghent"]', "a JSON list, not an object"),
        ('"Ghent"', "a JSON str, not an object"),
        ('{"n": NaN}', "not valid JSON"),
    ],
)
def test_malformed_arguments_are_reported_not_raised(arguments: str, problem: str) -> None:
    calls = read_tool_calls([chat_call("c", "get_weather", arguments)], NAMES)
    (call,) = calls.calls
    assert call.name == "get_weather"
    assert call.arguments is None
    assert call.raw_arguments == arguments
    assert problem in call.problem
    assert calls.malformed == [call]
    assert calls.answer() == []
    assert calls.answer(keep_problems=True) == [{"name": "get_weather", "arguments": {}}]


def test_unknown_names_are_reported_and_keep_what_the_model_wrote() -> None:
    calls = read_tool_calls(
        [chat_call("a", "get_wether", '{"city": "Ghent"}'), chat_call("b", "get_weather", "{}")],
        NAMES,
    )
    unknown, _ = calls.calls
    assert unknown.name is None and unknown.api_name == "get_wether"
    assert unknown.problem == "unknown tool 'get_wether'"
    assert calls.unknown == [unknown]
    assert calls.problems == ["call 1: unknown tool 'get_wether'"]
    assert calls.answer() == [{"name": "get_weather", "arguments": {}}]
    assert calls.answer(keep_problems=True)[0] == {
        "name": "get_wether",
        "arguments": {"city": "Ghent"},
    }


def test_odd_but_readable_calls() -> None:
    calls = read_tool_calls(
        [
            chat_call("a", "get_weather", ""),  # no arguments at all
            {"id": "b", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}},
            {"id": "c", "function": {"arguments": "{}"}},  # no name
            "not a call",
        ],
        NAMES,
    )
    assert [c.arguments for c in calls] == [{}, {"city": "Oslo"}, {}, None]
    assert [c.ok for c in calls] == [True, True, False, False]
    assert calls.calls[2].problem == "a call without a tool name"
    assert calls.calls[3].problem == "not a tool call: str"
    assert read_tool_calls(None, NAMES).calls == ()
    assert read_tool_calls([], NAMES).answer() == []


def test_the_openai_clients_objects_and_responses_items_are_read() -> None:
    chat = ChatCompletionMessageToolCall.model_validate(
        chat_call("call_9", "maps_search", '{"q": "x"}')
    )
    item = ResponseFunctionToolCall.model_validate(
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_10",
            "name": "get_weather",
            "arguments": '{"city": "Rome"}',
        }
    )
    calls = read_tool_calls([chat, item, json.loads(item.model_dump_json())], NAMES)
    assert [c.id for c in calls] == ["call_9", "call_10", "call_10"]
    assert calls.answer() == [
        {"name": "maps.search", "arguments": {"q": "x"}},
        {"name": "get_weather", "arguments": {"city": "Rome"}},
        {"name": "get_weather", "arguments": {"city": "Rome"}},
    ]


def test_a_responses_output_is_read_for_its_function_calls() -> None:
    output = [
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{}"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "x"}]},
    ]
    calls = read_tool_calls(output, NAMES)
    assert [c.id for c in calls] == ["c1"]
    assert calls.problems == []


def test_a_format_hint_that_is_no_regex_is_not_kept_as_a_pattern() -> None:
    schema = clean_schema({"type": "string", "pattern": "^([0-9]{2}:[0-9]{2}$"})
    assert schema == {"type": "string"}
    Draft202012Validator.check_schema(schema)
    assert clean_schema({"pattern": "^[0-9]{2}:[0-9]{2}$"}) == {"pattern": "^[0-9]{2}:[0-9]{2}$"}


def test_declarations_for_the_responses_api() -> None:
    declarations = declare([ToolSpec("maps.search", "Search a map.")])
    assert declarations.for_responses() == [
        {
            "type": "function",
            "name": "maps_search",
            "description": "Search a map.",
            "parameters": {"type": "object", "properties": {}},
        }
    ]


# --- calls leaked into the text -----------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>\n{"name": "maps_search", "arguments": {"q": "bakery"}}\n</tool_call>',
        '[TOOL_CALLS][{"name": "maps_search", "arguments": {"q": "bakery"}}]',
        '<|python_tag|>{"name": "maps.search", "parameters": {"q": "bakery"}}',
        'Sure. {"type": "function", "function": {"name": "maps_search", '
        '"arguments": "{\\"q\\": \\"bakery\\"}"}}',
        '{"tool_calls": [{"name": "maps_search", "arguments": {"q": "bakery"}}]}',
        "I will call it:\n```\nmaps_search(q='bakery')\n```",
    ],
)
def test_calls_leaked_into_the_text_are_found(text: str) -> None:
    assert leaked_calls(text, NAMES) == [{"name": "maps.search", "arguments": {"q": "bakery"}}]


def test_text_without_a_declared_call_leaks_nothing() -> None:
    for text in (
        "",
        "The weather is fine.",
        '{"name": "unknown_tool", "arguments": {}}',
        '{"answer": 42}',
        "print(open('x'))",
        "get_weather(city=open('x'))",  # refused by the strict reader, never run
    ):
        assert leaked_calls(text, NAMES) == []
    several = (
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Ghent"}}</tool_call>'
        '<tool_call>{"name": "get_weather", "arguments": "not json"}</tool_call>'
    )
    assert leaked_calls(several, NAMES) == [
        {"name": "get_weather", "arguments": {"city": "Ghent"}},
        {"name": "get_weather", "arguments": {}},
    ]


def test_a_document_declared_again_is_not_cleaned_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A native run declares the same tools item after item (issue 19): each document is
    cleaned once, and every call still gets a schema of its own, equal to a fresh one."""
    import benchmarks.kit.native as native

    document = {"properties": {"n": {"type": "int", "description": "the number"}}, "required": 1}
    fresh = native._object_schema(document)
    cleaned: list[Any] = []
    real = native.clean_schema

    def counting(value: Any, depth: int = 0) -> dict[str, Any]:
        if depth == 0:
            cleaned.append(value)
        return real(value, depth)

    monkeypatch.setattr(native, "clean_schema", counting)
    monkeypatch.setattr(native, "_SCHEMAS", {})
    first = object_schema(document)
    first["properties"]["n"]["description"] = "changed by a caller"
    second = object_schema(json.loads(json.dumps(document)))
    assert len(cleaned) == 1
    assert second == fresh and second is not first
    # what JSON would change is cleaned every time, not taken for its text's entry
    assert object_schema({1: "the number"}) == native._object_schema({1: "the number"})
    assert object_schema({"1": "the number"}) == native._object_schema({"1": "the number"})
    assert object_schema({"q": {"enum": ("a", "b")}}) == native._object_schema(
        {"q": {"enum": ("a", "b")}}
    )
