"""Reads of the evaluation app, and the translation of rows into the suites' plain objects."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.core.cache import cache
from django.db import connection
from django.db.models import BigIntegerField, Count, Q, QuerySet, Sum
from django.db.models.fields.json import KT
from django.db.models.functions import Cast
from django.utils import timezone
from psycopg import sql

from benchmarks.kit.analyses import (
    SAMPLE_COLUMNS,
    SAMPLE_JSON,
    Counted,
    Read,
    RecordValue,
    ScoreBreakdown,
)
from benchmarks.kit.judging import metric_unit
from benchmarks.kit.protocol import (
    Context,
    Evaluator,
    Item,
    MetricSpec,
    TaskSpec,
    ToolSpec,
)
from benchmarks.kit.registry import get_suite
from benchmarks.kit.trials import TRIALS
from benchmarks.models import Benchmark, RevisedTool, Sample, Tool
from config.csvexport import bool_cell_sql, json_cell_sql, text_cell_sql
from config.dbstats import by_primary_key
from config.errors import ApplicationError
from evaluation.models import Endpoint, JudgeJob, Judgment, Prediction, Run
from evaluation.virtualapi.toolbox import VirtualToolbox, served_specs
from evaluation.work.budget import Prices, Tokens, budget_unit, spent
from evaluation.work.styles import prompt_form

SAMPLE_FIELDS = ("id", *Sample.CONTENT_FIELDS)


def item_of(row: dict[str, Any] | Sample) -> Item:
    get: Callable[[str], Any] = (
        row.get if isinstance(row, dict) else lambda name: getattr(row, name)
    )
    return Item(
        split=get("split"),
        external_id=get("external_id"),
        input=get("input") or {},
        reference=get("reference"),
        kind=get("kind"),
        candidate_tools=tuple(get("candidate_tools") or ()),
        metadata=get("metadata") or {},
    )


def items_by_sample_id(
    sample_ids: Iterable[int] | QuerySet[Any], *, fields: Sequence[str] | None = None
) -> dict[int, Item]:
    """The items of these samples by id; `sample_ids` may be a query of ids (a subquery, not
    a list of a million parameters). With `fields` (id among them), only those are read: the
    others are the Item's defaults."""
    ids = sample_ids if isinstance(sample_ids, QuerySet) else list(sample_ids)
    rows = Sample.objects.filter(pk__in=ids).values(*(fields or SAMPLE_FIELDS))
    return {row["id"]: item_of(row) for row in rows}


# A stored score as benchmarks.kit.analyses.score_of reads it: a JSON number as itself, true and
# false as 1 and 0 (Python's bools are numbers), anything else as no value.
_SCORE_VALUE = sql.SQL(
    "CASE jsonb_typeof(p.scores -> {name}) WHEN 'number' THEN (p.scores ->> {name})::float8"
    " WHEN 'boolean' THEN CASE WHEN p.scores -> {name} = 'true'::jsonb THEN 1.0 ELSE 0.0 END"
    " END"
)


def _sample_value(value: Read) -> sql.Composable:
    """The SQL reading of a SampleValue (of the sample `s`), as SampleValue.of reads it from
    the records: a column as itself, a JSON value as its JSON text (json.loads makes it the
    records' value), the tool count and the id's suffix as Item gives them; of a RecordValue,
    its value stored with the answer `p` (as JSON text), filled before it is read
    (evaluation.analyses.fill_record_values)."""
    if isinstance(value, RecordValue):
        return sql.SQL("(p.derived -> {})::text").format(sql.Literal(value.name))
    if value.field in SAMPLE_COLUMNS:
        return sql.Identifier("s", value.field)
    if value.field == "tool_count":
        # Item.candidate_tools is tuple(the stored value or ()): a list's items, an object's
        # keys, a text's characters
        return sql.SQL(
            "CASE jsonb_typeof(s.candidate_tools) WHEN 'array' THEN"
            " jsonb_array_length(s.candidate_tools) WHEN 'object' THEN"
            " (SELECT count(*) FROM jsonb_object_keys(s.candidate_tools))::int"
            " WHEN 'string' THEN char_length(s.candidate_tools #>> '{}') ELSE 0 END"
        )
    if value.field == "id_suffix":
        return sql.SQL("substring(split_part(s.external_id, '#', 1) from '[^_]*$')")
    # -> on a value that is no object gives NULL, as SampleValue.of gives None
    found: sql.Composable = sql.Identifier("s", value.field)
    for key in value.path:
        found = sql.SQL("({} -> {})").format(found, sql.Literal(key))
    return sql.SQL("({})::text").format(found)


def _read(value: Read, raw: Any) -> Any:
    if isinstance(value, RecordValue) or value.field in SAMPLE_JSON:
        return None if raw is None else json.loads(raw)
    return raw


def score_breakdown_counts(
    run: Run, spec: ScoreBreakdown, statuses: Sequence[str]
) -> list[Counted]:
    """The run's predictions of these statuses counted by their sample's values of the
    declared reads and their values of the declared scores (ScoreBreakdown.rows makes the rows
    of them): a handful of rows for a million predictions whose samples and scores take a few
    values."""
    return score_breakdowns_counts(run, [spec], statuses)[0]


def _covered(name: str) -> sql.Composable:
    return sql.SQL(
        "(p.scores -> {name} IS NOT NULL AND p.scores -> {name} <> 'null'::jsonb)"
    ).format(name=sql.Literal(name))


