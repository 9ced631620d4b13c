"""Reading labels takes `annotation.view_label`, everywhere they are read:
what each annotator answered and how long they took, one by one (the labels CSV, the admin's
label list) or per annotator (the agreement report, its summary CSV and API, a campaign's
progress). `view_campaign` alone opened the agreement report and its labels CSV while the admin
refused the same user the label list.

A curator with every researcher permission but `view_label` walks every page and API URL: they
are refused exactly where the access table names `view_label`, and let in wherever a researcher
is; the admin and docs/access.md say the same."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission
from django.test import RequestFactory

from annotation.models import Campaign
from annotation.roles import RESEARCHER_PERMISSIONS
from config import access
from tests.config.test_access import calls_for, outcome, send
from tests.factories import make_user
from tests.roles import build_world

pytestmark = pytest.mark.django_db

ACCESS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "access.md"
VIEW_LABEL = "annotation.view_label"


def curator(without: str = VIEW_LABEL) -> Any:
    """Staff with every researcher permission but one."""
    user = make_user(is_staff=True)
    for app, models in RESEARCHER_PERMISSIONS.items():
        for model, actions in models.items():
            for action in actions:
                if f"{app}.{action}_{model}" != without:
                    user.user_permissions.add(
                        Permission.objects.get(
                            content_type__app_label=app, codename=f"{action}_{model}"
                        )
                    )
    return user


def needs(rule: access.Rule, perm: str) -> bool:
    """Whether a rule asks for the permission on some way in."""
    if isinstance(rule, access.Perm):
        return perm in rule.perms
    if isinstance(rule, access.AnyOf):
        return any(needs(r, perm) for r in rule.rules)
    if isinstance(rule, access.ByMethod):
        return needs(rule.read, perm) or needs(rule.write, perm)
    return False


# Every page and API URL that shows labels, one by one or per annotator.
LABEL_PLACES = {
    "annotation:progress",
    "annotation:agreement",
    "annotation:agreement-summary-csv",
    "annotation:agreement-labels-csv",
    "annotation:agreement-labels-hf",
    "annotation:calibration",
    "annotation:calibration-csv",
    "annotation:calibration-campaign",
    "agreement-list",
    "agreement-detail",
}


def test_labels_are_read_with_view_label_wherever_they_are_shown(tmp_path: Path) -> None:
    w = build_world(tmp_path)
    # the table names view_label exactly where labels are shown
    named = {name for name, rule in access.ACCESS.items() if needs(rule, VIEW_LABEL)}
    assert named == LABEL_PLACES
    # a curator without view_label is refused there and nowhere a researcher may go
    client = w.client("anonymous")
    client.force_login(curator())
    researcher = w.client("researcher")
    wrong = []
    names = [n for n in access.url_names() if not n.startswith("admin:") and n != "logout"]
    for name in names:
        for key, call in calls_for(name, w):
            got = outcome(send(client, call))
            expected = "refused" if name in LABEL_PLACES else outcome(send(researcher, call))
            if got != expected:
                wrong.append(f"{key} {call.method} {call.path}: {got}, expected {expected}")
    assert not wrong, "\n".join(wrong)
    # and with view_label (and view_campaign) and what a place asks beyond labels (a judge's
    # calibration: the judge and its judgments, and add_campaign to build from it), every
    # place that shows labels opens
    reader = make_user(is_staff=True)
    beyond = ("view_judge", "view_judgment", "add_campaign")
    for codename in ("view_campaign", "view_label", *beyond):
        reader.user_permissions.add(Permission.objects.get(codename=codename))
    client.force_login(reader)
    for name in sorted(LABEL_PLACES):
        for key, call in calls_for(name, w):
            assert outcome(send(client, call)) == "allowed", key


def test_the_admin_reads_labels_by_the_same_permission(tmp_path: Path) -> None:
    w = build_world(tmp_path)
    label = w.objects["annotation.label"]
    request = RequestFactory().get("/admin/")
    for user, allowed in ((curator(), False), (curator(without=""), True)):
        client = w.client("anonymous")
        client.force_login(user)
        for path in ("/admin/annotation/label/", f"/admin/annotation/label/{label.pk}/change/"):
            assert (client.get(path).status_code == 200) is allowed, (path, allowed)
        # the campaign list's action that opens the agreement report too
        request.user = user
        actions = admin.site.registry[Campaign].get_actions(request)
        assert ("agreement_report" in actions) is allowed


def test_the_roles_page_says_it() -> None:
    readme = ACCESS_PAGE.read_text(encoding="utf-8")
    for name in LABEL_PLACES:
        row = next((line for line in readme.splitlines() if line.startswith(f"| `{name}` |")), "")
        assert "`annotation.view_label`" in row, name
