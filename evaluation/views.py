"""HTML pages of the evaluation app: runs with live progress, their predictions, leaderboards,
and CSV export. One view serves the full page or, for htmx, the partial it swaps in."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from benchmarks.models import Benchmark
from config.access import allows
from config.charts import bar_chart
from config.csvexport import csv_response
from config.errors import ApplicationError
from evaluation import lifecycle
from evaluation.judging import JUDGE_JOBS
from evaluation.models import JudgeJob, Judgment, Prediction, Run
from evaluation.selectors import (
    as_count,
    evaluator_for,
    item_scores,
    job_panel,
    leaderboard,
    metric_row,
    prediction_csv_rows,
    prediction_score_names,
    run_list,
    run_panel,
    run_spending,
    runs_with_progress,
    task_spec,
)
from evaluation.services import RUNS
from evaluation.work.budget import Prices, Tokens

PAGE_SIZE = 50


@require_GET
def run_index(request: HttpRequest) -> HttpResponse:
    runs = runs_with_progress(run_list())
    benchmark_id = request.GET.get("benchmark", "")
    if benchmark_id.isdigit():
        runs = runs.filter(benchmark_id=int(benchmark_id))
    page = Paginator(runs.order_by("-created_at"), PAGE_SIZE).get_page(request.GET.get("page"))
    tasks = sorted(
        Run.objects.order_by().values_list("benchmark_id", "benchmark__name", "task").distinct()
    )
    rows = [(run, run_spending(run)) for run in page.object_list]
    context = {"page": page, "rows": rows, "boards": tasks}
    template = "evaluation/run_list.html#runs" if request.htmx else "evaluation/run_list.html"
    return render(request, template, context)


def _controls(
    request: HttpRequest, kind: lifecycle.WorkKind, parent: Any, progress: Any, control: str
) -> list[dict[str, str]]:
    """The page's buttons (lifecycle.controls), with where each posts."""
    can_change = allows(request.user, control, method="POST")
    return [
        {
            "label": c.label,
            "url": reverse(control, args=[parent.pk, c.action]),
            "budget": parent.budget if c.action == "resume" else None,
            "asks_budget": c.action == "resume",
        }
        for c in lifecycle.controls(kind, parent, progress, can_change=can_change)
    ]


def _control(
    request: HttpRequest, kind: lifecycle.WorkKind, parent: Any, action: str, detail: str
) -> HttpResponse:
    """Cancel, resume or retry a run or a judge job from its page, then back to the page."""
    noun, item = kind.words.noun, kind.words.item
    try:
        if action == "cancel":
            changed = lifecycle.cancel(kind, parent)
            messages.info(
                request,
                f"{noun.capitalize()} cancelled." if changed else f"The {noun} was not running.",
            )
        elif action in ("resume", "retry"):
            count = lifecycle.resume(
                kind, parent, retry_failed=action == "retry", budget=_posted_budget(request)
            )
            messages.success(request, f"{noun.capitalize()} resumed: {count} {item}(s) queued.")
        else:
            raise Http404("unknown action")
    except ApplicationError as exc:
        messages.error(request, str(exc))
    return redirect(detail, pk=parent.pk)


def _posted_budget(request: HttpRequest) -> Decimal | Literal["keep"]:
    """The budget typed beside Resume; an empty box keeps the budget as it is."""
    text = request.POST.get("budget", "").strip()
    if not text:
        return lifecycle.KEEP
    try:
        return Decimal(text)
    except InvalidOperation:
        raise ApplicationError(f"the budget {text!r} is not a number") from None