def score_breakdowns_counts(
    run: Run, specs: Sequence[ScoreBreakdown], statuses: Sequence[str]
) -> list[list[Counted]]:
    """score_breakdown_counts of each spec, in one reading of the run's predictions: each
    spec's columns (its sample's values, whether its covered_by score is present, its scores'
    values) are one grouping set of the same GROUP BY."""
    columns: dict[tuple[str, Any], sql.Composable] = {}
    for spec in specs:
        for value in spec.reads:
            columns.setdefault(("read", value), _sample_value(value))
        if spec.covered_by is not None:
            columns.setdefault(("covered", spec.covered_by), _covered(spec.covered_by))
        for name in spec.scores.values():
            columns.setdefault(("score", name), _SCORE_VALUE.format(name=sql.Literal(name)))
    keys = list(columns)
    at = {key: index for index, key in enumerate(keys)}
    sets: list[tuple[int, ...]] = []
    for spec in specs:
        wanted = tuple(
            sorted(
                {
                    *(at[("read", value)] for value in spec.reads),
                    *([at[("covered", spec.covered_by)]] if spec.covered_by is not None else []),
                    *(at[("score", name)] for name in spec.scores.values()),
                }
            )
        )
        if wanted not in sets:
            sets.append(wanted)
    names = [sql.Identifier(f"c{index}") for index in range(len(keys))]
    # Counted by every column first (a plain GROUP BY: a handful of rows for a million
    # predictions), then those counts summed by each set: each further set sorts that handful,
    # not the predictions again.
    query = sql.SQL(
        "SELECT {names}, sum(n)::bigint, GROUPING({names}) FROM (SELECT {columns}, count(*) AS n"
        " FROM evaluation_prediction p JOIN benchmarks_sample s ON s.id = p.sample_id"
        " WHERE p.run_id = %s AND p.status = ANY(%s) GROUP BY {positions}) counted"
        " GROUP BY GROUPING SETS ({sets})"
    ).format(
        names=sql.SQL(", ").join(names),
        columns=sql.SQL(", ").join(
            sql.SQL("{} AS {}").format(columns[key], name)
            for key, name in zip(keys, names, strict=True)
        ),
        positions=sql.SQL(", ").join(sql.Literal(n) for n in range(1, len(keys) + 1)),
        sets=sql.SQL(", ").join(
            sql.SQL("({})").format(sql.SQL(", ").join(names[index] for index in wanted))
            for wanted in sets
        ),
    )
    # GROUPING's bit of a column (its first argument the most significant) is 0 where the row
    # is grouped by it: the bits name the row's grouping set.
    masks = {
        sum(1 << (len(keys) - 1 - index) for index in range(len(keys)) if index not in wanted): (
            wanted
        )
        for wanted in sets
    }
    found: dict[tuple[int, ...], list[tuple[Any, ...]]] = {wanted: [] for wanted in sets}
    with connection.cursor() as cursor:
        cursor.execute(
            query.as_string(cursor.cursor.connection), [run.pk, [str(s) for s in statuses]]
        )
        for row in cursor.fetchall():
            found[masks[row[-1]]].append(row)
    counted: list[list[Counted]] = []
    for spec in specs:
        reads = spec.reads
        covered = at[("covered", spec.covered_by)] if spec.covered_by is not None else None
        rows = found[
            tuple(
                sorted(
                    {
                        *(at[("read", value)] for value in reads),
                        *([covered] if covered is not None else []),
                        *(at[("score", name)] for name in spec.scores.values()),
                    }
                )
            )
        ]
        counted.append(
            [
                (
                    tuple(_read(value, row[at[("read", value)]]) for value in reads),
                    int(row[len(keys)]),
                    tuple(row[at[("score", name)]] for name in spec.scores.values()),
                )
                for row in rows
                if covered is None or row[covered] is True
            ]
        )
    return counted


def sample_rows(benchmark: Benchmark, splits: Sequence[str]) -> list[dict[str, Any]]:
    """The samples of the given splits, in a stable order (split, then import order)."""
    return list(
        Sample.objects.filter(benchmark=benchmark, split__in=list(splits))
        .order_by("split", "id")
        .values(*SAMPLE_FIELDS)
    )


# Tools change only on import, which bumps the benchmark's updated_at, and a revision's
# descriptions never change once written; a chunk of a 16,000-tool benchmark should not read
# them all again for every chunk a process runs.
_tool_cache: dict[tuple[int, int | None], tuple[Any, dict[str, ToolSpec]]] = {}
_tool_lock = threading.Lock()


def tool_specs(benchmark: Benchmark, revision_id: int | None = None) -> dict[str, ToolSpec]:
    """The benchmark's tools as the suites see them; with a tool revision, each tool it covers
    has the revision's description instead of the imported one."""
    key = (benchmark.pk, revision_id)
    with _tool_lock:
        cached = _tool_cache.get(key)
        if cached and cached[0] == benchmark.updated_at:
            return cached[1]
    rows = Tool.objects.filter(benchmark=benchmark).values_list(
        "name", "description", "parameters", "returns", "category", "raw"
    )
    revised: dict[str, str] = {}
    if revision_id is not None:
        revised = dict(
            RevisedTool.objects.filter(
                revision_id=revision_id, revision__benchmark=benchmark
            ).values_list("tool__name", "description")
        )
    specs = {
        name: ToolSpec(
            name, revised.get(name, description), parameters or {}, returns or {}, category, raw
        )
        for name, description, parameters, returns, category, raw in rows
    }
    with _tool_lock:
        _tool_cache[key] = (benchmark.updated_at, specs)
    return specs


def evaluator_for(benchmark: Benchmark) -> Evaluator:
    return get_suite(benchmark.suite).evaluator


def context_for(
    *,
    benchmark: Benchmark,
    evaluator: Evaluator,
    task: str,
    shots: int,
    style: str,
    seed: int,
    options: dict[str, Any],
    tool_revision_id: int | None = None,
) -> Context:
    """What every item of a run shares. `style`: the endpoint's API style (blank for an
    imported run); the suites are told the form of prompt it sends."""
    spec = evaluator.task(task)
    aux = {
        split: [item_of(row) for row in sample_rows(benchmark, [split])]
        for split in spec.aux_splits
    }
    ctx = Context(
        task=spec,
        shots=shots,
        style=prompt_form(style),
        seed=seed,
        options=dict(options),
        tools=tool_specs(benchmark, tool_revision_id),
        aux=aux,
        tool_revision=tool_revision_id,
    )
    if spec.agent:
        # The tools the virtual API server serves to this suite, by name: a launch stores the
        # pool each item is offered; the engine swaps in the toolbox that calls them.
        ctx.toolbox = VirtualToolbox(served_specs(evaluator.name, ctx.tools, task), None)
    return ctx


