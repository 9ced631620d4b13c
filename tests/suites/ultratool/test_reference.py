"""UltraTool's variant=reference: the reading of a model's text that UltraTool's published
evaluation does (its normalizations, trimming and repairs, bugs included, from
/work/shared/ultratool-reference-reading.md), its scoring, and each documented deviation of the
default variant from it (benchmarks/suites/ultratool/deviations.md), on the same text in both.

Every prediction here is ours, written in UltraTool's format (steps with their text, the answer
under "tool" or "param", Python-literal quoting); UltraTool's repository has no licence, so
nothing is taken from it. Expected values are computed by hand in the comments. Pure except the
last section (the commands, on the database)."""

from __future__ import annotations

import dataclasses
import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from benchmarks.kit.protocol import Context, Item, Outcome, Scored
from benchmarks.models import Benchmark, Sample
from benchmarks.services import benchmark_import
from benchmarks.suites import ultratool
from benchmarks.suites.ultratool import reference
from benchmarks.suites.ultratool.reference import AWARENESS, USAGE
from evaluation.models import Run
from tests.conftest import BENCHMARK_FIXTURES
from tests.evaluation.conftest import make_endpoint

EVALUATOR = ultratool.SUITE.evaluator
DEMO = Path(__file__).resolve().parents[3] / "benchmarks" / "demo" / "ultratool"
REF = {"variant": "reference"}
COMMA = "\uff0c"  # the full-width comma


def context(task: str, **options: Any) -> Context:
    return Context(task=EVALUATOR.task(task), options=options)


def item(reference_: dict[str, Any], external_id: str = "1") -> Item:
    steps = [
        {"step": "1", "text": "Check the weather"},
        {"step": "1.1", "text": "Note the city (City: Ghent)"},
        {"step": "1.2", "text": "Get the forecast"},
        {"step": "1.3", "text": "Decide whether to cycle"},
        {"step": "2", "text": "Remind the user"},
        {"step": "2.1", "text": "Set the alarm"},
    ]
    return Item(
        split="test",
        external_id=external_id,
        input={"query": "Will it rain in Ghent? Wake me at 7."},
        reference={"steps": steps, **reference_},
        kind="plan",
    )


def parse(task: str, the_item: Item, text: str, **options: Any) -> Outcome:
    return EVALUATOR.parse(text, the_item, context(task, **options), {})


def run(task: str, the_item: Item, text: str, **options: Any) -> dict[str, float | None]:
    ctx = context(task, **options)
    return EVALUATOR.score(EVALUATOR.parse(text, the_item, ctx, {}), the_item, ctx, {})


AWARE = [
    {"step": "1.1", "value": 0},
    {"step": "1.2", "value": 1},
    {"step": "1.3", "value": 0},
    {"step": "2.1", "value": 1},
]


def usage(**arguments: Any) -> Item:
    """An item whose one tool-usage gold step is 1.2, calling w with these arguments."""
    return item({"tool_usage": [{"step": "1.2", "tool": "w", "arguments": arguments}]})


def usage_text(param: str) -> str:
    """Step 1.2 answered in UltraTool's format with this param literal."""
    return f"[{{'step': '1.2 Get the forecast', 'tool': 'w', 'param': {param}}}]"


# --- normalizing ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reader", "text", "expected"),
    [
        (AWARENESS, "[{'a': 'json'}]", "[{'a': ''}]"),  # every json removed
        (AWARENESS, "`[1]`", "[1]"),  # backticks stripped from both ends
        (AWARENESS, "\u8f93\u51fa\uff1a[1]", "[1]"),  # the Chinese "output:" removed
        (AWARENESS, "[1,\n2]", "[1,2]"),  # newlines removed
        (USAGE, "[get\\_time]", "[get_time]"),  # \_ -> _
        (AWARENESS, "[true, false]", "[True, False]"),
        (AWARENESS, "['is true']", "['is True']"),  # inside strings too
        (AWARENESS, "[null]", '["null"]'),
        (AWARENESS, "['None left']", "['\"None\" left']"),
        (AWARENESS, "[{'a': 1})]", "[{'a': 1}]"),  # }) -> }
        (AWARENESS, f"[1{COMMA}2]", "[1,2]"),  # the full-width comma
        (AWARENESS, "[{'a': 1}, \"step\": 2}]", "[{'a': 1}, {\"step\": 2}]"),
        # Only the five characters "# ..." go: a "#" elsewhere (a password) stays.
        (AWARENESS, "[{'a': 1}, # ...{'b': 2}]", "[{'a': 1}, {'b': 2}]"),
        (AWARENESS, "[{'a': 'Pwd2023#'}]", "[{'a': 'Pwd2023#'}]"),
        (AWARENESS, "[{'a': 'Room #5 #...'}]", "[{'a': 'Room #5 #...'}]"),
        (AWARENESS, "[{'a': {'b': 1}" + " " * 12 + "}]", "[{'a': {'b': 1}}]"),  # 1-12 spaces
        (AWARENESS, "[{'a': {'b': 1}" + " " * 13 + "}]", "[{'a': {'b': 1}" + " " * 13 + "}]"),
        (USAGE, "[{'a': 1}{'b': 2}]", "[{'a': 1}, {'b': 2}]"),  # the usage reader only
        (AWARENESS, "[{'a': 1}{'b': 2}]", "[{'a': 1}{'b': 2}]"),
    ],
)
def test_normalizing(reader: str, text: str, expected: str) -> None:
    assert reference.normalize(text, reader) == expected


# --- trimming ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reader", "outputs", "text", "expected"),
    [
        (AWARENESS, "gpt", "Answer: [1]", "[1]"),
        (AWARENESS, "gpt", "[1] done", "[1]"),
        (AWARENESS, "gpt", "[1] and [2]", "[1] and [2]"),  # GPT's files: first [ to last ]
        # No ], a [: cut after the last }, (awareness) or }}, (usage), closed with ].
        (AWARENESS, "gpt", "[{'a': {'x': 1}, 'y': 2}, {'b'", "[{'a': {'x': 1}, 'y': 2},]"),
        (USAGE, "gpt", "[{'a': {'x': 1}, 'y': 2}, {'b'", "[{'a': {'x': 1}, 'y': 2}, {'b']"),
        (USAGE, "gpt", "[{'a': {'x': 1}}, {'b': {", "[{'a': {'x': 1}},]"),
        (AWARENESS, "gpt", "[{'a'", "[{'a']"),  # neither mark: a ] appended
        (AWARENESS, "gpt", "no list", "no list"),
        # Other models' files: the last shortest [{ ... }] when more than one ] is left...
        (AWARENESS, "other", "[{'a': 1}] then [{'b': 2}] and [3]", "[{'b': 2}]"),
        # ... or, with none, the text up to the first ].
        (AWARENESS, "other", "[1] and [2]", "[1]"),
        (AWARENESS, "other", "x [{'a': 1}]", "[{'a': 1}]"),
    ],
)
def test_trimming(reader: str, outputs: str, text: str, expected: str) -> None:
    assert reference.trim(text, reader, outputs) == expected


