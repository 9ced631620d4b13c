"""MTU-Bench evaluation (benchmarks/suites/mtubench/evaluate.py): pure tests, no database.

Expected values are computed by hand (the arithmetic is in the comments) or taken from the
paper's appendix D; the seed files are MTU-Eval's published test files (MTU-Bench @d0811f8).
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from benchmarks.kit.base import ImportFormatError
from benchmarks.kit.protocol import Context, Item, Outcome, Scored
from benchmarks.suites import mtubench
from benchmarks.suites.mtubench import evaluate as ev

EVALUATOR = mtubench.SUITE.evaluator
FILES = ("S-S_eval.jsonl", "S-M_eval.jsonl", "M-S_eval.jsonl", "M-M_eval.jsonl", "OOD_eval.jsonl")

SINGLE_RULES = "2. ... in the following format: \nAction: The name of the API to be called.\n"
MULTI_RULES = "2. ... in the following format: \nAction: The name of the APIs.\n"
API_LIST = "The following is a list of APIs and their parameters that you can use:\n[]\n"


def ctx(task: str, **options: Any) -> Context:
    return Context(task=ev.TASKS[task], options=options)


def item(
    split: str,
    external_id: str,
    calls: list[tuple[str, dict[str, Any]]] | None = None,
    *,
    question: str = "",
    **metadata: Any,
) -> Item:
    calls = calls or []
    answer = {name: args for name, args in calls} or ({"": {}} if split in ("S-S", "M-S") else {})
    if split in ("M-S", "M-M", "OOD"):
        base, _, copy = external_id.partition("#")
        dialogue, turn = base.rsplit("_", 1)
        metadata = {
            "dialogue": dialogue,
            "turn": int(turn),
            "copy": int(copy or 1),
            "conversation": f"{dialogue}#{copy}" if copy else dialogue,
            **metadata,
        }
    return Item(
        split=split,
        external_id=external_id,
        input={"prompt": question or f"rules\n{API_LIST}User: question {external_id}"},
        reference={"calls": [{"name": n, "arguments": a} for n, a in calls], "answer": answer},
        metadata=metadata,
    )


def answer_text(*calls: tuple[str, Any]) -> str:
    """A model answer in the benchmark's format: Thought, then Action / Action Input blocks."""
    lines = ["Thought: Let me work out what the user wants."]
    for name, arguments in calls:
        lines.append(f"Action: {name}")
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        lines.append(f"Action Input: {text}")
    return "\n".join(lines)


def run(task: str, pairs: list[tuple[Item, str | None]], **options: Any) -> dict[str, Any]:
    """Parse, score and aggregate (item, answer text or None for a failed call) pairs."""
    context = ctx(task, **options)
    scored = []
    for it, text in pairs:
        outcome = None if text is None else EVALUATOR.parse(text, it, context, {})
        scored.append(Scored(it, outcome, EVALUATOR.score(outcome, it, context, {})))
    return EVALUATOR.aggregate(scored, context)


def scored_turns(split: str, pattern: dict[str, list[int]]) -> list[Scored]:
    """Scored turns whose "correct" values follow `pattern` (conversation -> 0/1 per turn)."""
    out = []
    for dialogue, values in pattern.items():
        for turn, value in enumerate(values):
            it = item(split, f"{dialogue}_{turn}")
            values_of_turn = dict.fromkeys(("TN", "TO", "correct"), float(value))
            out.append(Scored(it, None, values_of_turn))
    return out


# --- tasks ----------------------------------------------------------------------------------


def test_tasks_read_their_split_and_report_the_papers_metrics_as_percentages() -> None:
    assert list(ev.TASKS) == ["S-S", "S-M", "M-S", "M-M", "OOD"]
    expected = {
        "S-S": ("TS", "PS", "Avg"),
        "S-M": ("TN", "TO", "Avg"),
        "M-S": ("TS", "PS", "ATS", "SATS", "SR", "TPR", "Avg"),
        "M-M": ("TN", "TO", "ATS", "SATS", "SR", "TPR", "Avg"),
        "OOD": ("TS", "PS", "ATS", "SATS", "SR", "TPR", "TN", "TO", "Avg"),
    }
    for name, task in ev.TASKS.items():
        assert task.splits == (name,)
        assert task.metrics == expected[name]
        assert task.percent == frozenset(task.metrics)
        assert task.defaults == {"variant": "reference", "system_prompt": True}
    assert EVALUATOR.task("M-M") is ev.TASKS["M-M"]


def test_an_unknown_variant_is_refused() -> None:
    it = item("S-S", "S-S_0", [("A", {})])
    with pytest.raises(ValueError, match="variant"):
        ev.score(None, it, ctx("S-S", variant="lenient"), {})


# --- prompts --------------------------------------------------------------------------------


