"""Traces as a step-level review stores and checks them (the `step_review` campaign kind).

A suite's trace hook (benchmarks.kit.traces) reads an output, or a sample that is itself a
trace, into a `Trace`; an item keeps it as plain JSON (`trace_dump`), frozen when the item is
built, so that every annotator reviews the same steps and the report compares their labels
with the suite's own verdicts on exactly those steps. What an annotator is shown leaves the
suite's verdicts out (`trace_shown`): they would bias the review.

An annotator's review of one trace (`steps_clean`) is one entry per step: right, or wrong with
an error type from the suite's taxonomy and, optionally, the call that should have been made,
written in the call editor (its arguments as the refinement editor's form texts, checked
against the tool's JSON schema by the same functions).

No database: plain functions over plain data (the refinement editor's argument functions).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from annotation.draft_editing import (
    arguments_errors,
    arguments_from_form,
    arguments_from_json,
    form_from_arguments,
    schema_fields,
)
from annotation.errors import AnnotationError
from benchmarks.kit.traces import StepError, Trace, TraceStep

__all__ = [
    "SUITE_ONLY",
    "steps_clean",
    "trace_dump",
    "trace_shown",
]

# What the suite says of its own trace, kept for the report and never shown to annotators.
SUITE_ONLY = ("auto_error", "auto_verdict")
# A posted review longer than this is refused before it is read.
MAX_POSTED = 1_000_000


def _plain(value: Any) -> Any:
    """A value as JSON holds it (a tuple as a list; what JSON cannot hold, as its text)."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def _step_dump(step: TraceStep) -> dict[str, Any]:
    return {
        "label": step.label,
        "user": step.user,
        "text": step.text,
        "calls": [
            {"name": call.name, "arguments": call.arguments, "label": call.label}
            for call in step.calls
        ],
        "results": list(step.results),
        "state_before": step.state_before,
        "state_after": step.state_after,
        "auto_error": step.auto_error,
    }


def trace_dump(trace: Trace) -> dict[str, Any]:
    """A trace as plain JSON (an item's payload): its steps, final answer, tool schemas, the
    suite's own verdicts and the history before the steps."""
    return _plain(
        {
            "steps": [_step_dump(step) for step in trace.steps],
            "final": trace.final,
            "schemas": dict(trace.schemas),
            "auto_verdict": trace.auto_verdict,
            "history": [_step_dump(step) for step in trace.history],
        }
    )


def trace_shown(stored: Mapping[str, Any]) -> dict[str, Any]:
    """What an annotator sees of a stored trace: everything but the suite's own verdicts."""
    shown = {key: value for key, value in stored.items() if key not in SUITE_ONLY}
    for part in ("steps", "history"):
        shown[part] = [
            {key: value for key, value in step.items() if key not in SUITE_ONLY}
            for step in stored.get(part) or []
        ]
    return shown


def call_form(schema: Any, call: Mapping[str, Any] | None) -> dict[str, str]:
    """The call editor's texts for a call (its arguments' form texts by the tool's schema)."""
    if not call:
        return {}
    return form_from_arguments(schema, call.get("arguments") if isinstance(call, Mapping) else {})


def _where(index: int, step: Mapping[str, Any]) -> str:
    label = str(step.get("label") or "")
    number = f"step {index + 1}"
    return f"{number} ({label})" if label and label != number else number


def _posted_list(posted: Any) -> list[Any]:
    if isinstance(posted, str):
        if len(posted) > MAX_POSTED:
            raise AnnotationError("the review of the steps is too long", field="steps")
        if not posted.strip():
            return []
        try:
            posted = json.loads(posted)
        except (json.JSONDecodeError, RecursionError):
            raise AnnotationError(
                "the review of the steps is not readable (expected a JSON list)", field="steps"
            ) from None
    if posted is None:
        return []
    if not isinstance(posted, list):
        raise AnnotationError(
            "the review of the steps must be a list, one entry per step", field="steps"
        )
    return posted


def _mark(entry: Mapping[str, Any]) -> bool | None:
    value = entry.get("right")
    if isinstance(value, bool):
        return value
    if value in ("right", "wrong"):
        return value == "right"
    return None


