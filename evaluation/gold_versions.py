"""A run scored under each gold version of its samples, from the answers it stored, without
asking the model again.

A benchmark's gold changes when experts refine it (annotation's refinement, applied with
`benchmarks.services.sample_revise`): the sample then holds its newest revision, and revision 0
keeps it as imported. Two gold versions follow:

    published  every sample as imported (revision 0 where the sample was refined)
    refined    every sample as it is now (its newest revision)

`compare_golds(run)` scores every stored answer of the run again under both, with the task's own
score and aggregate (a run of several trials through the same trials aggregate as its metrics),
and lists the items whose verdict differs: a per-item score the task compares (higher or lower
is better) that is not the same under the two. The answers are the run's as stored (the text,
the parsed answer, the calls); what a launch fixed per item (`prepare`'s context, e.g. a
candidate list built from the gold) stays as it was.

Scoring is cheap next to a model call, but not free: a run of more than GOLD_COMPARE_ITEMS
predictions is refused on a page (`GoldsTooLarge`) and compared with the `run_golds` command,
which takes any size. A leaderboard shows each run's headline under both golds
(`leaderboard_golds`), kept in the cache until the run or the benchmark's revisions change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.db.models import Max

from benchmarks.kit.protocol import Evaluator, Item, MetricSpec, Scored, Scores
from benchmarks.models import Benchmark, SampleRevision
from benchmarks.selectors import PUBLISHED_GOLD as PUBLISHED
from benchmarks.selectors import REFINED_GOLD as REFINED
from benchmarks.selectors import as_imported
from config.errors import ApplicationError
from evaluation.models import Prediction, Run
from evaluation.selectors import run_context
from evaluation.services import run_aggregate, scored_by_sample


class GoldsTooLarge(ApplicationError):
    """A run too large to score again while a page waits."""


class GoldsUnscorable(ApplicationError):
    """An answer the task's score refuses to score again (it says why)."""


@dataclass(frozen=True)
class ChangedItem:
    """An item whose verdict differs between the gold versions: per compared metric, its value
    under the published gold and under the refined one."""

    split: str
    external_id: str
    repeat: int
    sample_id: int
    published: Scores
    refined: Scores


@dataclass(frozen=True)
class GoldComparison:
    """A run's metrics under each gold version, and the items whose verdict changed."""

    metrics: Mapping[str, Scores]  # gold version -> run metrics
    compared: tuple[str, ...]  # the per-item metrics a verdict is read from
    changed: tuple[ChangedItem, ...]
    refined_samples: int  # the run's samples that have a refined revision
    items: int  # the run's scored answers

    def metric_rows(self, names: Sequence[str]) -> list[tuple[str, Any, Any]]:
        """(name, published, refined) for each run metric, in `names`' order first."""
        published, refined = self.metrics[PUBLISHED], self.metrics[REFINED]
        ordered = [*names, *(n for n in {**published, **refined} if n not in names)]
        return [(n, published.get(n), refined.get(n)) for n in ordered]


def gold_compare_limit() -> int:
    return int(getattr(settings, "GOLD_COMPARE_ITEMS", 50_000))


def refined_sample_count(run: Run) -> int:
    """How many of the run's samples experts refined (0: both gold versions are the same)."""
    with connection.cursor() as cursor:
        cursor.execute(REFINED_SAMPLES_SQL, {"benchmark": run.benchmark_id, "run": run.pk})
        return int(cursor.fetchone()[0])


# From the benchmark's revised samples (few, by the partial index sample_revised) to the run's
# predictions of each, probed by the sample (the index of sample_id: one row per run of the
# benchmark), not from a million predictions to their samples. A LATERAL subquery kept apart
# (LIMIT 1), its run compared as `run_id + 0` so that no index takes the run alone: with the
# run estimated at one row (stale statistics), the index of run_id looked as cheap as a probe,
# and read every prediction of the run for every revised sample.
REFINED_SAMPLES_SQL = """
SELECT count(*) FROM benchmarks_sample s
CROSS JOIN LATERAL (
    SELECT 1 FROM evaluation_prediction p
    WHERE p.sample_id = s.id AND p.run_id + 0 = %(run)s LIMIT 1
) answered
WHERE s.benchmark_id = %(benchmark)s AND s.revision > 0
"""


def _published_items(sample_ids: Sequence[int], current: Mapping[int, Item]) -> dict[int, Item]:
    """Each sample as imported (benchmarks.selectors.as_imported)."""
    imported = as_imported(sample_ids)
    items: dict[int, Item] = {}
    for sample_id in sample_ids:
        item = current[sample_id]
        if sample_id in imported:
            given, reference, candidates = imported[sample_id]
            item = replace(
                item, input=given, reference=reference, candidate_tools=tuple(candidates)
            )
        items[sample_id] = item
    return items


