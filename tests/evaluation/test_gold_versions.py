"""A run under each gold version (evaluation.gold_versions): refine one acceptable value of one
sample's gold, score the finished run again from its stored answers, and exactly that item's
verdict changes under the refined gold and not under the published one; the page, the command
and the export show the same."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.test import Client

from benchmarks.exports import benchmark_export
from benchmarks.kit.registry import get_suite
from benchmarks.management.commands.seed_demo import DEMO_DIR
from benchmarks.models import Benchmark, Sample
from benchmarks.services import benchmark_import, sample_revise
from evaluation.gold_versions import PUBLISHED, REFINED, GoldsTooLarge, compare_golds
from evaluation.models import Prediction, Run
from evaluation.services import predictions_import
from tests.factories import make_researcher, make_user

pytestmark = pytest.mark.django_db

DEMO = DEMO_DIR / "generic"


@pytest.fixture
def run() -> Run:
    benchmark_import(suite="generic", paths=[DEMO / "questions.jsonl"], benchmark_name="G")
    benchmark = Benchmark.objects.get(name="G")
    # The demo's outputs: demo-1's call is right, demo-2 converts to EUR where the gold says USD.
    return predictions_import(
        benchmark=benchmark,
        task="tool_calls",
        path=DEMO / "outputs_tool_calls.jsonl",
        name="demo outputs",
        split="default",
    )


def _refine_demo_2(to: str = "EUR") -> Sample:
    sample = Sample.objects.get(external_id="demo-2")
    reference = json.loads(json.dumps(sample.reference))
    reference["tool_calls"][0]["arguments"]["to_currency"] = to
    sample_revise(
        sample_id=sample.pk, base_revision=sample.revision, input=sample.input, reference=reference
    )
    return sample


def test_without_a_refinement_both_golds_give_the_runs_own_metrics(run: Run) -> None:
    comparison = compare_golds(run)
    assert comparison.metrics[PUBLISHED] == comparison.metrics[REFINED] == run.metrics
    assert comparison.changed == () and comparison.refined_samples == 0
    assert comparison.items == Prediction.objects.filter(run=run).count()


def test_refining_one_value_changes_exactly_that_items_verdict_under_the_refined_gold(
    run: Run,
) -> None:
    before = dict(run.metrics)
    stored = {p.sample.external_id: p.scores for p in run.predictions.select_related("sample")}
    assert stored["demo-2"]["call_exact"] == 0.0 and stored["demo-1"]["call_exact"] == 100.0
    _refine_demo_2()
    comparison = compare_golds(run)
    assert [
        (c.external_id, c.published["call_exact"], c.refined["call_exact"])
        for c in comparison.changed
    ] == [("demo-2", 0.0, 100.0)]
    # Under the published gold nothing moved: the run's own metrics, computed before.
    assert comparison.metrics[PUBLISHED] == before
    refined = comparison.metrics[REFINED]
    answered = len(stored)
    assert refined["call_exact"] == pytest.approx(before["call_exact"] + 100.0 / answered)
    assert comparison.refined_samples == 1
    # The run itself is untouched: its stored scores and metrics stay what the model earned.
    run.refresh_from_db()
    assert run.metrics == before


def test_refining_back_to_the_published_value_changes_nothing(run: Run) -> None:
    _refine_demo_2("EUR")
    _refine_demo_2("USD")
    comparison = compare_golds(run)
    assert comparison.changed == () and comparison.refined_samples == 1


def test_a_page_refuses_a_run_too_large_and_names_the_command(run: Run) -> None:
    with pytest.raises(GoldsTooLarge, match=f"run_golds {run.pk}"):
        compare_golds(run, limit=1)


def test_the_page_shows_both_golds_and_the_changed_item(run: Run, client: Client) -> None:
    detail = f"/runs/{run.pk}/"
    client.force_login(make_researcher())
    assert f"/runs/{run.pk}/golds/" not in client.get(detail).content.decode()
    sample = _refine_demo_2()
    assert f"/runs/{run.pk}/golds/" in client.get(detail).content.decode()
    page = client.get(f"/runs/{run.pk}/golds/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "1 of the run's samples was refined; 1 of its" in html
    assert f"/benchmarks/{run.benchmark_id}/samples/{sample.pk}/" in html
    assert "default/demo-2" in html and "default/demo-1" not in html


def test_who_may_see_the_page(run: Run, client: Client) -> None:
    url = f"/runs/{run.pk}/golds/"
    assert client.get(url).status_code in (302, 403)
    annotator = make_user()
    annotator.groups.add(Group.objects.get(name="annotators"))
    client.force_login(annotator)
    assert client.get(url).status_code == 403
    client.force_login(make_researcher())
    assert client.get(url).status_code == 200
    assert client.get("/runs/999999/golds/").status_code == 404


def test_the_command_prints_what_the_page_shows(run: Run) -> None:
    _refine_demo_2()
    out = StringIO()
    call_command("run_golds", str(run.pk), "--json", stdout=out)
    printed = json.loads(out.getvalue())
    comparison = compare_golds(run)
    assert printed["metrics"] == {k: dict(v) for k, v in comparison.metrics.items()}
    assert [c["external_id"] for c in printed["changed"]] == ["demo-2"]
    table = StringIO()
    call_command("run_golds", str(run.pk), stdout=table)
    assert "demo-2: call_exact 0.00 -> 100.00" in table.getvalue()


def test_the_export_writes_either_gold(run: Run, tmp_path: Path) -> None:
    _refine_demo_2()
    benchmark = run.benchmark
    refined = benchmark_export(benchmark=benchmark, fmt="jsonl", gold=REFINED)
    published = benchmark_export(benchmark=benchmark, fmt="jsonl", gold=PUBLISHED)
    assert refined.changed == 1 and published.changed == 0

    def to_currency(export: object) -> str:
        files = export.files  # type: ignore[attr-defined]
        lines = [
            json.loads(line)
            for name, data in files.items()
            if name.endswith(".jsonl")
            for line in data.decode().splitlines()
        ]
        record = next(r for r in lines if r["external_id"] == "demo-2")
        return str(record["reference"]["tool_calls"][0]["arguments"]["to_currency"])

    assert to_currency(refined) == "EUR" and to_currency(published) == "USD"
    provenance = json.loads(published.files["provenance.json"])
    assert provenance["gold"] == PUBLISHED and provenance["changed"] == []


def test_the_export_page_offers_the_gold_once_a_sample_is_refined(run: Run, client: Client) -> None:
    client.force_login(make_researcher())
    url = f"/benchmarks/{run.benchmark_id}/export/"
    assert 'name="gold"' not in client.get(url).content.decode()
    _refine_demo_2()
    assert 'name="gold" value="published"' in client.get(url).content.decode()
    published = client.get(url, {"format": "jsonl", "gold": "published"})
    assert published.status_code == 200 and published["Content-Type"] == "application/zip"
    refused = client.get(url, {"format": "jsonl", "gold": "newest"})
    assert (
        refused.status_code == 400
        and "gold: unknown gold version &#x27;newest&#x27;" in refused.content.decode()
    )


def test_the_leaderboard_shows_the_headline_under_both_golds(run: Run, client: Client) -> None:
    client.force_login(make_researcher())
    url = f"/leaderboard/{run.benchmark_id}/tool_calls/"
    assert "under the refined gold" not in client.get(url).content.decode()
    _refine_demo_2()
    html = client.get(url).content.decode()
    comparison = compare_golds(run)
    headline = get_suite("generic").tasks["tool_calls"].metrics[0]
    assert f"<code>{headline}</code> under the refined gold" in html
    published, refined = (
        comparison.metrics[PUBLISHED][headline],
        comparison.metrics[REFINED][headline],
    )
    assert published != refined
    assert f"{published:.2f}" in html and f"{refined:.2f}" in html
    assert f'href="/runs/{run.pk}/golds/">1 changed</a>' in html