def run_context(run: Run, evaluator: Evaluator | None = None) -> tuple[Evaluator, Context]:
    evaluator = evaluator or evaluator_for(run.benchmark)
    ctx = context_for(
        benchmark=run.benchmark,
        evaluator=evaluator,
        task=run.task,
        shots=run.shots,
        style=run.style,
        seed=run.seed,
        options=run.launch_options,
        tool_revision_id=run.tool_revision_id,
    )
    return evaluator, ctx


def work_progress(items: QuerySet[Any], statuses: Sequence[str]) -> dict[str, int]:
    """Items per status, with "total", "settled" (neither pending nor running), "to_go",
    "answering" (running and sent, not only claimed), and the tokens they spent
    ("prompt_tokens", "completion_tokens", "cached_tokens"), in one query."""
    rows = (
        items.order_by()
        .values_list("status")
        .annotate(
            n=Count("id"),
            prompt=Sum("prompt_tokens"),
            completion=Sum("completion_tokens"),
            cached_sum=Sum("cached_tokens"),
            from_cache=Count("id", filter=Q(cached=True)),
            calls=Sum(_usage_count("calls")),
            cached_calls=Sum(_usage_count("cached_calls")),
            sent=Count("id", filter=Q(started_at__isnull=False)),
        )
        .values_list(
            "status",
            "n",
            "prompt",
            "completion",
            "cached_sum",
            "from_cache",
            "calls",
            "cached_calls",
            "sent",
        )
    )
    counts: dict[str, int] = {}
    tokens = Tokens()
    cache = {"items_from_cache": 0, "calls": 0, "calls_from_cache": 0}
    answering = 0
    for status, n, prompt, completion, cached, from_cache, calls, cached_calls, sent in rows:
        counts[status] = n
        if status == "running":
            answering = sent
        tokens = tokens + Tokens(prompt or 0, completion or 0, cached or 0)
        cache["items_from_cache"] += from_cache or 0
        cache["calls"] += calls or 0
        cache["calls_from_cache"] += cached_calls or 0
    progress = {status: counts.get(status, 0) for status in statuses}
    progress["total"] = sum(progress.values())
    progress["to_go"] = progress.get("pending", 0) + progress.get("running", 0)
    progress["settled"] = progress["total"] - progress["to_go"]
    # Of the running items, those a lane has sent (the rest are claimed: WorkItem.state).
    progress["answering"] = answering
    progress["prompt_tokens"] = tokens.prompt
    progress["completion_tokens"] = tokens.completion
    progress["cached_tokens"] = tokens.cached
    progress.update(cache)
    return progress


def _usage_count(name: str) -> Cast:
    """A count of an item's `usage` (engine.ItemCalls.usage) as a number (0 when absent)."""
    return Cast(KT(f"usage__{name}"), BigIntegerField())


def cache_use(progress: dict[str, Any]) -> dict[str, int] | None:
    """How many of a run's or judge job's settled items, and of their calls, were answered
    from the response cache (None when none was): its page says so, since those numbers come
    from an earlier request to the same server, not from this work's own."""
    calls_from_cache = progress.get("calls_from_cache", 0)
    if not calls_from_cache:
        return None
    return {
        "items": progress.get("items_from_cache", 0),
        "settled": progress.get("settled", 0),
        "calls": calls_from_cache,
        "all_calls": progress.get("calls", 0),
    }


def spending(
    progress: dict[str, Any], endpoint: Endpoint | None, budget: Decimal | None
) -> dict[str, Any]:
    """What a run or judge job spent (from its progress): tokens in, out and cached, the cost
    at its endpoint's prices (None without prices), and its budget in the budget's unit."""
    tokens = Tokens(
        progress.get("prompt_tokens", 0),
        progress.get("completion_tokens", 0),
        progress.get("cached_tokens", 0),
    )
    prices = Prices.of(endpoint)
    return {
        "tokens": tokens,
        "cost": prices.cost(tokens) if prices is not None else None,
        "budget": budget,
        "budget_unit": budget_unit(prices),
        "spent": spent(tokens, prices),
    }


def run_progress(run: Run) -> dict[str, int]:
    return work_progress(Prediction.objects.filter(run=run), Prediction.Status.values)


def job_progress(job: JudgeJob) -> dict[str, int]:
    return work_progress(job.judgments.all(), Judgment.Status.values)


def run_list(*, benchmark: Benchmark | None = None, task: str | None = None) -> QuerySet[Run]:
    runs = Run.objects.select_related("benchmark", "endpoint")
    if benchmark is not None:
        runs = runs.filter(benchmark=benchmark)
    if task:
        runs = runs.filter(task=task)
    return runs


# A run's tokens, summed over its predictions (read by `run_spending`).
TOKEN_SUMS = {
    f"sum_{name}": Sum(f"predictions__{name}")
    for name in ("prompt_tokens", "completion_tokens", "cached_tokens")
}


def _progress(prefix: str) -> dict[str, Any]:
    """A run's prediction counts per status and its token sums, as aggregates over its
    predictions reached through `prefix` ("predictions__" from runs, "" from predictions)."""
    done, failed = Prediction.Status.DONE, Prediction.Status.FAILED
    return {
        "n_total": Count(f"{prefix}id"),
        "n_done": Count(f"{prefix}id", filter=Q(**{f"{prefix}status": done})),
        "n_failed": Count(f"{prefix}id", filter=Q(**{f"{prefix}status": failed})),
        "n_leaked": Count(f"{prefix}id", filter=Q(**{f"{prefix}leaked": True})),
        **{
            f"sum_{name}": Sum(f"{prefix}{name}")
            for name in ("prompt_tokens", "completion_tokens", "cached_tokens")
        },
    }


