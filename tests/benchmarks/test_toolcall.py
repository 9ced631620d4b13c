"""Call strings such as `tool(key='value')` are read as data, never run; code is refused."""

from __future__ import annotations

import pytest

from benchmarks.kit.toolcall import (
    INLINE_ACTION_INPUT,
    MAX_CALL_CHARS,
    ToolCall,
    ToolCallError,
    looks_like_call,
    marked_sections,
    parse_tool_call,
    parse_tool_call_lenient,
    react_marker,
)


def test_plain_call() -> None:
    call = parse_tool_call("file_write(file_path='a.txt', content=\"x\")")
    assert call == ToolCall(name="file_write", arguments={"file_path": "a.txt", "content": "x"})
    assert call.as_dict() == {
        "name": "file_write",
        "arguments": {"file_path": "a.txt", "content": "x"},
    }


def test_no_argument_call_and_surrounding_whitespace() -> None:
    assert parse_tool_call("  get_time()\n") == ToolCall(name="get_time", arguments={})


def test_dotted_name() -> None:
    assert parse_tool_call("maps.routes.search(q='x')").name == "maps.routes.search"


def test_nested_literals_numbers_and_constants() -> None:
    call = parse_tool_call(
        "f(a=-3, b=+2.5, c=[1, 'two', (3, 4)], d={'k': {'n': [None, True]}}, e=False, "
        "f=true, g=null, h=1e3)"
    )
    assert call.arguments == {
        "a": -3,
        "b": 2.5,
        "c": [1, "two", [3, 4]],
        "d": {"k": {"n": [None, True]}},
        "e": False,
        "f": True,
        "g": None,
        "h": 1000.0,
    }


def test_quotes_of_both_kinds_with_escapes() -> None:
    call = parse_tool_call(
        r"""f(a="it's", b='say "hi"', c='it\'s', d="tab\there", e='back\\slash', f='''x''')"""
    )
    assert call.arguments == {
        "a": "it's",
        "b": 'say "hi"',
        "c": "it's",
        "d": "tab\there",
        "e": "back\\slash",
        "f": "x",
    }


def test_unicode_values() -> None:
    call = parse_tool_call("create_reminder(time='明天 08:00', note='给妈妈打电话')")
    assert call.arguments == {"time": "明天 08:00", "note": "给妈妈打电话"}


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("__import__('os').system('rm -rf /')", "the called tool must be a name"),
        ("f(x=open('a'))", "argument 'x': a function call (open) is not a literal value"),
        ("f(x=a.b)", "argument 'x': attribute access (.b) is not a literal value"),
        ("f(**d)", "**kwargs unpacking is not allowed"),
        ("f(*a)", "*args unpacking is not allowed"),
        ("f(x=[i for i in y])", "argument 'x': a list comprehension is not a literal value"),
        ("f(x=lambda: 1)", "argument 'x': a lambda is not a literal value"),
        ("f(x=f'{secret}')", "argument 'x': an f-string is not a literal value"),
        ("f(x=a[0])", "argument 'x': a subscript is not a literal value"),
        ("f(x=some_name)", "argument 'x': a name (some_name) is not a literal value"),
        ("f(x=1 + 2)", "argument 'x': an arithmetic expression is not a literal value"),
        ("f(x={1, 2})", "argument 'x': a set is not a literal value"),
        ("f(x=b'raw')", "argument 'x': a bytes literal is not allowed"),
        ("f(x=1e999)", "argument 'x': inf is not a finite number"),
        ("f(x={**d})", "argument 'x': ** unpacking inside a dict is not allowed"),
        ("f(x={1: 'a'})", "argument 'x': dict keys must be strings"),
        ("f(x=[1, g()])", "argument 'x'[1]: a function call (g) is not a literal value"),
        ("f('positional')", "positional arguments are not allowed"),
        ("f(x=1, x=2)", "argument 'x' is given twice"),
        ("f()()", "the called tool must be a name"),
        ("obj.method", "expected a call"),
        ("import os", "not a valid call"),
        ("f(x='unclosed)", "not a valid call"),
        ("", "empty"),
    ],
)
def test_code_is_refused_with_what_is_wrong(text: str, fragment: str) -> None:
    with pytest.raises(ToolCallError) as err:
        parse_tool_call(text)
    assert fragment in str(err.value)