# --- the quote repair -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{'a", '{"a'),
        ("a'}", 'a"}'),
        ("a', 'b", 'a", "b'),
        ("a\", 'b", 'a", "b'),
        ("a', \"b", 'a", "b'),
        ("a': 'b", 'a": "b'),
        ("a': \"b", 'a": "b'),
        ("a\": 'b", 'a": "b'),
        ("a': {", 'a": {'),
        ("['a", "[a"),  # the quote is dropped, not turned
        ("a']", "a]"),
        ("a, 'b", 'a, "b'),
        ("f(x'),", 'f(x)",'),
        ('""None""', '"None"'),
        ('"{step', '{"step'),
        ("f(x')}", 'f(x)"}'),
    ],
)
def test_the_quote_repair(text: str, expected: str) -> None:
    assert reference.quote_repair(text, AWARENESS) == expected
    if text != '"{step':
        assert reference.quote_repair(text, USAGE) == expected


@pytest.mark.parametrize(
    ("text", "usage_expected"),
    [
        ('"{step', '"{step'),  # left out of the usage repair
        ("a': 1", 'a": 1'),  # added to it
        ("a', {", 'a", {'),
        ('}}," {', "}}, {"),
    ],
)
def test_the_usage_quote_repair_differs(text: str, usage_expected: str) -> None:
    assert reference.quote_repair(text, USAGE) == usage_expected
    assert reference.quote_repair(text, AWARENESS) != usage_expected


# --- the readings, in order -------------------------------------------------------------------

A11 = "{'step': '1.1 Go', 'tool': '0'}"


@pytest.mark.parametrize(
    ("text", "how", "value"),
    [
        (f"[{A11}]", "as written", [{"step": "1.1 Go", "tool": "0"}]),
        (
            f"[{A11}, {{'step': '1.2 Stop', 'tool': '1']",
            "with a } inserted before the last character",
            [{"step": "1.1 Go", "tool": "0"}, {"step": "1.2 Stop", "tool": "1"}],
        ),
        (
            '[{"step": "1.1 Go", "tool": "0"}, {"step": "1.2 Stop", "tool": "1]',
            'with "} inserted before the last character',
            [{"step": "1.1 Go", "tool": "0"}, {"step": "1.2 Stop", "tool": "1"}],
        ),
        (
            f"[{A11}, {{'step': '1.2 Stop', 'tool': }}]",
            "up to the last complete step",
            [{"step": "1.1 Go", "tool": "0"}],
        ),
        (
            "[{'step': '1.1 Check the user's order', 'tool': '0'}]",
            "after the quote repair",
            [{"step": "1.1 Check the user's order", "tool": "0"}],
        ),
    ],
)
def test_awareness_readings(text: str, how: str, value: Any) -> None:
    assert reference.read(text, AWARENESS) == reference.Reading(value, True, how)


def step(param: Any, number: str = "1.2 A", tool: str = "a") -> dict[str, Any]:
    return {"step": number, "tool": tool, "param": param}


@pytest.mark.parametrize(
    ("text", "how", "value"),
    [
        ("[{'step': '1.2 A', 'tool': 'a', 'param': {'x': '1'}}]", "as written", [step({"x": "1"})]),
        (
            "[{'step': '1.2 A', 'tool': 'a', 'param': {'x': '1'}]",
            "with a } inserted before the last character",
            [step({"x": "1"})],
        ),
        (
            "[{'step': '1.2 A', 'tool': 'a', 'param': {'x': '1']",
            "with }} inserted before the last character",
            [step({"x": "1"})],
        ),
        (
            '[{"step": "1.1 A", "tool": "a", "param": {"x": "1"}, '
            '{"step": "1.2 B", "tool": "b", "param": {"y": "2"}}]',
            'with "}, {"step made "}}, {"step',
            [step({"x": "1"}, "1.1 A"), step({"y": "2"}, "1.2 B", "b")],
        ),
        (
            '[{"step": "1.2 A", "tool": "a", "param": {"x": "1"}, "note": "n]',
            'with "} inserted before the last character',
            [{**step({"x": "1"}), "note": "n"}],
        ),
        (
            '[{"step": "1.2 A", "tool": "a", "param": {"days": ["Sat", "Sun"]',
            "with ]}} inserted before the last character",
            [step({"days": ["Sat", "Sun"]})],
        ),
        (
            "[{'step': '1.2 A', 'tool': 'a', 'param': {'x': '1'}}}]",
            "without its second-to-last character",
            [step({"x": "1"})],
        ),
        (
            "[{'step': '1.2 A', 'tool': 'a', 'param': {'x': '1'}}}}]",
            "without its second-to-last character, twice",
            [step({"x": "1"})],
        ),
        (
            "[{'step': '1.1 A', 'tool': 'a', 'param': {'x': '1'}}}, "
            "{'step': '1.2 B', 'tool': 'b', 'param': {'y': '2'}}]",
            "with }}} made }}",
            [step({"x": "1"}, "1.1 A"), step({"y": "2"}, "1.2 B", "b")],
        ),
        (
            "[{'step': '1.1 A', 'tool': 'a', 'param': {'x': '1'}}, "
            "{'step': '1.2 B', 'tool': 'b', 'param': {'y': }}]",
            "up to the last complete step",
            [step({"x": "1"}, "1.1 A")],
        ),
        (
            "[{'step': '1.2 Ann's', 'tool': 'a', 'param': {'x': '1'}}]",
            "after the quote repair",
            [step({"x": "1"}, "1.2 Ann's")],
        ),
        (
            "[{'step': '1.1 Ann's', 'tool': 'a', 'param': {'x': '1'}}}, "
            "{'step': '1.2 B', 'tool': 'b', 'param': {'y': '2'}}]",
            "after the quote repair, with }}} made }}",
            [step({"x": "1"}, "1.1 Ann's"), step({"y": "2"}, "1.2 B", "b")],
        ),
        (
            "[{'step': '1.2 Ann's', 'tool': 'a', 'param': {'days': [1, 2]",
            "after the quote repair, with ]}} inserted before the last character",
            [step({"days": [1, 2]}, "1.2 Ann's")],
        ),
        # The usage quote repair's own additions: ': followed by a number.
        (
            "[{'step': '1.2 Ann's', 'tool': 'a', 'param': {'n': 5}}]",
            "after the quote repair",
            [step({"n": 5}, "1.2 Ann's")],
        ),
    ],
)
def test_usage_readings(text: str, how: str, value: Any) -> None:
    assert reference.read(text, USAGE) == reference.Reading(value, True, how)


