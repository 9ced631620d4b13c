"""Agreement reports through the whole path: labels, judgments and metric scores in the
database -> the report -> its CSVs, on campaigns built with a known structure, checked against
scipy, statsmodels and the krippendorff package computed independently on the same numbers."""

from __future__ import annotations

import csv
import io
import math
import uuid
from collections.abc import Callable
from typing import Any

import krippendorff
import numpy as np
import pytest
from scipy import stats as sp
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from annotation import services
from annotation.agreement.exports import LABEL_COLUMNS, label_csv_lines, summary_csv_lines
from annotation.agreement.services import report_params, report_request
from annotation.assign import item_next
from annotation.models import AgreementReport, Campaign, Member
from benchmarks.suites.wtueval.questions import ERROR_TYPE_CHOICES
from evaluation.models import Endpoint, Judge, JudgeJob, Judgment, Prediction, Run
from tests.factories import make_benchmark, make_sample, make_user, store_label

pytestmark = pytest.mark.django_db

ITEMS, ANNOTATORS = 50, 5
# The majority answer per item: A better on 30, B better on 10, a tie on 10.
MAJORITY = [1] * 30 + [-1] * 10 + [0] * 10
# A dissenter moves one step round the scale (1 -> 0 -> -1 -> 1).
DISSENT = {1: 0, 0: -1, -1: 1}
# The metric's A - B agrees with the majority on the first 40 items and says "A" on the ties.
METRIC_AGREES = 40


def answer(item: int, annotator: int) -> int:
    """Annotator j dissents on the items where (item + j) % 5 == 0: one dissenter per item."""
    majority = MAJORITY[item]
    return DISSENT[majority] if (item + annotator) % ANNOTATORS == 0 else majority


def designed_matrix() -> np.ndarray:
    return np.array([[answer(i, j) for j in range(ANNOTATORS)] for i in range(ITEMS)], dtype=float)


def metric_signs() -> np.ndarray:
    return np.array([MAJORITY[i] if i < METRIC_AGREES else 1 for i in range(ITEMS)], dtype=float)


def pairwise_campaign() -> tuple[Campaign, Run, Run, list[Any]]:
    benchmark = make_benchmark(name="synthetic", suite="generic")
    endpoint = Endpoint.objects.create(name="e", base_url="http://127.0.0.1:9/v1", model="m")
    run_a, run_b = (
        Run.objects.create(
            benchmark=benchmark,
            task="answer",
            endpoint=endpoint,
            status=Run.Status.DONE,
            name=name,
        )
        for name in ("model A", "model B")
    )
    signs = metric_signs()
    for i in range(ITEMS):
        sample = make_sample(benchmark=benchmark, external_id=f"q{i:02d}")
        # accuracy(A) - accuracy(B) has the designed sign.
        a, b = {1.0: (1.0, 0.0), -1.0: (0.0, 1.0), 0.0: (0.5, 0.5)}[signs[i]]
        for run, score in ((run_a, a), (run_b, b)):
            Prediction.objects.create(
                run=run,
                sample=sample,
                position=i,
                status=Prediction.Status.DONE,
                output=f"{run.name} on {i}",
                scores={"accuracy": score},
            )
    campaign = services.campaign_create(
        name="synthetic pairwise", kind="pairwise", labels_per_item=ANNOTATORS
    )
    services.items_from_runs(campaign=campaign, run_a=run_a, run_b=run_b)
    annotators = [make_user(username=f"ann{j}") for j in range(ANNOTATORS)]
    services.members_add(campaign=campaign, users=annotators, role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=campaign)
    positions = dict(campaign.items.values_list("id", "position"))
    for j, user in enumerate(annotators):
        while (assignment := item_next(campaign=campaign, user=user)) is not None:
            i = positions[assignment.item_id]
            store_label(
                campaign=assignment.campaign,
                assignment_id=assignment.pk,
                user=user,
                answers={"better": answer(i, j)},
                token=uuid.uuid4(),
                time_ms=1000 * (j + 1),
            )
    return campaign, run_a, run_b, annotators


