"""Setting a campaign up as a flow (annotation.setup, annotation.setup_views): each step's
service and page, the kinds' default labels per item, refusals that name their field, the
prefill link from the run comparison, and the researcher's list of drafts."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from annotation import services
from annotation.errors import AnnotationError
from annotation.kinds import kinds
from annotation.models import (
    Assignment,
    Campaign,
    Item,
    Label,
    Member,
    Question,
    RefinementDraft,
)
from annotation.roles import ANNOTATORS
from annotation.services import labels_per_item_default
from annotation.setup import (
    campaign_details_update,
    campaign_readiness,
    members_set,
    prefill_read,
    question_check,
    questions_save,
)
from evaluation.models import Endpoint, Prediction, Run
from tests.factories import make_benchmark, make_researcher, make_sample, make_tool, make_user

pytestmark = pytest.mark.django_db


def two_runs(samples: int = 4) -> tuple[Run, Run]:
    benchmark = make_benchmark()
    rows = [make_sample(benchmark=benchmark) for _ in range(samples)]
    endpoint = Endpoint.objects.create(name=f"e{benchmark.pk}", base_url="http://127.0.0.1:9/v1")
    runs = []
    for name in ("model A", "model B"):
        run = Run.objects.create(
            name=f"{name} {benchmark.pk}",
            benchmark=benchmark,
            task="answer",
            split="test",
            endpoint=endpoint,
            model_name=name,
            status=Run.Status.DONE,
        )
        for i, sample in enumerate(rows):
            Prediction.objects.create(
                run=run,
                sample=sample,
                position=i,
                status=Prediction.Status.DONE,
                attempts=1,
                output=f"<b>{name}</b> says {i}",
            )
        runs.append(run)
    return runs[0], runs[1]


# --- defaults from the papers -------------------------------------------------------------------


def test_each_kind_declares_its_default_labels_per_item_and_the_create_service_uses_it() -> None:
    declared = {name: kind.labels_per_item for name, kind in kinds().items()}
    assert declared["turing"] == 3
    assert declared["pairwise"] == 3
    assert declared["motivation"] == 2
    for name in declared:
        campaign = services.campaign_create(name=f"default {name}", kind=name)
        assert campaign.labels_per_item == declared[name], name
    given = services.campaign_create(name="given", kind="pairwise", labels_per_item=5)
    assert given.labels_per_item == 5


def test_the_default_labels_per_item_is_what_the_annotators_group_can_give() -> None:
    # given an annotators group of two active users (and one who left)
    group = Group.objects.get(name=ANNOTATORS)
    for name, active in (("a1", True), ("a2", True), ("gone", False)):
        make_user(username=name, is_active=active).groups.add(group)
    # then a kind asking three asks two, one asking two stays, and a number given is kept
    assert labels_per_item_default("pairwise") == 2
    assert services.campaign_create(name="p", kind="pairwise").labels_per_item == 2
    assert services.campaign_create(name="m", kind="motivation").labels_per_item == 2
    given = services.campaign_create(name="given", kind="turing", labels_per_item=3)
    assert given.labels_per_item == 3


def test_the_admin_creates_through_the_same_service(client: Client) -> None:
    from tests.factories import make_superuser

    client.force_login(make_superuser())
    response = client.post(
        "/admin/annotation/campaign/add/",
        {
            "name": "admin pairwise",
            "kind": "pairwise",
            "status": "draft",
            "guidelines": "",
            "labels_per_item": "",
            "randomize_sides": "on",
            "lease_seconds": "1800",
            "questions-TOTAL_FORMS": "0",
            "questions-INITIAL_FORMS": "0",
            "members-TOTAL_FORMS": "0",
            "members-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    campaign = Campaign.objects.get(name="admin pairwise")
    assert campaign.labels_per_item == 3
    assert campaign.created_by is not None
    assert list(campaign.questions.values_list("key", flat=True)) == ["better"]


def admin_change_form(campaign: Campaign, questions: list[dict[str, Any]]) -> dict[str, Any]:
    form: dict[str, Any] = {
        "name": campaign.name,
        "kind": campaign.kind,
        "status": campaign.status,
        "guidelines": "",
        "labels_per_item": str(campaign.labels_per_item),
        "lease_seconds": "1800",
        "questions-TOTAL_FORMS": str(len(questions)),
        "questions-INITIAL_FORMS": "0",
        "members-TOTAL_FORMS": "0",
        "members-INITIAL_FORMS": "0",
    }
    campaign.questions.all().delete()
    for i, question in enumerate(questions):
        for name, value in question.items():
            form[f"questions-{i}-{name}"] = value
    return form


def test_the_admin_checks_questions_by_the_setup_pages_rules(client: Client) -> None:
    from tests.factories import make_superuser

    client.force_login(make_superuser())
    campaign = services.campaign_create(name="admin questions", kind="motivation")
    url = f"/admin/annotation/campaign/{campaign.pk}/change/"
    choices = [{"value": "a", "label": "A"}, {"value": "a", "label": "again"}]
    bad = {"order": "0", "key": "why", "text": "Why?", "scale": "categories", "min_choices": "0"}
    response = client.post(
        url, admin_change_form(campaign, [{**bad, "choices": json.dumps(choices)}])
    )
    assert response.status_code == 200
    assert (
        "question 1, choice 2: the value &#x27;a&#x27; is there twice" in response.content.decode()
    )
    assert not campaign.questions.exists()
    ordinal = {"order": "0", "key": "how", "text": "How?", "scale": "ordinal", "min_choices": "0"}
    scale = [{"value": "1", "label": "bad"}, {"value": "2", "label": "good"}]
    response = client.post(
        url, admin_change_form(campaign, [{**ordinal, "choices": json.dumps(scale)}])
    )
    assert response.status_code == 302
    # stored as the setup page stores it: numbers on an ordinal scale
    assert [c["value"] for c in campaign.questions.get(key="how").choices] == [1, 2]


def test_the_admin_shows_the_members_warning_and_links_the_setup(client: Client) -> None:
    from tests.factories import make_superuser

    client.force_login(make_superuser())
    campaign = services.campaign_create(name="admin warning", kind="turing")
    services.members_add(campaign=campaign, users=[make_user()], role="annotator")
    html = client.get(f"/admin/annotation/campaign/{campaign.pk}/change/").content.decode()
    assert "1 annotator for 3 labels per item" in html
    assert f'href="/campaigns/{campaign.pk}/setup/"' in html


def test_fewer_annotators_than_labels_per_item_is_a_visible_warning() -> None:
    campaign = services.campaign_create(name="few", kind="pairwise")
    services.members_add(campaign=campaign, users=[make_user(), make_user()], role="annotator")
    warnings = campaign_readiness(campaign).warnings
    assert len(warnings) == 1
    assert "2 annotators for 3 labels per item" in warnings[0]
    services.members_add(campaign=campaign, users=[make_user()], role="annotator")
    assert campaign_readiness(campaign).warnings == []


# --- questions ----------------------------------------------------------------------------------


def test_a_question_is_checked_and_typed_as_stored() -> None:
    spec = question_check(
        {
            "key": "quality",
            "text": " How good? ",
            "scale": "ordinal",
            "choices": [
                {"value": "1", "label": "Poor", "key": "1"},
                {"value": "2.5", "label": "Fair", "key": "2"},
                {"value": "3", "label": "Good", "key": ""},
            ],
            "multiple": True,
            "min_choices": "",
            "max_choices": "",
            "required": True,
        },
        0,
    )
    assert spec["text"] == "How good?"
    assert [c["value"] for c in spec["choices"]] == [1, 2.5, 3]
    # an ordinal question is answered once
    assert spec["multiple"] is False
    pairwise = question_check({"key": "better", "text": "Which?", "scale": "pairwise"}, 1)
    assert [c["value"] for c in pairwise["choices"]] == [1, 0, -1]


@pytest.mark.parametrize(
    ("spec", "field", "words"),
    [
        ({"key": "Bad Key", "text": "t", "scale": "categories"}, "q-0-key", "lower-case"),
        ({"key": "k", "text": "", "scale": "categories"}, "q-0-text", "write the question"),
        ({"key": "k", "text": "t", "scale": "stars"}, "q-0-scale", "choose one of"),
        (
            {"key": "k", "text": "t", "scale": "categories", "choices": [{"value": "a"}]},
            "q-0-choice-0-label",
            "give its label",
        ),
        (
            {
                "key": "k",
                "text": "t",
                "scale": "categories",
                "choices": [{"value": "a", "label": "A"}, {"value": "a", "label": "B"}],
            },
            "q-0-choice-1-value",
            "twice",
        ),
        (
            {
                "key": "k",
                "text": "t",
                "scale": "ordinal",
                "choices": [{"value": "x", "label": "X"}],
            },
            "q-0-choice-0-value",
            "numbers",
        ),
        (
            {
                "key": "k",
                "text": "t",
                "scale": "categories",
                "choices": [{"value": "a", "label": "A"}],
            },
            "q-0-choices",
            "at least two",
        ),
        (
            {
                "key": "k",
                "text": "t",
                "scale": "item_choices",
                "multiple": True,
                "min_choices": "3",
                "max_choices": "2",
            },
            "q-0-max_choices",
            "fewer than the least",
        ),
    ],
)
def test_a_wrong_question_is_refused_naming_its_field(
    spec: dict[str, Any], field: str, words: str
) -> None:
    with pytest.raises(AnnotationError) as refused:
        question_check(spec, 0)
    assert refused.value.field == field
    assert words in str(refused.value)
    assert "question 1" in str(refused.value)


def test_questions_are_replaced_all_or_none() -> None:
    campaign = services.campaign_create(name="q", kind="motivation")
    before = list(campaign.questions.values_list("key", flat=True))
    good = {"key": "a", "text": "A?", "scale": "pairwise"}
    with pytest.raises(AnnotationError) as refused:
        questions_save(campaign=campaign, questions=[good, {**good, "text": "again"}])
    assert refused.value.field == "q-1-key"
    assert list(campaign.questions.values_list("key", flat=True)) == before
    questions_save(campaign=campaign, questions=[good])
    assert list(campaign.questions.values_list("key", "scale")) == [("a", "pairwise")]


def test_an_open_campaign_refuses_every_setup_change() -> None:
    campaign = services.campaign_create(name="open", kind="pairwise")
    campaign.status = Campaign.Status.ACTIVE
    campaign.save()
    with pytest.raises(AnnotationError) as refused:
        questions_save(
            campaign=campaign, questions=[{"key": "a", "text": "A?", "scale": "pairwise"}]
        )
    assert refused.value.field == "status"
    with pytest.raises(AnnotationError):
        members_set(campaign=campaign, by_role={"annotator": [make_user().pk]})
    with pytest.raises(AnnotationError):
        campaign_details_update(
            campaign=campaign, name="x", benchmark=None, guidelines="", labels_per_item=1
        )


# --- members ------------------------------------------------------------------------------------


def test_members_are_set_role_by_role() -> None:
    campaign = services.campaign_create(name="m", kind="motivation", adjudication_stage=True)
    a, b, c = make_user(), make_user(), make_user()
    assert members_set(
        campaign=campaign, by_role={"annotator": [a.pk, b.pk], "adjudicator": [c.pk]}
    ) == {
        "annotator": 2,
        "reviewer": 0,
        "adjudicator": 1,
    }
    members_set(campaign=campaign, by_role={"annotator": [b.pk], "adjudicator": [c.pk]})
    assert set(Member.objects.filter(campaign=campaign).values_list("user_id", "role")) == {
        (b.pk, "annotator"),
        (c.pk, "adjudicator"),
    }
    # a motivation campaign has no review stage
    with pytest.raises(AnnotationError) as refused:
        members_set(campaign=campaign, by_role={"reviewer": [a.pk]})
    assert refused.value.field == "reviewer"
    with pytest.raises(AnnotationError) as refused:
        members_set(campaign=campaign, by_role={"annotator": [999_999]})
    assert refused.value.field == "annotator"


# --- the prefill contract -----------------------------------------------------------------------


def test_the_prefill_reads_a_pairwise_kind_and_two_runs() -> None:
    run_a, run_b = two_runs()
    prefill = prefill_read({"kind": "pairwise", "runs": f"{run_a.pk},{run_b.pk}"})
    assert prefill.kind == "pairwise"
    assert prefill.runs == (run_a, run_b)
    for bad in ("1", "a,b", f"{run_a.pk},999999", "1,2,3"):
        with pytest.raises(AnnotationError) as refused:
            prefill_read({"kind": "pairwise", "runs": bad})
        assert refused.value.field == "runs"
    with pytest.raises(AnnotationError) as refused:
        prefill_read({"kind": "nope"})
    assert refused.value.field == "kind"
    # runs without a kind: the kind that compares two runs
    assert prefill_read({"runs": f"{run_a.pk},{run_b.pk}"}).kind == "pairwise"
    other, _ = two_runs()
    for params in (
        {"kind": "motivation", "runs": f"{run_a.pk},{run_b.pk}"},
        {"kind": "pairwise", "runs": f"{run_a.pk},{run_a.pk}"},
        {"kind": "pairwise", "runs": f"{run_a.pk},{other.pk}"},
    ):
        with pytest.raises(AnnotationError) as refused:
            prefill_read(params)
        assert refused.value.field == "runs", params


# --- the pages ----------------------------------------------------------------------------------


def researcher(client: Client) -> Any:
    user = make_researcher()
    client.force_login(user)
    return user


def test_the_flow_through_the_pages_for_a_pairwise_campaign_from_two_runs(client: Client) -> None:
    run_a, run_b = two_runs(samples=4)
    user = researcher(client)
    # the run comparison's link: kind and runs chosen
    page = client.get(f"/campaigns/new/?kind=pairwise&runs={run_a.pk},{run_b.pk}")
    html = page.content.decode()
    assert page.status_code == 200
    assert re.search(r'value="pairwise"\s+checked', html)
    assert f'name="runs" value="{run_a.pk},{run_b.pk}"' in html
    # create
    response = client.post(
        "/campaigns/new/",
        {
            "kind": "pairwise",
            "name": "A vs B",
            "benchmark": str(run_a.benchmark_id),
            "guidelines": "# Judge\n\nPick the **better** one.",
            "labels_per_item": "",
            "runs": f"{run_a.pk},{run_b.pk}",
        },
    )
    campaign = Campaign.objects.get(name="A vs B")
    assert response["Location"] == f"/campaigns/{campaign.pk}/setup/questions/"
    assert (campaign.kind, campaign.labels_per_item, campaign.created_by) == ("pairwise", 3, user)
    assert (campaign.run_a, campaign.run_b) == (run_a, run_b)
    # questions: the kind's default, saved as they are
    html = client.get(f"/campaigns/{campaign.pk}/setup/questions/").content.decode()
    assert 'value="better"' in html
    response = client.post(
        f"/campaigns/{campaign.pk}/setup/questions/",
        {
            "questions": "1",
            "q-0-key": "better",
            "q-0-text": "Which output serves the user better?",
            "q-0-scale": "pairwise",
            "q-0-required": "1",
            "q-0-allow_note": "1",
            "action": "save",
        },
    )
    assert response.status_code == 302
    # items: the two runs are chosen already; a limit of 3 of the 4 samples
    html = client.get(f"/campaigns/{campaign.pk}/setup/items/").content.decode()
    assert re.search(rf'<option value="{run_a.pk}" selected>', html)
    assert html.count(f'<option value="{run_b.pk}" selected>') == 1
    response = client.post(
        f"/campaigns/{campaign.pk}/setup/items/",
        {"run": str(run_a.pk), "run_b": str(run_b.pk), "limit": "3"},
    )
    assert response.status_code == 302
    assert campaign.items.count() == 3
    # building again replaces them
    client.post(f"/campaigns/{campaign.pk}/setup/items/", {"run": run_a.pk, "run_b": run_b.pk})
    assert campaign.items.count() == 4
    # members: two annotators for three labels per item, a warning
    ann1, ann2 = make_user(username="ann1"), make_user(username="ann2")
    client.post(f"/campaigns/{campaign.pk}/setup/members/", {"annotator": [ann1.pk, ann2.pk]})
    html = client.get(f"/campaigns/{campaign.pk}/setup/members/").content.decode()
    assert "2 annotators for 3 labels per item" in html
    # preview: the studio's item template, escaped, and nothing stored
    html = client.get(f"/campaigns/{campaign.pk}/setup/preview/").content.decode()
    assert "&lt;b&gt;model A&lt;/b&gt;" in html or "&lt;b&gt;model B&lt;/b&gt;" in html
    assert "<b>model" not in html
    assert 'name="better"' in html
    assert Assignment.objects.count() == 0 and Label.objects.count() == 0
    # open: the same service as the admin's bulk action
    response = client.post(f"/campaigns/{campaign.pk}/setup/open/")
    assert response["Location"] == f"/campaigns/{campaign.pk}/progress/"
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.ACTIVE
    # once open, the steps show that setup is over and refuse changes
    html = client.get(f"/campaigns/{campaign.pk}/setup/items/").content.decode()
    assert "its setup can no longer change" in html
    refused = client.post(f"/campaigns/{campaign.pk}/setup/items/", {"run": run_a.pk})
    assert refused.status_code == 400
    assert campaign.items.count() == 4


def test_the_first_step_shows_every_option_and_keeps_those_of_the_kind(client: Client) -> None:
    researcher(client)
    html = client.get("/campaigns/new/").content.decode()
    # every option is on the first step, each naming the kinds it is for
    for option in ("randomize_sides", "show_gold", "review_stage", "adjudication_stage"):
        assert f'name="{option}"' in html, option
    assert re.search(r'name="randomize_sides" value="1" checked', html)
    assert "Pairwise" in html.split('name="randomize_sides"')[1].split("</label>")[0]
    # a pairwise draft keeps its options, and not one for another kind (review: refinement)
    client.post(
        "/campaigns/new/",
        {"kind": "pairwise", "name": "opts", "adjudication_stage": "1", "review_stage": "1"},
    )
    campaign = Campaign.objects.get(name="opts")
    assert (campaign.randomize_sides, campaign.adjudication_stage, campaign.review_stage) == (
        False,
        True,
        False,
    )


def test_the_members_step_sets_the_labels_per_item_and_warns_there(client: Client) -> None:
    researcher(client)
    campaign = services.campaign_create(name="few", kind="pairwise", labels_per_item=3)
    ann1, ann2 = make_user(username="ann1"), make_user(username="ann2")
    html = client.get(f"/campaigns/{campaign.pk}/setup/members/").content.decode()
    assert re.search(r'name="labels_per_item"[^>]*value="3"', html)
    # two annotators for three labels: this step again, with the warning and a way on
    response = client.post(
        f"/campaigns/{campaign.pk}/setup/members/",
        {"annotator": [ann1.pk, ann2.pk], "labels_per_item": "3"},
    )
    assert response["Location"] == f"/campaigns/{campaign.pk}/setup/members/"
    html = client.get(response["Location"]).content.decode()
    assert "2 annotators for 3 labels per item" in html
    assert f'href="/campaigns/{campaign.pk}/setup/preview/"' in html
    # asking two labels on the same step: on to the preview
    response = client.post(
        f"/campaigns/{campaign.pk}/setup/members/",
        {"annotator": [ann1.pk, ann2.pk], "labels_per_item": "2"},
    )
    assert response["Location"] == f"/campaigns/{campaign.pk}/setup/preview/"
    campaign.refresh_from_db()
    assert campaign.labels_per_item == 2
    # a wrong number is refused naming the field, and the members are not changed
    response = client.post(
        f"/campaigns/{campaign.pk}/setup/members/", {"annotator": [ann1.pk], "labels_per_item": "0"}
    )
    assert response.status_code == 400
    assert 'id="labels_per_item"' in response.content.decode()
    assert campaign.members.filter(role="annotator").count() == 2


def test_the_create_page_refuses_naming_the_field_and_keeps_what_was_typed(client: Client) -> None:
    researcher(client)
    services.campaign_create(name="taken", kind="motivation")
    response = client.post(
        "/campaigns/new/", {"kind": "motivation", "name": "taken", "guidelines": "kept <i>"}
    )
    html = response.content.decode()
    assert response.status_code == 400
    assert "a campaign named &#x27;taken&#x27; exists already" in html
    # the field is marked and takes the focus
    assert re.search(r'id="name"[^>]*aria-invalid="true"[^>]*autofocus', html)
    assert "kept &lt;i&gt;" in html
    response = client.post("/campaigns/new/", {"name": "no kind"})
    assert response.status_code == 400
    assert "choose the kind" in response.content.decode()
    response = client.post(
        "/campaigns/new/", {"kind": "motivation", "name": "x", "labels_per_item": "many"}
    )
    assert response.status_code == 400
    assert "labels per item: a whole number" in response.content.decode()
    response = client.get("/campaigns/new/?kind=pairwise&runs=1")
    assert response.status_code == 400
    assert "give two run ids" in response.content.decode()
    assert not Campaign.objects.exclude(name="taken").exists()


def test_the_guidelines_preview_renders_safe_markdown(client: Client) -> None:
    researcher(client)
    response = client.post(
        "/campaigns/guidelines-preview/",
        {"guidelines": "# Title\n\n**bold** <script>alert(1)</script>"},
        HTTP_HX_REQUEST="true",
    )
    html = response.content.decode()
    assert "<h1>Title</h1>" in html or "<h2>Title</h2>" in html or "Title</h" in html
    assert "<strong>bold</strong>" in html
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_the_questions_page_adds_and_removes_choice_rows_without_saving(client: Client) -> None:
    researcher(client)
    campaign = services.campaign_create(name="rows", kind="motivation")
    form = {
        "questions": "1",
        "q-0-key": "reason",
        "q-0-text": "Why?",
        "q-0-scale": "categories",
        "q-0-choices": "2",
        "q-0-choice-0-value": "A",
        "q-0-choice-0-label": "Data",
        "q-0-choice-1-value": "B",
        "q-0-choice-1-label": "Files",
        "q-0-required": "1",
    }
    url = f"/campaigns/{campaign.pk}/setup/questions/"
    added = client.post(url, {**form, "action": "add-choice:0"}, HTTP_HX_REQUEST="true")
    html = added.content.decode()
    assert 'name="q-0-choice-2-value"' in html
    assert re.search(r'name="q-0-choice-2-value"[^>]*autofocus', html)
    removed = client.post(url, {**form, "action": "remove-choice:0:0"}).content.decode()
    assert 'name="q-0-choice-1-value"' not in removed and 'value="B"' in removed
    # nothing was saved by either
    # a button naming a row or question that is not there redraws the form as it was
    for action in ("remove-choice:7:9", "add-choice:x", "remove-question:5", "dance"):
        same = client.post(url, {**form, "action": action}).content.decode()
        assert same.count('name="q-0-choice-') == 6, action
    assert campaign.questions.get().choices[0]["value"] == "A"
    assert len(campaign.questions.get().choices) == 4
    # a refused save names the row
    response = client.post(url, {**form, "q-0-choice-1-label": "", "action": "save"})
    html = response.content.decode()
    assert response.status_code == 400
    assert "question 1, choice 2: give its label" in html
    assert re.search(r'name="q-0-choice-1-label"[^>]*aria-invalid="true"', html)
    # saved: the two rows
    assert client.post(url, {**form, "action": "save"}).status_code == 302
    question = Question.objects.get(campaign=campaign)
    assert question.choices == [
        {"value": "A", "label": "Data", "key": ""},
        {"value": "B", "label": "Files", "key": ""},
    ]


def test_changing_a_questions_scale_redraws_its_form(client: Client) -> None:
    researcher(client)
    campaign = services.campaign_create(name="scales", kind="motivation")
    url = f"/campaigns/{campaign.pk}/setup/questions/"
    form = {"questions": "1", "q-0-key": "q", "q-0-text": "Q?", "q-0-choices": "0"}

    def redraw(scale: str) -> str:
        data = {**form, "q-0-scale": scale, "action": "redraw"}
        return client.post(url, data, HTTP_HX_REQUEST="true").content.decode()

    ordinal = redraw("ordinal")
    assert "values are numbers, in order" in ordinal and "Add a choice" in ordinal
    assert 'name="q-0-multiple"' not in ordinal
    pairwise = redraw("pairwise")
    assert "Add a choice" not in pairwise and "Left is better" not in pairwise
    assert "stored as A better, tie or B better" in pairwise
    items = redraw("item_choices")
    assert "each item's own" in items and 'name="q-0-multiple"' in items
    # an htmx redraw is the form alone, not the page
    assert "<html" not in items
    # nothing saved
    assert list(campaign.questions.values_list("key", flat=True)) == ["reason"]


def test_the_items_step_fits_the_kind_and_names_a_wrong_field(
    client: Client, tmp_path: Path
) -> None:
    researcher(client)
    benchmark = make_benchmark()
    for i in range(12):
        make_tool(benchmark=benchmark, name=f"tool{i:02d}")
    motivation = services.campaign_create(name="why", kind="motivation", benchmark=benchmark)
    html = client.get(f"/campaigns/{motivation.pk}/setup/items/").content.decode()
    assert 'name="run"' not in html and 'name="split"' not in html and 'name="pairs"' not in html
    assert "<strong>12</strong> tools" in html
    # the limit honoured (199 items were built for a limit of 10 before)
    client.post(f"/campaigns/{motivation.pk}/setup/items/", {"limit": "10"})
    assert motivation.items.count() == 10
    response = client.post(f"/campaigns/{motivation.pk}/setup/items/", {"limit": "0"})
    assert response.status_code == 400
    assert re.search(r'id="limit"[^>]*aria-invalid="true"', response.content.decode())
    assert motivation.items.count() == 10

    turing = services.campaign_create(name="turing", kind="turing")
    html = client.get(f"/campaigns/{turing.pk}/setup/items/").content.decode()
    assert 'type="file" id="pairs" name="pairs"' in html and 'name="run"' not in html
    broken = SimpleUploadedFile("broken.json", json.dumps([{"real": 1}]).encode())
    response = client.post(f"/campaigns/{turing.pk}/setup/items/", {"pairs": broken})
    html = response.content.decode()
    assert response.status_code == 400
    # the file as the researcher named it, the record and what it lacks
    assert "broken.json, record 0: missing documentation, arguments, simulated" in html
    assert re.search(r'id="pairs"[^>]*aria-invalid="true"', html)
    not_json = SimpleUploadedFile("notes.json", b'[{"real": 1,\n  oops}]')
    html = client.post(f"/campaigns/{turing.pk}/setup/items/", {"pairs": not_json}).content
    assert b"notes.json" in html and b"/tmp" not in html
    record = {"documentation": "d", "arguments": {}, "real": 1, "simulated": 2}
    good = SimpleUploadedFile("pairs.json", json.dumps([record] * 3).encode())
    client.post(f"/campaigns/{turing.pk}/setup/items/", {"pairs": good, "limit": "2"})
    assert turing.items.count() == 2

    pairwise = services.campaign_create(name="pairwise", kind="pairwise")
    response = client.post(f"/campaigns/{pairwise.pk}/setup/items/", {"run": "123456"})
    assert response.status_code == 400
    assert re.search(r'id="run"[^>]*aria-invalid="true"', response.content.decode())


def test_the_preview_shows_a_motivation_item_with_its_questions(client: Client) -> None:
    researcher(client)
    benchmark = make_benchmark()
    make_tool(benchmark=benchmark, name="weather", description="<img src=x onerror=alert(1)>")
    campaign = services.campaign_create(name="why", kind="motivation", benchmark=benchmark)
    services.items_from_tools(campaign=campaign)
    html = client.get(f"/campaigns/{campaign.pk}/setup/preview/").content.decode()
    assert "weather" in html
    assert "<img src=x" not in html and "&lt;img src=x" in html
    assert 'name="reason"' in html
    assert Assignment.objects.count() == 0
    assert Item.objects.get(campaign=campaign).active == 0


def test_a_researchers_list_shows_drafts_with_a_link_to_continue(client: Client) -> None:
    user = researcher(client)
    draft = services.campaign_create(name="my draft", kind="motivation", user=user)
    opened = services.campaign_create(name="running one", kind="motivation")
    opened.status = Campaign.Status.ACTIVE
    opened.save()
    html = client.get("/campaigns/").content.decode()
    assert html.index("my draft") < html.index("running one")
    # the draft has its questions: the next step is its items
    assert f'href="/campaigns/{draft.pk}/setup/items/"' in html
    assert f'href="/campaigns/{opened.pk}/progress/"' in html
    assert 'href="/campaigns/new/"' in html
    # the annotator's list stays the annotator's: a draft is not in it
    assert "my draft" not in client.get("/annotate/").content.decode()


@pytest.mark.parametrize("kind", sorted(kinds()))
def test_every_step_answers_for_every_kind_and_the_preview_stores_nothing(
    kind: str, client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.annotation.test_build_limit import _request

    researcher(client)
    benchmark = make_benchmark()
    samples = [
        make_sample(benchmark=benchmark, candidate_tools=["tool_a", "tool_b"]) for _ in range(3)
    ]
    for name in ("tool_a", "tool_b"):
        make_tool(benchmark=benchmark, name=name)
    campaign = services.campaign_create(name=f"every {kind}", kind=kind, benchmark=benchmark)
    builder = sorted(kinds()[kind].builders)[0]
    request = _request(builder, benchmark, samples, tmp_path, monkeypatch)
    services.items_build(campaign=campaign, request=request)
    for step in ("", "questions/", "items/", "members/", "preview/", "open/"):
        response = client.get(f"/campaigns/{campaign.pk}/setup/{step}")
        assert response.status_code == 200, (step, response.content.decode()[:500])
    html = client.get(f"/campaigns/{campaign.pk}/setup/preview/").content.decode()
    assert 'class="item-view"' in html
    for question in campaign.questions.all():
        if question.scale != "item_choices":
            assert f'name="{question.key}"' in html
    if kinds()[kind].drafts:
        # the editor as it opens, inert: a preview edits nothing
        assert "<div inert>" in html and 'id="editor"' in html
    assert not Assignment.objects.filter(campaign=campaign).exists()
    assert not Label.objects.filter(campaign=campaign).exists()
    assert not RefinementDraft.objects.exists()


HOSTILE = [
    ("new/", {"kind": "motivation", "name": "x" * 201}),
    ("new/", {"kind": "motivation", "name": "x", "labels_per_item": "40000"}),
    ("new/", {"kind": "../../etc", "name": "x"}),
    ("new/", {"kind": "motivation", "name": "x", "benchmark": "999999"}),
    ("new/", {"kind": "pairwise", "name": "x", "runs": "1,2,3"}),
    ("{id}/setup/", {"name": "", "labels_per_item": "1"}),
    ("{id}/setup/", {"name": "y", "labels_per_item": "0"}),
    ("{id}/setup/", {"name": "y", "labels_per_item": "-3"}),
    ("{id}/setup/", {"name": "y", "labels_per_item": "99999999999999999999"}),
    ("{id}/setup/questions/", {"questions": "abc", "action": "save"}),
    ("{id}/setup/questions/", {"questions": "999999999", "action": "save"}),
    ("{id}/setup/questions/", {"questions": "1", "q-0-choices": "-1", "action": "save"}),
    ("{id}/setup/questions/", {"questions": "0", "action": "save"}),
    ("{id}/setup/items/", {"limit": "ten"}),
    ("{id}/setup/items/", {"limit": "99999999999999999999999"}),
    ("{id}/setup/items/", {"split": "no-such-split"}),
    ("{id}/setup/members/", {"annotator": ["abc", "-1", "999999999"]}),
    ("{id}/setup/members/", {"reviewer": ["1"]}),
    ("{id}/setup/open/", {}),
]


def test_a_huge_limit_or_id_is_refused_not_sent_to_the_database(client: Client) -> None:
    researcher(client)
    benchmark = make_benchmark()
    make_tool(benchmark=benchmark)
    campaign = services.campaign_create(name="huge", kind="motivation", benchmark=benchmark)
    url = f"/campaigns/{campaign.pk}/setup/items/"
    for data in ({"limit": "9" * 25}, {"limit": "9" * 12}):
        response = client.post(url, data)
        assert response.status_code == 400
        assert "limit: a whole number from 0 to 2,147,483,647" in response.content.decode()
    pairwise = services.campaign_create(name="huge runs", kind="pairwise")
    response = client.post(f"/campaigns/{pairwise.pk}/setup/items/", {"run": "9" * 30})
    assert response.status_code == 400
    assert not campaign.items.exists()


@pytest.mark.parametrize(("path", "data"), HOSTILE)
def test_bad_input_is_refused_with_a_message_never_a_500(
    path: str, data: dict[str, Any], client: Client
) -> None:
    researcher(client)
    benchmark = make_benchmark()
    make_sample(benchmark=benchmark)
    campaign = services.campaign_create(name="target", kind="refinement", benchmark=benchmark)
    response = client.post(f"/campaigns/{path.format(id=campaign.pk)}", data)
    assert response.status_code == 400, response.content.decode()[:800]
    assert 'role="alert"' in response.content.decode()
    assert Campaign.objects.count() == 1
    campaign.refresh_from_db()
    assert (campaign.name, campaign.labels_per_item) == ("target", 1)


def test_the_admins_build_form_shows_only_what_the_kind_builds_from(client: Client) -> None:
    from tests.factories import make_superuser

    client.force_login(make_superuser())
    shown = {}
    for kind in ("motivation", "pairwise", "turing", "baseline"):
        campaign = services.campaign_create(name=f"build {kind}", kind=kind)
        html = client.get(f"/admin/annotation/campaign/{campaign.pk}/build/").content.decode()
        shown[kind] = [
            n for n in ("split", "run", "run_b", "pairs", "limit") if f'name="{n}"' in html
        ]
    assert shown == {
        "motivation": ["limit"],
        "pairwise": ["run", "run_b", "limit"],
        "turing": ["pairs", "limit"],
        "baseline": ["split", "run", "limit"],
    }
    # and builds, limit honoured
    benchmark = make_benchmark()
    for i in range(5):
        make_tool(benchmark=benchmark, name=f"t{i}")
    campaign = services.campaign_create(name="admin built", kind="motivation", benchmark=benchmark)
    response = client.post(f"/admin/annotation/campaign/{campaign.pk}/build/", {"limit": "3"})
    assert response.status_code == 302
    assert campaign.items.count() == 3


def test_the_campaign_list_reads_the_same_queries_however_many_campaigns(client: Client) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    user = researcher(client)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get("/campaigns/").status_code == 200
        return len(captured)

    services.campaign_create(name="one", kind="motivation", user=user)
    few = queries()
    benchmark = make_benchmark()
    make_tool(benchmark=benchmark)
    for i in range(6):
        campaign = services.campaign_create(
            name=f"more {i}", kind="motivation", benchmark=benchmark
        )
        services.items_from_tools(campaign=campaign)
        services.members_add(campaign=campaign, users=[make_user()], role="annotator")
    assert queries() == few


def test_the_gold_is_a_choice_only_where_items_are_samples_with_a_hidden_gold() -> None:
    chosen = {name for name, kind in kinds().items() if "show_gold" in kind.setup_options()}
    # refinement always shows it (it edits it), a baseline never (it is the question),
    # motivation and Turing items are tools and API responses
    assert chosen == {"pairwise", "error_types", "answer_check"}
