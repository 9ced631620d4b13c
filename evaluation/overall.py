"""A benchmark's overall score, where its suite declares one (registry.Suite.overall,
benchmarks/kit/overall.py): one row per model and tool mode, each figure computed from that
model's runs of the tasks the formula counts.

Which runs count: the benchmark's finished runs (status done) that name a model
(`Run.model_name`, fixed at launch) and were made on the benchmark's own tool descriptions (no
`tool_revision`), grouped by model and tool mode (text is BFCL's Prompt mode, native its FC
mode: apart, as BFCL's table keeps them); of each group, the latest finished run of each task
(`finished_at`, a run without one counting as the oldest, then the highest id). A task of the
formula without such a run, or whose run has no value of the formula's metric, is missing, and
so is every figure above it. A task whose spec says its runs are not comparable with the
benchmark's published scores (TaskSpec.not_comparable) is never counted, whatever its runs: it
stays missing, with that reason."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db.models import F

from benchmarks.kit.base import ImportFormatError
from benchmarks.kit.overall import (
    Column,
    Figure,
    OverallScore,
    TaskScore,
    columns,
    complete_weight,
    figures,
)
from benchmarks.kit.protocol import TaskSpec
from benchmarks.kit.registry import get_suite
from benchmarks.models import Benchmark
from evaluation.models import Run

__all__ = ["Board", "BoardRow", "Cell", "overall_board", "overall_boards", "overall_of"]

MODES = {Run.ToolMode.NATIVE: "native (FC)", Run.ToolMode.TEXT: "text (Prompt)"}


@dataclass(frozen=True)
class Cell:
    """One figure of a row: its column, its figure, the run it comes from (a task's), and why
    it is missing in words ("" when it is not)."""

    column: Column
    figure: Figure
    run: Run | None = None
    missing: str = ""
    # the run answered only part of the task's items (an item limit)
    subset: bool = False


@dataclass(frozen=True)
class BoardRow:
    model: str
    tool_mode: str
    cells: list[Cell]
    overall: Figure
    # the share (0..1) of the overall's weight its complete sections hold
    complete: float
    runs: dict[str, Run] = field(default_factory=dict)

    @property
    def mode_label(self) -> str:
        return MODES.get(self.tool_mode, self.tool_mode)

    @property
    def complete_percent(self) -> float:
        return round(100.0 * self.complete, 2)

    @property
    def subset(self) -> bool:
        return any(cell.subset for cell in self.cells)


@dataclass(frozen=True)
class Board:
    overall: OverallScore
    columns: list[Column]
    rows: list[BoardRow]
    # finished runs left out: without a model name, or on rewritten tool descriptions
    unnamed: int = 0
    rewritten: int = 0
    # tasks of the formula whose runs are never counted, each with why (not_counted)
    never_counted: dict[str, str] = field(default_factory=dict)


def overall_of(benchmark: Benchmark) -> OverallScore | None:
    """The overall score the benchmark's suite declares (None: none, or a suite this version
    does not know)."""
    try:
        return get_suite(benchmark.suite).overall
    except ImportFormatError:  # a suite this version does not know: its pages say so
        return None


def overall_boards() -> list[tuple[int, str]]:
    """(id, name) of each benchmark with a run whose suite declares an overall score."""
    found = Benchmark.objects.filter(runs__isnull=False).distinct().order_by("name", "pk")
    return [(b.pk, b.name) for b in found.only("pk", "name", "suite") if overall_of(b)]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def task_score(run: Run, overall: OverallScore) -> TaskScore | None:
    """The run's figure for the formula: its metric and its count (None when either is not a
    number, or the count is not a whole number of at least 1)."""
    value = _number(run.metrics.get(overall.metric))
    count = _number(run.metrics.get(overall.count))
    if value is None or count is None or count < 1 or not count.is_integer():
        return None
    try:
        return TaskScore(value, int(count))
    except ValueError:
        return None


def latest_runs(benchmark: Benchmark, tasks: set[str]) -> dict[tuple[str, str], dict[str, Run]]:
    """{(model, tool mode): {task: its latest finished run}} over the runs that count (the
    module's docstring)."""
    runs = (
        Run.objects.filter(
            benchmark=benchmark,
            status=Run.Status.DONE,
            task__in=sorted(tasks),
            tool_revision__isnull=True,
        )
        .exclude(model_name="")
        .order_by("model_name", "tool_mode", "task", F("finished_at").desc(nulls_last=True), "-pk")
    )
    found: dict[tuple[str, str], dict[str, Run]] = {}
    for run in runs:
        found.setdefault((run.model_name, run.tool_mode), {}).setdefault(run.task, run)
    return found


def _cell(
    column: Column,
    figure: Figure,
    run: Run | None,
    overall: OverallScore,
    known: Mapping[str, TaskSpec],
) -> Cell:
    if column.section:
        missing = f"missing: {', '.join(figure.missing)}" if figure.missing else ""
        return Cell(column, figure, missing=missing)
    uncounted = not_counted(known).get(column.name)
    if uncounted:
        return Cell(column, figure, missing=f"never counted: {uncounted}")
    if run is None:
        why = "not run" if column.name in known else overall.absent.get(column.name, "no task")
        return Cell(column, figure, missing=why)
    subset = run.item_limit is not None
    if figure.value is None:
        why = f"run #{run.pk} has no {overall.metric} over n >= 1 items"
        return Cell(column, figure, run, missing=why, subset=subset)
    return Cell(column, figure, run, subset=subset)


def not_counted(known: Mapping[str, TaskSpec]) -> dict[str, str]:
    """The tasks (of `known`) whose runs an overall score never counts, each with why: those
    declared not comparable with the benchmark's published scores."""
    return {name: spec.not_comparable for name, spec in known.items() if spec.not_comparable}


def overall_board(benchmark: Benchmark) -> Board | None:
    """The overall score's table for the benchmark (None when its suite declares none): one
    row per model and tool mode, those with an overall value first (best first), then the
    others by how much of the formula's weight they cover, then by model and mode."""
    overall = overall_of(benchmark)
    if overall is None:
        return None
    known = get_suite(benchmark.suite).tasks
    uncounted = {
        task: why
        for task, why in not_counted(known).items()
        if task in {*overall.tasks, *overall.shown}
    }
    wanted = {*overall.tasks, *overall.shown} - set(uncounted)
    grouped = latest_runs(benchmark, wanted)
    shown = columns(overall)
    rows: list[BoardRow] = []
    for (model, mode), runs in grouped.items():
        scores = {task: task_score(run, overall) for task, run in runs.items()}
        found = figures(overall, scores)
        cells = [
            _cell(column, found[column.name], runs.get(column.name), overall, known)
            for column in shown
        ]
        rows.append(
            BoardRow(
                model=model,
                tool_mode=mode,
                cells=cells,
                overall=found[overall.score.name],
                complete=complete_weight(overall, found),
                runs=runs,
            )
        )

    def rank(row: BoardRow) -> tuple[int, float, str, str]:
        if row.overall.value is not None:
            return (0, -row.overall.value, row.model, row.tool_mode)
        return (1, -row.complete, row.model, row.tool_mode)

    rows.sort(key=rank)
    left_out = Run.objects.filter(benchmark=benchmark, status=Run.Status.DONE, task__in=wanted)
    return Board(
        overall=overall,
        columns=shown,
        rows=rows,
        unnamed=left_out.filter(model_name="").count(),
        rewritten=left_out.exclude(model_name="").filter(tool_revision__isnull=False).count(),
        never_counted=uncounted,
    )


def board_csv_rows(board: Board) -> tuple[list[str], list[list[Any]]]:
    """The table as a CSV's header and rows: model, mode, each column's value (empty when
    missing), the share (%) of the weight complete, the tasks missing, each task's run id, and
    those of the runs limited to part of their task's items."""
    header = [
        "model",
        "tool_mode",
        *(column.name for column in board.columns),
        "complete_weight",
        "missing",
        "runs",
        "subset_runs",
    ]
    lines: list[list[Any]] = []
    for row in board.rows:
        values = [
            None if cell.figure.value is None else round(cell.figure.value, 2) for cell in row.cells
        ]
        runs = " ".join(f"{task}:{run.pk}" for task, run in sorted(row.runs.items()))
        subset = " ".join(
            f"{task}:{run.pk}"
            for task, run in sorted(row.runs.items())
            if run.item_limit is not None
        )
        lines.append(
            [
                row.model,
                row.tool_mode,
                *values,
                round(100.0 * row.complete, 2),
                " ".join(row.overall.missing),
                runs,
                subset,
            ]
        )
    return header, lines
