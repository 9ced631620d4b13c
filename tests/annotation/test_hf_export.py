"""A campaign's labels as a Hugging Face dataset folder, read back by the real `datasets`: one
row per current label, every field equal to what is stored (hostile answers included), the
items' keys as the labels CSV gives them, the card declaring what `datasets` finds; its
download open to the labels CSV's readers only (never to an annotator of the campaign)."""

from __future__ import annotations

import io
import json
import uuid
import zipfile
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from annotation import services
from annotation.agreement.data import item_keys
from annotation.agreement.hf import LabelExportRefused, labels_hf_export
from annotation.assign import item_next
from annotation.models import Label, Member
from tests.annotation.test_agreement_report import ANNOTATORS, ITEMS, pairwise_campaign
from tests.factories import make_researcher, make_user, store_label
from tests.hf_load import card, decoded, features_yaml, load, load_by_card

pytestmark = pytest.mark.django_db

HOSTILE = ["=1+1", '@"x",\n\x07', "ünï 表 😀 \u2028", None]


def hostile_campaign() -> Any:
    campaign, run_a, run_b, annotators = pairwise_campaign()
    for n, label in enumerate(Label.objects.filter(campaign=campaign).order_by("pk")[:4]):
        label.answers = {**label.answers, "extra": HOSTILE[n], "nested": {"b": [1, "-2"], "a": n}}
        label.save(update_fields=["answers"])
    return campaign, run_a, run_b, annotators


def stored(
    campaign: Any, questions: list[str] | None = None
) -> dict[tuple[int, str], dict[str, Any]]:
    keys = item_keys(campaign)
    out = {}
    for label in Label.objects.filter(campaign=campaign, is_current=True).select_related(
        "annotator", "assignment"
    ):
        (_id, position, sample, external, tool, pa, pb, ra, rb, api) = keys[label.item_id]
        out[(label.item_id, label.annotator.username)] = {
            "campaign_id": campaign.pk,
            "item_id": label.item_id,
            "item_position": position,
            "sample_id": sample,
            "sample_external_id": external,
            "tool": tool,
            "prediction_a": pa,
            "prediction_b": pb,
            "run_a": ra,
            "run_b": rb,
            "api": api,
            "annotator": label.annotator.username,
            **{f"answer:{q}": label.answers.get(q) for q in questions or ["better"]},
            "answers": label.answers,
            "shown_order": label.assignment.shown_order,
            "time_ms": label.time_ms,
            "labelled_at": label.created_at.isoformat(),
        }
    return out


def test_every_field_of_every_label_comes_back_equal(tmp_path: Path) -> None:
    campaign, run_a, run_b, _ = hostile_campaign()
    out = tmp_path / "hf"
    export = labels_hf_export(campaign=campaign, folder=out)
    assert export.labels == ITEMS * ANNOTATORS and export.questions == ["better"]
    loaded = load(out, tmp_path / "cache")
    assert list(loaded) == ["labels"]
    json_columns = {"api", "answer:better", "answers"}
    rows = [decoded(row, json_columns) for row in loaded["labels"]]
    expected = stored(campaign)
    assert len(rows) == len(expected) == ITEMS * ANNOTATORS
    for row in rows:
        assert row == expected[(row["item_id"], row["annotator"])]
    # in the labels CSV's order: by item, then annotator
    assert [(r["item_position"], r["annotator"]) for r in rows] == sorted(
        (r["item_position"], r["annotator"]) for r in rows
    )
    # the canonical runs, whatever side was shown first
    assert {(r["run_a"], r["run_b"]) for r in rows} == {(run_a.pk, run_b.pk)}
    assert [r["answers"]["extra"] for r in rows if "extra" in r["answers"]] != []
    assert sorted(
        (r["answers"]["extra"] for r in rows if "extra" in r["answers"]), key=repr
    ) == sorted(HOSTILE, key=repr)


