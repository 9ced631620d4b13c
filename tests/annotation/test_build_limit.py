"""A campaign's limit is honoured for every item source: whatever way a kind builds its items
(a split, a run, a benchmark's tools, two runs, a run's failures, a pairs file, a judge's
calibration report), a limit of 2
builds 2 items where more were there to build. (The admin's build form offered a limit that
motivation campaigns ignored: 199 items for a limit of 10.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from annotation import services
from annotation.errors import AnnotationError
from annotation.kinds import BuildRequest, kinds
from benchmarks.kit.registry import SUITE_MODULES
from evaluation.models import Endpoint, Prediction, Run
from tests.factories import make_benchmark, make_sample, make_tool

pytestmark = pytest.mark.django_db


def _pairs_file(folder: Path) -> Path:
    record = {"documentation": "Weather today", "arguments": {"city": "Oban"}, "real": 12}
    path = folder / "pairs.json"
    path.write_text(json.dumps([{**record, "simulated": i} for i in range(5)]), encoding="utf-8")
    return path


def _run(
    benchmark: Any, samples: list[Any], name: str, *, failed: bool = False, traced: bool = False
) -> Run:
    endpoint, _ = Endpoint.objects.get_or_create(
        name="limit-endpoint", defaults={"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    )
    run = Run.objects.create(
        name=name,
        benchmark=benchmark,
        task="answer",
        split="test",
        endpoint=endpoint,
        model_name=name,
        status=Run.Status.DONE,
    )
    for i, sample in enumerate(samples):
        Prediction.objects.create(
            run=run,
            sample=sample,
            position=i,
            status=Prediction.Status.FAILED if failed else Prediction.Status.DONE,
            attempts=1,
            output="Answer: 1",
            context={"candidates": ["tool_a", "tool_b"]},
            scores={} if failed else {"accuracy": 100.0},
            trace=[{"name": "weather", "arguments": {"city": "Oban"}}] if traced else [],
        )
    return run


def _request(
    builder: str,
    benchmark: Any,
    samples: list[Any],
    folder: Path,
    monkeypatch: Any,
    kind: str = "",
) -> BuildRequest:
    if builder == "split":
        return BuildRequest(split="test")
    if builder == "run":
        return BuildRequest(run=_run(benchmark, samples, "baseline-run"))
    if builder == "runs":
        return BuildRequest(
            run=_run(benchmark, samples, "run-a"), run_b=_run(benchmark, samples, "run-b")
        )
    if builder == "failures":
        return BuildRequest(run=_run(benchmark, samples, "failing-run", failed=True))
    if builder == "answers":
        return BuildRequest(run=_run(benchmark, samples, "answered-run"))
    if builder == "traces":
        # a run's traces: the benchmark's suite reads them (the test tree's trace suite)
        monkeypatch.setitem(SUITE_MODULES, "trace_toy", "tests.annotation.trace_suite")
        benchmark.suite = "trace_toy"
        benchmark.save(update_fields=["suite"])
        return BuildRequest(run=_run(benchmark, samples, "traced-run", traced=True))
    if builder == "api_pairs":
        return BuildRequest(pairs=_pairs_file(folder))
    if builder == "judged":
        # the judged items a calibration report chooses: (sample, prediction A, prediction B
        # or None for a kind of single answers)
        a = _run(benchmark, samples, "judged-a").predictions.order_by("position")
        if kind and not kinds()[kind].sided:
            return BuildRequest(judged=[(p.sample_id, p.pk, None) for p in a])
        b = dict(_run(benchmark, samples, "judged-b").predictions.values_list("sample_id", "id"))
        return BuildRequest(judged=[(p.sample_id, p.pk, b[p.sample_id]) for p in a])
    return BuildRequest()


# Every item source of every registered kind (one without data above fails its build).
SOURCES = [(name, builder) for name, kind in kinds().items() for builder in sorted(kind.builders)]


@pytest.mark.parametrize(("kind", "builder"), SOURCES)
def test_a_limit_is_honoured_by_every_item_source(
    kind: str, builder: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given: five of everything a kind could build from
    benchmark = make_benchmark()
    samples = [
        make_sample(benchmark=benchmark, candidate_tools=["tool_a", "tool_b"]) for _ in range(5)
    ]
    for i in range(5):
        make_tool(benchmark=benchmark, name=f"tool_{i}")
    campaign = services.campaign_create(
        name=f"limit {kind} {builder}", kind=kind, benchmark=benchmark
    )
    request = _request(builder, benchmark, samples, tmp_path, monkeypatch, kind)
    request.limit = 2
    # when
    added = services.items_build(campaign=campaign, request=request)
    # then
    assert added == 2
    assert campaign.items.count() == 2
    assert list(campaign.items.order_by("position").values_list("position", flat=True)) == [0, 1]


def test_every_builder_a_kind_declares_is_covered() -> None:
    declared = {builder for kind in kinds().values() for builder in kind.builders}
    assert declared <= {builder for _, builder in SOURCES}


@pytest.mark.parametrize("limit", [0, -1, 10**12])
def test_a_limit_out_of_range_is_refused_on_its_field(limit: int) -> None:
    benchmark = make_benchmark()
    make_tool(benchmark=benchmark)
    campaign = services.campaign_create(name="out of range", kind="motivation", benchmark=benchmark)
    with pytest.raises(AnnotationError) as refused:
        services.items_build(campaign=campaign, request=BuildRequest(limit=limit))
    assert refused.value.field == "limit"
    assert not campaign.items.exists()