def runs_with_progress(runs: QuerySet[Run]) -> QuerySet[Run]:
    """Runs annotated with their prediction counts per status and the tokens they spent (for
    `run_spending`), in one query: for one run (a page of its own); a list of runs takes
    `with_progress` of the page it shows, so that no other run's predictions are read."""
    return runs.annotate(**_progress("predictions__"))


def with_progress(runs: Iterable[Run]) -> list[Run]:
    """The runs (a page of them) with what `runs_with_progress` annotates set on each, counted
    for these runs only in one GROUP BY over their predictions: a list's page no longer
    aggregates every run's predictions before it takes its first 50 (a home page and run list
    read the whole predictions table, a million rows for one large run), and the plan is at
    most one pass over them whatever the statistics say."""
    runs = list(runs)
    if not runs:
        return runs
    aggregates = _progress("")
    counted: dict[int, dict[str, Any]] = {
        row["run_id"]: dict(row)
        for row in Prediction.objects.filter(run_id__in=[run.pk for run in runs])
        .order_by()
        .values("run_id")
        .annotate(**aggregates)
    }
    for run in runs:
        row = counted.get(run.pk, {})
        for name in aggregates:
            setattr(run, name, row.get(name, 0 if name.startswith("n_") else None))
    return runs


def endpoint_list() -> QuerySet[Endpoint]:
    return Endpoint.objects.order_by("name")


RATE_WINDOW_SECONDS = 60


def run_live_status(run: Run) -> dict[str, Any]:
    """Counts per status, the recent rate (items settled per second over the last minute, or
    since the run started if that is shorter) and the time left at that rate."""
    progress = run_progress(run)
    now = timezone.now()
    window = min(RATE_WINDOW_SECONDS, max(1.0, (now - run.created_at).total_seconds()))
    rate = 0.0
    if run.status == Run.Status.RUNNING:
        # Read only while it runs: a finished run of a million items has no rate to count.
        recent = Prediction.objects.filter(
            run=run,
            status__in=[Prediction.Status.DONE, Prediction.Status.FAILED],
            updated_at__gte=now - timedelta(seconds=window),
        ).count()
        rate = recent / window
    left = progress["pending"] + progress["running"]
    settled = progress["done"] + progress["failed"]
    return {
        **progress,
        "settled": settled,
        "percent": round(100 * settled / progress["total"], 1) if progress["total"] else 0.0,
        "rate": rate,
        "eta_seconds": left / rate if rate > 0 else None,
    }


# --- the progress panel of a run's or a judge job's page --------------------------------------

# How long a finished run's page keeps polling for its bootstrap intervals (which may never
# come: a metric undefined in every resample gets none).
INTERVALS_WAIT = timedelta(minutes=10)


def run_polling(run: Run) -> bool:
    """Refresh while the run runs, and for a while after for its intervals."""
    if run.status == Run.Status.RUNNING:
        return True
    recent = run.finished_at is None or timezone.now() - run.finished_at < INTERVALS_WAIT
    return run.status == Run.Status.DONE and bool(run.metrics) and not run.intervals and recent


def progress_panel(
    parent: Run | JudgeJob,
    progress: dict[str, Any],
    *,
    counts: list[tuple[int, str]],
    item: str,
    polling: bool,
    metrics: list[dict[str, Any]],
    metrics_caption: str,
    metrics_template: str,
    endpoint: Endpoint | None = None,
) -> dict[str, Any]:
    """What the progress partial (templates/evaluation/_progress.html) shows, decided here:
    whether it polls, the counts in order, the pace (None unless running), the metrics."""
    total = progress["total"]
    return {
        "polling": polling,
        "status": parent.status,
        "status_label": parent.get_status_display(),
        "total": total,
        "settled": progress["settled"],
        "percent": 100 * progress["settled"] / total if total else 0.0,
        "counts": [
            *counts,
            *([(progress["answering"], "being answered")] if parent.status == "running" else []),
            (progress["to_go"], "to go"),
        ],
        "counts_by_status": progress,
        "item": item,
        "rate": progress.get("rate") if parent.status == Run.Status.RUNNING else None,
        "eta_seconds": progress.get("eta_seconds"),
        "error": parent.error,
        "metrics": metrics,
        "metrics_caption": metrics_caption,
        "metrics_template": metrics_template,
        "spending": spending(progress, endpoint, getattr(parent, "budget", None)),
        "from_cache": cache_use(progress),
    }


def run_panel(run: Run, spec: TaskSpec | None = None) -> dict[str, Any]:
    status = run_live_status(run)
    if run.intervals:
        caption = "Metrics with bootstrap 95% intervals"
    elif run.status == Run.Status.DONE:
        caption = "Metrics (intervals being computed)"
    else:
        caption = "Metrics"
    if run.trials > 1:
        caption += f", means ± sd over {run.trials} trials"
    panel = progress_panel(
        run,
        status,
        counts=[(status["done"], "done"), (status["failed"], "failed")],
        item="items",
        polling=run_polling(run),
        metrics=run_metric_rows(run, spec),
        metrics_caption=f"{caption}; ↑ higher is better, ↓ lower",
        metrics_template="evaluation/_run_metrics.html",
        endpoint=run.endpoint,
    )
    trials = trial_summary(run)
    if trials is not None:
        spec = spec if spec is not None else task_spec(run)
        # pass@k is on its metric's own scale: a percentage's in percent
        trials["pass"] = [
            {
                **row,
                "count": False,
                "percent": spec is not None and _is_percent(spec, row["metric"]),
            }
            for row in trials["pass"]
        ]
    panel["trials"] = trials
    return panel


def job_metric_rows(job: JudgeJob) -> list[dict[str, Any]]:
    """Each metric's mean over the repeats, with its standard deviation (stored as
    <name>_std), and its unit (benchmarks.kit.judging.metric_unit)."""
    rows = []
    for name, value in job.metrics.items():
        if name.endswith("_std"):
            continue
        unit = metric_unit(job.judge.kind, name)
        rows.append(
            {
                "name": name,
                "value": value,
                # a count is the same in every repeat: no spread to show
                "std": None if unit == "count" else job.metrics.get(f"{name}_std"),
                "count": unit == "count",
                "percent": unit == "percent",
            }
        )
    return rows


