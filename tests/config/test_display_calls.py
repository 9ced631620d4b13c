"""Tool calls are shown as calls (config.display.call_parts, the one way every page writes one):
hand-written cases."""

from __future__ import annotations

from django.template import Context, Template

from config.display import INLINE_CALL_CHARS, call_parts


def test_keyword_arguments_read_as_a_call() -> None:
    assert call_parts("get_weather", {"city": "Paris", "days": 3}) == {
        "text": 'get_weather(city="Paris", days=3)',
        "rows": [],
        "raw": None,
    }


def test_a_string_with_quotes_is_escaped_as_a_literal() -> None:
    shown = call_parts("say", {"text": 'He said "hi"', "ok": True, "none": None})
    assert shown["text"] == 'say(text="He said \\"hi\\"", ok=true, none=null)'


def test_nested_arguments_stay_whole_on_one_line_when_short() -> None:
    shown = call_parts("book", {"who": {"name": "Ann", "tags": [1, 2]}})
    assert shown["text"] == 'book(who={"name": "Ann", "tags": [1, 2]})'


def test_long_arguments_become_a_table_under_the_call() -> None:
    long = "x" * INLINE_CALL_CHARS
    shown = call_parts("write", {"path": "a.txt", "content": long, "meta": {"n": 1}})
    # the call names its keys; the table gives each value (a string as it is, the rest as JSON)
    assert shown["text"] == "write(path, content, meta)"
    assert shown["rows"] == [("path", "a.txt"), ("content", long), ("meta", '{\n  "n": 1\n}')]


def test_a_value_over_several_lines_is_shown_in_the_table() -> None:
    shown = call_parts("note", {"body": "one\ntwo"})
    assert shown["text"] == "note(body)" and shown["rows"] == [("body", "one\ntwo")]


def test_arguments_given_as_json_text_are_read() -> None:
    assert call_parts("f", '{"a": 1}')["text"] == "f(a=1)"


def test_no_arguments() -> None:
    for empty in (None, {}, [], ""):
        assert call_parts("ping", empty)["text"] == "ping()"


def test_non_dict_arguments_are_positional() -> None:
    assert call_parts("add", [1, "two"])["text"] == 'add(1, "two")'
    assert call_parts("Calculator", "2 + 3")["text"] == 'Calculator("2 + 3")'
    assert call_parts("flag", 7)["text"] == "flag(7)"


def test_keys_that_are_not_names_are_quoted() -> None:
    assert call_parts("f", {"a key": 1})["text"] == 'f("a key"=1)'


def test_unparseable_arguments_are_kept_as_text() -> None:
    shown = call_parts("search", '{"q": "Par')
    assert shown == {"text": "search(…)", "rows": [], "raw": '{"q": "Par'}


def test_a_call_without_a_name_says_so() -> None:
    assert call_parts("", {"a": 1})["text"] == "(no tool)(a=1)"


def test_the_partial_escapes_hostile_names_and_values() -> None:
    page = Template('{% include "partials/call.html" %}').render(
        Context({"name": "<script>x</script>", "arguments": {"q": "<img src=x onerror=1>"}})
    )
    assert "<script>" not in page and "<img" not in page
    assert "&lt;script&gt;x&lt;/script&gt;(q=&quot;&lt;img src=x onerror=1&gt;&quot;)" in page
