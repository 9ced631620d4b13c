"""MetaTool's analyses on runs imported against the seed data: a model's runs of the scenario
task over the three popularity lists pool into one line per model (the paper's Fig. 4), in the
page, the CSV and the command."""

from __future__ import annotations

import csv
import io
import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client, override_settings

from benchmarks.kit.protocol import PublishedOutput
from benchmarks.models import Benchmark, Sample
from benchmarks.services import benchmark_import
from evaluation.models import Run
from evaluation.services import outputs_import
from tests.factories import make_researcher

pytestmark = pytest.mark.django_db

LISTS = ("TopTool_top5", "TopTool_top10", "TopTool_top15")


def metatool(seeddata: Path) -> Benchmark:
    folder = seeddata / "metatool"
    benchmark_import(
        suite="metatool",
        paths=[
            folder / "all_clean_data_sample200.csv",
            folder / "plugin_des.json",
            folder / "scenario",
        ],
        benchmark_name="MetaTool",
    )
    return Benchmark.objects.get(name="MetaTool")


def scenario_run(benchmark: Benchmark, scenario: str, model: str, right: str) -> tuple[Run, int]:
    """A run of the scenario task on one list, answering the gold tool on every item (right
    "all"), every other item ("half") or none ("none": "None"); returns it and its right count."""
    listed = Sample.objects.get(benchmark=benchmark, split="scenario_lists", external_id=scenario)
    queries = [
        s
        for s in Sample.objects.filter(benchmark=benchmark, split="queries").order_by("id")
        if s.reference["tool"] in listed.candidate_tools
    ]
    outputs, correct = [], 0
    for index, sample in enumerate(queries):
        gold = right == "all" or (right == "half" and index % 2 == 0)
        correct += gold
        outputs.append(
            PublishedOutput(
                sample.external_id, sample.reference["tool"] if gold else "None", "queries"
            )
        )
    run = outputs_import(
        benchmark=benchmark,
        task="scenario",
        outputs=outputs,
        name=f"{model} {scenario}",
        model_name=model,
        options={"scenario": scenario},
    )
    return run, correct


def test_a_models_runs_over_the_top_n_lists_are_one_line(seeddata: Path) -> None:
    # given: alpha right on all of top 5, half of top 10, none of top 15; beta none of top 5
    benchmark = metatool(seeddata)
    alpha = [
        scenario_run(benchmark, name, "alpha", right)
        for name, right in zip(LISTS, ("all", "half", "none"), strict=True)
    ]
    beta, _ = scenario_run(benchmark, "TopTool_top5", "beta", "none")
    sizes = {name: run.predictions.count() for name, (run, _) in zip(LISTS, alpha, strict=True)}
    # the seed data's 200 queries: 30, 40 and 54 of them need a tool of the lists
    assert sizes == {"TopTool_top5": 30, "TopTool_top10": 40, "TopTool_top15": 54}
    # each run alone holds one group
    out = StringIO()
    call_command("run_analysis", str(alpha[1][0].pk), "--json", stdout=out)
    one = json.loads(out.getvalue())["analyses"]
    half = round(100 * alpha[1][1] / 40, 2)
    assert one["by_top_n"] == {"by": "top_n", "rows": [{"group": 10, "n": 40, "CSR": half}]}
    assert one["by_scenario"]["rows"] == [{"group": "TopTool_top10", "n": 40, "CSR": half}]
    assert one["by_list_length"]["rows"] == [{"group": 10, "n": 40, "CSR": half}]
    # when: the four runs are compared
    client = Client()
    client.force_login(make_researcher())
    ids = [run.pk for run, _ in alpha] + [beta.pk]
    query = "&".join(f"run={pk}" for pk in ids)
    response = client.get(f"/runs/analyses/by_top_n.csv?{query}")
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    # then: one line per model, alpha's pooled from its three runs
    runs = " ".join(str(run.pk) for run, _ in alpha)
    assert rows == [
        ["series", "runs", "top_n", "n", "CSR"],
        ["alpha", runs, "5", "30", "100.0"],
        ["alpha", runs, "10", "40", str(half)],
        ["alpha", runs, "15", "54", "0.0"],
        ["beta", str(beta.pk), "5", "30", "0.0"],
    ]
    page = client.get(f"/runs/analyses/?{query}").content.decode()
    assert "One line per model" in page
    # pooling reads the runs' items again: past the inline size each run keeps its line
    with override_settings(ANALYSES_INLINE_ITEMS=100):
        response = client.get(f"/runs/analyses/by_top_n.csv?{query}")
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [row[:3] for row in rows[1:]] == [
        [f"#{run.pk} alpha {name}", str(run.pk), str(size)]
        for (run, _), name, size in zip(alpha, LISTS, (5, 10, 15), strict=True)
    ] + [["beta", str(beta.pk), "5"]]
    # by scenario: bars in natural order of the lists' names
    response = client.get(f"/runs/analyses/by_scenario.csv?{query}")
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [row[2] for row in rows[1:4]] == ["TopTool_top5", "TopTool_top10", "TopTool_top15"]