def rows_of(lines: Any) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO("".join(lines))))


def test_a_synthetic_pairwise_campaign_gives_the_designed_figures() -> None:
    campaign, run_a, run_b, _ = pairwise_campaign()
    # the first ten items carry a known answer (quality checks): the majority's
    for item in campaign.items.filter(position__lt=10):
        item.gold = {"better": MAJORITY[item.position]}
        item.save(update_fields=["gold"])
    params = report_params(metrics=["accuracy"], resamples=300, seed=7)
    report = report_request(campaign, params, inline=True)
    assert report.status == AgreementReport.Status.DONE, report.error
    data = report.data
    (q,) = data["questions"]
    humans = designed_matrix()
    signs = metric_signs()
    mean_human = humans.mean(axis=1)

    # the metric agrees with the human majority on exactly 40 of the 50 items
    (metric,) = q["automatic"]
    assert metric["rater"] == "metric:accuracy"
    assert metric["accuracy"]["value"] == pytest.approx(METRIC_AGREES / ITEMS, abs=1e-12)
    assert metric["accuracy"]["n"] == ITEMS
    low, high = metric["accuracy"]["low"], metric["accuracy"]["high"]
    assert low < 0.8 < high
    # metric-human correlations against the mean human answer (MTU-Bench Table 6)
    assert metric["pearson"]["value"] == pytest.approx(sp.pearsonr(signs, mean_human)[0], abs=1e-9)
    assert metric["spearman"]["value"] == pytest.approx(
        sp.spearmanr(signs, mean_human)[0], abs=1e-9
    )
    assert metric["kendall"]["value"] == pytest.approx(
        sp.kendalltau(signs, mean_human)[0], abs=1e-9
    )
    # human-human: the mean over the ten annotator pairs, Fleiss' kappa, Krippendorff's alpha
    pairs = [(a, b) for a in range(ANNOTATORS) for b in range(a + 1, ANNOTATORS)]
    expected_pearson = np.mean([sp.pearsonr(humans[:, a], humans[:, b])[0] for a, b in pairs])
    assert q["humans"]["mean_pearson"]["value"] == pytest.approx(expected_pearson, abs=1e-9)
    expected_agreement = np.mean([(humans[:, a] == humans[:, b]).mean() for a, b in pairs])
    assert q["humans"]["mean_agreement"]["value"] == pytest.approx(expected_agreement, abs=1e-9)
    table, _ = aggregate_raters(humans.astype(int))
    assert q["humans"]["fleiss_kappa"]["value"] == pytest.approx(fleiss_kappa(table), abs=1e-9)
    alpha = krippendorff.alpha(reliability_data=humans.T, level_of_measurement="ordinal")
    assert q["humans"]["krippendorff_alpha"]["value"] == pytest.approx(alpha, abs=1e-9)
    # each annotator agrees with the other four's majority except where they dissent (10 items)
    quality = {a["annotator"]: a for a in data["annotator_quality"]}
    for j in range(ANNOTATORS):
        entry = quality[f"ann{j}"]
        assert entry["items"] == ITEMS
        assert entry["agreement_with_others"]["value"] == pytest.approx(40 / 50, abs=1e-12)
        assert entry["median_seconds"] == pytest.approx(j + 1)
        # of the ten gold items, each annotator dissents on two
        assert entry["gold_accuracy"]["value"] == pytest.approx(8 / 10, abs=1e-12)
        assert entry["gold_accuracy"]["n"] == 10

    # the leaderboard: every vote is a win, a loss or half of each (tie)
    (board,) = data["pairwise"]
    human_board = {row["name"]: row for row in board["leaderboards"]["humans"]["runs"]}
    wins_a = float((humans == 1).sum() + 0.5 * (humans == 0).sum())
    wins_b = float((humans == -1).sum() + 0.5 * (humans == 0).sum())
    assert human_board["model A"]["wins"] == pytest.approx(wins_a)
    assert human_board["model B"]["wins"] == pytest.approx(wins_b)
    gap = human_board["model A"]["strength"]["value"] - human_board["model B"]["strength"]["value"]
    # two runs: the log-odds of A over B, with the 0.01 pseudo-win each way
    assert gap == pytest.approx(math.log((wins_a + 0.01) / (wins_b + 0.01)), abs=1e-6)
    # position bias: first shown / tie / second shown shares of the 250 votes sum to one
    bias = board["position_bias"]["humans"]
    assert bias["votes"] == ITEMS * ANNOTATORS
    assert sum(s["value"] for s in bias["shares"].values()) == pytest.approx(1.0)

    # the summary CSV has the same figures, one row per statistic
    summary = rows_of(summary_csv_lines(data))
    accuracy = next(
        r
        for r in summary
        if (r["question"], r["rater_a"], r["rater_b"], r["statistic"])
        == ("better", "metric:accuracy", "human majority", "accuracy")
    )
    assert float(accuracy["value"]) == pytest.approx(0.8) and accuracy["n"] == "50"
    assert float(accuracy["ci_low"]) == pytest.approx(low)
    # and the labels CSV every rating: 250 human answers and 50 metric values
    labels = rows_of(label_csv_lines(campaign, params))
    assert list(labels[0]) == list(LABEL_COLUMNS)
    assert sum(r["rater_kind"] == "human" for r in labels) == ITEMS * ANNOTATORS
    metric_rows = [r for r in labels if r["rater_kind"] == "metric"]
    assert len(metric_rows) == ITEMS
    by_item = {r["sample_external_id"]: float(r["code"]) for r in metric_rows}
    assert by_item["q05"] == 1.0 and by_item["q35"] == -1.0 and by_item["q45"] == 1.0
    assert {r["run_a"] for r in labels} == {str(run_a.pk)}
    assert {r["run_b"] for r in labels} == {str(run_b.pk)}


