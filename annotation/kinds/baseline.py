"""The human baseline (MetaTool's C.5): people answer the benchmark's own question (which tools,
if any, from the candidates shown) and their answers are scored as a run, like a model's."""

from __future__ import annotations

from typing import Any

from annotation.assign import AnnotationError
from annotation.kinds.base import CampaignKind
from annotation.sources import RUN, SPLIT
from benchmarks.models import Tool


def _choice_key(index: int) -> str:
    # 1..9, then letters (0 is "none").
    return str(index + 1) if index < 9 else "abcdefghijklmnopqrstuvwxyz"[index - 9]


class Baseline(CampaignKind):
    name = "baseline"
    label = "Human baseline"
    question_set = [
        {
            "key": "tools",
            "text": "Which tools would you use? (none, one or two)",
            "scale": "item_choices",
            "multiple": True,
            "min_choices": 0,
            "max_choices": 2,
            "required": False,
        }
    ]
    # The gold answer is what the annotator is asked: not shown.
    shows_reference = False
    sources = (SPLIT, RUN)
    build_help = (
        "One item per prediction of a run (the candidates it was shown), or per sample of a "
        "split whose samples carry candidate tools."
    )
    scored_as_runs = True

    def sample_item(self, sample: Any, split: str) -> dict[str, Any]:
        if not sample.candidate_tools:
            raise AnnotationError(
                f"sample {sample.pk} of split {split!r} offers no candidate tools; build "
                "a baseline from a run instead"
            )
        return {"sample": sample, "payload": {"choices": list(sample.candidate_tools)}}

    def item_view(self, item: Any, assignment: Any, view: dict[str, Any]) -> None:
        choices = [str(c) for c in item.payload.get("choices", [])]
        described = {
            t.name: t.description
            for t in Tool.objects.filter(benchmark_id=item.campaign.benchmark_id, name__in=choices)
        }
        view["choices"] = [
            {"value": name, "description": described.get(name, ""), "key": _choice_key(i)}
            for i, name in enumerate(choices)
        ]


KIND = Baseline()
