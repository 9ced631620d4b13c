"""State changes of the evaluation app: launching, cancelling, resuming and finishing runs,
recovering from lost workers, and importing outputs made elsewhere.

Every service raises RunError (a ValueError) for a request that cannot be carried out, with a
message meant for the person who asked. Work for workers is queued on commit only.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q, QuerySet, TextField
from django.db.models.expressions import RawSQL
from django.db.models.functions import Cast
from django.utils import timezone

from benchmarks.kit.analyses import ITEM_PARTS, RECORD_PARTS, RecordValue
from benchmarks.kit.base import ImportFormatError
from benchmarks.kit.predictions import read_generic_predictions
from benchmarks.kit.protocol import (
    PLATFORM_OPTIONS,
    Context,
    Evaluator,
    OptionError,
    Outcome,
    PublishedOutput,
    Scored,
    TaskSpec,
)
from benchmarks.kit.registry import get_suite
from benchmarks.kit.trials import over_trials
from benchmarks.models import Benchmark, ToolRevision
from benchmarks.services import dumps_json
from config import background, queue
from config.dbstats import stats_after_bulk_write
from config.errors import ApplicationError, model_checked
from evaluation import lifecycle
from evaluation.credentials import (
    SealedKeyError,
    key_problem,
    last_four,
    reseal,
    seal,
    sealed_for,
)
from evaluation.embedders import embedder_for
from evaluation.inference import PREDICTIONS, prediction_handler
from evaluation.judge_versions import version_for
from evaluation.models import (
    LOCAL_ENDPOINT,
    LOCAL_TOOLS_ENDPOINT,
    Endpoint,
    Prediction,
    Run,
    platform_fields,
)
from evaluation.selectors import (
    compared_counts,
    compared_counts_known,
    context_for,
    evaluator_for,
    item_of,
    items_by_sample_id,
    run_context,
    sample_rows,
)
from evaluation.work.addresses import normalised_base_url
from evaluation.work.caller import EndpointConfig, endpoint_client, failure_summary
from evaluation.work.engine import ConfigurationError, endpoint_config
from evaluation.work.styles import style_named, styles

log = logging.getLogger(__name__)


class RunError(ApplicationError):
    """A run cannot be launched, imported or changed as asked; the message says why."""


class EndpointNotReady(RunError):
    """run_launch's refusal of an endpoint that is not ready (the run's other choices are
    valid so far): `launch_run` waits and tries again when the endpoint is on its way."""


def chunk_size() -> int:
    return lifecycle.chunk_size()


def _task_items(
    benchmark: Benchmark, evaluator: Evaluator, task: str, split: str
) -> tuple[list[dict[str, Any]], list[str]]:
    spec = _task_spec(evaluator, task)
    splits = [split] if split else list(spec.splits)
    if not splits:
        raise RunError(f"task {task!r} has no default split; choose one")
    rows = sample_rows(benchmark, splits)
    if not rows:
        present = sorted(set(benchmark.samples.values_list("split", flat=True)))
        raise RunError(
            f"{benchmark.name} has no samples in split(s) {', '.join(splits)} (its splits: "
            f"{', '.join(present) or 'none'})"
        )
    return rows, splits


def _task_spec(evaluator: Evaluator, task: str) -> Any:
    try:
        return evaluator.task(task)
    except ValueError as exc:
        raise RunError(str(exc)) from None


def run_launch(
    *,
    benchmark: Benchmark,
    task: str,
    endpoint: Endpoint,
    split: str = "",
    shots: int = 0,
    item_limit: int | None = None,
    params: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
    seed: int = 0,
    name: str = "",
    user: Any = None,
    budget: Decimal | None = None,
) -> Run:
    """Create the run and one pending prediction per selected sample, and queue the chunks.

    The samples are the task's split(s) as the suite selects them, cut to `item_limit` (a
    seeded choice of whole clusters); the suite's per-item context (e.g. candidate lists) is
    computed here, once, and stored. Raises RunError if the task, split, endpoint or options
    do not allow a run.
    """
    evaluator = evaluator_for(benchmark)
    spec = _task_spec(evaluator, task)
    options = run_options(benchmark, task, options)
    if endpoint.status != Endpoint.Status.READY:
        raise EndpointNotReady(endpoint_not_ready(endpoint))
    if endpoint.style not in styles():
        raise RunError(
            f"endpoint {endpoint.name!r} has style {endpoint.style!r}, not a registered API style"
        )
    if item_limit is not None and item_limit < 1:
        raise RunError("the item limit must be at least 1")
    if problem := lifecycle.budget_error(budget):
        raise RunError(problem)
    rows, _ = _task_items(benchmark, evaluator, task, split)
    merged_params = {**endpoint.default_params, **(params or {})}
    _check_tool_mode(spec, benchmark, endpoint, options, merged_params, shots)
    ctx = context_for(
        benchmark=benchmark,
        evaluator=evaluator,
        task=task,
        shots=shots,
        style=endpoint.style,
        seed=seed,
        options=options,
    )
    ctx.embed = _embedder(ctx.options)
    try:
        chosen, contexts = _choose(evaluator, ctx, rows, item_limit)
    except (ValueError, KeyError) as exc:
        raise RunError(f"{task}: {exc}") from None
    with transaction.atomic():
        run = Run.objects.create(
            name=name,
            benchmark=benchmark,
            task=task,
            split=split,
            endpoint=endpoint,
            source=Run.Source.LAUNCHED,
            model_name=endpoint.model,
            style=endpoint.style,
            shots=shots,
            item_limit=item_limit,
            params=merged_params,
            seed=seed,
            budget=budget,
            created_by=user if getattr(user, "is_authenticated", False) else None,
            **platform_fields(options),
        )
        _copy_pending(run.pk, chosen, contexts, run.trials)
        lifecycle.launch(RUNS, run.pk, len(chosen) * run.trials)
    return run


def run_rerun(
    *,
    run: Run,
    tool_revision: ToolRevision | None,
    name: str = "",
    user: Any = None,
    budget: Decimal | None = None,
) -> Run:
    """Launch a launched run's items again (the same samples, trials and per-item contexts,
    so the same candidate lists and examples; the same endpoint, model and settings) with the
    tool descriptions of `tool_revision` (None: as imported). The new run names the run it
    repeats (rerun_of). Raises RunError for an imported run, an endpoint that is not ready, or
    a revision of another benchmark."""
    if run.source != Run.Source.LAUNCHED or run.endpoint is None:
        raise RunError(
            f"run {run.pk} was imported: only a launched run can be repeated", field="run"
        )
    endpoint = run.endpoint
    if endpoint.status != Endpoint.Status.READY:
        raise RunError(
            f"endpoint {endpoint.name!r} is {endpoint.get_status_display().lower()}; "
            "repeat the run when it is ready",
            field="run",
        )
    if tool_revision is not None and tool_revision.benchmark_id != run.benchmark_id:
        raise RunError(
            f"tool revision {tool_revision.number} is of {tool_revision.benchmark}, not of "
            f"{run.benchmark}",
            field="tool_revision",
        )
    if problem := lifecycle.budget_error(budget):
        raise RunError(problem, field="budget")
    # Checked again: the suite's declarations may have changed since the run was launched.
    options = run_options(run.benchmark, run.task, run.launch_options)
    rows = list(
        Prediction.objects.filter(run=run, repeat=0)
        .order_by("position")
        .values_list("sample_id", "context")
    )
    if not rows:
        raise RunError(f"run {run.pk} has no items to repeat", field="run")
    with transaction.atomic():
        rerun = Run.objects.create(
            name=name,
            benchmark=run.benchmark,
            task=run.task,
            split=run.split,
            endpoint=endpoint,
            source=Run.Source.LAUNCHED,
            model_name=run.model_name,
            style=run.style,
            shots=run.shots,
            item_limit=run.item_limit,
            params=run.params,
            seed=run.seed,
            budget=budget,
            tool_revision=tool_revision,
            rerun_of=run,
            created_by=user if getattr(user, "is_authenticated", False) else None,
            **platform_fields(options),
        )
        _copy_pending(rerun.pk, [r[0] for r in rows], [r[1] or {} for r in rows], rerun.trials)
        lifecycle.launch(RUNS, rerun.pk, len(rows) * rerun.trials)
    return rerun


# The most trials a run may have (the platform's option `trials` declares it).
MAX_TRIALS = int(next(o.maximum or 1 for o in PLATFORM_OPTIONS if o.name == "trials"))


def run_options(benchmark: Benchmark, task: str, options: Any) -> dict[str, Any]:
    """A run's options as its suite declares them for the task (registry.Suite.options):
    the one check of every way of launching or importing a run, made before anything is
    stored or queued. trials=1 (the default) is left out. RunError (field "options") naming
    the option the task does not declare, or whose value is not one its declaration allows,
    and saying what there is; RunError (field "task") for a task the suite does not have."""
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise RunError("the options must be a JSON object", field="options")
    try:
        checked = get_suite(benchmark.suite).check_options(task, options)
    except OptionError as exc:
        raise RunError(str(exc), field="options") from None
    except ValueError as exc:
        raise RunError(str(exc), field="task") from None
    if checked.get("trials") == 1:
        del checked["trials"]
    return checked


def _embedder(options: dict[str, Any]) -> Any:
    try:
        return embedder_for(options)
    except ValueError as exc:
        raise RunError(str(exc), field="options") from None


# Generation parameters that only mean something when tools are declared.
TOOL_PARAMS = ("tool_choice", "parallel_tool_calls")


def _check_tool_mode(
    spec: TaskSpec,
    benchmark: Benchmark,
    endpoint: Endpoint,
    options: dict[str, Any],
    params: dict[str, Any],
    shots: int,
) -> None:
    """The run's tool_mode option: "text" (the default) or "native", which needs a task with a
    native form and an endpoint whose style can declare tools, and is zero-shot (the
    benchmarks' examples are text answers); tool_choice and parallel_tool_calls need native."""
    if options.get("tool_mode", "text") == "native":
        if not spec.native:
            raise RunError(
                f"task {spec.name!r} of {benchmark.name} has no native tool mode; "
                "run it with tool_mode=text"
            )
        if not style_named(endpoint.style).native_tools:
            raise RunError(
                "tool_mode=native declares tools in the request, which the endpoint's style "
                f"cannot; endpoint {endpoint.name!r} is {endpoint.style}-style"
            )
        if shots:
            raise RunError(
                "tool_mode=native prompts are zero-shot (the benchmarks' examples are text "
                f"answers); run with shots=0, not {shots}"
            )
        return
    sent = [name for name in TOOL_PARAMS if name in params]
    if sent:
        raise RunError(
            f"{', '.join(sent)} only apply with tool_mode=native (a text run declares no tools)"
        )


def _copy_pending(
    run_id: int, sample_ids: Sequence[int], contexts: Sequence[dict], trials: int = 1
) -> None:
    """One pending prediction per sample and trial, by COPY (bulk_create spent most of a
    launch building 2,000 INSERT parameter lists). Trial-major: every item's trial 0 comes
    first, so a run stopped half way (a budget, a cancel) holds whole trials."""
    columns = (
        "run_id, sample_id, repeat, position, status, attempts, context, output, trace, note, "
        "scores, error, cached, usage, updated_at"
    )
    now = timezone.now()
    with (
        connection.cursor() as cursor,
        cursor.cursor.copy(f"COPY evaluation_prediction ({columns}) FROM STDIN") as copy,
    ):
        items = list(zip(sample_ids, contexts, strict=True))
        trial_items = ((trial, item) for trial in range(trials) for item in items)
        for position, (trial, (sample_id, context)) in enumerate(trial_items):
            copy.write_row(
                (
                    run_id,
                    sample_id,
                    trial,
                    position,
                    Prediction.Status.PENDING,
                    0,
                    dumps_json(context),
                    "",
                    "[]",
                    "",
                    "{}",
                    "",
                    False,
                    "{}",
                    now,
                )
            )


def _choose(
    evaluator: Evaluator, ctx: Context, rows: list[dict[str, Any]], limit: int | None
) -> tuple[list[int], list[dict[str, Any]]]:
    """Sample ids and contexts of the items a run takes, in order."""
    items = [item_of(row) for row in rows]
    ids = {item.key: row["id"] for item, row in zip(items, rows, strict=True)}
    pool = evaluator.select(items, ctx)
    ctx.pool = pool
    selected = evaluator.limit(pool, ctx, limit)
    if not selected:
        raise RunError(f"the task selects none of the {len(items)} samples of this split")
    contexts = evaluator.prepare(selected, ctx)
    return [ids[item.key] for item in selected], contexts


def chunk_execute(run_id: int, first: int, last: int) -> dict[str, int]:
    """Answer the pending items at positions first..last of a run, then, while the budget
    lasts, whatever else of the run is pending (see lifecycle.execute_chunk)."""
    return lifecycle.execute_chunk(RUNS, run_id, first, last)


SCORED_FIELDS = (
    "sample_id",
    "repeat",
    "status",
    "output",
    "answer",
    "parsed",
    "trace",
    "note",
    "scores",
    "context",
    "tool_calls",
    "leaked",
)


# Rows of a run's answers read at a time: a run of a million is streamed, never held twice.
SCORED_CHUNK = 5000


def scored_items(
    run: Run,
    evaluator: Evaluator,
    ctx: Context,
    *,
    statuses: Sequence[str] | None = None,
    parts: Sequence[str] | None = None,
) -> list[Scored]:
    return [
        each
        for _sample_id, each in scored_by_sample(
            run, evaluator, ctx, statuses=statuses, parts=parts
        )
    ]


def scored_by_sample(
    run: Run,
    evaluator: Evaluator,
    ctx: Context,
    *,
    statuses: Sequence[str] | None = None,
    parts: Sequence[str] | None = None,
) -> list[tuple[int, Scored]]:
    """The run's stored answers in position order, each with its sample's id; with
    `statuses`, only the answers of those statuses; with `parts`, only those parts of the
    records (benchmarks.kit.analyses.RECORD_PARTS; see scored_rows). The rows are read in
    chunks."""
    answers = Prediction.objects.filter(run=run)
    if statuses is not None:
        answers = answers.filter(status__in=list(statuses))
    return [
        (row["sample_id"], each) for row, each in scored_rows(answers, evaluator, ctx, parts=parts)
    ]


# What the parts of a record read beyond the fields always read (RECORD_PARTS).
_OUTCOME_FIELDS = ("output", "answer", "parsed", "note", "tool_calls", "leaked")
_ALWAYS_FIELDS = ("sample_id", "repeat", "status")
# Distinct texts of scores parsed once per reading (a run's scores take a few values: a million
# rows parse a handful of texts), up to this many; the records share the parsed mapping.
_SCORES_PARSED = 10_000


def scored_rows(
    answers: QuerySet[Prediction],
    evaluator: Evaluator,
    ctx: Context,
    *extra: str,
    parts: Sequence[str] | None = None,
    **expressions: Any,
) -> list[tuple[dict[str, Any], Scored]]:
    """These stored answers in position order, each as its row (SCORED_FIELDS, the `extra`
    fields and the `expressions`) and its Scored. With `parts`, only those parts of the
    records are read (benchmarks.kit.analyses.RECORD_PARTS): an item part not read is the
    Item's default, and the record's cluster is the item's key unless every item part is read;
    without "outcome" (and "answer", "trace"), an answered record's Outcome is empty there; without
    "context", no context. The rows are read in chunks."""
    every = parts is None
    read = set(RECORD_PARTS if parts is None else parts)
    fields = (
        tuple(field for field in SCORED_FIELDS if field != "scores")
        if every
        else (
            *_ALWAYS_FIELDS,
            *(_OUTCOME_FIELDS if "outcome" in read else ("answer",) if "answer" in read else ()),
            *(("trace",) if "trace" in read else ()),
            *(("context",) if "context" in read else ()),
        )
    )
    item_parts = [part for part in ITEM_PARTS if part in read]
    whole_item = len(item_parts) == len(ITEM_PARTS)
    items = items_by_sample_id(
        answers.values("sample_id"),
        fields=None if whole_item else ("id", "split", "external_id", "kind", *item_parts),
    )
    with_outcome = "outcome" in read
    with_answer = "answer" in read and not with_outcome
    with_trace = "trace" in read
    # an answered record's outcome when neither part of it is read: one for all of them
    unread = Outcome(output="")
    groups: dict[int, str] = {}
    scored = []
    parsed: dict[str, Any] = {}
    scores_text = Cast("scores", TextField())
    rows = answers.order_by("position").values(
        *fields, *extra, **expressions, scores_text=scores_text
    )
    for row in rows.iterator(chunk_size=SCORED_CHUNK):
        item = items[row["sample_id"]]
        text = row.pop("scores_text")
        scores = parsed.get(text) if text else {}
        if scores is None:
            scores = json.loads(text) or {}
            if len(parsed) < _SCORES_PARSED:
                parsed[text] = scores
        row["scores"] = scores
        if not whole_item:
            group = groups.get(row["sample_id"]) or groups.setdefault(row["sample_id"], item.key)
        outcome = None
        if row["status"] == Prediction.Status.DONE and not (with_outcome or with_trace):
            outcome = Outcome(output="", answer=row["answer"]) if with_answer else unread
        elif row["status"] == Prediction.Status.DONE:
            trace = (row["trace"] or []) if with_trace else []
            outcome = (
                Outcome(
                    output=row["output"],
                    answer=row["answer"],
                    parsed=row["parsed"] is not False,
                    trace=trace,
                    note=row["note"],
                    tool_calls=row["tool_calls"],
                    leaked=bool(row["leaked"]),
                )
                if with_outcome
                else Outcome(output="", answer=row["answer"] if with_answer else None, trace=trace)
            )
        scored.append(
            (
                row,
                Scored(
                    item=item,
                    outcome=outcome,
                    scores=scores,
                    context=row.get("context") or {},
                    group=evaluator.cluster(item, ctx) if whole_item else group,
                    repeat=row["repeat"],
                ),
            )
        )
    return scored


# --- values of the records, stored with the answers (benchmarks.kit.analyses.RecordValue) ------

RECORD_VALUES_CHUNK = 5000


def record_values_declared(run: Run) -> dict[str, RecordValue]:
    """The record values the analyses of the run's task count by, by name."""
    try:
        declared = get_suite(run.benchmark.suite).analyses_for(run.task)
    except ValueError:
        return {}
    return {
        value.name: value
        for analysis in declared
        if analysis.score_breakdown is not None
        for value in analysis.score_breakdown.record_values
    }


def fill_record_values(
    run: Run, values: Sequence[RecordValue], statuses: Sequence[str] | None = None
) -> int:
    """Compute and store the `values` of the run's answers (of these statuses) that lack one
    of them: those written or changed since they were last computed (a change to an answer
    or its sample empties its values: migration 0023's triggers). An answer that changes
    while its values are computed keeps none (its row's version no longer matches), and is
    computed again next time. Returns how many answers it filled."""
    named = {value.name: value for value in values}
    if not named:
        return 0
    mark = record_values_mark(run)
    lacking = Prediction.objects.filter(run=run).exclude(
        Q(derived__has_keys=sorted(named)) & Q(derived__contains={MARK: mark})
    )
    if statuses is not None:
        lacking = lacking.filter(status__in=list(statuses))
    ids = list(lacking.order_by("position").values_list("id", flat=True))
    if not ids:
        return 0
    evaluator, ctx = run_context(run)
    for start in range(0, len(ids), RECORD_VALUES_CHUNK):
        chunk = Prediction.objects.filter(pk__in=ids[start : start + RECORD_VALUES_CHUNK])
        version = RawSQL(ROW_VERSION, [])  # noqa: S611 - a constant
        rows = scored_rows(chunk, evaluator, ctx, "id", version=version)
        _store_record_values(
            [(row["id"], row["version"], _values_of(named, each, ctx, mark)) for row, each in rows]
        )
    return len(ids)


# The key of Prediction.derived that says in what context its values were computed.
MARK = "_context"


def record_values_mark(run: Run) -> str:
    """What the stored record values of the run were computed in: its benchmark's last change
    (its tools change only on import, which changes it too)."""
    return run.benchmark.updated_at.isoformat()


def _values_of(
    named: dict[str, RecordValue], record: Scored, ctx: Context, mark: str
) -> dict[str, Any]:
    return {**{name: value.of(record, ctx) for name, value in named.items()}, MARK: mark}


# SQL of a row's version: the transaction that wrote it and where (an update in the same
# transaction moves the row, as one in another changes xmin). _store_record_values compares it.
ROW_VERSION = "xmin::text || ctid::text"


def _store_record_values(found: Sequence[tuple[int, str | None, dict[str, Any]]]) -> None:
    """Add each answer's values to those it has; with a row version, only if it is still that
    version (ROW_VERSION: the row unchanged since it was read)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE evaluation_prediction p SET derived = p.derived || v.found::jsonb"
            " FROM unnest(%s::bigint[], %s::text[], %s::text[]) AS v(id, version, found)"
            " WHERE p.id = v.id"
            " AND (v.version IS NULL OR p.xmin::text || p.ctid::text = v.version)",
            [
                [pk for pk, _, _ in found],
                [version for _, version, _ in found],
                [dumps_json(values) for _, _, values in found],
            ],
        )


def _store_finished_record_values(
    run: Run, ctx: Context, scored: Sequence[tuple[int, Scored]]
) -> None:
    """The record values of a run that has just finished, from the records its metrics were
    computed of, each with its answer's id (no second reading of the run)."""
    named = record_values_declared(run)
    if not named:
        return
    mark = record_values_mark(run)
    try:
        found = [(pk, None, _values_of(named, each, ctx, mark)) for pk, each in scored]
    except Exception:
        # a suite's function that fails: the analyses meet it again, and report it, when they
        # compute the values themselves; the run finishes all the same
        log.exception("the record values of run %s failed", run.pk)
        return
    for start in range(0, len(found), RECORD_VALUES_CHUNK):
        _store_record_values(found[start : start + RECORD_VALUES_CHUNK])


def run_finalize(*, run_id: int) -> bool:
    """When every item of a running run is settled: compute its metrics with the suite's
    aggregate, mark it done, and store the bootstrap intervals with them when the metrics are
    the plain means the suite declares (mean_metrics), else queue their task on the reports
    queue; and queue there the counts of its comparison with its task's newest done runs
    (run_compare_counts_ahead). Idempotent; returns whether it finished the run now."""
    return lifecycle.finalize(RUNS, run_id)


def _run_summary(run: Run) -> list[str]:
    # Here, not at the top: the bootstrap is numpy, a fifth of a second of start-up for every
    # process that sets Django up (the admin imports this module); workers load it at start.
    from evaluation.bootstrap import mean_intervals

    evaluator, ctx = run_context(run)
    by_answer = [
        (row["id"], each)
        for row, each in scored_rows(Prediction.objects.filter(run=run), evaluator, ctx, "id")
    ]
    scored = [each for _pk, each in by_answer]
    aggregate = run_aggregate(run, evaluator, ctx)
    run.metrics = aggregate(scored)
    _store_finished_record_values(run, ctx, by_answer)
    # Intervals of plain means take milliseconds: stored with the metrics, the run's page is
    # complete at once. Others are resampled through the aggregate on the reports queue.
    run.intervals = (
        mean_intervals(
            scored,
            aggregate,
            _mean_metrics(run, evaluator, ctx),
            resamples=bootstrap_resamples(),
            seed=run.seed,
        )
        or {}
    )
    run.score_names = score_names_of(item.scores for item in scored)
    fields = ["metrics", "intervals", "score_names"]
    # Others are owed, by the reports queue (queued once this transaction commits).
    owed = RUN_INTERVALS.fresh() if not run.intervals else {"intervals_status": ""}
    for name, value in owed.items():
        setattr(run, name, value)
    return [*fields, *owed]


def score_names_of(scores: Iterable[Any]) -> list[str]:
    """Every name of these scores (in position order) in the order a reader meets them: by
    the first scores that have it, then its place among their keys (Run.score_names)."""
    names: dict[str, None] = {}
    for each in scores:
        if isinstance(each, dict):
            names.update(dict.fromkeys(each))
    return list(names)


def _mean_metrics(run: Run, evaluator: Evaluator, ctx: Context) -> dict[str, int | None]:
    # Several trials are aggregated over trials (means and pass@k), not as one mean.
    return evaluator.mean_metrics(ctx) if run.trials == 1 else {}


def bootstrap_resamples() -> int:
    return int(getattr(settings, "EVALUATION_BOOTSTRAP_RESAMPLES", 1000))


def run_aggregate(
    run: Run, evaluator: Evaluator, ctx: Context
) -> Callable[[Sequence[Scored]], Any]:
    """How a run's scored items become its metrics: the suite's aggregate, or with several
    trials the mean and sd of each trial's aggregate and pass@k / pass^k of the task's
    higher-is-better item scores (benchmarks.kit.trials)."""
    if run.trials == 1:
        return lambda scored: evaluator.aggregate(scored, ctx)
    successes = {
        name
        for name, spec in ctx.task.item_metrics.items()
        if spec.kind == "score" and spec.direction == "higher"
    }
    return lambda scored: over_trials(
        scored, lambda trial: evaluator.aggregate(trial, ctx), successes
    )


def _after_run_finish(run_id: int) -> None:
    _queue_intervals(run_id)
    _queue_compare_counts(run_id)


def _queue_intervals(run_id: int) -> None:
    # Unless the finalize stored them already (plain means, see _run_summary).
    if Run.objects.filter(pk=run_id, intervals_status=RUN_INTERVALS.waiting).exists():
        queue.send(RUN_INTERVALS.task, [run_id], RUN_INTERVALS.queue)


COMPARE_COUNTS_TASK = "evaluation.tasks.run_compare_counts"


def compare_counts_ahead() -> int:
    return int(getattr(settings, "COMPARE_COUNTS_AHEAD", 5))


def _compared_ahead(run: Run) -> Any:
    """The done runs a finished run is counted against ahead of a comparison: its task's
    others (same benchmark and task), the newest COMPARE_COUNTS_AHEAD."""
    others = Run.objects.filter(
        benchmark_id=run.benchmark_id, task=run.task, status=Run.Status.DONE
    ).exclude(pk=run.pk)
    return others.order_by("-created_at", "-pk")[: compare_counts_ahead()]


def _queue_compare_counts(run_id: int) -> None:
    # Only when the run has a run to be compared with. The counts are a cache the comparison's
    # fragment fills itself on a miss: a task that could not be queued is logged, not raised.
    run = Run.objects.filter(pk=run_id, status=Run.Status.DONE).first()
    if run is None or compare_counts_ahead() <= 0 or not _compared_ahead(run).exists():
        return
    try:
        queue.send(COMPARE_COUNTS_TASK, [run_id], "reports")
    except Exception as error:  # kombu's OperationalError, a socket error: logged
        log.error("the comparison counts of run %s were not queued: %s", run_id, error)


def run_compare_counts_ahead(*, run_id: int) -> int:
    """The reports task's body, queued when a run finishes: the counts of the comparison of
    the run with each run it would be compared with (_compared_ahead), counted by the one
    counting (selectors.compared_counts) into the cache entries the comparison's fragment
    reads, so that the page has them when first asked. Pairs already counted are skipped: a
    second delivery counts nothing, a worker lost midway leaves the rest for the next
    delivery or the fragment. Returns how many pairs it counted."""
    run = Run.objects.filter(pk=run_id, status=Run.Status.DONE).first()
    if run is None:
        return 0
    counted = 0
    for other in _compared_ahead(run):
        if compared_counts_known(run, other) is None:
            compared_counts(run, other)
            counted += 1
    return counted


# Counting ahead keeps no row of its own: a task lost with its worker leaves some pairs not
# counted, which the comparison's fragment counts when first asked, as for any pair not counted
# ahead. The sweep has nothing to take back; the kind is registered so that every task is one
# the sweep knows (config.background).
background.register(background.Kind("comparison counts ahead", (COMPARE_COUNTS_TASK,), lambda: {}))


def run_intervals_compute(*, run_id: int) -> dict[str, list[float]]:
    """The reports task's body: the intervals a finished run is owed, computed once
    (RUN_INTERVALS: a second delivery, or a run whose intervals are done, does nothing; a
    worker lost while computing them is replaced by the sweep)."""
    held = RUN_INTERVALS.claim(run_id)
    if held is None:
        return {}
    with held:
        intervals = run_compute_intervals(run_id=run_id)
        held.mine().update(intervals_status="done", intervals_lease_until=None)
    return intervals


def run_compute_intervals(*, run_id: int, resamples: int | None = None) -> dict[str, list[float]]:
    """Seeded bootstrap 95% intervals for a finished run's metrics (CPU work: the reports
    queue runs it). The seed is the run's, so the intervals are reproducible."""
    from evaluation.bootstrap import bootstrap_intervals  # here: see _run_summary

    run = Run.objects.select_related("benchmark").filter(pk=run_id).first()
    if run is None or run.status != Run.Status.DONE:
        return {}
    evaluator, ctx = run_context(run)
    scored = scored_items(run, evaluator, ctx)
    intervals = bootstrap_intervals(
        scored,
        run_aggregate(run, evaluator, ctx),
        resamples=resamples or bootstrap_resamples(),
        seed=run.seed,
        means=_mean_metrics(run, evaluator, ctx),
    )
    Run.objects.filter(pk=run_id, status=Run.Status.DONE).update(intervals=intervals)
    return intervals


def _run_config(run: Run) -> EndpointConfig:
    assert run.endpoint is not None
    return endpoint_config(run.endpoint, model=run.model_name, style=run.style, params=run.params)


def _run_refusal(run: Run) -> str:
    if run.source != Run.Source.LAUNCHED or run.endpoint_id is None:
        return "an imported run has nothing to resume"
    return ""


RUNS = lifecycle.WorkKind(
    words=lifecycle.Words(noun="run", item="item", cancel="Cancel run", retry="Retry failed items"),
    parent=Run,
    item=Prediction,
    items="predictions",
    table=PREDICTIONS,
    chunk_task="evaluation.tasks.run_chunk",
    queue="inference",
    fetch=lambda run_id: (
        Run.objects.select_related("benchmark", "endpoint").filter(pk=run_id).first()
    ),
    endpoint=lambda run: run.endpoint,
    config=_run_config,
    handler=prediction_handler,
    finish=_run_summary,
    finish_related=("benchmark",),
    after_finish=_after_run_finish,
    retry=(Prediction.Status.FAILED,),
    retry_reset={"scores": {}},
    resume_reset={"score_names": None, "intervals_status": ""},
    error=RunError,
    resume_refusal=_run_refusal,
)

RUN_INTERVALS = background.RowWork(
    name="run intervals",
    model=Run,
    task="evaluation.tasks.run_intervals",
    queue="reports",
    waiting="queued",
    prefix="intervals_",
    lost=lambda attempts: (
        f"the worker computing them was lost {attempts} times (out of memory or time?)"
    ),
)


# --- published outputs --------------------------------------------------------------------------

# What a second output for the same sample means. A published file may give a sample several
# lines (MTU-Bench's S-M GPT-4 responses repeat S-M_23 and S-M_30); a benchmark scorer that loops
# over the file's lines scores each against the sample's gold.
#   refuse     the default: the file is refused, naming both lines and these choices
#   reference  every line is an item of its own (Prediction.repeat 1, 2... for the later ones),
#              scored against the sample's gold; metrics average over all of them
#   first      the first line of each sample is kept, the others dropped (and counted)
#   last       the last line is kept (what a reader that builds a dict by id ends up with)
DUPLICATE_POLICIES = ("refuse", "reference", "first", "last")

# The run's import report lists at most this many samples without an output (a file answering
# a few hundred of 20,000 samples would otherwise store 20,000 ids on the run); the count is
# always exact.
MISSING_LISTED = 1000


def predictions_import(
    *,
    benchmark: Benchmark,
    task: str,
    path: str | Path,
    name: str,
    split: str = "",
    model_name: str = "",
    fmt: str = "suite",
    options: dict[str, Any] | None = None,
    on_duplicate: str = "refuse",
    user: Any = None,
    progress: Callable[[int], None] | None = None,
) -> Run:
    """Store outputs made elsewhere as a finished run, scored exactly as a launched run.

    `fmt` "suite" reads the suite's own published format; "generic" reads {sample_id, output}
    JSON Lines. All or nothing: an output whose sample is not in the task's split(s) stops the
    import with the file and line, and so does a second output for a sample unless
    `on_duplicate` says what it means (DUPLICATE_POLICIES). The run's `import_report` says
    what the file held (see outputs_import). Raises RunError / ImportFormatError.
    """
    evaluator = evaluator_for(benchmark)
    _task_spec(evaluator, task)
    if not name.strip():
        raise RunError("give the imported run a name (--name), e.g. the model's")
    _check_policy(on_duplicate)
    path = Path(path)
    outputs: list[PublishedOutput]
    if fmt == "generic":
        outputs = list(read_generic_predictions(path))
    elif fmt == "suite":
        try:
            outputs = list(evaluator.read_predictions(task, path))
        except ValueError as exc:
            if isinstance(exc, ImportFormatError):
                raise
            raise RunError(f"{exc}; use the generic format ({{sample_id, output}})") from None
    else:
        raise RunError(f"unknown format {fmt!r}; use 'suite' or 'generic'")
    if not outputs:
        raise ImportFormatError("holds no outputs", file=path)
    return outputs_import(
        benchmark=benchmark,
        task=task,
        outputs=outputs,
        name=name,
        split=split,
        model_name=model_name,
        options=options,
        on_duplicate=on_duplicate,
        user=user,
        progress=progress,
    )


def _check_policy(on_duplicate: str) -> None:
    if on_duplicate not in DUPLICATE_POLICIES:
        raise RunError(
            f"on_duplicate must be refuse, reference, first or last, not {on_duplicate!r}"
        )


def outputs_import(
    *,
    benchmark: Benchmark,
    task: str,
    outputs: Sequence[PublishedOutput],
    name: str,
    split: str = "",
    model_name: str = "",
    options: dict[str, Any] | None = None,
    contexts: Sequence[dict[str, Any]] | None = None,
    on_duplicate: str = "refuse",
    user: Any = None,
    progress: Callable[[int], None] | None = None,
) -> Run:
    """Outputs already read, stored and scored as a finished run (see predictions_import).
    `contexts`, one per output, fixes what each item was shown (a human baseline answers the
    candidates a model run showed); by default the suite prepares them.

    The run's `import_report`: {"outputs": lines read, "on_duplicate": the policy,
    "repeated": [{"sample", "sources": [every line of it]}] for each sample given several
    lines, "repeats_scored" / "repeats_dropped": the lines beyond each sample's first that were
    scored (reference) or dropped (first, last), "missing": the samples of the splits the file
    answers that the task takes (the suite's `select`) and the file does not answer, at most
    MISSING_LISTED of them, "missing_count"}. Samples are named by their id, with their split
    ("split/id") when the file answers several splits.
    """
    _check_policy(on_duplicate)
    evaluator = evaluator_for(benchmark)
    _task_spec(evaluator, task)
    options = run_options(benchmark, task, options)
    rows, splits = _task_items(benchmark, evaluator, task, split)
    ctx = context_for(
        benchmark=benchmark,
        evaluator=evaluator,
        task=task,
        shots=0,
        style="chat",
        seed=0,
        options=options,
    )
    ctx.embed = _embedder(ctx.options)
    if contexts is not None and len(contexts) != len(outputs):
        raise RunError("one context per output")
    lines = _match_outputs(outputs, rows, splits, on_duplicate)
    chosen = _apply_policy(lines, on_duplicate)
    items = [item_of(line.row) for line in chosen]
    if contexts is None:
        try:
            chosen_contexts = evaluator.prepare(items, ctx)
        except (ValueError, KeyError) as exc:
            raise RunError(f"{task}: {exc}") from None
    else:
        chosen_contexts = [contexts[line.index] for line in chosen]
    report = _import_report(evaluator, ctx, task, rows, lines, chosen, on_duplicate)
    predictions = []
    for position, (line, item, context) in enumerate(
        zip(chosen, items, chosen_contexts, strict=True)
    ):
        outcome = evaluator.parse(line.output.output, item, ctx, context)
        predictions.append(
            Prediction(
                sample_id=line.row["id"],
                position=position,
                repeat=line.repeat,
                status=Prediction.Status.DONE,
                attempts=0,
                context=context,
                output=outcome.output,
                answer=outcome.answer,
                parsed=outcome.parsed,
                trace=outcome.trace,
                note=outcome.note,
                scores=evaluator.score(outcome, item, ctx, context),
            )
        )
        if progress:
            progress(1)
    with transaction.atomic():
        run = Run.objects.create(
            name=name,
            benchmark=benchmark,
            task=task,
            split=split,
            source=Run.Source.IMPORTED,
            model_name=model_name or name,
            import_report=report,
            created_by=user if getattr(user, "is_authenticated", False) else None,
            **platform_fields(options),
        )
        for prediction in predictions:
            prediction.run = run
        Prediction.objects.bulk_create(predictions, batch_size=5000)
        stats_after_bulk_write({Prediction._meta.db_table: len(predictions)})
    run_finalize(run_id=run.pk)
    run.refresh_from_db()
    return run


@dataclass(frozen=True, slots=True)
class _Line:
    """One output matched to its sample: `index` in the outputs read, `repeat` how many lines
    for the same sample came before it."""

    index: int
    row: dict[str, Any]
    output: PublishedOutput
    repeat: int


def _match_outputs(
    outputs: Sequence[PublishedOutput],
    rows: list[dict[str, Any]],
    splits: Sequence[str],
    on_duplicate: str,
) -> list[_Line]:
    """Each output with its sample, in the file's order. An output names its sample by
    external id (and split, when it knows it); one whose id names no sample tries its
    `fallback_id` (MTU-Bench's numbered copies). A second output for a sample stops the import
    when the policy is "refuse"."""
    by_key = {(row["split"], row["external_id"]): row for row in rows}
    by_id: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_id.setdefault(row["external_id"], []).append(row)

    def candidates(output: PublishedOutput, external_id: str) -> list[dict[str, Any]]:
        if output.split is not None:
            row = by_key.get((output.split, external_id))
            return [row] if row else []
        return by_id.get(external_id, [])

    lines: list[_Line] = []
    first_of: dict[int, PublishedOutput] = {}
    count_of: dict[int, int] = {}
    for index, output in enumerate(outputs):
        found = candidates(output, output.external_id)
        if not found and output.fallback_id:
            found = candidates(output, output.fallback_id)
        where = output.source or "an output"
        if not found:
            named = output.fallback_id or output.external_id
            raise RunError(f"{where}: no sample {named!r} in split(s) {', '.join(splits)}")
        if len(found) > 1:
            raise RunError(
                f"{where}: sample id {output.external_id!r} is in several splits "
                f"({', '.join(r['split'] for r in found)}); name the split"
            )
        row = found[0]
        repeat = count_of.get(row["id"], 0)
        if repeat and on_duplicate == "refuse":
            raise RunError(_refusal(output, first_of[row["id"]], row["external_id"]))
        first_of.setdefault(row["id"], output)
        count_of[row["id"]] = repeat + 1
        lines.append(_Line(index=index, row=row, output=output, repeat=repeat))
    return lines


def _refusal(output: PublishedOutput, first: PublishedOutput, sample: str) -> str:
    where = output.source or "an output"
    earlier = first.source or "an earlier output"
    # "f.jsonl, line 3" after "f.jsonl, line 1": the earlier one by its line alone.
    same = 0
    while same < min(len(where), len(earlier)) and where[same] == earlier[same]:
        same += 1
    cut = where.rfind(", ", 0, same)
    if cut > 0:
        earlier = earlier[cut + 2 :]
    return (
        f"{where}: sample {sample!r} already has an output on {earlier}. To import a file "
        "that gives a sample several lines, say what a repeat means: --on-duplicate reference "
        "(score every line against the sample's gold, as MTU-Bench's scorer does), first or "
        "last (keep one line per sample)"
    )


def _apply_policy(lines: list[_Line], on_duplicate: str) -> list[_Line]:
    """The lines the run keeps, in the file's order."""
    if on_duplicate in ("refuse", "reference"):
        return lines
    if on_duplicate == "first":
        return [line for line in lines if line.repeat == 0]
    last = {line.row["id"]: line.index for line in lines}
    return [replace(line, repeat=0) for line in lines if last[line.row["id"]] == line.index]


def _import_report(
    evaluator: Evaluator,
    ctx: Context,
    task: str,
    rows: list[dict[str, Any]],
    lines: list[_Line],
    chosen: list[_Line],
    on_duplicate: str,
) -> dict[str, Any]:
    answered = sorted({line.row["split"] for line in lines})

    def label(row: dict[str, Any]) -> str:
        return row["external_id"] if len(answered) == 1 else f"{row['split']}/{row['external_id']}"

    sources: dict[int, list[str]] = {}
    for line in lines:
        sources.setdefault(line.row["id"], []).append(line.output.source)
    repeated = [
        {"sample": label(line.row), "sources": sources[line.row["id"]]}
        for line in lines
        if line.repeat == 0 and len(sources[line.row["id"]]) > 1
    ]
    extra = len(lines) - len(sources)
    pool = [row for row in rows if row["split"] in answered]
    try:
        taken = {item.key for item in evaluator.select([item_of(row) for row in pool], ctx)}
    except (ValueError, KeyError) as exc:
        raise RunError(f"{task}: {exc}") from None
    missing = [
        label(row)
        for row in pool
        if row["id"] not in sources and f"{row['split']}/{row['external_id']}" in taken
    ]
    return {
        "outputs": len(lines),
        "on_duplicate": on_duplicate,
        "repeated": repeated,
        "repeats_scored": extra if on_duplicate == "reference" else 0,
        "repeats_dropped": len(lines) - len(chosen),
        "missing": missing[:MISSING_LISTED],
        "missing_count": len(missing),
    }


# --- endpoints ----------------------------------------------------------------------------------


ENDPOINT_FIELDS = (
    "name",
    "base_url",
    "model",
    "api_key_env",
    "style",
    "default_params",
    "max_concurrency",
    "requests_per_minute",
    "timeout_seconds",
    "max_attempts",
    "max_claims",
    "price_in",
    "price_out",
    "price_cached",
)


def endpoint_create(**fields: Any) -> Endpoint:
    """A new endpoint from ENDPOINT_FIELDS and its key (see endpoint_save)."""
    return endpoint_save(**fields)


def endpoint_save(
    *,
    endpoint: Endpoint | None = None,
    api_key: str | None = None,
    clear_api_key: bool = False,
    commit: bool = True,
    **fields: Any,
) -> Endpoint:
    """Set ENDPOINT_FIELDS on an endpoint (a new one unless given) and save it, checked by the
    model's rules (the base URL: http(s), no user name, query or fragment; the key variable:
    evaluation.credentials; prices not negative). The endpoint pages and the admin (one form,
    evaluation.forms.EndpointForm), the API and `add_endpoint` (which creates or updates) all
    come here, and a saved endpoint's judges get their next version when what they pin
    changed.

    Its key: `api_key` is stored sealed for the base URL being saved (encrypted, never shown
    again but for its last four characters); `clear_api_key` removes the stored one; with
    neither, a stored key stays. A stored key is sent only to the address it was entered for,
    so saving another base URL keeps none: it is refused unless the key is entered again (or
    removed). An endpoint has a stored key or a key variable, not both. Raises RunError naming
    each bad field. With commit=False nothing is saved (a form's checks before its save)."""
    unknown = sorted(set(fields) - set(ENDPOINT_FIELDS))
    if unknown:
        raise RunError(f"unknown endpoint field(s): {', '.join(unknown)}")
    key = (api_key or "").strip()
    if key and clear_api_key:
        raise RunError("enter a new key or remove the stored one, not both", field="api_key")
    problem = key_problem(key) if key else ""
    if problem:
        raise RunError(problem, field="api_key")
    if endpoint is None:
        endpoint = Endpoint()
    entered_for = ""
    if endpoint.api_key_sealed and not key and not clear_api_key:
        try:
            entered_for = sealed_for(endpoint.api_key_sealed)
        except SealedKeyError as exc:
            raise RunError(f"{exc}, or remove it", field="api_key") from None
    for name, value in fields.items():
        setattr(endpoint, name, value)
    model_checked(endpoint, RunError, json_objects={"default_params": '{"temperature": 0}'})
    address = normalised_base_url(endpoint.base_url)
    if key:
        endpoint.api_key_sealed, endpoint.api_key_last4 = seal(key, address), last_four(key)
    elif clear_api_key:
        endpoint.api_key_sealed, endpoint.api_key_last4 = "", ""
    elif endpoint.api_key_sealed and entered_for != address:
        raise RunError(
            f"base_url: the stored key was entered for {entered_for} and is sent only there; "
            "to use another address, enter the key again with it (or remove the stored key)",
            field="base_url",
        )
    if endpoint.api_key_sealed and endpoint.api_key_env:
        raise RunError(
            "api_key_env: the key is either stored here or read from a variable, not both: "
            "clear the key variable, or remove the stored key",
            field="api_key_env",
        )
    if commit:
        with transaction.atomic():
            endpoint.save()
            _judge_versions_after(endpoint)
    return endpoint


def _judge_versions_after(endpoint: Endpoint) -> None:
    """The judges asking `endpoint` get their version of what it now is (a new one when its
    model, address, style or parameters changed: evaluation.judge_versions)."""
    for judge in endpoint.judges.select_related("endpoint"):
        try:
            version_for(judge)
        except ValueError:  # a template this platform no longer registers: launch refuses it
            continue


def endpoint_rotate_keys() -> int:
    """Seal every stored key again under the first of FIELD_ENCRYPTION_KEYS (after a new key is
    put first, before the old one is dropped). Returns how many were sealed again. Raises
    RunError naming an endpoint whose key none of the keys opens."""
    count = 0
    with transaction.atomic():
        for endpoint in Endpoint.objects.select_for_update().exclude(api_key_sealed=""):
            try:
                sealed = reseal(endpoint.api_key_sealed)
            except SealedKeyError as exc:
                raise RunError(f"endpoint {endpoint.name!r}: {exc}", field="api_key") from None
            Endpoint.objects.filter(pk=endpoint.pk).update(api_key_sealed=sealed)
            count += 1
    return count


# An endpoint on its way to ready (the local model's first build, then its start): a run can be
# launched in a while, without anyone acting.
ENDPOINT_COMING = (Endpoint.Status.BUILDING, Endpoint.Status.STARTING)


def endpoint_not_ready(endpoint: Endpoint) -> str:
    """Why a run cannot be launched on `endpoint` now, and what comes next. For one building or
    starting: how far it is (its status detail, e.g. the build's percentage) and that the run
    can be launched once it is ready; the page and the API refuse at once, `launch_run` waits."""
    state = endpoint.get_status_display().lower()
    detail = f" ({endpoint.status_detail})" if endpoint.status_detail else ""
    if endpoint.status in ENDPOINT_COMING:
        return (
            f"endpoint {endpoint.name!r} is still {state}{detail}; the run can be launched when "
            "it is ready (the Endpoints page shows its progress; `launch_run` waits for it)"
        )
    return f"endpoint {endpoint.name!r} is {state}{detail}; launch when it is ready"


@dataclass(frozen=True)
class ConnectionCheck:
    """What a connection check found: `level` is "success" (reachable, the model listed),
    "warning" (reachable, the model not listed) or "error"; `message` says it in words, never
    with the server's own words (whatever answers there must not have its body shown)."""

    level: str
    message: str


def endpoint_check(endpoint: Endpoint) -> ConnectionCheck:
    """Ask the endpoint's server for its models (GET /models, 10 s at most, no redirect
    followed), with the key the endpoint would send. The admin's action and the endpoint page
    both check here; nothing is saved."""
    try:
        config = endpoint_config(endpoint)
    except ConfigurationError as exc:
        return ConnectionCheck("error", f"{endpoint.name}: {exc}")
    import openai  # here: the client library is seconds of start-up

    client = endpoint_client(replace(config, timeout=10), blocking=True)
    try:
        models = [m.id for m in client.models.list()]
    except openai.OpenAIError as exc:
        return ConnectionCheck("error", f"{endpoint.name}: {failure_summary(exc)}")
    found = endpoint.model in models
    return ConnectionCheck(
        "success" if found else "warning",
        f"{endpoint.name}: reachable; it {'offers' if found else 'does not list'} model "
        f"{endpoint.model!r} ({len(models)} model(s))",
    )


def endpoint_set_status(*, endpoint_id: int, status: str, detail: str = "") -> None:
    Endpoint.objects.filter(pk=endpoint_id).update(
        status=status, status_detail=detail[:2000], status_changed_at=timezone.now()
    )


def endpoint_register_local(
    *,
    port: int,
    model: str,
    name: str = LOCAL_ENDPOINT,
    style: str = Endpoint.Style.COMPLETION,
) -> Endpoint:
    """An embedded model's endpoint (by default the base model's, completion style; the
    tool-calling model's is LOCAL_TOOLS_ENDPOINT, chat style), created on first use; later
    calls only move it to the current port (an admin's changes to its limits and parameters
    are kept)."""
    endpoint, created = Endpoint.objects.get_or_create(
        name=name,
        defaults={
            "base_url": f"http://127.0.0.1:{port}/v1",
            "model": model,
            "style": style,
            # llama.cpp's server answers one request at a time; greedy decoding keeps runs
            # reproducible, and short answers keep a 2-core machine responsive.
            "default_params": (
                {"temperature": 0, "max_tokens": 96}
                if style_named(style).prompt_form == "completion"
                # llama-cpp-python's chatml-function-calling format declares the tools only
                # when the request has a tool_choice (without one it answers as if no tool
                # were declared); a call's arguments need a little more room than a text answer.
                else {"temperature": 0, "max_tokens": 128, "tool_choice": "auto"}
            ),
            "max_concurrency": 1,
            "timeout_seconds": 180,
            "max_attempts": 3,
            "max_claims": 3,
            "is_local": True,
            "status": Endpoint.Status.STARTING,
        },
    )
    if not created:
        Endpoint.objects.filter(pk=endpoint.pk).update(
            base_url=f"http://127.0.0.1:{port}/v1", model=model, is_local=True
        )
        endpoint.refresh_from_db()
    return endpoint


# The demo's native run of the embedded tool-calling model: MetaTool (demo)'s awareness task
# offers the candidate tools as native tools, and the model answers with calls or without.
DEMO_NATIVE_BENCHMARK = "MetaTool (demo)"
DEMO_NATIVE_RUN = "Demo: native tool calls on the local SmolLM2 135M"


def demo_native_run_ensure(*, item_limit: int | None = None) -> Run | None:
    """Launch the demo's native run on the local tool-calling endpoint (LOCAL_TOOLS_ENDPOINT)
    once it is ready: a run a worker answers with the model's real tool calls (all the task's
    items, or `item_limit` of them). Idempotent: None when the demo benchmark or the ready
    endpoint is missing, or such a run exists."""
    benchmark = Benchmark.objects.filter(name=DEMO_NATIVE_BENCHMARK, is_demo=True).first()
    endpoint = Endpoint.objects.filter(
        name=LOCAL_TOOLS_ENDPOINT, status=Endpoint.Status.READY
    ).first()
    if benchmark is None or endpoint is None:
        return None
    if Run.objects.filter(benchmark=benchmark, name=DEMO_NATIVE_RUN).exists():
        return None
    # the suite's first task with a native form (the registry says which)
    evaluator = evaluator_for(benchmark)
    task = next((name for name in evaluator.tasks if evaluator.task(name).native), None)
    if task is None:
        return None
    return run_launch(
        benchmark=benchmark,
        task=task,
        endpoint=endpoint,
        options={"tool_mode": "native"},
        item_limit=item_limit,
        name=DEMO_NATIVE_RUN,
    )