def _compared(item_metrics: Mapping[str, MetricSpec]) -> tuple[str, ...]:
    return tuple(name for name, spec in item_metrics.items() if spec.comparable)


def compare_golds(
    run: Run, *, limit: int | None = None, progress: Callable[[int, int], None] | None = None
) -> GoldComparison:
    """The run under the published and the refined gold (the module docstring). GoldsTooLarge
    when the run has more than `limit` predictions (None: no limit); `progress(done, total)` is
    called as answers are scored."""
    total = Prediction.objects.filter(run=run).count()
    if limit is not None and total > limit:
        raise GoldsTooLarge(
            f"run #{run.pk} has {total} answers, more than the {limit} a page scores again "
            f"while it waits: compare it with `python manage.py run_golds {run.pk}`"
        )
    evaluator, ctx = run_context(run)
    pairs = scored_by_sample(run, evaluator, ctx)
    sample_ids = [sample_id for sample_id, _each in pairs]
    scored = [each for _sample_id, each in pairs]
    current = {sid: s.item for sid, s in pairs}
    published = _published_items(list(dict.fromkeys(sample_ids)), current)
    aggregate = run_aggregate(run, evaluator, ctx)
    compared = _compared(ctx.task.item_metrics)
    under: dict[str, list[Scored]] = {PUBLISHED: [], REFINED: []}
    changed: list[ChangedItem] = []
    for done, (sample_id, each) in enumerate(zip(sample_ids, scored, strict=True), 1):
        versions = {PUBLISHED: published[sample_id], REFINED: current[sample_id]}
        scores = {
            gold: _rescored(evaluator, ctx, each, item, under[gold])
            for gold, item in versions.items()
        }
        if any(scores[PUBLISHED].get(n) != scores[REFINED].get(n) for n in compared):
            changed.append(
                ChangedItem(
                    split=each.item.split,
                    external_id=each.item.external_id,
                    repeat=each.repeat,
                    sample_id=sample_id,
                    published={n: scores[PUBLISHED].get(n) for n in compared},
                    refined={n: scores[REFINED].get(n) for n in compared},
                )
            )
        if progress is not None and (done % 1000 == 0 or done == total):
            progress(done, total)
    return GoldComparison(
        metrics={gold: dict(aggregate(items)) for gold, items in under.items()},
        compared=compared,
        changed=tuple(changed),
        refined_samples=refined_sample_count(run),
        items=len(scored),
    )


def _rescored(
    evaluator: Evaluator, ctx: Any, each: Scored, item: Item, into: list[Scored]
) -> Scores:
    try:
        scores = evaluator.score(each.outcome, item, ctx, each.context)
    except ValueError as exc:
        # A score that needs what is not here (BFCL's wheel, to execute a refined multi-turn
        # ground truth again): refused, naming the item, rather than failing the page.
        raise GoldsUnscorable(
            f"{item.split}/{item.external_id} cannot be scored again under this gold: {exc}"
        ) from None
    into.append(replace(each, item=item, scores=scores))
    return scores


@dataclass(frozen=True)
class HeadlineUnderGolds:
    """A run's headline under each gold, and how many of its answers change verdict; `refused`
    says why a run has none (too large for a page)."""

    published: Any = None
    refined: Any = None
    changed: int = 0
    refused: str = ""


def leaderboard_golds(
    benchmark: Benchmark, runs: Sequence[Run], headline: str
) -> dict[int, HeadlineUnderGolds]:
    """Each finished run's headline under both golds ({} when no sample of the benchmark is
    refined), each kept in the cache under what it was computed from: the run as it was and the
    newest revision of the benchmark's samples."""
    newest = SampleRevision.objects.filter(sample__benchmark=benchmark, number__gt=0).aggregate(
        newest=Max("pk")
    )["newest"]
    if newest is None:
        return {}
    figures: dict[int, HeadlineUnderGolds] = {}
    for run in runs:
        stamp = run.updated_at.timestamp() if run.updated_at else 0
        key = f"gold-headline:{run.pk}:{stamp}:{newest}:{headline}"
        found = cache.get(key)
        if not isinstance(found, HeadlineUnderGolds):
            try:
                comparison = compare_golds(run, limit=gold_compare_limit())
            except GoldsTooLarge:
                found = HeadlineUnderGolds(refused="too large for a page: run_golds")
            except GoldsUnscorable:
                found = HeadlineUnderGolds(
                    refused="cannot be scored again here: see its golds page"
                )
            else:
                found = HeadlineUnderGolds(
                    published=comparison.metrics[PUBLISHED].get(headline),
                    refined=comparison.metrics[REFINED].get(headline),
                    changed=len(comparison.changed),
                )
            cache.set(key, found, timeout=24 * 3600)
        figures[run.pk] = found
    return figures
