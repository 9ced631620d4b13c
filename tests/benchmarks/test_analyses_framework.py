"""The analyses framework's pure parts (benchmarks/kit/analyses.py) and MetaTool's and
MTU-Bench's analyses on hand-made runs whose answers are counted here by hand."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.kit.analyses import (
    Analysis,
    AnalysisInput,
    AnalysisMetric,
    breakdown,
    bucket,
    natural_key,
    score_of,
    shares,
)
from benchmarks.kit.protocol import Context, Item, Outcome, Scored, ToolSpec
from benchmarks.suites import generic, metatool, mtubench
from benchmarks.suites.generic.analyses import ANALYSES as GENERIC
from benchmarks.suites.metatool.analyses import ANALYSES as METATOOL
from benchmarks.suites.mtubench.analyses import ANALYSES as MTU
from benchmarks.suites.mtubench.analyses import error_type


def record(
    scores: dict[str, Any],
    *,
    split: str = "s",
    reference: Any = None,
    context: dict[str, Any] | None = None,
    candidates: tuple[str, ...] = (),
    metadata: dict[str, Any] | None = None,
    output: str | None = "",
    answer: Any = None,
    external_id: str = "x",
) -> Scored:
    item = Item(
        split=split,
        external_id=external_id,
        input={},
        reference=reference,
        candidate_tools=candidates,
        metadata=metadata or {},
    )
    outcome = None if output is None else Outcome(output=output, answer=answer)
    return Scored(item=item, outcome=outcome, scores=scores, context=context or {})


# --- helpers ------------------------------------------------------------------------------------


def test_natural_order_reads_numbers_in_text() -> None:
    values = ["top 10", "top 5", "10-14", "5-9", "0-4", 3, 1.5, "top 15", None]
    assert sorted(values, key=natural_key) == [
        1.5, 3, "0-4", "5-9", "10-14", "top 5", "top 10", "top 15", None
    ]  # fmt: skip


def test_breakdown_means_and_shares_by_hand() -> None:
    records = [
        record({"ok": 1.0}, split="b"),
        record({"ok": 0.0}, split="b"),
        record({"ok": 1.0}, split="a"),
        record({"ok": None}, split="a"),  # no value: skipped in the mean, counted in n
        record({"ok": 1.0}, split="c"),
    ]
    rows = breakdown(records, lambda r: r.item.split, {"ok": score_of("ok")})
    assert rows == [
        {"group": "a", "n": 2, "ok": 100.0},
        {"group": "b", "n": 2, "ok": 50.0},
        {"group": "c", "n": 1, "ok": 100.0},
    ]
    ordered = shares(records, lambda r: r.item.split, order=("c", "a"))
    assert ordered == [
        {"group": "c", "n": 1, "share": 20.0},
        {"group": "a", "n": 2, "share": 40.0},
        {"group": "b", "n": 2, "share": 40.0},
    ]
    assert [bucket(v, 5) for v in (0, 4, 5, 13, 48)] == ["0-4", "0-4", "5-9", "10-14", "45-49"]


def test_an_analysis_refuses_rows_that_break_the_shape() -> None:
    def fixed(rows: list[dict[str, Any]]) -> Analysis:
        return Analysis(
            name="fixed",
            title="Fixed",
            by="g",
            metrics=(AnalysisMetric("m"),),
            compute=lambda data: rows,
        )

    data = AnalysisInput([], Context(task=mtubench.TASKS["S-S"]))
    assert fixed([{"group": 1, "n": 2, "m": 50.0}]).run(data) == [{"group": 1, "n": 2, "m": 50.0}]
    for bad in (
        [{"group": 1, "n": 0, "m": 1.0}],
        [{"group": 1, "n": 2}],
        [{"group": 1, "n": 2, "m": 1.0, "extra": 3}],
        [{"group": 1, "n": 2, "m": float("nan")}],
        [{"group": 1, "n": 2, "m": "high"}],
        [{"n": 2, "m": 1.0}],
    ):
        with pytest.raises(ValueError, match="analysis 'fixed'"):
            fixed(bad).run(data)
    with pytest.raises(ValueError, match="lower-case"):
        Analysis(name="Bad Name", title="", by="g", metrics=(AnalysisMetric("m"),), compute=list)
    with pytest.raises(ValueError, match="unique"):
        Analysis(name="a", title="", by="g", metrics=(AnalysisMetric("n"),), compute=list)


# --- MetaTool -----------------------------------------------------------------------------------


def metatool_analysis(task: str, name: str) -> Analysis:
    return next(a for a in METATOOL[task] if a.name == name)


TOOLS = {
    "Short": ToolSpec("Short", "two words"),  # 2 words: bucket 0-4
    "Medium": ToolSpec("Medium", "one two three four five six seven"),  # 7: 5-9
    "Long": ToolSpec("Long", " ".join(["w"] * 12)),  # 12: 10-14
}


def test_metatool_scenario_breakdowns_by_hand() -> None:
    ctx = Context(task=metatool.TASKS["scenario"], options={"scenario": "Students"}, tools=TOOLS)
    # (scenario, list length, gold tool, correct): a pooled comparison of three lists
    cases = [
        ("TopTool_top5", 5, "Short", 1.0),
        ("TopTool_top5", 5, "Medium", 1.0),
        ("TopTool_top10", 10, "Long", 1.0),
        ("TopTool_top10", 10, "Short", 0.0),
        ("TopTool_top10", 10, "Medium", 0.0),
        ("Students", 10, "Long", 0.0),
        ("Students", 10, "Short", 1.0),
        ("Students", 10, "Long", 1.0),
    ]
    records = [
        record(
            {"correct": correct, "unparsed": 0.0},
            context={"scenario": scenario, "candidates": ["t"] * length},
            reference={"tool": gold},
        )
        for scenario, length, gold, correct in cases
    ]
    data = AnalysisInput(records, ctx)
    assert metatool_analysis("scenario", "by_scenario").run(data) == [
        {"group": "Students", "n": 3, "CSR": 66.67},
        {"group": "TopTool_top5", "n": 2, "CSR": 100.0},
        {"group": "TopTool_top10", "n": 3, "CSR": 33.33},
    ]
    assert metatool_analysis("scenario", "by_top_n").run(data) == [
        {"group": 5, "n": 2, "CSR": 100.0},
        {"group": 10, "n": 3, "CSR": 33.33},
    ]
    assert metatool_analysis("scenario", "by_list_length").run(data) == [
        {"group": 5, "n": 2, "CSR": 100.0},
        {"group": 10, "n": 6, "CSR": 50.0},
    ]
    # Short: 3 items, 2 right; Medium: 2, 1 right; Long: 3, 2 right
    assert metatool_analysis("scenario", "by_description_length").run(data) == [
        {"group": "0-4", "n": 3, "CSR": 66.67},
        {"group": "5-9", "n": 2, "CSR": 50.0},
        {"group": "10-14", "n": 3, "CSR": 66.67},
    ]


def test_metatool_leaves_unread_answers_out_when_the_run_does() -> None:
    records = [
        record({"correct": 1.0, "unparsed": 0.0}, context={"candidates": ["a"] * 5}),
        record({"correct": 0.0, "unparsed": 1.0}, context={"candidates": ["a"] * 5}),
        record({"correct": 0.0, "unparsed": 0.0}, context={"candidates": ["a"] * 3}),
    ]
    analysis = metatool_analysis("similar", "by_list_length")
    wrong = AnalysisInput(records, Context(task=metatool.TASKS["similar"], tools=TOOLS))
    assert analysis.run(wrong) == [
        {"group": 3, "n": 1, "CSR": 0.0},
        {"group": 5, "n": 2, "CSR": 50.0},
    ]
    exclude = AnalysisInput(
        records, Context(task=metatool.TASKS["similar"], options={"unparsed": "exclude"})
    )
    assert analysis.run(exclude) == [
        {"group": 3, "n": 1, "CSR": 0.0},
        {"group": 5, "n": 1, "CSR": 100.0},
    ]
    assert len(analysis.covered(exclude)) == 2


# --- MTU-Bench ----------------------------------------------------------------------------------


def calls(*names: str) -> dict[str, Any]:
    return {"calls": [{"name": name, "arguments": {"a": "1"}} for name in names]}


@pytest.mark.parametrize(
    ("split", "gold", "output", "answer", "expected"),
    [
        # single tool: none due, one made / one due, none made / another tool / the right one
        ("S-S", [], "Action: A\nAction Input: {}", calls("A"), "action: excessive"),
        ("S-S", ["A"], "no call", calls(), "action: missed"),
        ("S-S", ["A"], "Action: B\nAction Input: {}", calls("B"), "action: incorrect"),
        ("S-S", ["A"], 'Action: A\nAction Input: {"a": "2"}', calls("A"), "parameter"),
        # an Action without its input, or an input that is not JSON: the format
        ("S-S", ["A"], "Action: A", calls(), "format"),
        ("S-S", ["A"], "Action: A\nAction Input: {a: 1}", calls(), "format"),
        # multi tool: fewer, more, other or reordered tools; arguments; unreadable input
        ("S-M", ["A", "B"], "", calls("A"), "action: missed"),
        ("S-M", ["A"], "", calls("A", "B"), "action: excessive"),
        ("S-M", ["A", "B"], "", calls("A", "C"), "action: incorrect"),
        ("S-M", ["A", "B"], "", calls("B", "A"), "action: incorrect"),
        ("S-M", ["A", "B"], "", calls("A", "B"), "parameter"),
        ("S-M", ["A"], "Action: A\nAction Input: {x}", calls("A"), "format"),
        # the endpoint gave no answer
        ("S-S", ["A"], None, None, "no answer"),
    ],
)
def test_mtubench_error_types_by_hand(
    split: str, gold: list[str], output: str | None, answer: Any, expected: str
) -> None:
    wrong = record(
        {"TS": 0.0, "PS": 0.0},
        split=split,
        reference={"calls": calls(*gold)["calls"]},
        output=output,
        answer=answer,
    )
    assert error_type(wrong) == expected


def test_mtubench_native_calls_with_unreadable_arguments_are_format_errors() -> None:
    def native(note: str, answer: Any) -> Scored:
        wrong = record(
            {"TS": 0.0, "PS": 0.0}, split="S-S", reference=calls("A"), output="", answer=answer
        )
        assert wrong.outcome is not None
        wrong.outcome.tool_calls = [{"id": "c1", "type": "function"}]
        wrong.outcome.note = note
        return wrong

    assert error_type(native("call 1: arguments are not valid JSON (x)", calls("A"))) == "format"
    assert error_type(native("call 1: unknown tool 'B'", calls("B"))) == "action: incorrect"
    assert error_type(native("", calls("A"))) == "parameter"


def test_mtubench_turns_count_from_one_and_tools_from_the_api_list() -> None:
    def turn(dialogue: int, number: int, ts: float, tools: int) -> Scored:
        return record(
            {"TS": ts, "PS": ts, "correct": ts},
            split="M-S",
            external_id=f"M-S_{dialogue}_{number}",
            metadata={"dialogue": f"M-S_{dialogue}", "turn": number, "copy": 1},
            candidates=tuple(f"t{k}" for k in range(tools)),
            reference={"calls": []},
        )

    records = [turn(0, 0, 1.0, 2), turn(0, 1, 0.0, 2), turn(1, 0, 1.0, 4), turn(1, 1, 1.0, 4)]
    records.append(turn(1, 2, 0.0, 4))
    data = AnalysisInput(records, Context(task=mtubench.TASKS["M-S"]))
    by = {a.name: a for a in MTU["M-S"]}
    assert by["by_turn"].run(data) == [
        {"group": 1, "n": 2, "TS": 100.0, "PS": 100.0},
        {"group": 2, "n": 2, "TS": 50.0, "PS": 50.0},
        {"group": 3, "n": 1, "TS": 0.0, "PS": 0.0},
    ]
    assert by["by_tools"].run(data) == [
        {"group": 2, "n": 2, "TS": 50.0, "PS": 50.0},
        {"group": 4, "n": 3, "TS": 66.67, "PS": 66.67},
    ]
    assert [a.name for a in MTU["S-S"]] == ["by_tools", "error_types"]


# --- the generic suite --------------------------------------------------------------------------


def test_generic_accuracy_by_split_by_hand() -> None:
    records = [
        record({"accuracy": 100.0, "unparsed": 0.0}, split="maths"),
        record({"accuracy": 0.0, "unparsed": 0.0}, split="maths"),
        record({"accuracy": None, "unparsed": 100.0}, split="maths"),  # unread: left out
        record({"accuracy": 100.0, "unparsed": 0.0}, split="geography"),
    ]
    (analysis,) = GENERIC["answer"]
    data = AnalysisInput(records, Context(task=generic.TASKS["answer"]))
    assert analysis.run(data) == [
        {"group": "geography", "n": 1, "accuracy": 100.0},
        {"group": "maths", "n": 2, "accuracy": 50.0},
    ]
    assert len(analysis.covered(data)) == 3
