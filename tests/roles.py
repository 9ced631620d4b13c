"""A small platform with one user of every role and one object of every kind, for the tests that
check who may do what (tests/config/test_access.py and the findings it came from).

Roles:
- anonymous
- outsider: signed in, in the `annotators` group, member of no campaign
- annotator: annotator of the motivation campaign M and the refinement campaign F
- reviewer: reviewer of F
- adjudicator: adjudicator of M
- researcher: staff, in the `researchers` group as the migrations left it
- superuser: every permission, member of nothing
- scattered: staff with three model permissions (view campaigns, endpoints, tools)
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.contrib.auth.models import Group, Permission
from django.test import Client

from annotation import services
from annotation.assign import item_next
from annotation.models import (
    Adjudication,
    Assignment,
    Campaign,
    Item,
    Label,
    Member,
    Review,
)
from benchmarks.models import Benchmark, ImportJob, Sample, SampleRevision, Tool
from benchmarks.services import benchmark_import
from evaluation.models import (
    ApiResponse,
    Endpoint,
    Judge,
    JudgeJob,
    Judgment,
    Prediction,
    RealApi,
    ResponseCache,
    Run,
    ServedCall,
    TuringPair,
    VirtualApi,
)
from evaluation.virtualapi.keys import call_key
from tests.factories import make_researcher, make_superuser, make_tool, make_user, store_label

ROLES = (
    "anonymous",
    "outsider",
    "annotator",
    "reviewer",
    "adjudicator",
    "researcher",
    "superuser",
    "scattered",
)
SCATTERED_PERMISSIONS = ("view_campaign", "view_endpoint", "view_tool")
ULTRATOOL_DEMO = Path(__file__).resolve().parents[1] / "benchmarks" / "demo" / "ultratool"
VIRTUAL_CALL = {
    "category": "Data",
    "tool_name": "weather_for_Data",
    "api_name": "today",
    "tool_input": {"city": "Oban"},
}


def grant(user: Any, *codenames: str) -> Any:
    for codename in codenames:
        user.user_permissions.add(Permission.objects.get(codename=codename))
    return user


@dataclass
class World:
    users: dict[str, Any]
    benchmark: Benchmark
    sample: Sample
    tool: Tool
    endpoint: Endpoint
    run: Run
    prediction: Prediction
    job: JudgeJob
    motivation: Campaign  # M: adjudication stage
    refinement: Campaign  # F: review stage
    assignment: Assignment  # the annotator's item in M
    refine_assignment: Assignment  # the annotator's item in F
    pending: Label  # a refinement in F waiting for review
    disputed: Item  # an item of M whose labels differ
    objects: dict[str, Any] = field(default_factory=dict)  # one of each admin model
    import_job: Any = None  # a finished import from the browser (/benchmarks/import/<id>/)

    def client(self, role: str) -> Client:
        client = Client()
        if role != "anonymous":
            client.force_login(self.users[role])
        return client


def _submit(campaign: Campaign, user: Any, raw: dict[str, Any]) -> Label:
    assignment = item_next(campaign=campaign, user=user)
    assert assignment is not None
    answers = services.answers_clean(
        questions=list(campaign.questions.all()),
        item=assignment.item,
        raw=raw,
        shown_order=assignment.shown_order,
    )
    label, _ = store_label(
        campaign=assignment.campaign,
        assignment_id=assignment.pk,
        user=user,
        answers=answers,
        token=uuid.uuid4(),
    )
    return label


def build_world(tmp_path: Path) -> World:
    users = {
        "outsider": make_user(username="outsider"),
        "annotator": make_user(username="annotator"),
        "reviewer": make_user(username="reviewer"),
        "adjudicator": make_user(username="adjudicator"),
        "researcher": make_researcher(username="researcher"),
        "superuser": make_superuser(username="root"),
        "scattered": grant(make_user(username="scattered", is_staff=True), *SCATTERED_PERMISSIONS),
    }
    annotators = Group.objects.get(name="annotators")
    for role in ("outsider", "annotator", "reviewer", "adjudicator"):
        users[role].groups.add(annotators)

    # a generic benchmark: its samples carry their gold answers
    folder = tmp_path / "world"
    folder.mkdir()
    questions = folder / "questions.jsonl"
    questions.write_text(
        "\n".join(
            f'{{"id": {i}, "query": "What comes after {i}?", "answer": {i + 1}}}' for i in range(3)
        )
        + "\n",
        encoding="utf-8",
    )
    benchmark_import(suite="generic", paths=[questions], benchmark_name="World")
    benchmark = Benchmark.objects.get(name="World")
    samples = list(benchmark.samples.order_by("id"))
    tools = [make_tool(benchmark=benchmark, name=f"tool{i}") for i in range(2)]
    SampleRevision.objects.create(
        sample=samples[0],
        number=0,
        input=samples[0].input,
        reference=samples[0].reference,
        candidate_tools=[],
    )

    endpoint = Endpoint.objects.create(
        name="world-endpoint", base_url="http://127.0.0.1:9/v1", model="m", timeout_seconds=5
    )
    run = Run.objects.create(
        name="Secret model run",
        benchmark=benchmark,
        task="answer",
        split="default",
        endpoint=endpoint,
        model_name="secret-model-7b",
        status=Run.Status.RUNNING,
    )
    predictions = [
        Prediction.objects.create(
            run=run,
            sample=sample,
            position=i,
            status=Prediction.Status.DONE,
            attempts=1,
            output=f"Answer: {i + 1}",
            scores={"accuracy": 100.0},
        )
        for i, sample in enumerate(samples)
    ]
    judge = Judge.objects.create(
        name="world-judge", template="generic.pairwise", kind="pairwise", endpoint=endpoint
    )
    job = JudgeJob.objects.create(judge=judge, run=run, against=run, repeats=1)
    judgment = Judgment.objects.create(
        job=job, sample=samples[0], prediction=predictions[0], position=0
    )
    cache = ResponseCache.objects.create(key="k" * 64, model="m", request={}, response={})

    virtual = VirtualApi.objects.create(
        category=VIRTUAL_CALL["category"],
        tool=VIRTUAL_CALL["tool_name"],
        api=VIRTUAL_CALL["api_name"],
    )
    response = ApiResponse.objects.create(
        api=virtual,
        key=call_key(VIRTUAL_CALL["tool_input"]),
        arguments=VIRTUAL_CALL["tool_input"],
        response={"temperature": 12},
        origin=ApiResponse.Origin.REAL,
    )
    served = ServedCall.objects.create(api=virtual, key=response.key, source="cache")
    real = RealApi.objects.create(
        category="Data", tool="weather_for_Data", url="https://weather.example/{api}"
    )
    pair = TuringPair.objects.create(
        api=virtual, key=response.key, real={"t": 12}, simulated={"t": 13}, simulator="s"
    )

    # M: a motivation campaign with an adjudication stage; two annotators disagree on an item
    motivation = services.campaign_create(
        name="World motivation",
        kind="motivation",
        benchmark=benchmark,
        labels_per_item=2,
        adjudication_stage=True,
    )
    services.items_from_tools(campaign=motivation)
    first, second = make_user(username="first"), make_user(username="second")
    services.members_add(
        campaign=motivation,
        users=[first, second, users["annotator"]],
        role=Member.Role.ANNOTATOR,
    )
    services.members_add(
        campaign=motivation, users=[users["adjudicator"]], role=Member.Role.ADJUDICATOR
    )
    services.campaign_activate(campaign=motivation)
    label_a = _submit(motivation, first, {"reason": ["A"]})
    label_b = _submit(motivation, second, {"reason": ["B"]})
    assert label_a.item_id == label_b.item_id
    disputed = Item.objects.get(pk=label_a.item_id)
    adjudication = Adjudication.objects.create(
        item=disputed, adjudicator=make_user(), answers={"reason": ["A"]}
    )
    assignment = item_next(campaign=motivation, user=users["annotator"])
    assert assignment is not None

    # F: a refinement campaign with a review stage; one refinement waits for review
    benchmark_import(
        suite="ultratool",
        paths=[ULTRATOOL_DEMO / "test.json", *sorted((ULTRATOOL_DEMO / "test_set").glob("*.json"))],
        benchmark_name="World plans",
    )
    refinement = services.campaign_create(
        name="World refinement",
        kind="refinement",
        benchmark=Benchmark.objects.get(name="World plans"),
        review_stage=True,
        labels_per_item=1,
    )
    services.items_from_split(campaign=refinement, split="test")
    author = make_user(username="author")
    services.members_add(
        campaign=refinement, users=[author, users["annotator"]], role=Member.Role.ANNOTATOR
    )
    services.members_add(campaign=refinement, users=[users["reviewer"]], role=Member.Role.REVIEWER)
    services.campaign_activate(campaign=refinement)
    author_client = Client()
    author_client.force_login(author)
    page = author_client.get(f"/annotate/{refinement.pk}/").content.decode()
    held = Assignment.objects.get(campaign=refinement, annotator=author)
    token = page.split('name="token" value="', 1)[1].split('"', 1)[0]
    author_client.post(
        f"/annotate/{refinement.pk}/submit/{held.pk}/", {"verdict": "keep", "token": token}
    )
    pending = Label.objects.get(campaign=refinement, annotator=author)
    assert pending.review == Label.Review.PENDING
    refine_assignment = item_next(campaign=refinement, user=users["annotator"])
    assert refine_assignment is not None
    review = Review.objects.create(
        label=pending, reviewer=make_user(), decision=Review.Decision.RETURNED
    )

    objects = {
        "auth.group": Group.objects.get(name="researchers"),
        "auth.user": users["outsider"],
        "benchmarks.benchmark": benchmark,
        "benchmarks.tool": tools[0],
        "benchmarks.sample": samples[0],
        "benchmarks.samplerevision": samples[0].revisions.first(),
        "evaluation.endpoint": endpoint,
        "evaluation.run": run,
        "evaluation.prediction": predictions[0],
        "evaluation.responsecache": cache,
        "evaluation.judge": judge,
        "evaluation.judgejob": job,
        "evaluation.judgment": judgment,
        "evaluation.virtualapi": virtual,
        "evaluation.apiresponse": response,
        "evaluation.servedcall": served,
        "evaluation.realapi": real,
        "evaluation.turingpair": pair,
        "annotation.campaign": motivation,
        "annotation.item": disputed,
        "annotation.label": label_a,
        "annotation.assignment": assignment,
        "annotation.review": review,
        "annotation.adjudication": adjudication,
    }
    return World(
        users=users,
        benchmark=benchmark,
        sample=samples[0],
        tool=tools[0],
        endpoint=endpoint,
        run=run,
        prediction=predictions[0],
        job=job,
        motivation=motivation,
        refinement=refinement,
        assignment=assignment,
        refine_assignment=refine_assignment,
        pending=pending,
        disputed=disputed,
        objects=objects,
        import_job=ImportJob.objects.create(
            suite="generic",
            benchmark_name="World",
            folder="gone",
            files=[{"name": "questions.jsonl", "size": 1}],
            status=ImportJob.Status.DONE,
            phase="done",
            benchmark=benchmark,
        ),
    )