@pytest.mark.parametrize("reader", [AWARENESS, USAGE])
@pytest.mark.parametrize("text", ["", "I do not know.", "[{'step': '1.1 A', 'tool': }, x]"])
def test_nothing_reads_is_a_bad_format(reader: str, text: str) -> None:
    reading = reference.read(text, reader)
    assert (reading.value, reading.ok) == (None, False)


def test_reading_never_runs_code(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    text = f"[__import__('pathlib').Path({str(marker)!r}).touch()]"
    for reader in (AWARENESS, USAGE):
        assert not reference.read(text, reader).ok
    assert not marker.exists()


# --- the reference variant through the evaluator ---------------------------------------------

PUBLISHED_STYLE = (
    "[{'step': '1.1 Note the city (City: Ghent)', 'tool': '0'}, "
    "{'step': '1.2 Get the forecast', 'tool': '1'}, "
    "{'step': '1.3 Decide whether to cycle', 'tool': '1'}]"
)


def test_awareness_in_ultratools_format() -> None:
    the_item = item({"tool_usage_awareness": AWARE})
    outcome = parse("tool_usage_awareness", the_item, PUBLISHED_STYLE, **REF)
    assert outcome.answer == [
        {"step": "1.1", "value": 0},
        {"step": "1.2", "value": 1},
        {"step": "1.3", "value": 1},
    ]
    assert outcome.note == "read as written"
    # 1.1 and 1.2 right, 1.3 wrong, 2.1 unanswered (the opposite of its gold: wrong): 2 of 4.
    assert run("tool_usage_awareness", the_item, PUBLISHED_STYLE, **REF) == {
        "accuracy_global": 0.0,
        "accuracy_local": 50.0,
        "unparsed": 0.0,
    }


def test_the_parse_bug_is_not_the_references_either() -> None:
    the_item = item({"tool_creation_awareness": AWARE[:3]})
    text = (
        '[{"step": "1.1 Get the path", "tool": "0"}, {"step": \'1.2 Write the file\', '
        '"tool": "1"}, {"step": \'1.3 Confirm\', "tool": "0"}]'
    )
    for options in ({}, REF):
        assert run("tool_creation_awareness", the_item, text, **options)["accuracy_local"] == 100


def test_usage_in_ultratools_format() -> None:
    the_item = item(
        {
            "tool_usage": [
                {"step": "1.2", "tool": "w", "arguments": {"city": "Ghent", "day": "Saturday"}},
                {"step": "2.1", "tool": "a", "arguments": {"time": "07:00", "label": ""}},
            ]
        }
    )
    text = (
        "[{'step': '1.2 Get the forecast', 'tool': 'w', 'param': {'city': 'Ghent', "
        "'day': 'Sunday'}}, {'step': '2.1 Set the alarm', 'tool': 'a', 'param': "
        "{'time': '7:00', 'label': '', 'extra': 1}}]"
    )
    # 1.2: city 1, day 1 - 3/8 (Saturday/Sunday); 2.1: time 1 - 1/5, label empty/empty 1.
    expected = ((1 + 5 / 8) / 2 + (4 / 5 + 1) / 2) / 2
    scores = run("tool_usage", the_item, text, **REF)
    assert scores["levenshtein_local"] == pytest.approx(100 * expected)
    assert (scores["kv_accuracy_local"], scores["kv_accuracy_global"]) == (0.0, 0.0)


def test_usage_a_missing_key_scores_zero_and_an_extra_key_nothing() -> None:
    the_item = usage(city="Ghent", day="Saturday")
    text = usage_text("{'city': 'Ghent', 'units': 'metric'}")
    # city 1, day missing 0; units is not in the gold and costs nothing: (1 + 0) / 2.
    assert run("tool_usage", the_item, text, **REF)["levenshtein_local"] == 50.0


def test_usage_undoes_the_markdown_escape_in_keys_and_values() -> None:
    the_item = usage(file_name="a_b.txt")
    # The text-level \_ -> _ and the key and value unescaping give the same: exact.
    text = usage_text("{'file\\_name': 'a\\_b.txt'}")
    assert run("tool_usage", the_item, text, **REF)["levenshtein_local"] == 100.0


def test_usage_takes_the_first_list_of_a_list_of_lists() -> None:
    the_item = usage(city="Ghent")
    text = (
        "[[{'step': '1.2 Get the forecast', 'tool': 'w', 'param': {'city': 'Ghent'}}], "
        "[{'step': '1.2 Get the forecast', 'tool': 'w', 'param': {'city': 'Paris'}}]]"
    )
    assert run("tool_usage", the_item, text, **REF)["levenshtein_local"] == 100.0


def test_a_param_that_is_not_an_object_scores_zero() -> None:
    the_item = usage(city="Ghent")
    text = usage_text("'Ghent'")
    outcome = parse("tool_usage", the_item, text, **REF)
    assert outcome.answer == [{"step": "1.2", "tool": "w", "arguments": "Ghent"}]
    assert run("tool_usage", the_item, text, **REF)["levenshtein_local"] == 0.0


def test_values_json_cannot_hold_are_kept_as_their_text() -> None:
    the_item = usage(days="('Sat', 'Sun')", code="b'x'")
    text = usage_text("{'days': ('Sat', 'Sun'), 'code': b'x', 1: 'one'}")
    outcome = parse("tool_usage", the_item, text, **REF)
    assert outcome.answer[0]["arguments"] == {"days": "('Sat', 'Sun')", "code": "b'x'", "1": "one"}
    json.dumps(outcome.answer)  # storable
    assert run("tool_usage", the_item, text, **REF)["levenshtein_local"] == 100.0


def test_a_top_level_gold_step_matches_its_token_with_the_dot() -> None:
    the_item = item({"tool_usage_awareness": [{"step": "2", "value": 1}]})
    right = "[{'step': '2. Remind the user', 'tool': '1'}]"
    bare = "[{'step': '2 Remind the user', 'tool': '1'}]"
    assert run("tool_usage_awareness", the_item, right, **REF)["accuracy_local"] == 100.0
    assert run("tool_usage_awareness", the_item, bare, **REF)["accuracy_local"] == 0.0


def test_a_bad_format_is_unparsed_and_wrong() -> None:
    the_item = item({"tool_usage_awareness": AWARE})
    outcome = parse("tool_usage_awareness", the_item, "I cannot tell.", **REF)
    assert (outcome.parsed, outcome.answer) == (False, [])
    assert outcome.note.startswith("bad format")
    assert run("tool_usage_awareness", the_item, "I cannot tell.", **REF) == {
        "accuracy_global": 0.0,
        "accuracy_local": 0.0,
        "unparsed": 100.0,
    }


def test_other_models_outputs_take_the_last_list() -> None:
    the_item = item({"tool_usage_awareness": AWARE[:1]})
    text = (
        "The plan: [{'step': '1.1 Note the city', 'tool': '1'}] "
        "My answer: [{'step': '1.1 Note the city', 'tool': '0'}]"
    )
    gpt = parse("tool_usage_awareness", the_item, text, **REF)
    other = parse("tool_usage_awareness", the_item, text, **REF, reference_outputs="other")
    assert not gpt.parsed  # first [ to last ]: two lists and prose in between
    assert other.answer == [{"step": "1.1", "value": 0}]


def scored(the_item: Item, scores: dict[str, float | None]) -> Scored:
    return Scored(item=the_item, outcome=None, scores=scores)


def test_usage_run_level_levenshtein_pools_every_gold_step() -> None:
    two_steps = item(
        {
            "tool_usage": [
                {"step": "1.2", "tool": "w", "arguments": {"city": "Ghent"}},
                {"step": "2.1", "tool": "a", "arguments": {"time": "07:00"}},
            ]
        },
        "1",
    )
    one_step = usage(city="Ghent")
    ctx = context("tool_usage", **REF)
    half = run("tool_usage", two_steps, usage_text("{'city': 'Ghent'}"), **REF)
    full = run("tool_usage", one_step, usage_text("{'city': 'Ghent'}"), **REF)
    assert (half["levenshtein_local"], full["levenshtein_local"]) == (50.0, 100.0)
    result = EVALUATOR.aggregate([scored(two_steps, half), scored(one_step, full)], ctx)
    # UltraTool's evaluation returns the mean over every gold step of every sample:
    # (1 + 0 + 1) / 3 = 0.6667 (4 decimals), not the mean of the samples (0.5 + 1) / 2.
    assert result["levenshtein_local"] == 66.67


def test_usage_a_sample_without_gold_steps_adds_one_zero_under_the_reference() -> None:
    answered = usage(city="Ghent")
    empty = item({"tool_usage": []}, "2")
    text = usage_text("{'city': 'Ghent'}")
    ctx = context("tool_usage", **REF)
    assert EVALUATOR.select([answered, empty], ctx) == [answered, empty]
    assert EVALUATOR.select([answered, empty], context("tool_usage")) == [answered]
    scores = run("tool_usage", empty, text, **REF)
    assert scores == {
        "levenshtein_local": 0.0,
        "kv_accuracy_global": None,
        "kv_accuracy_local": None,
        "unparsed": 0.0,
    }
    entries = [scored(answered, run("tool_usage", answered, text, **REF)), scored(empty, scores)]
    # (1 + 0) / 2: the sample without a gold step counts as one step scoring 0.
    assert EVALUATOR.aggregate(entries, ctx)["levenshtein_local"] == 50.0


# --- options ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("task", "options", "message"),
    [
        ("tool_selection", REF, "tool_selection has no reference reading"),
        ("planning", REF, "planning has no reference reading"),
        ("tool_creation", REF, "tool_creation has no reference reading"),
        ("tool_usage", {"variant": "paper"}, "variant must be one of default, reference"),
        ("tool_usage", {**REF, "unparsed": "exclude"}, "unparsed='exclude' contradicts"),
        ("tool_usage", {**REF, "no_argument_step": "answered"}, "no_argument_step=zero"),
        ("tool_usage", {**REF, "local_average": "samples"}, "local_average=steps"),
        ("tool_usage_awareness", {**REF, "local_average": "samples"}, "local_average=steps"),
        ("tool_usage", {**REF, "reference_outputs": "claude"}, "reference_outputs must be"),
        ("tool_usage", {"reference_outputs": "other"}, "only with variant=reference"),
    ],
)
def test_options_that_do_not_apply_are_refused_before_anything_runs(
    task: str, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        EVALUATOR.prepare([item({})], context(task, **options))


def test_options_the_reference_fixes_may_be_given_with_its_values() -> None:
    ctx = context(
        "tool_usage", **REF, unparsed="wrong", local_average="steps", no_argument_step="zero"
    )
    assert EVALUATOR.prepare([item({}), item({})], ctx) == [{}, {}]
    for task in ultratool.REFERENCE_TASKS:
        assert ultratool.TASKS[task].defaults["variant"] == "default"


def test_a_run_under_the_reference_asks_for_param() -> None:
    the_item = item(
        {
            "tool_usage": [
                {"step": "1.2", "tool": "w", "arguments": {"city": "Ghent"}},
                {"step": "2.1", "tool": "a", "arguments": {"time": "07:00"}},
            ]
        }
    )
    ctx = Context(task=EVALUATOR.task("tool_usage"), shots=2, options=dict(REF))
    prompt = EVALUATOR.build_prompt(the_item, ctx, {})
    assert '"param": {"name": "value"}' in prompt.messages[0]["content"]
    assert '"arguments"' not in prompt.messages[0]["content"]
    answers = [m["content"] for m in prompt.messages if m["role"] == "assistant"]
    assert len(answers) == 2 and all('"param"' in a and '"arguments"' not in a for a in answers)
    perfect = ultratool.reference_output(the_item, "tool_usage", "reference")
    assert run("tool_usage", the_item, perfect, **REF)["levenshtein_local"] == 100.0
    default_prompt = EVALUATOR.build_prompt(the_item, context("tool_usage"), {})
    assert '"arguments": {"name": "value"}' in default_prompt.messages[0]["content"]


# --- deviations: the same text, both variants (deviations.md, in its order) -------------------


def test_deviation_true_and_false_inside_strings() -> None:
    # The reference rewrites true to True everywhere: "it is true" loses 1 of 10 characters.
    the_item = usage(note="it is true")
    text = usage_text("{'note': 'it is true'}")
    assert parse("tool_usage", the_item, text, **REF).answer[0]["arguments"] == {
        "note": "it is True"
    }
    assert run("tool_usage", the_item, text)["levenshtein_local"] == 100.0
    assert run("tool_usage", the_item, text, **REF)["levenshtein_local"] == pytest.approx(90.0)


def test_deviation_none_inside_a_single_quoted_string() -> None:
    # 'Call None' becomes 'Call "None"': 2 insertions against 11 characters.
    the_item = usage(note="Call None")
    text = usage_text("{'note': 'Call None'}")
    assert run("tool_usage", the_item, text)["levenshtein_local"] == 100.0
    assert run("tool_usage", the_item, text, **REF)["levenshtein_local"] == pytest.approx(
        100 * (1 - 2 / 11)
    )


def test_deviation_none_inside_a_double_quoted_string() -> None:
    # "1.1 None of it" becomes "1.1 "None" of it": no reading succeeds, a bad format.
    the_item = item({"tool_usage_awareness": AWARE[:1]})
    text = '[{"step": "1.1 None of it needs a tool", "tool": "0"}]'
    assert run("tool_usage_awareness", the_item, text)["accuracy_local"] == 100.0
    assert run("tool_usage_awareness", the_item, text, **REF) == {
        "accuracy_global": 0.0,
        "accuracy_local": 0.0,
        "unparsed": 100.0,
    }


def test_deviation_null_is_the_text_null() -> None:
    # JSON null is None to the default (an empty value, right against an empty gold value);
    # the reference reads the string "null", which is not empty.
    the_item = usage(label="")
    text = '[{"step": "1.2 Get the forecast", "tool": "w", "param": {"label": null}}]'
    assert parse("tool_usage", the_item, text).answer[0]["arguments"] == {"label": None}
    assert parse("tool_usage", the_item, text, **REF).answer[0]["arguments"] == {"label": "null"}
    assert run("tool_usage", the_item, text)["levenshtein_local"] == 100.0
    assert run("tool_usage", the_item, text, **REF)["levenshtein_local"] == 0.0


def test_deviation_json_is_removed_from_values() -> None:
    the_item = usage(format="json")
    text = usage_text("{'format': 'json'}")
    assert run("tool_usage", the_item, text)["levenshtein_local"] == 100.0
    assert run("tool_usage", the_item, text, **REF)["levenshtein_local"] == 0.0  # "" vs "json"


def test_deviation_hash_and_three_dots_removed_from_a_value() -> None:
    # The reference removes the five characters "# ..." wherever they stand: "Wait # ... go"
    # is read "Wait  go", 5 deletions against 13 characters. A "#" alone stays (a password).
    the_item = usage(note="Wait # ... go")
    text = usage_text("{'note': 'Wait # ... go'}")
    assert parse("tool_usage", the_item, text, **REF).answer[0]["arguments"] == {"note": "Wait  go"}
    assert run("tool_usage", the_item, text)["levenshtein_local"] == 100.0
    assert run("tool_usage", the_item, text, **REF)["levenshtein_local"] == pytest.approx(
        100 * (1 - 5 / 13)
    )
    password = usage(password="Pwd2023#", user="ilse")
    text = usage_text("{'password': 'Pwd2023#', 'user': 'ilse'}")
    for options in ({}, REF):
        assert run("tool_usage", password, text, **options)["levenshtein_local"] == 100.0
    aware = item({"tool_usage_awareness": AWARE[:3]})
    text = (
        "[{'step': '1.1 Note the city', 'tool': '0'}, {'step': '1.2 Get forecast #1', "
        "'tool': '1'}, {'step': '1.3 Decide', 'tool': '0'}]"
    )
    for options in ({}, REF):
        assert run("tool_usage_awareness", aware, text, **options)["accuracy_local"] == 100.0


def test_deviation_a_full_width_comma_inside_a_value() -> None:
    cities = f"\u5317\u4eac{COMMA}\u4e0a\u6d77"  # Beijing, Shanghai
    the_item = usage(cities=cities)
    text = usage_text(f"{{'cities': '{cities}'}}")
    assert run("tool_usage", the_item, text)["levenshtein_local"] == 100.0
    assert run("tool_usage", the_item, text, **REF)["levenshtein_local"] == pytest.approx(80.0)


def test_deviation_the_chinese_output_prefix_inside_a_value() -> None:
    value = "\u8f93\u51fa\uff1a\u5b8c\u6210"  # "output: done", 5 characters
    the_item = usage(text=value)
    text = usage_text(f"{{'text': '{value}'}}")
    assert run("tool_usage", the_item, text)["levenshtein_local"] == 100.0
    assert run("tool_usage", the_item, text, **REF)["levenshtein_local"] == pytest.approx(40.0)


def test_deviation_a_brace_and_parenthesis_inside_a_value() -> None:
    # "max({})" becomes "max({}": one deletion in 7.
    the_item = usage(expr="max({})")
    text = usage_text("{'expr': 'max({})'}")
    assert run("tool_usage", the_item, text)["levenshtein_local"] == 100.0
    assert run("tool_usage", the_item, text, **REF)["levenshtein_local"] == pytest.approx(
        100 * (1 - 1 / 7)
    )


def test_deviation_two_braces_inside_a_value() -> None:
    # "{first}{last}" becomes "{first}, {last}": two insertions against 15 characters.
    the_item = usage(template="{first}{last}")
    text = usage_text("{'template': '{first}{last}'}")
    assert run("tool_usage", the_item, text)["levenshtein_local"] == 100.0
    assert run("tool_usage", the_item, text, **REF)["levenshtein_local"] == pytest.approx(
        100 * (1 - 2 / 15)
    )


def test_deviation_a_step_key_after_a_nested_object() -> None:
    # '}, "step' gains a "{" even in a valid text; the repair that then reads splits the step
    # in two objects, one without "step" and one without "param": nothing to score.
    the_item = usage(city="Ghent")
    text = '[{"param": {"city": "Ghent"}, "step": "1.2 Get the forecast", "tool": "w"}]'
    outcome = parse("tool_usage", the_item, text, **REF)
    assert (outcome.answer, outcome.note) == (
        [],
        'read with "}, {"step made "}}, {"step; no step the reference scores',
    )
    assert run("tool_usage", the_item, text)["levenshtein_local"] == 100.0
    assert run("tool_usage", the_item, text, **REF)["levenshtein_local"] == 0.0


def test_deviation_the_quote_repair_rewrites_quotes_inside_strings() -> None:
    # An apostrophe makes the text unreadable as written; the reference's quote repair then also
    # turns the quotes inside "Buy 'milk', 'eggs'" into delimiters and nothing reads. The
    # default re-delimits strings without touching what they say.
    the_item = usage(text="Buy 'milk', 'eggs'")
    text = (
        "[{'step': '1.2 Note the user's list', 'tool': 'w', "
        "'param': {'text': \"Buy 'milk', 'eggs'\"}}]"
    )
    assert parse("tool_usage", the_item, text).answer[0]["arguments"] == {
        "text": "Buy 'milk', 'eggs'"
    }
    assert run("tool_usage", the_item, text)["levenshtein_local"] == 100.0
    assert not parse("tool_usage", the_item, text, **REF).parsed
    assert run("tool_usage", the_item, text, **REF)["levenshtein_local"] == 0.0


def test_deviation_repairs_combined() -> None:
    # An apostrophe and a missing closing brace: the reference tries its repairs one at a time.
    the_item = item({"tool_usage_awareness": AWARE[:2]})
    text = (
        "[{'step': '1.1 Note the user's city', 'tool': '0'}, "
        "{'step': '1.2 Get the forecast', 'tool': '1']"
    )
    assert run("tool_usage_awareness", the_item, text)["accuracy_local"] == 100.0
    assert run("tool_usage_awareness", the_item, text, **REF)["unparsed"] == 100.0


@pytest.mark.parametrize(
    "text",
    [
        # An echo of the plan before the answer: first [ to last ] is not one list.
        "The plan: [{'step': '1.1 Note the city', 'tool': '1'}] "
        "My answer: [{'step': '1.1 Note the city', 'tool': '0'}]",
        # A bracket in the prose after the answer.
        "[{'step': '1.1 Note the city', 'tool': '0'}] (as in [1])",
    ],
)
def test_deviation_the_list_is_the_text_between_the_first_and_last_bracket(text: str) -> None:
    the_item = item({"tool_usage_awareness": AWARE[:1]})
    assert run("tool_usage_awareness", the_item, text)["accuracy_local"] == 100.0
    assert run("tool_usage_awareness", the_item, text, **REF)["unparsed"] == 100.0


def test_deviation_steps_match_on_their_first_token() -> None:
    # "1.1." is step 1.1 to the default; to the reference its token "1.1." is not "1.1".
    the_item = item({"tool_usage_awareness": AWARE[:1]})
    text = "[{'step': '1.1. Note the city', 'tool': '0'}]"
    assert run("tool_usage_awareness", the_item, text)["accuracy_local"] == 100.0
    assert run("tool_usage_awareness", the_item, text, **REF)["accuracy_local"] == 0.0


def test_deviation_arguments_only_under_param() -> None:
    the_item = usage(city="Ghent")
    text = '[{"step": "1.2", "tool": "w", "arguments": {"city": "Ghent"}}]'
    assert run("tool_usage", the_item, text)["levenshtein_local"] == 100.0
    assert parse("tool_usage", the_item, text, **REF).answer == []
    assert run("tool_usage", the_item, text, **REF)["levenshtein_local"] == 0.0


def test_deviation_a_gold_step_without_arguments() -> None:
    the_item = usage()
    text = usage_text("{}")
    assert run("tool_usage", the_item, text)["levenshtein_local"] == 100.0
    assert run("tool_usage", the_item, text, **REF)["levenshtein_local"] == 0.0


def test_deviation_tool_usage_rounds_its_fraction_to_four_decimals() -> None:
    # Both pool every gold step. One step right in 160: 0.625 %; the reference rounds the
    # fraction 0.00625 to 4 decimals first (0.0063), the default the percentage to 2 (0.62).
    the_item = usage(city="Ghent")
    right = run("tool_usage", the_item, usage_text("{'city': 'Ghent'}"))
    wrong = run("tool_usage", the_item, "no answer")
    entries = [scored(the_item, right)] + [scored(the_item, wrong)] * 159
    default = EVALUATOR.aggregate(entries, context("tool_usage"))
    as_reference = EVALUATOR.aggregate(entries, context("tool_usage", **REF))
    assert (default["levenshtein_local"], as_reference["levenshtein_local"]) == (0.62, 0.63)


def test_deviation_awareness_rounds_fractions_to_four_decimals() -> None:
    # One sample right in 160: 0.625 %. The reference rounds 0.00625 to 4 decimals first.
    the_item = item({"tool_usage_awareness": AWARE[:1]})
    right = {"accuracy_global": 100.0, "accuracy_local": 100.0, "unparsed": 0.0}
    wrong = {"accuracy_global": 0.0, "accuracy_local": 0.0, "unparsed": 0.0}
    entries = [scored(the_item, right)] + [scored(the_item, wrong)] * 159
    default = EVALUATOR.aggregate(entries, context("tool_usage_awareness"))
    as_reference = EVALUATOR.aggregate(entries, context("tool_usage_awareness", **REF))
    assert (default["accuracy_global"], as_reference["accuracy_global"]) == (0.62, 0.63)
    assert (default["accuracy_local"], as_reference["accuracy_local"]) == (0.62, 0.63)


def test_deviation_answers_written_as_lines() -> None:
    the_item = item({"tool_usage_awareness": AWARE[:2]})
    text = "1.1: 0\n1.2: 1"
    assert run("tool_usage_awareness", the_item, text)["accuracy_local"] == 100.0
    assert run("tool_usage_awareness", the_item, text, **REF)["unparsed"] == 100.0


def test_deviation_a_list_of_several_lists() -> None:
    the_item = item(
        {
            "tool_usage": [
                {"step": "1.2", "tool": "w", "arguments": {"city": "Ghent"}},
                {"step": "2.1", "tool": "a", "arguments": {"time": "07:00"}},
            ]
        }
    )
    text = (
        "[[{'step': '1.2 Get the forecast', 'tool': 'w', 'param': {'city': 'Ghent'}}], "
        "[{'step': '2.1 Set the alarm', 'tool': 'a', 'param': {'time': '07:00'}}]]"
    )
    assert not parse("tool_usage", the_item, text).parsed  # ambiguous: not read
    assert run("tool_usage", the_item, text, **REF)["levenshtein_local"] == 50.0  # the first


def test_deviation_a_tuple_value() -> None:
    # The default reads a tuple as a list; the reference compares str() of the tuple: 2 of 14.
    the_item = usage(days=["Sat", "Sun"])
    text = usage_text("{'days': ('Sat', 'Sun')}")
    assert run("tool_usage", the_item, text)["levenshtein_local"] == 100.0
    assert run("tool_usage", the_item, text, **REF)["levenshtein_local"] == pytest.approx(
        100 * (1 - 2 / 14)
    )


# --- the repairs the default adopts: both variants read these alike ---------------------------


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (f"[{A11}, {{'step': '1.2 Stop', 'tool': '1']", "a closing brace missing"),
        ('[{"step": "1.1 Go", "tool": "0"}, {"step": "1.2 Stop", "tool": "1]', 'a "} missing'),
        (f"[{A11}, {{'step': '1.2 Stop', 'tool': '1'}}, {{'step': '1.3", "cut off"),
        ("[{'step': '1.1 Go to the user's desk', 'tool': '0'}, {'step': '1.2', 'tool': '1'}]", "'"),
        (f"[{A11}{COMMA}{{'step': '1.2 Stop', 'tool': '1'}}]", "a full-width comma"),
        (f"[{A11}, {{'step': '1.2 Stop', 'tool': '1'}})]", "a stray parenthesis"),
        (f'[{A11}, "step": "1.2 Stop", "tool": "1"}}]', "an opening brace missing"),
    ],
)
def test_adopted_awareness_repairs(text: str, why: str) -> None:
    the_item = item({"tool_usage_awareness": AWARE[:2]})
    for options in ({}, REF):
        assert run("tool_usage_awareness", the_item, text, **options) == {
            "accuracy_global": 100.0,
            "accuracy_local": 100.0,
            "unparsed": 0.0,
        }, (why, options)