def test_prompt_files_name_their_source_and_license() -> None:
    for setting in ("S-S", "S-M", "M-S", "M-M"):
        text = (ev.PROMPTS / f"{setting}.txt").read_text(encoding="utf-8")
        header = text.split("\n---\n", 1)[0]
        assert "MTU-Bench-Team/MTU-Bench" in header
        assert "d0811f8" in header
        assert f'"System Prompt ({setting})"' in header
        assert "Apache-2.0" in header
        prompt = ev.system_prompt(setting)
        assert prompt.startswith("Please reply to the user based on their input")
        assert "#" not in prompt.splitlines()[0]
    assert "Action: The name of the APIs." in ev.system_prompt("M-M")
    assert '"Observation" is the information returned by API calls.' in ev.system_prompt("M-S")
    with pytest.raises(ValueError):
        ev.system_prompt("OOD")


def test_chat_prompt_is_the_papers_system_prompt_and_the_question_verbatim() -> None:
    question = "Please reply...\n" + API_LIST + "User: Book a table for two."
    it = item("S-S", "S-S_4", [("BookRestaurant", {})], question=question)
    prompt = EVALUATOR.build_prompt(it, ctx("S-S"), {})
    assert prompt.messages == [
        {"role": "system", "content": ev.system_prompt("S-S")},
        {"role": "user", "content": question},
    ]
    assert prompt.request("chat")["messages"] == prompt.messages

    alone = EVALUATOR.build_prompt(it, ctx("S-S", system_prompt=False), {})
    assert alone.messages == [{"role": "user", "content": question}]


def test_completion_prompt_cues_a_thought_and_stops_after_the_call_block() -> None:
    question = "Please reply...\n" + API_LIST + "User: Book a table for two.\n"
    it = item("S-S", "S-S_4", [("BookRestaurant", {})], question=question)
    body = EVALUATOR.build_prompt(it, ctx("S-S"), {}).request("completion")
    assert body["prompt"] == question.rstrip() + "\nThought:"
    assert body["prompt"].endswith("User: Book a table for two.\nThought:")
    assert body["stop"] == ["\nObservation", "\nobservation", "\nUser:", "\nuser:"]
    assert len(body["stop"]) <= 4  # OpenAI's completions API takes four at most
    # What a base model writes after the cue parses as the call.
    continuation = ' The user wants a table.\nAction: BookRestaurant\nAction Input: {"n": 2}'
    outcome = EVALUATOR.parse(continuation, it, ctx("S-S"), {})
    assert outcome.answer == {"calls": [{"name": "BookRestaurant", "arguments": {"n": 2}}]}


def test_ood_records_take_the_setting_their_rules_describe(seeddata: Path) -> None:
    bundle = mtubench.import_files([seeddata / "mtubench" / "OOD_eval.jsonl"])
    settings = {}
    for sample in bundle.samples:
        it = Item(split="OOD", external_id=sample.external_id, input=sample.input)
        settings[sample.external_id] = ev.setting_of(it)
    assert settings["OOD_0_0"] == settings["OOD_0_0#23"] == "S-S"
    assert settings["OOD_2_1"] == settings["OOD_3_4"] == "M-S"
    assert settings["OOD_4_0"] == settings["OOD_4_0#13"] == "S-M"
    assert settings["OOD_5_0"] == settings["OOD_9_1"] == "M-M"
    # Single-tool rules never come with more than one gold call.
    for sample in bundle.samples:
        if settings[sample.external_id] in ("S-S", "M-S"):
            assert len(sample.reference["calls"]) <= 1


# --- parsing a single-call answer -----------------------------------------------------------


def test_single_call_plain_answer() -> None:
    call = ev.parse_single_call(answer_text(("GetWeather", {"city": "Paris"})))
    assert call == ev.SingleCall("GetWeather", {"city": "Paris"}, "")


def test_action_input_none_is_a_call_with_empty_arguments() -> None:
    # util.py crashes here (no {...} to find); METRICS.md: empty arguments.
    call = ev.parse_single_call("Thought: t\nAction: LookupMusic\nAction Input: None")
    assert (call.name, call.arguments) == ("LookupMusic", {})


def test_no_action_input_is_no_call() -> None:
    assert ev.parse_single_call("Thought: t\nAction: LookupMusic").name == ""
    assert ev.parse_single_call("Thought: nothing to call.").name == ""
    # "Action Input" without its colon: util.py crashes; no call.
    assert ev.parse_single_call("Action: A\nAction Input {}").name == ""


def test_a_name_with_commas_keeps_the_part_before_the_first_comma() -> None:
    call = ev.parse_single_call('Action: GetWeather, LookupMusic\nAction Input: {"city": "Rome"}')
    assert (call.name, call.arguments) == ("GetWeather", {"city": "Rome"})


def test_a_name_containing_none_is_no_call() -> None:
    assert ev.parse_single_call("Action: None\nAction Input: {}") == ev.SingleCall(
        "", {}, "the tool name contains None: no call"
    )
    assert ev.parse_single_call('Action: GetNoneSuch\nAction Input: {"a": 1}').name == ""


def test_python_true_false_and_single_quotes_are_read() -> None:
    call = ev.parse_single_call("Action: FindProvider\nAction Input: {'city': 'NYC', 'x': True}")
    assert call.arguments == {"city": "NYC", "x": True}
    call = ev.parse_single_call('Action: F\nAction Input: {"unisex": False, "n": 3}')
    assert call.arguments == {"unisex": False, "n": 3}


