"""MTU-Bench's outputs read step by step (benchmarks/suites/mtubench/traces.py).

Pure: the samples are the seed files' dialogues imported by the suite's importer; the outputs are
answers as a text run stores them (the suite's own parse, and its scores).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.kit.context import JudgedOutput, ShownCall
from benchmarks.kit.protocol import Context, Item
from benchmarks.kit.registry import get_suite
from benchmarks.kit.traces import NotATrace, Trace, TraceStep
from benchmarks.suites import mtubench
from benchmarks.suites.mtubench.traces import trace

LOOKUP = (
    "{'album': 'My Everything', 'artist': 'Ariana Grande', 'genre': 'Pop', "
    "'song_name': 'Be My Baby'}"
)


@pytest.fixture(scope="module")
def samples(seeddata: Path) -> dict[str, Item]:
    folder = seeddata / "mtubench"
    bundle = mtubench.import_files([folder / "M-S_eval.jsonl", folder / "M-M_eval.jsonl"])
    return {
        s.external_id: Item(
            split=s.split,
            external_id=s.external_id,
            input=s.input,
            reference=s.reference,
            kind=s.kind,
            candidate_tools=tuple(s.candidate_tools),
            metadata=s.metadata,
        )
        for s in bundle.samples
    }


def run_output(item: Item, text: str, *, stored_scores: bool = True) -> JudgedOutput:
    """The answer as a text run stores it: parsed and scored by the suite."""
    ctx = Context(task=mtubench.TASKS[item.split])
    outcome = mtubench.parse(text, item, ctx, {})
    scores = mtubench.score(outcome, item, ctx, {}) if stored_scores else {}
    return JudgedOutput(
        task=item.split, text=text, answer=outcome.answer, note=outcome.note, scores=scores
    )


def single(name: str, arguments: Any) -> str:
    return f"Thought: I will call it.\nAction: {name}\nAction Input: {json.dumps(arguments)}"


PLAY = {"playback_device": "kitchen speaker", "song_name": "Be My Baby", "artist": "Ariana Grande"}


def test_a_single_tool_turn_with_its_dialogue(samples: dict[str, Item]) -> None:
    # given: M-S_0_2, two given turns (a call with its observation, then a turn without one)
    item = samples["M-S_0_2"]
    text = single("PlayMedia", PLAY)

    # when
    got = trace(item, run_output(item, text))

    # then
    assert got == Trace(
        history=(
            TraceStep(
                label="turn 1 (given)",
                calls=(ShownCall("LookupMusic", {}, "turn 1 (given)"),),
                results=(LOOKUP,),  # a Python literal, not JSON: kept as the text
                user="Find some music please.",
                text="The user has asked for a music recommendation without providing any "
                "specific details, so I will call the LookupMusic API without any filters.\n"
                "Ok, how about Be My Baby by Ariana Grande of her My Everything album?",
            ),
            TraceStep(
                label="turn 2 (given)",
                user="That sounds good.",
                text="The user seems happy with the recommendation but no further action is "
                "requested yet.\nShould I play this now?",
            ),
        ),
        steps=(
            TraceStep(
                label="turn 3",
                calls=(ShownCall("PlayMedia", PLAY, "turn 3"),),
                user="Yes. Play on any available device please. No wait. Play on kitchen "
                "speaker please. Yes, that's right.",
                text=text,
                auto_error="",
            ),
        ),
        schemas={tool["name"]: tool["parameters"] for tool in item.input["tools"]},
        auto_verdict=True,
    )


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (single("PlayMedia", {**PLAY, "playback_device": "bedroom"}), "wrong_argument"),
        (single("LookupMusic", {}), "wrong_tool"),
        ("Thought: I should ask first.\nWhich song?", "missed_call"),
        ("Thought: x\nAction: PlayMedia\nAction Input: {'song_name': Be My Baby}", "format"),
    ],
)
def test_a_wrong_single_tool_turn_gets_the_analysis_error_type(
    samples: dict[str, Item], text: str, error: str
) -> None:
    item = samples["M-S_0_2"]
    for stored in (True, False):  # the stored scores, or scored again
        got = trace(item, run_output(item, text, stored_scores=stored))
        assert (got.steps[-1].auto_error, got.auto_verdict) == (error, False)


def test_a_call_where_none_was_due_is_unnecessary(samples: dict[str, Item]) -> None:
    # given: M-S_0_1's gold is no call ("That sounds good.")
    item = samples["M-S_0_1"]
    assert item.reference["calls"] == []

    # when
    got = trace(item, run_output(item, single("PlayMedia", PLAY)))

    # then
    assert got.steps[-1].auto_error == "unnecessary_call"
    assert got.steps[-1].calls == (ShownCall("PlayMedia", PLAY, "turn 2"),)


def multi(*calls: tuple[str, Any]) -> str:
    return "Thought: t\n" + "\n".join(
        f"Action: {name}\nAction Input: {json.dumps(arguments)}" for name, arguments in calls
    )


ADJUST = {"temperature": "get_current_temperature.temperature", "location": "bedroom"}
FETCH = {"location": "living room"}


def test_a_multi_tool_turn_with_calls_that_record_no_result(samples: dict[str, Item]) -> None:
    # given: M-M_1_2, an earlier turn whose call the data gives no result
    item = samples["M-M_1_2"]
    text = multi(("adjust_room_temperature", ADJUST))

    # when
    got = trace(item, run_output(item, text))

    # then
    assert [s.label for s in got.history] == ["turn 1 (given)", "turn 2 (given)"]
    assert [s.label for s in got.steps] == ["turn 3"]
    given = got.history[1]
    assert given.calls == (ShownCall("get_current_temperature", FETCH, "turn 2 (given)"),)
    assert given.results == (None,)
    assert given.text == "Sure, one moment while I fetch that information for you."
    assert got.steps[0].user.startswith("Once you get that")
    assert (got.steps[0].auto_error, got.auto_verdict) == ("", True)
    # Other tools, or a gold tool left out beside an extra one:
    wrong = trace(item, run_output(item, multi(("adjust_lighting", {"location": "bedroom"}))))
    assert wrong.steps[-1].auto_error == "wrong_tool"
    bad = trace(item, run_output(item, multi(("adjust_room_temperature", {"location": "x"}))))
    assert bad.steps[-1].auto_error == "wrong_argument"
    none = trace(item, run_output(item, "Thought: nothing to do."))
    assert none.steps[-1].auto_error == "missed_call"


def test_a_sample_alone_reads_as_the_benchmarks_dialogue(samples: dict[str, Item]) -> None:
    item = samples["M-S_0_2"]
    got = trace(item, None)
    assert len(got.history) == 2
    assert got.steps == (
        TraceStep(
            label="turn 3",
            calls=(ShownCall("PlayMedia", PLAY, "turn 3"),),
            user=item.input["query"],
        ),
    )
    assert got.auto_verdict is None


@pytest.mark.parametrize(
    "given",
    [
        {},
        {"turns": "not a list"},
        {"turns": [None, 3, {"role": "tool", "content": "orphan"}, {"role": "assistant"}]},
        {"turns": [{"role": "assistant", "tool_calls": [{"name": 3, "arguments": "{bad"}]}]},
    ],
)
def test_degenerate_samples_still_read(given: dict[str, Any]) -> None:
    item = Item(split="M-S", external_id="x", input=given, reference=None)
    got = trace(item, JudgedOutput(text="Action: A\nAction Input: {", answer=None))
    assert isinstance(got, Trace)
    assert got.steps[-1].label.startswith("turn")


def test_an_unknown_split_is_not_a_trace() -> None:
    item = Item(split="X-Y", external_id="1", input={"prompt": "q"})
    with pytest.raises(NotATrace):
        trace(item, JudgedOutput(text="Action: A"))


def test_the_suite_declares_its_trace() -> None:
    assert get_suite("mtubench").trace is trace