def job_panel(job: JudgeJob) -> dict[str, Any]:
    progress = job_progress(job)
    repeats = f"{job.repeats} repeat" + ("" if job.repeats == 1 else "s")
    return progress_panel(
        job,
        progress,
        counts=[
            (progress["done"], "read"),
            (progress["unparsed"], "unparsed"),
            (progress["failed"], "failed"),
        ],
        item="judgments",
        polling=job.status == JudgeJob.Status.RUNNING,
        metrics=job_metric_rows(job),
        metrics_caption=f"Metrics: mean ± standard deviation over the {repeats}",
        metrics_template="evaluation/_job_metrics.html",
        endpoint=job.judge.endpoint,
    )


def leaderboard(benchmark: Benchmark, task: str) -> tuple[list[str], list[Run]]:
    """(metric names, finished runs sorted by the task's headline metric in its direction,
    best first: a lower-is-better headline ascending; runs without it last)."""
    evaluator = evaluator_for(benchmark)
    spec = evaluator.task(task)
    runs: list[Run] = list(
        Run.objects.filter(benchmark=benchmark, task=task, status=Run.Status.DONE)
        .select_related("endpoint")
        .annotate(n_leaked=Count("predictions", filter=Q(predictions__leaked=True)))
        .annotate(**TOKEN_SUMS)
    )
    names = list(spec.metrics)
    for run in runs:
        # a run of several trials is ranked on its means; its sds and pass@k are on its page
        trials = run.trials > 1
        names.extend(
            name
            for name in run.metrics
            if name not in names and not (trials and _trial_figure(name))
        )
    headline = names[0] if names else None
    declared = spec.run_metric(headline) if headline else None
    # An undeclared headline (a task without metrics, a run's own name) keeps higher-is-better.
    sign = declared.sign if declared is not None and declared.comparable else 1.0

    def rank(run: Run) -> tuple[int, float]:
        value = run.metrics.get(headline) if headline else None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return (0, -sign * float(value))
        return (1, 0.0)

    runs.sort(key=rank)
    return names, runs


def run_spending(run: Run) -> dict[str, Any]:
    """A run's spending (see `spending`), from the sums `leaderboard` and
    `runs_with_progress` annotated (TOKEN_SUMS)."""
    progress = {
        name: getattr(run, f"sum_{name}", None) or 0
        for name in ("prompt_tokens", "completion_tokens", "cached_tokens")
    }
    return spending(progress, run.endpoint, run.budget)


def task_spec(run: Run) -> TaskSpec | None:
    """The run's task as this version of its suite declares it; None for a suite or task it no
    longer has (the run's values are then shown as stored)."""
    try:
        return evaluator_for(run.benchmark).task(run.task)
    except (ValueError, KeyError):
        return None


def ordered_metrics(run: Run, spec: TaskSpec | None = None) -> list[tuple[str, Any]]:
    """The run's metrics in its task's order (headline first), then any others by name.
    PostgreSQL's jsonb keeps keys shortest first, so the stored order means nothing."""
    spec = spec if spec is not None else task_spec(run)
    declared = list(spec.metrics) if spec is not None else []
    names = [name for name in declared if name in run.metrics]
    names += sorted(name for name in run.metrics if name not in names)
    return [(name, run.metrics[name]) for name in names]


# --- what a value is, for display ---------------------------------------------------------------


def as_count(value: Any) -> Any:
    """A count's (or flag's) value as a whole number: suites return floats, and 20 items are
    not 20.0 of anything. A value that is not whole is left as it is."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _is_percent(spec: TaskSpec, name: str) -> bool:
    # A per-dataset value ("accuracy[gsm8k]") is in the unit of the metric it is made from.
    return name in spec.percent or name.split("[", 1)[0] in spec.percent


def metric_row(
    name: str, value: Any, interval: Any, spec: TaskSpec | None, metric: MetricSpec | None
) -> dict[str, Any]:
    """One value as pages and the API show it: a count as a whole number without interval; a
    score with its interval and its direction; an undeclared name as stored."""
    count = metric is not None and metric.kind == "count"
    return {
        "name": name,
        "value": as_count(value) if count else value,
        "interval": None if count else interval,
        "kind": metric.kind if metric else None,
        "count": count,
        "direction": metric.direction if metric else None,
        "percent": spec is not None and _is_percent(spec, name),
        "description": metric.description if metric else "",
    }


def run_metric_rows(run: Run, spec: TaskSpec | None = None) -> list[dict[str, Any]]:
    """The run's metrics in order (ordered_metrics), each as metric_row. A run of several
    trials shows each metric's mean over the trials with its sd ("std"); the sds, the number of
    trials and pass@k / pass^k are in trial_summary, not rows of their own."""
    spec = spec if spec is not None else task_spec(run)
    trials = run.trials > 1
    rows = []
    for name, value in ordered_metrics(run, spec):
        if trials and _trial_figure(name):
            continue
        row = metric_row(
            name,
            value,
            (run.intervals or {}).get(name),
            spec,
            spec.run_metric(name) if spec else None,
        )
        if trials:
            row["std"] = (run.metrics or {}).get(f"{name}_std")
        rows.append(row)
    return rows


PASS_K = re.compile(r"^(?P<metric>.+) pass(?P<kind>[@^])(?P<k>\d+)$")


def _trial_figure(name: str) -> bool:
    """A figure over trials that is not a metric's mean (benchmarks.kit.trials)."""
    return name == TRIALS or name.endswith("_std") or PASS_K.match(name) is not None


def trial_summary(run: Run) -> dict[str, Any] | None:
    """A run of several trials: {"trials": k, "std": {metric: sd over the trials}, "pass":
    [{"metric", "k", "pass_at", "pass_hat"}] in metric then k order}; None for one trial."""
    if run.trials == 1:
        return None
    metrics = run.metrics or {}
    table: dict[tuple[str, int], dict[str, Any]] = {}
    for name, value in metrics.items():
        if found := PASS_K.match(name):
            key = (found["metric"], int(found["k"]))
            row = table.setdefault(key, {"metric": key[0], "k": key[1]})
            row["pass_at" if found["kind"] == "@" else "pass_hat"] = value
    return {
        "trials": run.trials,
        "std": {
            name[: -len("_std")]: value for name, value in metrics.items() if name.endswith("_std")
        },
        "pass": [table[key] for key in sorted(table)],
    }


