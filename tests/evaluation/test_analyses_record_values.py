"""Values of a record (benchmarks.kit.analyses.RecordValue) are computed once and kept with the
answer (Prediction.derived), so that an analysis by them is counted in the database: kept when a
run finishes, computed for the answers that lack them, emptied when the answer or its sample
changes, computed again when the benchmark's tools change, and never kept from an answer that
changed while they were computed."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from benchmarks.kit.analyses import (
    Analysis,
    AnalysisMetric,
    RecordValue,
    ScoreBreakdown,
    shares,
)
from benchmarks.kit.protocol import Context, Item, Outcome, Scored
from evaluation import analyses
from evaluation.models import Prediction, Run
from evaluation.services import (
    MARK,
    ROW_VERSION,
    _store_record_values,
    fill_record_values,
    record_values_declared,
    run_finalize,
)
from tests.evaluation.test_analyses_in_database import stored_example

pytestmark = pytest.mark.django_db

VERSION_SQL = "SELECT " + ROW_VERSION + " FROM evaluation_prediction WHERE id = %s"  # noqa: S608


def _expected(run: Run) -> dict[str, Any]:
    return analyses.compute(analyses.declared(run), analyses._records(run))


def _computed(run: Run) -> dict[str, Any]:
    return analyses.compute_run(run, analyses.declared(run))


def test_a_breakdown_s_share_is_shares_figure() -> None:
    # given five records of three error kinds, two of them right (no kind: not covered)
    kinds = ["b", "a", None, "b", "c", None, "b"]
    records = [
        Scored(item=Item(split="t", external_id=str(n), input={}), outcome=None, scores={})
        for n in range(len(kinds))
    ]
    value = RecordValue("kind", lambda record, ctx: kinds[int(record.item.external_id)])
    spec = ScoreBreakdown(by_sample=value, scores={}, share="share")
    # when the rows are made of the records counted by their value
    ctx = Context(task=None)  # type: ignore[arg-type]
    rows = spec.rows(
        [(spec.read_record(record, ctx), 1, ()) for record in records], order=("c", "b")
    )
    # then each kind's share of the five covered records, as shares() gives them
    assert rows == [
        {"group": "c", "n": 1, "share": 20.0},
        {"group": "b", "n": 3, "share": 60.0},
        {"group": "a", "n": 1, "share": 20.0},
    ]
    covered = [r for r in records if kinds[int(r.item.external_id)] is not None]
    assert rows == shares(covered, lambda r: kinds[int(r.item.external_id)], order=("c", "b"))


def test_a_share_is_declared_as_a_metric() -> None:
    with pytest.raises(ValueError, match="a score for each metric"):
        Analysis(
            name="x",
            title="x",
            by="kind",
            metrics=(AnalysisMetric("share"),),
            compute=lambda data: [],
            score_breakdown=ScoreBreakdown(
                by_sample=RecordValue("kind", lambda r, c: None), scores={}, share="other"
            ),
        )
    with pytest.raises(ValueError, match="lower-case"):
        RecordValue("Kind", lambda r, c: None)
    with pytest.raises(ValueError, match="reads the record"):
        ScoreBreakdown(by_sample=RecordValue("kind", lambda r, c: None), scores={}).read(
            Item(split="t", external_id="1", input={})
        )


def test_the_values_are_computed_once_for_the_answers_that_lack_them() -> None:
    # given MTU-Bench's example run of M-S, stored without values
    run = stored_example("mtubench", "M-S")
    settled = Prediction.objects.filter(run=run, status__in=analyses.SETTLED)
    assert not settled.exclude(derived={}).exists()
    # when its analyses are computed
    assert _computed(run) == _expected(run)
    # then every settled answer has its error type, marked with the context it was made in
    assert all(
        "error_type" in derived and MARK in derived
        for derived in settled.values_list("derived", flat=True)
    )
    assert Prediction.objects.filter(run=run, status="pending", derived={}).exists()
    # and a second computation has none to compute
    named = list(record_values_declared(run).values())
    assert fill_record_values(run, named, analyses.SETTLED) == 0


def test_a_rescored_answer_s_error_type_follows() -> None:
    # given a run whose values are kept, and a wrong turn among its answers
    run = stored_example("mtubench", "M-S")
    before = _computed(run)
    wrong = next(
        p
        for p in Prediction.objects.filter(run=run, status="done")
        if p.derived.get("error_type") is not None
    )
    # when it is scored again, right this time (any write: here the ORM's save)
    wrong.scores = {**wrong.scores, "TS": 1.0, "PS": 1.0}
    wrong.save()
    # then its values were emptied, and the error types count one wrong turn fewer
    wrong.refresh_from_db()
    assert wrong.derived == {}
    after = _computed(run)
    assert after == _expected(run)
    total = sum(row["n"] for row in after["error_types"]["rows"])
    assert total == sum(row["n"] for row in before["error_types"]["rows"]) - 1


def test_an_answer_written_by_sql_keeps_no_stale_value() -> None:
    # given a run whose values are kept
    run = stored_example("mtubench", "M-S")
    _computed(run)
    # when the engine's SQL rewrites an answer (another output, no call at all)
    target = Prediction.objects.filter(run=run, status="done").exclude(derived={}).first()
    assert target is not None
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE evaluation_prediction SET output = 'no call', scores = '{}' WHERE id = %s",
            [target.pk],
        )
    # then its values are gone, and the analyses are those of the records again
    target.refresh_from_db()
    assert target.derived == {}
    assert _computed(run) == _expected(run)


def test_an_edited_sample_s_values_follow() -> None:
    # given UltraTool's example run of tool usage, its values kept
    run = stored_example("ultratool", "tool_usage")
    _computed(run)
    prediction = (
        Prediction.objects.filter(run=run, status="done")
        .exclude(derived={})
        .select_related("sample")
        .first()
    )
    assert prediction is not None
    sample = prediction.sample
    # when its sample's gold plan is edited to one three levels deep with one tool step
    sample.reference = {
        **(sample.reference or {}),
        "steps": [{"step": "1"}, {"step": "1.1"}, {"step": "1.1.1", "tool": "calc"}],
    }
    sample.save()
    # then the answers of that sample lost their values, and the depth is the new plan's
    prediction.refresh_from_db()
    assert prediction.derived == {}
    after = _computed(run)
    assert after == _expected(run)
    prediction.refresh_from_db()
    assert prediction.derived["plan_depth"] == 3
    assert prediction.derived["tool_steps"] == 1


def test_new_tools_compute_the_values_again() -> None:
    # given MetaTool's example run of the similar task, its values kept
    run = stored_example("metatool", "similar")
    _computed(run)
    named = list(record_values_declared(run).values())
    assert {value.name for value in named} == {"candidates", "description_words", "gold_tools"}
    # when the benchmark's tools change (an import: the benchmark's updated_at moves)
    run.benchmark.save()
    # then every settled answer is computed again, in the new context
    settled = Prediction.objects.filter(run=run, status__in=analyses.SETTLED).count()
    assert fill_record_values(run, named, analyses.SETTLED) == settled


def test_values_of_an_answer_that_changed_meanwhile_are_not_kept() -> None:
    # given an answer read with its row's version
    run = stored_example("mtubench", "M-S")
    target = Prediction.objects.filter(run=run, status="done").first()
    assert target is not None
    with connection.cursor() as cursor:
        cursor.execute(VERSION_SQL, [target.pk])
        version = cursor.fetchone()[0]
    # when the answer changes before the values computed of it are stored
    Prediction.objects.filter(pk=target.pk).update(output="changed")
    _store_record_values([(target.pk, version, {"error_type": "stale", MARK: "x"})])
    # then they are not kept; of the answer as it is, they are
    target.refresh_from_db()
    assert target.derived == {}
    with connection.cursor() as cursor:
        cursor.execute(VERSION_SQL, [target.pk])
        version = cursor.fetchone()[0]
    _store_record_values([(target.pk, version, {"error_type": "fresh", MARK: "x"})])
    target.refresh_from_db()
    assert target.derived == {"error_type": "fresh", MARK: "x"}


def test_a_finished_run_keeps_its_values() -> None:
    # given a run whose every item is settled
    run = stored_example("mtubench", "M-S")
    Prediction.objects.filter(run=run, status="pending").update(status="failed")
    # when it finishes (its metrics computed over its records)
    assert run_finalize(run_id=run.pk)
    # then its answers keep their values already: the analyses compute none
    assert not Prediction.objects.filter(run=run, derived={}).exists()
    named = list(record_values_declared(run).values())
    assert fill_record_values(run, named, analyses.SETTLED) == 0
    run.refresh_from_db()
    assert _computed(run) == _expected(run)


def test_a_finished_run_with_a_failing_value_still_finishes() -> None:
    # given a run whose suite's value raises (its analyses report the error themselves)
    run = stored_example("mtubench", "M-S")
    Prediction.objects.filter(run=run, status="pending").update(status="failed")
    broken = RecordValue("error_type", _raises)
    spec = next(a for a in analyses.declared(run) if a.name == "error_types").score_breakdown
    assert spec is not None
    object.__setattr__(spec, "by_sample", broken)
    try:
        # when it finishes, it does, with no values kept
        assert run_finalize(run_id=run.pk)
        assert not Prediction.objects.filter(run=run).exclude(derived={}).exists()
    finally:
        from benchmarks.suites.mtubench.analyses import ERROR_TYPE

        object.__setattr__(spec, "by_sample", ERROR_TYPE)


def _raises(record: Scored, ctx: Context) -> Any:
    raise RuntimeError("a suite's bug")


def test_outcome_is_read_as_the_records_give_it() -> None:
    # the fill reads the answers as the analyses do (one reading: services.scored_rows)
    run = stored_example("bfcl", "simple_python")
    _computed(run)
    records = analyses._records(run)
    value = record_values_declared(run)["error_type"]
    stored = {
        (s, r): d["error_type"]
        for s, r, d in Prediction.objects.filter(run=run, status__in=analyses.SETTLED).values_list(
            "sample__external_id", "repeat", "derived"
        )
    }
    assert stored == {
        (record.item.external_id, record.repeat): value.of(record, records.ctx)
        for record in records.records
    }
    assert isinstance(records.records[0].outcome, Outcome | None)


def test_a_rerun_s_csr_per_gold_tool_is_counted_beside_the_run_it_repeats() -> None:
    # given MetaTool's example run, and a rerun of it whose first half of the answers differ
    base = stored_example("metatool", "similar")
    rerun = stored_example("metatool", "similar", label="rerun")
    rerun.rerun_of = base
    rerun.save()
    for prediction in Prediction.objects.filter(run=rerun).order_by("position")[:30]:
        correct = prediction.scores.get("correct")
        if isinstance(correct, int | float):
            prediction.scores = {**prediction.scores, "correct": 1.0 - correct}
            prediction.save()
    # when the rerun's analyses are computed
    computed = _computed(rerun)
    # then they are those compute gives over both runs' records, with a change per gold tool
    assert computed == _expected(rerun)
    rows = computed["rewriting_by_tool"]["rows"]
    assert any(row["CSR_before"] is not None for row in rows)
    assert any(row["change_percent"] not in (None, 0.0) for row in rows)
    # and a run that repeats none has no before
    alone = _computed(base)["rewriting_by_tool"]["rows"]
    assert alone and all(row["CSR_before"] is None for row in alone)
