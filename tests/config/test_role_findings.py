"""The role findings of the outside review, each as it was reported (issue 13, findings 2-4).
The table test (test_access.py) covers the whole class; these pin the reported instances."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import Adjudication, Assignment
from tests.factories import make_user
from tests.roles import World, build_world, grant

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(tmp_path: Path) -> World:
    return build_world(tmp_path)


def test_a_read_permission_takes_no_slot_and_settles_no_dispute(world: World) -> None:
    # given a staff user whose only permission is to view campaigns, in none of them
    viewer = grant(make_user(is_staff=True), "view_campaign")
    client = world.client("anonymous")
    client.force_login(viewer)
    m = world.motivation
    held_before = Assignment.objects.filter(campaign=m).count()
    # when they open the studio and post an adjudication
    opened = client.get(f"/annotate/{m.pk}/")
    posted = client.post(f"/adjudicate/{m.pk}/{world.disputed.pk}/", {"reason": ["B"]})
    # then both are a 404, and nothing was taken or stored
    assert opened.status_code == 404
    assert posted.status_code == 404
    assert Assignment.objects.filter(campaign=m).count() == held_before
    assert not Adjudication.objects.filter(adjudicator=viewer).exists()
    # while what the permission names, reading the campaigns, works (their labels need
    # view_label: test_label_access.py)
    assert client.get("/campaigns/").status_code == 200


def test_an_annotator_reads_no_gold_and_no_model_names(world: World) -> None:
    client = world.client("annotator")
    run, sample = world.run, world.sample
    for path in (
        f"/api/samples/{sample.pk}/",
        "/api/samples/",
        f"/api/predictions/?run={run.pk}",
        f"/api/predictions/{world.prediction.pk}/",
        "/api/runs/",
        f"/api/runs/{run.pk}/",
        f"/runs/{run.pk}/",
        f"/runs/{run.pk}/predictions.csv",
        "/runs/",
        "/judging/",
        f"/judging/{world.job.pk}/",
        f"/leaderboard/{world.benchmark.pk}/answer/",
    ):
        response = client.get(path)
        assert response.status_code in (403, 404), path
        body = response.content.decode()
        assert "secret-model-7b" not in body and "Secret model run" not in body, path
    # their own studio still works
    assert client.get(f"/annotate/{world.motivation.pk}/").status_code == 200


def test_the_researcher_does_researcher_work(world: World) -> None:
    client = world.client("researcher")
    m = world.motivation.pk
    for path in (
        f"/campaigns/{m}/progress/",
        f"/campaigns/{m}/agreement/",
        f"/campaigns/{m}/agreement/summary.csv",
        f"/campaigns/{m}/agreement/labels.csv",
        f"/api/agreement/{m}/",
        "/api/agreement/",
        "/admin/evaluation/run/",
        "/admin/evaluation/endpoint/",
        "/admin/annotation/campaign/",
        f"/runs/{world.run.pk}/",
        f"/api/samples/{world.sample.pk}/",
    ):
        assert client.get(path).status_code == 200, path
