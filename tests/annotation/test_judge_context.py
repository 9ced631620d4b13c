"""A judge sees what they judge: pairwise (and error-type) items show the context their suite
gives (the question, the tools offered with their descriptions, each side's parsed answer as
calls or picks), the gold only when the campaign says so, every model text escaped, and the
page reads the same few queries however many tools are offered."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation import services
from annotation.models import Campaign, Member
from evaluation.models import Endpoint, Prediction, Run
from tests.annotation.judge_items import metatool_pair, mtubench_pair
from tests.factories import make_benchmark, make_sample, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def clean_cache() -> None:
    cache.clear()


def page_of(client: Client, campaign: Campaign, annotator: Any) -> str:
    client.force_login(annotator)
    response = client.get(f"/annotate/{campaign.pk}/")
    assert response.status_code == 200
    return response.content.decode()


def assert_inert(html: str) -> None:
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(&quot;judge&quot;)&lt;/script&gt;" in html


def test_a_metatool_pair_shows_query_candidates_and_each_pick_without_the_gold(
    client: Client,
) -> None:
    campaign, annotator = metatool_pair()
    html = page_of(client, campaign, annotator)
    assert "Will it rain in Paris tomorrow?" in html
    # the candidates the runs offered, with their descriptions
    for text in ("WeatherTool", "Headlines from the world&#x27;s newspapers.", "MapTool"):
        assert text in html
    assert "3 tools offered" in html
    # each side's parsed pick; the unreadable one says so and shows its text, escaped
    assert "<dt>Pick</dt><dd>WeatherTool</dd>" in html
    assert "<dt>Pick</dt><dd>not read from the text</dd>" in html
    assert_inert(html)
    # the gold stays hidden by default
    assert "Gold answer" not in html and "Gold tool" not in html


def test_the_gold_shows_only_when_the_campaign_says_so(client: Client) -> None:
    campaign, annotator = metatool_pair(show_gold=True)
    html = page_of(client, campaign, annotator)
    assert "Gold answer" in html and "<dt>Gold tool</dt><dd>WeatherTool</dd>" in html
    # the API gives what the page gives
    body = client.post(f"/api/campaigns/{campaign.pk}/next/").json()
    assert body["item"]["sample"]["reference"] == {"tool": "WeatherTool"}
    assert [s["summary"]["facts"] for s in body["item"]["sides"]] == [
        [["Pick", "WeatherTool"]],
        [["Pick", "not read from the text"], ["Tools it names", "none"]],
    ]


def test_an_mtubench_pair_shows_the_dialogue_and_calls_as_calls(client: Client) -> None:
    campaign, annotator = mtubench_pair()
    html = page_of(client, campaign, annotator)
    # the dialogue so far, its earlier call written as a call
    assert "What&#x27;s the weather like in Ghent on Friday?" in html
    assert "GetWeather(city=&quot;Ghent&quot;, date=&quot;Friday&quot;)" in html
    assert "Then play some jazz by Chet Baker in the living room." in html
    # the tools offered, described
    assert "Play a song, an artist or a genre on a device." in html
    # side A's long call: its keys on the call (in the order the database keeps them), its
    # values in a table; never a dict repr
    assert "PlayMedia(genre, artist, device, playlist_note)" in html
    assert "<code>playlist_note</code>" in html
    assert "{&#x27;artist&#x27;" not in html and "{'artist'" not in html
    # side B's call with markup in an argument, escaped
    assert "LookupMusic(artist=&quot;&lt;script&gt;alert(\\&quot;judge\\&quot;)" in html
    assert "<script>alert" not in html
    assert "turn 2" in html
    assert "Gold answer" not in html


def test_an_mtubench_gold_is_shown_as_calls_when_asked(client: Client) -> None:
    campaign, annotator = mtubench_pair(show_gold=True)
    html = page_of(client, campaign, annotator)
    assert "Gold answer" in html and "PlayMedia(artist=&quot;Chet Baker&quot;)" in html


def test_an_error_type_item_hides_the_expected_answer_unless_asked(client: Client) -> None:
    html = {}
    for show in (False, True):
        benchmark = make_benchmark()
        endpoint = Endpoint.objects.create(
            name=f"e{show}", base_url="http://127.0.0.1:9/v1", model="m"
        )
        run = Run.objects.create(
            benchmark=benchmark, task="answer", endpoint=endpoint, status=Run.Status.DONE
        )
        Prediction.objects.create(
            run=run,
            sample=make_sample(benchmark=benchmark, reference={"answer": "forty-two"}),
            position=0,
            status=Prediction.Status.FAILED,
            output="41",
            trace=[{"action": "Calculator", "arguments": {"expression": "6*7-1"}}],
        )
        campaign = services.campaign_create(
            name=f"errors {show}", kind=Campaign.Kind.ERROR_TYPES, show_gold=show
        )
        services.items_from_failures(campaign=campaign, run=run)
        annotator = make_user()
        services.members_add(campaign=campaign, users=[annotator], role=Member.Role.ANNOTATOR)
        services.campaign_activate(campaign=campaign)
        html[show] = page_of(client, campaign, annotator)
    assert "forty-two" not in html[False] and "forty-two" in html[True]
    # the trace's call is written as a call
    assert "Calculator(expression=&quot;6*7-1&quot;)" in html[False]


def queries_of_next(client: Client, campaign: Campaign, annotator: Any) -> int:
    client.force_login(annotator)
    client.get("/annotate/")  # the session is read into the cache
    with CaptureQueriesContext(connection) as captured:
        response = client.post(f"/api/campaigns/{campaign.pk}/next/")
    assert response.status_code == 200
    return len(captured.captured_queries)


def test_a_pairwise_item_reads_as_many_queries_with_3_tools_as_with_80(client: Client) -> None:
    few, few_annotator = metatool_pair()
    many, many_annotator = metatool_pair(extra_tools=77)
    assert len(many.items.get().prediction.context["candidates"]) == 80
    assert queries_of_next(client, few, few_annotator) == queries_of_next(
        client, many, many_annotator
    )