def test_the_arguments_are_the_first_object_up_to_its_first_closing_brace() -> None:
    # util.py's non-greedy {...}: a nested object is cut at its first "}" and no longer reads
    # as JSON, so the answer is no call (the reference numbers depend on it).
    nested = ev.parse_single_call('Action: U\nAction Input: {"new": {"name": "bell"}}')
    assert nested == ev.SingleCall("", {}, "Action Input is not a JSON object: no call")
    # A cut-off answer missing its final "}" gets one.
    cut = ev.parse_single_call('Action: U\nAction Input: {"name": "bell"')
    assert cut.arguments == {"name": "bell"}
    # Text after the object, and a multi-line object, are fine.
    multi_line = ev.parse_single_call('Action: U\nAction Input: {\n  "a": 1\n}\nObservation: {}')
    assert multi_line.arguments == {"a": 1}
    assert ev.parse_single_call("Action: U\nAction Input: {not json}").name == ""


def test_a_single_call_answer_with_several_blocks_takes_the_first() -> None:
    text = answer_text(("A", {"x": 1}), ("B", {"y": 2}))
    assert ev.parse_single_call(text) == ev.SingleCall("A", {"x": 1}, "")


def test_json_constants_stay_storable() -> None:
    call = ev.parse_single_call('Action: A\nAction Input: {"x": NaN}')
    assert call.arguments == {"x": "nan"}


# --- parsing a multi-call answer ------------------------------------------------------------


def test_multi_call_blocks_in_order_a_repeated_tool_collapses() -> None:
    text = answer_text(("A", {"x": 1}), ("B", {}), ("A", {"x": 2}))
    calls = ev.parse_multi_call(text)
    assert calls == {"A": {"x": 2}, "B": {}}
    assert list(calls) == ["A", "B"]


def test_multi_call_quirks() -> None:
    text = (
        'Thought: two calls.\nAction: "FindProvider"\nAction Input: {"city": "LA", "c": True}\n'
        "Action: BookAppointment\n"
        "Action: Echo\nAction Input: {'single': 'quotes'}\n"
        "Action: Broken\nAction Input: None\n"
    )
    assert ev.parse_multi_call(text) == {
        "FindProvider": {"city": "LA", "c": True},
        "BookAppointment": {},  # no Action Input: empty arguments (util.py crashes)
        "Echo": {},  # no single-quote retry for multi-call answers
        "Broken": {},
    }
    echo = "Action: The name of the API to be called.\nAction Input: x\nAction: A\nAction Input: {}"
    assert ev.parse_multi_call(echo) == {"A": {}}
    tail = 'Action: A\nAction Input: {"k": "v"} Please provide your thought\nAction Input: {}'
    assert ev.parse_multi_call(tail) == {"A": {"k": "v"}}
    assert ev.parse_multi_call("Thought: nothing to do.") == {}


# --- comparing arguments --------------------------------------------------------------------


def test_normalisation_steps() -> None:
    assert ev.normalize_value("my playlist") == "playlist"
    assert ev.normalize_value("10") == "onezero"
    assert ev.normalize_value("2 people") == "two people"
    assert ev.normalize_value("findprovider.phone_number") == "bookappointment.phone_number"
    assert ev.normalize_value("today") == "monday"
    # With digits spelled out first the dates never match (util.py's order) ...
    assert ev.normalize_value("2024-01-05") == "twozerotwofour-zeroone-zerofive"
    # ... without (strict) they become weekdays.
    assert ev.normalize_value("2024-01-05", spell_digits=False) == "tuesday"
    assert ev.normalize_value("2024-01-10", spell_digits=False) == "sunday"


def test_compare_dicts_reference() -> None:
    assert ev.compare_dicts({"city": "Paris"}, {"city": "paris"})
    assert ev.compare_dicts({"city": "york"}, {"city": "New York"})  # substring
    assert not ev.compare_dicts({"city": "New York"}, {"city": "york"})
    assert ev.compare_dicts({"n": 2}, {"n": "two"})  # "2" -> "two"
    assert not ev.compare_dicts({"n": "10"}, {"n": "ten"})  # "10" -> "onezero"
    assert ev.compare_dicts({"p": "my jazz"}, {"p": "jazz"})
    assert ev.compare_dicts({"date": "today"}, {"date": "Monday"})
    assert not ev.compare_dicts({"date": "2024-01-05"}, {"date": "tuesday"})
    assert ev.compare_dicts({"type": "Hotel", "area": "north"}, {"area": "north"})
    assert ev.compare_dicts({"d": "FindProvider.name"}, {"d": "BookAppointment.name"})
    assert ev.compare_dicts({"x": True}, {"x": "true"})
    assert ev.compare_dicts({"r": ["Weekdays"]}, {"r": ["weekdays"]})
    assert not ev.compare_dicts({"a": "1"}, {"a": "1", "b": "2"})  # key counts differ
    assert not ev.compare_dicts({"a": "1"}, {"b": "1"})  # key missing
    assert ev.compare_dicts({}, {})