def test_the_report_is_kept_until_the_labels_change() -> None:
    campaign, _, _, annotators = pairwise_campaign()
    params = report_params(resamples=50)
    first = report_request(campaign, params, inline=True)
    again = report_request(campaign, params, inline=True)
    assert again.pk == first.pk and again.data["generated_at"] == first.data["generated_at"]
    # an undo changes the labels: the next request computes it again
    from annotation.assign import label_undo

    label_undo(campaign=campaign, user=annotators[0])
    fresh = report_request(campaign, params, inline=True)
    assert fresh.data["generated_at"] != first.data["generated_at"]
    assert fresh.data["questions"][0]["n_items"] == ITEMS
    assert sum(a["items"] for a in fresh.data["annotator_quality"]) == ITEMS * ANNOTATORS - 1


def judged(
    name: str, run: Run, against: Run, *, repeats: int, verdict: Callable[[int, int, str], int]
) -> JudgeJob:
    """A pairwise judge's finished job of `run` against `against`: for the i-th item of `run`,
    each repeat and both orders, the verdict `verdict(i, repeat, order)`."""
    judge = Judge.objects.create(name=name, template="generic.pairwise", kind="pairwise")
    job = JudgeJob.objects.create(judge=judge, run=run, against=against, repeats=repeats)
    others = {p.sample_id: p for p in against.predictions.all()}
    judgments = [
        Judgment(
            job=job,
            sample_id=prediction.sample_id,
            prediction=prediction,
            other=others[prediction.sample_id],
            repeat=repeat,
            order=order,
            status=Judgment.Status.DONE,
            value=verdict(i, repeat, order),
        )
        for i, prediction in enumerate(run.predictions.order_by("position"))
        for repeat in range(repeats)
        for order in ("AB", "BA")
    ]
    for position, judgment in enumerate(judgments):
        judgment.position = position
    Judgment.objects.bulk_create(judgments)
    return job


