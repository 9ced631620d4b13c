"""A suite module for tests only: the toy parity suite (tests/benchmarks/toy_suite) whose
aggregate raises, as a suite's own defect would, after every item was answered and scored. It
passes every check at launch: nothing but finishing a run of it fails."""

from __future__ import annotations

from collections.abc import Sequence

from benchmarks.kit.protocol import Context, Scored, Scores
from tests.benchmarks.toy_suite import TASKS, build_prompt, import_files, parse, score

name = "broken_test"
default_benchmark = "Broken parity"

__all__ = ["TASKS", "aggregate", "build_prompt", "import_files", "parse", "score"]


def aggregate(scored: Sequence[Scored], ctx: Context) -> Scores:
    raise RuntimeError(f"the aggregate of {len(scored)} items broke")
