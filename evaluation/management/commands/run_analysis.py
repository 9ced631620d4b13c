"""python manage.py run_analysis RUN_ID [--against RUN_ID ...] [--json]"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from config.errors import ApplicationError
from evaluation.analyses import declared, run_analyses_get, runs_to_compare
from evaluation.models import Run, RunAnalysis


def analyses_of(run: Run) -> dict[str, Any]:
    """{"run": ID, "analyses": {NAME: {"by", "rows"}}}, computed here if not stored fresh."""
    stored = run_analyses_get(run, inline=True)
    if stored.status != RunAnalysis.Status.DONE or not stored.data:
        raise CommandError(f"the analyses of run {run.pk} failed: {stored.error}")
    return {"run": run.pk, "analyses": stored.data["analyses"]}


def cell(value: Any) -> str:
    """A value as a table cell: - for none, two decimals for a float."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def table(run: Run, result: dict[str, Any]) -> list[str]:
    """The analyses as plain-text tables, one per analysis, columns aligned."""
    lines = [f"Run {run.pk} ({run.benchmark.name} {run.task}, {run.name or run.model_name})"]
    titles = {a.name: a for a in declared(run)}
    for name, found in result["analyses"].items():
        analysis = titles.get(name)
        metrics = [m.name for m in analysis.metrics] if analysis else []
        lines.append("")
        lines.append(f"{analysis.title if analysis else name} [{name}]")
        header = [found["by"], "n", *metrics]
        body = [[cell(row.get(key)) for key in ["group", "n", *metrics]] for row in found["rows"]]
        if not body:
            lines.append("  (no items)")
            continue
        widths = [max(len(cell) for cell in column) for column in zip(header, *body, strict=False)]
        for cells in [header, *body]:
            lines.append(
                "  "
                + "  ".join(
                    cell.ljust(width) if index == 0 else cell.rjust(width)
                    for index, (cell, width) in enumerate(zip(cells, widths, strict=True))
                )
            )
    return lines


class Command(BaseCommand):
    help = (
        "Print the analyses a run's suite declares for its task (the papers' breakdowns), "
        "computed from the stored predictions. With --json: "
        '{"run": ID, "analyses": {NAME: {"by": FIELD, "rows": [{"group", "n", METRIC...}]}}}; '
        'with --against, the other runs\' analyses in "against": [{"run", "analyses"}, ...] '
        "in the order given (runs of the same task)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("run", type=int, help="The run's id.")
        parser.add_argument(
            "--against",
            type=int,
            action="append",
            default=[],
            metavar="RUN_ID",
            help="Another run of the same task (repeatable).",
        )
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            runs = runs_to_compare([options["run"], *options["against"]])
        except ApplicationError as exc:
            raise CommandError(str(exc)) from None
        if len(runs) != 1 + len(options["against"]):
            raise CommandError("a run is named twice")
        if not declared(runs[0]):
            raise CommandError(
                f"run {runs[0].pk} ({runs[0].benchmark.name} {runs[0].task}): its suite "
                "declares no analysis for this task"
            )
        results = [analyses_of(run) for run in runs]
        if options["json"]:
            printed = dict(results[0])
            if options["against"]:
                printed["against"] = results[1:]
            self.stdout.write(json.dumps(printed, ensure_ascii=False))
            return
        for index, (run, result) in enumerate(zip(runs, results, strict=True)):
            if index:
                self.stdout.write("")
            self.stdout.write("\n".join(table(run, result)))