def test_compare_dicts_strict() -> None:
    assert ev.compare_dicts({"city": "Paris"}, {"city": "paris"}, strict=True)
    assert not ev.compare_dicts({"city": "york"}, {"city": "New York"}, strict=True)
    assert not ev.compare_dicts({"n": 2}, {"n": "two"}, strict=True)
    assert ev.compare_dicts({"date": "2024-01-05"}, {"date": "Tuesday"}, strict=True)
    assert ev.compare_dicts({"date": "today"}, {"date": "2024-01-04"}, strict=True)
    assert ev.compare_dicts({"p": "my jazz", "t": "hotel"}, {"p": "jazz"}, strict=True)


# --- TS and PS ------------------------------------------------------------------------------


def test_ts_ps_hand_computed() -> None:
    gold = item("S-S", "S-S_0", [("FindRestaurants", {"city": "San Francisco", "n": 3})])
    no_call = item("S-S", "S-S_1")
    pairs: list[tuple[Item, str | None]] = [
        (gold, answer_text(("FindRestaurants", {"city": "San Francisco", "n": "3"}))),  # 1, 1
        (gold, answer_text(("FindRestaurants", {"city": "Oakland", "n": 3}))),  # 1, 0
        (gold, answer_text(("FindRestaurant", {"city": "San Francisco", "n": 3}))),  # 0, 0
        (no_call, "Thought: The user only says thanks."),  # 1, 1: both no call
    ]
    result = run("S-S", pairs)
    # TS 3/4, PS 2/4; Avg (75 + 50) / 2, once (cal_score.py multiplies it by 100 again).
    assert result == {"TS": 75.0, "PS": 50.0, "Avg": 62.5}


def test_single_tool_compares_gold_in_predicted_multi_tool_predicted_in_gold() -> None:
    s_s = item("S-S", "S-S_0", [("A", {"city": "York"})])
    assert ev.score(
        EVALUATOR.parse(answer_text(("A", {"city": "New York"})), s_s, ctx("S-S"), {}),
        s_s,
        ctx("S-S"),
        {},
    ) == {"TS": 1.0, "PS": 1.0}
    s_m = item("S-M", "S-M_0", [("A", {"city": "New York"})])
    short = EVALUATOR.parse(answer_text(("A", {"city": "York"})), s_m, ctx("S-M"), {})
    assert ev.score(short, s_m, ctx("S-M"), {}) == {"TN": 1.0, "TO": 1.0}
    s_m_short = item("S-M", "S-M_1", [("A", {"city": "York"})])
    long = EVALUATOR.parse(answer_text(("A", {"city": "New York"})), s_m_short, ctx("S-M"), {})
    assert ev.score(long, s_m_short, ctx("S-M"), {}) == {"TN": 0.0, "TO": 0.0}


def test_a_failed_call_is_a_wrong_turn_even_where_no_call_was_right() -> None:
    no_call = item("M-S", "M-S_0_0")
    assert ev.score(None, no_call, ctx("M-S"), {}) == {"TS": 0.0, "PS": 0.0, "correct": 0.0}
    empty = EVALUATOR.parse("Thought: no call needed.", no_call, ctx("M-S"), {})
    assert ev.score(empty, no_call, ctx("M-S"), {}) == {"TS": 1.0, "PS": 1.0, "correct": 1.0}
    multi = item("M-M", "M-M_0_0")
    assert ev.score(None, multi, ctx("M-M"), {}) == {"TN": 0.0, "TO": 0.0, "correct": 0.0}


def test_an_outcome_without_a_readable_answer_is_read_again() -> None:
    it = item("S-S", "S-S_0", [("A", {"x": 1})])
    outcome = Outcome(output=answer_text(("A", {"x": 1})), answer=None)
    assert ev.score(outcome, it, ctx("S-S"), {}) == {"TS": 1.0, "PS": 1.0}


# --- TN and TO ------------------------------------------------------------------------------


def test_tn_paper_example_025_and_what_the_reference_gives() -> None:
    gold = {"search_web": {}, "translate_text": {}}
    pred = {"search_web": {}, "play_music": {}, "set_alarm": {}}
    paper = ev.predicted_tool_list(pred, gold, variant="paper")
    assert paper == ["search_web", "play_music", "set_alarm"]
    assert ev.tool_number(paper, list(gold)) == 0.25  # 1 common of 4 tools
    # util.py leaves predicted tools outside the gold out of P: 1 common of 2.
    reference = ev.predicted_tool_list(pred, gold)
    assert reference == ["search_web"]
    assert ev.tool_number(reference, list(gold)) == 0.5
    # Paper positive example: 3/3.
    three = ["search_web", "summarize_text", "translate_text"]
    assert ev.tool_number(three, three) == 1.0


