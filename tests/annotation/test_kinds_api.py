"""Every campaign kind through the API: a member annotator gets their next item and submits a
valid answer, which is stored once and counted; an invalid answer is refused with a 400 that
names the question."""

from __future__ import annotations

import json
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from annotation import services
from annotation.kinds import kinds
from annotation.models import Campaign, Label, Member
from benchmarks.models import Benchmark
from benchmarks.services import benchmark_import
from evaluation.models import Endpoint, Prediction, Run
from tests.factories import make_benchmark, make_sample, make_tool

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def clean_cache() -> None:
    cache.clear()


def _runs(benchmark: Any, n: int) -> list[Run]:
    endpoint = Endpoint.objects.create(
        name=f"e-{benchmark.pk}", base_url="http://127.0.0.1:9/v1", model="m"
    )
    return [
        Run.objects.create(
            benchmark=benchmark,
            task="answer",
            endpoint=endpoint,
            status=Run.Status.DONE,
            model_name=f"m{i}",
        )
        for i in range(n)
    ]


def build_refinement() -> Campaign:
    demo = ROOT / "benchmarks" / "demo" / "ultratool"
    benchmark_import(
        suite="ultratool",
        paths=[demo / "test.json", *sorted((demo / "test_set").glob("*.json"))],
        benchmark_name="refine",
    )
    campaign = services.campaign_create(
        name="refinement", kind="refinement", benchmark=Benchmark.objects.get(name="refine")
    )
    services.items_from_split(campaign=campaign, split="test", limit=2)
    return campaign


def build_motivation() -> Campaign:
    benchmark = make_benchmark()
    for i in range(2):
        make_tool(benchmark=benchmark, name=f"tool{i}")
    campaign = services.campaign_create(name="motivation", kind="motivation", benchmark=benchmark)
    services.items_from_tools(campaign=campaign)
    return campaign


def build_turing() -> Campaign:
    campaign = services.campaign_create(name="turing", kind="turing")
    services.items_from_pairs_file(
        campaign=campaign, path=ROOT / "annotation/demo/turing_pairs.json"
    )
    return campaign


def build_pairwise() -> Campaign:
    benchmark = make_benchmark()
    runs = _runs(benchmark, 2)
    for position in range(2):
        sample = make_sample(benchmark=benchmark)
        for run in runs:
            Prediction.objects.create(
                run=run, sample=sample, position=position, status=Prediction.Status.DONE
            )
    campaign = services.campaign_create(name="pairwise", kind="pairwise")
    services.items_from_runs(campaign=campaign, run_a=runs[0], run_b=runs[1])
    return campaign


def build_baseline() -> Campaign:
    benchmark = make_benchmark()
    for name in ("weather", "calendar"):
        make_tool(benchmark=benchmark, name=name)
    for _ in range(2):
        make_sample(benchmark=benchmark, candidate_tools=["weather", "calendar"])
    campaign = services.campaign_create(
        name="baseline", kind="baseline", benchmark=benchmark, task="answer"
    )
    services.items_from_split(campaign=campaign, split="test")
    return campaign


def build_error_types() -> Campaign:
    benchmark = make_benchmark()
    (run,) = _runs(benchmark, 1)
    for position in range(2):
        Prediction.objects.create(
            run=run,
            sample=make_sample(benchmark=benchmark),
            position=position,
            status=Prediction.Status.FAILED,
            error="timeout",
        )
    campaign = services.campaign_create(name="error types", kind="error_types")
    services.items_from_failures(campaign=campaign, run=run)
    return campaign


def build_answer_check() -> Campaign:
    benchmark = make_benchmark()
    (run,) = _runs(benchmark, 1)
    for position in range(2):
        Prediction.objects.create(
            run=run,
            sample=make_sample(benchmark=benchmark),
            position=position,
            status=Prediction.Status.DONE,
            output="It is 21 degrees in Paris.",
        )
    campaign = services.campaign_create(name="answer check", kind="answer_check")
    services.items_from_answers(campaign=campaign, run=run)
    return campaign


def build_step_review() -> Campaign:
    from tests.annotation.agent_traces import agent_runs

    with tempfile.TemporaryDirectory() as folder:
        stb, _mtu = agent_runs(Path(folder))
    campaign = services.campaign_create(name="step review", kind="step_review")
    services.items_from_traces(campaign=campaign, run=stb)
    return campaign


R = {"right": True}

# kind -> (build, a valid answer, an invalid answer and the question it names)
KINDS: dict[str, tuple[Callable[[], Campaign], dict[str, Any], dict[str, Any], str]] = {
    "refinement": (build_refinement, {"verdict": "keep"}, {"verdict": "maybe"}, "verdict"),
    "motivation": (build_motivation, {"reason": "A"}, {"reason": "Z"}, "reason"),
    "turing": (
        build_turing,
        {"overall": "left", "format": "tie", "relevance": "right"},
        {"overall": "up", "format": "tie", "relevance": "tie"},
        "overall",
    ),
    "pairwise": (build_pairwise, {"better": "tie"}, {"better": 1}, "better"),
    "baseline": (build_baseline, {"tools": ["weather"]}, {"tools": ["rocket"]}, "tools"),
    "error_types": (build_error_types, {"types": ["null_content"]}, {"types": []}, "types"),
    "answer_check": (build_answer_check, {"label": "Solved"}, {"label": "Maybe"}, "label"),
    "step_review": (
        build_step_review,
        {"verdict": "right", "steps": [R, R]},
        {"verdict": "right", "steps": [R]},
        "steps",
    ),
}


def test_every_kind_has_its_api_test() -> None:
    assert set(KINDS) == set(kinds())


def post(client: Client, url: str, body: dict[str, Any] | None = None) -> Any:
    return client.post(url, json.dumps(body or {}), content_type="application/json")


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_an_annotator_answers_each_kind_through_the_api(
    client: Client, kind: str, django_user_model: Any
) -> None:
    build, valid, invalid, field = KINDS[kind]
    # given an open campaign of the kind, with an annotator as its member
    campaign = build()
    annotator = django_user_model.objects.create_user(username=f"ann-{kind}")
    services.members_add(campaign=campaign, users=[annotator], role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=campaign)
    client.force_login(annotator)
    base = f"/api/campaigns/{campaign.pk}"
    # when they ask for their next item
    given = post(client, f"{base}/next/")
    assert given.status_code == 200
    got = given.json()
    assert got["item"]["kind"] == kind and got["progress"]["mine"] == 0
    # an invalid answer is refused, naming the question, and nothing is stored
    token = str(uuid.uuid4())
    refused = post(
        client,
        f"{base}/submit/",
        {"assignment": got["assignment"], "answers": invalid, "token": token},
    )
    assert refused.status_code == 400, refused.content
    assert refused.json()["field"] == field and refused.json()["detail"]
    assert not Label.objects.filter(campaign=campaign).exists()
    # a valid one is stored, once however often it is sent, and counted
    body = {"assignment": got["assignment"], "answers": valid, "token": token}
    assert post(client, f"{base}/submit/", body).status_code == 201
    again = post(client, f"{base}/submit/", body)
    assert again.status_code == 200 and again.json()["created"] is False
    assert Label.objects.filter(campaign=campaign, annotator=annotator).count() == 1
    (listed,) = client.get("/api/campaigns/").json()
    assert listed["mine"] == 1
    following = post(client, f"{base}/next/").json()
    assert following["progress"]["mine"] == 1
    assert following["assignment"] not in (None, got["assignment"])