@pytest.mark.parametrize(
    ("param", "why"),
    [
        ("{'city': 'Ghent'}", "as written"),
        ("{'city': 'Ghent'", "a closing brace missing"),
        ("{'city': 'Ghent'}}", "a closing brace too many"),
        ("{'city': 'Ghent'}}}", "two too many"),
    ],
)
def test_adopted_usage_repairs(param: str, why: str) -> None:
    the_item = usage(city="Ghent")
    text = usage_text(param)
    for options in ({}, REF):
        assert run("tool_usage", the_item, text, **options)["levenshtein_local"] == 100.0, (
            why,
            options,
        )


def test_adopted_usage_repairs_between_steps() -> None:
    the_item = item(
        {
            "tool_usage": [
                {"step": "1.1", "tool": "a", "arguments": {"x": "1"}},
                {"step": "1.2", "tool": "b", "arguments": {"y": "2"}},
            ]
        }
    )
    for text in (
        '[{"step": "1.1 A", "tool": "a", "param": {"x": "1"}, '
        '{"step": "1.2 B", "tool": "b", "param": {"y": "2"}}]',
        "[{'step': '1.1 A', 'tool': 'a', 'param': {'x': '1'}}}, "
        "{'step': '1.2 B', 'tool': 'b', 'param': {'y': '2'}}]",
        "[{'step': '1.1 A', 'tool': 'a', 'param': {'x': '1'}}{'step': '1.2 B', 'tool': 'b', "
        "'param': {'y': '2'}}]",
    ):
        for options in ({}, REF):
            scores = run("tool_usage", the_item, text, **options)
            assert scores["levenshtein_local"] == 100.0, (text, options)


