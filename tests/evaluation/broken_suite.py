"""A suite module for tests only: the toy parity suite (tests/benchmarks/toy_suite) whose
aggregate raises, as a suite's own defect would, after every item was answered and scored. It
passes every check at launch: nothing but finishing a run of it fails."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from benchmarks.kit.protocol import Context, Scored, Scores
from tests.benchmarks.toy_suite import SUITE as TOY


def aggregate(scored: Sequence[Scored], ctx: Context) -> Scores:
    raise RuntimeError(f"the aggregate of {len(scored)} items broke")


SUITE = replace(
    TOY,
    name="broken_test",
    default_benchmark="Broken parity",
    evaluation=tuple(replace(task, aggregate=aggregate) for task in TOY.evaluation),
    conformance="",
)
