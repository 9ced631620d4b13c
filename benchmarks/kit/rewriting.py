"""A suite's description-rewriting experiment, as the platform runs it for any suite that
declares it (MetaTool's, papers/000 section 4.3, Figure 6): an LLM rewrites every tool
description, the same items are answered again on the new descriptions, and the change of the
task's success rate is reported overall and per tool. Pure Python, no Django.

The change is the paper's "percentage change": (after - before) / before x 100, None when before
is 0 or missing; the difference in points is given beside it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.kit.protocol import Item, Prompt, ToolSpec


@dataclass(frozen=True)
class DescriptionRewriting:
    """What a suite declares for the experiment.

    prompt(tool): the request for one tool's new description.
    read(text): the new description in an answer ("" when there is none: the tool keeps its own).
    tasks: the tasks whose prompts show descriptions (the ones worth rerunning).
    credited(item): the tools an item's score tells about (its gold tools).
    counted(scores, options): whether an item is in the metric's denominator.
    score: the per-item score (1 or 0) whose percentage is `metric`.
    prompt_file: the prompt's data file, named in the revision's note."""

    prompt: Callable[[ToolSpec], Prompt]
    read: Callable[[str], str]
    tasks: tuple[str, ...]
    credited: Callable[[Item], Sequence[str]]
    counted: Callable[[Mapping[str, Any], Mapping[str, Any]], bool]
    score: str = "correct"
    metric: str = "CSR"
    prompt_file: str = ""


@dataclass(frozen=True, slots=True)
class Change:
    """The metric before and after (percent, None without items), the items each counts, and the
    change: points after - before, and percent of before (None when before is 0 or missing)."""

    group: str
    n_before: int
    n_after: int
    before: float | None
    after: float | None

    @property
    def points(self) -> float | None:
        if self.before is None or self.after is None:
            return None
        return self.after - self.before

    @property
    def percent_change(self) -> float | None:
        if self.before is None or self.after is None or self.before == 0:
            return None
        return (self.after - self.before) / self.before * 100

    def row(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "n_before": self.n_before,
            "n_after": self.n_after,
            "before": self.before,
            "after": self.after,
            "change_points": self.points,
            "change_percent": self.percent_change,
        }


def _rate(values: Sequence[float]) -> float | None:
    return 100 * sum(values) / len(values) if values else None


def description_change(
    before: Iterable[tuple[Sequence[str], float | None]],
    after: Iterable[tuple[Sequence[str], float | None]],
) -> tuple[Change, list[Change]]:
    """The change overall and per tool (by name), from each run's items as (credited tools,
    correct): correct is 1 or 0, None for an item left out of the denominators (unparsed with
    unparsed="exclude"). Overall counts every item once; a tool counts the items credited to
    it (a multi-tool item counts for each of its tools)."""
    overall: dict[str, list[float]] = {"before": [], "after": []}
    per_tool: dict[str, dict[str, list[float]]] = {}
    for side, items in (("before", before), ("after", after)):
        for credited, correct in items:
            if correct is None:
                continue
            overall[side].append(float(correct))
            for tool in credited:
                per_tool.setdefault(tool, {"before": [], "after": []})[side].append(float(correct))
    total = Change(
        "overall",
        len(overall["before"]),
        len(overall["after"]),
        _rate(overall["before"]),
        _rate(overall["after"]),
    )
    tools = [
        Change(name, len(v["before"]), len(v["after"]), _rate(v["before"]), _rate(v["after"]))
        for name, v in sorted(per_tool.items())
    ]
    return total, tools
