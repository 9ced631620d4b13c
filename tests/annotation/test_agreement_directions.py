"""Agreement knows which way a metric points: only per-item scores that are better
one way rate; a lower-is-better one is compared with its sign turned, in the correlations, the
pairwise signs and the Bradley-Terry leaderboard; counts, flags and names no task declares are
never offered, and asking for one says why. Figures are computed by hand."""

from __future__ import annotations

import csv
import io
import math
import uuid

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from scipy import stats as sp

from annotation import services
from annotation.agreement.data import (
    AgreementError,
    MetricInfo,
    _metric_info,
    available_raters,
    campaign_ratings,
)
from annotation.agreement.exports import label_csv_lines
from annotation.agreement.services import report_params, report_request
from annotation.assign import item_next
from annotation.models import AgreementReport, Campaign, Member
from benchmarks.kit.protocol import MetricSpec
from evaluation.models import Endpoint, Prediction, Run
from tests.factories import make_benchmark, make_sample, make_superuser, make_user, store_label

pytestmark = pytest.mark.django_db

# WTU-Eval R4 (general questions, tools offered): a tool call is the paper's error, so
# tool_errors is better lower. Per item: (A's tool_errors, B's), and the two annotators'
# votes (1: A better, 0: tie, -1: B better): the humans prefer the run that called no tool.
ITEMS = [
    ((1, 0), (-1, -1)),
    ((1, 0), (-1, 0)),
    ((1, 0), (-1, -1)),
    ((0, 1), (1, 1)),
    ((0, 0), (0, 1)),
    ((1, 1), (0, 0)),
]


def r4_campaign() -> tuple[Campaign, Run, Run]:
    benchmark = make_benchmark(name="wtu", suite="wtueval")
    endpoint = Endpoint.objects.create(name="e", base_url="http://127.0.0.1:9/v1", model="m")
    run_a, run_b = (
        Run.objects.create(
            benchmark=benchmark, task="R4", endpoint=endpoint, status=Run.Status.DONE, name=name
        )
        for name in ("calls tools", "answers alone")
    )
    for i, ((a, b), _votes) in enumerate(ITEMS):
        sample = make_sample(benchmark=benchmark, split="boolq", external_id=f"q{i}")
        for run, errors in ((run_a, a), (run_b, b)):
            Prediction.objects.create(
                run=run,
                sample=sample,
                position=i,
                status=Prediction.Status.DONE,
                output="Final Answer: true",
                # as score() leaves them, and a name from an older version of the suite
                scores={
                    "accuracy": 1.0 - errors,
                    "unparsed": 0.0,
                    "call_rate": float(errors),
                    "tool_errors": float(errors),
                    "legacy_penalty": 0.5,
                },
            )
    campaign = services.campaign_create(
        name="tool use on general questions", kind="pairwise", labels_per_item=2
    )
    services.items_from_runs(campaign=campaign, run_a=run_a, run_b=run_b)
    annotators = [make_user(username=f"judge{j}") for j in range(2)]
    services.members_add(campaign=campaign, users=annotators, role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=campaign)
    positions = dict(campaign.items.values_list("id", "position"))
    for j, user in enumerate(annotators):
        while (assignment := item_next(campaign=campaign, user=user)) is not None:
            votes = ITEMS[positions[assignment.item_id]][1]
            store_label(
                campaign=assignment.campaign,
                assignment_id=assignment.pk,
                user=user,
                answers={"better": votes[j]},
                token=uuid.uuid4(),
            )
    return campaign, run_a, run_b


def test_a_lower_is_better_metric_agrees_with_humans_who_prefer_the_lower_side() -> None:
    campaign, *_runs = r4_campaign()
    report = report_request(
        campaign, report_params(metrics=["tool_errors"], resamples=50), inline=True
    )
    assert report.status == AgreementReport.Status.DONE, report.error
    data = report.data
    (q,) = data["questions"]
    (metric,) = q["automatic"]
    assert metric["rater"] == "metric:tool_errors"
    assert (metric["direction"], metric["sign_turned"]) == ("lower", True)
    assert data["metrics"] == {"tool_errors": {"direction": "lower", "sign_turned": True}}
    # By hand. The metric's code is the sign of B's minus A's tool errors:
    #   c = [-1, -1, -1, 1, 0, 0]; the mean human vote h = [-1, -0.5, -1, 1, 0.5, 0].
    #   mean c = -1/3, mean h = -1/6; Sxy = sum(c*h) - 6 * (1/3)(1/6) = 3.5 - 1/3 = 19/6;
    #   Sxx = 4 - 6/9 = 10/3; Syy = 3.5 - 6/36 = 10/3; r = (19/6) / (10/3) = 0.95.
    # Compared as it is (higher taken as better), r would be -0.95.
    assert metric["pearson"]["value"] == pytest.approx(0.95, abs=1e-12)
    c = [-1, -1, -1, 1, 0, 0]
    h = [-1, -0.5, -1, 1, 0.5, 0]
    assert metric["spearman"]["value"] == pytest.approx(sp.spearmanr(c, h)[0], abs=1e-9)
    assert metric["kendall"]["value"] == pytest.approx(sp.kendalltau(c, h)[0], abs=1e-9)
    assert metric["spearman"]["value"] > 0 and metric["kendall"]["value"] > 0

    # Bradley-Terry: the metric's board ranks the run with fewer tool errors first, as the
    # humans' does. Metric votes: B wins items 0-2, A item 3, items 4-5 are ties (half each).
    (pairwise,) = data["pairwise"]
    board = pairwise["leaderboards"]["metric:tool_errors"]
    assert board["sign_turned"] is True
    rows = {row["name"]: row for row in board["runs"]}
    assert [row["name"] for row in board["runs"]] == ["answers alone", "calls tools"]
    assert rows["answers alone"]["wins"] == pytest.approx(4.0)
    assert rows["calls tools"]["wins"] == pytest.approx(2.0)
    gap = rows["answers alone"]["strength"]["value"] - rows["calls tools"]["strength"]["value"]
    assert gap == pytest.approx(math.log((4 + 0.01) / (2 + 0.01)), abs=1e-6)
    humans = pairwise["leaderboards"]["humans"]["runs"]
    assert humans[0]["name"] == "answers alone"

    # The labels CSV keeps the metric's own reading (the sign of A's minus B's) beside the
    # code it was compared with.
    params = report_params(metrics=["tool_errors"])
    labels = list(csv.DictReader(io.StringIO("".join(label_csv_lines(campaign, params)))))
    metric_rows = [r for r in labels if r["rater_kind"] == "metric"]
    by_item = {r["sample_external_id"]: (r["answer"], r["code"]) for r in metric_rows}
    assert by_item["q0"] == ("1", "-1") and by_item["q3"] == ("-1", "1")
    assert by_item["q4"] == ("0", "0")