@require_GET
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(Run.objects.select_related("benchmark", "endpoint"), pk=pk)
    spec = task_spec(run)
    context: dict[str, Any] = {
        "run": run,
        "progress": run_panel(run, spec),
        "progress_url": f"{reverse('evaluation:run-detail', args=[run.pk])}?part=progress",
    }
    if request.htmx and request.GET.get("part") == "progress":
        return render(request, "evaluation/_progress.html", context)
    predictions = run.predictions.select_related("sample").order_by("position")
    shown = request.GET.get("status", "")
    if shown in Prediction.Status.values:
        predictions = predictions.filter(status=shown)
    page = Paginator(predictions, PAGE_SIZE).get_page(request.GET.get("page"))
    for prediction in page.object_list:
        prediction.shown_scores = item_scores(prediction.scores, spec)
        if prediction.tool_calls:
            prediction.tool_calls_json = json.dumps(
                prediction.tool_calls, ensure_ascii=False, indent=1
            )
    context.update(
        {
            "page": page,
            "shown": shown,
            "statuses": Prediction.Status.choices,
            "controls": _controls(
                request,
                RUNS,
                run,
                context["progress"]["counts_by_status"],
                "evaluation:run-control",
            ),
            "jobs": JudgeJob.objects.filter(Q(run=run) | Q(against=run))
            .select_related("judge")
            .order_by("-created_at"),
            "params_json": json.dumps(run.params, ensure_ascii=False),
            "options_json": json.dumps(run.options, ensure_ascii=False),
            "leaked_calls": run.predictions.filter(leaked=True).count()
            if run.tool_mode == "native"
            else 0,
            "import_lines": _import_lines(run.import_report),
        }
    )
    if request.htmx and request.GET.get("part") == "predictions":
        return render(request, "evaluation/run_detail.html#predictions", context)
    return render(request, "evaluation/run_detail.html", context)


