"""Pairwise campaigns of two hand-made runs over one sample of a suite, as a judge gets them
(tests/annotation/test_judge_context.py and the browser tests)."""

from __future__ import annotations

from typing import Any

from annotation import services
from annotation.models import Campaign, Member
from evaluation.models import Endpoint, Prediction, Run
from tests.factories import make_benchmark, make_sample, make_tool, make_user

HOSTILE = '<script>alert("judge")</script>'


def pair_campaign(
    *,
    suite: str,
    task: str,
    sample: dict[str, Any],
    tools: dict[str, str],
    sides: list[dict[str, Any]],
    show_gold: bool = False,
    name: str = "",
) -> tuple[Campaign, Any]:
    """A pairwise campaign (open, one annotator) of one sample of `suite` answered by two runs of
    `task`; `sides` are the two predictions' fields (output, answer, parsed, context, trace)."""
    benchmark = make_benchmark(suite=suite)
    for tool, description in tools.items():
        make_tool(benchmark=benchmark, name=tool, description=description)
    stored = make_sample(benchmark=benchmark, **sample)
    endpoint = Endpoint.objects.create(
        name=f"e-{benchmark.pk}", base_url="http://127.0.0.1:9/v1", model="m"
    )
    runs = [
        Run.objects.create(
            benchmark=benchmark,
            task=task,
            endpoint=endpoint,
            status=Run.Status.DONE,
            model_name=f"model-{side}",
        )
        for side in "ab"
    ]
    for run, fields in zip(runs, sides, strict=True):
        Prediction.objects.create(
            run=run, sample=stored, position=0, status=Prediction.Status.DONE, **fields
        )
    campaign = services.campaign_create(
        name=name or f"pair {suite} {benchmark.pk}",
        kind="pairwise",
        show_gold=show_gold,
        randomize_sides=False,
    )
    services.items_from_runs(campaign=campaign, run_a=runs[0], run_b=runs[1])
    annotator = make_user()
    services.members_add(campaign=campaign, users=[annotator], role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=campaign)
    return campaign, annotator


METATOOL_TOOLS = {
    "WeatherTool": "Current weather and forecasts for any city.",
    "NewsTool": "Headlines from the world's newspapers.",
    "MapTool": "Directions and maps between two places.",
}


def metatool_pair(*, show_gold: bool = False, extra_tools: int = 0) -> tuple[Campaign, Any]:
    """A MetaTool selection pair: run A picks the right tool, run B's text cannot be read and
    carries markup."""
    tools = dict(METATOOL_TOOLS)
    tools.update({f"Filler{i}": f"Filler tool {i}." for i in range(extra_tools)})
    candidates = list(tools)
    return metatool_pair_of(tools, candidates, show_gold=show_gold)


def metatool_pair_of(
    tools: dict[str, str], candidates: list[str], *, show_gold: bool = False
) -> tuple[Campaign, Any]:
    return pair_campaign(
        suite="metatool",
        task="similar",
        sample={
            "split": "queries",
            "input": {"query": "Will it rain in Paris tomorrow?"},
            "reference": {"tool": "WeatherTool"},
        },
        tools=tools,
        sides=[
            {
                "output": "WeatherTool",
                "answer": ["WeatherTool"],
                "parsed": True,
                "context": {"candidates": candidates},
            },
            {
                "output": f"Maybe ask someone {HOSTILE}",
                "answer": [],
                "parsed": False,
                "context": {"candidates": candidates},
            },
        ],
        show_gold=show_gold,
    )


MTU_TURNS = [
    {"role": "user", "content": "What's the weather like in Ghent on Friday?"},
    {
        "role": "assistant",
        "tool_calls": [{"name": "GetWeather", "arguments": {"city": "Ghent", "date": "Friday"}}],
    },
    {"role": "tool", "name": "GetWeather", "content": '{"forecast": "rain", "high": 12}'},
    {"role": "assistant", "content": "Rain, with a high of 12 degrees."},
    {"role": "user", "content": "Then play some jazz by Chet Baker in the living room."},
]


def mtubench_pair(*, show_gold: bool = False) -> tuple[Campaign, Any]:
    """An MTU-Bench multi-turn pair: run A calls the right tool with a long argument list, run B
    calls another with markup in an argument."""
    long_call = {
        "name": "PlayMedia",
        "arguments": {
            "artist": "Chet Baker",
            "genre": "jazz",
            "device": "living room speaker",
            "playlist_note": 'the one called "Let\'s get lost"',
        },
    }
    return pair_campaign(
        suite="mtubench",
        task="M-S",
        sample={
            "split": "M-S",
            "external_id": "M-S_9_1",
            "input": {
                "query": MTU_TURNS[-1]["content"],
                "turns": MTU_TURNS,
                "tools": [],
            },
            "reference": {"calls": [{"name": "PlayMedia", "arguments": {"artist": "Chet Baker"}}]},
            "candidate_tools": ["GetWeather", "PlayMedia", "LookupMusic"],
            "metadata": {"turn": 1, "dialogue": "M-S_9"},
        },
        tools={
            "GetWeather": "The weather of a city on a day.",
            "PlayMedia": "Play a song, an artist or a genre on a device.",
            "LookupMusic": "Find songs by artist, album or genre.",
        },
        sides=[
            {
                "output": "Action: PlayMedia\nAction Input: {...}",
                "answer": {"calls": [long_call]},
                "parsed": True,
            },
            {
                "output": f'Action: LookupMusic\nAction Input: {{"artist": "{HOSTILE}"}}',
                "answer": {"calls": [{"name": "LookupMusic", "arguments": {"artist": HOSTILE}}]},
                "parsed": True,
            },
        ],
        show_gold=show_gold,
    )
