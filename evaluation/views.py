"""HTML pages of the evaluation app: runs with live progress, their predictions, leaderboards,
and CSV export. One view serves the full page or, for htmx, the partial it swaps in."""

from __future__ import annotations

import json
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from typing import Any, Literal
from urllib.parse import urlencode

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Q, QuerySet
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from benchmarks.kit.context import answer_calls, text_of
from benchmarks.models import Benchmark
from config.access import allows
from config.charts import bar_chart
from config.csvexport import copy_csv_response, csv_response
from config.errors import ApplicationError, shows_errors
from config.hfdataset import folder_zip_response
from config.numbers import id_or_none, object_id
from evaluation import lifecycle
from evaluation.analyses import declared as declared_analyses
from evaluation.forms import LaunchJudgeJobForm, LaunchRunForm
from evaluation.gold_versions import (
    GoldsTooLarge,
    GoldsUnscorable,
    compare_golds,
    gold_compare_limit,
    leaderboard_golds,
    refined_sample_count,
)
from evaluation.hf import run_folder_name, run_hf_export
from evaluation.judging import JUDGE_JOBS
from evaluation.models import JudgeJob, Judgment, Prediction, Run, WorkItem
from evaluation.overall import board_csv_rows, overall_board, overall_boards, overall_of
from evaluation.selectors import (
    ComparedPairs,
    CompareError,
    UncountedPage,
    check_comparable,
    comparable_runs,
    compared_counts,
    compared_counts_known,
    compared_counts_now,
    evaluator_for,
    input_summary,
    item_scores,
    job_panel,
    leaderboard,
    metric_row,
    prediction_csv_query,
    prediction_score_names,
    run_list,
    run_panel,
    run_polling,
    run_spending,
    shown_count,
    task_spec,
    with_progress,
)
from evaluation.services import RUNS
from evaluation.work.budget import Prices

PAGE_SIZE = 50


@require_GET
def run_index(request: HttpRequest) -> HttpResponse:
    runs = run_list()
    benchmark_id = object_id(request.GET.get("benchmark"), name="benchmark")
    if benchmark_id is not None:
        runs = runs.filter(benchmark_id=benchmark_id)
    page = Paginator(runs.order_by("-created_at"), PAGE_SIZE).get_page(request.GET.get("page"))
    # The page's runs counted, not every run's.
    page.object_list = with_progress(page.object_list)
    tasks = sorted(
        Run.objects.order_by().values_list("benchmark_id", "benchmark__name", "task").distinct()
    )
    rows = [(run, run_spending(run)) for run in page.object_list]
    context = {
        "page": page,
        "rows": rows,
        "boards": tasks,
        "overall_boards": [] if request.htmx else overall_boards(),
        "can_launch": allows(request.user, "evaluation:run-new"),
    }
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


class Counted:
    """A query whose rows are already counted, for Paginator: it slices the query and takes
    the count as given instead of asking COUNT(*) again."""

    def __init__(self, items: QuerySet[Any], count: int) -> None:
        self.items, self.total = items, count

    def count(self) -> int:
        return self.total

    def __len__(self) -> int:
        return self.total

    def __getitem__(self, key: slice) -> Any:
        return self.items[key]


