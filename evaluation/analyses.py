"""The papers' analyses of a run, as stored things: computed from the run's stored predictions
with the functions its suite declares for its task (benchmarks/kit/analyses.py), inline
when the run is small and by a Celery worker (the reports queue) when it is large, kept until
the run changes, and computed again only then.

The page, the CSVs and the `run_analysis` command all read `run_analyses_get` (or, for runs of
one model pooled, `pooled_analyses`); the result's shape is the command's JSON:

    {"run": ID, "analyses": {NAME: {"by": FIELD, "rows": [{"group", "n", METRIC...}]}}}
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import Count, Max, Q, Sum
from django.utils.module_loading import import_string

from benchmarks.kit.analyses import Analysis, AnalysisInput, Counted, parts_read
from benchmarks.kit.protocol import Scored
from benchmarks.kit.registry import get_suite
from benchmarks.models import Sample
from config.computed import Computed, Computing, counted, touched
from config.errors import ApplicationError
from config.numbers import object_id
from evaluation.models import Judgment, Prediction, Run, RunAnalysis
from evaluation.selectors import run_context, score_breakdowns_counts
from evaluation.services import fill_record_values, scored_items


class AnalysisError(ApplicationError):
    code = "analysis"


def declared(run: Run) -> tuple[Analysis, ...]:
    """The analyses the run's suite declares for its task (() when none, or when the suite or
    task is no longer known)."""
    try:
        return get_suite(run.benchmark.suite).analyses_for(run.task)
    except ValueError:
        return ()


def find_analysis(run: Run, name: str) -> Analysis:
    """One declared analysis of the run by name; AnalysisError naming the known ones."""
    for analysis in declared(run):
        if analysis.name == name:
            return analysis
    known = ", ".join(a.name for a in declared(run)) or "none"
    raise AnalysisError(
        f"run {run.pk} ({run.task}) has no analysis {name!r}; its analyses: {known}",
        field="analysis",
        status=404,
    )


def fingerprint(run: Run) -> str:
    """What the analyses read, summed up: the run's state, its predictions (how many, the last
    change), the last change of any sample of its benchmark (those the run answered among
    them: a change to another only computes them again), the benchmark's tools and the
    declarations. Each read from one table, never a join of the
    run's predictions with their samples (planned from stale statistics, a nested loop that
    read every sample for every prediction)."""
    seen = Prediction.objects.filter(run=run).aggregate(count=Count("id"), last=Max("updated_at"))
    seen["samples"] = Sample.objects.filter(benchmark_id=run.benchmark_id).aggregate(
        last=Max("updated_at")
    )["last"]
    shapes = [
        (a.name, a.by, [(m.name, m.mean_of, m.percent) for m in a.metrics]) for a in declared(run)
    ]
    providers = input_providers()
    parts = [
        run.status,
        run.updated_at.isoformat() if run.updated_at else "",
        str(seen["count"]),
        seen["last"].isoformat() if seen["last"] else "",
        seen["samples"].isoformat() if seen["samples"] else "",
        run.benchmark.updated_at.isoformat(),
        repr(shapes),
        *(
            f"{name}={providers[name].mark(run)}"
            for name in sorted({n for a in declared(run) for n in a.inputs} & set(providers))
        ),
    ]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()


SETTLED = (Prediction.Status.DONE, Prediction.Status.FAILED)


def _records(run: Run, analyses: Sequence[Analysis] | None = None) -> AnalysisInput:
    """The run's scored items, and the inputs its analyses ask for: all of them, or, for
    `analyses`, the parts of the records those declare they read (Analysis.reads). While
    items are still pending or being answered, only the settled ones (answered, or failed for
    good): an item not yet asked is no wrong answer."""
    evaluator, ctx = run_context(run)
    parts = None if analyses is None else parts_read(analyses)
    records = scored_items(run, evaluator, ctx, statuses=SETTLED, parts=parts)
    asking = declared(run) if analyses is None else analyses
    wanted = {name for analysis in asking for name in analysis.inputs}
    providers = input_providers()
    inputs: dict[str, Any] = {}
    for name in sorted(wanted & set(providers)):
        provider = providers[name]
        if provider.of_records:
            users = [a for a in asking if name in a.inputs]
            inputs[name] = provider.fetch(run, None if analyses is None else parts_read(users))
        else:
            inputs[name] = provider.fetch(run)
    return AnalysisInput(records=records, ctx=ctx, inputs=inputs)


# --- inputs beyond the run's records ------------------------------------------------------------


@dataclass(frozen=True)
class InputProvider:
    """An input some analyses read beyond the run's own records (AnalysisInput.inputs):
    fetch(run) gives it; mark(run) sums up what it read, so that the stored analyses are
    computed again when it changes. The platform's own inputs register here; a layer this app
    may not import declares its own in settings.ANALYSIS_INPUTS (the human labels: annotation's
    annotation.analysis_inputs.PROVIDER), imported the first time an analysis asks for it and
    not at every start-up.

    `permissions`: the model permissions a person needs to read what an analysis draws from
    this input, the same as reading the input itself needs (the human labels: those the labels
    need wherever they are shown). An analysis that reads the input is withheld from anyone
    without them (`readable_by`): on the pages, in the CSVs and in the API alike."""

    fetch: Callable[..., Any]
    mark: Callable[[Run], str]
    permissions: tuple[str, ...] = ()
    # Records of other runs: fetch(run, parts) reads only those parts of them (the parts the
    # analyses that ask for it declare they read: Analysis.reads; None: all)
    of_records: bool = False


_OWN_PROVIDERS: dict[str, InputProvider] = {}


def register_input(name: str, provider: InputProvider) -> None:
    _OWN_PROVIDERS[name] = provider


def input_providers() -> dict[str, InputProvider]:
    """Every input an analysis may read, by name: this app's, and settings.ANALYSIS_INPUTS."""
    declared = getattr(settings, "ANALYSIS_INPUTS", {})
    return {**_OWN_PROVIDERS, **{name: import_string(path) for name, path in declared.items()}}


