"""Analyses that declare a score_breakdown are counted by PostgreSQL (a run of a million items
is never read into Python): on a hand-made run, the rows are those the suite's own `compute`
gives over the run's records, and the page's stored analyses are those rows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pytest

from benchmarks.kit.analyses import (
    ITEM_PARTS,
    SAMPLE_COLUMNS,
    Analysis,
    AnalysisInput,
    AnalysisMetric,
    SampleValue,
    ScoreBreakdown,
    parts_read,
    score_of,
)
from benchmarks.kit.protocol import Item, Outcome, Scored
from benchmarks.kit.registry import get_suite, suite_names
from evaluation import analyses
from evaluation.models import Prediction, Run
from evaluation.selectors import score_breakdown_counts, score_breakdowns_counts
from tests.benchmarks.conformance import example as conformance_example
from tests.factories import make_benchmark, make_sample, make_tool

pytestmark = pytest.mark.django_db

# (split, status, scores) of each prediction, in position order: every case the two readings
# must agree on.
PREDICTIONS: list[tuple[str, str, Any]] = [
    ("train", "done", {"accuracy": 100.0, "parsed": 1.0}),
    ("train", "done", {"accuracy": 0.0, "parsed": 1.0}),
    ("train", "done", {"accuracy": 100, "parsed": 0}),  # whole numbers
    ("train", "done", {"accuracy": True}),  # a bool is a number to score_of
    ("train", "done", {"accuracy": False}),
    ("train", "done", {"accuracy": None}),  # not covered: no headline value
    ("train", "done", {"parsed": 1.0}),  # not covered either
    ("train", "done", {"accuracy": "high"}),  # covered, but no value: n counts it
    ("train", "failed", {}),
    ("train", "failed", {"accuracy": 0.0}),  # a failed item the suite scored
    ("test 10", "done", {"accuracy": 1.0 / 3.0}),
    ("test 10", "done", {"accuracy": 2.0 / 3.0}),
    ("test 10", "done", {"accuracy": 0.1}),
    ("test 2", "done", {"accuracy": 33.333}),
    ("test 2", "pending", {"accuracy": 100.0}),  # not settled: left out of both
    ("test 2", "running", {}),
    ("dev", "pending", {"accuracy": 0.0}),  # a group with no settled item: no row
]


# The tool-call task's scores under its own names: its headline and a second metric.
RENAMED = {"tool_calls": {"accuracy": "call_exact", "parsed": "call_name_accuracy"}}


def hand_made_run(task: str = "answer") -> Run:
    benchmark = make_benchmark(name="in-db", suite="generic")
    run = Run.objects.create(benchmark=benchmark, task=task, status=Run.Status.RUNNING)
    names = RENAMED.get(task, {})
    for position, (split, status, given) in enumerate(PREDICTIONS):
        scores = {names.get(key, key): value for key, value in given.items()}
        sample = make_sample(
            benchmark=benchmark,
            split=split,
            external_id=f"q{position}",
            input={"query": f"q{position}"},
            reference={"answer": "1", "tool_calls": []},
        )
        Prediction.objects.create(
            run=run,
            sample=sample,
            position=position,
            status=status,
            scores=scores,
            output="Answer: 1" if status == "done" else "",
            answer="1" if status == "done" else None,
            parsed=status == "done",
        )
    # the same item answered again (a second trial): counted twice, as the records are
    second = Prediction.objects.get(run=run, position=0)
    Prediction.objects.create(
        run=run,
        sample=second.sample,
        position=len(PREDICTIONS),
        repeat=1,
        status="done",
        scores={names.get("accuracy", "accuracy"): 0.0, names.get("parsed", "parsed"): 1.0},
    )
    return run


@pytest.mark.parametrize("task", ["answer", "tool_calls"])
def test_the_database_gives_the_rows_compute_gives(task: str) -> None:
    # given a run with every kind of score, settled and not
    run = hand_made_run(task)
    declared = analyses.declared(run)
    assert declared and all(a.score_breakdown is not None for a in declared)
    # when both readings compute its analyses
    in_python = analyses.compute(declared, analyses._records(run))
    in_database = analyses.compute_in_database(run, declared)
    # then they agree to the last figure, and the figures are the hand-counted ones
    assert in_database == in_python
    assert [row["n"] for row in in_database["by_split"]["rows"]] == [1, 3, 8]
    if task == "answer":
        assert in_database["by_split"]["rows"] == [
            # natural order: 2 before 10; the pending item left out
            {"group": "test 2", "n": 1, "accuracy": 33.33},
            {"group": "test 10", "n": 3, "accuracy": 0.37},
            # 100, 0, 100, 1, 0, "high" (no value), failed 0, the second trial's 0: 201 / 7
            {"group": "train", "n": 8, "accuracy": 28.71},
        ]


def test_the_stored_analyses_are_counted_in_the_database() -> None:
    run = hand_made_run()
    stored = analyses.run_analyses_get(run, inline=True)
    expected = analyses.compute(analyses.declared(run), analyses._records(run))
    assert stored.data == {"run": run.pk, "analyses": expected}


def test_every_declared_score_breakdown_by_split_or_kind_is_its_compute() -> None:
    """Each suite's analysis that declares a score_breakdown by the sample's split or kind
    gives, over the hand-made run's records (of any suite's shape: every sample has a split and
    a kind), the rows its compute gives."""
    run = hand_made_run()
    data = analyses._records(run)
    found = 0

    for name in suite_names():
        for task, declared in get_suite(name).analyses.items():
            for analysis in declared:
                spec = analysis.score_breakdown
                if spec is None or spec.by_sample not in SAMPLE_COLUMNS:
                    continue
                found += 1
                counted = [
                    (spec.read(r.item), 1, values)
                    for r in data.records
                    if analysis.covers is None or analysis.covers(r, data.ctx)
                    for values in [
                        tuple(
                            float(v) if isinstance(v, int | float) else None
                            for v in (r.scores.get(score) for score in spec.scores.values())
                        )
                    ]
                ]
                assert analysis.run_counted(counted) == analysis.run(data), (name, task)
    assert found >= 2


# Every suite's task with an analysis that declares a score_breakdown.
DECLARING = sorted(
    (name, task)
    for name in suite_names()
    for task, declared in get_suite(name).analyses.items()
    if any(analysis.score_breakdown is not None for analysis in declared)
)


def stored_example(name: str, task: str, *, label: str = "") -> Run:
    """The suite's example run of the task (its conformance's: items shaped as the suite
    imports them, from the seed data or its demo, answered and scored by the suite), stored as
    a run, with the cases the two readings must agree on beside it: items failed (their scores
    kept), items without their scores, scores that are None, and items not yet settled."""
    suite = get_suite(name)
    example = conformance_example(suite, task)
    benchmark = make_benchmark(name=f"in-db-{name}-{task}{label}", suite=name)
    for tool in example.ctx.tools.values():
        make_tool(
            benchmark=benchmark,
            name=tool.name,
            description=tool.description,
            parameters=tool.parameters,
            returns=tool.returns,
            category=tool.category,
            raw=tool.raw if tool.raw is not None else {},
        )
    run = Run.objects.create(benchmark=benchmark, task=task, status=Run.Status.RUNNING)
    samples: dict[tuple[str, str], Any] = {}
    repeats: dict[tuple[str, str], int] = {}
    for position, record in enumerate(example.records):
        item = record.item
        key = (item.split, item.external_id)
        if key not in samples:
            samples[key] = make_sample(
                benchmark=benchmark,
                split=item.split,
                external_id=item.external_id,
                kind=item.kind,
                input=item.input,
                reference=item.reference,
                candidate_tools=list(item.candidate_tools),
                metadata=item.metadata,
            )
        scores = dict(record.scores)
        status = "done" if record.outcome is not None else "failed"
        if position % 5 == 1:
            scores = {}  # scored by nothing: no value, not covered where a score covers
        elif position % 5 == 2:
            scores = {key: None for key in scores}
        elif position % 7 == 3:
            status = "failed"  # a failed item whose scores were kept
        elif position % 11 == 4:
            status = "pending"  # not settled: left out of both
        Prediction.objects.create(
            run=run,
            sample=samples[key],
            position=position,
            repeat=repeats.get(key, 0),
            status=status,
            scores=scores,
            output=(record.outcome.output or "") if record.outcome else "",
            answer=record.outcome.answer if record.outcome else None,
            parsed=bool(record.outcome and record.outcome.parsed),
            trace=list(record.outcome.trace) if record.outcome else [],
            note=record.outcome.note if record.outcome else "",
            tool_calls=record.outcome.tool_calls if record.outcome else None,
            leaked=bool(record.outcome and record.outcome.leaked),
            context=dict(record.context),
        )
        repeats[key] = repeats.get(key, 0) + 1
    return run


@pytest.mark.parametrize(("name", "task"), DECLARING, ids=[f"{n}-{t}" for n, t in DECLARING])
def test_each_suite_s_declared_breakdowns_are_their_compute_in_the_database(
    name: str, task: str
) -> None:
    # given the suite's example run of the task, stored with every case of scores
    run = stored_example(name, task)
    declared = [a for a in analyses.declared(run) if a.score_breakdown is not None]
    # when PostgreSQL counts its declared breakdowns, and compute reads the records
    in_database = analyses.compute_in_database(run, declared)
    in_python = analyses.compute(declared, analyses._records(run))
    # then the rows are the same, and there are rows to compare
    assert in_database == in_python
    for analysis in declared:
        assert len(in_database[analysis.name]["rows"]) >= 2, (analysis.name, in_database)


# Every suite's task with analyses and an example run.
ANALYSED = sorted(
    (name, task)
    for name in suite_names()
    for task, declared in get_suite(name).analyses.items()
    if declared
)


@pytest.mark.parametrize(("name", "task"), ANALYSED, ids=[f"{n}-{t}" for n, t in ANALYSED])
def test_the_stored_analyses_of_a_task_count_some_in_the_database_and_compute_the_others(
    name: str, task: str
) -> None:
    # given the suite's example run of a task (declared breakdowns, and others that declare the
    # parts of the records they read)
    run = stored_example(name, task)
    every = analyses.declared(run)
    # when the page's analyses are computed
    stored = analyses.run_analyses_get(run, inline=True)
    # then they are every analysis as compute gives them all over the whole records (in the
    # declared order)
    expected = analyses.compute(every, analyses._records(run))
    assert stored.data == {"run": run.pk, "analyses": expected}
    assert list(analyses.compute_run(run, every)) == [analysis.name for analysis in every]


def test_every_declared_breakdown_reads_the_sample_as_the_records_do() -> None:
    """Each declared reading of a sample, in the database, gives what SampleValue.of gives of
    the record's item: on samples with the value, without it, with null, with the path through
    no object, with candidate tools of each JSON type, with ids of each form."""
    benchmark = make_benchmark(name="in-db-values", suite="generic")
    run = Run.objects.create(benchmark=benchmark, task="answer", status=Run.Status.DONE)
    odd: list[dict[str, Any]] = [
        {"metadata": {"turn": 2, "domain": "Alarm"}, "external_id": "M-S_7_2#3"},
        {"metadata": {"turn": None, "domain": ""}, "external_id": "M-S_7_4"},
        {"metadata": {"domain": 3.0}, "external_id": "no-underscore"},
        {"metadata": {"domain": {"a": [1, "b"]}}, "external_id": "ends_"},
        {"metadata": {"domain": True}, "external_id": "a_b#c_d"},
        {"metadata": {"domain": None}, "candidate_tools": {"a": 1, "b": 2}},
        {"metadata": {}, "candidate_tools": "abc"},
        {"metadata": {"domain": "Alarm"}, "candidate_tools": []},
        {"metadata": {"domain": "x"}, "candidate_tools": [{"name": "a"}, {"name": "b"}]},
        {"input": {"query": {"nested": "deep"}}, "reference": None},
        {"input": {"query": "text"}, "reference": ["no", "object"]},
    ]
    for position, fields in enumerate(odd):
        sample = make_sample(benchmark=benchmark, **fields)
        Prediction.objects.create(
            run=run, sample=sample, position=position, status="done", scores={"accuracy": 1}
        )
    reads = [
        SampleValue("split"),
        SampleValue("kind"),
        SampleValue("metadata", ("domain",)),
        SampleValue("metadata", ("turn",)),
        SampleValue("metadata", ("domain", "a")),
        SampleValue("input", ("query", "nested")),
        SampleValue("reference", ("answer",)),
        SampleValue("tool_count"),
        SampleValue("id_suffix"),
    ]
    spec = ScoreBreakdown(by_sample=tuple(reads), scores={"accuracy": "accuracy"}, group=repr)
    records = analyses._records(run).records
    expected = sorted(repr(spec.read(record.item)) for record in records)
    found = sorted(
        repr(read)
        for read, count, _ in score_breakdown_counts(run, spec, ["done"])
        for _ in range(count)
    )
    assert found == expected


def test_several_breakdowns_are_counted_in_one_reading_each_as_its_own() -> None:
    # given breakdowns of one run by other values, with and without a covering score, twice one
    run = hand_made_run()
    records = analyses._records(run).records
    by_split = ScoreBreakdown(
        by_sample="split", scores={"a": "accuracy"}, covered_by="accuracy", percent=False
    )
    by_kind = ScoreBreakdown(by_sample="kind", scores={"p": "parsed", "a": "accuracy"})
    by_parsed = ScoreBreakdown(
        by_sample=(SampleValue("split"), SampleValue("id_suffix")),
        scores={"a": "accuracy"},
        covered_by="parsed",
        group=lambda split, suffix: f"{split}/{suffix[:2]}",
    )
    specs = [by_split, by_kind, by_parsed, by_split]
    # when they are counted together
    together = score_breakdowns_counts(run, specs, ["done", "failed"])
    # then each gives the rows the records give it
    for spec, counted in zip(specs, together, strict=True):
        expected = [
            (spec.read(r.item), 1, tuple(score_of(name)(r) for name in spec.scores.values()))
            for r in records
            if spec.covered_by is None or r.scores.get(spec.covered_by) is not None
        ]
        assert spec.rows(counted) == spec.rows(expected), spec
    assert together[0] == together[3]


def test_a_score_breakdown_names_a_score_for_each_metric() -> None:
    with pytest.raises(ValueError, match="a score for each metric"):
        Analysis(
            name="x",
            title="x",
            by="split",
            metrics=(AnalysisMetric("accuracy"),),
            compute=lambda data: [],
            score_breakdown=ScoreBreakdown(by_sample="split", scores={"other": "accuracy"}),
        )
    with pytest.raises(ValueError, match="choose one of split, kind"):
        ScoreBreakdown(by_sample="metadata", scores={})
    with pytest.raises(ValueError, match="choose one of split"):
        SampleValue("external_id")
    with pytest.raises(ValueError, match="a path of keys"):
        SampleValue("metadata")
    with pytest.raises(ValueError, match="a path of keys"):
        SampleValue("split", ("x",))
    with pytest.raises(ValueError, match="needs a group"):
        ScoreBreakdown(by_sample=(SampleValue("split"), SampleValue("kind")), scores={})


def _only(record: Scored, parts: tuple[str, ...] | None) -> Scored:
    """The record as the platform reads it when only `parts` are read (services.scored_rows)."""
    if parts is None:
        return record
    item = record.item
    whole_item = set(ITEM_PARTS) <= set(parts)
    if not whole_item:
        item = replace(
            Item(split=item.split, external_id=item.external_id, input={}, kind=item.kind),
            **{part: getattr(item, part) for part in ITEM_PARTS if part in parts},
        )
    outcome = record.outcome
    if outcome is not None and "outcome" not in parts:
        answer = outcome.answer if "answer" in parts else None
        outcome = Outcome(output="", answer=answer, trace=outcome.trace)
    if outcome is not None and "trace" not in parts:
        outcome = replace(outcome, trace=[])
    return replace(
        record,
        item=item,
        outcome=outcome,
        context=record.context if "context" in parts else {},
        group=record.group if whole_item else item.key,
    )


def _only_inputs(inputs: Mapping[str, Any], parts: tuple[str, ...] | None) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, value in inputs.items():
        if name == "baseline":
            value = [_only(record, parts) for record in value]
        elif name == "model_runs":
            value = {task: [_only(r, parts) for r in records] for task, records in value.items()}
        found[name] = value
    return found


@pytest.mark.parametrize(("name", "task"), ANALYSED, ids=[f"{n}-{t}" for n, t in ANALYSED])
def test_an_analysis_reads_no_part_of_the_records_it_does_not_declare(name: str, task: str) -> None:
    """Each analysis that declares the parts of the records it reads (Analysis.reads) gives,
    over the suite's example run and its inputs (judgments, labels, other runs) with only
    those parts, the rows it gives over the whole records."""
    example = conformance_example(get_suite(name), task)
    for analysis in get_suite(name).analyses_for(task):
        if analysis.reads is None:
            continue
        whole = AnalysisInput(example.records, example.ctx, inputs=example.inputs)
        read = AnalysisInput(
            [_only(record, analysis.reads) for record in example.records],
            example.ctx,
            inputs=_only_inputs(example.inputs, analysis.reads),
        )
        assert analysis.run(read) == analysis.run(whole), (name, task, analysis.name)


def test_the_parts_read_are_those_every_analysis_declares() -> None:
    def declaring(*reads: tuple[str, ...] | None) -> list[Analysis]:
        return [
            Analysis(
                name=f"a{n}",
                title="a",
                by="x",
                metrics=(AnalysisMetric("m"),),
                compute=lambda data: [],
                reads=r,
            )
            for n, r in enumerate(reads)
        ]

    assert parts_read(declaring(("context",), ("input", "trace"))) == ("input", "trace", "context")
    assert parts_read(declaring((), ())) == ()
    assert parts_read(declaring(("outcome",), None)) is None
    with pytest.raises(ValueError, match="choose among"):
        declaring(("item",))
