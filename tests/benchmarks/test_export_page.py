"""The export page and its download: a researcher picks a split and a format and gets a zip of
the same files the command writes; bad choices are answered on the page, never with a 500."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from django.test import Client

from benchmarks.models import Benchmark
from benchmarks.services import benchmark_import
from tests.factories import make_researcher, make_user

pytestmark = pytest.mark.django_db
DEMO = Path(__file__).resolve().parents[2] / "benchmarks" / "demo"


@pytest.fixture
def benchmark() -> Benchmark:
    benchmark_import(suite="wtueval", paths=[DEMO / "wtueval" / "questions.jsonl"])
    return Benchmark.objects.get(name="WTU-Eval")


def test_the_page_offers_the_splits_and_formats(client: Client, benchmark: Benchmark) -> None:
    client.force_login(make_researcher())
    page = client.get(f"/benchmarks/{benchmark.pk}/export/").content.decode()
    split = benchmark.samples.first().split
    assert f'<option value="{split}"' in page
    assert 'value="published"' in page and 'value="jsonl"' in page
    # linked from the benchmark's page
    detail = client.get(f"/benchmarks/{benchmark.pk}/").content.decode()
    assert f'href="/benchmarks/{benchmark.pk}/export/"' in detail


def test_the_download_is_a_zip_of_the_published_files(client: Client, benchmark: Benchmark) -> None:
    client.force_login(make_researcher())
    split = benchmark.samples.order_by("id").first().split
    response = client.get(
        f"/benchmarks/{benchmark.pk}/export/", {"format": "published", "split": split}
    )
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    assert 'filename="WTU-Eval-published.zip"' in response["Content-Disposition"]
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    assert sorted(archive.namelist()) == ["provenance.json", "questions.jsonl"]
    lines = archive.read("questions.jsonl").decode().splitlines()
    assert len(lines) == benchmark.samples.filter(split=split).count()
    assert {json.loads(line)["dataset"] for line in lines} == {split}
    assert json.loads(archive.read("provenance.json"))["split"] == split


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"format": "xml"}, "unknown format"),
        ({"format": "published", "split": "no-such-split"}, "has no split"),
    ],
)
def test_bad_choices_are_answered_on_the_page(
    client: Client, benchmark: Benchmark, query: dict[str, str], message: str
) -> None:
    client.force_login(make_researcher())
    response = client.get(f"/benchmarks/{benchmark.pk}/export/", query)
    assert response.status_code == 400
    assert message in response.content.decode() and "Download the zip" in response.content.decode()


def test_an_annotator_cannot_export(client: Client, benchmark: Benchmark) -> None:
    client.force_login(make_user(username="someone"))
    assert client.get(f"/benchmarks/{benchmark.pk}/export/").status_code == 403
    assert client.get("/benchmarks/999999/export/").status_code == 403