def permissions_needed(analysis: Analysis) -> tuple[str, ...]:
    """The model permissions reading `analysis` needs beyond the run's own (its inputs')."""
    providers = input_providers()
    return tuple(
        dict.fromkeys(
            permission
            for name in analysis.inputs
            if name in providers
            for permission in providers[name].permissions
        )
    )


def readable_by(user: Any, analysis: Analysis) -> bool:
    """Whether `user` may read `analysis` (what its inputs need: permissions_needed)."""
    return bool(user.has_perms(permissions_needed(analysis)))


def _baseline(run: Run, parts: Sequence[str] | None = None) -> list[Scored]:
    """The records of the run this one repeats on other tool descriptions ([] if none)."""
    base = run.rerun_of
    if base is None:
        return []
    evaluator, ctx = run_context(base)
    return scored_items(base, evaluator, ctx, parts=parts)


def _baseline_mark(run: Run) -> str:
    if run.rerun_of_id is None:
        return ""
    seen = Prediction.objects.filter(run_id=run.rerun_of_id).aggregate(
        count=Count("id"), last=Max("updated_at")
    )
    return f"{run.rerun_of_id}:{seen['count']}:{seen['last']}"


register_input("baseline", InputProvider(_baseline, _baseline_mark, of_records=True))


def _judgments(run: Run) -> dict[str, dict[tuple[str, int], list[dict[str, Any]]]]:
    """The verdicts of the run's single-output judge jobs, by the judge's template, per item
    (sample key, repeat): one {"judge": name, "value": the item-level number, "values": what
    was read} per judge round."""
    found: dict[str, dict[tuple[str, int], list[dict[str, Any]]]] = {}
    rows = (
        Judgment.objects.filter(
            job__run=run, job__against__isnull=True, status=Judgment.Status.DONE
        )
        .order_by("job_id", "position")
        .values_list(
            "job__judge__template",
            "job__judge__name",
            "prediction__sample__split",
            "prediction__sample__external_id",
            "prediction__repeat",
            "value",
            "values",
        )
    )
    for template, judge, split, external_id, repeat, value, values in rows:
        key = (f"{split}/{external_id}", int(repeat))
        entry = {"judge": judge, "value": value, "values": values or {}}
        found.setdefault(template, {}).setdefault(key, []).append(entry)
    return found


