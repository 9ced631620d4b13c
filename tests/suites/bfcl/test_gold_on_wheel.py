"""The gold oracle (evaluate.gold_text, gold_tool_calls) on every single-turn AST entry of the
pinned bfcl-eval wheel, in both modes, scored by the suite's own parts: it passes all of them
but seven, named here with why: entries no answer can pass, as BFCL's own checker reads them
(two of them Java lists of `any` whose answers hold numbers and booleans, which BFCL's
converter reads as text). In text mode Java and JavaScript entries count as decoding failures
(evaluate.py). Skipped, saying why, when the wheel cannot be had."""

from __future__ import annotations

from pathlib import Path

from benchmarks.kit.conformance import item_of
from benchmarks.kit.native import read_tool_calls
from benchmarks.kit.protocol import Context, NativeReply
from benchmarks.suites import bfcl
from benchmarks.suites.bfcl.importer import import_files
from tests.suites.bfcl.real_wheel import real_wheel  # noqa: F401 - a fixture

# The entries the gold cannot pass, with the reason found in the data.
NOT_PASSABLE = {
    # a required parameter whose only acceptable value is "" (left out)
    "live_multiple_507-149-4",
    # the answer gives journey_start_time, which the function it names does not declare
    "live_multiple_862-181-3",
    # the answer's parameter is "question", the function declares "statement" (required)
    "live_multiple_964-207-0",
    # required parameters whose lists of acceptable values are empty
    "live_simple_106-63-0",
    "live_simple_112-68-0",
    # an ArrayList of `any` whose answer holds numbers and booleans: BFCL's converter reads an
    # `any` element as its text, which no number or boolean equals
    "simple_java_36",
    "simple_java_65",
}
NOT_DECODED_IN_TEXT = ("simple_java", "simple_javascript")


def test_the_gold_passes_every_real_ast_entry_but_the_named_ones(
    real_wheel: Path,  # noqa: F811
) -> None:
    bundle = import_files([real_wheel])
    items = [item_of(s) for s in bundle.samples if s.split in bfcl.AST_CATEGORIES]
    assert len(items) == 3641
    evaluator = bfcl.SUITE.evaluator
    failed: dict[str, set[str]] = {"text": set(), "native": set()}
    for mode in failed:
        for entry in items:
            ctx = Context(task=evaluator.task(entry.split), options={"tool_mode": mode})
            if mode == "text":
                outcome = evaluator.parse(bfcl.gold_text(entry), entry, ctx, {})
            else:
                native = evaluator.native_prompt(entry, ctx, {})
                calls = bfcl.gold_tool_calls(entry)
                reply = NativeReply("", calls, read_tool_calls(calls, native.names), native.names)
                outcome = evaluator.native_outcome(reply, entry, ctx, {})
            if evaluator.score(outcome, entry, ctx, {})["accuracy"] != 100.0:
                failed[mode].add(entry.external_id)
    assert failed["native"] == NOT_PASSABLE
    text_only = {e.external_id for e in items if e.split in NOT_DECODED_IN_TEXT}
    assert len(text_only) == 150
    assert failed["text"] == NOT_PASSABLE | text_only
