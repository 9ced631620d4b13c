"""A multi-turn entry scored under a gold other than the one its verdict was made with (a refined
ground truth, evaluation/gold_versions.py), from the calls the model made, without asking it again.

A multi-turn run checks each entry once, when it ends (conversation.py: the model's calls and the
ground truth's executed with BFCL's classes), and its score reads that stored verdict. So that a
refined ground truth can be scored, each item's launch context records the ground truth the
launch saw (`prepare`: "ground_truth"); `score` reads the stored verdict when the item's gold is
still that one, and otherwise executes the model's stored calls (the answer's "turns", per turn
and step) and the item's ground truth again on fresh instances (multi_turn.run_isolated, the
pinned wheel's classes, as at run time) and scores that verdict. An answer that was
force-quit stays failed. A run launched before contexts recorded the ground truth has no record
to compare with: its stored verdicts are read as they are (a refined gold does not change them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.kit.protocol import Context, Item, Outcome, Scores
from benchmarks.suites.bfcl import conversation, multi_turn


def prepare_entries(items: Sequence[Item], ctx: Context) -> list[dict[str, Any]]:
    """conversation.prepare_entries, each context with the ground truth the launch saw."""
    contexts = conversation.prepare_entries(items, ctx)
    return [
        {**context, "ground_truth": item.reference}
        for context, item in zip(contexts, items, strict=True)
    ]


def rechecked(outcome: Outcome | None, item: Item, context: Mapping[str, Any]) -> bool:
    """Whether the stored verdict was made under another ground truth than the item's."""
    answer = outcome.answer if outcome is not None else None
    recorded = context.get("ground_truth")
    return (
        recorded is not None
        and recorded != item.reference
        and isinstance(answer, Mapping)
        and isinstance(answer.get("turns"), list)
        and not answer.get("worker_failed")
    )


def score_entry(
    outcome: Outcome | None, item: Item, ctx: Context, context: dict[str, Any]
) -> Scores:
    """The stored verdict's scores (conversation.score_entry), or, under another ground truth
    than the launch's, the scores of the model's stored calls checked again against the item's
    (see the module docstring). Needs the pinned wheel then: ValueError naming the item and
    `manage.py fetch_bfcl` without it (evaluation.gold_versions shows it as a refusal)."""
    if outcome is None or not rechecked(outcome, item, context):
        return conversation.score_entry(outcome, item, ctx, context)
    answer = outcome.answer
    assert isinstance(answer, Mapping)
    try:
        source = conversation.wheel_source()
    except ValueError as exc:
        raise ValueError(
            f"{item.split}/{item.external_id}: its ground truth was refined, and scoring it again "
            f"executes the model's calls with BFCL's classes: {exc}"
        ) from None
    verdict = multi_turn.run_isolated(source, multi_turn.entry_of(item), answer["turns"])
    passed = verdict.get("passed") is True and not answer.get("force_quit")
    share = verdict.get("turn_accuracy")
    return {
        "accuracy": 100.0 if passed else 0.0,
        "turn_accuracy": round(100.0 * float(share), 2) if isinstance(share, int | float) else 0.0,
    }
