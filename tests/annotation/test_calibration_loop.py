"""The calibration loop end to end (issue 32's acceptance): a judge job run by a real Celery
worker against the fake OpenAI server -> the judge version's report against humans who labelled
the same pairs -> a campaign of the disagreements built from the report's page -> its labels
submitted through the studio's API by annotators -> the report read again, moved by the new
labels. Real Postgres, a real broker and worker; the judge model is the only thing faked."""

from __future__ import annotations

import csv
import io
import json
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from annotation import services
from annotation.calibration.report import version_report
from annotation.models import Campaign, Label, Member
from evaluation import judging
from evaluation.models import Endpoint, Judge, JudgeJob, Prediction, Run
from tests.factories import make_benchmark, make_researcher, make_sample, make_user
from tests.fake_openai import FakeOpenAI
from tests.workers import celery_worker, flush_test_broker

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "JUDGE-REASONING-NEVER-SHOWN"
# The humans' answer per item (unanimous): A better on 0 and 1, B better on the others.
HUMANS = ["A", "A", "B", "B", "B", "B"]


@pytest.fixture
def broker() -> Iterator[None]:
    flush_test_broker()
    yield
    flush_test_broker()


class Judging:
    """The judge model: for items 0-3 it prefers A, for item 4 B, whatever the order shown; for
    item 5 it prefers A when shown B first, and when shown A first prefers A twice then B (the
    k-th request of the same text gets the k-th answer), so that item 5's three repeats, each
    with its two orders combined, are A, A and a tie in whatever order the worker asks."""

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()
        self.lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> str:
        text = request["messages"][-1]["content"]
        first = text.split("Answer 1:\n", 1)[1].split("\n", 1)[0]
        item, side = int(first.split()[1][1:]), first.split()[1][0]
        with self.lock:
            self.seen[text] += 1
            asked = self.seen[text]
        prefers = "A" if item < 4 else "B"
        if item == 5:
            prefers = "B" if side == "A" and asked == 3 else "A"
        better = "1" if prefers == side else "2"
        return json.dumps({"better": better, "reason": SECRET})


def two_runs() -> tuple[Run, Run]:
    benchmark = make_benchmark(name="loop", suite="generic")
    endpoint = Endpoint.objects.create(name="models", base_url="http://127.0.0.1:9/v1", model="m")
    runs = [
        Run.objects.create(
            benchmark=benchmark, task="answer", endpoint=endpoint, status=Run.Status.DONE, name=n
        )
        for n in ("model A", "model B")
    ]
    for i in range(6):
        sample = make_sample(
            benchmark=benchmark, external_id=f"q{i}", input={"query": f"Question {i}?"}
        )
        for run, side in zip(runs, "AB", strict=True):
            Prediction.objects.create(
                run=run,
                sample=sample,
                position=i,
                status=Prediction.Status.DONE,
                output=f"answer {side}{i} to question {i}",
            )
    return runs[0], runs[1]


