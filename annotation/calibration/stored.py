"""Calibration reports as stored things: a judge version's report (annotation.calibration.report)
with the trend across the judge's versions, for one choice of figures, computed by a Celery
worker (the reports queue), or while the request waits when the judge's judged items are few,
and kept until what it reads changes. The lifecycle is config.computed's (CALIBRATION_REPORTS),
as the agreement report's is.

What it reads, summed up in its fingerprint: every version of the judge and their judgments (the
trend reads them all), and the campaigns whose items are the judged predictions, with their
questions and labels (annotation.agreement.data.campaigns_state, the agreement report's own
reading of a campaign's labels). The fingerprint is the judge's, the same for each of its
versions: a version's report made under it serves every other version's trend."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection
from django.utils import timezone

from annotation.agreement.data import campaigns_state
from annotation.calibration.data import versions_of
from annotation.calibration.report import judge_trend, version_report
from annotation.errors import AnnotationError
from annotation.models import CalibrationReport
from config.computed import Computed, Computing, Failure, counted, touched
from evaluation.models import JudgeVersion, Judgment

# An interval's resamples cost time in proportion; more than this buys no precision worth it.
MAX_RESAMPLES = 10_000


def report_params(*, resamples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """The normalised choice a report is made for (same choice, same stored report);
    AnnotationError for resamples out of bounds."""
    if not 0 <= int(resamples) <= MAX_RESAMPLES:
        raise AnnotationError(f"resamples must be between 0 and {MAX_RESAMPLES}", field="resamples")
    return {"resamples": int(resamples), "seed": int(seed)}


def _key(params: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()


def report_request(
    version: JudgeVersion,
    params: dict[str, Any] | None = None,
    *,
    inline: bool | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> CalibrationReport:
    """The stored report of the version for this choice (report_params(): the default): as it is
    while what it reads is unchanged (judge_fingerprint), else computed again: at once when
    the judge's judged items are few (CALIBRATION_INLINE_UNITS) or `inline`, otherwise queued
    for a worker and returned pending."""
    params = params if params is not None else report_params()
    report: CalibrationReport = CALIBRATION_REPORTS.request(
        {"version": version, "key": _key(params)},
        _Inputs(version, params),
        fields={"params": params, "done": 0, "total": 1},
        inline=inline,
        on_progress=on_progress,
    )
    return report


def report_compute(
    *, report_id: int, on_progress: Callable[[int, int], None] | None = None
) -> CalibrationReport:
    """Compute a stored report that waits for it (the task's body): safe to run twice, the
    second finds it computed, or held by a live worker, and returns it as it is."""
    report: CalibrationReport | None = CALIBRATION_REPORTS.execute(
        report_id, on_progress=on_progress
    )
    if report is None:
        raise CalibrationReport.DoesNotExist(f"no calibration report {report_id}")
    return report


def is_done(report: CalibrationReport) -> bool:
    return report.status == CalibrationReport.Status.DONE


def report_and_trend(report: CalibrationReport) -> tuple[dict[str, Any], dict[str, Any]]:
    """A done report's data as version_report and judge_trend give it: the trend's versions
    are numbers again (JSON keeps an object's keys as text)."""
    data = report.data or {}
    trend = data["trend"]
    rows = [
        {**row, "by_version": {int(n): cell for n, cell in row["by_version"].items()}}
        for row in trend["rows"]
    ]
    return data["report"], {**trend, "rows": rows}


@dataclass(frozen=True)
class _Inputs:
    version: JudgeVersion
    params: dict[str, Any]


def _inputs(report: CalibrationReport) -> _Inputs:
    return _Inputs(report.version, report.params)


def judge_fingerprint(version: JudgeVersion) -> str:
    """What the version's report and trend read, in a few numbers: the judge's name and kind,
    the judged runs' benchmarks and tasks (the report's tasks), its versions, their judgments
    (added, finished, changed), and the state of every campaign
    that holds one of the judged predictions (campaigns_state). A report made under another
    fingerprint is stale."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            WITH versions AS (
                SELECT id FROM evaluation_judgeversion WHERE judge_id = %(judge)s
            )
            SELECT (SELECT concat_ws('|', name, kind) FROM evaluation_judge
                    WHERE id = %(judge)s),
                   (SELECT string_agg(DISTINCT concat_ws('|', r.id, b.name, r.task), ',')
                    FROM evaluation_judgejob jj JOIN evaluation_run r ON r.id = jj.run_id
                    JOIN benchmarks_benchmark b ON b.id = r.benchmark_id
                    WHERE jj.judge_id = %(judge)s),
                   (SELECT string_agg(id::text, ',' ORDER BY id) FROM versions),
                   count(*), coalesce(max(j.id), 0),
                   count(*) FILTER (WHERE j.status = %(done)s),
                   coalesce(max(j.updated_at)::text, '')
            FROM evaluation_judgment j WHERE j.version_id IN (SELECT id FROM versions)
            """,
            {"judge": version.judge_id, "done": Judgment.Status.DONE},
        )
        parts = [str(v) for v in cursor.fetchone()]
        # The campaigns whose items are a judged prediction (either side of a pair): their
        # labels are the humans' side of the report.
        cursor.execute(
            """
            WITH judged AS (
                SELECT j.prediction_id AS id FROM evaluation_judgment j
                JOIN evaluation_judgeversion v ON v.id = j.version_id
                WHERE v.judge_id = %(judge)s AND j.status = %(done)s
                UNION
                SELECT j.other_id FROM evaluation_judgment j
                JOIN evaluation_judgeversion v ON v.id = j.version_id
                WHERE v.judge_id = %(judge)s AND j.status = %(done)s AND j.other_id IS NOT NULL
            )
            SELECT c.id, c.name FROM annotation_campaign c
            WHERE c.id IN (SELECT i.campaign_id FROM annotation_item i
                           WHERE i.prediction_id IN (SELECT id FROM judged))
            ORDER BY c.id
            """,
            {"judge": version.judge_id, "done": Judgment.Status.DONE},
        )
        campaigns = cursor.fetchall()
        ids = [pk for pk, _name in campaigns]
        parts.append(",".join(map(str, ids)))
        names = hashlib.sha256("\n".join(name for _pk, name in campaigns).encode()).hexdigest()
        parts.append(names[:16])
        parts += campaigns_state(cursor, ids)
    # The parts are long (a list of ids): the stored fingerprint is their hash.
    return hashlib.sha256("/".join(parts).encode()).hexdigest()


def _fingerprint(inputs: _Inputs) -> str:
    return judge_fingerprint(inputs.version)


def _small(inputs: _Inputs) -> bool:
    units = (
        Judgment.objects.filter(
            version__judge_id=inputs.version.judge_id, status=Judgment.Status.DONE
        )
        .values("version_id", "prediction_id", "other_id")
        .distinct()
        .count()
    )
    return units <= int(getattr(settings, "CALIBRATION_INLINE_UNITS", 1000))


def _compute(inputs: _Inputs, computing: Computing) -> dict[str, Any]:
    version, params = inputs.version, inputs.params
    options = {"resamples": params.get("resamples", 1000), "seed": params.get("seed", 0)}
    versions = versions_of(version)
    total = len(versions)
    computing.progress(0, total)
    # Another version's report stored under the same fingerprint read the same judgments and
    # labels (the fingerprint is the judge's): its report is this trend's, as it is.
    stored = {
        pk: data["report"]
        for pk, data in CalibrationReport.objects.filter(
            version__judge_id=version.judge_id,
            key=_key(params),
            status=CalibrationReport.Status.DONE,
            fingerprint=computing.fingerprint,
        )
        .exclude(version=version)
        .values_list("version_id", "data")
        if data and "report" in data
    }
    report = version_report(version, **options)
    done = 1
    computing.progress(done, total)
    reports: dict[int, dict[str, Any]] = {version.pk: report}
    for other in versions:
        if other.pk == version.pk:
            continue
        reports[other.pk] = stored.get(other.pk) or version_report(other, **options)
        done += 1
        computing.progress(done, total)
    trend = judge_trend(version, report, reports=reports, versions=versions)
    data = {
        "report": report,
        "trend": trend,
        "fingerprint": computing.fingerprint,
        "generated_at": timezone.now().isoformat(),
    }
    return {"data": data}


def _failure(inputs: _Inputs, exc: Exception) -> Failure:
    return Failure(f"{type(exc).__name__}: {exc}", reraise=True)


CALIBRATION_REPORTS: Computed[_Inputs] = Computed(
    name="calibration reports",
    model=CalibrationReport,
    # The name the computing task is registered under (annotation.tasks takes it from here).
    task="annotation.tasks.calibration_report_compute",
    queue="reports",
    waiting=CalibrationReport.Status.PENDING,
    lost=lambda attempts: (
        f"its worker was lost {attempts} times while computing it (out of memory or time?); "
        "ask for it again, or compute it with the calibration_report command"
    ),
    done=CalibrationReport.Status.DONE,
    related=("version__judge",),
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
