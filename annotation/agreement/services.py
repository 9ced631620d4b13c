"""Agreement reports as stored things: asked for with a choice of raters, computed inline when
the campaign is small and by a Celery worker (the reports queue) when it is large, kept until
the labels change, and computed again only then."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
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
from config.computed import Computed, Computing, Failure, counted, touched
from config.numbers import whole_number

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
    if available is None and (params["metrics"] or params["judges"]):
        # Read only when raters are named (the items' scores and judgments: the labels CSV's
        # first byte waited for it when none were).
        available = available_raters(campaign)
    available = available or {"metrics": [], "judges": [], "not_raters": {}}
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
    not have. The lifecycle is config.computed's (AGREEMENT_REPORTS)."""
    # One reading of the items' metric names serves the check and the fingerprint.
    catalogue = None
    if available is None:
        catalogue = metric_catalogue(campaign)
        available = available_raters(campaign, catalogue)
    report_check(campaign, params, available)
    report: AgreementReport = AGREEMENT_REPORTS.request(
        {"campaign": campaign, "key": _key(params)},
        _Inputs(campaign, params, catalogue),
        fields={"params": params, "done": 0, "total": 1},
        inline=inline,
        on_progress=on_progress,
    )
    return report


def report_compute(
    *, report_id: int, on_progress: Callable[[int, int], None] | None = None
) -> AgreementReport:
    """Compute a stored report that waits for it (the task's body, or a page's inline): safe
    to run twice, the second finds it computed, or held by a live worker, and returns it as it
    is (AGREEMENT_REPORTS.claim). Progress is saved per question."""
    report: AgreementReport | None = AGREEMENT_REPORTS.execute(report_id, on_progress=on_progress)
    if report is None:
        raise AgreementReport.DoesNotExist(f"no agreement report {report_id}")
    return report


@dataclass(frozen=True)
class _Inputs:
    """What a report reads: the campaign's labels for the choice, and the items' metric names
    when the request (or the computation) has read them already."""

    campaign: Campaign
    params: dict[str, Any]
    catalogue: Any = None


def _inputs(report: AgreementReport) -> _Inputs:
    # One reading of the items' metric names serves the fingerprint and the ratings.
    params = report.params
    catalogue = metric_catalogue(report.campaign) if params.get("metrics") else None
    return _Inputs(report.campaign, params, catalogue)


def _fingerprint(inputs: _Inputs) -> str:
    params = inputs.params
    return labels_fingerprint(
        inputs.campaign, params.get("judges", []), params.get("metrics", []), inputs.catalogue
    )


def _small(inputs: _Inputs) -> bool:
    campaign = inputs.campaign
    answers = Label.objects.filter(campaign=campaign, is_current=True).count() * max(
        1, campaign.questions.count()
    )
    return answers <= int(getattr(settings, "AGREEMENT_INLINE_ANSWERS", 20000))


def _compute(inputs: _Inputs, computing: Computing) -> dict[str, Any]:
    params = inputs.params
    ratings = campaign_ratings(
        inputs.campaign,
        metrics=params.get("metrics", []),
        judges=params.get("judges", []),
        catalogue=inputs.catalogue,
    )
    data = campaign_report(
        ratings,
        resamples=params.get("resamples", 1000),
        seed=params.get("seed", 0),
        questions=params.get("questions") or None,
        progress=computing.progress,
    )
    data["fingerprint"] = computing.fingerprint
    data["generated_at"] = timezone.now().isoformat()
    return {"data": data}


def _failure(inputs: _Inputs, exc: Exception) -> Failure:
    if isinstance(exc, AgreementError):
        # A choice the labels cannot answer: said on the page, not a defect.
        return Failure(str(exc), expected=True)
    return Failure(f"{type(exc).__name__}: {exc}", reraise=True)


AGREEMENT_REPORTS: Computed[_Inputs] = Computed(
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
    done=AgreementReport.Status.DONE,
    related=("campaign",),
    inputs=_inputs,
    fingerprint=_fingerprint,
    small=_small,
    compute=_compute,
    failure=_failure,
    progress_fields=counted,
    started=touched,
    ended=touched,
    timed=True,
)
