"""The calibration report as a stored thing (annotation.calibration.stored): computed by a real
Celery worker on the reports queue while the page polls, read back as stored while its inputs
are unchanged, and computed again when a label arrives; the CSV and the loop's form wait for a
current report; the trend takes another version's stored report as it is; the command computes
through the same service. Real PostgreSQL and broker."""

from __future__ import annotations

import csv
import io
import time
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation import services
from annotation.calibration import stored as stored_reports
from annotation.calibration.report import version_report
from annotation.models import CalibrationReport, Campaign, Member
from evaluation.judge_versions import version_for
from evaluation.models import JudgeJob, Judgment
from tests.annotation.test_calibration import VERDICT, judged_world, label_all
from tests.factories import make_researcher, make_user
from tests.workers import celery_worker, flush_test_broker


def wait_done(version: Any, seconds: float = 60) -> CalibrationReport:
    deadline = time.monotonic() + seconds
    while True:
        row = CalibrationReport.objects.get(version=version)
        if row.status == CalibrationReport.Status.DONE:
            return row
        assert row.status != CalibrationReport.Status.FAILED, row.error
        assert time.monotonic() < deadline, row.status
        time.sleep(0.2)


def accuracy(row: CalibrationReport) -> float:
    (task,) = row.data["report"]["tasks"]
    (question,) = task["questions"]
    return float(question["accuracy"]["value"])


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_worker_computes_it_the_page_reads_it_stored_and_a_label_makes_it_stale(
    client: Client, tmp_path: Path, settings: Any
) -> None:
    flush_test_broker()
    settings.CALIBRATION_INLINE_UNITS = 0  # every report is a worker's
    version, _campaign, pairs = judged_world()
    client.force_login(make_researcher())
    base = f"/judges/{version.judge_id}/v{version.number}/calibration"
    # when the page is first asked for, before any worker runs
    html = client.get(f"{base}/").content.decode()
    # then it queued the report and polls
    assert "Waiting for a worker" in html and 'hx-trigger="every 1s"' in html
    assert "Reliability diagram" not in html and "Build the campaign" not in html
    assert CalibrationReport.objects.get(version=version).status == "pending"
    # the CSV says it is being computed, and the form builds nothing from a report not made
    pending = client.get(f"{base}.csv")
    assert pending.status_code == 202 and b"being computed" in pending.content
    refused = client.post(f"{base}/campaign/", {"selection": "disagreements", "size": "1"})
    assert refused.status_code == 400 and "being computed" in refused.content.decode()
    assert not Campaign.objects.filter(name__startswith="Calibration").exists()
    assert CalibrationReport.objects.count() == 1

    with celery_worker(tmp_path, queues="reports"):
        # and a worker computes it
        computed = wait_done(version)
        assert computed.attempts == 1 and computed.seconds is not None
        assert accuracy(computed) == pytest.approx(4 / 6)
        # the polling gets the report's part, with the report
        polled = client.get(f"{base}/", headers={"HX-Request": "true"}).content.decode()
        assert '<section id="report"' in polled and "<html" not in polled
        assert "Reliability diagram" in polled and "Build the campaign" in polled
        # a second view reads it stored: the same row, not computed again, few queries
        with CaptureQueriesContext(connection) as queries:
            again = client.get(f"{base}/")
        assert again.status_code == 200 and "Reliability diagram" in again.content.decode()
        assert len(queries) < 30, [q["sql"][:120] for q in queries]
        assert not any("evaluation_prediction" in q["sql"] for q in queries)
        row = CalibrationReport.objects.get(version=version)
        assert (row.pk, row.seconds, row.updated_at, row.attempts) == (
            computed.pk,
            computed.seconds,
            computed.updated_at,
            1,
        )
        # the CSV serves the stored figures
        rows = list(csv.DictReader(io.StringIO(b"".join(client.get(f"{base}.csv")).decode())))
        figures = {(r["statistic"], r["version"]): r for r in rows}
        assert float(figures[("accuracy", "1")]["value"]) == pytest.approx(4 / 6)

        # when humans of another campaign label the same pairs with the judge's verdicts
        second = services.campaign_create(name="more humans", kind="pairwise", labels_per_item=4)
        run_a, run_b = pairs[0][1].run, pairs[0][2].run
        services.items_from_runs(campaign=second, run_a=run_a, run_b=run_b)
        annotators = [make_user(username=f"more{j}") for j in range(4)]
        services.members_add(campaign=second, users=annotators, role=Member.Role.ANNOTATOR)
        services.campaign_activate(campaign=second)
        label_all(second, annotators, lambda i, j: VERDICT[i])
        # then the stored report is stale: the page queues it again and polls
        stale = client.get(f"{base}/").content.decode()
        assert "Waiting for a worker" in stale
        # and the worker computes it with the new figures: the majority is the judge's now
        fresh = wait_done(version)
    assert fresh.pk == computed.pk and fresh.fingerprint != computed.fingerprint
    assert fresh.attempts == 1  # asked for anew
    assert accuracy(fresh) == pytest.approx(1.0)
    shown = client.get(f"{base}/").content.decode()
    assert "more humans" in shown
    built = client.post(f"{base}/campaign/", {"selection": "least_sure", "size": "1"})
    assert built.status_code == 302
    flush_test_broker()


