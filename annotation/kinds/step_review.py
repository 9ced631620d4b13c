"""Step-level review of agent traces: an annotator judges each step of a trace (a call and its
result, or a turn of a dialogue) right or wrong, names the error of a wrong step from its
suite's taxonomy (Suite.step_errors) and may write the call that should have been made, in the
call editor (the refinement editor's argument fields, checked against the tool's schema); a
verdict on the whole trace closes the item.

Items are traces read by the suite's trace hook (Suite.trace) and frozen when they are built
(annotation.services.items_from_traces): a run's outputs, all or its failed ones, or the
samples of a split that are themselves traces (imported transcripts). The suite's own verdicts
on the steps stay on the server for the report (annotation.agreement.steps): an annotator never
sees them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from annotation.agreement.sections import STEP_AGREEMENT
from annotation.draft_editing import schema_fields
from annotation.errors import AnnotationError
from annotation.kinds.base import CampaignKind, Submission
from annotation.sources import FAILED_TRACES, TRACE_SAMPLES, TRACES
from annotation.traces import call_form, steps_clean, trace_shown
from benchmarks.kit.registry import get_suite
from benchmarks.kit.traces import StepError

VERDICT_CHOICES = [
    {"value": "right", "label": "The trace is right", "key": "R"},
    {"value": "wrong", "label": "The trace is wrong", "key": "W"},
]
# A value shown whole up to this many characters; longer ones are collapsed.
LONG = 400


def _text(value: Any, pretty: bool) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    # Indented only where the structure is the point (schemas, states): an indent makes json
    # encode in Python, call by call, on every item an annotator is given.
    return json.dumps(value, ensure_ascii=False, indent=2 if pretty else None)


def _shown(value: Any, pretty: bool = False) -> dict[str, Any]:
    text = _text(value, pretty)
    return {"text": text, "long": len(text) > LONG, "short": text[:LONG]}


def _suite_errors(campaign: Any) -> tuple[StepError, ...]:
    # The items are built from the campaign's benchmark (or set it: a run's).
    if campaign.benchmark is None:
        raise AnnotationError("the campaign has no benchmark", field="benchmark")
    return get_suite(campaign.benchmark.suite).step_errors


def _trace(item: Any) -> dict[str, Any]:
    trace = (item.payload or {}).get("trace")
    if not isinstance(trace, Mapping):
        raise AnnotationError("this item holds no trace to review", field="steps")
    return dict(trace)


def _step_view(
    index: int,
    step: Mapping[str, Any],
    schemas: Mapping[Any, Any],
    schemas_shown: Mapping[Any, Any],
) -> dict[str, Any]:
    """One stored step as the screen shows it: its calls with their results and schemas, the
    results beyond the calls, the states, and the call editor's prefill (its first call)."""
    calls = step.get("calls") or []
    results = step.get("results") or []
    first = calls[0] if calls else None
    prefill = (
        {
            "name": first.get("name"),
            "fields": call_form(schemas.get(first.get("name")), first),
        }
        if isinstance(first, Mapping)
        else {}
    )
    return {
        "index": index,
        "number": index + 1,
        "label": step.get("label") or f"step {index + 1}",
        "user": step.get("user") or "",
        "text": _shown(step.get("text") or ""),
        "calls": [
            {
                "name": call.get("name", ""),
                "arguments": _shown(call.get("arguments")),
                "result": _shown(results[i]) if i < len(results) else None,
                "schema": schemas_shown.get(call.get("name")) or _shown(None),
                "declared": call.get("name") in schemas,
            }
            for i, call in enumerate(calls)
            if isinstance(call, Mapping)
        ],
        # Results beyond the calls (a turn's replies).
        "results": [_shown(result) for result in results[len(calls) :]],
        "state_before": None
        if step.get("state_before") is None
        else _shown(step["state_before"], pretty=True),
        "state_after": None
        if step.get("state_after") is None
        else _shown(step["state_after"], pretty=True),
        "prefill": json.dumps(prefill, ensure_ascii=False),
    }


class StepReview(CampaignKind):
    name = "step_review"
    label = "Step-level review of agent traces"
    question_set = [
        {
            "key": "verdict",
            "text": "Your verdict on the whole trace",
            "scale": "categories",
            "choices": VERDICT_CHOICES,
            "allow_note": True,
        }
    ]
    relations = ("sample",)
    # Disagreement on steps is what the report measures; no adjudicator settles it (the
    # adjudication page shows questions, not the steps).
    adjudicable = False
    # The gold is no part of a trace's review.
    shows_reference = False
    wide = True
    labels_per_item = 2
    # All of a run's traces, its failed ones, or a split's transcripts.
    sources = (TRACES, FAILED_TRACES, TRACE_SAMPLES)
    build_help = (
        "One item per trace: each answered prediction of a run (or only its failed or wrong "
        "ones), or each sample of a split whose samples are themselves traces (imported agent "
        "logs)."
    )
    report_sections = (STEP_AGREEMENT,)
    extra_fields = ("steps",)
    script = "js/step_review.js"

    def item_view(self, item: Any, assignment: Any, view: dict[str, Any]) -> None:
        trace = trace_shown(_trace(item))
        errors = _suite_errors(item.campaign)
        # What the API gives (plain JSON): the trace as shown, and the error types to pick from.
        view["review"] = {
            "trace": trace,
            "step_errors": [
                {"key": e.key, "label": e.label, "description": e.description} for e in errors
            ],
        }
        schemas = trace.get("schemas") or {}
        schemas = schemas if isinstance(schemas, Mapping) else {}
        schemas_shown = {name: _shown(schema, pretty=True) for name, schema in schemas.items()}
        steps = [
            _step_view(index, step, schemas, schemas_shown)
            for index, step in enumerate(trace["steps"])
        ]
        # The turns before the steps that the output did not make: shown, never reviewed.
        view["history"] = [
            _step_view(index, step, schemas, schemas_shown)
            for index, step in enumerate(trace.get("history") or [])
            if isinstance(step, Mapping)
        ]
        view["trace"] = {
            "steps": steps,
            "final": _shown(trace.get("final") or ""),
            "tools": [
                {
                    "name": name,
                    "fields": schema_fields(schema),
                    "schema": schemas_shown[name],
                }
                for name, schema in schemas.items()
            ],
        }
        view["step_errors"] = [
            {"key": error.key, "label": error.label, "description": error.description, "number": i}
            for i, error in enumerate(errors, start=1)
        ]

    def on_submit(self, *, campaign: Any, assignment: Any, answers: dict[str, Any]) -> Submission:
        steps = steps_clean(
            answers.get("steps"), trace=_trace(assignment.item), errors=_suite_errors(campaign)
        )
        return Submission(answers={**answers, "steps": steps})


KIND = StepReview()
