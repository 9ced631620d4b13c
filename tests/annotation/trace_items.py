"""Step-level review fixtures: a benchmark of the test tree's trace suite
(tests/annotation/trace_suite.py), a run whose predictions are traces, and a campaign over
them."""

from __future__ import annotations

from typing import Any

from annotation import services
from annotation.models import Campaign, Member
from benchmarks.models import Benchmark
from evaluation.models import Endpoint, Prediction, Run
from tests.factories import make_benchmark, make_sample, make_user

# Three traces: the suite's own verdicts on each step ("" right, a type wrong).
TRACES = [
    [
        {
            "name": "weather",
            "arguments": {"city": "Ghent"},
            "result": {"temp": 12},
            "auto_error": "",
        },
        {
            "name": "news",
            "arguments": {"topic": "rain"},
            "result": "<b>wet</b>",
            "auto_error": "unnecessary_call",
        },
    ],
    [
        {
            "name": "weather",
            "arguments": {"city": "Gent", "days": 2},
            "result": "?",
            "auto_error": "wrong_argument",
        },
        {"text": "It will rain.", "auto_error": "hallucinated_result"},
    ],
    [
        {"name": "news", "arguments": {"topic": "sport"}, "result": "goal", "auto_error": ""},
        {
            "name": "news",
            "arguments": {"topic": "sport"},
            "result": "goal",
            "auto_error": "loop",
            "before": {"seen": 1},
            "after": {"seen": 2},
        },
    ],
]


def trace_run(monkeypatch: Any, *, scores: list[float] | None = None) -> tuple[Benchmark, Run]:
    """A benchmark of the trace suite with one run of three traced predictions."""
    from benchmarks.kit.registry import SUITE_MODULES

    monkeypatch.setitem(SUITE_MODULES, "trace_toy", "tests.annotation.trace_suite")
    benchmark = make_benchmark(suite="trace_toy")
    endpoint = Endpoint.objects.create(
        name=f"e-{benchmark.pk}", base_url="http://127.0.0.1:9/v1", model="m"
    )
    run = Run.objects.create(
        benchmark=benchmark, task="tool_calls", endpoint=endpoint, status=Run.Status.DONE
    )
    scores = scores or [1.0, 0.0, 0.0]
    for position, (steps, score) in enumerate(zip(TRACES, scores, strict=True)):
        sample = make_sample(benchmark=benchmark, input={"query": f"Weather {position}?"})
        Prediction.objects.create(
            run=run,
            sample=sample,
            position=position,
            status=Prediction.Status.DONE,
            output=f"final {position}",
            trace=steps,
            scores={"call_exact": score},
        )
    return benchmark, run


def step_campaign(
    monkeypatch: Any, *, annotators: int = 2, failed_only: bool = False
) -> tuple[Campaign, list[Any]]:
    """An open step-level review of the run's traces, with its annotators."""
    _benchmark, run = trace_run(monkeypatch)
    campaign = services.campaign_create(name=f"steps {run.pk}", kind="step_review")
    services.items_from_traces(campaign=campaign, run=run, failed_only=failed_only)
    users = [make_user() for _ in range(annotators)]
    services.members_add(campaign=campaign, users=users, role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=campaign)
    return campaign, users