def test_a_pairwise_judge_asked_in_both_orders_is_scored_against_the_majority() -> None:
    campaign, run_a, run_b, _ = pairwise_campaign()
    # The job compares B against A: its verdicts are B's, so the report turns their sign.
    # It agrees with the majority on items 0-44 in both orders; on 45-49 the two orders
    # disagree, which StableToolBench counts as a tie.
    judged(
        "judge-x",
        run_b,
        run_a,
        repeats=1,
        verdict=lambda i, _repeat, order: -MAJORITY[i] if i < 45 else (1 if order == "AB" else -1),
    )
    report = report_request(campaign, report_params(judges=["judge-x"], resamples=100), inline=True)
    assert report.status == AgreementReport.Status.DONE, report.error
    (q,) = report.data["questions"]
    (entry,) = q["automatic"]
    # items 45-49 are ties in the majority too (MAJORITY[40:] == 0)
    assert entry["accuracy"]["value"] == pytest.approx(1.0)
    assert entry["accuracy"]["n"] == ITEMS
    # its position bias: "AB" shows the job's run (B) first; both orders per item
    bias = report.data["pairwise"][0]["position_bias"]["judge:judge-x"]
    assert bias["votes"] == 2 * ITEMS


def test_a_judges_verdict_over_repeats_is_the_one_most_repeats_gave() -> None:
    campaign, run_a, run_b, _ = pairwise_campaign()
    # two of three repeats agree with the majority; the third says the opposite (a tie for
    # the tie items)
    judged(
        "judge-r",
        run_a,
        run_b,
        repeats=3,
        verdict=lambda i, repeat, _order: MAJORITY[i] if repeat < 2 else -MAJORITY[i] or 1,
    )
    report = report_request(campaign, report_params(judges=["judge-r"], resamples=50), inline=True)
    (entry,) = report.data["questions"][0]["automatic"]
    # the verdict is A / tie / B as most repeats said, not the mean of the three (2/3 or -1/3)
    assert entry["accuracy"]["value"] == pytest.approx(1.0)
    (q,) = report.data["questions"]
    assert sum(map(sum, q["confusion"]["automatic"]["judge:judge-r"])) == ITEMS


def test_gold_questions_and_scores_are_part_of_what_makes_a_report_stale() -> None:
    campaign, *_ = pairwise_campaign()
    params = report_params(metrics=["accuracy"], resamples=20)
    first = report_request(campaign, params, inline=True)

    def recomputed() -> bool:
        return (
            report_request(campaign, params, inline=True).data["generated_at"]
            != (first.data["generated_at"])
        )

    item = campaign.items.first()
    item.gold = {"better": 1}
    item.save(update_fields=["gold"])
    assert recomputed()
    first = report_request(campaign, params, inline=True)
    question = campaign.questions.get()
    question.text = "Which output is better?"  # the wording alone changes no figure
    question.save()
    assert not recomputed()
    question.choices = [*question.choices, {"value": 2, "label": "A much better"}]
    question.save()
    assert recomputed()
    first = report_request(campaign, params, inline=True)
    Prediction.objects.filter(pk=item.prediction_id).update(scores={"accuracy": 0.0})
    assert recomputed()


def test_turing_votes_are_shared_per_dimension() -> None:
    campaign = services.campaign_create(name="turing synthetic", kind="turing", labels_per_item=2)
    pairs = [
        {"documentation": "d", "arguments": {"x": i}, "real": {"r": i}, "simulated": {"s": i}}
        for i in range(10)
    ]
    import json
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "pairs.json"
        path.write_text(json.dumps(pairs))
        services.items_from_pairs_file(campaign=campaign, path=path)
    users = [make_user(), make_user()]
    services.members_add(campaign=campaign, users=users, role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=campaign)
    # overall: real better 12 times, a tie 4, simulated better 4 (of 20 votes)
    overall = [1] * 12 + [0] * 4 + [-1] * 4
    for j, user in enumerate(users):
        k = 0
        while (assignment := item_next(campaign=campaign, user=user)) is not None:
            vote = overall[j * 10 + k]
            store_label(
                campaign=assignment.campaign,
                assignment_id=assignment.pk,
                user=user,
                answers={"overall": vote, "format": 0, "relevance": -1},
                token=uuid.uuid4(),
            )
            k += 1
    report = report_request(campaign, report_params(resamples=100), inline=True)
    dimensions = {d["key"]: d for d in report.data["turing"]}
    shares = dimensions["overall"]["shares"]
    assert shares["real better"]["value"] == pytest.approx(0.6)
    assert shares["tie"]["value"] == pytest.approx(0.2)
    assert shares["simulated better"]["value"] == pytest.approx(0.2)
    assert shares["real better"]["low"] < 0.6 < shares["real better"]["high"]
    assert dimensions["format"]["shares"]["tie"]["value"] == pytest.approx(1.0)
    assert dimensions["relevance"]["shares"]["simulated better"]["value"] == pytest.approx(1.0)