def wait_for(job: JudgeJob, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if job.status != JudgeJob.Status.RUNNING:
            return
        time.sleep(0.2)
    raise AssertionError(f"judge job {job.pk} still running after {timeout}s")


def label_through_the_api(campaign: Campaign, annotators: list[Any], prefer: Any) -> int:
    """Each annotator, logged in, asks the API for items and answers each by the side shown
    whose text is the answer they prefer (`prefer(item number)` -> "A" or "B"). Returns the
    number of labels given."""
    given = 0
    for user in annotators:
        client = Client()
        client.force_login(user)
        api = f"/api/campaigns/{campaign.pk}"
        shown = client.post(f"{api}/next/").json()
        while shown["assignment"] is not None:
            text = json.dumps(shown["item"])
            sides = [text.index(f"answer {s}") for s in "AB"]
            # the item's number, read from the text the annotator sees
            number = int(text.split("answer A", 1)[1][0])
            left = "A" if sides[0] < sides[1] else "B"
            body = {
                "assignment": shown["assignment"],
                "answers": {"better": "left" if prefer(number) == left else "right"},
                "token": str(uuid.uuid4()),
                "time_ms": 800,
                "next": True,
            }
            answered = client.post(
                f"{api}/submit/", json.dumps(body), content_type="application/json"
            )
            assert answered.status_code == 201, answered.content.decode()[:500]
            assert SECRET not in answered.content.decode()
            given += 1
            shown = answered.json()["next"]
    return given


def the_question(report: dict[str, Any]) -> dict[str, Any]:
    (task,) = report["tasks"]
    (question,) = task["questions"]
    return question


def test_judge_run_report_campaign_labels_report_updated(broker: None, tmp_path: Path) -> None:
    # given two runs' answers to six questions, and a judge of them run by a real worker
    run_a, run_b = two_runs()
    model = Judging()
    with FakeOpenAI(responder=model) as server, celery_worker(tmp_path, queues="judging"):
        endpoint = Endpoint.objects.create(
            name="judge endpoint",
            base_url=server.base_url,
            model="judge-model",
            max_concurrency=4,
            timeout_seconds=5,
        )
        judge = judging.judge_create(
            name="loop judge",
            template="generic.pairwise",
            endpoint=endpoint,
            answer_mode=Judge.AnswerMode.TEXT,
        )
        job = judging.judge_launch(judge=judge, run=run_a, against=run_b, repeats=3)
        wait_for(job)
    assert job.status == JudgeJob.Status.DONE, job.error
    assert job.judgments.filter(status="done").count() == 6 * 3 * 2
    version = job.version
    assert version is not None and version.number == 1

    # and three annotators who compared the same pairs in the studio (through its API)
    first = services.campaign_create(name="humans first", kind="pairwise", labels_per_item=3)
    services.items_from_runs(campaign=first, run_a=run_a, run_b=run_b)
    annotators = [make_user(username=f"first{j}") for j in range(3)]
    services.members_add(campaign=first, users=annotators, role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=first)
    assert label_through_the_api(first, annotators, lambda i: HUMANS[i]) == 18

    # when a researcher reads the version's report
    researcher = Client()
    researcher.force_login(make_researcher())
    base = f"/judges/{judge.pk}/v{version.number}/calibration"
    assert researcher.get(f"{base}/").status_code == 200
    q = the_question(version_report(version, resamples=200))
    # then the judge's verdicts [A, A, A, A, B, A] (item 5: A, A and a tie over its repeats)
    # meet the humans' [A, A, B, B, B, B]: right on items 0, 1 and 4
    assert [item["judge"] for item in q["items"]] == [1, 1, 1, 1, -1, 1]
    assert [item["human_majority"] for item in q["items"]] == [1, 1, -1, -1, -1, -1]
    assert q["accuracy"]["value"] == pytest.approx(3 / 6)
    # kappa: judge A 5, B 1; humans A 2, B 4: chance (10 + 4) / 36; (18 - 14) / (36 - 14) = 2/11
    assert q["cohen_kappa"]["value"] == pytest.approx(2 / 11)
    # ECE by hand, ten bins: items 0-4 have confidence 1 (every repeat the same), 3 of the 5
    # right: bin (0.9, 1], gap |3/5 - 1| = 2/5, weight 5/6; item 5 has confidence 2/3 (two of
    # its three repeats said A), wrong: bin (0.6, 0.7], gap |0 - 2/3| = 2/3, weight 1/6.
    # ECE = 5/6 x 2/5 + 1/6 x 2/3 = 1/3 + 1/9 = 4/9
    assert q["ece"]["value"] == pytest.approx(4 / 9)
    assert q["disagreements"] == 3

    # when the researcher sends the two surest disagreements back to humans, from the report
    built = researcher.post(
        f"{base}/campaign/",
        {"selection": "disagreements", "size": "2", "labels_per_item": "4"},
    )
    assert built.status_code == 302
    second = Campaign.objects.get(name__startswith="Calibration of loop judge v1")
    # the surest first (items 2 and 3, confidence 1, before item 5), in the report's order
    samples = list(second.items.order_by("position").values_list("sample__external_id", flat=True))
    assert samples == ["q2", "q3"]
    others = [make_user(username=f"second{j}") for j in range(4)]
    services.members_add(campaign=second, users=others, role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=second)
    # and four annotators, who never see the judge's verdict, find A better on both
    assert label_through_the_api(second, others, lambda i: "A") == 8
    assert Label.objects.filter(campaign=second, is_current=True).count() == 8

    # then the report, read again, counts their labels: items 2 and 3 now have a majority of A
    # (4 against 3), the judge's verdict; accuracy 5/6; ECE: bin (0.9, 1] all right, gap 0;
    # item 5's gap 2/3 at weight 1/6: 1/9
    q = the_question(version_report(version, resamples=200))
    assert [item["human_majority"] for item in q["items"]] == [1, 1, 1, 1, -1, -1]
    assert q["accuracy"]["value"] == pytest.approx(5 / 6)
    assert q["ece"]["value"] == pytest.approx(1 / 9)
    assert {c["name"] for c in q["campaigns"]} == {first.name, second.name}
    rows = csv.DictReader(io.StringIO(b"".join(researcher.get(f"{base}.csv")).decode()))
    figures = {row["statistic"]: row for row in rows if row["version"] == "1"}
    assert float(figures["accuracy"]["value"]) == pytest.approx(5 / 6)
    assert float(figures["ece"]["value"]) == pytest.approx(1 / 9)
