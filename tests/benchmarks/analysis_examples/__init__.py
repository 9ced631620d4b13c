"""Example runs for every analysis a suite declares, for tests/benchmarks/test_analyses_declared.py.

One module per suite (named as the suite), each with

    EXAMPLES: dict[str, Callable[[], Example]]     task -> a run of it, built here

An example is a run made of real items (the seed data where there is some, else hand-made
ones) answered by rules that cover right, wrong, unread and failed answers, parsed and scored by
the suite's own functions: the generic test then holds every declared analysis to the
framework's promises on it. A suite that declares analyses for a task without an example here
fails that test, naming the module to add.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.kit.base import ImportBundle, SampleRecord
from benchmarks.kit.protocol import Context, Evaluator, Item, Scored, ToolSpec


@dataclass
class Example:
    evaluator: Evaluator
    ctx: Context
    records: list[Scored]
    # what the platform would hand the analyses beside the records (AnalysisInput.inputs)
    inputs: dict[str, Any] = field(default_factory=dict)


def item_of(record: SampleRecord) -> Item:
    return Item(
        split=record.split,
        external_id=record.external_id,
        input=record.input,
        reference=record.reference,
        kind=record.kind,
        candidate_tools=tuple(record.candidate_tools),
        metadata=record.metadata,
    )


def tools_of(bundle: ImportBundle) -> dict[str, ToolSpec]:
    return {
        tool.name: ToolSpec(
            tool.name, tool.description, tool.parameters, tool.returns, tool.category, tool.raw
        )
        for tool in bundle.tools
    }


def answered(
    evaluator: Evaluator,
    ctx: Context,
    item: Item,
    text: str | None,
    context: dict[str, Any] | None = None,
) -> Scored:
    """An item answered with `text` (None: the endpoint failed), parsed and scored by the
    suite, as the platform stores it."""
    context = context or {}
    outcome = None if text is None else evaluator.parse(text, item, ctx, context)
    return Scored(
        item=item,
        outcome=outcome,
        scores=evaluator.score(outcome, item, ctx, context),
        context=context,
        group=evaluator.cluster(item, ctx),
    )


def context_for(evaluator: Evaluator, task: str, **options: Any) -> Context:
    spec = evaluator.task(task)
    return Context(task=spec, options={**spec.defaults, **options})


def cycle(items: Sequence[Any], count: int) -> list[Any]:
    return [items[i % len(items)] for i in range(count)]
