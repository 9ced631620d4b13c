"""WTU-Eval's analyses on a hand-made R4 run whose figures are counted here by hand."""

from __future__ import annotations

import pytest

from benchmarks.kit.analyses import AnalysisInput
from benchmarks.kit.conformance import context_for, item_of
from benchmarks.kit.protocol import Scored
from benchmarks.suites import wtueval
from benchmarks.suites.wtueval.analyses import ANALYSES, human_types
from benchmarks.suites.wtueval.conformance import agent_outcome
from tests.conftest import BENCHMARK_FIXTURES

FIXTURE = BENCHMARK_FIXTURES / "wtueval" / "questions.jsonl"


@pytest.fixture
def r4() -> AnalysisInput:
    evaluator = wtueval.SUITE.evaluator
    ctx = context_for(evaluator, "R4")
    items = {r.split: item_of(r) for r in wtueval.import_files([FIXTURE]).samples}
    # (dataset, rule, repeat): boolq right without a tool, boolq right after a call (a tool on a
    # general question: wrong, unnecessary_tool), piqa wrong (wrong_answer), piqa null
    # content, race no answer from the endpoint (no_output)
    plan = [("boolq-mini", 0, 0), ("boolq-mini", 1, 1), ("piqa-mini", 2, 0)]
    plan += [("piqa-mini", 4, 1), ("race-mini", 5, 0)]
    records = []
    for dataset, rule, repeat in plan:
        item = items[dataset]
        outcome = agent_outcome(rule, item)
        scores = evaluator.score(outcome, item, ctx, {})
        records.append(Scored(item=item, outcome=outcome, scores=scores, repeat=repeat))
    labels = {
        ("boolq-mini/1", 1): [{"types": ["incorrect_invocation"]}],
        ("piqa-mini/2", 0): [
            {"types": ["null_content"]},
            {"types": ["null_content", "incorrect_invocation"]},
        ],
        ("piqa-mini/2", 1): [{"types": ["endless_retry"]}],
    }
    return AnalysisInput(records, ctx, inputs={"human_labels": {"error_types": labels}})


def analysis(name: str):  # type: ignore[no-untyped-def]
    return next(a for a in ANALYSES["R4"] if a.name == name)


def test_accuracy_call_rate_and_tool_use_per_dataset(r4: AnalysisInput) -> None:
    assert analysis("by_dataset").run(r4) == [
        {"group": "boolq-mini", "n": 2, "accuracy": 50.0, "call_rate": 50.0, "tool_errors": 50.0},
        {"group": "piqa-mini", "n": 2, "accuracy": 0.0, "call_rate": 0.0, "tool_errors": 0.0},
        {"group": "race-mini", "n": 1, "accuracy": 0.0, "call_rate": 0.0, "tool_errors": 0.0},
    ]


def test_error_types_automatic_and_human_side_by_side(r4: AnalysisInput) -> None:
    # four wrong items: two incorrect invocations (unnecessary tool, wrong answer), one null
    # content, one no output; three labelled by humans
    assert analysis("error_types").run(r4) == [
        # humans gave incorrect invocation to 2 of 3 labelled items, both of this type
        {"group": "incorrect_invocation", "n": 2, "automatic": 50.0, "human": 66.67,
         "agreement": 100.0},
        # null content: 1 of 3 (the piqa item's two labels both chose it); its own item was
        # labelled endless retry
        {"group": "null_content", "n": 1, "automatic": 25.0, "human": 33.33, "agreement": 0.0},
        # no human is asked about the endpoint's failure
        {"group": "no_output", "n": 1, "automatic": 25.0, "human": 0.0, "agreement": None},
    ]  # fmt: skip


def test_without_labels_the_human_side_is_empty(r4: AnalysisInput) -> None:
    bare = AnalysisInput(r4.records, r4.ctx)
    rows = analysis("error_types").run(bare)
    assert [(r["group"], r["n"], r["human"], r["agreement"]) for r in rows] == [
        ("incorrect_invocation", 2, None, None),
        ("null_content", 1, None, None),
        ("no_output", 1, None, None),
    ]


def test_human_types_are_those_half_the_labels_chose() -> None:
    assert human_types([]) is None
    assert human_types([{"types": ["wrong_answer"]}]) == {"incorrect_invocation"}
    three = [{"types": ["null_content"]}, {"types": ["no_reasoning"]}, {"types": ["no_reasoning"]}]
    assert human_types(three) == {"no_reasoning"}


