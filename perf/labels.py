"""The rows of annotation_label as the perf scripts' fixtures COPY them (agreement_speed.py,
csv_speed.py): one current, submitted label per assignment, written without the services (a
million labels through them would take the whole run)."""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any

LABEL_COLUMNS = (
    "campaign_id, item_id, assignment_id, annotator_id, answers, note, token, is_current, "
    "time_ms, review, created_at"
)


def label_row(
    campaign_id: int,
    item_id: int,
    assignment_id: int,
    annotator_id: int,
    answers: dict[str, Any],
    time_ms: int,
    created_at: datetime,
) -> tuple[Any, ...]:
    """One label's values in LABEL_COLUMNS' order (numpy integers in the answers as ints)."""
    return (
        campaign_id,
        item_id,
        assignment_id,
        annotator_id,
        json.dumps(answers, default=int),
        "",
        str(uuid.uuid4()),
        True,
        time_ms,
        "",
        created_at,
    )