def test_to_paper_examples_under_the_paper_variant() -> None:
    perfect = ["search_web", "extract_data", "generate_report"]
    # 1-based start 1 of 3: cos(pi/2 * 1/3) = 0.8660, * 3/3.
    assert ev.tool_order(perfect, perfect, variant="paper") == pytest.approx(0.8660, abs=1e-4)
    gold = ["get_weather", "plan_route", "book_hotel"]
    pred = ["book_hotel", "plan_route", "get_weather"]
    # Three common subsequences of length 1; the paper picks plan_route (start 2: 0.5 * 1/3 =
    # 0.1667) by no stated rule. Ours starts earliest in Pred: book_hotel, start 1,
    # cos(pi/6) * 1/3 = 0.2887.
    assert ev.tool_order(pred, gold, variant="paper") == pytest.approx(0.2887, abs=1e-4)
    # The paper's formula gives a one-call perfect answer cos(pi/2) = 0.
    assert ev.tool_order(["A"], ["A"], variant="paper") == pytest.approx(0.0, abs=1e-12)
    assert ev.tool_order([], [], variant="paper") == 1.0
    assert ev.tool_order(["A"], [], variant="paper") == 0.0


def test_to_paper_examples_under_the_reference() -> None:
    perfect = ["search_web", "extract_data", "generate_report"]
    assert ev.tool_order(perfect, perfect) == 1.0
    gold = ["get_weather", "plan_route", "book_hotel"]
    pred = ["book_hotel", "plan_route", "get_weather"]
    # On these lists the reference's longest block is get_weather (earliest in gold) at
    # 0-based 2 in pred: cos(pi/2 * 2/3) * 1/3 = 0.5 / 3 = 0.1667, the paper's number.
    assert ev.tool_order(pred, gold) == pytest.approx(0.1667, abs=1e-4)
    # But util.py lists the predicted tools in gold order before computing TO, so the whole
    # turn scores TN = TO = 1 when every argument matches.
    calls = {name: {} for name in pred}
    listed = ev.predicted_tool_list(calls, {name: {} for name in gold})
    assert listed == gold
    assert ev.tool_order(listed, gold) == 1.0
    # Under the paper variant the predicted order stays.
    as_predicted = ev.predicted_tool_list(calls, {name: {} for name in gold}, variant="paper")
    assert as_predicted == pred


def test_tn_to_with_wrong_arguments_hand_computed() -> None:
    gold = {"A": {"x": "1"}, "B": {}}
    pred = {"A": {"x": "2"}, "B": {}}
    listed = ev.predicted_tool_list(pred, gold)
    assert listed == ["Awrong", "B"]
    # TN: {Awrong, B} vs {A, B}: 1 common of 3.
    assert ev.tool_number(listed, ["A", "B"]) == pytest.approx(1 / 3)
    # TO: longest block [B], 0-based 1 of 2 in P: cos(pi/4) * 1/2 = 0.35355.
    assert ev.tool_order(listed, ["A", "B"]) == pytest.approx(math.cos(math.pi / 4) / 2)
    # Empty cases: both empty 1, one empty 0.
    assert ev.tool_number([], []) == 1.0 and ev.tool_order([], []) == 1.0
    assert ev.tool_number(["A"], []) == 0.0 and ev.tool_order(["A"], []) == 0.0
    assert ev.predicted_tool_list({"X": {}}, {"A": {}}) == []


def test_tn_to_turn_scores_and_correctness_by_variant() -> None:
    gold = item("M-M", "M-M_0_0", [("A", {}), ("B", {})])
    swapped = answer_text(("B", {}), ("A", {}), ("C", {}))
    for variant, expected in (
        ("reference", {"TN": 1.0, "TO": 1.0, "correct": 1.0}),
        # P = [B, A, C]: TN 2/3; LCS 1 (B at 1-based 1): cos(pi/6) * 1/2.
        ("paper", {"TN": 2 / 3, "TO": math.cos(math.pi / 6) / 2, "correct": 0.0}),
    ):
        context = ctx("M-M", variant=variant)
        got = ev.score(EVALUATOR.parse(swapped, gold, context, {}), gold, context, {})
        assert got == pytest.approx(expected)
    perfect = answer_text(("A", {}), ("B", {}))
    context = ctx("M-M", variant="paper")
    got = ev.score(EVALUATOR.parse(perfect, gold, context, {}), gold, context, {})
    # The paper's TO never reaches 1 on a perfect answer, but the turn is correct.
    assert got == pytest.approx({"TN": 1.0, "TO": math.cos(math.pi / 4), "correct": 1.0})


def test_s_m_aggregate_hand_computed() -> None:
    one = item("S-M", "S-M_0", [("A", {"x": "1"}), ("B", {})])
    two = item("S-M", "S-M_1", [("C", {})])
    pairs: list[tuple[Item, str | None]] = [
        (one, answer_text(("A", {"x": "1"}), ("B", {}))),  # TN 1, TO 1
        (one, answer_text(("A", {"x": "2"}), ("B", {}))),  # TN 1/3, TO 0.35355
        (two, "Thought: none."),  # TN 0, TO 0
        (two, None),  # failed: 0, 0
    ]
    result = run("S-M", pairs)
    tn = (1 + 1 / 3) / 4 * 100  # 33.33
    to = (1 + math.cos(math.pi / 4) / 2) / 4 * 100  # 33.84
    assert result == {"TN": round(tn, 2), "TO": round(to, 2), "Avg": 33.59}


# --- dialogue metrics -----------------------------------------------------------------------