@pytest.mark.django_db
def test_the_trend_takes_another_versions_stored_report_and_the_command_the_same_service(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    version, _campaign, pairs = judged_world()
    # a second version of the judge, with the same verdicts on the same pairs
    judge = version.judge
    judge.params = {"temperature": 0.5}
    judge.save()
    second = version_for(judge)
    assert second.number == 2
    job = JudgeJob.objects.create(
        judge=judge,
        run=pairs[0][1].run,
        against=pairs[0][2].run,
        repeats=1,
        version=second,
        status="done",
    )
    for position, (sample, a, b) in enumerate(pairs):
        Judgment.objects.create(
            job=job,
            version=second,
            sample=sample,
            prediction=a,
            other=b,
            order="AB",
            position=position,
            status=Judgment.Status.DONE,
            value=float(VERDICT[position]),
            label={1: "A", 0: "tie", -1: "B"}[VERDICT[position]],
        )
    first = stored_reports.report_request(version, inline=True)
    assert first.status == "done"
    # both versions' reports made for the first one's trend
    assert first.data["trend"]["versions"] == [1, 2]
    computed: list[int] = []
    real = version_report

    def counting(v: Any, **options: Any) -> dict[str, Any]:
        computed.append(v.number)
        return real(v, **options)

    monkeypatch.setattr(stored_reports, "version_report", counting)
    other = stored_reports.report_request(second, inline=True)
    # the second version's report is made; the first's is taken as stored (same fingerprint)
    assert other.status == "done" and computed == [2]
    assert other.fingerprint == first.fingerprint
    assert other.data["trend"]["rows"] == first.data["trend"]["rows"]
    # the page shows both versions' figures in the trend (the stored versions are numbers again)
    client = Client()
    client.force_login(make_researcher())
    html = client.get(f"/judges/{judge.pk}/v2/calibration/").content.decode()
    assert ">v1</th>" in html and ">v2</th>" in html and "no item compared" not in html
    _report, trend = stored_reports.report_and_trend(other)
    (row,) = trend["rows"]
    assert list(row["by_version"]) == [1, 2]
    assert row["by_version"][1]["accuracy"]["value"] == pytest.approx(4 / 6)
    assert row["by_version"][2]["accuracy"]["value"] == pytest.approx(4 / 6)
    # the command reads the stored report (nothing computed) and prints it
    out = io.StringIO()
    call_command("calibration_report", "--judge", judge.name, "--judge-version", "2", stdout=out)
    assert computed == [2]
    assert "v2: 6 items judged" in out.getvalue()
    # another choice of resamples is another stored report, computed by the command (both
    # versions' reports: none is stored for that choice)
    call_command(
        "calibration_report", "--judge", judge.name, "--resamples", "50", "--json", stdout=out
    )
    assert computed == [2, 2, 1]
    assert CalibrationReport.objects.filter(version=second).count() == 2
    with pytest.raises(CommandError, match="resamples must be between"):
        call_command("calibration_report", "--judge", judge.name, "--resamples", "99999")
