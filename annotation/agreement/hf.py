"""A campaign's labels as a Hugging Face dataset folder (config.hfdataset): one row per current
label (an item as one annotator answered it), in the labels CSV's order, with the item's keys
(annotation.agreement.data.ITEM_KEY_COLUMNS) and the answers as given. The one service the
`export_labels` command and the agreement page's download call.

What it shows is what the labels CSV shows to the same readers (READ_LABELS): a pairwise item
as its canonical runs (run_a, run_b) with the order the annotator was shown (shown_order), as
the CSV does; annotators never reach it. The judges' and metrics' verdicts the labels CSV can
append are not in it: it holds the humans' labels.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annotation.agreement.data import ITEM_KEY_COLUMNS, item_keys, label_rows
from annotation.models import Campaign, Label
from config.errors import ApplicationError
from config.hfdataset import (
    CardText,
    Column,
    DatasetWriter,
    HFDatasetError,
    exported_at,
    platform_version,
)

SPLIT = "labels"
KEY_KINDS = {
    "item_id": ("int64", "the item's id on the platform"),
    "item_position": ("int64", "the item's place in the campaign"),
    "sample_id": ("int64", "the sample judged (the benchmark export's sample_id), if any"),
    "sample_external_id": ("string", "that sample's id in the benchmark's own files"),
    "tool": ("string", "the tool judged, if the item is a tool"),
    "prediction_a": ("int64", "the prediction judged (side A of a pair), if any"),
    "prediction_b": ("int64", "side B's prediction of a pair"),
    "run_a": ("int64", "the run of prediction_a (a pair's canonical A)"),
    "run_b": ("int64", "the run of prediction_b"),
    "api": ("json", "the API call and responses an API-response item shows"),
}
LEAD_COLUMNS = (
    Column("campaign_id", "int64", "the campaign's id on the platform"),
    *(Column(name, *KEY_KINDS[name]) for name in ITEM_KEY_COLUMNS),
    Column("annotator", "string", "who labelled it (their user name)"),
)
TAIL_COLUMNS = (
    Column("answers", "json", "every answer of the label, by question key, as given"),
    Column("shown_order", "string", "a pair's order as shown (AB or BA); empty otherwise"),
    Column("time_ms", "int64", "time spent on the item, in milliseconds"),
    Column("labelled_at", "string", "when, ISO 8601 in UTC"),
)


class LabelExportRefused(ApplicationError):
    """A campaign whose labels cannot be written as a dataset (it has none)."""


@dataclass(frozen=True)
class HFLabelExport:
    campaign: int
    labels: int
    questions: list[str]


def labels_folder_name(campaign: Campaign) -> str:
    return f"campaign-{campaign.pk}-labels-hf"


def labels_hf_export(
    *,
    campaign: Campaign,
    folder: Path,
    license: str = "other",
    progress: Callable[[int], None] | None = None,
) -> HFLabelExport:
    """Write the campaign's current labels as a dataset folder at `folder`, one split
    `labels`: the item's keys, the annotator, one `answer:KEY` column per question (its
    answer's JSON text) and the whole answers. LabelExportRefused for a campaign without
    labels; `progress(n)` is called as labels are written."""
    if not Label.objects.filter(campaign=campaign, is_current=True).exists():
        raise LabelExportRefused(
            f"campaign {campaign.pk} has no labels yet: nothing to export", field="campaign"
        )
    questions = list(campaign.questions.order_by("id").values_list("key", "text"))
    columns = (
        *LEAD_COLUMNS,
        *(Column(f"answer:{key}", "json", f"the answer to: {text}") for key, text in questions),
        *TAIL_COLUMNS,
    )
    writer = DatasetWriter(folder, columns)
    keys = item_keys(campaign)
    count = 0
    try:
        for item_id, username, answers, shown_order, time_ms, created_at in label_rows(campaign):
            item = keys.get(item_id)
            if item is None:
                continue
            given = answers or {}
            writer.add(
                SPLIT,
                (
                    campaign.pk,
                    *item,
                    username,
                    *(given.get(key) for key, _text in questions),
                    answers,
                    shown_order,
                    time_ms,
                    created_at.isoformat(),
                ),
            )
            count += 1
            if progress:
                progress(1)
        writer.close(
            CardText(
                pretty_name=f"Labels of campaign {campaign.pk}: {campaign.name}",
                license=license,
                summary=(
                    f"The current labels of the campaign {campaign.name} (kind "
                    f"`{campaign.kind}`): one row per item as one annotator labelled it, with "
                    "what identifies the item outside the platform (a sample, a run's "
                    "prediction, a pair of them, a tool, an API response)."
                ),
                provenance=_provenance(campaign, questions),
                notes=(
                    "A pair's runs are its canonical order (run_a, run_b); shown_order says "
                    "which side the annotator saw first.",
                    "The license is yours to set (`other` until then)."
                    if license == "other"
                    else "",
                ),
            )
        )
    except HFDatasetError as exc:
        raise LabelExportRefused(f"campaign {campaign.pk}: {exc}", field="campaign") from None
    return HFLabelExport(campaign=campaign.pk, labels=count, questions=[k for k, _ in questions])


def _provenance(campaign: Campaign, questions: list[tuple[str, str]]) -> dict[str, Any]:
    return {
        **platform_version(),
        "kind": "campaign labels",
        "campaign": campaign.pk,
        "campaign_name": campaign.name,
        "campaign_kind": campaign.kind,
        "benchmark": campaign.benchmark.name if campaign.benchmark_id else None,
        "questions": [{"key": key, "text": text} for key, text in questions],
        "labels_per_item": campaign.labels_per_item,
        "exported_at": exported_at(),
    }
