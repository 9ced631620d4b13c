"""A judge sees what they judge: pairwise (and error-type) items show the context their suite
gives (the question, the tools offered with their descriptions, each side's parsed answer as
calls or picks), the gold only when the campaign says so, every model text escaped. (That it
reads the same few queries however many tools are offered: test_hot_paths.py.)"""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from annotation import services
from annotation.models import Campaign, Member
from evaluation.models import Endpoint, Prediction, Run
from tests.annotation.judge_items import HOSTILE, metatool_pair, mtubench_pair, pair_campaign
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
            name=f"errors {show}", kind="error_types", show_gold=show
        )
        services.items_from_failures(campaign=campaign, run=run)
        annotator = make_user()
        services.members_add(campaign=campaign, users=[annotator], role=Member.Role.ANNOTATOR)
        services.campaign_activate(campaign=campaign)
        html[show] = page_of(client, campaign, annotator)
    assert "forty-two" not in html[False] and "forty-two" in html[True]
    # the trace's call is written as a call
    assert "Calculator(expression=&quot;6*7-1&quot;)" in html[False]


# The other suites' pairs, each with markup in what a model wrote: (suite, task, sample, tools,
# the two sides, what the page must show, the gold's text shown only with show_gold).
OTHER_SUITES: dict[
    str, tuple[str, dict[str, Any], dict[str, str], list[dict[str, Any]], list[str], str]
] = {
    "stabletoolbench": (
        "pass_rate",
        {
            "split": "G1_instruction",
            "input": {"query": "Find a ferry to Bilbao"},
            "reference": {
                "relevant_apis": [["Ferries", "departures"]],
                "relevant_tools": ["ferries_departures"],
            },
            "candidate_tools": ["ferries_departures", "weather_now"],
        },
        {"ferries_departures": "Ferry departures from a port.", "weather_now": "The weather now."},
        [
            {
                "output": "{}",
                "answer": f"The 10:00 ferry {HOSTILE}",
                "parsed": True,
                "trace": [
                    {
                        "thought": "look",
                        "action": "ferries_departures",
                        "arguments": {"to": "Bilbao"},
                        "observation": '{"error": "", "response": "10:00"}',
                    },
                ],
            },
            {"output": f"not json {HOSTILE}", "parsed": False},
        ],
        [
            "Ferry departures from a port.",
            "<dt>Trace</dt><dd>1 call to ferries_departures</dd>",
            "ferries_departures(to=&quot;Bilbao&quot;)",
            "not an answer object (its text below)",
        ],
        "<dt>Relevant APIs</dt><dd>ferries_departures</dd>",
    ),
    "wtueval": (
        "R2",
        {
            "split": "gsm8k",
            "input": {"query": "What is 12 * 7?"},
            "reference": {"answer": 84, "kind": "tool"},
        },
        {},
        [
            {
                "output": "...",
                "answer": "84",
                "parsed": True,
                "context": {"tools": ["Calculator"]},
                "trace": [
                    {
                        "thought": HOSTILE,
                        "action": "Calculator",
                        "arguments": {"expression": "12*7"},
                        "tools": ["Calculator"],
                    },
                    {"action": "Finish", "arguments": {"answer": "84"}, "stop": "final_answer"},
                ],
            },
            {
                "output": "...",
                "answer": HOSTILE,
                "parsed": True,
                "context": {"tools": ["Calculator"]},
                "trace": [
                    {
                        "action": "Finish",
                        "arguments": {"answer": "x"},
                        "tools": ["Calculator"],
                        "stop": "final_answer",
                    }
                ],
            },
        ],
        [
            "<code>Calculator</code>",  # the tool offered, by its name (the platform serves it)
            "<dt>Decision</dt><dd>calls a tool first (Calculator)</dd>",
            "Calculator(expression=&quot;12*7&quot;)",
            "<dt>Decision</dt><dd>answers directly, no tool call</dd>",
        ],
        "<dt>Gold answer</dt><dd>84</dd>",
    ),
    "ultratool": (
        "tool_usage",
        {
            "input": {"query": "Save a note for Ann"},
            "reference": {
                "steps": [
                    {
                        "step": "1",
                        "text": "Write it",
                        "tool": "file_write",
                        "arguments": {"path": "gold.txt"},
                    }
                ],
                "tool_usage": [
                    {"step": "1", "tool": "file_write", "arguments": {"path": "gold.txt"}}
                ],
            },
            "candidate_tools": ["file_write"],
            "kind": "plan",
        },
        {"file_write": "Write text to a file."},
        [
            {
                "output": "...",
                "answer": [{"step": "1", "tool": "file_write", "arguments": {"path": HOSTILE}}],
                "parsed": True,
            },
            {"output": f"[oops {HOSTILE}", "parsed": False},
        ],
        [
            "Write text to a file.",
            "file_write(path=&quot;&lt;script&gt;alert(\\&quot;judge\\&quot;)&lt;/script&gt;&quot;)",
            "not read from the text (below)",
        ],
        "file_write(path=&quot;gold.txt&quot;)",
    ),
}


@pytest.mark.parametrize("suite", sorted(OTHER_SUITES))
def test_every_suite_gives_a_pair_its_context(client: Client, suite: str) -> None:

    task, sample, tools, sides, shown, gold = OTHER_SUITES[suite]
    pages = {}
    for show in (False, True):
        campaign, annotator = pair_campaign(
            suite=suite, task=task, sample=sample, tools=tools, sides=sides, show_gold=show
        )
        pages[show] = page_of(client, campaign, annotator)
    for text in shown:
        assert text in pages[False], text
    assert "<script>alert" not in pages[False] + pages[True]
    assert "&lt;script&gt;alert(" in pages[False]
    assert gold not in pages[False] and "Gold answer" not in pages[False]
    assert gold in pages[True]