def item_scores(scores: dict[str, Any] | None, spec: TaskSpec | None) -> dict[str, Any]:
    """A prediction's per-item values in the task's declared order, then the rest by name;
    counts and flags as whole numbers, scores and undeclared names as stored."""
    scores = scores or {}
    declared = list(spec.item_metrics) if spec is not None else []
    names = [name for name in declared if name in scores]
    names += sorted(name for name in scores if name not in names)
    shown: dict[str, Any] = {}
    for name in names:
        metric = spec.item_metric(name) if spec is not None else None
        whole = metric is not None and metric.kind in ("count", "flag")
        shown[name] = as_count(scores[name]) if whole else scores[name]
    return shown


# --- the predictions CSV ------------------------------------------------------------------------

# A run's predictions and their samples' names, read so that no statistics can make the plan
# quadratic (docs/performance.md, "Plans after a bulk write"): the run's rows by its index, in
# position order, and each one's sample by its primary key, one probe per row
# (config.dbstats.by_primary_key). Planned as a join, stale statistics (a run the last ANALYZE
# never saw, a table analysed with few live rows in many pages) made it a nested loop estimated
# at one row a side whose inner side read the whole samples index for every prediction.
PREDICTIONS_WITH_SAMPLES = "evaluation_prediction p " + by_primary_key(
    "benchmarks_sample", "split, external_id", "p.sample_id", "s"
)

# A run's predictions in the CSV's order, as stored: what perf/csv_speed.py's baseline COPYs.
PREDICTION_CSV_SQL = f"""
SELECT p.position, s.split, s.external_id, p.repeat, p.status, p.output, p.answer, p.parsed,
       p.note, p.error, p.attempts, p.latency_ms, p.cached, p.prompt_tokens,
       p.completion_tokens, p.cached_tokens, p.scores
FROM {PREDICTIONS_WITH_SAMPLES}
WHERE p.run_id = %s
ORDER BY p.position
"""  # noqa: S608 - a constant

# Every score name of a run in the order a reader of its rows meets them: by the first row (in
# position order) that has it, then its place among that row's keys (jsonb's own order, the
# order the decoded dict keeps). Computed by PostgreSQL, without sending the scores over. A
# finished run stores them (Run.score_names); this is for the others.
SCORE_NAMES_SQL = """
SELECT t.name
FROM evaluation_prediction p
CROSS JOIN LATERAL jsonb_object_keys(
    CASE WHEN jsonb_typeof(p.scores) = 'object' THEN p.scores ELSE '{}'::jsonb END
) WITH ORDINALITY AS t(name, place)
WHERE p.run_id = %s
GROUP BY t.name
ORDER BY min(ARRAY[p.position::bigint, t.place])
"""


def prediction_score_names(run_id: int) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(SCORE_NAMES_SQL, [run_id])
        return [row[0] for row in cursor.fetchall()]


def cost_cell_sql(prices: Prices) -> sql.Composed:
    """An item's cost at these prices as str(Prices.cost(...)) writes it, computed by
    PostgreSQL: the exact amount (numeric arithmetic is exact, like Decimal's here), with as
    many decimals as Decimal's division by a million keeps (trailing zeros dropped, but never
    fewer than the prices have), in Decimal's scientific notation under a millionth
    (3E-10, 1.25E-7), as Python's str() of a Decimal writes it."""
    cached_price = prices.input if prices.cached is None else prices.cached
    scale = max(
        0, *(-int(d.as_tuple().exponent) for d in (prices.input, prices.output, cached_price))
    )
    amount = sql.SQL(
        "((p.prompt_tokens - least(p.cached_tokens, p.prompt_tokens)) * {input}"
        " + least(p.cached_tokens, p.prompt_tokens) * {cached}"
        " + p.completion_tokens * {output}) * 0.000001"
    ).format(
        input=sql.Literal(prices.input),
        cached=sql.Literal(cached_price),
        output=sql.Literal(prices.output),
    )
    rounded = sql.SQL("round({v}, greatest({scale}, scale(trim_scale({v}))))").format(
        v=amount, scale=sql.Literal(scale)
    )
    digits = sql.SQL("ltrim(replace({r}::text, '.', ''), '0')").format(r=rounded)
    return sql.SQL(
        "CASE WHEN {v} <> 0 AND {v} < 0.000001 THEN"
        " CASE WHEN length({d}) = 1 THEN {d} ELSE left({d}, 1) || '.' || substr({d}, 2) END"
        " || 'E' || (length({d}) - scale({r}) - 1)::text"
        " ELSE {r}::text END"
    ).format(v=amount, d=digits, r=rounded)


def prediction_csv_query(
    run: Run, *, score_names: Sequence[str], whole: set[str], prices: Prices | None
) -> sql.Composed:
    """The predictions CSV's rows (evaluation.views.CSV_COLUMNS, then one column per score
    name) as the cells' text, for config.csvexport.copy_csv_lines: a trials run's repeat is its
    trial (an imported run's further lines are not), counts and flags (`whole`) as whole
    numbers, the cost at `prices` (empty without)."""
    p = sql.SQL
    scores = [
        json_cell_sql(
            p("(p.scores -> {})").format(sql.Literal(name)),
            whole=name in whole,
            text=p("(p.scores ->> {})").format(sql.Literal(name)),
        )
        for name in score_names
    ]
    columns = [
        sql.Literal(run.pk),
        p("p.position"),
        text_cell_sql(p("s.split")),
        text_cell_sql(p("s.external_id")),
        p("p.repeat"),
        p("p.repeat") if run.trials > 1 else sql.Literal(0),
        text_cell_sql(p("p.status")),
        text_cell_sql(p("p.output")),
        json_cell_sql(p("p.answer")),
        json_cell_sql(p("p.tool_calls")),
        bool_cell_sql(p("p.parsed")),
        text_cell_sql(p("p.note")),
        text_cell_sql(p("p.error")),
        p("p.attempts"),
        p("p.latency_ms"),
        bool_cell_sql(p("p.cached")),
        p("p.prompt_tokens"),
        p("p.completion_tokens"),
        p("p.cached_tokens"),
        cost_cell_sql(prices) if prices is not None else p("NULL"),
        *scores,
    ]
    return p("SELECT {columns} FROM {rows} WHERE p.run_id = {run} ORDER BY p.position").format(
        columns=p(", ").join(columns), rows=p(PREDICTIONS_WITH_SAMPLES), run=sql.Literal(run.pk)
    )