def assert_no_formula(text: str) -> None:
    for row in csv.reader(io.StringIO(text)):
        for cell in row:
            assert not cell.startswith(("=", "+", "@", "\t", "\r")), cell
            if cell.startswith("-"):
                float(cell)  # "-" starts numbers (kept as numbers), never text


def test_cells_that_a_spreadsheet_would_run_are_neutralised_in_both_csvs() -> None:
    campaign, run_a, run_b, _ = pairwise_campaign()
    # a judge whose name a spreadsheet would read as a formula (metric names come from the
    # suites' declarations; a stored score of any other name never rates)
    name = '=HYPERLINK("http://x")'
    judged(name, run_a, run_b, repeats=1, verdict=lambda i, _repeat, _order: MAJORITY[i])
    params = report_params(judges=[name], resamples=20)
    report = report_request(campaign, params, inline=True)
    summary = "".join(summary_csv_lines(report.data))
    labels = "".join(label_csv_lines(campaign, params))
    assert_no_formula(summary)
    assert_no_formula(labels)
    assert "'=HYPERLINK" in labels  # the rater column of the judge's rows
    # answers and question keys from a researcher's choices
    question = campaign.questions.get()
    question.scale = "categories"
    question.choices = [{"value": "=1+1", "label": "+cmd"}, {"value": "@SUM(A1)", "label": "x"}]
    question.save()
    from annotation.models import Label

    Label.objects.filter(campaign=campaign, item__position__lt=10).update(
        answers={"better": "=1+1"}
    )
    Label.objects.filter(campaign=campaign, item__position__gte=10).update(
        answers={"better": "@SUM(A1)"}
    )
    params = report_params(resamples=20)
    report = report_request(campaign, params, inline=True)
    summary = "".join(summary_csv_lines(report.data))
    labels = "".join(label_csv_lines(campaign, params))
    assert_no_formula(summary)
    assert_no_formula(labels)
    assert "'=1+1" in labels and "'@SUM(A1)" in labels
    # the categories were read: every annotator agrees on every item
    (q,) = report.data["questions"]
    assert q["humans"]["mean_agreement"]["value"] == pytest.approx(1.0)


