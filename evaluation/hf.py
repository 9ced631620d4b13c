"""A run's predictions as a Hugging Face dataset folder (config.hfdataset): one row per
prediction with its per-item scores, one split per benchmark split of its samples, in the
run's order. The one service the `export_run` command and the run page's download call.

The scores are written twice: `scores`, every per-item score as stored (JSON text, whatever
each value is), and one `score:NAME` column per score name (Run.score_names' order) holding
the value where it is a number (a flag's true/false as 1/0), null otherwise, for
analysis without parsing JSON.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from config.errors import ApplicationError
from config.hfdataset import (
    CardText,
    Column,
    DatasetWriter,
    HFDatasetError,
    exported_at,
    hf_split_names,
    platform_version,
)
from evaluation.models import Prediction, Run
from evaluation.selectors import prediction_score_names

BATCH = 2000

PREDICTION_COLUMNS = (
    Column("run", "int64", "the run's id on the platform"),
    Column("position", "int64", "the prediction's place in the run"),
    Column("split", "string", "the sample's split, as named on the platform"),
    Column("sample_id", "int64", "the sample's id on the platform (the benchmark export's)"),
    Column("external_id", "string", "the sample's id in the benchmark's own files"),
    Column("repeat", "int64", "which answer to the sample this is (a trial, an imported line)"),
    Column("trial", "int64", "the trial (0 when the run has one)"),
    Column("status", "string", "pending, running, done, failed..."),
    Column("output", "string", "the model's final text"),
    Column("answer", "json", "the answer parsed from it (the suite's answer structure)"),
    Column("tool_calls", "json", "native tool mode: the calls as the server sent them"),
    Column("parsed", "bool", "whether the answer could be parsed (null: not tried)"),
    Column("leaked", "bool", "native mode: a call was written into the text instead"),
    Column("trace", "json", "the steps of a multi-step answer (calls, results, turns)"),
    Column("note", "string", "what the scoring noted"),
    Column("error", "string", "the error of a failed item"),
    Column("attempts", "int64", "calls made to the endpoint"),
    Column("latency_ms", "int64", "time of the answer, in milliseconds"),
    Column("cached", "bool", "whether the answer came from the response cache"),
    Column("usage", "json", "the server's token usage, as reported"),
    Column("prompt_tokens", "int64", "input tokens, summed over the item's calls"),
    Column("completion_tokens", "int64", "output tokens"),
    Column("cached_tokens", "int64", "cached input tokens"),
    Column("scores", "json", "every per-item score, as stored"),
)
FIELDS = (
    "position",
    "sample__split",
    "sample_id",
    "sample__external_id",
    "repeat",
    "status",
    "output",
    "answer",
    "tool_calls",
    "parsed",
    "leaked",
    "trace",
    "note",
    "error",
    "attempts",
    "latency_ms",
    "cached",
    "usage",
    "prompt_tokens",
    "completion_tokens",
    "cached_tokens",
    "scores",
)


class RunExportRefused(ApplicationError):
    """A run that cannot be written as a dataset (it has no prediction)."""


@dataclass(frozen=True)
class HFRunExport:
    run: int
    rows: dict[str, int]  # written split -> predictions
    score_names: list[str]
    renamed: dict[str, str]


def score_number(value: Any) -> float | None:
    """A score's `score:NAME` cell: a number as a float, a flag as 1/0, anything else null."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    return None


def run_folder_name(run: Run) -> str:
    return f"run-{run.pk}-predictions-hf"


def run_provenance(run: Run) -> dict[str, Any]:
    """What the run was: its benchmark and task, who answered and how (the endpoint's name and
    model, never its address or key), its settings."""
    return {
        **platform_version(),
        "kind": "run predictions",
        "run": run.pk,
        "run_name": run.name,
        "benchmark": run.benchmark.name,
        "suite": run.benchmark.suite,
        "task": run.task,
        "split": run.split or None,
        "source": run.source,
        "status": run.status,
        "endpoint": run.endpoint.name if run.endpoint else None,
        "model": run.model_name,
        "style": run.style,
        "tool_mode": run.tool_mode,
        "shots": run.shots,
        "trials": run.trials,
        "seed": run.seed,
        "params": run.params,
        "options": run.options,
        "created_at": run.created_at.isoformat(),
        "exported_at": exported_at(),
    }


def run_hf_export(
    *,
    run: Run,
    folder: Path,
    license: str = "other",
    progress: Callable[[int], None] | None = None,
) -> HFRunExport:
    """Write the run's predictions as a dataset folder at `folder`. RunExportRefused for a
    run without predictions; `progress(n)` is called as predictions are written."""
    predictions = Prediction.objects.filter(run=run)
    splits = sorted(set(predictions.values_list("sample__split", flat=True).distinct()))
    if not splits:
        raise RunExportRefused(f"run {run.pk} has no predictions: nothing to export", field="run")
    names = hf_split_names(splits)
    score_names = run.score_names if run.score_names is not None else prediction_score_names(run.pk)
    columns = (
        *PREDICTION_COLUMNS,
        *(
            Column(f"score:{name}", "float64", f"the score {name} where it is a number")
            for name in score_names
        ),
    )
    writer = DatasetWriter(folder, columns)
    trials = run.trials > 1
    try:
        for row in predictions.order_by("position").values_list(*FIELDS).iterator(BATCH):
            (position, split, sample_id, external_id, repeat, *rest) = row
            scores = row[-1] or {}
            writer.add(
                names[split],
                (
                    run.pk,
                    position,
                    split,
                    sample_id,
                    external_id,
                    repeat,
                    repeat if trials else 0,
                    *rest,
                    *(score_number(scores.get(name)) for name in score_names),
                ),
            )
            if progress:
                progress(1)
        renamed = {a: b for a, b in names.items() if a != b}
        rows = writer.close(
            CardText(
                pretty_name=f"Run {run.pk}: {run.model_name or 'predictions'} on "
                f"{run.benchmark.name} ({run.task})",
                license=license,
                summary=(
                    f"The predictions of run {run.pk} of the task `{run.task}` of "
                    f"{run.benchmark.name}: one row per answer, with its per-item scores, "
                    "split by the samples' splits. Join them to the benchmark's own dataset "
                    "export on `sample_id`."
                ),
                provenance=run_provenance(run),
                renamed_splits=renamed,
                notes=(
                    "Model outputs are untrusted text: escape them wherever they are shown.",
                    "The license is yours to set (`other` until then): the outputs follow the "
                    "model's terms, the samples the benchmark's."
                    if license == "other"
                    else "",
                ),
            )
        )
    except HFDatasetError as exc:
        raise RunExportRefused(f"run {run.pk}: {exc}", field="run") from None
    return HFRunExport(
        run=run.pk, rows=rows["default"], score_names=list(score_names), renamed=renamed
    )
