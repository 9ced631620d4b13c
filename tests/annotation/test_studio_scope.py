"""Every studio action is tied to the campaign in its URL: someone removed
from campaign X who is still a member of campaign Y, in every role, sends each studio URL of Y
(pages and API) naming what they held or could see in X (their lease, their refinement draft,
a label waiting for review, a disputed item): nothing in X changes, and no answer shows it.

The walk covers every URL whose access rule is membership of a campaign (config.access): a new
studio URL without a case here fails the test."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.db import transaction
from django.test import Client

from annotation import services
from annotation.models import (
    Adjudication,
    Assignment,
    Campaign,
    Label,
    Member,
    RefinementDraft,
    Review,
)
from config import access
from tests.roles import World, build_world

pytestmark = pytest.mark.django_db


@dataclass
class Call:
    method: str
    path: str
    data: Any = None
    json: bool = False


def studio_url_names() -> list[str]:
    """The URL names whose rule is membership of the campaign in the URL (the studio)."""

    def membership(rule: access.Rule) -> bool:
        if isinstance(rule, access.Member):
            return True
        if isinstance(rule, access.AnyOf):
            return any(membership(r) for r in rule.rules)
        if isinstance(rule, access.ByMethod):
            return membership(rule.read) or membership(rule.write)
        return False

    return sorted(name for name, rule in access.ACCESS.items() if membership(rule))


def state_of(campaigns: list[Campaign]) -> dict[str, Any]:
    """Everything a studio action could change in these campaigns."""
    return {
        "assignments": sorted(
            Assignment.objects.filter(campaign__in=campaigns).values_list(
                "pk", "status", "lease_until"
            )
        ),
        "labels": sorted(
            Label.objects.filter(campaign__in=campaigns).values_list(
                "pk", "is_current", "review", "answers"
            )
        ),
        "reviews": sorted(
            Review.objects.filter(label__campaign__in=campaigns).values_list("pk", "decision")
        ),
        "adjudications": sorted(
            Adjudication.objects.filter(item__campaign__in=campaigns).values_list(
                "pk", "is_current"
            )
        ),
        "drafts": sorted(
            RefinementDraft.objects.filter(assignment__campaign__in=campaigns).values_list(
                "pk", "data"
            )
        ),
    }


def other_campaigns(w: World, user: Any) -> tuple[Campaign, Campaign]:
    """Campaign Y of each kind of X (motivation with adjudication, refinement with review),
    where `user` is annotator, reviewer and adjudicator."""
    y_motivation = services.campaign_create(
        name="Y motivation",
        kind="motivation",
        benchmark=w.benchmark,
        labels_per_item=2,
        adjudication_stage=True,
    )
    services.items_from_tools(campaign=y_motivation)
    y_refinement = services.campaign_create(
        name="Y refinement",
        kind="refinement",
        benchmark=w.refinement.benchmark,
        review_stage=True,
    )
    services.items_from_split(campaign=y_refinement, split="test")
    for campaign in (y_motivation, y_refinement):
        for role in Member.Role.values:
            services.members_add(campaign=campaign, users=[user], role=role)
        services.campaign_activate(campaign=campaign)
    return y_motivation, y_refinement


def cases(w: World, ym: int, yf: int) -> dict[str, list[Call]]:
    """Each studio URL of Y naming what the user held or saw in X."""
    held, drafting = w.assignment.pk, w.refine_assignment.pk
    api = f"/api/campaigns/{ym}"
    return {
        "annotation:annotate": [Call("GET", f"/annotate/{ym}/"), Call("GET", f"/annotate/{yf}/")],
        "annotation:submit": [
            Call("POST", f"/annotate/{ym}/submit/{held}/", {"reason": "A", "token": TOKEN}),
            Call("POST", f"/annotate/{yf}/submit/{drafting}/", {"verdict": "keep", "token": TOKEN}),
        ],
        "annotation:skip": [
            Call("POST", f"/annotate/{ym}/skip/{held}/"),
            Call("POST", f"/annotate/{yf}/skip/{drafting}/"),
        ],
        "annotation:undo": [Call("POST", f"/annotate/{ym}/undo/")],
        "annotation:refine-edit": [
            Call("POST", f"/annotate/{yf}/refine/{drafting}/", {"op": "verdict", "value": "drop"})
        ],
        "annotation:guidelines": [Call("GET", f"/annotate/{ym}/guidelines/")],
        "annotation:review": [Call("GET", f"/review/{yf}/")],
        "annotation:review-submit": [
            Call("POST", f"/review/{yf}/{w.pending.pk}/", {"decision": "approve"})
        ],
        "annotation:adjudicate": [
            Call("GET", f"/adjudicate/{ym}/"),
            Call("GET", f"/adjudicate/{ym}/?item={w.disputed.pk}"),
        ],
        "annotation:adjudicate-submit": [
            Call("POST", f"/adjudicate/{ym}/{w.disputed.pk}/", {"reason": "A", "replaces": ""})
        ],
        "campaign-next": [Call("POST", f"{api}/next/", {}, json=True)],
        "campaign-submit": [
            Call(
                "POST",
                f"{api}/submit/",
                {"assignment": held, "answers": {"reason": "A"}, "token": TOKEN},
                json=True,
            )
        ],
        "campaign-skip": [Call("POST", f"{api}/skip/", {"assignment": held}, json=True)],
    }


TOKEN = "8a6e0c1e-5f7b-4a59-9a44-3d2f6c1b7e21"


def send(client: Client, call: Call) -> Any:
    if call.method == "GET":
        return client.get(call.path)
    if call.json:
        return client.post(call.path, json.dumps(call.data), content_type="application/json")
    return client.post(call.path, call.data or {})


def test_every_studio_action_on_what_another_campaign_holds_changes_nothing_there(
    tmp_path: Path,
) -> None:
    w = build_world(tmp_path)
    user = w.users["annotator"]
    x = [w.motivation, w.refinement]
    # the annotator holds a lease in X's motivation campaign and a draft in its refinement
    # campaign, and can see X's waiting refinement and disputed item by their ids
    RefinementDraft.objects.get_or_create(
        assignment=w.refine_assignment, defaults={"data": {"verdict": "keep"}}
    )
    ym, yf = other_campaigns(w, user)
    # ...and is removed from X, while a member of Y in every role
    Member.objects.filter(user=user, campaign__in=x).delete()
    before = state_of(x)
    client = Client()
    client.force_login(user)
    walks = cases(w, ym.pk, yf.pk)
    missing = [name for name in studio_url_names() if name not in walks]
    assert not missing, f"studio URLs with no case here: {missing}"
    seen = []
    for name in studio_url_names():
        for call in walks[name]:
            # each call from the same start: its changes are undone after it is read
            with transaction.atomic():
                response = send(client, call)
                assert response.status_code < 500, (name, call.path, response.status_code)
                body = response.content.decode()
                after = state_of(x)
                transaction.set_rollback(True)
            for key in before:
                rows = {repr(row) for row in before[key]}
                changed = rows ^ {repr(row) for row in after[key]}
                if changed:
                    seen.append(f"{name} {call.method} {call.path} changed X's {key}: {changed}")
            # X's item, label or lease is never what Y's page shows
            if response.status_code < 300 and name.startswith("annotation:"):
                for marker in (f"/{w.assignment.pk}/", f"/{w.refine_assignment.pk}/"):
                    if f"/annotate/{ym.pk}/skip{marker}" in body:
                        seen.append(f"{name} {call.path} offers X's lease")
    assert not seen, "\n".join(seen)