def test_sats_paper_example_06994() -> None:
    correct = [True, True, False, True, True]
    scores = ev.soft_turn_scores(correct)
    assert scores == pytest.approx([1, 1, 0, 1 - math.exp(-1), 1 - math.exp(-2)])
    metrics = ev.dialogue_scores(correct)
    assert metrics["SATS"] == pytest.approx(0.6994, abs=1e-4)
    assert metrics["ATS"] == 0.8
    assert metrics["SR"] == 0.0
    assert metrics["TPR"] == 0.4  # paper: (i - 1) / n = 2/5
    result = EVALUATOR.aggregate(scored_turns("M-M", {"M-M_7": [1, 1, 0, 1, 1]}), ctx("M-M"))
    assert result["SATS"] == 69.94


def test_dialogue_metrics_other_paper_examples_and_two_errors() -> None:
    assert ev.dialogue_scores([True, False, True])["ATS"] == pytest.approx(0.6667, abs=1e-4)
    assert ev.dialogue_scores([True] * 4) == {"ATS": 1.0, "SATS": 1.0, "SR": 1.0, "TPR": 1.0}
    # Two errors: the distance counts from the most recent one.
    # [0, 1-e^-1, 0, 1-e^-1, 1-e^-2] / 5 = 0.42578
    two = ev.dialogue_scores([False, True, False, True, True])
    assert two["SATS"] == pytest.approx((2 * (1 - math.exp(-1)) + 1 - math.exp(-2)) / 5)
    assert two["TPR"] == 0.0
    with pytest.raises(ValueError):
        ev.dialogue_scores([])


def test_m_m_aggregate_over_dialogues_hand_computed() -> None:
    result = EVALUATOR.aggregate(
        scored_turns("M-M", {"M-M_0": [1, 1], "M-M_1": [0, 1, 1], "M-M_2": [1]}), ctx("M-M")
    )
    # Turns: 5 of 6 correct (TN, TO 83.33). ATS (1 + 2/3 + 1)/3 = 88.89. SR 2/3 = 66.67.
    # SATS: (1 + (0 + 0.6321 + 0.8647)/3 + 1)/3 = 83.30. TPR (1 + 0 + 1)/3 = 66.67.
    assert result == {
        "TN": 83.33,
        "TO": 83.33,
        "ATS": 88.89,
        "SATS": 83.3,
        "SR": 66.67,
        "TPR": 66.67,
        "Avg": round((83.33 * 2 + 88.89 + 83.3 + 66.67 * 2) / 6, 2),
    }


def test_turns_are_ordered_as_integers_turn_10_after_9() -> None:
    # Eleven turns, all correct but turn 10; given in string order ("0", "1", "10", "2", ...).
    turns = scored_turns("M-S", {"M-S_3": [1] * 10 + [0]})
    string_order = sorted(turns, key=lambda s: s.item.external_id)
    assert [s.item.metadata["turn"] for s in string_order][:3] == [0, 1, 10]
    result = EVALUATOR.aggregate(string_order, ctx("M-S"))
    assert result["TPR"] == round(10 / 11 * 100, 2)  # 90.91; string order would give 18.18
    assert result["SATS"] == round(10 / 11 * 100, 2)


def test_m_s_correctness_is_reset_every_turn() -> None:
    # cal_score.py sets is_correct once and never resets it, so after one correct turn every
    # later turn counted as correct (here: ATS 100, SR 100).
    first = item("M-S", "M-S_0_0", [("LookupMusic", {})])
    second = item("M-S", "M-S_0_1", [("PlayMedia", {"song": "Be My Baby"})])
    result = run(
        "M-S",
        [
            (first, answer_text(("LookupMusic", {}))),
            (second, answer_text(("PlayMedia", {"song": "Another Song"}))),
        ],
    )
    assert result == {
        "TS": 100.0,
        "PS": 50.0,
        "ATS": 50.0,
        "SATS": 50.0,
        "SR": 0.0,
        "TPR": 50.0,
        "Avg": 50.0,  # (100 + 50 + 50 + 50 + 0 + 50) / 6
    }


def test_duplicate_ids_are_separate_conversations() -> None:
    # The published M-M file gives two different dialogues the id M-M_19: the importer marks
    # the second "M-M_19#2"; they are two dialogues, not one with interleaved turns.
    turns = scored_turns("M-M", {"M-M_19": [1, 1, 1, 1]}) + scored_turns(
        "M-M", {"M-M_19": [0, 1, 1]}
    )
    second = [Scored(item("M-M", f"M-M_19_{t}#2"), None, s.scores) for t, s in enumerate(turns[4:])]
    scored = turns[:4] + second
    assert {ev.cluster(s.item, ctx("M-M")) for s in scored} == {"M-M/M-M_19", "M-M/M-M_19#2"}
    result = EVALUATOR.aggregate(scored, ctx("M-M"))
    assert result["SR"] == 50.0  # one of two dialogues
    assert result["TPR"] == 50.0  # (4/4 + 0/3) / 2