def test_a_one_megabyte_string_is_refused_before_parsing() -> None:
    with pytest.raises(ToolCallError, match="1,000,007 characters long; the limit is 10,000"):
        parse_tool_call("f(x='" + "a" * 1_000_000 + "')")
    just_fits = "a" * (MAX_CALL_CHARS - len("f(x='')"))
    assert parse_tool_call(f"f(x='{just_fits}')").arguments["x"] == just_fits


def test_deep_nesting_is_refused() -> None:
    nested = "[" * 25 + "]" * 25
    with pytest.raises(ToolCallError, match="nested more than 20 levels deep"):
        parse_tool_call(f"f(x={nested})")
    # Far deeper than the parser itself allows: still a clean refusal, not a crash.
    with pytest.raises(ToolCallError):
        parse_tool_call("f(x=" + "[" * 3000 + "]" * 3000 + ")")
    ok = "[" * 19 + "]" * 19
    assert parse_tool_call(f"f(x={ok})").name == "f"


def test_non_string_input_is_refused() -> None:
    with pytest.raises(ToolCallError, match="must be a string"):
        parse_tool_call(42)  # type: ignore[arg-type]


# --- the lenient reader for published gold slips ---------------------------------------------


def test_lenient_reads_an_apostrophe_inside_a_single_quoted_value() -> None:
    text = "book(passenger='Ilse O'Neill', note='it's fine')"
    with pytest.raises(ToolCallError):
        parse_tool_call(text)
    assert parse_tool_call_lenient(text).arguments == {
        "passenger": "Ilse O'Neill",
        "note": "it's fine",
    }


def test_lenient_keeps_placeholders_and_unquoted_phrases_as_text() -> None:
    call = parse_tool_call_lenient(
        "book_flight(flight_number=<obtained flight number>, city=Beijing, seats=2, "
        "when=next Friday morning, tags=['a', 'b'])"
    )
    assert call == ToolCall(
        name="book_flight",
        arguments={
            "flight_number": "<obtained flight number>",
            "city": "Beijing",
            "seats": 2,
            "when": "next Friday morning",
            "tags": ["a", "b"],
        },
    )


def test_lenient_agrees_with_strict_on_well_formed_calls() -> None:
    text = "f(a='x, y=z', b=[1, {'k': 'v'}], c=\"q\", d=-1.5)"
    assert parse_tool_call_lenient(text) == parse_tool_call(text)


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('rm -rf /')",
        "f(x=open('a'))",
        "f(x=a.b)",
        "f(**d)",
        "f(x=[i for i in y])",
        "f(x=lambda: 1)",
        "f('positional')",
        "f(x=1, x=2)",
        "not a call",
    ],
)
def test_lenient_still_refuses_code(text: str) -> None:
    with pytest.raises(ToolCallError):
        parse_tool_call_lenient(text)


def test_looks_like_call_only_reads_the_shape() -> None:
    assert looks_like_call("tool_a(x=<y>, z)") == "tool_a"
    assert looks_like_call("api . search(q=1)") == "api.search"
    assert looks_like_call("No tool required") is None


# --- ReAct replies ------------------------------------------------------------------------------


def test_react_sections_however_a_model_decorates_its_markers() -> None:
    marker = react_marker("Thought", "Action Input", "Action", "Final Answer")
    reply = (
        "Let me see.\n"
        "**Thought 1:** I need the weather\n"
        "- Action: get_weather\n"
        '> Action_Input: {"city": "Oban"}\n'
        "### final answer: Rain\n"
        "Observation: not a marker asked for\n"
    )
    before, pairs = marked_sections(reply, marker)
    assert before == "Let me see.\n"
    assert [name for name, _ in pairs] == ["thought", "action", "actioninput", "finalanswer"]
    assert pairs[1][1] == "get_weather\n"
    assert pairs[2][1] == '{"city": "Oban"}\n'
    assert pairs[3][1] == "Rain\nObservation: not a marker asked for\n"
    assert marked_sections("no markers", marker) == ("no markers", [])
    assert INLINE_ACTION_INPUT.split('calc Action Input: {"x": 1}', maxsplit=1) == [
        "calc",
        '{"x": 1}',
    ]