def _call_clean(
    where: str, call: Any, schemas: Mapping[str, Any], tools: Sequence[str]
) -> dict[str, Any] | None:
    """The corrected call of a wrong step, checked: a tool the trace offers (when it offers
    any), its arguments read from the editor's texts and checked against the tool's schema."""
    if call is None or call == {} or call == "":
        return None
    if not isinstance(call, Mapping):
        raise AnnotationError(f"{where}, call: expected a tool and its arguments", field="steps")
    name = str(call.get("name") or "").strip()
    if not name:
        raise AnnotationError(
            f"{where}, call: choose the tool it should have called", field="steps"
        )
    if tools and name not in tools:
        raise AnnotationError(
            f"{where}, call: {name} is not a tool of this trace ({', '.join(tools)})",
            field="steps",
        )
    schema = schemas.get(name)
    if "fields" in call:
        fields = call.get("fields")
        if not isinstance(fields, Mapping):
            raise AnnotationError(f"{where}, call: its fields must be an object", field="steps")
        texts = {str(key): "" if value is None else str(value) for key, value in fields.items()}
        if schema_fields(schema):
            arguments, unread = arguments_from_form(schema, texts)
            if unread:
                argument, message = next(iter(unread.items()))
                raise AnnotationError(
                    f"{where}, call {name}, argument {argument}: {message}", field="steps"
                )
        else:
            parsed, problem = arguments_from_json(texts.get("", ""))
            if problem or parsed is None:
                raise AnnotationError(f"{where}, call {name}, arguments {problem}", field="steps")
            arguments = parsed
    else:
        raw = call.get("arguments", {})
        if isinstance(raw, str):
            parsed, problem = arguments_from_json(raw)
            if problem or parsed is None:
                raise AnnotationError(f"{where}, call {name}, arguments {problem}", field="steps")
            raw = parsed
        arguments = raw
    if isinstance(schema, Mapping):
        errors = arguments_errors(schema, arguments, tools=tools)
        if errors:
            argument, message = next(iter(errors.items()))
            what = f"argument {argument}" if argument else "arguments"
            raise AnnotationError(f"{where}, call {name}, {what}: {message}", field="steps")
    elif not isinstance(arguments, Mapping):
        raise AnnotationError(
            f"{where}, call {name}: the arguments must be an object", field="steps"
        )
    return {"name": name, "arguments": _plain(arguments)}


def steps_clean(
    posted: Any, *, trace: Mapping[str, Any], errors: Sequence[StepError]
) -> list[dict[str, Any]]:
    """An annotator's review of every step of a stored trace, as the label stores it: per step
    in order, {"right": true} or {"right": false, "error": <type key>, "call": <the call that
    should have been made, or null>}.

    `posted` is the studio's JSON text (or the API's list): per step {"right": true | false
    (or "right" / "wrong"), "error": key, "call": {"name", "fields": {argument: text}} or
    {"name", "arguments": object or JSON text}}. Raises AnnotationError naming the step and the
    field: a step not answered, an error type not in the suite's taxonomy (or missing on a wrong
    step, or given on a right one), a call to a tool the trace does not offer, arguments the
    tool's schema refuses."""
    steps = list(trace.get("steps") or [])
    entries = _posted_list(posted)
    if len(entries) > len(steps):
        raise AnnotationError(
            f"the review has {len(entries)} steps; the trace has {len(steps)}", field="steps"
        )
    schemas = trace.get("schemas") or {}
    schemas = schemas if isinstance(schemas, Mapping) else {}
    tools = list(schemas)
    keys = [error.key for error in errors]
    cleaned: list[dict[str, Any]] = []
    for index, step in enumerate(steps):
        where = _where(index, step)
        entry = entries[index] if index < len(entries) else None
        if entry is None or entry == {}:
            raise AnnotationError(f"{where}: mark it right or wrong", field="steps")
        if not isinstance(entry, Mapping):
            raise AnnotationError(f"{where}: expected an object", field="steps")
        right = _mark(entry)
        if right is None:
            raise AnnotationError(f"{where}: mark it right or wrong", field="steps")
        error = str(entry.get("error") or "")
        if right:
            if error:
                raise AnnotationError(
                    f"{where}, error type: a right step has none (it is marked right)",
                    field="steps",
                )
            cleaned.append({"right": True})
            continue
        if not error:
            raise AnnotationError(
                f"{where}, error type: choose one for a wrong step", field="steps"
            )
        if error not in keys:
            raise AnnotationError(
                f"{where}, error type: {error} is not one of {', '.join(keys)}", field="steps"
            )
        call = _call_clean(where, entry.get("call"), schemas, tools)
        cleaned.append({"right": False, "error": error, "call": call})
    return cleaned