def test_a_bootstrap_sample_may_repeat_a_dialogue() -> None:
    scored = scored_turns("M-M", {"M-M_0": [1, 0], "M-M_1": [1, 1]})
    once = EVALUATOR.aggregate(scored, ctx("M-M"))
    twice = EVALUATOR.aggregate(scored[:2] + scored[:2] + scored[2:] + scored[2:], ctx("M-M"))
    assert once == twice
    # Dialogue 0 drawn twice, dialogue 1 once: SR 1/3.
    assert EVALUATOR.aggregate(scored[:2] * 2 + scored[2:], ctx("M-M"))["SR"] == 33.33


def test_dialogues_follow_the_platforms_groups() -> None:
    # The bootstrap draws dialogue M-M_0 twice and hands it over as groups "...#1", "...#2".
    scored = scored_turns("M-M", {"M-M_0": [1, 0], "M-M_1": [1, 1]})
    cluster = ev.cluster(scored[0].item, ctx("M-M"))
    sample = [
        *(replace(s, group=f"{cluster}#1") for s in scored[:2]),
        *(replace(s, group=f"{cluster}#2") for s in scored[:2]),
        *(replace(s, group="M-M/M-M_1#1") for s in scored[2:]),
    ]
    result = EVALUATOR.aggregate(sample, ctx("M-M"))
    assert result["SR"] == 33.33  # 1 of 3 dialogues
    assert result["ATS"] == round((0.5 + 0.5 + 1) / 3 * 100, 2)  # 66.67


def test_a_repeated_line_counts_per_turn_and_replaces_its_turn_in_the_dialogue() -> None:
    # An imported file answered M-M_0's turn 1 twice (on_duplicate=reference): wrong, then
    # right. MTU-Eval counts both lines in TN/TO and keeps one slot per turn in its dialogue
    # list, which the later line overwrites.
    turns = scored_turns("M-M", {"M-M_0": [1, 0], "M-M_1": [1, 1]})
    again = replace(turns[1], scores=dict.fromkeys(("TN", "TO", "correct"), 1.0), repeat=1)
    result = EVALUATOR.aggregate([*turns, again], ctx("M-M"))
    assert (result["TN"], result["TO"]) == (80.0, 80.0)  # 4 of 5 lines
    assert (result["SR"], result["ATS"], result["TPR"]) == (100.0, 100.0, 100.0)
    # Bootstrap groups keep a repeat inside its dialogue's copy.
    cluster = ev.cluster(turns[0].item, ctx("M-M"))
    grouped = [replace(s, group=f"{cluster}#1") for s in (turns[0], turns[1], again)]
    assert EVALUATOR.aggregate(grouped, ctx("M-M"))["SR"] == 100.0
    # Without the mark, a turn seen twice is a second copy of the dialogue (a resample).
    twice = replace(again, repeat=0)
    assert EVALUATOR.aggregate([*turns, twice], ctx("M-M"))["SR"] == round(2 / 3 * 100, 2)


def test_cluster_and_limit_keep_dialogues_whole() -> None:
    items = [item("M-S", f"M-S_{d}_{t}") for d in range(4) for t in range(3)]
    assert ev.cluster(items[0], ctx("M-S")) == "M-S/M-S_0"
    single = item("S-S", "S-S_5", [("A", {})])
    assert ev.cluster(single, ctx("S-S")) == "S-S/S-S_5"
    chosen = EVALUATOR.limit(items, ctx("M-S"), 6)
    assert len(chosen) == 6
    assert len({it.metadata["dialogue"] for it in chosen}) == 2


def test_aggregate_of_nothing_is_none() -> None:
    assert EVALUATOR.aggregate([], ctx("M-S")) == dict.fromkeys(ev.TASKS["M-S"].metrics)


def test_ood_mixes_single_and_multi_tool_turns() -> None:
    single = "rules\n" + SINGLE_RULES + API_LIST + "User: q"
    multi = "rules\n" + MULTI_RULES + API_LIST + "User: q"
    a = item("OOD", "OOD_0_0", [("get_world_record", {"c": "snake"})], question=single)
    b = item("OOD", "OOD_4_0", [("A", {}), ("B", {})], question=multi)
    result = run(
        "OOD",
        [
            (a, answer_text(("get_world_record", {"c": "snake"}))),  # TS 1, PS 1, correct
            (b, answer_text(("A", {}))),  # TN 1/2, TO 1/2, wrong
        ],
    )
    assert result == {
        "TS": 100.0,
        "PS": 100.0,
        "ATS": 50.0,
        "SATS": 50.0,
        "SR": 50.0,
        "TPR": 50.0,
        "TN": 50.0,
        "TO": 50.0,
        "Avg": 62.5,
    }


# --- published outputs ----------------------------------------------------------------------