def test_counts_flags_and_undeclared_names_are_never_offered_as_raters(client: Client) -> None:
    campaign, *_ = r4_campaign()
    available = available_raters(campaign)
    assert available["metrics"] == ["accuracy", "tool_errors"]
    assert available["lower_is_better"] == ["tool_errors"]
    assert set(available["not_raters"]) == {"unparsed", "call_rate", "legacy_penalty"}
    assert available["not_raters"]["unparsed"].startswith("a flag")
    assert "not declared by wtueval/R4" in available["not_raters"]["legacy_penalty"]

    # asking for one is an error that says why, everywhere
    for name, why in (("unparsed", "a flag"), ("legacy_penalty", "not declared")):
        with pytest.raises(AgreementError, match=f"metric '{name}' is {why}"):
            report_request(campaign, report_params(metrics=[name]), inline=True)
        with pytest.raises(AgreementError, match=why):
            campaign_ratings(campaign, metrics=[name])
    with pytest.raises(CommandError, match="only scores that are better one way"):
        call_command("agreement_report", "--campaign", str(campaign.pk), "--metric", "call_rate")

    client.force_login(make_superuser())
    listed = client.get("/api/agreement/").json()
    entry = next(c for c in listed if c["id"] == campaign.pk)
    assert entry["metrics"] == ["accuracy", "tool_errors"]
    assert entry["lower_is_better"] == ["tool_errors"]
    assert set(entry["not_raters"]) == {"unparsed", "call_rate", "legacy_penalty"}
    refused = client.get(f"/api/agreement/{campaign.pk}/", {"metric": "unparsed"})
    assert refused.status_code == 400
    assert "metric 'unparsed' is a flag" in refused.json()["detail"]
    assert "scores here: accuracy, tool_errors" in refused.json()["detail"]

    # the page's filter offers the two scores, marks the lower one and lists the rest apart
    url = f"/campaigns/{campaign.pk}/agreement/"
    page = client.get(url).content.decode()
    assert 'name="metric" value="tool_errors"' in page
    assert 'name="metric" value="accuracy"' in page
    for name in ("unparsed", "call_rate", "legacy_penalty"):
        assert f'name="metric" value="{name}"' not in page
        assert f"<code>{name}</code>" in page
    assert 'tool_errors <span class="muted">(lower is better)</span>' in page
    shown = client.get(url, {"metric": "tool_errors"}).content.decode()
    assert "lower is better, so it is compared with its sign turned" in shown
    assert "lower is better: sign turned" in shown
    refused_page = client.get(url, {"metric": "unparsed"}).content.decode()
    assert "metric &#x27;unparsed&#x27; is a flag" in refused_page


def test_a_name_the_runs_declare_differently_is_not_a_rater() -> None:
    higher = MetricSpec.score("correct")
    lower = MetricSpec.score("correct", "lower")
    info = _metric_info("correct", {"a/x": higher, "b/y": lower})
    assert not info.rater and "declared differently" in info.why_not
    assert _metric_info("correct", {"a/x": higher, "b/y": higher}) == MetricInfo(
        "correct", "score", "higher"
    )
    pointless = _metric_info("Top@1", {"a/x": MetricSpec.score("Top@1", None)})
    assert "neither side" in pointless.why_not
    count = _metric_info("pick_rank", {"a/x": MetricSpec.count("pick_rank")})
    assert (count.kind, count.why_not) == ("count", "a count, not a score of the answer")
    unknown = _metric_info("acc", {"a/x": higher, "a/gone": None})
    assert unknown.kind is None and "not declared by a/gone" in unknown.why_not


def test_a_report_made_before_a_direction_was_known_is_computed_again() -> None:
    campaign, *_ = r4_campaign()
    params = report_params(metrics=["tool_errors"], resamples=20)
    first = report_request(campaign, params, inline=True)
    # as stored by the version that compared every metric as higher-is-better
    older = first.fingerprint.rsplit("/", 1)[0]
    AgreementReport.objects.filter(pk=first.pk).update(fingerprint=older)
    again = report_request(campaign, params, inline=True)
    assert again.fingerprint.endswith("/tool_errors:lower")
    assert again.data["generated_at"] != first.data["generated_at"]
