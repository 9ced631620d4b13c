"""The agreement report is pure: it imports no Django and makes a report from ratings built by
hand, as annotation.agreement.data builds them from the database."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from annotation.agreement.ratings import CampaignRatings, QuestionRatings, Rater
from annotation.agreement.report import campaign_report

ROOT = Path(__file__).resolve().parents[2]


def test_the_report_imports_without_django_settings() -> None:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    code = (
        "import sys\n"
        "import annotation.agreement.report\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('django', 'rest_framework', 'evaluation', 'benchmarks'))\n"
        "assert not loaded, loaded\n"
        "assert 'annotation.models' not in sys.modules\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_a_report_from_hand_built_ratings() -> None:
    # two annotators on four yes/no items, disagreeing on the last
    humans = [Rater("human", "ann"), Rater("human", "bob")]
    values = np.array([[0, 0], [1, 1], [0, 0], [1, 0]], dtype=float)
    question = QuestionRatings(
        key="right",
        text="Is it right?",
        scale="categories",
        numeric=False,
        level="nominal",
        labels={0.0: "yes", 1.0: "no"},
        raters=humans,
        values=values,
    )
    ratings = CampaignRatings(
        campaign_id=1,
        campaign_name="by hand",
        kind="toy",
        items=[1, 2, 3, 4],
        questions=[question],
        humans=humans,
    )
    report = campaign_report(ratings, resamples=10)
    (pair,) = report["questions"][0]["pairs"]
    assert pair["stats"]["agreement"]["value"] == 0.75
    assert "turing" not in report and "pairwise" not in report