def _judgments_mark(run: Run) -> str:
    # The sum of the values too: a verdict rewritten in place need not touch updated_at.
    seen = Judgment.objects.filter(job__run=run).aggregate(
        count=Count("id"),
        done=Count("id", filter=Q(status=Judgment.Status.DONE)),
        last=Max("updated_at"),
        total=Sum("value"),
    )
    return f"{seen['count']}:{seen['done']}:{seen['last']}:{seen['total']}"


register_input("judgments", InputProvider(_judgments, _judgments_mark))


def _model_siblings(run: Run) -> dict[str, Run]:
    """The newest finished run of each other task of the run's benchmark by the same model
    (model_name, none for a run without one) in the same tool mode."""
    if not run.model_name:
        return {}
    picked: dict[str, Run] = {}
    others = (
        Run.objects.filter(
            benchmark_id=run.benchmark_id, model_name=run.model_name, status=Run.Status.DONE
        )
        .exclude(task=run.task)
        .select_related("benchmark")
        .order_by("task", "-created_at", "-pk")
    )
    for other in others:
        if other.task not in picked and other.tool_mode == run.tool_mode:
            picked[other.task] = other
    return picked


def _model_runs(run: Run, parts: Sequence[str] | None = None) -> dict[str, list[Scored]]:
    """{task: the records of that sibling run} (WTU-Eval's regions side by side)."""
    found: dict[str, list[Scored]] = {}
    for task, other in _model_siblings(run).items():
        evaluator, ctx = run_context(other)
        found[task] = scored_items(other, evaluator, ctx, parts=parts)
    return found


def _model_runs_mark(run: Run) -> str:
    return ",".join(
        f"{task}:{other.pk}:{other.updated_at.isoformat()}"
        for task, other in sorted(_model_siblings(run).items())
    )


register_input("model_runs", InputProvider(_model_runs, _model_runs_mark, of_records=True))


