"""What the toy suite promises: its metrics on even and odd numbers answered right, wrong,
unreadably and not at all; no exporter."""

from __future__ import annotations

from collections.abc import Iterator

from benchmarks.kit.conformance import Conformance, Files, MetricCase, parsed
from benchmarks.kit.protocol import Context, Item
from benchmarks.kit.registry import get_suite


def metric_cases(task: str, files: Files) -> Iterator[MetricCase]:
    suite = get_suite("toy").evaluator
    ctx = Context(task=suite.task(task))
    items = [Item("test", str(n), {"query": f"Is {n} even?"}, {"even": n % 2 == 0}) for n in (2, 3)]
    texts = ["Yes.", "No.", "Maybe.", None]
    yield MetricCase([parsed(suite, ctx, item, text) for item in items for text in texts])


CONFORMANCE = Conformance(
    metric_cases=metric_cases,
    no_exporter="a toy: the platform's JSONL export is all it needs",
)
