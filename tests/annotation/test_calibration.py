"""A judge version's calibration report from judgments and labels in the database, against
figures computed by hand; the loop's choice of items; its campaign blind to the judge; the
report's page, CSV and form; the admin's form and the command calling the same service."""

from __future__ import annotations

import csv
import io
import uuid
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from annotation import services
from annotation.assign import item_next
from annotation.calibration import services as loop
from annotation.calibration.report import version_report
from annotation.errors import AnnotationError
from annotation.models import Campaign, Member
from evaluation.judge_versions import version_for
from evaluation.models import Endpoint, Judge, JudgeJob, JudgeVersion, Judgment, Prediction, Run
from tests.annotation.test_blind import walk_as_annotator
from tests.factories import make_benchmark, make_researcher, make_sample, make_user, store_label

pytestmark = pytest.mark.django_db

# Six items. Per item, the judge's canonical verdicts per repeat as (shown AB, shown BA):
# 1 A better, 0 tie, -1 B better. Combined per repeat (a win only when both orders agree):
#   0: A A A -> A, confidence 1      3: B B B -> B, confidence 1
#   1: A A B -> A, confidence 2/3    4: A A A -> A, confidence 1
#   2: B B A -> B, confidence 2/3    5: tie tie tie -> tie, confidence 1 (its third repeat's
#                                       orders disagree, each for the answer shown first)
JUDGE = [
    [(1, 1)] * 3,
    [(1, 1), (1, 1), (-1, -1)],
    [(-1, -1), (-1, -1), (1, 1)],
    [(-1, -1)] * 3,
    [(1, 1)] * 3,
    [(0, 0), (0, 0), (1, -1)],
]
VERDICT = [1, 1, -1, -1, 1, 0]
# The humans' majority (three annotators, ann2 dissents on item 0 with a tie):
MAJORITY = [1, 1, 1, -1, -1, 0]
# A's length minus B's: +5 on items 0, 1, 4; -5 on 2, 3; 0 on 5.
LONGER = [5, 5, -5, -5, 5, 0]
SECRET = "JUDGE-SECRET-REASONING"


def judged_world(*, labels: bool = True) -> tuple[JudgeVersion, Campaign, list[Any]]:
    benchmark = make_benchmark(name="calibrated", suite="generic")
    endpoint = Endpoint.objects.create(name="e", base_url="http://127.0.0.1:9/v1", model="m")
    run_a, run_b = (
        Run.objects.create(
            benchmark=benchmark, task="answer", endpoint=endpoint, status=Run.Status.DONE, name=n
        )
        for n in ("model A", "model B")
    )
    pairs = []
    for i in range(6):
        sample = make_sample(benchmark=benchmark, external_id=f"q{i}")
        base = "x" * 10
        a = Prediction.objects.create(
            run=run_a,
            sample=sample,
            position=i,
            status=Prediction.Status.DONE,
            output=f"A{i} " + base + "y" * max(LONGER[i], 0),
        )
        b = Prediction.objects.create(
            run=run_b,
            sample=sample,
            position=i,
            status=Prediction.Status.DONE,
            output=f"B{i} " + base + "y" * max(-LONGER[i], 0),
        )
        pairs.append((sample, a, b))
    judge = Judge.objects.create(
        name="calibrated judge", template="generic.pairwise", kind="pairwise", endpoint=endpoint
    )
    version = version_for(judge)
    job = JudgeJob.objects.create(
        judge=judge, run=run_a, against=run_b, repeats=3, version=version, status="done"
    )
    position = 0
    for i, (sample, a, b) in enumerate(pairs):
        for repeat, orders in enumerate(JUDGE[i]):
            for order, value in zip(("AB", "BA"), orders, strict=True):
                Judgment.objects.create(
                    job=job,
                    version=version,
                    sample=sample,
                    prediction=a,
                    other=b,
                    repeat=repeat,
                    order=order,
                    position=position,
                    status=Judgment.Status.DONE,
                    value=float(value),
                    label={1: "A", 0: "tie", -1: "B"}[value],
                    values={"preferred": 0},
                    reasoning=SECRET,
                    raw=f'{{"better": "1", "reason": "{SECRET}"}}',
                )
                position += 1
    campaign = services.campaign_create(name="humans on A and B", kind="pairwise")
    services.items_from_runs(campaign=campaign, run_a=run_a, run_b=run_b)
    annotators = [make_user(username=f"ann{j}") for j in range(3)]
    services.members_add(campaign=campaign, users=annotators, role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=campaign)
    if labels:
        label_all(campaign, annotators, lambda i, j: 0 if (i, j) == (0, 2) else MAJORITY[i])
    return version, campaign, pairs


