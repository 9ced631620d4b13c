"""benchmarks/kit/layout.py: a published JSON record's layout, kept and written back.
Hand-computed cases; the suites' use of it is in test_export_published.py."""

from __future__ import annotations

from benchmarks.kit.layout import (
    document_layout,
    dump,
    in_order,
    key_order,
    record_layout,
    record_layouts,
    write_document,
    write_records,
)


def test_key_order_keeps_every_objects_keys_as_lists() -> None:
    value = {"b": 1, "a": {"d": [1, {"f": 2, "e": 3}], "c": "x"}, "list": [1, 2]}
    assert key_order(value) == ["b", ["a", [["d", [None, ["f", "e"]]], "c"]], "list"]
    assert key_order([1, "x"]) is None and key_order(3) is None


def test_in_order_restores_the_kept_order_and_puts_new_keys_last() -> None:
    order = ["b", ["a", [["d", [None, ["f", "e"]]], "c"]]]
    stored = {"a": {"c": "x", "d": [1, {"e": 3, "f": 2}]}, "b": 1}  # as jsonb gives it back
    restored = in_order(stored, order)
    assert list(restored) == ["b", "a"]
    assert list(restored["a"]) == ["d", "c"] and list(restored["a"]["d"][1]) == ["f", "e"]
    # a refinement's new key follows the kept ones; a dropped key is simply absent
    assert list(in_order({"new": 0, "a": {}, "b": 2}, order)) == ["b", "a", "new"]


def test_record_layout_finds_the_json_dumps_options_that_wrote_a_record() -> None:
    value = {"q": "caf\u00e9", "n": [1]}
    assert record_layout('{"q": "caf\u00e9", "n": [1]}', value) == {}
    assert record_layout('{"q": "caf\\u00e9", "n": [1]}', value) == {"ascii": True}
    # a record one level into a list indented by one space
    text = '{\n  "q": "caf\u00e9",\n  "n": [\n   1\n  ]\n }'
    assert record_layout(text, value, 1) == {"indent": 1}
    assert dump(value, {"indent": 1}, 1) == text
    assert record_layout('{"q" : "caf\u00e9", "n": [1]}', value) is None


def test_a_list_file_written_by_json_dumps_keeps_its_options_and_ending() -> None:
    text = '[\n    {\n        "b": 1,\n        "a": 2\n    },\n    {\n        "a": 3\n    }\n]\n'
    records = [{"b": 1, "a": 2}, {"a": 3}]
    spans = [(6, 45), (51, 73)]
    layouts = record_layouts(text, records, spans)
    assert layouts == [
        {"keys": ["b", "a"], "indent": 4, "end": "\n"},
        {"keys": ["a"], "indent": 4, "end": "\n"},
    ]
    jsonb = [{"a": 2, "b": 1}, {"a": 3}]
    assert write_records([(None, r, lay) for r, lay in zip(jsonb, layouts, strict=True)]) == text
    # the first record dropped: the file as json.dumps writes the rest
    assert write_records([(None, {"a": 3}, layouts[1])]) == '[\n    {\n        "a": 3\n    }\n]\n'


def test_a_hand_written_file_keeps_each_records_text() -> None:
    text = '{\n  "A" : "one",\n  "B": "two"\n}'
    layouts = record_layouts(text, {"A": "one", "B": "two"}, [(4, 15), (19, 29)])
    assert layouts == [
        {"text": '"A" : "one"', "before": "{\n  ", "after": "\n}"},
        {"text": '"B": "two"', "before": ",\n  ", "after": "\n}"},
    ]
    items = [("A", "one", layouts[0]), ("B", "two", layouts[1])]
    assert write_records(items) == text
    # a changed member is rewritten, the others kept as written; a dropped first member's
    # successor opens the object
    assert (
        write_records([("A", "uno", layouts[0]), items[1]]) == '{\n  "A": "uno",\n  "B": "two"\n}'
    )
    assert write_records([items[1]]) == '{\n  "B": "two"\n}'


def test_records_without_a_layout_are_written_as_before() -> None:
    assert write_records([(None, {"a": 1}, None)]) == '[\n  {\n    "a": 1\n  }\n]\n'


def test_a_small_document_is_its_text_while_unchanged() -> None:
    text = '{\n    "Tools": ["a",\n        "b"]\n} \n'
    layout = document_layout(text, {"Tools": ["a", "b"]})
    assert layout == {"text": text}
    assert write_document({"Tools": ["a", "b"]}, layout) == text
    assert write_document({"Tools": ["a"]}, layout) == '{\n    "Tools": [\n        "a"\n    ]\n}\n'
    written = '{\n    "Tools": [\n        "a"\n    ],\n    "ref": null\n}'
    layout = document_layout(written, {"Tools": ["a"], "ref": None})
    assert layout == {"keys": ["Tools", "ref"], "indent": 4}
    assert write_document({"ref": None, "Tools": ["a"]}, layout) == written
