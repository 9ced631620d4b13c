"""Agreement reports as stored things: asked for with a choice of raters, computed inline when
the campaign is small and by a Celery worker (the reports queue) when it is large, kept until
the labels change, and computed again only then."""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.agreement.data import (
    AgreementError,
    available_raters,
    campaign_ratings,
    labels_fingerprint,
    metric_catalogue,
    not_a_rater,
)
from annotation.agreement.report import campaign_report
from annotation.models import AgreementReport, Campaign, Label
from config.background import Held, RowWork
from config.numbers import whole_number

log = logging.getLogger(__name__)
# An interval's resamples cost time in proportion; more than this buys no precision worth it.
MAX_RESAMPLES = 10_000


def report_params(
    *,
    metrics: list[str] | tuple[str, ...] = (),
    judges: list[str] | tuple[str, ...] = (),
    questions: list[str] | tuple[str, ...] = (),
    resamples: int | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """The normalised choice a report is made for (same choice, same stored report)."""
    default = int(getattr(settings, "AGREEMENT_BOOTSTRAP_RESAMPLES", 1000))
    if resamples is not None and not 0 <= int(resamples) <= MAX_RESAMPLES:
        raise AgreementError(f"resamples must be between 0 and {MAX_RESAMPLES}")
    return {
        "metrics": sorted({m for m in metrics if m}),
        "judges": sorted({j for j in judges if j}),
        "questions": sorted({q for q in questions if q}),
        "resamples": default if resamples is None else int(resamples),
        "seed": int(seed),
    }


def params_from(query: Any) -> dict[str, Any]:
    """The report a query string asks for (a QueryDict): ?metric=&judge= (repeatable),
    ?question=, ?resamples= (AgreementError when out of bounds)."""
    return report_params(
        metrics=query.getlist("metric"),
        judges=query.getlist("judge"),
        questions=[q for q in query.getlist("question") if q],
        resamples=whole_number(query.get("resamples"), name="resamples"),
    )


def params_shown(query: Any) -> dict[str, Any]:
    """The choice a query string makes, as the page's filters show it, even when it cannot be
    made (resamples out of bounds are left at the default)."""
    return report_params(
        metrics=query.getlist("metric"),
        judges=query.getlist("judge"),
        questions=[q for q in query.getlist("question") if q],
    )


def _key(params: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()


def report_check(
    campaign: Campaign, params: dict[str, Any], available: dict[str, Any] | None = None
) -> None:
    """AgreementError naming a metric, judge or question the campaign does not have, or a
    metric that is not a score better one way, with why (`available`:
    available_raters(campaign), when the caller has it already)."""
    available = available if available is not None else available_raters(campaign)
    # A count or a flag is named with why it cannot rate, rather than as unknown.
    for name in params["metrics"]:
        if name in available["not_raters"]:
            raise AgreementError(
                not_a_rater(name, available["not_raters"][name], available["metrics"])
            )
    for kind in ("metrics", "judges"):
        unknown = [name for name in params[kind] if name not in available[kind]]
        if unknown:
            known = ", ".join(available[kind]) or "none"
            raise AgreementError(
                f"{kind[:-1]} {', '.join(map(repr, unknown))} does not rate this campaign's "
                f"items (available: {known})"
            )
    keys = {q.key for q in campaign.questions.all()}
    unknown = [q for q in params["questions"] if q.split(":", 1)[0] not in keys]
    if unknown:
        raise AgreementError(
            f"no question {', '.join(map(repr, unknown))} in this campaign "
            f"(questions: {', '.join(sorted(keys))})"
        )


def report_request(
    campaign: Campaign,
    params: dict[str, Any],
    *,
    inline: bool | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    available: dict[str, Any] | None = None,
) -> AgreementReport:
    """The stored report for this choice: fresh as it is, or computed again when what it reads
    changed (labels_fingerprint). Small campaigns (current labels x questions up to
    AGREEMENT_INLINE_ANSWERS) are computed at once; large ones are queued for a worker and come
    back pending (`inline` forces either). Raises AgreementError for raters the campaign does
    not have."""
    # One reading of the items' metric names serves the check and the fingerprint.
    catalogue = None
    if available is None:
        catalogue = metric_catalogue(campaign)
        available = available_raters(campaign, catalogue)
    report_check(campaign, params, available)
    fingerprint = labels_fingerprint(campaign, params["judges"], params["metrics"], catalogue)
    key = _key(params)
    with transaction.atomic():
        report, created = AgreementReport.objects.select_for_update().get_or_create(
            campaign=campaign,
            key=key,
            defaults={"params": params, "fingerprint": fingerprint},
        )
        if not created and report.fingerprint == fingerprint:
            if report.status == AgreementReport.Status.DONE:
                return report
            # Queued or being computed for these labels: wait for it while its lease lasts
            # (the sweep takes it back from a worker that was lost: AGREEMENT_REPORTS).
            busy = report.status in (
                AgreementReport.Status.PENDING,
                AgreementReport.Status.RUNNING,
            )
            if busy and report.lease_until and report.lease_until > timezone.now():
                return report
        if inline is None:
            answers = Label.objects.filter(campaign=campaign, is_current=True).count() * max(
                1, campaign.questions.count()
            )
            inline = answers <= int(getattr(settings, "AGREEMENT_INLINE_ANSWERS", 20000))
        report.fingerprint = fingerprint
        report.params = params
        report.done, report.total = 0, 1
        for name, value in AGREEMENT_REPORTS.fresh().items():
            setattr(report, name, value)
        report.save()
        if not inline:
            AGREEMENT_REPORTS.enqueue(report.pk)
            return report
    return report_compute(report_id=report.pk, on_progress=on_progress)


def report_compute(
    *, report_id: int, on_progress: Callable[[int, int], None] | None = None
) -> AgreementReport:
    """Compute a stored report that waits for it (the task's body, or a page's inline): safe
    to run twice, the second finds it computed, or held by a live worker, and returns it as it
    is (AGREEMENT_REPORTS.claim). Progress is saved per question."""
    report = AgreementReport.objects.select_related("campaign").get(pk=report_id)
    held = AGREEMENT_REPORTS.claim(report_id)
    if held is None:
        # Done, failed, or computed by a live worker (a second delivery of its message).
        report.refresh_from_db()
        return report
    with held:
        return _compute(held, report, on_progress)


def _compute(
    held: Held, report: AgreementReport, on_progress: Callable[[int, int], None] | None
) -> AgreementReport:
    report_id, campaign, params = report.pk, report.campaign, report.params
    metrics, judges = params.get("metrics", []), params.get("judges", [])
    # One reading of the items' metric names serves the fingerprint and the ratings.
    catalogue = metric_catalogue(campaign) if metrics else None
    fingerprint = labels_fingerprint(campaign, judges, metrics, catalogue)
    held.mine().update(fingerprint=fingerprint, updated_at=timezone.now())
    started = time.perf_counter()

    def progress(done: int, total: int) -> None:
        AgreementReport.objects.filter(pk=report_id).update(
            done=done, total=total, updated_at=timezone.now()
        )
        if on_progress:
            on_progress(done, total)

    try:
        ratings = campaign_ratings(campaign, metrics=metrics, judges=judges, catalogue=catalogue)
        data = campaign_report(
            ratings,
            resamples=params.get("resamples", 1000),
            seed=params.get("seed", 0),
            questions=params.get("questions") or None,
            progress=progress,
        )
    except AgreementError as exc:
        held.mine().update(status=AgreementReport.Status.FAILED, error=str(exc), lease_until=None)
        report.refresh_from_db()
        return report
    except Exception as exc:
        log.exception("agreement report %s failed", report_id)
        held.mine().update(
            status=AgreementReport.Status.FAILED,
            error=f"{type(exc).__name__}: {exc}",
            lease_until=None,
        )
        raise
    data["fingerprint"] = fingerprint
    data["generated_at"] = timezone.now().isoformat()
    # Only for the labels it read: if a request saw newer labels meanwhile (and queued the
    # report again), this result is stale and the newer computation will store its own.
    held.mine().filter(fingerprint=fingerprint).update(
        status=AgreementReport.Status.DONE,
        data=data,
        seconds=time.perf_counter() - started,
        lease_until=None,
        updated_at=timezone.now(),
    )
    report.refresh_from_db()
    return report


AGREEMENT_REPORTS = RowWork(
    name="agreement reports",
    model=AgreementReport,
    # The name the computing task is registered under (annotation.tasks takes it from here):
    # the tasks import this module, and this one no task. Messages already queued carry it.
    task="annotation.tasks.agreement_report_compute",
    queue="reports",
    waiting=AgreementReport.Status.PENDING,
    lost=lambda attempts: (
        f"its worker was lost {attempts} times while computing it (out of memory or time?); "
        "ask for it again, or compute it with the agreement_report command"
    ),
)