def compute(
    analyses: Sequence[Analysis],
    data: AnalysisInput,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Every analysis over the records: {NAME: {"by", "rows"}}. A suite's function that fails
    or returns malformed rows raises (the caller stores the error)."""
    result: dict[str, Any] = {}
    for done, analysis in enumerate(analyses, start=1):
        result[analysis.name] = {"by": analysis.by, "rows": analysis.run(data)}
        if progress:
            progress(done, len(analyses))
    return result


def run_analyses_get(run: Run, *, inline: bool | None = None) -> RunAnalysis:
    """The stored analyses of a run: as they are when the run has not changed since, else
    computed again: at once for a run of up to ANALYSES_INLINE_ITEMS predictions (or when
    `inline`, even while a worker holds them), by a worker on the reports queue otherwise (the
    row comes back pending; the page polls it). A run that is still running is analysed as far
    as it has got: over its settled items. The lifecycle is config.computed's (RUN_ANALYSES)."""
    stored: RunAnalysis = RUN_ANALYSES.request(
        {"run": run},
        run,
        fields={"done": 0, "total": len(declared(run))},
        inline=inline,
        force=inline is True,
    )
    return stored


def run_analyses_compute(*, analysis_id: int) -> RunAnalysis:
    """Compute a run's stored analyses that wait for it (the reports task's body, or a page's
    inline): safe to run twice, the second finds them computed, or held by a live worker, and
    returns them as they are (RUN_ANALYSES.claim). Progress is saved per analysis; an analysis
    that fails marks the whole row failed with its error."""
    stored: RunAnalysis | None = RUN_ANALYSES.execute(analysis_id)
    if stored is None:
        raise RunAnalysis.DoesNotExist(f"no run analyses {analysis_id}")
    return stored


def _small(run: Run) -> bool:
    items = Prediction.objects.filter(run=run).count()
    return items <= int(getattr(settings, "ANALYSES_INLINE_ITEMS", 5000))


def _compute(run: Run, computing: Computing) -> dict[str, Any]:
    analyses = declared(run)
    return {"data": {"run": run.pk, "analyses": compute_run(run, analyses, computing.progress)}}


def compute_run(
    run: Run,
    analyses: Sequence[Analysis],
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Every analysis of the run over its settled records, in the declared order: those that
    declare a score_breakdown counted by PostgreSQL, the others by their `compute` over the
    records, which are read only when some analysis needs them."""
    in_database = [a for a in analyses if a.score_breakdown is not None]
    in_python = [a for a in analyses if a.score_breakdown is None]
    done = 0

    def step(*_: int) -> None:
        nonlocal done
        done += 1
        if progress:
            progress(done, len(analyses))

    result = compute_in_database(run, in_database, step)
    if in_python:
        result.update(compute(in_python, _records(run, in_python), step))
    return {analysis.name: result[analysis.name] for analysis in analyses}


def compute_in_database(
    run: Run,
    analyses: Sequence[Analysis],
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """What `compute` gives over the run's settled records, for analyses that each declare a
    score_breakdown, counted by PostgreSQL (selectors.score_breakdown_counts): the records are
    never read into Python, so a run of a million items takes seconds, not minutes."""
    specs = [spec for analysis in analyses if (spec := analysis.score_breakdown) is not None]
    assert len(specs) == len(analyses), "compute_in_database: an analysis without a breakdown"
    # the values of the records some count by, computed for the answers that lack them (none
    # when the run's finishing stored them and nothing changed since)
    fill_record_values(run, [value for spec in specs for value in spec.record_values], SETTLED)
    # one reading of the run for all of them (selectors.score_breakdowns_counts)
    counts = score_breakdowns_counts(run, specs, SETTLED) if specs else []
    before = _baseline_counts(run, [a for a in analyses if a.beside_baseline is not None])
    result: dict[str, Any] = {}
    for done, (analysis, found) in enumerate(zip(analyses, counts, strict=True), start=1):
        rows = analysis.run_counted(found, before.get(analysis.name, ()))
        result[analysis.name] = {"by": analysis.by, "rows": rows}
        if progress:
            progress(done, len(analyses))
    return result


def _baseline_counts(run: Run, analyses: Sequence[Analysis]) -> dict[str, list[Counted]]:
    """The counts of the breakdowns of `analyses` (which declare beside_baseline) over the run
    this one repeats, every answer of it as the "baseline" input gives them ({} without one)."""
    base = run.rerun_of
    if base is None or not analyses:
        return {}
    specs = [spec for analysis in analyses if (spec := analysis.score_breakdown) is not None]
    fill_record_values(base, [value for spec in specs for value in spec.record_values])
    every = [str(status) for status in Prediction.Status]
    counted = score_breakdowns_counts(base, specs, every)
    return {analysis.name: found for analysis, found in zip(analyses, counted, strict=True)}


RUN_ANALYSES: Computed[Run] = Computed(
    name="run analyses",
    model=RunAnalysis,
    task="evaluation.tasks.run_analyses_compute",
    queue="reports",
    waiting=RunAnalysis.Status.PENDING,
    lost=lambda attempts: (
        f"its worker was lost {attempts} times while computing them (out of memory or time?); "
        "ask for them again, or compute them with the run_analysis command"
    ),
    done=RunAnalysis.Status.DONE,
    related=("run__benchmark",),
    inputs=lambda stored: stored.run,
    fingerprint=fingerprint,
    small=_small,
    compute=_compute,
    started=lambda run: counted(0, len(declared(run))),
    progress_fields=counted,
    ended=touched,
    timed=True,
)


# --- several runs -------------------------------------------------------------------------------


def runs_to_compare(ids: Sequence[Any]) -> list[Run]:
    """The runs named by `ids` (in that order, each once), all of one benchmark's task;
    AnalysisError naming the id that is not a run or not of the first run's task."""
    if not ids:
        raise AnalysisError("choose at least one run", field="run")
    wanted: list[int] = []
    for raw in ids:
        pk = object_id(str(raw).strip(), name="run", label="run (a run id)")
        if pk is not None and pk not in wanted:
            wanted.append(pk)
    if not wanted:
        raise AnalysisError("choose at least one run", field="run")
    found = Run.objects.select_related("benchmark", "endpoint").in_bulk(wanted)
    missing = [pk for pk in wanted if pk not in found]
    if missing:
        raise AnalysisError(f"no run {missing[0]}", field="run", status=404)
    runs = [found[pk] for pk in wanted]
    first = runs[0]
    for run in runs[1:]:
        if (run.benchmark_id, run.task) != (first.benchmark_id, first.task):
            raise AnalysisError(
                f"run {run.pk} is a run of {run.benchmark.name} {run.task}, not of "
                f"{first.benchmark.name} {first.task} like run {first.pk}: analyses compare "
                "runs of one task",
                field="run",
            )
    return runs


def run_label(run: Run) -> str:
    """How a comparison names a run: its id and name (or model), and its tool mode if native."""
    label = f"#{run.pk} {run.name or run.model_name}".strip()
    return label + (" (native)" if run.tool_mode == "native" else "")


def model_label(run: Run) -> str:
    """How a comparison names a model whose runs it pools: the model and its tool mode."""
    label = run.model_name or run.name or f"run {run.pk}"
    return label + (" (native)" if run.tool_mode == "native" else "")


@dataclass
class Series:
    """One line or bar set of a comparison: its label, the runs it stands for, its rows."""

    label: str
    runs: list[int]
    rows: list[dict[str, Any]]


def compare(runs: Sequence[Run]) -> dict[str, list[Series]]:
    """Each declared analysis across the runs: one series per run, or, for an analysis that
    pools a model's runs (series="model"), one per model, its rows computed over the pooled
    records of its runs (with the first run's context) while they hold up to
    ANALYSES_INLINE_ITEMS predictions together (beyond, one per run). Raises AnalysisError
    when a run's stored analyses are not ready (still pending on a worker, or failed)."""
    per_run: dict[int, dict[str, Any]] = {}
    for run in runs:
        stored = run_analyses_get(run)
        if stored.status != RunAnalysis.Status.DONE or not stored.data:
            state = stored.error or stored.get_status_display().lower()
            raise AnalysisError(f"the analyses of run {run.pk} are not ready: {state}", field="run")
        per_run[run.pk] = stored.data["analyses"]
    pooled: dict[str, list[Run]] = {}
    for run in runs:
        pooled.setdefault(model_label(run), []).append(run)
    records: dict[int, AnalysisInput] = {}
    limit = int(getattr(settings, "ANALYSES_INLINE_ITEMS", 5000))
    sizes = dict(
        Prediction.objects.filter(run__in=list(runs))
        .values_list("run_id")
        .annotate(count=Count("id"))
        .values_list("run_id", "count")
    )
    result: dict[str, list[Series]] = {}
    for analysis in declared(runs[0]):
        if analysis.series == "model":
            series: list[Series] = []
            for label, members in pooled.items():
                if len(members) == 1:
                    rows = per_run[members[0].pk].get(analysis.name, {}).get("rows", [])
                elif analysis.inputs:
                    # Inputs (judges' verdicts, human labels) are keyed by the item, which the
                    # runs of a model share: they cannot be pooled. A run holding its own groups
                    # (a stability run's share of tools down) joins its stored rows; runs whose
                    # groups meet keep a series each.
                    kept = [per_run[m.pk].get(analysis.name, {}).get("rows", []) for m in members]
                    groups = [row["group"] for rows_of in kept for row in rows_of]
                    if len(groups) == len(set(groups)):
                        rows = sorted(
                            (row for rows_of in kept for row in rows_of),
                            key=lambda row: analysis.sort_key(row["group"]),
                        )
                    else:
                        series.extend(
                            Series(run_label(member), [member.pk], rows_of)
                            for member, rows_of in zip(members, kept, strict=True)
                        )
                        continue
                elif sum(sizes[m.pk] for m in members) > limit:
                    # Pooling reads the runs' items again, here and now: past the inline size
                    # each run keeps its own series (its stored rows).
                    series.extend(
                        Series(
                            run_label(member),
                            [member.pk],
                            per_run[member.pk].get(analysis.name, {}).get("rows", []),
                        )
                        for member in members
                    )
                    continue
                else:
                    for member in members:
                        if member.pk not in records:
                            records[member.pk] = _records(member)
                    joined: list[Scored] = [
                        record for member in members for record in records[member.pk].records
                    ]
                    rows = analysis.run(AnalysisInput(joined, records[members[0].pk].ctx))
                series.append(Series(label, [m.pk for m in members], rows))
        else:
            series = [
                Series(
                    run_label(run),
                    [run.pk],
                    per_run[run.pk].get(analysis.name, {}).get("rows", []),
                )
                for run in runs
            ]
        result[analysis.name] = series
    return result