# --- the commands -----------------------------------------------------------------------------


def command(name: str, *args: str) -> str:
    out = StringIO()
    call_command(name, *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def published_awareness(sample: Sample, *, none_in: str = "") -> str:
    """A perfect answer in UltraTool's format (each step with its text, the answer under "tool"
    as "0"/"1", Python quoting); with `none_in`, that step's text starts with "None" in double
    quotes, which the reference cannot read back."""
    texts = {s["step"]: s["text"] for s in sample.reference["steps"]}
    rows = []
    for gold in sample.reference["tool_usage_awareness"]:
        number, value = gold["step"], str(gold["value"])
        if number == none_in:
            rows.append(f'{{"step": "{number} None of it: {texts[number]}", "tool": "{value}"}}')
        else:
            rows.append(repr({"step": f"{number} {texts[number]}", "tool": value}))
    return "[" + ", ".join(rows) + "]"


@pytest.mark.django_db
def test_import_predictions_takes_the_variant(tmp_path: Path) -> None:
    manifest = json.loads((DEMO / "manifest.json").read_text("utf-8"))
    benchmark_import(suite="ultratool", paths=[DEMO / name for name in manifest["files"]])
    samples = sorted(Sample.objects.filter(split="test"), key=lambda s: int(s.external_id))
    assert len(samples) == 5
    lines = []
    for index, sample in enumerate(samples):
        first = sample.reference["tool_usage_awareness"][0]["step"]
        text = published_awareness(sample, none_in=first if index == 0 else "")
        lines.append(json.dumps({"init output": [text]}))
    path = tmp_path / "tool_usage_awareness.json"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    args = ("ultratool", "tool_usage_awareness", str(path), "--json")
    default = json.loads(command("import_predictions", *args, "--name", "default"))
    as_reference = json.loads(
        command("import_predictions", *args, "--name", "ref", "--option", "variant=reference")
    )
    assert default["metrics"] == {
        "accuracy_global": 100.0,
        "accuracy_local": 100.0,
        "unparsed": 0.0,
    }
    # The first sample's answer cannot be read back by the reference: a bad format, all wrong.
    first_steps = len(samples[0].reference["tool_usage_awareness"])
    total_steps = sum(len(s.reference["tool_usage_awareness"]) for s in samples)
    assert as_reference["metrics"] == {
        "accuracy_global": 80.0,
        "accuracy_local": round(100 * (total_steps - first_steps) / total_steps, 2),
        "unparsed": 20.0,
    }
    assert Run.objects.get(pk=as_reference["run"]).options == {"variant": "reference"}


@pytest.mark.django_db
def test_import_predictions_refuses_an_option_the_variant_contradicts(tmp_path: Path) -> None:
    manifest = json.loads((DEMO / "manifest.json").read_text("utf-8"))
    benchmark_import(suite="ultratool", paths=[DEMO / name for name in manifest["files"]])
    path = tmp_path / "out.json"
    path.write_text(json.dumps({"output": "[]"}) + "\n", "utf-8")
    with pytest.raises(CommandError, match="unparsed='exclude' contradicts"):
        command(
            "import_predictions",
            *("ultratool", "tool_usage_awareness", str(path), "--name", "x"),
            *("--option", "variant=reference", "--option", "unparsed=exclude"),
        )
    assert not Run.objects.exists()


@pytest.mark.django_db
def test_launch_run_takes_the_variant() -> None:
    manifest = json.loads((DEMO / "manifest.json").read_text("utf-8"))
    benchmark_import(
        suite="ultratool",
        paths=[DEMO / name for name in manifest["files"]],
        benchmark_name="UltraTool (demo)",
    )
    make_endpoint("http://127.0.0.1:9/v1")
    launch = ("launch_run", "--benchmark", "UltraTool (demo)", "--endpoint", "fake", "--json")
    printed = command(*launch, "--task", "tool_usage", "--option", "variant=reference")
    run_ = Run.objects.get(pk=json.loads(printed)["run"])
    assert run_.options == {"variant": "reference"}
    with_gold = [s for s in Benchmark.objects.get().samples.all() if s.reference.get("tool_usage")]
    assert run_.predictions.count() == len(with_gold) > 0
    # tool selection declares no variant: the launch refuses it by name
    with pytest.raises(CommandError, match="'tool_selection' has no option 'variant'"):
        command(*launch, "--task", "tool_selection", "--option", "variant=reference")
    assert Run.objects.count() == 1


# --- the published figures' three causes, on our own files in UltraTool's layout --------------
#
# tests/benchmarks/fixtures/ultratool_published/ is ours (UltraTool's repository has no licence),
# written as UltraTool's files are: sample 1 books a train, its top-level steps written "2 Log in
# ... (Password: Pwd2023#)" and "3 Book train ticket" without a full stop and "4. Confirm the
# booking" with one; sample 2 is Chinese; sample 3 asks for the weather in Liège. The outputs
# below are GPT-style (`init output`, Python quoting, each step with its text as the model
# copied it from the input).

PUBLISHED_FILES = BENCHMARK_FIXTURES / "ultratool_published"

USAGE_OUTPUTS = [
    "[{'step': '1.2 Search for trains', 'tool': 'search_trains', 'param': {'origin': 'Utrecht', "
    "'destination': 'Zwolle', 'date': 'Friday', 'period': 'morning'}}, "
    "{'step': '2 Log in to the rail account (User: ilse, Password: Pwd2023#)', "
    "'tool': 'rail_login', 'param': {'user': 'ilse', 'password': 'Pwd2023#'}}, "
    "{'step': '3 Book train ticket', 'tool': 'book_train_ticket', "
    "'param': {'train_id': '<first train found>', 'token': '<token>'}}]",
    "[{'step': '1.2 \u521b\u5efa\u63d0\u9192', 'tool': 'create_reminder', 'param': "
    "{'time': '\u660e\u5929 08:00', 'content': '\u7ed9\u5988\u5988\u6253\u7535\u8bdd'}}]",
    "[{'step': '1.1 Get the forecast (City: Li\u00e8ge, Day: Saturday)', 'tool': 'get_weather', "
    "'param': {'city': 'Li\u00e8ge', 'day': 'Sunday'}}]",
]
AWARENESS_OUTPUTS = [
    "[{'step': '1.1 Note the trip (From: Utrecht, To: Zwolle, Date: Friday morning)', "
    "'tool': '0'}, {'step': '1.2 Search for trains', 'tool': '1'}, "
    "{'step': '2 Log in to the rail account (User: ilse, Password: Pwd2023#)', 'tool': '1'}, "
    "{'step': '3 Book train ticket', 'tool': '1'}, {'step': '4. Confirm the booking', "
    "'tool': '1'}]",
    "[{'step': '1.1 \u786e\u5b9a\u63d0\u9192\u65f6\u95f4\uff08\u65f6\u95f4\uff1a\u660e\u5929"
    "\u65e9\u4e0a\u516b\u70b9\uff09', 'tool': '0'}, {'step': '1.2 \u521b\u5efa\u63d0\u9192', "
    "'tool': '1'}]",
    "[{'step': '1.1 Get the forecast (City: Li\u00e8ge, Day: Saturday)', 'tool': '1'}, "
    "{'step': '1.2 Tell the user whether it will rain', 'tool': '1'}]",
]


def published_items() -> list[Item]:
    from evaluation.selectors import item_of

    benchmark_import(
        suite="ultratool",
        paths=[PUBLISHED_FILES / "test.json", *sorted((PUBLISHED_FILES / "test_set").glob("*"))],
    )
    rows = Sample.objects.order_by("id").values(
        "split", "external_id", "kind", "input", "reference", "candidate_tools", "metadata"
    )
    return [item_of(row) for row in rows]


def with_gold(the_item: Item, task: str, gold: list[dict[str, Any]]) -> Item:
    return dataclasses.replace(the_item, reference={**the_item.reference, task: gold})


@pytest.mark.django_db
def test_gold_steps_match_on_their_token_as_the_published_task_file_writes_it() -> None:
    train = published_items()[0]
    # The task file writes gold step 2 as "2 Log in ...": its token is "2", never "2.".
    gold = [g["step"] for g in train.reference["tool_usage_awareness"]]
    assert gold == ["1.1", "1.2", "2", "3", "4"]
    login = "Log in to the rail account (User: ilse, Password: Pwd2023#)"
    for written, right in ((f"2 {login}", 100.0), (f"2. {login}", 0.0)):
        the_item = with_gold(train, "tool_usage_awareness", [{"step": "2", "value": 1}])
        text = repr([{"step": written, "tool": "1"}])
        assert run("tool_usage_awareness", the_item, text, **REF)["accuracy_local"] == right
    # "4. Confirm the booking" is written with its full stop: "4." matches, "4" does not.
    for written, right in (("4. Confirm the booking", 100.0), ("4 Confirm the booking", 0.0)):
        the_item = with_gold(train, "tool_usage_awareness", [{"step": "4", "value": 0}])
        text = repr([{"step": written, "tool": "0"}])
        assert run("tool_usage_awareness", the_item, text, **REF)["accuracy_local"] == right
    # tool usage alike: "3 Book train ticket" is step "3"
    the_item = with_gold(train, "tool_usage", [train.reference["tool_usage"][2]])
    text = (
        "[{'step': '3 Book train ticket', 'tool': 'book_train_ticket', "
        "'param': {'train_id': '<first train found>', 'token': '<login token>'}}]"
    )
    assert run("tool_usage", the_item, text, **REF)["levenshtein_local"] == 100.0


@pytest.mark.django_db
def test_a_perfect_answer_under_the_reference_writes_each_step_as_its_task_file_does() -> None:
    train = published_items()[0]
    perfect = ultratool.reference_output(train, "tool_usage_awareness", "reference")
    steps = [entry["step"] for entry in json.loads(perfect)]
    assert steps[2:] == [
        "2 Log in to the rail account (User: ilse, Password: Pwd2023#)",
        "3 Book train ticket",
        "4. Confirm the booking",
    ]
    for task in ("tool_usage_awareness", "tool_usage"):
        perfect = ultratool.reference_output(train, task, "reference")
        scores = run(task, train, perfect, **REF)
        assert scores["accuracy_local" if task != "tool_usage" else "levenshtein_local"] == 100


def published_outputs(tmp_path: Path, task: str, outputs: list[str]) -> Path:
    """GPT-style prediction lines: the task record under "data", the output in "init output"."""
    records = (PUBLISHED_FILES / "test_set" / f"{task}.json").read_text("utf-8").split("\n")
    lines = [
        json.dumps({"data": json.loads(record), "init output": [output]}, ensure_ascii=False)
        for record, output in zip(records, outputs, strict=False)
    ]
    path = tmp_path / f"{task}.json"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


@pytest.mark.django_db
def test_the_reference_figures_on_published_style_files(tmp_path: Path) -> None:
    published_items()
    usage = published_outputs(tmp_path, "tool_usage", USAGE_OUTPUTS)
    awareness = published_outputs(tmp_path, "tool_usage_awareness", AWARENESS_OUTPUTS)
    options = ("--json", "--name", "reference", "--option", "variant=reference")
    got = json.loads(command("import_predictions", "ultratool", "tool_usage", str(usage), *options))
    # Per gold step: train 1.2 exact 1; 2 exact 1 (the password's "#" stays, its token "2"
    # matches); 3 train_id 1, token "<login token>" against "<token>" 1 - 6/13 = 7/13, the step
    # (1 + 7/13) / 2 = 10/13. Reminder 1.2 exact 1. Weather 1.1: city 1, day Saturday against
    # Sunday 1 - 3/8, the step 13/16. Pooled: (3 + 10/13 + 13/16) / 5 = 0.916346 -> 0.9163.
    # (The mean of the samples' means would be 91.19.) Exact steps: 3 of 5; exact samples: 1/3.
    assert got["metrics"] == {
        "levenshtein_local": 91.63,
        "kv_accuracy_global": 33.33,
        "kv_accuracy_local": 60.0,
        "unparsed": 0.0,
    }
    got = json.loads(
        command("import_predictions", "ultratool", "tool_usage_awareness", str(awareness), *options)
    )
    # Train: 1.1, 1.2, 2 and 3 right, "4." wrong (1 for 0): 4 of 5; reminder 2 of 2; weather 1.2
    # wrong: 1 of 2. Local 7/9 = 0.7778; global: the reminder only, 1/3 = 0.3333.
    assert got["metrics"] == {"accuracy_global": 33.33, "accuracy_local": 77.78, "unparsed": 0.0}
