"""A refinement approved in the studio is in the benchmark's export, and provenance.json says
who wrote it, who approved it, when and how; one still awaiting review is not exported."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from annotation.models import Campaign, Label
from benchmarks.exports import benchmark_export
from benchmarks.models import Benchmark, Sample, SampleRevision
from tests.annotation.test_refinement import campaign, edit, open_item

pytestmark = pytest.mark.django_db


def refine_first_step(client: Client, c: Campaign, annotator: Any) -> tuple[Sample, Label]:
    client.force_login(annotator)
    edit_url, submit_url, token = open_item(client, c)
    edit(client, edit_url, op="text", uid="s1", value="Look up Saturday's weather first")
    client.post(
        submit_url,
        {"verdict": "fixed", "token": token, "note": "clearer first step"},
        HTTP_HX_REQUEST="true",
    )
    label = Label.objects.get(is_current=True, annotator=annotator)
    return label.item.sample, label


def exported_test_json(tmp_path: Path, name: str) -> tuple[list[dict], dict]:
    out = tmp_path / name
    benchmark_export(benchmark=Benchmark.objects.get(name="UltraTool refine")).write_to(out)
    lines = [json.loads(line) for line in (out / "test.json").read_text().splitlines()]
    return lines, json.loads((out / "provenance.json").read_text())


def test_an_approved_refinement_is_exported_with_its_provenance(
    client: Client, tmp_path: Path
) -> None:
    c, annotator, reviewer = campaign(review_stage=True)
    sample, label = refine_first_step(client, c, annotator)
    position = int(sample.external_id) - 1

    # awaiting review: the export holds the sample as imported
    lines, provenance = exported_test_json(tmp_path, "before")
    assert lines[position]["plan"][0]["step"] == "1. Check Saturday's weather"
    assert provenance["changed"] == []

    # the reviewer approves through the page
    client.force_login(reviewer)
    client.post(f"/review/{c.pk}/{label.pk}/", {"decision": "approve"}, HTTP_HX_REQUEST="true")
    sample.refresh_from_db()
    assert sample.revision == 1

    lines, provenance = exported_test_json(tmp_path, "after")
    assert lines[position]["plan"][0]["step"] == "1. Look up Saturday's weather first"
    # the other steps are written as published (their call strings unchanged)
    assert lines[position]["plan"][2]["tool"] == (
        "get_weather_forecast(city='Rotterdam', day='Saturday', period='morning')"
    )
    [entry] = provenance["changed"]
    assert entry["external_id"] == sample.external_id and entry["split"] == "test"
    assert entry["revision"] == 1
    assert entry["author"] == "ann" and entry["reviewer"] == "rev"
    assert entry["verdict"] == "approved"
    assert "clearer first step" in entry["note"]
    assert entry["date"].startswith(str(sample.updated_at.date()))
    assert [h["revision"] for h in entry["history"]] == [1]


def test_without_a_review_stage_the_refinement_is_exported_as_unreviewed(
    client: Client, tmp_path: Path
) -> None:
    c, annotator, _ = campaign(review_stage=False)
    sample, _ = refine_first_step(client, c, annotator)
    lines, provenance = exported_test_json(tmp_path, "out")
    assert lines[int(sample.external_id) - 1]["plan"][0]["step"].endswith("weather first")
    [entry] = provenance["changed"]
    assert (entry["author"], entry["reviewer"], entry["verdict"]) == ("ann", None, "unreviewed")


def test_the_command_writes_the_refined_benchmark_and_it_reads_back(
    client: Client, tmp_path: Path
) -> None:
    c, annotator, _ = campaign(review_stage=False)
    sample, _ = refine_first_step(client, c, annotator)
    out = tmp_path / "cli"
    call_command("export_benchmark", "UltraTool refine", "--out", str(out), verbosity=0)
    assert json.loads((out / "provenance.json").read_text())["changed"][0]["author"] == "ann"
    # imported again, the refined sample is the refined one, at revision 0 of a new benchmark
    call_command(
        "import_benchmark",
        "ultratool",
        *[str(p) for p in sorted(out.rglob("*.json")) if p.name != "provenance.json"],
        "--benchmark",
        "UltraTool refined",
        verbosity=0,
    )
    again = Sample.objects.get(benchmark__name="UltraTool refined", external_id=sample.external_id)
    sample.refresh_from_db()
    assert again.input == sample.input
    assert again.reference["steps"] == sample.reference["steps"]
    assert again.reference == sample.reference


def test_a_dropped_sample_is_left_out_and_listed(client: Client, tmp_path: Path) -> None:
    c, annotator, _ = campaign(review_stage=False)
    client.force_login(annotator)
    _, submit_url, token = open_item(client, c)
    client.post(submit_url, {"verdict": "drop", "token": token}, HTTP_HX_REQUEST="true")
    sample = Label.objects.get(annotator=annotator).item.sample
    total = Benchmark.objects.get(name="UltraTool refine").samples.count()
    out = tmp_path / "out"
    export = benchmark_export(benchmark=Benchmark.objects.get(name="UltraTool refine"))
    export.write_to(out)
    assert export.samples == total - 1 and export.dropped == 1
    provenance = json.loads((out / "provenance.json").read_text())
    assert provenance["dropped"] == [{"external_id": sample.external_id, "split": "test"}]
    questions = [json.loads(line)["question"] for line in (out / "test.json").open()]
    assert sample.input["query"] not in questions


@pytest.mark.parametrize("review_stage", [True, False])
def test_revisions_made_before_provenance_was_recorded_get_it_from_their_refinement(
    client: Client, review_stage: bool
) -> None:
    from django.apps import apps

    migration = importlib.import_module(
        "annotation.migrations.0008_samplerevision_provenance_backfill"
    )
    # given a refinement applied, its revision as it was stored before benchmarks 0004
    c, annotator, reviewer = campaign(review_stage=review_stage)
    sample, label = refine_first_step(client, c, annotator)
    if review_stage:
        client.force_login(reviewer)
        client.post(f"/review/{c.pk}/{label.pk}/", {"decision": "approve"}, HTTP_HX_REQUEST="true")
    SampleRevision.objects.filter(sample=sample).update(reviewer=None, verdict="")
    untouched = SampleRevision.objects.get(sample=sample, number=0)

    # when
    migration.forwards(apps, None)

    # then
    made = SampleRevision.objects.get(sample=sample, number=1)
    expected = (reviewer, "approved") if review_stage else (None, "unreviewed")
    assert (made.reviewer, made.verdict) == expected
    untouched.refresh_from_db()
    assert (untouched.reviewer, untouched.verdict) == (None, "")