def _count(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _import_lines(report: dict[str, Any]) -> list[str]:
    """An imported run's import report in sentences: how many outputs the file held, what was
    done with samples it gave several lines (the policy changes the metrics), and which samples
    it did not answer."""
    if not report:
        return []
    lines = [f"{_count(report['outputs'], 'output')} read."]
    repeated = report.get("repeated") or []
    if repeated:
        names = ", ".join(entry["sample"] for entry in repeated)
        several = "sample has" if len(repeated) == 1 else "samples have"
        policy = report["on_duplicate"]
        if policy == "reference":
            done = "every line scored as an item of its own"
        else:
            done = f"the {policy} line of each kept, {_count(report['repeats_dropped'], 'repeat')}"
            done += " dropped"
        lines.append(
            f"{len(repeated)} {several} several lines ({names}): {done} (--on-duplicate {policy})."
        )
    if report.get("missing_count"):
        shown = report["missing"]
        more = report["missing_count"] - len(shown)
        lines.append(
            f"No output for {_count(report['missing_count'], 'sample')}: {', '.join(shown)}"
            + (f" and {more} more" if more else "")
        )
    return lines


@require_POST
def run_control(request: HttpRequest, pk: int, action: str) -> HttpResponse:
    run = get_object_or_404(Run, pk=pk)
    return _control(request, RUNS, run, action, "evaluation:run-detail")


@require_GET
def run_leaderboard(request: HttpRequest, benchmark_id: int, task: str) -> HttpResponse:
    benchmark = get_object_or_404(Benchmark, pk=benchmark_id)
    try:
        spec = evaluator_for(benchmark).task(task)
    except ValueError:
        raise Http404(f"{benchmark.name} has no task {task!r}") from None
    names, runs = leaderboard(benchmark, task)
    rows = [
        {
            "run": run,
            "spend": run_spending(run),
            "cells": [
                metric_row(
                    name,
                    run.metrics.get(name),
                    (run.intervals or {}).get(name),
                    spec,
                    spec.run_metric(name),
                )
                for name in names
            ],
        }
        for run in runs
    ]
    chart = None
    if runs and names:
        headline = names[0]
        chart = bar_chart(
            # BFCL's way: a model's native (function-calling) and text runs are separate rows.
            [
                f"#{run.pk} {run.name or run.model_name}"
                + (" (native)" if run.tool_mode == "native" else "")
                for run in runs
            ],
            [_number(run.metrics.get(headline)) for run in runs],
            [run.intervals.get(headline) for run in runs],
            title=f"{headline} by run, with bootstrap 95% intervals",
            maximum=100.0 if headline in spec.percent else None,
        )
    headline = spec.run_metric(names[0]) if names else None
    context = {
        "benchmark": benchmark,
        "task": spec,
        "names": names,
        "rows": rows,
        "chart": chart,
        "direction": headline.direction if headline else None,
    }
    return render(request, "evaluation/leaderboard.html", context)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


CSV_COLUMNS = [
    "run",
    "position",
    "split",
    "sample_id",
    "repeat",
    "trial",
    "status",
    "output",
    "answer",
    "parsed",
    "note",
    "error",
    "attempts",
    "latency_ms",
    "cached",
    "prompt_tokens",
    "completion_tokens",
    "cached_tokens",
    "cost",
]


@require_GET
def run_predictions_csv(request: HttpRequest, pk: int) -> StreamingHttpResponse:
    """One row per prediction with its per-item scores (one column per metric name)."""
    run = get_object_or_404(Run.objects.select_related("benchmark", "endpoint"), pk=pk)
    spec = task_spec(run)
    prices = Prices.of(run.endpoint)
    score_names = prediction_score_names(run.pk)
    # Counts and flags as whole numbers; scores and undeclared names as stored.
    whole = {
        name
        for name in score_names
        if spec is not None
        and (metric := spec.item_metric(name)) is not None
        and metric.kind in ("count", "flag")
    }

    def cell(scores: dict[str, Any] | None, name: str) -> Any:
        value = (scores or {}).get(name)
        return as_count(value) if name in whole else value

    trials = run.trials > 1

    run_id = run.pk

    def rows() -> Iterator[list[Any]]:
        for values in prediction_csv_rows(run_id):
            position, split, sample_id, repeat, *head, prompt, completion, cached, scores = values
            cost = str(prices.cost(Tokens(prompt, completion, cached))) if prices else ""
            yield [
                run_id,
                position,
                split,
                sample_id,
                repeat,
                # a trials run's repeat is the trial; an imported run's further lines are not
                repeat if trials else 0,
                *head,
                prompt,
                completion,
                cached,
                cost,
                *(cell(scores, name) for name in score_names),
            ]

    header = CSV_COLUMNS + [f"score:{name}" for name in score_names]
    return csv_response(f"run-{run.pk}-predictions.csv", header, rows())


# --- judge jobs ---------------------------------------------------------------------------------


@require_GET
def job_index(request: HttpRequest) -> HttpResponse:
    jobs = JudgeJob.objects.select_related("judge", "run__benchmark", "against").order_by(
        "-created_at"
    )
    page = Paginator(jobs, PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "evaluation/job_list.html", {"page": page})


@require_GET
def job_detail(request: HttpRequest, pk: int) -> HttpResponse:
    job = get_object_or_404(
        JudgeJob.objects.select_related("judge__endpoint", "run__benchmark", "against"), pk=pk
    )
    context: dict[str, Any] = {
        "job": job,
        "progress": job_panel(job),
        "progress_url": f"{reverse('evaluation:job-detail', args=[job.pk])}?part=progress",
    }
    if request.htmx and request.GET.get("part") == "progress":
        return render(request, "evaluation/_progress.html", context)
    judgments = job.judgments.select_related("sample").order_by("position")
    shown = request.GET.get("status", "")
    if shown in Judgment.Status.values:
        judgments = judgments.filter(status=shown)
    context.update(
        {
            "page": Paginator(judgments, PAGE_SIZE).get_page(request.GET.get("page")),
            "shown": shown,
            "statuses": Judgment.Status.choices,
            "controls": _controls(
                request,
                JUDGE_JOBS,
                job,
                context["progress"]["counts_by_status"],
                "evaluation:job-control",
            ),
        }
    )
    return render(request, "evaluation/job_detail.html", context)


@require_POST
def job_control(request: HttpRequest, pk: int, action: str) -> HttpResponse:
    job = get_object_or_404(JudgeJob, pk=pk)
    return _control(request, JUDGE_JOBS, job, action, "evaluation:job-detail")
