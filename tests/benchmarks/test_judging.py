"""The pure part of judging: canonical pairwise verdicts, combining orders, position bias, pass
rate, repeats, the solvability majority, and the generic pairwise judge's parser."""

from __future__ import annotations

import pytest

from benchmarks.kit import judging
from benchmarks.kit.generic_judges import PAIRWISE, parse_pairwise
from benchmarks.kit.judging import (
    JudgeInput,
    JudgmentRecord,
    canonical_preference,
    combine_orders,
    majority_solvable,
    over_repeats,
    pairwise_summary,
    pass_rate,
    summarize,
)
from benchmarks.kit.protocol import Item, Outcome

ITEM = Item(split="s", external_id="1", input={"query": "Rain in Ghent?"})


@pytest.mark.parametrize(
    ("preferred", "order", "expected"),
    [(0, "AB", 1), (1, "AB", -1), (0, "BA", -1), (1, "BA", 1), (None, "AB", 0), (None, "BA", 0)],
)
def test_verdicts_are_stored_against_the_canonical_order(
    preferred: int | None, order: str, expected: int
) -> None:
    assert canonical_preference(preferred, order) == expected


def test_a_win_needs_both_orders() -> None:
    assert combine_orders(1, 1) == 1
    assert combine_orders(-1, -1) == -1
    assert combine_orders(1, -1) == 0
    assert combine_orders(0, 1) == 0
    assert combine_orders(None, 1) is None


def test_pairwise_summary_hand_computed() -> None:
    # items: A wins twice, first-position bias once, second-position bias once, a real tie, one
    # item with a missing order
    pairs = [(1, 1), (1, 1), (1, -1), (-1, 1), (0, 0), (1, None)]
    summary = pairwise_summary(pairs)
    assert summary["n"] == 5 and summary["incomplete"] == 1
    assert summary["win"] == pytest.approx(2 / 5)
    assert summary["tie"] == pytest.approx(3 / 5)
    assert summary["loss"] == 0
    assert summary["position_bias"] == pytest.approx(1 / 5)
    assert summary["second_position_bias"] == pytest.approx(1 / 5)
    assert summary["consistency"] == pytest.approx(3 / 5)


def test_pass_rate_and_repeats() -> None:
    assert pass_rate(["Solved", "Unsure", "Unsolved", "Solved"]) == pytest.approx(2.5 / 4)
    assert pass_rate([]) is None
    result = over_repeats([{"SoPR": 50.0}, {"SoPR": 60.0}, {"SoPR": 70.0}])
    assert result["SoPR"] == pytest.approx(60.0)
    # population standard deviation, as StableToolBench's scorer: sqrt(200 / 3)
    assert result["SoPR_std"] == pytest.approx(8.16496580927726)
    assert over_repeats([{"x": 1.0}, {"x": None}])["x_std"] == 0.0


def test_solvability_majority_of_three_needs_all_three() -> None:
    assert majority_solvable(["Solvable"] * 3) is True
    assert majority_solvable(["Solvable", "Solvable", "Unsolvable"]) is False
    assert majority_solvable([]) is None


def test_summarize_a_pairwise_job_leaves_unread_verdicts_out() -> None:
    records = [
        JudgmentRecord("s/1", 0, "AB", True, value=1.0),
        JudgmentRecord("s/1", 0, "BA", True, value=1.0),
        JudgmentRecord("s/2", 0, "AB", True, value=1.0),
        JudgmentRecord("s/2", 0, "BA", False),
    ]
    metrics = summarize(PAIRWISE, records)
    assert metrics["win"] == 100.0  # only s/1 has both orders read
    assert (metrics["items"], metrics["judgments"], metrics["unparsed_or_failed"]) == (2, 4, 1)


def judge_input() -> JudgeInput:
    return JudgeInput(item=ITEM, outputs=(Outcome("It will rain."), Outcome("No idea.")))


@pytest.mark.parametrize(
    ("text", "preferred"),
    [
        ('{"better": "1", "reason": "it answers"}', 0),
        ('Here is my verdict:\n```json\n{"better": "2", "reason": "x"}\n```\nThanks!', 1),
        ('{"better": "tie"}', None),
        ('{"reason": "both ok", "better": "Tie"} (they are close)', None),
        ("Answer 2 is better because it admits not knowing.", 1),
        ('1", "reason": "completes the pattern"}', 0),  # a base model continuing the prompt
    ],
)
def test_the_generic_pairwise_parser_reads_real_judge_texts(
    text: str, preferred: int | None
) -> None:
    verdict = parse_pairwise(text, judge_input())
    assert verdict.ok, verdict.error
    assert verdict.values == {"preferred": preferred}


@pytest.mark.parametrize("text", ["", "Both answers have merit.", '{"better": "3"}'])
def test_the_generic_pairwise_parser_refuses_what_it_cannot_read(text: str) -> None:
    verdict = parse_pairwise(text, judge_input())
    assert not verdict.ok and "better" in verdict.error


def test_the_generic_pairwise_prompt_shows_both_answers_in_the_given_order() -> None:
    prompt = PAIRWISE.build(judge_input())
    user = prompt.messages[-1]["content"]
    assert user.index("It will rain.") < user.index("No idea.")
    assert "Rain in Ghent?" in user and '"better"' in user
    assert prompt.text is not None and prompt.text.endswith('{"better": "')


def test_templates_are_registered_by_name() -> None:
    assert judging.template_named("generic.pairwise") is PAIRWISE
    with pytest.raises(ValueError, match="no judge template"):
        judging.template_named("nope")
