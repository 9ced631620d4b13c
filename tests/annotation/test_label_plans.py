"""The labels CSV, its open-set codes and the agreement report's label rows read each label's
item, annotator, assignment, sample, tool and predictions by primary key, whatever the
statistics say: with the statistics stale (tables analysed with few live rows in many pages)
and with the planner's worst choices (no hash or merge join), no nested loop of their plans
has an inner side that reads a whole table (tests/plans.py)."""

from __future__ import annotations

import pytest

from annotation.agreement.data import LABEL_ROWS_SQL, question_coders
from annotation.agreement.exports import OPEN_SET_ANSWERS_SQL, human_label_query, open_set_codes
from tests.annotation.test_agreement_report import pairwise_campaign
from tests.plans import explain, leave_stale_statistics, quadratic_joins, worst_choices

pytestmark = pytest.mark.django_db

ANNOTATION_TABLES = ("annotation_label", "annotation_item", "annotation_assignment")


def test_the_label_reads_probe_by_primary_key_whatever_the_statistics() -> None:
    # given: statistics taken before the campaign existed, in tables with many dead pages
    leave_stale_statistics(20_000, analyze=ANNOTATION_TABLES)
    campaign, _run_a, _run_b, _labels = pairwise_campaign()
    coders = question_coders(campaign)
    reads = {
        "labels CSV": (human_label_query(campaign, coders, open_set_codes(campaign, coders)), None),
        "label rows": (LABEL_ROWS_SQL, [campaign.pk]),
        "open-set answers": (OPEN_SET_ANSWERS_SQL, [campaign.pk, ["q"]]),
    }
    for name, (query, params) in reads.items():
        # then
        assert quadratic_joins(explain(query, params)) == [], name
        with worst_choices():
            assert quadratic_joins(explain(query, params)) == [], name
