"""Judge versions: what a judge is pinned to when it gives a verdict.

A version pins the judge's template (its kind and the fixed texts its prompts are made of,
benchmarks.kit.judging.prompt_texts), the model, the endpoint (its address and API style), the
generation parameters sent (the endpoint's defaults with the judge's over them), the verdict's
JSON schema, and the answer mode: "call" (a forced call of the verdict function) when the judge
asks for it and the endpoint's API style can declare tools, "text" otherwise. `pinned` computes
that state and `version_for` returns the judge's version of it, made (numbered 1, 2, ...) when
no version of the judge has that state: judging.judge_save calls it on every save,
services.endpoint_save for the judges of the endpoint saved, judge_launch before every job (a
template's text changed in the code is a new state there), and the import of published
verdicts for its judge. A state seen before is its
earlier version again; a version is never changed.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.db import transaction
from django.db.models import Max

from benchmarks.kit import judging as pure
from evaluation.models import Judge, JudgeVersion
from evaluation.work.styles import UnknownStyle, style_named


def answer_mode(judge: Judge) -> str:
    """The mode a judge answers in on its endpoint now (see the module docstring)."""
    endpoint = judge.endpoint
    if judge.answer_mode != Judge.AnswerMode.CALL or endpoint is None:
        return JudgeVersion.Mode.TEXT
    try:
        native = style_named(endpoint.style).native_tools
    except UnknownStyle:
        native = False
    return JudgeVersion.Mode.CALL if native else JudgeVersion.Mode.TEXT


def pinned(judge: Judge) -> dict[str, Any]:
    """The judge's state as a version pins it. Raises ValueError for a template this platform
    does not register."""
    template = pure.template_named(judge.template)
    endpoint = judge.endpoint
    params = {**(endpoint.default_params if endpoint else {}), **(judge.params or {})}
    return {
        "template": template.name,
        "kind": template.kind,
        "prompt": pure.prompt_texts(template),
        "model": endpoint.model if endpoint else "",
        "endpoint": (
            {"id": endpoint.pk, "base_url": endpoint.base_url, "style": endpoint.style}
            if endpoint
            else None
        ),
        "params": params,
        "schema": pure.verdict_schema(template),
        "mode": answer_mode(judge),
    }


def digest(state: dict[str, Any]) -> str:
    text = json.dumps(state, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def version_for(judge: Judge) -> JudgeVersion:
    """The judge's version of its current state, made when it has none (see the module
    docstring). The judge must be saved. Raises ValueError for an unregistered template."""
    state = pinned(judge)
    key = digest(state)
    with transaction.atomic():
        # One writer at a time per judge, so numbers follow each other.
        Judge.objects.select_for_update().filter(pk=judge.pk).first()
        found = JudgeVersion.objects.filter(judge=judge, digest=key).first()
        if found is not None:
            return found
        last = JudgeVersion.objects.filter(judge=judge).aggregate(n=Max("number"))["n"] or 0
        return JudgeVersion.objects.create(
            judge=judge,
            number=last + 1,
            mode=state["mode"],
            model=state["model"],
            endpoint=judge.endpoint,
            pinned=state,
            digest=key,
        )


def latest(judge: Judge) -> JudgeVersion | None:
    return judge.versions.order_by("-number").first()