def test_a_run_beside_the_same_models_run_without_tools(r4: AnalysisInput) -> None:
    items = {r.item.split: r.item for r in r4.records}
    # the model's R3 run: boolq right, piqa wrong, race right
    r3 = [
        Scored(item=items["boolq-mini"], outcome=None, scores={"accuracy": 1.0}),
        Scored(item=items["piqa-mini"], outcome=None, scores={"accuracy": 0.0}),
        Scored(item=items["race-mini"], outcome=None, scores={"accuracy": 1.0}),
    ]
    data = AnalysisInput(r4.records, r4.ctx, inputs={"model_runs": {"R3": r3}})
    assert analysis("with_and_without_tools").run(data) == [
        {"group": "boolq-mini", "n": 2, "accuracy_without": 100.0, "accuracy_with": 50.0,
         "call_rate_with": 50.0},
        {"group": "piqa-mini", "n": 2, "accuracy_without": 0.0, "accuracy_with": 0.0,
         "call_rate_with": 0.0},
        {"group": "race-mini", "n": 1, "accuracy_without": 100.0, "accuracy_with": 0.0,
         "call_rate_with": 0.0},
    ]  # fmt: skip
    # without the other run, its side is empty
    alone = analysis("with_and_without_tools").run(AnalysisInput(r4.records, r4.ctx))
    assert [row["accuracy_without"] for row in alone] == [None, None, None]


def test_the_four_regions_of_a_model_without_an_r3_run(r4: AnalysisInput) -> None:
    items = {
        (r.split, r.external_id): item_of(r)
        for r in wtueval.import_files([FIXTURE]).samples
        if r.reference["kind"] == "tool"
    }
    gsm1, gsm2, live = (
        items[("gsm8k-mini", "1")],
        items[("gsm8k-mini", "2")],
        items[("realtime-mini", "q-7")],
    )
    # the model's R1 run: gsm8k right and wrong, realtime right
    r1 = [
        Scored(item=gsm1, outcome=None, scores={"accuracy": 1.0}),
        Scored(item=gsm2, outcome=None, scores={"accuracy": 0.0}),
        Scored(item=live, outcome=None, scores={"accuracy": 1.0}),
    ]
    # its R2 run: gsm8k right twice after calls; realtime asked twice, wrong after a call and
    # right without one
    r2 = [
        Scored(item=gsm1, outcome=None, scores={"accuracy": 1.0, "call_rate": 1.0}),
        Scored(item=gsm2, outcome=None, scores={"accuracy": 1.0, "call_rate": 1.0}),
        Scored(item=live, outcome=None, scores={"accuracy": 0.0, "call_rate": 1.0}),
        Scored(item=live, outcome=None, scores={"accuracy": 1.0, "call_rate": 0.0}, repeat=1),
    ]
    data = AnalysisInput(r4.records, r4.ctx, inputs={"model_runs": {"R1": r1, "R2": r2}})
    blank = {"accuracy_r1": None, "accuracy_r2": None, "call_rate_r2": None}
    general = {"accuracy_r3": None, "accuracy_r4": None, "call_rate_r4": None}
    # datasets in natural order; no R3 run: its column is empty, not zero
    assert analysis("all_regions").run(data) == [
        {"group": "boolq-mini", "n": 2, **blank, **general,
         "accuracy_r4": 50.0, "call_rate_r4": 50.0},
        {"group": "gsm8k-mini", "n": 2, **general,
         "accuracy_r1": 50.0, "accuracy_r2": 100.0, "call_rate_r2": 100.0},
        {"group": "piqa-mini", "n": 2, **blank, **general,
         "accuracy_r4": 0.0, "call_rate_r4": 0.0},
        {"group": "race-mini", "n": 1, **blank, **general,
         "accuracy_r4": 0.0, "call_rate_r4": 0.0},
        # n: the most items a region's run has (R2 asked twice)
        {"group": "realtime-mini", "n": 2, **general,
         "accuracy_r1": 100.0, "accuracy_r2": 50.0, "call_rate_r2": 50.0},
    ]  # fmt: skip
    # the same table shows on the R1 run's page: its own records fill its own column
    r1_ctx = context_for(wtueval.SUITE.evaluator, "R1")
    seen_from_r1 = AnalysisInput(r1, r1_ctx, inputs={"model_runs": {"R2": r2, "R4": r4.records}})
    assert analysis("all_regions").run(seen_from_r1) == analysis("all_regions").run(data)
    # alone, only the run's own region is filled
    alone = analysis("all_regions").run(AnalysisInput(r4.records, r4.ctx))
    assert [(row["group"], row["accuracy_r1"], row["accuracy_r4"]) for row in alone] == [
        ("boolq-mini", None, 50.0),
        ("piqa-mini", None, 0.0),
        ("race-mini", None, 0.0),
    ]
