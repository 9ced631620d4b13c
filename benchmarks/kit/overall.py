"""A suite's overall score: one number over its tasks' runs by one model, as its leaderboard
computes it (BFCL v4's weighted sum of sections), declared as data and computed here. Pure, no
Django.

A suite declares it in its registry entry (`Suite(..., overall=OverallScore(...))`): a tree of
`Section`s whose leaves are task names. Each section aggregates its parts (tasks or
sub-sections) in one of three ways:

- "mean": the unweighted mean of the parts' values (every part counts the same);
- "by_count": the mean weighted by the parts' numbers of items (a part's `n`: a task's scored
  items, a section's sum of its parts');
- "weighted": the mean weighted by the section's fixed `weights`, one per part (normalised by
  their sum).

A task's score is its run's headline metric (`OverallScore.metric`, in the run's unit) and its
count (`OverallScore.count`). A task without a score is missing, and so is every section above
it: its figure has no value and names the tasks it lacks (`Figure.missing`). A missing part is
never counted as zero (BFCL's own table does that; this one does not), so no number here is
made of fewer parts than the formula names.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "Aggregation",
    "Column",
    "Figure",
    "OverallScore",
    "Section",
    "TaskScore",
    "columns",
    "complete_weight",
    "figures",
    "section_figure",
]

Aggregation = Literal["mean", "by_count", "weighted"]
_NAME = re.compile(r"[a-z][a-z0-9_]*")


@dataclass(frozen=True, slots=True)
class TaskScore:
    """A task's figure from a run: its metric's value and the number of items it was
    computed over (n >= 1)."""

    value: float
    n: int

    def __post_init__(self) -> None:
        if isinstance(self.value, bool) or not math.isfinite(self.value):
            raise ValueError(f"a task's score must be a finite number, not {self.value!r}")
        if isinstance(self.n, bool) or not isinstance(self.n, int) or self.n < 1:
            raise ValueError(f"a task's score counts n >= 1 items, not {self.n!r}")


@dataclass(frozen=True, slots=True)
class Figure:
    """A section's or a task's figure: its value (None when missing), the items under it (the
    sum of its parts' n, those present), and the tasks it lacks, in the formula's order (empty:
    complete)."""

    value: float | None
    n: int
    missing: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        return not self.missing


@dataclass(frozen=True)
class Section:
    """One aggregate of the formula: `parts` (task names or sub-sections), aggregated as `how`
    says (see the module docstring); `weights`, one per part, only for "weighted"."""

    name: str
    title: str
    parts: tuple[str | Section, ...]
    how: Aggregation = "mean"
    weights: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        where = f"section {self.name!r}"
        if not _NAME.fullmatch(self.name):
            raise ValueError(f"{where}: a name of lower-case letters, digits and _")
        if not self.parts:
            raise ValueError(f"{where} has no part")
        if self.how not in ("mean", "by_count", "weighted"):
            raise ValueError(f"{where}: how is mean, by_count or weighted, not {self.how!r}")
        if self.how == "weighted":
            if len(self.weights) != len(self.parts):
                raise ValueError(
                    f"{where}: {len(self.weights)} weights for {len(self.parts)} parts"
                )
            if any(not math.isfinite(w) or w <= 0 for w in self.weights):
                raise ValueError(f"{where}: every weight is a positive number")
        elif self.weights:
            raise ValueError(f"{where}: weights are for how='weighted' only")

    def part_names(self) -> tuple[str, ...]:
        return tuple(part if isinstance(part, str) else part.name for part in self.parts)

    def tasks(self) -> tuple[str, ...]:
        """Every task under it, in the formula's order."""
        return tuple(
            name
            for part in self.parts
            for name in ((part,) if isinstance(part, str) else part.tasks())
        )

    def sections(self) -> Iterator[Section]:
        """It and every section under it, each before its sub-sections (the table's order)."""
        yield self
        for part in self.parts:
            if isinstance(part, Section):
                yield from part.sections()

    @property
    def formula(self) -> str:
        """How it is computed, in words ("the unweighted mean of a, b")."""
        names = self.part_names()
        if self.how == "weighted":
            weights = ", ".join(f"{n} {w:g}" for n, w in zip(names, self.weights, strict=True))
            return f"weighted {weights}"
        if self.how == "by_count":
            return f"the mean of {', '.join(names)} weighted by their numbers of items"
        return f"the unweighted mean of {', '.join(names)}"

    def weight_of(self, index: int) -> float:
        """The share (0..1) part `index` has in this section's value under "weighted" or
        "mean" (under "by_count" it depends on the counts: ValueError)."""
        if self.how == "weighted":
            return self.weights[index] / math.fsum(self.weights)
        if self.how == "mean":
            return 1.0 / len(self.parts)
        raise ValueError(f"section {self.name!r} weighs its parts by their counts")


@dataclass(frozen=True)
class OverallScore:
    """A suite's overall score: the formula (`score`, the root section), the run metric each
    task contributes (`metric`) and the one that counts its items (`count`), tasks shown beside
    it but not counted (`shown`: BFCL's live relevance), why the suite has no task for a name
    the formula counts (`absent`, shown where the suite has none), and where the formula comes
    from (`source`)."""

    score: Section
    metric: str = "accuracy"
    count: str = "n"
    shown: tuple[str, ...] = ()
    absent: Mapping[str, str] = field(default_factory=dict)
    source: str = ""
    description: str = ""

    def __post_init__(self) -> None:
        tasks = self.score.tasks()
        repeated = sorted({t for t in tasks if tasks.count(t) > 1})
        if repeated:
            raise ValueError(f"the overall score counts {', '.join(repeated)} more than once")
        names = [section.name for section in self.score.sections()]
        clash = sorted({n for n in names if names.count(n) > 1} | (set(names) & set(tasks)))
        if clash:
            raise ValueError(f"overall score: {', '.join(clash)} names two things")
        both = sorted(set(self.shown) & set(tasks))
        if both:
            raise ValueError(f"overall score: {', '.join(both)} is counted and shown beside")
        stray = sorted(set(self.absent) - set(tasks))
        if stray:
            raise ValueError(f"overall score: {', '.join(stray)} is absent but never counted")

    @property
    def tasks(self) -> tuple[str, ...]:
        """The tasks the formula counts, in its order."""
        return self.score.tasks()

    @property
    def sections(self) -> tuple[Section, ...]:
        """Every section, the overall first, each before its sub-sections."""
        return tuple(self.score.sections())


@dataclass(frozen=True, slots=True)
class Column:
    """One column of the overall table: a section or a task, its depth in the formula (the
    overall 0), and whether it is a task shown beside the formula but not counted."""

    name: str
    title: str
    section: bool
    depth: int
    shown_only: bool = False


def columns(overall: OverallScore) -> list[Column]:
    """The table's columns in BFCL's order: each section, then its parts (a sub-section with
    its own parts before the next part), the shown tasks last."""
    found: list[Column] = []

    def walk(section: Section, depth: int) -> None:
        found.append(Column(section.name, section.title, True, depth))
        for part in section.parts:
            if isinstance(part, Section):
                walk(part, depth + 1)
            else:
                found.append(Column(part, part, False, depth + 1))

    walk(overall.score, 0)
    found.extend(Column(task, task, False, 1, shown_only=True) for task in overall.shown)
    return found


def section_figure(section: Section, scores: Mapping[str, TaskScore | None]) -> Figure:
    """The section's figure from its tasks' scores (a task absent from `scores` or None there is
    missing): its value only when every task under it has a score."""
    parts = [_part_figure(part, scores) for part in section.parts]
    missing = tuple(name for part in parts for name in part.missing)
    n = sum(part.n for part in parts)
    if missing:
        return Figure(None, n, missing)
    values = [part.value for part in parts if part.value is not None]
    if section.how == "mean":
        value = math.fsum(values) / len(values)
    elif section.how == "by_count":
        value = math.fsum(v * part.n for v, part in zip(values, parts, strict=True)) / n
    else:
        total = math.fsum(section.weights)
        value = math.fsum(v * w for v, w in zip(values, section.weights, strict=True)) / total
    return Figure(value, n, ())


def _part_figure(part: str | Section, scores: Mapping[str, TaskScore | None]) -> Figure:
    if isinstance(part, Section):
        return section_figure(part, scores)
    found = scores.get(part)
    if found is None:
        return Figure(None, 0, (part,))
    return Figure(found.value, found.n, ())


def figures(overall: OverallScore, scores: Mapping[str, TaskScore | None]) -> dict[str, Figure]:
    """Every section's and every counted or shown task's figure, by name: the overall first,
    then each section before its sub-sections, then the tasks in the formula's order, then the
    shown ones."""
    found = {section.name: section_figure(section, scores) for section in overall.sections}
    for task in (*overall.tasks, *overall.shown):
        found[task] = _part_figure(task, scores)
    return found


def complete_weight(overall: OverallScore, found: Mapping[str, Figure]) -> float:
    """The share (0..1) of the overall's weight held by its complete parts: how much of the
    formula the runs cover (1.0: the overall has a value). Its parts weighted by count give no
    share until complete (their weights depend on the counts)."""
    root = overall.score
    if root.how == "by_count":
        return 1.0 if found[root.name].complete else 0.0
    return math.fsum(
        root.weight_of(index)
        for index, name in enumerate(root.part_names())
        if found[name].complete
    )
