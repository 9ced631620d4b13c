"""The registry of campaign kinds: every kind is one object the studio asks, and the question
sets that are a benchmark's come from its suite, in the suite's own codes."""

from __future__ import annotations

import importlib
import uuid
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps

import annotation.kinds
from annotation import services
from annotation.assign import AnnotationError, item_next
from annotation.kinds import CampaignKind, kind_named, kinds
from annotation.models import Campaign, Item, Label, Question
from benchmarks.suites.wtueval.evaluate import ERROR_TYPES
from benchmarks.suites.wtueval.questions import ERROR_TYPE_CHOICES
from tests.annotation.test_kinds_api import build_error_types
from tests.factories import make_user, store_label


def test_every_kind_module_is_registered_under_its_name() -> None:
    registered = kinds()
    package = Path(annotation.kinds.__file__).parent
    modules = {p.stem for p in package.glob("*.py")} - {"__init__", "base"}
    for name in modules:
        assert registered[name] is importlib.import_module(f"annotation.kinds.{name}").KIND
    for name, kind in registered.items():
        assert kind.name == name and kind.label and kind.questions()
        # a fresh copy each time: a campaign's questions never change the kind's
        assert kind.questions() is not kind.questions()


def test_an_unknown_kind_is_refused_with_the_known_ones() -> None:
    with pytest.raises(AnnotationError, match="unknown kind 'poll'; kinds: refinement"):
        kind_named("poll")


def test_wtueval_error_types_use_the_suites_codes() -> None:
    human = {c["value"] for c in ERROR_TYPE_CHOICES}
    # the paper's first type is one label for what the evaluator splits in two
    assert human - set(ERROR_TYPES) == {"incorrect_invocation"}
    assert "invalid_tool_repeated" in human


@pytest.mark.django_db
def test_labels_stored_with_the_old_error_code_are_renamed() -> None:
    migration = importlib.import_module("annotation.migrations.0005_wtueval_error_codes")
    campaign = services.campaign_create(name="errors", kind="error_types")
    question = Question.objects.get(campaign=campaign)
    old_choices: list[dict[str, Any]] = [
        {**c, "value": "invalid_repeated"} if c["value"] == "invalid_tool_repeated" else c
        for c in question.choices
    ]
    Question.objects.filter(pk=question.pk).update(choices=old_choices)
    failures = build_error_types()
    item = failures.items.first()
    item.campaign = campaign
    item.position = 99
    item.gold = {"types": ["invalid_repeated"]}
    item.save()
    user = make_user()
    services.members_add(campaign=campaign, users=[user], role="annotator")
    services.campaign_activate(campaign=campaign)
    assignment = item_next(campaign=campaign, user=user)
    label, _ = store_label(
        campaign=assignment.campaign,
        assignment_id=assignment.pk,
        user=user,
        answers={"types": ["null_content", "invalid_repeated"]},
        token=uuid.uuid4(),
    )
    migration.forwards(apps, None)
    question.refresh_from_db()
    assert "invalid_tool_repeated" in [c["value"] for c in question.choices]
    assert "invalid_repeated" not in [c["value"] for c in question.choices]
    assert Label.objects.get(pk=label.pk).answers == {
        "types": ["null_content", "invalid_tool_repeated"]
    }
    item.refresh_from_db()
    assert item.gold == {"types": ["invalid_tool_repeated"]}
    migration.backwards(apps, None)
    assert Label.objects.get(pk=label.pk).answers["types"][1] == "invalid_repeated"


@pytest.mark.django_db
def test_the_admin_builds_items_the_way_each_kind_takes_them(client: Any) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    from tests.annotation.test_kinds_api import ROOT
    from tests.factories import make_superuser

    client.force_login(make_superuser())

    def build(campaign: Campaign, data: dict[str, Any]) -> str:
        url = f"/admin/annotation/campaign/{campaign.pk}/build/"
        # (an empty form is not a request to build: the form is shown)
        return client.post(url, {"limit": "", **data}, follow=True).content.decode()

    turing = services.campaign_create(name="turing", kind="turing")
    assert "upload the pairs file" in build(turing, {})
    pairs = (ROOT / "annotation/demo/turing_pairs.json").read_bytes()
    build(turing, {"pairs": SimpleUploadedFile("pairs.json", pairs)})
    assert turing.items.count() > 0
    pairwise = services.campaign_create(name="pairwise", kind="pairwise")
    assert "choose run A and run B" in build(pairwise, {})
    errors = services.campaign_create(name="errors", kind="error_types")
    assert "choose the run whose failures are labelled" in build(errors, {})
    refinement = services.campaign_create(name="refine", kind="refinement")
    assert "give the split" in build(refinement, {})
    # a way of building the kind does not take is refused, naming the kinds that take it
    with pytest.raises(AnnotationError, match="for refinement of samples or human baseline"):
        services.items_from_split(campaign=turing, split="test")


@pytest.mark.django_db
def test_the_admin_offers_the_registered_kinds(client: Any) -> None:
    from tests.factories import make_superuser

    client.force_login(make_superuser())
    page = client.get("/admin/annotation/campaign/add/").content.decode()
    for name, kind in kinds().items():
        assert f'<option value="{name}">{kind.label}</option>' in page
    listed = services.campaign_create(name="listed", kind="motivation")
    assert "Tool motivation" in client.get("/admin/annotation/campaign/").content.decode()
    assert listed.kind_label == "Tool motivation"


def test_a_benchmarks_question_set_comes_from_the_suite_that_declares_it() -> None:
    from benchmarks.kit.registry import all_suites

    declared = {kind: suite.name for suite in all_suites() for kind in suite.questions}
    assert {"motivation", "error_types", "turing"} <= set(declared)
    assert kind_named("error_types").questions()[0]["choices"] == ERROR_TYPE_CHOICES

    class Orphan(CampaignKind):
        name = "orphan"
        label = "A kind nobody asks questions for"

    # no set of its own and none from a suite: the researcher writes its questions
    assert Orphan().questions() == []


@pytest.mark.django_db
def test_an_item_shows_the_context_its_suite_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    from annotation.selectors import item_view
    from benchmarks.kit.registry import SUITE_MODULES
    from tests.factories import make_benchmark, make_sample, make_tool

    monkeypatch.setitem(SUITE_MODULES, "context_toy", "tests.annotation.context_suite")
    benchmark = make_benchmark(suite="context_toy")
    make_tool(benchmark=benchmark, name="forecast")
    make_sample(
        benchmark=benchmark,
        input={"asked": "Rain tomorrow?"},
        metadata={"city": "Ghent"},
        reference="yes",
    )
    shown = services.campaign_create(name="shown", kind="refinement", benchmark=benchmark)
    hidden = services.campaign_create(name="hidden", kind="baseline", benchmark=benchmark)
    services.items_from_split(campaign=shown, split="test")
    view = item_view(shown.items.get(), None)
    assert view["query"] == "Rain tomorrow? (asked in Ghent)"
    assert [tool.name for tool in view["tools"]] == ["forecast"]
    assert view["gold"] == {"gold": "yes"}
    # a kind whose annotators answer the benchmark's question is not shown its gold
    hidden_item = Item.objects.create(
        campaign=hidden, position=0, sample=shown.items.get().sample, payload={"choices": []}
    )
    assert item_view(hidden_item, None)["gold"] is None