def test_the_card_declares_the_features_and_the_campaign(tmp_path: Path) -> None:
    campaign, *_ = pairwise_campaign()
    out = tmp_path / "hf"
    labels_hf_export(campaign=campaign, folder=out, license="cc0-1.0")
    header, body = card(out)
    loaded = load(out, tmp_path / "cache")
    [info] = header["dataset_info"]
    assert info["features"] == features_yaml(loaded["labels"])
    assert info["splits"] == [{"name": "labels", "num_examples": ITEMS * ANNOTATORS}]
    assert header["license"] == "cc0-1.0"
    provenance = header["provenance"]
    assert provenance["campaign"] == campaign.pk
    assert provenance["campaign_kind"] == "pairwise"
    assert [q["key"] for q in provenance["questions"]] == ["better"]
    assert "shown_order" in body
    assert load_by_card(out, tmp_path / "c2")["labels"].to_list() == loaded["labels"].to_list()


def test_a_campaign_without_labels_is_refused(tmp_path: Path) -> None:
    campaign = services.campaign_create(name="empty", kind="pairwise", labels_per_item=1)
    with pytest.raises(LabelExportRefused, match=f"campaign {campaign.pk} has no labels yet"):
        labels_hf_export(campaign=campaign, folder=tmp_path / "x")
    said = f"Nothing written. campaign {campaign.pk} has no labels yet"
    with pytest.raises(CommandError, match=said):
        call_command("export_labels", str(campaign.pk), "--out", str(tmp_path / "y"))


def test_the_command_and_the_download_and_who_may(tmp_path: Path, client: Client) -> None:
    campaign, _a, _b, annotators = pairwise_campaign()
    stdout = io.StringIO()
    call_command("export_labels", str(campaign.pk), "--out", str(tmp_path / "cmd"), stdout=stdout)
    assert f"campaign {campaign.pk}: {ITEMS * ANNOTATORS} labels, 1 questions" in (
        stdout.getvalue()
    )
    url = f"/campaigns/{campaign.pk}/agreement/labels-hf.zip"
    client.force_login(annotators[0])  # a member who labelled it: blind, so refused
    assert client.get(url).status_code in (403, 404)
    client.force_login(make_researcher())
    response = client.get(url)
    assert response.status_code == 200
    with zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))) as archive:
        archive.extractall(tmp_path / "zip")
    from_zip = load(tmp_path / "zip" / f"campaign-{campaign.pk}-labels-hf", tmp_path / "c1")
    from_command = load(tmp_path / "cmd", tmp_path / "c2")
    assert from_zip["labels"].to_list() == from_command["labels"].to_list()


def test_a_turing_campaign_keeps_each_item_s_api_call(tmp_path: Path) -> None:
    """Items that are API responses (no sample, no run): their `api` (the API's name) comes
    back equal."""
    campaign = services.campaign_create(name="turing =hostile", kind="turing", labels_per_item=2)
    pairs = [
        {
            "documentation": f"doc {i} =x",
            "arguments": {"x": i, "s": "ü\x02"},
            "real": {"r": [i, None]},
            "simulated": {"s": "=1"},
            "api": f"=api ü {i}",
        }
        for i in range(3)
    ]
    path = tmp_path / "pairs.json"
    path.write_text(json.dumps(pairs), "utf-8")
    services.items_from_pairs_file(campaign=campaign, path=path)
    users = [make_user(username="t1"), make_user(username="t2")]
    services.members_add(campaign=campaign, users=users, role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=campaign)
    for user in users:
        while (assignment := item_next(campaign=campaign, user=user)) is not None:
            store_label(
                campaign=assignment.campaign,
                assignment_id=assignment.pk,
                user=user,
                answers={"overall": 1, "format": 0, "relevance": -1},
                token=uuid.uuid4(),
            )
    out = tmp_path / "hf"
    export = labels_hf_export(campaign=campaign, folder=out)
    assert export.labels == 6
    columns = {"api", "answers", *(f"answer:{key}" for key in export.questions)}
    rows = [decoded(row, columns) for row in load(out, tmp_path / "cache")["labels"]]
    expected = stored(campaign, export.questions)
    assert len(rows) == len(expected) == 6
    for row in rows:
        assert row == expected[(row["item_id"], row["annotator"])]
    assert (
        sorted(row["api"] for row in rows) == ["=api ü 0"] * 2 + ["=api ü 1"] * 2 + ["=api ü 2"] * 2
    )
    assert all(row["sample_id"] is None and row["run_a"] is None for row in rows)