# --- two runs of one task, item by item -------------------------------------------------------

# Each run's prediction of every (sample, trial) (one: prediction_unique_per_run), the two
# joined, and whether they disagree: another parsed answer, a missing one included, or another
# per-item score (jsonb compares numbers by value, so 1 and 1.0 agree, as in Python). In A's
# order, then B's own items.
_COMPARED = """
WITH a AS (
    SELECT id, sample_id, repeat, position, answer, scores
    FROM evaluation_prediction WHERE run_id = %(a)s
), b AS (
    SELECT id, sample_id, repeat, position, answer, scores
    FROM evaluation_prediction WHERE run_id = %(b)s
)
"""
_DIFFERS = """(
    COALESCE(a.answer, 'null'::jsonb) IS DISTINCT FROM COALESCE(b.answer, 'null'::jsonb)
    OR COALESCE(a.scores, '{}'::jsonb) IS DISTINCT FROM COALESCE(b.scores, '{}'::jsonb))"""

COMPARE_COUNTS_SQL = f"""{_COMPARED}
SELECT count(*) FILTER (WHERE a.id IS NOT NULL AND b.id IS NOT NULL),
    count(*) FILTER (WHERE a.id IS NOT NULL AND b.id IS NOT NULL AND {_DIFFERS}),
    count(*) FILTER (WHERE b.id IS NULL),
    count(*) FILTER (WHERE a.id IS NULL)
FROM a FULL JOIN b USING (sample_id, repeat)
"""  # noqa: S608 (the constants above, no input)

# A page of the shared items, in A's order: an ordered walk of A's index that stops at the
# page's end, not a read of every pair.
COMPARE_PAGE_SQL = f"""{_COMPARED}
SELECT a.id, b.id, {_DIFFERS}
FROM a JOIN b USING (sample_id, repeat)
WHERE %(shown)s = 'all' OR {_DIFFERS} = (%(shown)s = 'disagree')
ORDER BY a.position
LIMIT %(limit)s OFFSET %(offset)s
"""  # noqa: S608 (the constants above, no input)


class ComparedPairs:
    """The shared items of two runs ("all", or those on which they "disagree" or "agree"),
    each {"a": id, "b": id, "differs"}, read a page at a time: what Django's Paginator slices.
    `count` is known (the counts of runs_compared)."""

    def __init__(self, a: Run, b: Run, shown: str, count: int) -> None:
        self.a, self.b, self.shown, self.total = a.pk, b.pk, shown, count

    def count(self) -> int:
        return self.total

    def __len__(self) -> int:
        return self.total

    def __getitem__(self, key: slice) -> list[dict[str, Any]]:
        start, stop, _step = key.indices(self.total)
        return compared_pairs(self.a, self.b, self.shown, start, stop - start)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self[0 : self.total])


def compared_pairs(a: int, b: int, shown: str, offset: int, limit: int) -> list[dict[str, Any]]:
    """`limit` pairs of runs `a` and `b` (ids) from `offset` on, of those `shown`, in A's
    order: each {"a": id, "b": id, "differs"}."""
    if limit <= 0:
        return []
    params: dict[str, Any] = {"a": a, "b": b, "shown": shown, "limit": limit, "offset": offset}
    with connection.cursor() as cursor:
        cursor.execute(COMPARE_PAGE_SQL, params)
        return [{"a": pa, "b": pb, "differs": bool(d)} for pa, pb, d in cursor.fetchall()]


class UncountedPage:
    """A page of the shared items while their count is not known: the page's pairs and whether
    another follows (one pair more is read), the page number as asked (from 1; a page past the
    end is empty). What the template reads of a Paginator's page, without `paginator`."""

    paginator = None

    def __init__(self, a: Run, b: Run, shown: str, number: int, size: int) -> None:
        self.number = number
        read = compared_pairs(a.pk, b.pk, shown, (number - 1) * size, size + 1)
        self.object_list, self.more = read[:size], len(read) > size

    def has_next(self) -> bool:
        return self.more

    def has_previous(self) -> bool:
        return self.number > 1

    def has_other_pages(self) -> bool:
        return self.more or self.number > 1

    def next_page_number(self) -> int:
        return self.number + 1

    def previous_page_number(self) -> int:
        return self.number - 1


# How many runs of one task the comparison's picker offers (the newest).
PICKED_RUNS = 50


def comparable_runs(*, around: Run | None = None) -> list[dict[str, Any]]:
    """The runs the comparison can pair, per task that has two or more (of `around`'s task
    only, when given), newest first: [{"benchmark", "task", "runs"}]. Only a task's newest
    PICKED_RUNS are offered."""
    tasks = Run.objects.order_by().values("benchmark_id", "task").annotate(n=Count("id"))
    tasks = tasks.filter(n__gte=2)
    if around is not None:
        tasks = tasks.filter(benchmark_id=around.benchmark_id, task=around.task)
    groups = []
    for row in sorted(tasks, key=lambda row: (row["benchmark_id"], row["task"])):
        runs = list(
            run_list()
            .filter(benchmark_id=row["benchmark_id"], task=row["task"])
            .order_by("-created_at", "-pk")[:PICKED_RUNS]
        )
        if around is not None and around not in runs:
            runs = [around, *runs[: PICKED_RUNS - 1]]
        groups.append({"benchmark": runs[0].benchmark, "task": row["task"], "runs": runs})
    return groups