@require_GET
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(
        Run.objects.select_related("benchmark", "endpoint", "tool_revision"), pk=pk
    )
    spec = task_spec(run)
    if request.GET.get("part") == "rows":
        # The rows of the page that settled since it was drawn, swapped in one by one: polled
        # every 2 s by every open page of a running run, so it reads the rows and nothing else.
        watched = _watched(request, run.predictions.prefetch_related("sample"), run_polling(run))
        for prediction in watched["changed"]:
            _show_prediction(prediction, spec)
        return render(
            request,
            "evaluation/_rows.html",
            {"run": run, **watched, "row_template": "evaluation/run_detail.html#prediction-row"},
        )
    context: dict[str, Any] = {
        "run": run,
        "progress": run_panel(run, spec),
        "progress_url": f"{reverse('evaluation:run-detail', args=[run.pk])}?part=progress",
    }
    context["controls"] = _controls(
        request, RUNS, run, context["progress"]["counts_by_status"], "evaluation:run-control"
    )
    if request.htmx and request.GET.get("part") == "progress":
        return render(request, "evaluation/_progress_poll.html", context)
    polling = context["progress"]["polling"]
    # The page's samples by their primary keys (a second query), never joined: a join planned
    # from stale statistics read the whole samples index for every prediction up to the page.
    predictions = run.predictions.prefetch_related("sample").order_by("position")
    shown = request.GET.get("status", "")
    counts = context["progress"]["counts_by_status"]
    if shown in Prediction.Status.values:
        predictions = predictions.filter(status=shown)
    # Counted already by the progress panel: not counted again over a million rows.
    page = Paginator(
        Counted(predictions, counts.get(shown, 0) if shown else counts["total"]), PAGE_SIZE
    ).get_page(request.GET.get("page"))
    for prediction in page.object_list:
        _show_prediction(prediction, spec)
    context.update(
        {
            "page": page,
            "shown": shown,
            "rows_url": _rows_url(request, page.object_list, polling),
            "can_judge": allows(request.user, "evaluation:job-new"),
            "compare_with": Run.objects.filter(benchmark_id=run.benchmark_id, task=run.task)
            .exclude(pk=run.pk)
            .order_by("-pk")[:200],
            "statuses": Prediction.Status.choices,
            "jobs": JudgeJob.objects.filter(Q(run=run) | Q(against=run))
            .select_related("judge")
            .order_by("-created_at"),
            "not_comparable": spec.not_comparable if spec is not None else "",
            "params_json": json.dumps(run.params, ensure_ascii=False),
            "options_json": json.dumps(run.launch_options, ensure_ascii=False),
            "leaked_calls": run.predictions.filter(leaked=True).count()
            if run.tool_mode == "native"
            else 0,
            "import_lines": _import_lines(run.import_report),
            "analyses_url": reverse("evaluation:run-analyses", args=[run.pk])
            if declared_analyses(run) and allows(request.user, "evaluation:run-analyses")
            else "",
            "golds_url": reverse("evaluation:run-golds", args=[run.pk])
            if run.status == Run.Status.DONE
            and allows(request.user, "evaluation:run-golds")
            and refined_sample_count(run)
            else "",
        }
    )
    if request.htmx and request.GET.get("part") == "predictions":
        return render(request, "evaluation/run_detail.html#predictions", context)
    return render(request, "evaluation/run_detail.html", context)


@require_GET
def run_golds(request: HttpRequest, pk: int) -> HttpResponse:
    """A finished run scored again under the published and the refined gold of its samples,
    and the items whose verdict changed (evaluation.gold_versions)."""
    run = get_object_or_404(Run.objects.select_related("benchmark"), pk=pk)
    spec = task_spec(run)
    context: dict[str, Any] = {"run": run, "refused": ""}
    if run.status != Run.Status.DONE:
        context["refused"] = "The run is not finished: its answers are not all in."
    else:
        try:
            comparison = compare_golds(run, limit=gold_compare_limit())
        except (GoldsTooLarge, GoldsUnscorable) as exc:
            context["refused"] = str(exc)
        else:
            context["comparison"] = comparison
            context["rows"] = [
                {
                    "published": metric_row(name, published, None, spec, spec.run_metric(name)),
                    "refined": metric_row(name, refined, None, spec, spec.run_metric(name)),
                }
                for name, published, refined in comparison.metric_rows(spec.metrics)
            ]
            context["changed"] = [
                {
                    "item": item,
                    "cells": [
                        (
                            metric_row(n, item.published.get(n), None, spec, spec.item_metric(n)),
                            metric_row(n, item.refined.get(n), None, spec, spec.item_metric(n)),
                        )
                        for n in comparison.compared
                    ],
                }
                for item in comparison.changed
            ]
    return render(request, "evaluation/run_golds.html", context)


def _show_prediction(prediction: Prediction, spec: Any) -> None:
    prediction.shown_scores = item_scores(prediction.scores, spec)  # type: ignore[attr-defined]
    # Calls are shown as calls (templates/partials/call.html), other answers as JSON text: never
    # a Python repr.
    prediction.answer_calls = answer_calls(prediction.answer)  # type: ignore[attr-defined]
    prediction.answer_text = text_of(prediction.answer)  # type: ignore[attr-defined]
    prediction.sent_calls = (  # type: ignore[attr-defined]
        answer_calls(prediction.tool_calls) if prediction.tool_calls else None
    )