def test_several_choices_per_answer_become_one_yes_no_question_per_choice() -> None:
    benchmark = make_benchmark(name="failures", suite="generic")
    endpoint = Endpoint.objects.create(name="e", base_url="http://127.0.0.1:9/v1", model="m")
    run = Run.objects.create(
        benchmark=benchmark, task="answer", endpoint=endpoint, status=Run.Status.DONE
    )
    for i in range(12):
        Prediction.objects.create(
            run=run,
            sample=make_sample(benchmark=benchmark),
            position=i,
            status=Prediction.Status.FAILED,
            error="no answer",
        )
    campaign = services.campaign_create(name="errors", kind="error_types", labels_per_item=2)
    services.items_from_failures(campaign=campaign, run=run)
    first, second = make_user(), make_user()
    services.members_add(campaign=campaign, users=[first, second], role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=campaign)
    # "endless_retry": the first says yes on items 0-5, the second on items 0-3 and 6-7
    chosen = {0: set(range(6)), 1: {0, 1, 2, 3, 6, 7}}
    positions = dict(campaign.items.values_list("id", "position"))
    for j, user in enumerate((first, second)):
        while (assignment := item_next(campaign=campaign, user=user)) is not None:
            i = positions[assignment.item_id]
            types = ["incorrect_invocation"] + (["endless_retry"] if i in chosen[j] else [])
            store_label(
                campaign=assignment.campaign,
                assignment_id=assignment.pk,
                user=user,
                answers={"types": types},
                token=uuid.uuid4(),
            )
    report = report_request(campaign, report_params(resamples=50), inline=True)
    questions = {q["key"]: q for q in report.data["questions"]}
    assert set(questions) == {f"types:{c['value']}" for c in ERROR_TYPE_CHOICES}
    from sklearn.metrics import cohen_kappa_score

    x = [1 if i in chosen[0] else 0 for i in range(12)]
    y = [1 if i in chosen[1] else 0 for i in range(12)]
    (pair,) = questions["types:endless_retry"]["pairs"]
    assert pair["stats"]["cohen_kappa"]["value"] == pytest.approx(cohen_kappa_score(x, y))
    assert pair["stats"]["agreement"]["value"] == pytest.approx(8 / 12)
    # a choice everyone made on every item: perfect agreement, kappa undefined
    (always,) = questions["types:incorrect_invocation"]["pairs"]
    assert always["stats"]["agreement"]["value"] == 1.0
    assert always["stats"]["cohen_kappa"]["value"] is None


def test_a_result_computed_from_older_labels_is_not_stored_as_fresh() -> None:
    from annotation.agreement.services import AGREEMENT_REPORTS, report_compute

    campaign, *_ = pairwise_campaign()
    params = report_params(resamples=20)
    report = report_request(campaign, params, inline=False)

    def newer_request_meanwhile(done: int, total: int) -> None:
        # While this computation runs, a request saw newer labels and queued it anew (what
        # report_request writes), so this computation no longer holds it.
        AgreementReport.objects.filter(pk=report.pk).update(
            fingerprint="newer", **AGREEMENT_REPORTS.fresh()
        )

    result = report_compute(report_id=report.pk, on_progress=newer_request_meanwhile)
    assert (result.fingerprint, result.status) == ("newer", AgreementReport.Status.PENDING)


def test_the_judges_offered_are_those_that_judged_an_items_prediction_a_or_b() -> None:
    from annotation.agreement.data import available_raters

    campaign, run_a, run_b, _ = pairwise_campaign()
    # one judge judged B's predictions (against A), one judged runs of no item of the campaign
    judged("judge-of-b", run_b, run_a, repeats=1, verdict=lambda i, repeat, order: 1)
    benchmark = run_a.benchmark
    elsewhere = [
        Run.objects.create(benchmark=benchmark, task="answer", status=Run.Status.DONE, name=n)
        for n in ("C", "D")
    ]
    for run in elsewhere:
        Prediction.objects.create(
            run=run,
            sample=run_a.predictions.first().sample,
            position=0,
            status=Prediction.Status.DONE,
            scores={"accuracy": 1.0, "elsewhere_only": 1.0},
        )
    judged("judge-elsewhere", elsewhere[0], elsewhere[1], repeats=1, verdict=lambda *_: 1)

    available = available_raters(campaign)
    assert available["judges"] == ["judge-of-b"]
    # and the metrics are the names the items' predictions carry, not other runs'
    assert available["metrics"] == ["accuracy"] and not available["not_raters"]


def test_a_report_reads_the_metric_catalogue_once_to_check_and_once_to_compute() -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    campaign, *_ = pairwise_campaign()
    with CaptureQueriesContext(connection) as queries:
        report = report_request(
            campaign, report_params(metrics=["accuracy"], resamples=20), inline=True
        )
    assert report.status == AgreementReport.Status.DONE
    # the request checks the names and fingerprints the labels with one reading; the
    # computation (a worker's, in general) fingerprints again and rates with another
    catalogue = [q for q in queries.captured_queries if "jsonb_object_keys" in q["sql"]]
    assert len(catalogue) == 2
