"""Celery tasks of the annotation app: thin wrappers that take ids and call a service."""

from __future__ import annotations

from celery import shared_task

# First the app these shared tasks belong to: Django's start does not import it (config).
import config.celery  # noqa: F401
from annotation.agreement.services import AGREEMENT_REPORTS, report_compute
from annotation.calibration import stored as calibration
from annotation.calibration.stored import CALIBRATION_REPORTS
from annotation.models import AgreementReport, CalibrationReport


@shared_task(name=AGREEMENT_REPORTS.task, acks_late=True, reject_on_worker_lost=True)
def agreement_report_compute(report_id: int) -> str:
    if not AgreementReport.objects.filter(pk=report_id).exists():
        return "gone"
    return report_compute(report_id=report_id).status


@shared_task(name=CALIBRATION_REPORTS.task, acks_late=True, reject_on_worker_lost=True)
def calibration_report_compute(report_id: int) -> str:
    if not CalibrationReport.objects.filter(pk=report_id).exists():
        return "gone"
    return calibration.report_compute(report_id=report_id).status