# --- rows that settle while the page is open ----------------------------------------------------
# A page of a running run (or judge job) polls for its rows that were still pending, claimed or
# running when drawn: `watch` lists them with the state shown ("id.state", ...); the answer swaps
# in (out of band) each row whose state moved, and a new poller watching the rest. Polling stops
# when nothing on the page is left to settle or the parent stops running.


# What a row of a running parent may show (WorkItem.state): pending, claimed or running.
WATCHED_STATES = frozenset(WorkItem.STATES)


def _watch_text(rows: Iterable[Any]) -> str:
    return ",".join(f"{row.pk}.{row.state}" for row in rows if row.state in WATCHED_STATES)


def _rows_url(request: HttpRequest, rows: Iterable[Any], polling: bool) -> str:
    watch = _watch_text(rows)
    if not (polling and watch):
        return ""
    return f"{request.path}?{urlencode({'part': 'rows', 'watch': watch})}"


def _parse_watch(text: str) -> dict[int, str]:
    """`watch` as {id: state shown}; what is not "id.state" is ignored (at most a page)."""
    watched: dict[int, str] = {}
    for entry in text.split(",")[:PAGE_SIZE]:
        pk, _, state = entry.partition(".")
        if state in WATCHED_STATES and (number := id_or_none(pk)) is not None:
            watched[number] = state
    return watched


