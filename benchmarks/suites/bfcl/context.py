"""What a human needs to judge a BFCL output (the suite's item_context, benchmarks/kit/context.py):
the question as its turns of messages, the functions offered with their descriptions (a
sample carries them in its input: the benchmark holds Tool rows only for the multi-turn
classes), the gold as BFCL writes it and each output's calls.

- gold, single-turn: one call per expected call, each argument with its list of acceptable
  values ("" among them: the argument may be left out); multi-turn: the ground truth's calls,
  labelled by turn; the entries without a published answer: what is expected (no call, some
  call) as a fact.
- outputs: a single-turn answer's decoded calls (or why it did not decode); a multi-turn answer's
  executed calls labelled by turn, with BFCL's verdict and the turns passed.

Pure Python; every text is data the templates escape."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.kit.context import (
    ItemContext,
    JudgedOutput,
    OutputSummary,
    ShownCall,
    answer_calls,
    unread,
)
from benchmarks.kit.protocol import Item
from benchmarks.suites.bfcl.gold import (
    is_acceptable_gold,
    is_turns_gold,
    parse,
    read_acceptable,
)


def dialogue(sample_input: Mapping[str, Any]) -> list[dict[str, str]]:
    """The question's messages in order, each {"role", "content"} (a turn's messages follow
    each other; the model's answers between turns are not part of the entry)."""
    rows: list[dict[str, str]] = []
    question = sample_input.get("question")
    for turn in question if isinstance(question, list) else []:
        for message in turn if isinstance(turn, list) else []:
            if isinstance(message, Mapping):
                rows.append(
                    {
                        "role": str(message.get("role") or ""),
                        "content": str(message.get("content") or ""),
                    }
                )
    return rows


def descriptions(sample_input: Mapping[str, Any]) -> dict[str, str]:
    """name -> description of every function the entry offers (held-out ones included)."""
    docs: list[Any] = list(sample_input.get("functions") or [])
    missed = sample_input.get("missed_functions")
    if isinstance(missed, Mapping):
        for held in missed.values():
            docs.extend(held if isinstance(held, list) else [])
    return {
        str(doc["name"]): str(doc.get("description") or "")
        for doc in docs
        if isinstance(doc, Mapping) and isinstance(doc.get("name"), str)
    }


def _call_of(text: str, label: str) -> ShownCall:
    try:
        name, args, kwargs = parse(text)
    except ValueError:
        return ShownCall(name=text, arguments=None, label=label)
    arguments: dict[str, Any] = {f"argument {i}": value for i, value in enumerate(args, 1)}
    arguments.update(kwargs)
    return ShownCall(name=name, arguments=arguments, label=label)


def gold_view(reference: Any) -> OutputSummary | None:
    """The gold as a judge reads it (see the module docstring)."""
    if is_acceptable_gold(reference):
        calls = tuple(
            ShownCall(name=call["name"], arguments=call["arguments"])
            for call in read_acceptable(reference)
        )
        return OutputSummary(
            facts=(("Reads", 'each argument lists its acceptable values; "" = may be left out'),),
            calls=calls,
        )
    if is_turns_gold(reference):
        return OutputSummary(
            calls=tuple(
                _call_of(text, f"turn {turn}")
                for turn, texts in enumerate(reference, start=1)
                for text in texts
            )
        )
    if isinstance(reference, Mapping) and "expected" in reference:
        expected = {"no_call": "no call", "call": "some call"}.get(
            str(reference.get("expected")), str(reference.get("expected"))
        )
        return OutputSummary(facts=(("Expected", expected),))
    return None


def output_view(output: JudgedOutput) -> OutputSummary:
    """One output: its decoded calls, or a multi-turn answer's executed calls by turn."""
    answer = output.answer
    if unread(output):
        return OutputSummary()
    if isinstance(answer, Mapping) and "passed" in answer:
        calls = tuple(
            ShownCall(
                name=str(row["action"]),
                arguments=row.get("arguments"),
                label=f"turn {int(row.get('turn', 0)) + 1}",
            )
            for row in output.trace
            if isinstance(row, Mapping) and isinstance(row.get("action"), str)
        )
        share = answer.get("turn_accuracy")
        facts = [("Verdict", "passed" if answer["passed"] is True else "failed")]
        if isinstance(share, int | float):
            facts.append(("Turns passed", f"{100 * share:.0f}%"))
        if answer.get("reason"):
            facts.append(("Why", str(answer["reason"])))
        return OutputSummary(facts=tuple(facts), calls=calls)
    if isinstance(answer, Mapping) and answer.get("calls") is None and "failure" in answer:
        return OutputSummary(facts=(("Not decoded", str(answer["failure"])),))
    return OutputSummary(calls=answer_calls(answer))


def item_context(item: Item, show_gold: bool, outputs: Sequence[JudgedOutput] = ()) -> ItemContext:
    given = item.input if isinstance(item.input, Mapping) else {}
    return ItemContext(
        query=given.get("query"),
        turns=dialogue(given) or None,
        candidates=tuple(item.candidate_tools or ()),
        descriptions=descriptions(given),
        gold=item.reference if show_gold else None,
        gold_view=gold_view(item.reference) if show_gold else None,
        sides=tuple(output_view(output) for output in outputs),
    )
