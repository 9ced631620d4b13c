"""The ways of building a campaign's items (annotation.kinds.base.ItemSource), each over one of
annotation.services' item builders. A kind names the ones it takes (`CampaignKind.sources`);
the setup page and the admin's build form ask for their fields and build through the kind."""

from __future__ import annotations

from typing import Any

from annotation.kinds.base import BuildRequest, ItemSource
from annotation.services import (
    items_from_answers,
    items_from_failures,
    items_from_judged,
    items_from_pairs_file,
    items_from_run,
    items_from_runs,
    items_from_split,
    items_from_tools,
    items_from_traces,
)


def _split(campaign: Any, request: BuildRequest) -> int:
    return items_from_split(campaign=campaign, split=request.split.strip(), limit=request.limit)


def _run(campaign: Any, request: BuildRequest) -> int:
    return items_from_run(campaign=campaign, run=request.run, limit=request.limit)


def _tools(campaign: Any, request: BuildRequest) -> int:
    return items_from_tools(campaign=campaign, limit=request.limit)


def _runs(campaign: Any, request: BuildRequest) -> int:
    return items_from_runs(
        campaign=campaign, run_a=request.run, run_b=request.run_b, limit=request.limit
    )


def _answers(campaign: Any, request: BuildRequest) -> int:
    return items_from_answers(campaign=campaign, run=request.run, limit=request.limit)


def _failures(campaign: Any, request: BuildRequest) -> int:
    return items_from_failures(campaign=campaign, run=request.run, limit=request.limit)


def _traces(campaign: Any, request: BuildRequest) -> int:
    return items_from_traces(
        campaign=campaign, run=request.run, failed_only=request.failed_only, limit=request.limit
    )


def _trace_samples(campaign: Any, request: BuildRequest) -> int:
    return items_from_traces(campaign=campaign, split=request.split.strip(), limit=request.limit)


def _judged(campaign: Any, request: BuildRequest) -> int:
    assert request.judged is not None  # ItemSource.given checked it
    return items_from_judged(campaign=campaign, judged=request.judged, limit=request.limit)


def _pairs(campaign: Any, request: BuildRequest) -> int:
    assert request.pairs is not None  # ItemSource.given checked it
    return items_from_pairs_file(
        campaign=campaign, path=request.pairs, limit=request.limit, name=request.pairs_name
    )


# One item per sample of a split of the campaign's benchmark (CampaignKind.sample_item).
SPLIT = ItemSource("split", ("split",), _split, missing="give the split")
# One item per prediction of a run, with the candidates it was shown.
RUN = ItemSource("run", ("run",), _run, missing="choose the run")
# One item per tool of the campaign's benchmark.
TOOLS = ItemSource("tools", (), _tools, samples=False)
# One item per sample both runs answered, A and B in that order.
RUNS = ItemSource("runs", ("run", "run_b"), _runs, missing="choose run A and run B")
# One item per finished answer of a run.
ANSWERS = ItemSource(
    "answers", ("run",), _answers, missing="choose the run whose answers are checked"
)
# One item per failed or wrong prediction of a run.
FAILURES = ItemSource(
    "failures", ("run",), _failures, missing="choose the run whose failures are labelled"
)
# The virtual API server's real and simulated responses, from a JSON file.
API_PAIRS = ItemSource(
    "api_pairs", ("pairs",), _pairs, missing="upload the pairs file", samples=False
)
# One trace per answered prediction of a run (a step-level review)...
TRACES = ItemSource("traces", ("run",), _traces, missing="choose the run whose traces are reviewed")
# ...or per failed or wrong one...
FAILED_TRACES = ItemSource(
    "traces", ("run", "failed_only"), _traces, missing="choose the run whose traces are reviewed"
)
# ...or per sample of a split whose samples are themselves traces (imported transcripts).
TRACE_SAMPLES = ItemSource(
    "traces", ("split",), _trace_samples, missing="give the split whose samples are traces"
)
# The items a judge's calibration report chose (annotation.calibration.services): no page
# field asks for them, the report's action gives them.
JUDGED = ItemSource(
    "judged", ("judged",), _judged, missing="build these from a judge's calibration report"
)