def _watched(request: HttpRequest, items: Any, polling: bool) -> dict[str, Any]:
    watched = _parse_watch(request.GET.get("watch", ""))
    rows = list(items.filter(pk__in=list(watched)).order_by("position"))
    changed = [row for row in rows if row.state != watched[row.pk]]
    return {"changed": changed, "rows_url": _rows_url(request, rows, polling)}


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
    golds = leaderboard_golds(benchmark, runs, names[0]) if names else {}
    headline_metric = spec.run_metric(names[0]) if names else None
    rows = [
        {
            "run": run,
            "spend": run_spending(run),
            "golds": golds.get(run.pk),
            "gold_cells": (
                metric_row(names[0], golds[run.pk].published, None, spec, headline_metric),
                metric_row(names[0], golds[run.pk].refined, None, spec, headline_metric),
            )
            if run.pk in golds
            else (),
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
    compare = bool(
        runs and declared_analyses(runs[0]) and allows(request.user, "evaluation:runs-analyses")
    )
    context = {
        "compare_url": reverse("evaluation:runs-analyses") if compare else "",
        "benchmark": benchmark,
        "task": spec,
        "names": names,
        "rows": rows,
        "board_runs": runs,
        "chart": chart,
        "direction": headline_metric.direction if headline_metric else None,
        "golds": bool(golds),
        "overall": overall_of(benchmark) is not None,
    }
    return render(request, "evaluation/leaderboard.html", context)


@require_GET
def overall_leaderboard(request: HttpRequest, benchmark_id: int) -> HttpResponse:
    """The overall score its suite declares, one row per model and tool mode (evaluation/
    overall.py); 404 for a benchmark whose suite declares none."""
    benchmark = get_object_or_404(Benchmark, pk=benchmark_id)
    board = overall_board(benchmark)
    if board is None:
        raise Http404(f"{benchmark.name}'s suite declares no overall score")
    context = {"benchmark": benchmark, "board": board}
    return render(request, "evaluation/overall.html", context)


@require_GET
def overall_leaderboard_csv(request: HttpRequest, benchmark_id: int) -> StreamingHttpResponse:
    benchmark = get_object_or_404(Benchmark, pk=benchmark_id)
    board = overall_board(benchmark)
    if board is None:
        raise Http404(f"{benchmark.name}'s suite declares no overall score")
    header, rows = board_csv_rows(board)
    return csv_response(f"benchmark-{benchmark.pk}-overall.csv", header, rows)


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
    "tool_calls",
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
    """One row per prediction with its per-item scores (one column per metric name, in the
    order of Run.score_names), written by PostgreSQL's COPY and streamed (config.csvexport:
    the rows cost no Python each). Cells as csv_cell makes them: formulas neutralised with an
    apostrophe, booleans true/false, empty text as an empty cell, counts and flags as whole
    numbers, the cost as str() of its Decimal. Lines end with \n; JSON cells (answers and
    scores that are objects or lists) are PostgreSQL's jsonb text (keys shortest first), and
    other numbers in scores and answers are as jsonb keeps them (1e-05 as 0.00001, -0.0 as
    0.0): a CSV reader reads the same values."""
    run = get_object_or_404(Run.objects.select_related("benchmark", "endpoint"), pk=pk)
    spec = task_spec(run)
    # A finished run stores them (no scan of its scores before the first byte).
    score_names = run.score_names if run.score_names is not None else prediction_score_names(run.pk)
    # Counts and flags as whole numbers; scores and undeclared names as stored.
    whole = {
        name
        for name in score_names
        if spec is not None
        and (metric := spec.item_metric(name)) is not None
        and metric.kind in ("count", "flag")
    }
    query = prediction_csv_query(
        run, score_names=score_names, whole=whole, prices=Prices.of(run.endpoint)
    )
    header = CSV_COLUMNS + [f"score:{name}" for name in score_names]
    return copy_csv_response(f"run-{run.pk}-predictions.csv", header, query)


@require_GET
@shows_errors()
def run_predictions_hf(request: HttpRequest, pk: int) -> HttpResponse:
    """The run's predictions, with their per-item scores, as a Hugging Face dataset folder
    (evaluation.hf) in a zip, streamed as it is read."""
    run = get_object_or_404(Run.objects.select_related("benchmark", "endpoint"), pk=pk)
    return folder_zip_response(
        lambda folder: run_hf_export(run=run, folder=folder), run_folder_name(run)
    )


# --- judge jobs ---------------------------------------------------------------------------------


@require_GET
def job_index(request: HttpRequest) -> HttpResponse:
    jobs = JudgeJob.objects.select_related("judge", "run__benchmark", "against").order_by(
        "-created_at"
    )
    page = Paginator(jobs, PAGE_SIZE).get_page(request.GET.get("page"))
    context = {"page": page, "can_launch": allows(request.user, "evaluation:job-new")}
    return render(request, "evaluation/job_list.html", context)


@require_GET
def job_detail(request: HttpRequest, pk: int) -> HttpResponse:
    job = get_object_or_404(
        JudgeJob.objects.select_related("judge__endpoint", "run__benchmark", "against", "version"),
        pk=pk,
    )
    if request.GET.get("part") == "rows":
        running = job.status == JudgeJob.Status.RUNNING
        watched = _watched(request, job.judgments.select_related("sample"), running)
        return render(
            request,
            "evaluation/_rows.html",
            {"job": job, **watched, "row_template": "evaluation/job_detail.html#judgment-row"},
        )
    context: dict[str, Any] = {
        "job": job,
        "progress": job_panel(job),
        "progress_url": f"{reverse('evaluation:job-detail', args=[job.pk])}?part=progress",
    }
    context["controls"] = _controls(
        request, JUDGE_JOBS, job, context["progress"]["counts_by_status"], "evaluation:job-control"
    )
    if request.htmx and request.GET.get("part") == "progress":
        return render(request, "evaluation/_progress_poll.html", context)
    polling = context["progress"]["polling"]
    judgments = job.judgments.select_related("sample").order_by("position")
    shown = request.GET.get("status", "")
    if shown in Judgment.Status.values:
        judgments = judgments.filter(status=shown)
    page = Paginator(judgments, PAGE_SIZE).get_page(request.GET.get("page"))
    context.update(
        {
            "page": page,
            "shown": shown,
            "rows_url": _rows_url(request, page.object_list, polling),
            "statuses": Judgment.Status.choices,
        }
    )
    return render(request, "evaluation/job_detail.html", context)


@require_POST
def job_control(request: HttpRequest, pk: int, action: str) -> HttpResponse:
    job = get_object_or_404(JudgeJob, pk=pk)
    return _control(request, JUDGE_JOBS, job, action, "evaluation:job-detail")


# --- launching from pages -----------------------------------------------------------------------


def _benchmark_of(data: Any) -> Benchmark | None:
    pk = object_id(data.get("benchmark"), name="benchmark")
    return Benchmark.objects.filter(pk=pk).first() if pk is not None else None


def _launch_page(
    request: HttpRequest, form: Any, what: str, status: int = 200, error: str = ""
) -> HttpResponse:
    if "benchmark" in form.fields and what == "run":
        # Another benchmark: the form again with its tasks and splits, what was typed kept.
        form.fields["benchmark"].widget.attrs.update(
            {
                "hx-get": reverse("evaluation:run-new"),
                "hx-trigger": "change",
                "hx-include": "closest form",
                "hx-target": "#launch-form",
                "hx-swap": "outerHTML",
            }
        )
    context = {"form": form, "what": what, "action": request.path, "error": error}
    if request.htmx and request.method == "GET":
        return render(request, "evaluation/launch.html#launch-form", context)
    return render(request, "evaluation/launch.html", context, status=status)


def _add_service_error(form: Any, error: ApplicationError) -> None:
    """A refusal of the service beside the field it names (on the form when it names none)."""
    field = error.field if error.field in form.fields else None
    form.add_error(field, str(error))


def _redraw_run_form(request: HttpRequest, error: ApplicationError) -> HttpResponse:
    form = LaunchRunForm(request.POST, benchmark=_benchmark_of(request.POST))
    form.is_valid()
    _add_service_error(form, error)
    return _launch_page(request, form, "run", status=error.status)


@require_http_methods(["GET", "POST"])
@shows_errors(redraw=_redraw_run_form)
def run_new(request: HttpRequest) -> HttpResponse:
    """Launch a run: the admin's form (LaunchRunForm) and service (run_launch), with the task
    and split lists of the chosen benchmark, redrawn when another is picked."""
    if request.method == "POST":
        form = LaunchRunForm(request.POST, benchmark=_benchmark_of(request.POST))
        if form.is_valid():
            run = form.launch(request.user)
            messages.success(request, f"Run #{run.pk} launched.")
            return redirect("evaluation:run-detail", pk=run.pk)
        return _launch_page(request, form, "run", status=400)
    initial = {key: value for key, value in request.GET.items() if key != "part"}
    form = LaunchRunForm(initial=initial, benchmark=_benchmark_of(request.GET))
    return _launch_page(request, form, "run")


def _redraw_job_form(request: HttpRequest, error: ApplicationError) -> HttpResponse:
    form = LaunchJudgeJobForm(request.POST)
    form.is_valid()
    _add_service_error(form, error)
    return _launch_page(request, form, "judge job", status=error.status)


@require_http_methods(["GET", "POST"])
@shows_errors(redraw=_redraw_job_form)
def job_new(request: HttpRequest) -> HttpResponse:
    """Judge a finished run (or two): the admin's form (LaunchJudgeJobForm) and service
    (judge_launch). ?run=ID (and ?against=ID) preselect the runs."""
    if request.method == "POST":
        form = LaunchJudgeJobForm(request.POST)
        if form.is_valid():
            job = form.launch(request.user)
            messages.success(request, f"Judge job #{job.pk} launched.")
            return redirect("evaluation:job-detail", pk=job.pk)
        return _launch_page(request, form, "judge job", status=400)
    initial = {key: value for key, value in request.GET.items() if key in ("run", "against")}
    return _launch_page(request, LaunchJudgeJobForm(initial=initial), "judge job")


# --- two runs side by side ----------------------------------------------------------------------


def _compared_run(request: HttpRequest, name: str) -> Run:
    raw = request.GET.get(name, "").strip()
    pk = object_id(raw, name=name, label=f"name two runs to compare: ?a=ID&b=ID ({name})")
    if pk is None:
        raise CompareError(f"name two runs to compare: ?a=ID&b=ID ({name} is missing)", field=name)
    run = Run.objects.select_related("benchmark", "endpoint").filter(pk=pk).first()
    if run is None:
        raise CompareError(f"there is no run #{raw} ({name})", field=name, status=404)
    return run


def _compare_picker(request: HttpRequest, around: Run | None) -> HttpResponse:
    """Two runs to choose, per task that has them (only `around`'s task when one run is
    named, that run as A); the newest two are chosen."""
    groups = comparable_runs(around=around)
    for group in groups:
        first = around or group["runs"][0]
        group["a"] = first.pk
        group["b"] = next(run.pk for run in group["runs"] if run.pk != first.pk)
    context = {
        "groups": groups,
        "around": around,
        "can_launch": allows(request.user, "evaluation:run-new"),
    }
    return render(request, "evaluation/run_compare_pick.html", context)


COMPARE_SHOWN = {"all": "All items", "disagree": "Disagreements", "agree": "Agreements"}


@require_GET
@shows_errors()
def run_compare(request: HttpRequest) -> HttpResponse:
    """Two runs of one task side by side, item by item: each sample's input, each run's parsed
    answer and scores; filterable to the items where they disagree (selectors.differs).
    With a run missing, the runs it could be compared with (_compare_picker)."""
    named = [name for name in ("a", "b") if request.GET.get(name, "").strip()]
    if len(named) < 2:
        return _compare_picker(request, _compared_run(request, named[0]) if named else None)
    a, b = _compared_run(request, "a"), _compared_run(request, "b")
    check_comparable(a, b)
    spec = task_spec(a)
    shown = request.GET.get("show", "all")
    if shown not in COMPARE_SHOWN:
        shown = "all"
    counts = compared_counts_now(a, b)
    page: Any
    if counts is None:
        page = UncountedPage(a, b, shown, _page_number(request.GET.get("page")), PAGE_SIZE)
    else:
        pairs = ComparedPairs(a, b, shown, shown_count(counts, shown))
        page = Paginator(pairs, PAGE_SIZE).get_page(request.GET.get("page"))
    ids = [pair[side] for pair in page.object_list for side in ("a", "b")]
    predictions = Prediction.objects.select_related("sample").in_bulk(ids)
    rows = []
    for pair in page.object_list:
        pa, pb = predictions[pair["a"]], predictions[pair["b"]]
        rows.append(
            {
                "sample": pa.sample,
                "repeat": pa.repeat,
                "summary": input_summary(pa.sample.input),
                "differs": pair["differs"],
                "sides": [_compared_side(pa, spec), _compared_side(pb, spec)],
            }
        )
    query = f"a={a.pk}&b={b.pk}"
    context = {
        "a": a,
        "b": b,
        "counts": counts,
        "counts_url": reverse("evaluation:run-compare-counts") + f"?a={a.pk}&b={b.pk}",
        "rows": rows,
        "page": page,
        "shown": shown,
        "filters": [
            (key, label, f"?{query}" + ("" if key == "all" else f"&show={key}"))
            for key, label in COMPARE_SHOWN.items()
        ],
        "page_query": query + ("" if shown == "all" else f"&show={shown}"),
        # the campaign setup (annotation's) by URL name: no import of the layer above
        "campaign_url": reverse("annotation:setup-new") + f"?kind=pairwise&runs={a.pk},{b.pk}",
        "can_make_campaign": allows(request.user, "annotation:setup-new"),
    }
    return render(request, "evaluation/run_compare.html", context)


# The highest page number read while the pairs are not counted (its offset fits a bigint).
LAST_UNCOUNTED_PAGE = 10**9


def _page_number(raw: str | None) -> int:
    """A page number as asked (1 when it is none; at most LAST_UNCOUNTED_PAGE)."""
    number = id_or_none((raw or "").strip())
    return min(number, LAST_UNCOUNTED_PAGE) if number else 1


@require_GET
@shows_errors()
def run_compare_counts(request: HttpRequest) -> HttpResponse:
    """The counts of two runs' items (shared, agree, disagree, only in one), the fragment the
    comparison asks for when they were not known: counted now (every item of both read) and
    kept for the next page when both runs are done (selectors.compared_counts)."""
    a, b = _compared_run(request, "a"), _compared_run(request, "b")
    check_comparable(a, b)
    counts = compared_counts_known(a, b) or compared_counts(a, b)
    return render(request, "evaluation/_compare_counts.html", {"counts": counts})


def _compared_side(prediction: Prediction, spec: Any) -> dict[str, Any]:
    # the answer as the run page shows it: calls as calls, anything else as JSON text
    _show_prediction(prediction, spec)
    return {"prediction": prediction, "scores": prediction.shown_scores}  # type: ignore[attr-defined]
