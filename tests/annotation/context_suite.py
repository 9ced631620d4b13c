"""A suite, only in the test tree, whose items need more context than a sample's own fields (a
suite's item_context capability): the annotation studio shows what it says."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from benchmarks.kit.registry import ItemContext
from benchmarks.suites import generic


def _context(item: Any, show_gold: bool, outputs: Any = ()) -> ItemContext:
    return ItemContext(
        query=f"{item.input['asked']} (asked in {item.metadata['city']})",
        candidates=("forecast",),
        gold={"gold": item.reference} if show_gold else None,
    )


SUITE = replace(generic.SUITE, item_context=_context)