def test_read_predictions_numbers_copies_like_the_importer(tmp_path: Path) -> None:
    path = tmp_path / "M-M_gpt4_response.jsonl"
    rows = [
        {"id": "M-M_19_0", "model": "gpt4", "response": "Thought: a"},
        {"id": "M-M_19_1", "model": "gpt4", "response": "Thought: b"},
        {"id": "M-M_19_0", "model": "gpt4", "response": "Thought: c"},
        {"id": "M-M_19_0", "response": "Thought: d"},
    ]
    lines = [json.dumps(row) for row in rows]
    lines.insert(2, "")  # a blank line is skipped but still counted
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    outputs = list(EVALUATOR.read_predictions("M-M", path))
    assert [(o.external_id, o.output, o.split) for o in outputs] == [
        ("M-M_19_0", "Thought: a", "M-M"),
        ("M-M_19_1", "Thought: b", "M-M"),
        ("M-M_19_0#2", "Thought: c", "M-M"),
        ("M-M_19_0#3", "Thought: d", "M-M"),
    ]
    assert outputs[2].source == f"{path}, line 4"  # the blank line keeps its number
    # Where the split has no copy k of the id, the line is another answer for the id itself
    # (the import's on_duplicate policy decides what that means).
    assert [o.fallback_id for o in outputs] == [None, None, "M-M_19_0", "M-M_19_0"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "S-S_1", "response": "x"', "line 2"),
        ('{"id": "S-S_1", "model": "m"}', "field 'response'"),
        ('{"response": "x"}', "field 'id'"),
        ('{"id": "S-S_1", "response": 5}', "field 'response'"),
        ('{"id": "M-S_1_0", "response": "x"}', "field 'id'"),
    ],
)
def test_read_predictions_errors_name_file_line_and_field(
    tmp_path: Path, line: str, message: str
) -> None:
    path = tmp_path / "S-S_model_response.jsonl"
    path.write_text('{"id": "S-S_0", "model": "m", "response": "ok"}\n' + line + "\n")
    with pytest.raises(ImportFormatError) as error:
        list(EVALUATOR.read_predictions("S-S", path))
    assert str(path) in str(error.value)
    assert "line 2" in str(error.value)
    assert message in str(error.value)
    with pytest.raises(ValueError, match="no task"):
        list(EVALUATOR.read_predictions("X-Y", path))


# --- the published test files: a gold answer scores 100 -------------------------------------


def gold_text(it: Item) -> str:
    calls = it.reference["calls"]
    if not calls:
        return "Thought: The user's request needs no API call."
    return answer_text(*((c["name"], c["arguments"]) for c in calls))


@pytest.fixture(scope="module")
def seed_items(seeddata: Path) -> list[Item]:
    bundle = mtubench.import_files([seeddata / "mtubench" / name for name in FILES])
    return [
        Item(
            split=s.split,
            external_id=s.external_id,
            input=s.input,
            reference=s.reference,
            kind=s.kind,
            candidate_tools=s.candidate_tools,
            metadata=s.metadata,
        )
        for s in bundle.samples
    ]


@pytest.mark.parametrize("variant", ["reference", "strict"])
def test_gold_answers_score_100_on_the_published_files(
    seed_items: list[Item], variant: str
) -> None:
    for task in ev.TASKS:
        items = [it for it in seed_items if it.split == task]
        result = run(task, [(it, gold_text(it)) for it in items], variant=variant)
        if task != "M-S":
            assert set(result.values()) == {100.0}, (task, result)
    # One M-S gold answer has a nested object (M-S_17_3: "new_information": {"new_name":
    # "bell"}); util.py cuts the arguments at their first "}", so even the gold answer reads as
    # no call: 135 of 136 turns right, and dialogue M-S_17 (5 turns, turn 3 wrong) fails.
    m_s = [it for it in seed_items if it.split == "M-S"]
    context = ctx("M-S", variant=variant)
    wrong = [
        it.external_id
        for it in m_s
        if ev.score(EVALUATOR.parse(gold_text(it), it, context, {}), it, context, {})["correct"]
        != 1.0
    ]
    assert wrong == ["M-S_17_3"]
    assert sum(it.metadata["dialogue"] == "M-S_17" for it in m_s) == 5
    assert len({it.metadata["conversation"] for it in m_s}) == 30
    result = run("M-S", [(it, gold_text(it)) for it in m_s], variant=variant)
    sats_17 = (3 + 0 + 1 - math.exp(-1)) / 5
    assert result == {
        "TS": round(135 / 136 * 100, 2),  # 99.26
        "PS": round(135 / 136 * 100, 2),
        "ATS": round((29 + 4 / 5) / 30 * 100, 2),  # 99.33
        "SATS": round((29 + sats_17) / 30 * 100, 2),  # 99.09
        "SR": round(29 / 30 * 100, 2),  # 96.67
        "TPR": round((29 + 3 / 5) / 30 * 100, 2),  # 98.67
        "Avg": 98.71,
    }


def test_gold_answers_under_the_paper_variant(seed_items: list[Item]) -> None:
    # Every call right, but the paper's TO decays even at the first position.
    items = [it for it in seed_items if it.split == "M-M"]
    result = run("M-M", [(it, gold_text(it)) for it in items], variant="paper")
    assert result["TN"] == result["ATS"] == result["SR"] == 100.0
    assert result["TO"] < 100.0


def test_empty_answers_on_the_published_files(seed_items: list[Item]) -> None:
    # Saying nothing is right exactly on the no-call turns (26 of 104 in S-S).
    items = [it for it in seed_items if it.split == "S-S"]
    result = run("S-S", [(it, "Thought: I will not call anything.") for it in items])
    assert result["TS"] == result["PS"] == round(26 / 104 * 100, 2)
