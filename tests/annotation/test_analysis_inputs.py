"""The human labels of an error-type campaign reach WTU-Eval's error-type analysis through the
annotation app's input (annotation/analysis_inputs.py), and a new label computes the stored
analyses again."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from annotation import services
from annotation.assign import item_next
from benchmarks.models import Benchmark, Sample
from benchmarks.services import benchmark_import
from evaluation.analyses import run_analyses_get
from evaluation.models import Prediction, Run
from tests.factories import make_researcher, make_user, store_label

FIXTURE = Path(__file__).resolve().parents[1] / "benchmarks" / "fixtures" / "wtueval"

pytestmark = pytest.mark.django_db


def error_rows(run: Run) -> dict[str, tuple[int, float | None, float | None, float | None]]:
    rows = run_analyses_get(run, inline=True).data["analyses"]["error_types"]["rows"]
    return {r["group"]: (r["n"], r["automatic"], r["human"], r["agreement"]) for r in rows}


def wtueval_r4_run() -> Run:
    """An R4 run of the three general questions: a tool used on boolq (unnecessary tool), null
    content on piqa, race right."""
    benchmark_import(suite="wtueval", paths=[FIXTURE / "questions.jsonl"])
    benchmark = Benchmark.objects.get(name="WTU-Eval")
    run = Run.objects.create(
        benchmark=benchmark, task="R4", source=Run.Source.IMPORTED, status=Run.Status.DONE
    )
    scores = {
        "boolq-mini": {"accuracy": 0.0, "unparsed": 0.0, "call_rate": 1.0, "tool_errors": 1.0,
                       "errors[unnecessary_tool]": 1.0},
        "piqa-mini": {"accuracy": 0.0, "unparsed": 0.0, "call_rate": 0.0, "tool_errors": 0.0,
                      "errors[null_content]": 1.0},
        "race-mini": {"accuracy": 1.0, "unparsed": 0.0, "call_rate": 0.0, "tool_errors": 0.0},
    }  # fmt: skip
    for position, (split, values) in enumerate(scores.items()):
        Prediction.objects.create(
            run=run,
            sample=Sample.objects.get(benchmark=benchmark, split=split),
            position=position,
            status=Prediction.Status.DONE,
            output="...",
            scores=values,
        )
    return run


def label_the_failures(run: Run) -> None:
    """An annotator labels both failures of the run in an error-type campaign."""
    campaign = services.campaign_create(name="errors", kind="error_types")
    assert services.items_from_failures(campaign=campaign, run=run) == 2
    user = make_user()
    services.members_add(campaign=campaign, users=[user], role="annotator")
    services.campaign_activate(campaign=campaign)
    answers = {"boolq-mini": ["incorrect_invocation"], "piqa-mini": ["endless_retry"]}
    for _ in range(2):
        assignment = item_next(campaign=campaign, user=user)
        split = assignment.item.prediction.sample.split
        store_label(
            campaign=assignment.campaign,
            assignment_id=assignment.pk,
            user=user,
            answers={"types": answers[split]},
            token=uuid.uuid4(),
        )


def test_error_type_labels_are_read_beside_the_automatic_types() -> None:
    # given an R4 run: a tool used on boolq, null content on piqa, race right
    run = wtueval_r4_run()
    assert error_rows(run) == {
        "incorrect_invocation": (1, 50.0, None, None),
        "null_content": (1, 50.0, None, None),
    }
    # when an annotator labels both failures of the run in an error-type campaign
    label_the_failures(run)
    # then the stored analyses are computed again and show them beside the automatic types:
    # humans agree on the invocation, not on the null content
    assert error_rows(run) == {
        "incorrect_invocation": (1, 50.0, 50.0, 100.0),
        "null_content": (1, 50.0, 0.0, 0.0),
    }


def test_a_wtueval_run_sits_beside_the_same_models_run_of_its_pair_region() -> None:
    benchmark_import(suite="wtueval", paths=[FIXTURE / "questions.jsonl"])
    benchmark = Benchmark.objects.get(name="WTU-Eval")
    runs = {}
    # R3 right on boolq only; R4 right on race only, a tool called on boolq
    plan = {
        "R3": {"boolq-mini": 1.0, "piqa-mini": 0.0, "race-mini": 0.0},
        "R4": {"boolq-mini": 0.0, "piqa-mini": 0.0, "race-mini": 1.0},
    }
    for task, accuracy in plan.items():
        run = runs[task] = Run.objects.create(
            benchmark=benchmark, task=task, model_name="m", source=Run.Source.IMPORTED,
            status=Run.Status.DONE,
        )  # fmt: skip
        for position, (split, value) in enumerate(accuracy.items()):
            scores = {"accuracy": value, "unparsed": 0.0}
            if task == "R4":
                scores["call_rate"] = float(split == "boolq-mini")
            Prediction.objects.create(
                run=run,
                sample=Sample.objects.get(benchmark=benchmark, split=split),
                position=position,
                status=Prediction.Status.DONE,
                output="...",
                scores=scores,
            )
    # another model's R3 run is not its pair
    Run.objects.create(
        benchmark=benchmark, task="R3", model_name="other", source=Run.Source.IMPORTED,
        status=Run.Status.DONE,
    )  # fmt: skip
    data = run_analyses_get(runs["R4"], inline=True).data
    rows = data["analyses"]["with_and_without_tools"]["rows"]
    assert [(r["group"], r["accuracy_without"], r["accuracy_with"], r["call_rate_with"])
            for r in rows] == [
        ("boolq-mini", 100.0, 0.0, 100.0),
        ("piqa-mini", 0.0, 0.0, 0.0),
        ("race-mini", 0.0, 100.0, 0.0),
    ]  # fmt: skip
    # and from the other side
    data = run_analyses_get(runs["R3"], inline=True).data
    rows = data["analyses"]["with_and_without_tools"]["rows"]
    assert [r["accuracy_with"] for r in rows] == [0.0, 0.0, 100.0]


def test_an_analysis_drawn_from_labels_needs_what_reading_the_labels_needs(client: Any) -> None:
    # given a labelled run, and two researchers: one who may read labels, one who may not
    run = wtueval_r4_run()
    label_the_failures(run)
    reader = make_researcher()
    curator = make_researcher()
    curator.user_permissions.set(
        Permission.objects.filter(group__name="researchers").exclude(codename="view_label")
    )
    curator.groups.clear()
    assert curator.has_perms(["evaluation.view_run", "evaluation.view_prediction"])
    assert not curator.has_perm("annotation.view_label")
    one = reverse("evaluation:run-analyses", args=[run.pk])
    many = f"{reverse('evaluation:runs-analyses')}?run={run.pk}"
    csv_one = reverse("evaluation:run-analysis-csv", args=[run.pk, "error_types"])
    csv_many = f"{reverse('evaluation:runs-analysis-csv', args=['error_types'])}?run={run.pk}"
    api = reverse("run-analyses", args=[run.pk])
    title = "Error types of the wrong items, automatic and human"
    # then the reader sees the error types (with the humans' shares) everywhere
    client.force_login(reader)
    for page in (one, many):
        html = client.get(page).content.decode()
        assert 'id="analysis-error_types"' in html and "analyses-withheld" not in html
    for csv in (csv_one, csv_many):
        answer = client.get(csv)
        assert answer.status_code == 200
        assert "incorrect_invocation" in b"".join(answer.streaming_content).decode()
    assert "error_types" in client.get(api).json()["analyses"]
    # and the curator sees every other analysis, and of this one only that it is withheld
    client.force_login(curator)
    for page in (one, many):
        answer = client.get(page)
        assert answer.status_code == 200
        html = answer.content.decode()
        assert 'id="analysis-error_types"' not in html
        assert "analyses-withheld" in html and title in html and "annotation.view_label" in html
        assert 'id="analysis-by_dataset"' in html
    for csv in (csv_one, csv_many):
        assert client.get(csv).status_code == 403
    found = client.get(api).json()["analyses"]
    assert "error_types" not in found and "by_dataset" in found