class CompareError(ApplicationError):
    """Two runs that cannot be compared item by item; the message says why."""


def check_comparable(a: Run, b: Run) -> None:
    """What makes two runs comparable item by item: two runs of one task (of one benchmark).
    Raises CompareError naming both otherwise."""
    if a.pk == b.pk:
        raise CompareError("compare a run with another run", field="b")
    if (a.benchmark_id, a.task) != (b.benchmark_id, b.task):
        raise CompareError(
            f"run #{a.pk} is {a.benchmark.name} · {a.task} and run #{b.pk} is "
            f"{b.benchmark.name} · {b.task}: compare two runs of one task",
            field="b",
        )


# How long counted pairs are kept (they are keyed by what they were counted from: a key no
# longer asked for is let expire).
COMPARE_COUNTS_SECONDS = 30 * 24 * 3600


def _compare_counts_key(a: Run, b: Run) -> str | None:
    """The cache key of the counts of two finished runs, made of what they were counted from:
    each run as it was (its id and updated_at), the lower id first, so that A with B and B with
    A share one entry (kept in that order: _oriented). None while a run is not done: a running
    run's items change, a failed or cancelled one may still settle the items a worker holds. A
    done run's items change only after its resume (lifecycle.resume: running again, updated_at
    moved), so a key of two done runs names counts that stay true."""
    if a.status != Run.Status.DONE or b.status != Run.Status.DONE:
        return None
    runs = sorted((a, b), key=lambda run: run.pk)
    stamps = [f"{run.pk}@{run.updated_at.timestamp() if run.updated_at else 0}" for run in runs]
    return "compare-counts:" + ":".join(stamps)


def _oriented(counts: dict[str, int], a: Run, b: Run) -> dict[str, int]:
    """Counts of A with B as B with A has them when B's id is the lower (the kept order, lower
    id first): the items only in one run trade places; shared, agree and disagree stay."""
    if a.pk < b.pk:
        return counts
    return {**counts, "only_a": counts["only_b"], "only_b": counts["only_a"]}


def compared_counts_known(a: Run, b: Run) -> dict[str, int] | None:
    """The counts of runs_compared when they are at hand without reading the runs' items:
    those of two done runs counted before (compared_counts, by a page or ahead of it when a
    run finished: services.run_compare_counts_ahead). None otherwise."""
    key = _compare_counts_key(a, b)
    found = cache.get(key) if key else None
    return _oriented(found, a, b) if isinstance(found, dict) else None


def forget_compared_counts(a: Run, b: Run) -> None:
    """Drop the kept counts of two runs (the next page counts them again)."""
    if key := _compare_counts_key(a, b):
        cache.delete(key)


def compared_counts(a: Run, b: Run) -> dict[str, int]:
    """The counts of the items two runs share (same sample, same trial) and of those only one
    has: {"shared", "agree", "disagree", "only_a", "only_b"}. Counted in the database (every
    item of both runs read: about 1.5 s at a million each), and kept in the cache when both
    runs are done (_compare_counts_key). The one counting of them: the page's fragment on a
    miss, and the reports task that counts a finished run against its task's others."""
    with connection.cursor() as cursor:
        cursor.execute(COMPARE_COUNTS_SQL, {"a": a.pk, "b": b.pk})
        shared, disagree, only_a, only_b = cursor.fetchone()
    counts = {
        "shared": shared,
        "agree": shared - disagree,
        "disagree": disagree,
        "only_a": only_a,
        "only_b": only_b,
    }
    if key := _compare_counts_key(a, b):
        cache.set(key, _oriented(counts, a, b), timeout=COMPARE_COUNTS_SECONDS)
    return counts


def compared_counts_now(a: Run, b: Run) -> dict[str, int] | None:
    """The counts a page of two runs shows at once: those kept of two done runs, or counted
    now when the runs are not both done (their items still change: counts never kept); None
    when two done runs were never counted (the page asks for them apart: compare-counts)."""
    if _compare_counts_key(a, b) is None:
        return compared_counts(a, b)
    return compared_counts_known(a, b)


def shown_count(counts: dict[str, int], shown: str) -> int:
    """How many pairs a view of the pairs (all, disagree or agree) holds."""
    return {"all": counts["shared"], "disagree": counts["disagree"], "agree": counts["agree"]}[
        shown
    ]


def runs_compared(a: Run, b: Run, shown: str = "all") -> dict[str, Any]:
    """The items two runs share (same sample, same trial), in A's order, each with whether
    they disagree (another parsed answer or another per-item score), and the counts: agree,
    disagree, and items only one run has (compared_counts, from the cache when known). Counted
    in the database, and `pairs` (those `shown`: all, disagree or agree) read a page at a time
    (ComparedPairs): two runs of a million items are compared without reading their pairs
    into Python."""
    counts = compared_counts_known(a, b) or compared_counts(a, b)
    return {"pairs": ComparedPairs(a, b, shown, shown_count(counts, shown)), **counts}


def input_summary(value: Any, limit: int = 300) -> str:
    """A sample's input in a line or two: its question when it names one, else its first text
    (a dialogue: its last turn), else its JSON; cut at `limit` characters."""
    text = _first_text(value)
    if text is None:
        text = json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


QUESTION_KEYS = ("query", "question", "instruction", "prompt", "content", "text")


def _first_text(value: Any, depth: int = 0) -> str | None:
    if depth > 4:
        return None
    if isinstance(value, str):
        return value or None
    if isinstance(value, dict):
        for key in QUESTION_KEYS:
            found = _first_text(value.get(key), depth + 1) if key in value else None
            if found:
                return found
        for inner in value.values():
            found = _first_text(inner, depth + 1)
            if found:
                return found
    if isinstance(value, list):
        for inner in reversed(value):
            found = _first_text(inner, depth + 1)
            if found:
                return found
    return None