def label_all(campaign: Campaign, annotators: list[Any], answer: Any) -> None:
    """Every annotator labels every item they are given (stored as a submit stores them)."""
    positions = dict(campaign.items.values_list("id", "position"))
    for j, user in enumerate(annotators):
        while (assignment := item_next(campaign=campaign, user=user)) is not None:
            store_label(
                campaign=assignment.campaign,
                assignment_id=assignment.pk,
                user=user,
                answers={"better": answer(positions[assignment.item_id], j)},
                token=uuid.uuid4(),
                time_ms=1000,
            )


def the_question(report: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    (task,) = report["tasks"]
    (question,) = task["questions"]
    return task, question


def test_the_report_gives_the_figures_computed_by_hand() -> None:
    version, campaign, _ = judged_world()
    report = version_report(version, resamples=300, seed=3)
    task, q = the_question(report)
    assert task["task"] == "calibrated · answer" and task["units"] == 6
    assert q["key"] == "better" and q["campaigns"] == [{"id": campaign.pk, "name": campaign.name}]
    # accuracy: the verdicts [A, A, B, B, A, tie] against the majority [A, A, A, B, B, tie]
    # agree on items 0, 1, 3, 5: 4/6
    assert q["accuracy"]["value"] == pytest.approx(4 / 6)
    assert q["accuracy"]["n"] == 6
    assert q["accuracy"]["low"] <= 4 / 6 <= q["accuracy"]["high"]
    # kappa: judge marginals A 3, B 2, tie 1; the majority's the same: chance agreement
    # (9 + 4 + 1) / 36 = 14/36; kappa = (24/36 - 14/36) / (1 - 14/36) = 10/22
    assert q["cohen_kappa"]["value"] == pytest.approx(10 / 22)
    # Pearson against the mean human answer (item 0: (1 + 1 + 0) / 3)
    assert q["pearson"]["value"] is not None
    # ECE, ten bins: (0.9, 1] holds items 0, 3, 4, 5 (confidence 1; right on 0, 3, 5: accuracy
    # 3/4, gap 1/4, weight 4/6); (0.6, 0.7] holds items 1, 2 (confidence 2/3; right on 1:
    # accuracy 1/2, gap 1/6, weight 2/6). ECE = 4/6 x 1/4 + 2/6 x 1/6 = 1/6 + 1/18 = 2/9
    assert q["ece"]["value"] == pytest.approx(2 / 9)
    assert q["ece"]["n"] == 6
    bins = {b["high"]: b for b in q["calibration_bins"] if b["n"]}
    assert set(bins) == {0.7, 1.0}
    assert bins[1.0]["n"] == 4 and bins[1.0]["accuracy"] == pytest.approx(3 / 4)
    assert bins[0.7]["confidence"] == pytest.approx(2 / 3) and bins[0.7]["accuracy"] == 0.5
    assert q["disagreements"] == 2 and q["compared"] == 6
    # position: 36 judgments. Consistent repeats with A better: 9 (item 0: 3, 1: 2, 2: 1,
    # 4: 3), each shown AB (first) and BA (second); with B better: 6 (item 1: 1, 2: 2, 3: 3),
    # second then first; ties: 2 repeats, 4 judgments; item 5's last repeat chose the first
    # shown twice. First 9 + 6 + 2 = 17, tie 4, second 9 + 6 = 15; consistency 17/18.
    position = task["position"]
    assert position["judgments"] == 36
    assert position["shares"]["first shown"]["value"] == pytest.approx(17 / 36)
    assert position["shares"]["tie"]["value"] == pytest.approx(4 / 36)
    assert position["shares"]["second shown"]["value"] == pytest.approx(15 / 36)
    assert position["consistency"]["value"] == pytest.approx(17 / 18)
    # length: among decisive verdicts on answers of different lengths (items 0-4), the longer
    # won every one of the judge's (A on +5, B on -5) and 3 of 5 of the humans' (not 2, 4)
    assert q["length"]["judge_longer_wins"]["value"] == pytest.approx(1.0)
    assert q["length"]["humans_longer_wins"]["value"] == pytest.approx(3 / 5)
    assert q["length"]["judge_longer_wins"]["n"] == 5


def test_labels_on_the_pair_reversed_are_read_in_the_judges_order() -> None:
    # given humans who compared B with A (the campaign's A is the judge's B)
    version, _campaign, pairs = judged_world(labels=False)
    run_a, run_b = pairs[0][1].run, pairs[0][2].run
    reversed_campaign = services.campaign_create(name="B against A", kind="pairwise")
    services.items_from_runs(campaign=reversed_campaign, run_a=run_b, run_b=run_a)
    annotator = make_user(username="reversed")
    services.members_add(campaign=reversed_campaign, users=[annotator], role="annotator")
    services.campaign_activate(campaign=reversed_campaign)
    # each says its own A (the judge's B) is better: the judge's B better, -1
    label_all(reversed_campaign, [annotator], lambda i, j: 1)
    _task, q = the_question(version_report(version, resamples=50))
    humans = [item["human_majority"] for item in q["items"]]
    assert humans == [-1.0] * 6
    # the judge said B on items 2 and 3
    assert q["accuracy"]["value"] == pytest.approx(2 / 6)


def test_the_loop_chooses_disagreements_surest_first_and_least_sure_items() -> None:
    version, _campaign, pairs = judged_world()
    # disagreements: items 4 (confidence 1) then 2 (2/3)
    kind, chosen = loop.select_items(version, selection=loop.DISAGREEMENTS, size=5)
    assert kind.name == "pairwise"
    assert [c[1] for c in chosen] == [pairs[4][1].pk, pairs[2][1].pk]
    assert chosen[0] == (pairs[4][0].pk, pairs[4][1].pk, pairs[4][2].pk)
    # least sure: items 1 and 2 (2/3), then the surest in the report's order
    _kind, chosen = loop.select_items(version, selection=loop.LEAST_SURE, size=3)
    assert [c[1] for c in chosen] == [pairs[1][1].pk, pairs[2][1].pk, pairs[0][1].pk]


def test_the_loop_refuses_what_it_cannot_build_with_the_reason() -> None:
    version, _campaign, _pairs = judged_world(labels=False)
    with pytest.raises(AnnotationError, match="disagree on no item yet"):
        loop.select_items(version, selection=loop.DISAGREEMENTS, size=5)
    with pytest.raises(AnnotationError, match="choose the items"):
        loop.select_items(version, selection="everything", size=5)
    with pytest.raises(AnnotationError, match="size must be between"):
        loop.select_items(version, selection=loop.LEAST_SURE, size=0)
    with pytest.raises(AnnotationError, match="judged no item of nowhere"):
        loop.select_items(version, selection=loop.LEAST_SURE, size=1, task="nowhere")
    # a judge of single answers when no registered kind takes them (answer_check unregistered)
    from annotation.kinds import kinds, register, unregister

    single = Judge.objects.create(
        name="pass judge", template="stabletoolbench.pass", kind="pass", endpoint=None
    )
    registered = list(kinds().values())
    unregister("answer_check")
    try:
        with pytest.raises(AnnotationError, match="no campaign kind asks humans about one answer"):
            loop.select_items(version_for(single), selection=loop.LEAST_SURE, size=1)
    finally:  # the registry as it was, in its order
        for kind in registered:
            unregister(kind.name)
        for kind in registered:
            register(kind)


def test_the_loops_campaign_is_blind_to_the_judge(client: Client) -> None:
    # given a campaign of the least sure items
    version, _campaign, _pairs = judged_world()
    campaign = loop.calibration_campaign_create(
        version=version, selection=loop.LEAST_SURE, size=6, name="Back to humans"
    )
    assert campaign.kind == "pairwise" and campaign.status == Campaign.Status.DRAFT
    assert campaign.items.count() == 6
    # the items hold the two answers and nothing of the judge
    for item in campaign.items.all():
        assert not item.payload and not item.gold
    assert SECRET not in campaign.guidelines and "judge" not in campaign.guidelines.lower()
    annotator = make_user(username="blind")
    services.members_add(campaign=campaign, users=[annotator], role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=campaign)
    client.force_login(annotator)
    # when the annotator works through it by every way the studio offers
    seen = walk_as_annotator(client, campaign)
    # then no page or API answer carries the judge's verdict, reasoning, answer or name
    for what, body in seen.pages.items():
        for secret in (SECRET, "calibrated judge", "Calibration of", '"better": "1"'):
            assert secret not in body, (what, secret)
        assert "judg" not in body.lower().replace("judged", ""), what


def test_the_page_the_csv_and_the_form_for_a_researcher(client: Client) -> None:
    version, _campaign, pairs = judged_world()
    client.force_login(make_researcher())
    base = f"/judges/{version.judge_id}/v{version.number}/calibration"
    # the judge's page links each version's report
    assert f'href="{base}/"' in client.get(f"/judges/{version.judge_id}/").content.decode()
    page = client.get(f"{base}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Reliability diagram" in html and "<svg" in html
    # names researchers and imports gave are escaped, in the tables and in the charts
    Run.objects.filter(pk__in=[pairs[0][1].run_id, pairs[0][2].run_id]).update(task="<b>answer</b>")
    hostile = client.get(f"{base}/").content.decode()
    assert "<b>answer</b>" not in hostile and "&lt;b&gt;answer&lt;/b&gt;" in hostile
    assert "Across the judge" in html and "Build the campaign" in html
    # the two disagreements, named by their samples, with both sides' verdicts
    assert "The 2 items where the judge and the human majority disagree" in html
    assert (
        '<th scope="row">q4</th><td>A better</td><td class="num">1.00</td><td>B better</td>' in html
    )
    rows = list(csv.DictReader(io.StringIO(b"".join(client.get(f"{base}.csv")).decode())))
    figures = {(r["statistic"], r["version"]): r for r in rows}
    assert float(figures[("ece", "1")]["value"]) == pytest.approx(2 / 9)
    assert float(figures[("accuracy", "1")]["value"]) == pytest.approx(4 / 6)
    assert float(figures[("trend ece", "1")]["value"]) == pytest.approx(2 / 9)
    assert float(figures[("share first shown", "1")]["value"]) == pytest.approx(17 / 36)
    # the form: a bad size is refused on the page, nothing built
    refused = client.post(f"{base}/campaign/", {"selection": "disagreements", "size": "x"})
    assert refused.status_code == 400 and "size" in refused.content.decode()
    assert not Campaign.objects.filter(name__startswith="Calibration").exists()
    built = client.post(f"{base}/campaign/", {"selection": "disagreements", "size": "1"})
    campaign = Campaign.objects.get(name__startswith="Calibration of calibrated judge v1")
    assert built.status_code == 302 and built["Location"].endswith(
        f"/campaigns/{campaign.pk}/setup/members/"
    )
    assert list(campaign.items.values_list("prediction_id", flat=True)) == [pairs[4][1].pk]


def test_the_command_and_the_admin_build_through_the_same_service(client: Client) -> None:
    version, _campaign, pairs = judged_world()
    out = io.StringIO()
    call_command(
        "calibration_campaign",
        "--judge",
        version.judge.name,
        "--judge-version",
        str(version.number),
        "--selection",
        "disagreements",
        "--size",
        "2",
        "--name",
        "from the command",
        stdout=out,
    )
    campaign = Campaign.objects.get(name="from the command")
    assert list(campaign.items.order_by("position").values_list("prediction_id", flat=True)) == [
        pairs[4][1].pk,
        pairs[2][1].pk,
    ]
    assert f"Campaign {campaign.pk}" in out.getvalue()
    with pytest.raises(CommandError, match="choose the items"):
        call_command(
            "calibration_campaign", "--judge", version.judge.name, "--selection", "x", "--size", "1"
        )
    from tests.factories import make_superuser

    client.force_login(make_superuser())
    form = client.get("/admin/annotation/campaign/calibrate/")
    assert form.status_code == 200
    posted = client.post(
        "/admin/annotation/campaign/calibrate/",
        {"version": version.pk, "selection": "least_sure", "size": "3", "name": "from the admin"},
    )
    assert posted.status_code == 302, posted.content.decode()[:2000]
    assert Campaign.objects.get(name="from the admin").items.count() == 3


def test_a_pass_judge_meets_humans_on_single_answers() -> None:
    # given a pass judge's verdicts on four answers, three repeats each, and humans who said
    # Solved or Unsolved of the same answers in a campaign of their own questions
    from annotation.setup import questions_save

    benchmark = make_benchmark(name="passes", suite="generic")
    endpoint = Endpoint.objects.create(name="e", base_url="http://127.0.0.1:9/v1", model="m")
    run = Run.objects.create(
        benchmark=benchmark, task="answer", endpoint=endpoint, status=Run.Status.DONE
    )
    predictions = [
        Prediction.objects.create(
            run=run,
            sample=make_sample(benchmark=benchmark, candidate_tools=["t"]),
            position=i,
            status=Prediction.Status.DONE,
            output="x" * (10 * (i + 1)),
            context={"candidates": ["t"]},
        )
        for i in range(4)
    ]
    judge = Judge.objects.create(
        name="pass judge", template="stabletoolbench.pass", kind="pass", endpoint=endpoint
    )
    version = version_for(judge)
    job = JudgeJob.objects.create(judge=judge, run=run, repeats=3, version=version, status="done")
    # 0: Solved x3 -> Solved (1); 1: Solved, Solved, Unsolved -> Solved (2/3); 2: Unsolved x3
    # -> Unsolved (1); 3: Unsure, Unsure, Solved: Unsure names no choice of the question, so
    # only the Solved repeat is read -> Solved (1)
    verdicts = [
        ["Solved"] * 3,
        ["Solved", "Solved", "Unsolved"],
        ["Unsolved"] * 3,
        ["Unsure", "Unsure", "Solved"],
    ]
    value = {"Solved": 1.0, "Unsolved": 0.0, "Unsure": 0.5}
    for i, labels in enumerate(verdicts):
        for repeat, label in enumerate(labels):
            Judgment.objects.create(
                job=job,
                version=version,
                sample=predictions[i].sample,
                prediction=predictions[i],
                repeat=repeat,
                position=4 * repeat + i,
                status=Judgment.Status.DONE,
                value=value[label],
                label=label,
                values={"label": label},
            )
    campaign = services.campaign_create(name="solved or not", kind="baseline")
    choices = [{"value": "Solved", "label": "Solved"}, {"value": "Unsolved", "label": "Unsolved"}]
    questions_save(
        campaign=campaign,
        questions=[
            {"key": "status", "text": "Is it solved?", "scale": "categories", "choices": choices}
        ],
    )
    services.items_from_run(campaign=campaign, run=run)
    annotator = make_user(username="single")
    services.members_add(campaign=campaign, users=[annotator], role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=campaign)
    humans = ["Solved", "Unsolved", "Unsolved", "Solved"]
    positions = dict(campaign.items.values_list("id", "position"))
    while (assignment := item_next(campaign=campaign, user=annotator)) is not None:
        store_label(
            campaign=campaign,
            assignment_id=assignment.pk,
            user=annotator,
            answers={"status": humans[positions[assignment.item_id]]},
            token=uuid.uuid4(),
            time_ms=1000,
        )
    # when
    task, q = the_question(version_report(version, resamples=100))
    # then: right on 0, 2, 3 (3/4); ECE: (0.9, 1] holds 0, 2, 3, all right (gap 0, weight
    # 3/4); (0.6, 0.7] holds item 1, confidence 2/3, wrong (gap 2/3, weight 1/4): 1/6
    assert task["position"] is None
    assert q["key"] == "status"
    assert [item["judge"] for item in q["items"]] == [0.0, 0.0, 1.0, 0.0]  # choice positions
    assert q["accuracy"]["value"] == pytest.approx(3 / 4)
    assert q["ece"]["value"] == pytest.approx(1 / 6)
    assert q["pearson"] is None and "judge_longer_wins" not in q["length"]
    # and the loop builds an answer check of the judge's least sure item (1: Solved by 2 of 3
    # repeats), asking the judge's own labels and showing nothing of its verdict
    campaign = loop.calibration_campaign_create(version=version, selection=loop.LEAST_SURE, size=1)
    assert campaign.kind == "answer_check"
    assert [q.key for q in campaign.questions.all()] == ["label"]
    assert [c["value"] for c in campaign.questions.get().choices] == [
        "Solved",
        "Unsure",
        "Unsolved",
    ]
    assert list(campaign.items.values_list("prediction_id", flat=True)) == [predictions[1].pk]
    checker = make_user(username="checker")
    services.members_add(campaign=campaign, users=[checker], role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=campaign)
    assignment = item_next(campaign=campaign, user=checker)
    store_label(
        campaign=campaign,
        assignment_id=assignment.pk,
        user=checker,
        answers={"label": "Unsolved"},
        token=uuid.uuid4(),
        time_ms=1000,
    )
    # then the report reads the new question: the judge said Solved where the human said
    # Unsolved, the one item the loop may now give as a disagreement
    report = version_report(version, resamples=100)
    label = next(q for q in report["tasks"][0]["questions"] if q["key"] == "label")
    assert label["accuracy"]["value"] == 0.0
    _kind, chosen = loop.select_items(version, selection=loop.DISAGREEMENTS, size=5)
    assert chosen == [(predictions[1].sample_id, predictions[1].pk, None)]
    client = Client()
    client.force_login(make_researcher())
    page = client.get(f"/judges/{judge.pk}/v{version.number}/calibration/").content.decode()
    assert "Build the campaign" in page
    # a judge's page: the site's navigation marks Judges, not Annotate
    assert 'aria-current="page">Judges<' in page and 'aria-current="page">Annotate<' not in page


def test_a_score_judge_s_loop_asks_its_dimensions_within_its_scale() -> None:
    # given a pointwise judge whose pinned schema scores two dimensions from 1 to 5
    from annotation.kinds import kind_named

    judge = Judge(name="scores", template="x", kind="pointwise")
    schema = {
        "type": "object",
        "properties": {
            "reason": {"type": "string"},
            "fluency": {"type": "number", "minimum": 1, "maximum": 5},
            "accuracy": {"type": "number", "minimum": 1, "maximum": 5},
        },
    }
    version = JudgeVersion(judge=judge, number=1, pinned={"schema": schema})
    # when
    questions = loop.loop_questions(version, kind_named("answer_check"))
    # then one ordinal question per dimension, its choices the scale's integers
    assert [(q["key"], q["scale"]) for q in questions] == [
        ("fluency", "ordinal"),
        ("accuracy", "ordinal"),
    ]
    assert [c["value"] for c in questions[0]["choices"]] == [1, 2, 3, 4, 5]
    # and a judge of other labels is asked its own labels
    labels = {"properties": {"label": {"type": "string", "enum": ["Solvable", "Unsolvable"]}}}
    other = JudgeVersion(judge=judge, number=2, pinned={"schema": labels})
    (question,) = loop.loop_questions(other, kind_named("answer_check"))
    assert [c["value"] for c in question["choices"]] == ["Solvable", "Unsolvable"]


def test_the_trend_lists_every_version_in_order() -> None:
    # given version 1 as above, and a version 2 (the judge's parameters changed) that judged
    # the same pairs and agrees with the human majority on every item
    from annotation.calibration.report import judge_trend

    version, _campaign, pairs = judged_world()
    judge = version.judge
    judge.params = {"temperature": 0.5}
    judge.save()
    second = version_for(judge)
    assert second.number == 2
    job = JudgeJob.objects.create(
        judge=judge, run=pairs[0][1].run, against=pairs[0][2].run, version=second, repeats=1
    )
    for i, (sample, a, b) in enumerate(pairs):
        for k, order in enumerate(("AB", "BA")):
            Judgment.objects.create(
                job=job,
                version=second,
                sample=sample,
                prediction=a,
                other=b,
                order=order,
                position=2 * i + k,
                status=Judgment.Status.DONE,
                value=float(MAJORITY[i]),
            )
    # when
    trend = judge_trend(second, resamples=50)
    # then one row (the task's question) with both versions, in order
    assert trend["versions"] == [1, 2]
    (row,) = trend["rows"]
    assert list(row["by_version"]) == [1, 2]
    assert row["by_version"][1]["accuracy"]["value"] == pytest.approx(4 / 6)
    assert row["by_version"][2]["accuracy"]["value"] == 1.0
    # one repeat each, all right: confidence 1, accuracy 1, no calibration error
    assert row["by_version"][2]["ece"]["value"] == 0.0
    client = Client()
    client.force_login(make_researcher())
    html = client.get(f"/judges/{judge.pk}/v2/calibration/").content.decode()
    assert ">v1</th>" in html and ">v2</th>" in html


def test_disagreements_are_found_on_a_pairwise_question_of_another_key() -> None:
    from annotation.kinds.pairwise import PAIRWISE_CHOICES
    from annotation.setup import questions_save

    version, _campaign, pairs = judged_world(labels=False)
    campaign = services.campaign_create(name="own question", kind="pairwise")
    questions_save(
        campaign=campaign,
        questions=[
            {"key": "winner", "text": "Which?", "scale": "pairwise", "choices": PAIRWISE_CHOICES}
        ],
    )
    services.items_from_runs(campaign=campaign, run_a=pairs[0][1].run, run_b=pairs[0][2].run)
    annotator = make_user(username="own")
    services.members_add(campaign=campaign, users=[annotator], role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=campaign)
    positions = dict(campaign.items.values_list("id", "position"))
    while (assignment := item_next(campaign=campaign, user=annotator)) is not None:
        store_label(
            campaign=campaign,
            assignment_id=assignment.pk,
            user=annotator,
            answers={"winner": MAJORITY[positions[assignment.item_id]]},
            token=uuid.uuid4(),
            time_ms=1000,
        )
    _kind, chosen = loop.select_items(version, selection=loop.DISAGREEMENTS, size=5)
    assert [c[1] for c in chosen] == [pairs[4][1].pk, pairs[2][1].pk]
