"""The agreement report from the outside: the page and its filters, the CSV downloads, the API
(200 with the report, 202 while a worker computes it), the management command, the admin
action, and a large report computed by a real Celery worker."""

from __future__ import annotations

import csv
import io
import json
import time
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from annotation.agreement.services import report_params, report_request
from annotation.models import AgreementReport
from tests.annotation.test_agreement_report import ANNOTATORS, ITEMS, pairwise_campaign
from tests.factories import make_superuser, make_user
from tests.workers import celery_worker, flush_test_broker


@pytest.mark.django_db
def test_the_page_shows_tables_and_plots_and_filters_swap_it_in_place(client: Client) -> None:
    campaign, *_ = pairwise_campaign()
    client.force_login(make_superuser())
    url = f"/campaigns/{campaign.pk}/agreement/"
    page = client.get(url).content.decode()
    # the filters offer the items' metric; without it, no metric row
    assert 'name="metric" value="accuracy"' in page
    assert "Leaderboard of the runs" in page and "Krippendorff" in page
    assert page.count("<svg") >= 3  # position bias, confusion matrix, heat map
    assert "accuracy (metric)" not in page
    # choosing the metric (htmx) returns only the report, with the metric against the humans
    partial = client.get(url, {"metric": "accuracy"}, HTTP_HX_REQUEST="true").content.decode()
    assert partial.lstrip().startswith('<section id="report"') and "<form" not in partial
    assert "accuracy (metric)" in partial and "against the mean human answer" in partial
    # the downloads carry the same choice
    assert f"/campaigns/{campaign.pk}/agreement/summary.csv?metric=accuracy" in partial
    summary = client.get(f"{url}summary.csv", {"metric": "accuracy"})
    rows = list(csv.DictReader(io.StringIO(b"".join(summary.streaming_content).decode())))
    assert any(r["rater_a"] == "metric:accuracy" and r["statistic"] == "accuracy" for r in rows)
    labels = client.get(f"{url}labels.csv", {"metric": "accuracy"})
    lines = b"".join(labels.streaming_content).decode().splitlines()
    assert len(lines) == 1 + ITEMS * ANNOTATORS + ITEMS
    # an unknown metric is refused with the ones there are
    refused = client.get(url, {"metric": "bleu"}).content.decode()
    assert "metric &#x27;bleu&#x27; does not rate this campaign&#x27;s items" in refused
    assert "available: accuracy" in refused


@pytest.mark.django_db
def test_annotators_cannot_see_reports(client: Client) -> None:
    campaign, *_ = pairwise_campaign()
    client.force_login(make_user())
    assert client.get(f"/campaigns/{campaign.pk}/agreement/").status_code == 403
    assert client.get(f"/campaigns/{campaign.pk}/agreement/summary.csv").status_code == 403
    assert client.get(f"/api/agreement/{campaign.pk}/").status_code == 403


@pytest.mark.django_db
def test_the_api_lists_campaigns_and_gives_a_report(client: Client) -> None:
    campaign, *_ = pairwise_campaign()
    client.force_login(make_superuser())
    listed = client.get("/api/agreement/").json()
    assert {"id": campaign.pk, "metrics": ["accuracy"]}.items() <= next(
        c for c in listed if c["id"] == campaign.pk
    ).items()
    report = client.get(f"/api/agreement/{campaign.pk}/", {"metric": "accuracy"}).json()
    assert report["questions"][0]["automatic"][0]["rater"] == "metric:accuracy"
    bad = client.get(f"/api/agreement/{campaign.pk}/", {"judge": "nobody"})
    assert bad.status_code == 400 and "judge 'nobody'" in bad.json()["detail"]
    schema = client.get("/api/schema/").content.decode()
    assert "/api/agreement/{id}/" in schema


@pytest.mark.django_db
def test_the_command_prints_writes_the_csv_and_stores_the_report(tmp_path: Path) -> None:
    campaign, *_ = pairwise_campaign()
    out = io.StringIO()
    target = tmp_path / "summary.csv"
    accuracy_report = ("agreement_report", "--campaign", str(campaign.pk), "--metric", "accuracy")
    call_command(
        *accuracy_report,
        "--resamples",
        "50",
        "--csv",
        str(target),
        stdout=out,
        stderr=io.StringIO(),
    )
    text = out.getvalue()
    assert "metric:accuracy" in text and "accuracy" in text and "n=50" in text
    rows = list(csv.DictReader(target.open()))
    assert rows[0].keys() == {
        "question",
        "rater_a",
        "rater_b",
        "statistic",
        "n",
        "value",
        "ci_low",
        "ci_high",
    }
    # stored: the page and the API read the same report without computing it again
    stored = AgreementReport.objects.get(campaign=campaign)
    assert stored.status == AgreementReport.Status.DONE
    as_json = io.StringIO()
    call_command(*accuracy_report, "--resamples", "50", "--json", stdout=as_json)
    assert json.loads(as_json.getvalue())["generated_at"] == stored.data["generated_at"]


@pytest.mark.django_db
def test_the_admin_action_opens_the_report(client: Client) -> None:
    campaign, *_ = pairwise_campaign()
    client.force_login(make_superuser())
    response = client.post(
        "/admin/annotation/campaign/",
        {"action": "agreement_report", "_selected_action": [campaign.pk]},
    )
    assert response.status_code == 302
    assert response["Location"] == f"/campaigns/{campaign.pk}/agreement/"


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_large_report_is_computed_by_a_worker_while_the_api_answers_202(
    client: Client, tmp_path: Path, settings: Any
) -> None:
    flush_test_broker()
    settings.AGREEMENT_INLINE_ANSWERS = 0  # every report is "large"
    campaign, *_ = pairwise_campaign()
    client.force_login(make_superuser())
    url = f"/api/agreement/{campaign.pk}/"
    first = client.get(url, {"metric": "accuracy"})
    assert first.status_code == 202 and first.json()["status"] == "pending"
    with celery_worker(tmp_path):
        deadline = time.monotonic() + 60
        while (response := client.get(url, {"metric": "accuracy"})).status_code == 202:
            assert time.monotonic() < deadline, response.json()
            time.sleep(0.2)
    assert response.status_code == 200, response.content
    assert response.json()["questions"][0]["automatic"][0]["accuracy"]["value"] == 0.8
    # the page polls while pending and shows the report once done
    page = client.get(f"/campaigns/{campaign.pk}/agreement/", {"metric": "accuracy"}).content
    assert b"Leaderboard of the runs" in page
    assert report_request(campaign, report_params(metrics=["accuracy"])).status == "done"
    flush_test_broker()


@pytest.mark.django_db
def test_a_large_summary_is_not_computed_by_the_download_and_resamples_are_bounded(
    client: Client, settings: Any
) -> None:
    campaign, *_ = pairwise_campaign()
    client.force_login(make_superuser())
    settings.AGREEMENT_INLINE_ANSWERS = 0  # every report is a worker's
    pending = client.get(f"/campaigns/{campaign.pk}/agreement/summary.csv")
    assert pending.status_code == 202 and b"being computed" in pending.content
    assert AgreementReport.objects.get(campaign=campaign).status == "pending"
    too_many = client.get(f"/api/agreement/{campaign.pk}/", {"resamples": "1000000"})
    assert too_many.status_code == 400 and "resamples" in too_many.json()["detail"]
    page = client.get(f"/campaigns/{campaign.pk}/agreement/", {"resamples": "1000000"})
    assert b"resamples must be between 0 and 10000" in page.content
