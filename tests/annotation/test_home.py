"""The home page: what needs attention, by who is looking. An annotator gets their campaigns and
the work each offers; a researcher every open campaign with its progress, what is running now
with its progress, and the latest runs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from evaluation.models import JudgeJob, Judgment, Run
from tests.roles import World, build_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(tmp_path: Path) -> World:
    return build_world(tmp_path)


def text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def section(html: str, id_: str) -> str:
    found = re.search(rf'<section class="card"[^>]*id="{id_}"[^>]*>(.*?)</section>', html, re.S)
    return found[1] if found else ""


def test_an_annotator_sees_their_campaigns_and_nothing_of_the_machines(world: World) -> None:
    html = world.client("annotator").get("/").content.decode()
    mine = section(html, "my-campaigns")
    assert "World motivation" in mine and "World refinement" in mine
    assert f'href="/annotate/{world.motivation.pk}/"' in mine
    # what only researchers read is not there, not even as a heading
    for hidden in ("campaigns", "running", "recent-runs"):
        assert not section(html, hidden), hidden
    assert "Secret model run" not in html and "secret-model-7b" not in html
    assert "Launch a run" not in html


def test_an_outsider_is_told_they_are_in_no_campaign(world: World) -> None:
    html = world.client("outsider").get("/").content.decode()
    assert "You are in no open campaign yet" in section(html, "my-campaigns")


def test_a_researcher_sees_campaigns_running_work_and_recent_runs(
    world: World, django_assert_max_num_queries: Any
) -> None:
    client = world.client("researcher")
    # user, permissions, running runs and jobs, memberships, campaigns (mine, all), recent runs;
    # each list of runs and the predictions of the runs it shows (selectors.with_progress)
    with django_assert_max_num_queries(12):
        html = client.get("/").content.decode()
    campaigns = section(html, "campaigns")
    # M: two tools, two labels each; two labels given
    row = re.search(
        r"<tr>\s*<th scope=\"row\"><a[^>]*>World motivation</a>(.*?)</tr>", campaigns, re.S
    )
    assert row, campaigns
    items = world.motivation.items.count()
    assert f"2/{items * 2} ({100 * 2 / (items * 2):.2f}%)" in text(row[1])
    assert "3 annotators, 2 per item" in text(row[1])

    running = section(html, "running")
    # the world's run is running: its predictions are all done (3 of 3)
    assert "Run #" in running and "Secret model run" in running
    assert f"{world.run.predictions.count()}/{world.run.predictions.count()}" in text(running)
    assert f"Judge job #{world.job.pk}" in running and "0/1" in text(running)
    # the section polls while something runs
    assert 'hx-get="/?part=running"' in html
    recent = section(html, "recent-runs")
    assert "Secret model run" in recent
    assert 'href="/runs/new/"' in html


def test_the_running_section_refreshes_alone_and_stops_when_nothing_runs(world: World) -> None:
    client = world.client("researcher")
    part = client.get("/", {"part": "running"}, headers={"HX-Request": "true"}).content.decode()
    assert part.lstrip().startswith('<section class="card"')
    assert "<html" not in part
    Run.objects.update(status=Run.Status.DONE)
    JudgeJob.objects.update(status=JudgeJob.Status.DONE)
    Judgment.objects.update(status=Judgment.Status.DONE)
    part = client.get("/", {"part": "running"}, headers={"HX-Request": "true"}).content.decode()
    assert "Nothing is running." in part and "hx-get" not in part
