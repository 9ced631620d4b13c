"""A new benchmark is one folder plus one registry line: the toy suite (tests/benchmarks/
toy_suite/, defined nowhere else) is registered by this test and goes through import, a run
against a fake OpenAI-compatible server, its metrics, a pairwise campaign and the agreement
report, with no other file knowing it."""

from __future__ import annotations

import importlib
import json
import re
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from annotation import services
from annotation.agreement.services import report_params, report_request
from annotation.assign import item_next
from annotation.models import AgreementReport, Member
from benchmarks.kit import judging
from benchmarks.kit.judging import template_named
from benchmarks.kit.registry import SUITE_MODULES, get_suite
from benchmarks.models import Benchmark
from benchmarks.services import benchmark_import
from evaluation.models import Run
from evaluation.services import run_launch
from tests.benchmarks.conformance import checks
from tests.evaluation.conftest import execute_run, make_endpoint
from tests.factories import make_user, store_label
from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.django_db(transaction=True)

COUNT = 20


def toy_model(request: dict[str, Any]) -> str:
    """ "careful" answers right; "hasty" always says yes (right on the even numbers only)."""
    n = int(re.findall(r"Is (\d+) even", json.dumps(request["messages"]))[-1])
    if request["model"] == "careful":
        return "Yes." if n % 2 == 0 else "No."
    return "Yes."


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(SUITE_MODULES, "toy", "tests.benchmarks.toy_suite")


def test_a_suite_defined_only_in_the_tests_goes_from_import_to_agreement(
    toy: None, tmp_path: Path
) -> None:
    # given the toy benchmark's file, imported through the registry
    path = tmp_path / "parity.jsonl"
    path.write_text("".join(json.dumps({"id": i, "n": i}) + "\n" for i in range(COUNT)))
    benchmark_import(suite="toy", paths=[path])
    benchmark = Benchmark.objects.get(suite="toy")
    assert benchmark.name == get_suite("toy").default_benchmark
    assert benchmark.samples.count() == COUNT

    # when two models answer it
    runs = []
    with FakeOpenAI(responder=toy_model) as server:
        for model in ("careful", "hasty"):
            endpoint = make_endpoint(server.base_url, name=model, model=model)
            run = run_launch(benchmark=benchmark, task="parity", endpoint=endpoint, name=model)
            execute_run(run)
            assert run.status == Run.Status.DONE, run.error
            runs.append(run)
    careful, hasty = runs

    # then the suite's scores are the runs' metrics
    assert careful.metrics["accuracy"] == 100.0 and careful.metrics["n"] == COUNT
    assert hasty.metrics["accuracy"] == 50.0

    # and humans comparing the two outputs agree with the metric on every item: the careful
    # model is better where it alone is right (odd n), a tie elsewhere
    campaign = services.campaign_create(name="toy pairwise", kind="pairwise", labels_per_item=2)
    services.items_from_runs(campaign=campaign, run_a=careful, run_b=hasty)
    annotators = [make_user(username=f"ann{j}") for j in range(2)]
    services.members_add(campaign=campaign, users=annotators, role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=campaign)
    for user in annotators:
        while (assignment := item_next(campaign=campaign, user=user)) is not None:
            n = int(assignment.item.sample.external_id)
            store_label(
                campaign=assignment.campaign,
                assignment_id=assignment.pk,
                user=user,
                answers={"better": 1 if n % 2 else 0},
                token=uuid.uuid4(),
                time_ms=1000,
            )
    report = report_request(
        campaign, report_params(metrics=["accuracy"], resamples=50, seed=1), inline=True
    )
    assert report.status == AgreementReport.Status.DONE, report.error
    (question,) = report.data["questions"]
    (metric,) = question["automatic"]
    assert metric["rater"] == "metric:accuracy"
    assert metric["accuracy"]["value"] == 1.0 and metric["accuracy"]["n"] == COUNT
    assert question["humans"]["mean_agreement"]["value"] == 1.0


def test_the_conformance_checks_cover_a_suite_defined_only_in_the_tests(toy: None) -> None:
    # Registered by its line alone, the toy suite is held to every check the registered suites
    # are: the conformance test's checks walk whatever the registry lists.
    suite = get_suite("toy")
    ran = []
    for check in checks(suite):
        check.run()
        ran.append(check.name)
    assert ran == [
        "toy-declares-conformance",
        "toy-exporter",
        "toy-judges",
        "toy-options",
        "toy-demo",
        "toy-parity-metrics",
    ]


def test_a_suite_that_breaks_a_promise_fails_the_conformance_checks(
    toy: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an undeclared metric returned by score()
    module = importlib.import_module("tests.benchmarks.toy_suite")
    wrong = replace(
        module.SUITE.evaluation[0],
        score=lambda outcome, item, ctx, context: {"accuracy": 0.0, "extra": 1.0},
    )
    monkeypatch.setattr(module, "SUITE", replace(module.SUITE, evaluation=(wrong,)))
    metrics = next(c for c in checks(get_suite("toy")) if c.name == "toy-parity-metrics")
    with pytest.raises(AssertionError, match="per-item names without a MetricSpec"):
        metrics.run()


def test_a_judge_the_toy_suite_declares_is_registered_and_checked(
    toy: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A suite's judges are what it declares (no judges module to find): the toy suite declares
    # one, and it is a template like any other, held to the conformance checks.
    module = importlib.import_module("tests.benchmarks.toy_suite")
    judge = replace(
        template_named("generic.pairwise"), name="toy.pairwise", suites=("toy",), tasks=()
    )
    monkeypatch.setattr(judging, "TEMPLATES", dict(judging.TEMPLATES))
    monkeypatch.setattr(module, "SUITE", replace(module.SUITE, judges=(judge,)))
    assert template_named("toy.pairwise") is judge
    assert judge.applies_to("toy", "parity")
    next(c for c in checks(get_suite("toy")) if c.name == "toy-judges").run()
