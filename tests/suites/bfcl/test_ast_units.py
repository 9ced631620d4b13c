"""The AST pieces on hand-computed cases: the decoders, the Java and JavaScript readers, the
string normalisation and the checker's rules one by one (test data, not BFCL's)."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.suites.bfcl.checker import (
    UnsupportedType,
    check,
    check_call,
    kind_of,
    language_of,
    normalise,
)
from benchmarks.suites.bfcl.convert import java_value, javascript_value
from benchmarks.suites.bfcl.decode import (
    KWARGS,
    Call,
    DecodeFailure,
    calls_from_bfcl,
    calls_to_bfcl,
    decode_prompt,
    decode_tool_calls,
    fc_name,
    has_call,
    restore_names,
)


def calls(text: str) -> list[dict[str, Any]]:
    decoded = decode_prompt(text)
    assert not isinstance(decoded, DecodeFailure), decoded
    return calls_to_bfcl(decoded)


# Prompt decoding


def test_prompt_list_of_calls_with_literals() -> None:
    assert calls("[f(a=1, b='x'), g.h.i(c=[1, 2.5], d={'k': (1, 2)}, e=None, t=True)]") == [
        {"f": {"a": 1, "b": "x"}},
        {"g.h.i": {"c": [1, 2.5], "d": {"k": (1, 2)}, "e": None, "t": True}},
    ]


def test_prompt_tolerance_of_brackets_fences_and_quotes() -> None:
    assert calls("f(a=1)") == [{"f": {"a": 1}}]
    assert calls("  ```\n[f(a=1)]\n```  ") == [{"f": {"a": 1}}]
    assert calls("f(a=1), g(b=2)") == [{"f": {"a": 1}}, {"g": {"b": 2}}]
    assert calls("[f(a=1, a=2)]") == [{"f": {"a": 2}}]  # Python's parser lets a repeat pass
    assert calls("") == []
    assert calls("[]") == []


def test_prompt_failures() -> None:
    for text in [
        "```python\n[f(a=1)]\n```",  # the word python is left in front
        "The answer is f(a=1).",
        "[f(a=1), 3]",
        "[f(a=x.y)]",
        "[f(a=lambda: 1)]",
        "[f(a={1, 2})]",
        "[f(a=f'{x}')]",
        "[f(a=[i for i in y])]",
        "[f(a=1 < 2)]",
        "[f(a=-x)]",
        "[f(a=-'s')]",
        "[f(a=x + 1)]",
        "[f(a=1 / 0)]",
        "[f(a=10 ** 10 ** 10)]",
        "[f(a='x' * 10 ** 9)]",
        "[f(a={[1]: 2})]",
        "[f(a={**d})]",
        "'[f(a=1)]'",  # quoted whole: brackets are added around the quotes first
        "[f(a=1)]'",
    ]:
        assert isinstance(decode_prompt(text), DecodeFailure), text


def test_prompt_values_read_as_bfcl_reads_them() -> None:
    (call,) = calls(
        "[f(n=meters, c=len(x), k=g(y=1, z=[2]), s=a[0], e=..., p=+5, m=not 1, q=-2.5,"
        " r=2 ** 10, t='ab' * 2, u=[1] + [2], v=-(3), w=7 // 2 + -1)]"
    )
    assert call == {
        "f": {
            "n": "meters",
            "c": "len(x)",
            "k": {"g": {"y": 1, "z": [2]}},
            "s": "a[0]",
            "e": "...",
            "p": -5,  # BFCL negates whatever the sign
            "m": -1,
            "q": -2.5,
            "r": 1024,
            "t": "abab",
            "u": [1, 2],
            "v": -3,
            "w": 2,  # inside arithmetic a sign means what Python means
        }
    }


def test_prompt_names_positional_arguments_and_kwargs() -> None:
    assert calls("[a.b[0].c(x=1)]") == [{"c": {"x": 1}}]
    assert calls("[f(1, 2, x=3)]") == [{"f": {"x": 3}}]
    assert calls("[f(**{'x': 1})]") == [{"f": {KWARGS: {"x": 1}}}]


# FC decoding


def tool(name: str, arguments: str) -> dict[str, Any]:
    return {"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}


def test_tool_calls() -> None:
    decoded = decode_tool_calls([tool("math_hypot", '{"x": 3, "y": 4.0}'), tool("g", "{}")])
    assert decoded == (Call("math_hypot", {"x": 3, "y": 4.0}), Call("g", {}))
    assert decode_tool_calls([]) == ()
    assert decode_tool_calls(None, "") == ()
    assert isinstance(decode_tool_calls(None, "no call"), DecodeFailure)
    assert isinstance(decode_tool_calls(None, None), DecodeFailure)
    assert isinstance(decode_tool_calls([tool("f", "{")]), DecodeFailure)
    wrong = decode_tool_calls([tool("f", "[1]")])
    assert isinstance(wrong, DecodeFailure) and wrong.wrong_format
    assert fc_name("math.hypot.v2") == "math_hypot_v2"


def test_restore_names() -> None:
    fc_calls = (Call("math_hypot", {"x": 1}), Call("a_b", {}), Call("other", {}))
    declared = ["math.hypot", "a.b", "a_b"]  # a.b and a_b share the FC name: kept as written
    assert restore_names(fc_calls, declared) == (
        Call("math.hypot", {"x": 1}),
        Call("a_b", {}),
        Call("other", {}),
    )


def test_has_call_and_bfcl_form() -> None:
    assert has_call((Call("f", {}),))
    assert not has_call(())
    assert not has_call(DecodeFailure("x"))
    assert calls_from_bfcl([{"f": {"a": 1}}]) == (Call("f", {"a": 1}),)
    for wrong in ["f(a=1)", [{"f": {}, "g": {}}], [{"f": [1]}], [["f"]]]:
        failure = calls_from_bfcl(wrong)
        assert isinstance(failure, DecodeFailure) and failure.wrong_format


# Java and JavaScript values


def test_java_scalars() -> None:
    assert java_value("42", "integer") == 42
    assert java_value("-7", "short") == -7
    assert java_value("4.0", "integer") == "4.0"
    assert java_value("42L", "long") == 42
    assert java_value("42", "long") == "42"
    assert java_value("1.5f", "float") == 1.5
    assert java_value("2e3F", "float") == 2000.0
    assert java_value("1.5", "float") == "1.5"
    assert java_value("1.5", "double") == 1.5
    assert java_value("true", "boolean") is True
    assert java_value("True", "boolean") == "True"
    assert java_value('"a"', "String") == '"a"'
    assert java_value("x", "any") == "x"
    with pytest.raises(UnsupportedType):
        java_value("x", "Set")
    with pytest.raises(UnsupportedType):
        java_value("x", "Integer")


def test_java_collections() -> None:
    assert java_value("new int[]{1, 2, 3}", "Array", "integer") == [1, 2, 3]
    assert java_value("new long[] { 1L, 2 }", "Array", "long") == [1, "2"]
    assert java_value('new String[]{"a", "b"}', "Array", "String") == ['"a"', '"b"']
    assert java_value("new int[]{}", "Array", "integer") == []
    assert java_value("{1, 2}", "Array", "integer") == "{1, 2}"
    as_list = 'new ArrayList<>(Arrays.asList("a", "b"))'
    assert java_value(as_list, "ArrayList", "String") == ["a", "b"]
    adds = "new ArrayList<Integer>() {{ add(1); add(2); }}"
    assert java_value(adds, "ArrayList", "integer") == [1, 2]
    assert java_value("new ArrayList<>()", "ArrayList", "integer") == []
    hash_map = 'new HashMap<String, Object>() {{ put("a", 1); put("b", "x"); put("c", 2L); }}'
    assert java_value(hash_map, "HashMap") == {"a": 1, "b": "x", "c": 2}
    assert java_value("new HashMap<>()", "HashMap") == {}
    assert java_value("map", "HashMap") == "map"


def test_javascript_values() -> None:
    assert javascript_value("'hi'", "String") == "hi"
    assert javascript_value('"hi"', "String") == "hi"
    assert javascript_value("hi", "String") == "hi"
    assert javascript_value("12", "integer") == 12
    assert javascript_value("1.5", "integer") == "1.5"
    assert javascript_value("3", "float") == 3.0
    assert javascript_value("1e3", "float") == "1e3"
    assert javascript_value("10n", "Bigint") == 10
    assert javascript_value("false", "Boolean") is False
    assert javascript_value("[1, 'two', true]", "array") == [1, "two", True]
    assert javascript_value("new Array(1, 2)", "array", "integer") == [1, 2]
    assert javascript_value("['a', 'b']", "array", "String") == ["a", "b"]
    assert javascript_value("[[1, 2], [3, 4]]", "array", "array") == [[1, 2], [3, 4]]
    assert javascript_value("[]", "array", "integer") == []
    assert javascript_value("items", "array", "String") == "items"
    assert javascript_value("{}", "dict") == {}
    assert javascript_value("{a: 1, 'b': 'x', c: [1, 2], d: {e: true}, f: 2}", "dict") == {
        "a": 1,
        "b": "x",
        "c": [1, 2],
        "d": "{e: true",  # the object ends at its first closing brace, as in BFCL
    }
    assert javascript_value("{d: {e: true}}", "dict") == {"d": "{e: true"}
    assert javascript_value("config", "dict") == "config"
    with pytest.raises(UnsupportedType):
        javascript_value("x", "Map")


# The checker's rules


def test_normalise() -> None:
    assert normalise("New York, NY") == "newyorkny"
    assert normalise("a-b_c*d^e/f.g") == "abcdefg"
    assert normalise("It's") == 'it"s'
    assert normalise("x!") == "x!"


AREA = {
    "name": "geo.area",
    "description": "test data",
    "parameters": {
        "type": "dict",
        "properties": {
            "r": {"type": "float", "description": ""},
            "unit": {"type": "string", "description": ""},
            "tags": {"type": "array", "items": {"type": "integer"}, "description": ""},
        },
        "required": ["r"],
    },
}
ANSWERS = {"r": [2.0], "unit": ["cm", ""], "tags": [[1, 2], ""]}


def one(arguments: dict[str, Any], *, name: str = "geo.area", underscore: bool = False) -> str:
    verdict = check_call(
        AREA, Call(name, arguments), ANSWERS, language="python", underscore_names=underscore
    )
    return verdict.detail


def test_check_call_rules() -> None:
    assert one({"r": 2.0}) == ""
    assert one({"r": 2}) == ""  # an int for a float
    assert one({"r": True}) == "type_error:simple"
    assert one({"r": 2.0, "unit": "C.M."}) == ""
    assert one({"r": 2.0, "unit": "m"}) == "value_error:string"
    assert one({"unit": "cm"}) == "simple_function_checker:missing_required"
    assert one({"r": 2.0, "x": 1}) == "simple_function_checker:unexpected_param"
    assert one({"r": 2.0, "tags": [2, 1]}) == "value_error:list/tuple"
    assert one({"r": 2.0, "tags": (1, 2)}) == "type_error:simple"
    assert one({"r": 2.0}, name="geo_area") == "simple_function_checker:wrong_func_name"
    assert one({"r": 2.0}, name="geo_area", underscore=True) == ""


def test_shapes_and_relevance() -> None:
    answer = [{"geo.area": ANSWERS}]
    good = (Call("geo.area", {"r": 2.0}),)

    def verdict(decoded: Any, category: str) -> str:
        result = check(decoded, [AREA], answer, category=category, language="python")
        return "pass" if result.valid else str(result.kind)

    assert verdict(good, "simple_python") == "pass"
    assert verdict(good * 2, "simple_python") == "wrong_count"
    assert verdict(DecodeFailure("x"), "live_simple") == "decoding_failure"
    assert verdict(good, "irrelevance") == "extra_call"
    assert verdict((), "irrelevance") == "pass"
    assert verdict(DecodeFailure("x"), "live_irrelevance") == "pass"
    assert verdict(good, "live_relevance") == "pass"
    assert verdict((), "live_relevance") == "no_call"
    with pytest.raises(ValueError):
        verdict(good, "multi_turn_base")


def test_language_and_kinds() -> None:
    assert language_of("simple_java") == "java"
    assert language_of("simple_javascript") == "javascript"
    assert language_of("live_parallel_multiple") == "python"
    no_match = "parallel_function_checker_no_order:cannot_find_match"
    wrong_name = "simple_function_checker:wrong_func_name"
    assert kind_of(no_match, [wrong_name, "type_error:nested"]) == "wrong_type"
    assert kind_of(no_match, [wrong_name]) == "wrong_function"
    assert kind_of("simple_function_checker:missing_optional") == "missing_required"
