"""Who may do what, over every URL the resolver knows, as every role.

EXPECTED below is the specification, written here independently of config.access: for each URL
name, the roles that may open it. The walk builds a real URL for every name (a new URL with no
entry here fails the test), requests it as each role, and sorts the answer into allowed (any
2xx/3xx that is not a login redirect, or a 400 for a body the view refuses), sent to log in,
or refused (401/403/404). No answer may be a 5xx. Admin pages follow Django's admin: staff and
the model admin's own permission checks, which the walk asks for each page.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth.models import AnonymousUser
from django.contrib.contenttypes.models import ContentType
from django.core import checks
from django.test import RequestFactory
from django.urls import reverse

from annotation.models import Assignment
from benchmarks.models import Benchmark
from config import access
from evaluation.judge_versions import version_for
from evaluation.models import Run
from tests.roles import ROLES, VIRTUAL_CALL, World, build_world

pytestmark = pytest.mark.django_db

SIGNED = frozenset(ROLES) - {"anonymous"}
EVERYONE = frozenset(ROLES)
RESEARCH = frozenset({"researcher", "superuser"})
# `scattered` has view_campaign, view_endpoint and view_tool (no view_label: no labels)
CAMPAIGN_READERS = RESEARCH | {"scattered"}
LABEL_READERS = RESEARCH
NOBODY: frozenset[str] = frozenset()

EXPECTED: dict[str, frozenset[str]] = {
    "login": EVERYONE,
    "logout": EVERYONE,
    "password_reset": EVERYONE,
    "password_reset_done": EVERYONE,
    "password_reset_confirm": EVERYONE,
    "password_reset_complete": EVERYONE,
    "password_change": SIGNED,
    "password_change_done": SIGNED,
    "benchmarks:home": SIGNED,
    # export (issue 17): researchers (view_sample and view_samplerevision)
    "benchmarks:benchmark-export": RESEARCH,
    "benchmarks:detail": RESEARCH,
    "benchmarks:sample": RESEARCH,
    "benchmarks:import": RESEARCH,
    "benchmarks:import POST": RESEARCH,
    "benchmarks:import-job": RESEARCH,
    # --- end of benchmarks pages ---
    "annotation:campaign-list": SIGNED,
    # the studio: members in the page's role, nobody else (not even the superuser)
    "annotation:annotate": frozenset({"annotator"}),
    "annotation:submit": frozenset({"annotator"}),
    "annotation:skip": frozenset({"annotator"}),
    "annotation:undo": frozenset({"annotator"}),
    "annotation:refine-edit": frozenset({"annotator"}),
    "annotation:review": frozenset({"reviewer"}),
    "annotation:review-submit": frozenset({"reviewer"}),
    "annotation:adjudicate": frozenset({"adjudicator"}),
    "annotation:adjudicate-submit": frozenset({"adjudicator"}),
    # M's guidelines: its members (annotator, adjudicator) and whoever reads campaigns
    "annotation:guidelines": frozenset({"annotator", "adjudicator"}) | CAMPAIGN_READERS,
    # researcher pages: what annotators answered, and their times, need view_label too
    "annotation:progress": LABEL_READERS,
    "annotation:agreement": LABEL_READERS,
    "annotation:agreement-summary-csv": LABEL_READERS,
    "annotation:agreement-labels-csv": LABEL_READERS,
    "annotation:agreement-labels-hf": LABEL_READERS,
    # --- a judge version's calibration: judges' and labels' readers; the loop adds a campaign
    "annotation:calibration": LABEL_READERS,
    "annotation:calibration-csv": LABEL_READERS,
    "annotation:calibration-campaign": RESEARCH,
    # --- end of calibration ---
    # --- campaign setup: the researchers' campaign list and setup flow ---
    "annotation:campaign-overview": CAMPAIGN_READERS,
    "annotation:setup-new": RESEARCH,
    "annotation:setup-new POST": RESEARCH,
    "annotation:setup-guidelines-preview": RESEARCH,
    "annotation:setup-details": RESEARCH,
    "annotation:setup-details POST": RESEARCH,
    "annotation:setup-questions": RESEARCH,
    "annotation:setup-questions POST": RESEARCH,
    "annotation:setup-items": RESEARCH,
    "annotation:setup-items POST": RESEARCH,
    "annotation:setup-members": RESEARCH,
    "annotation:setup-members POST": RESEARCH,
    "annotation:setup-preview": RESEARCH,
    "annotation:setup-open": RESEARCH,
    "annotation:setup-open POST": RESEARCH,
    # --- end of campaign setup ---
    "evaluation:run-list": RESEARCH,
    "evaluation:run-detail": RESEARCH,
    "evaluation:run-csv": RESEARCH,
    "evaluation:run-hf": RESEARCH,
    "evaluation:run-control": RESEARCH,
    "evaluation:leaderboard": RESEARCH,
    # a suite's overall score (view_run): the page and its CSV
    "evaluation:overall": RESEARCH,
    "evaluation:overall-csv": RESEARCH,
    "evaluation:job-list": RESEARCH,
    "evaluation:job-detail": RESEARCH,
    "evaluation:job-control": RESEARCH,
    "evaluation:virtual": RESEARCH,
    # run analyses (view_run and view_prediction)
    "evaluation:run-analyses": RESEARCH,
    "evaluation:run-analysis-csv": RESEARCH,
    "evaluation:runs-analyses": RESEARCH,
    "evaluation:runs-analysis-csv": RESEARCH,
    "evaluation:run-golds": RESEARCH,
    # end of run analyses
    # --- home and runs: launching from pages, comparing two runs (issue 17) ---
    "annotation:home": SIGNED,
    "evaluation:run-new": RESEARCH,
    "evaluation:run-new POST": RESEARCH,
    "evaluation:run-compare": RESEARCH,
    "evaluation:run-compare-counts": RESEARCH,
    "evaluation:job-new": RESEARCH,
    "evaluation:job-new POST": RESEARCH,
    # --- end runs ---
    # --- endpoints and judges (issue 29): `scattered` may view endpoints, not change them ---
    "evaluation:endpoint-list": RESEARCH | {"scattered"},
    "evaluation:endpoint-new": RESEARCH,
    "evaluation:endpoint-new POST": RESEARCH,
    "evaluation:endpoint-edit": RESEARCH | {"scattered"},
    "evaluation:endpoint-edit POST": RESEARCH,
    "evaluation:endpoint-check": RESEARCH,
    "evaluation:judge-list": RESEARCH,
    "evaluation:judge-new": RESEARCH,
    "evaluation:judge-new POST": RESEARCH,
    "evaluation:judge-detail": RESEARCH,
    # --- end of endpoints and judges ---
    # the API
    "api-root": SIGNED,
    "api-schema": SIGNED,
    "benchmark-list": RESEARCH,
    "benchmark-detail": RESEARCH,
    "tool-list": RESEARCH | {"scattered"},
    "tool-detail": RESEARCH | {"scattered"},
    "sample-list": RESEARCH,
    "sample-detail": RESEARCH,
    "endpoint-list": RESEARCH | {"scattered"},
    "endpoint-list POST": RESEARCH,
    "endpoint-detail": RESEARCH | {"scattered"},
    "run-list": RESEARCH,
    "run-detail": RESEARCH,
    "run-analyses": RESEARCH,
    "prediction-list": RESEARCH,
    "prediction-detail": RESEARCH,
    "campaign-list": SIGNED,
    "campaign-next": frozenset({"annotator"}),
    "campaign-submit": frozenset({"annotator"}),
    "campaign-skip": frozenset({"annotator"}),
    "agreement-list": LABEL_READERS,
    "agreement-detail": LABEL_READERS,
}


@dataclass
class Call:
    method: str
    path: str
    data: Any = None
    json: bool = False


def calls_for(name: str, w: World) -> list[tuple[str, Call]]:
    """The requests that exercise one URL name: (key into EXPECTED, call)."""
    m, f = w.motivation.pk, w.refinement.pk
    run, job = w.run.pk, w.job.pk
    pages: dict[str, Call] = {
        "login": Call("GET", reverse("login")),
        "logout": Call("POST", reverse("logout")),
        "password_reset": Call("GET", reverse("password_reset")),
        "password_reset_done": Call("GET", reverse("password_reset_done")),
        "password_reset_confirm": Call(
            "GET", reverse("password_reset_confirm", args=["MQ", "bad-token"])
        ),
        "password_reset_complete": Call("GET", reverse("password_reset_complete")),
        "password_change": Call("GET", reverse("password_change")),
        "password_change_done": Call("GET", reverse("password_change_done")),
        "benchmarks:benchmark-export": Call("GET", f"/benchmarks/{w.benchmark.pk}/export/"),
        "benchmarks:home": Call("GET", "/benchmarks/"),
        "benchmarks:detail": Call("GET", f"/benchmarks/{w.benchmark.pk}/"),
        "benchmarks:sample": Call("GET", f"/benchmarks/{w.benchmark.pk}/samples/{w.sample.pk}/"),
        "benchmarks:import-job": Call("GET", f"/benchmarks/import/{w.import_job.pk}/"),
        "annotation:campaign-list": Call("GET", "/annotate/"),
        "annotation:annotate": Call("GET", f"/annotate/{m}/"),
        "annotation:submit": Call("POST", f"/annotate/{m}/submit/{w.assignment.pk}/", {}),
        "annotation:skip": Call("POST", f"/annotate/{m}/skip/{w.assignment.pk}/", {}),
        "annotation:undo": Call("POST", f"/annotate/{m}/undo/", {}),
        "annotation:refine-edit": Call(
            "POST", f"/annotate/{f}/refine/{w.refine_assignment.pk}/", {"op": "unknown"}
        ),
        "annotation:guidelines": Call("GET", f"/annotate/{m}/guidelines/"),
        "annotation:review": Call("GET", f"/review/{f}/"),
        "annotation:review-submit": Call(
            "POST", f"/review/{f}/{w.pending.pk}/", {"decision": "return", "comment": "again"}
        ),
        "annotation:adjudicate": Call("GET", f"/adjudicate/{m}/"),
        "annotation:adjudicate-submit": Call("POST", f"/adjudicate/{m}/{w.disputed.pk}/", {}),
        "annotation:progress": Call("GET", f"/campaigns/{m}/progress/"),
        "annotation:agreement": Call("GET", f"/campaigns/{m}/agreement/"),
        "annotation:agreement-summary-csv": Call("GET", f"/campaigns/{m}/agreement/summary.csv"),
        "annotation:agreement-labels-csv": Call("GET", f"/campaigns/{m}/agreement/labels.csv"),
        "annotation:agreement-labels-hf": Call("GET", f"/campaigns/{m}/agreement/labels-hf.zip"),
        "evaluation:run-list": Call("GET", "/runs/"),
        "evaluation:run-detail": Call("GET", f"/runs/{run}/"),
        "evaluation:run-csv": Call("GET", f"/runs/{run}/predictions.csv"),
        "evaluation:run-hf": Call("GET", f"/runs/{run}/predictions-hf.zip"),
        "evaluation:run-control": Call("POST", f"/runs/{run}/cancel/", {}),
        "evaluation:leaderboard": Call("GET", f"/leaderboard/{w.benchmark.pk}/answer/"),
        "evaluation:job-list": Call("GET", "/judging/"),
        "evaluation:job-detail": Call("GET", f"/judging/{job}/"),
        "evaluation:job-control": Call("POST", f"/judging/{job}/cancel/", {}),
        "evaluation:virtual": Call("POST", "/virtual/", VIRTUAL_CALL, json=True),
        # run analyses: the world's run is of the generic suite, whose one analysis is by_split
        "evaluation:run-analyses": Call("GET", f"/runs/{run}/analyses/"),
        "evaluation:run-analysis-csv": Call("GET", f"/runs/{run}/analyses/by_split.csv"),
        "evaluation:runs-analyses": Call("GET", f"/runs/analyses/?run={run}"),
        "evaluation:runs-analysis-csv": Call("GET", f"/runs/analyses/by_split.csv?run={run}"),
        "evaluation:run-golds": Call("GET", f"/runs/{run}/golds/"),
        # end of run analyses
        "api-root": Call("GET", "/api/"),
        "api-schema": Call("GET", "/api/schema/"),
        "benchmark-list": Call("GET", "/api/benchmarks/"),
        "benchmark-detail": Call("GET", f"/api/benchmarks/{w.benchmark.pk}/"),
        "tool-list": Call("GET", "/api/tools/"),
        "tool-detail": Call("GET", f"/api/tools/{w.tool.pk}/"),
        "sample-list": Call("GET", "/api/samples/"),
        "sample-detail": Call("GET", f"/api/samples/{w.sample.pk}/"),
        "endpoint-detail": Call("GET", f"/api/endpoints/{w.endpoint.pk}/"),
        "run-list": Call("GET", "/api/runs/"),
        "run-detail": Call("GET", f"/api/runs/{run}/"),
        "run-analyses": Call("GET", f"/api/runs/{run}/analyses/"),
        "prediction-list": Call("GET", f"/api/predictions/?run={run}"),
        "prediction-detail": Call("GET", f"/api/predictions/{w.prediction.pk}/"),
        "campaign-list": Call("GET", "/api/campaigns/"),
        "campaign-next": Call("POST", f"/api/campaigns/{m}/next/", {}, json=True),
        "campaign-submit": Call("POST", f"/api/campaigns/{m}/submit/", {}, json=True),
        "campaign-skip": Call("POST", f"/api/campaigns/{m}/skip/", {}, json=True),
        "annotation:campaign-overview": Call("GET", "/campaigns/"),
        "annotation:setup-guidelines-preview": Call(
            "POST", "/campaigns/guidelines-preview/", {"guidelines": "# Hello"}
        ),
        "annotation:setup-preview": Call("GET", f"/campaigns/{m}/setup/preview/"),
        "agreement-list": Call("GET", "/api/agreement/"),
        "agreement-detail": Call("GET", f"/api/agreement/{m}/"),
    }
    # campaign setup: each step read, and written (M is open: a researcher's change is
    # refused with a 400 naming the status, anyone else never reaches the view)
    setup = {
        "annotation:setup-details": f"/campaigns/{m}/setup/",
        "annotation:setup-questions": f"/campaigns/{m}/setup/questions/",
        "annotation:setup-items": f"/campaigns/{m}/setup/items/",
        "annotation:setup-members": f"/campaigns/{m}/setup/members/",
        "annotation:setup-open": f"/campaigns/{m}/setup/open/",
    }
    if name in setup:
        return [
            (name, Call("GET", setup[name])),
            (f"{name} POST", Call("POST", setup[name], {"action": "save", "questions": "0"})),
        ]
    if name == "annotation:setup-new":
        # a name that exists already: refused with a 400, nothing created
        taken = {"kind": "motivation", "name": w.motivation.name}
        return [
            (name, Call("GET", "/campaigns/new/")),
            (f"{name} POST", Call("POST", "/campaigns/new/", taken)),
        ]
    # --- home and runs (issue 17): the launch pages read and write with the add permission ---
    if name == "annotation:home":
        return [(name, Call("GET", reverse("annotation:home")))]
    if name in ("evaluation:run-new", "evaluation:job-new"):
        path = "/runs/new/" if name == "evaluation:run-new" else "/judging/new/"
        return [(name, Call("GET", path)), (f"{name} POST", Call("POST", path, {}))]
    if name in ("evaluation:run-compare", "evaluation:run-compare-counts"):
        other, _ = Run.objects.get_or_create(
            benchmark=w.benchmark, task=w.run.task, name="compared with", status="done"
        )
        return [(name, Call("GET", f"{reverse(name)}?a={run}&b={other.pk}"))]
    if name in ("evaluation:overall", "evaluation:overall-csv"):
        # a benchmark whose suite declares an overall score (the world's generic one does not)
        scored, _ = Benchmark.objects.get_or_create(name="overall scored", suite="bfcl")
        path = f"/leaderboard/{scored.pk}/"
        return [(name, Call("GET", path if name == "evaluation:overall" else f"{path}overall.csv"))]
    # --- end runs ---
    # --- endpoints and judges: each form read, and written with nothing (refused, 400) ---
    endpoint, judge = w.endpoint.pk, w.job.judge_id
    forms = {
        "evaluation:endpoint-new": "/endpoints/new/",
        "evaluation:endpoint-edit": f"/endpoints/{endpoint}/",
        "evaluation:judge-new": "/judges/new/",
    }
    if name in forms:
        return [(name, Call("GET", forms[name])), (f"{name} POST", Call("POST", forms[name], {}))]
    if name == "evaluation:endpoint-list":
        return [(name, Call("GET", "/endpoints/"))]
    if name == "evaluation:endpoint-check":
        # the world's endpoint listens nowhere (port 9): the check says so, nothing is saved
        return [(name, Call("POST", f"/endpoints/{endpoint}/check/", {}))]
    if name == "evaluation:judge-list":
        return [(name, Call("GET", "/judges/"))]
    if name == "evaluation:judge-detail":
        return [(name, Call("GET", f"/judges/{judge}/"))]
    # a judge version's calibration: read, and the loop asked for nothing (refused, 400)
    if name.startswith("annotation:calibration"):
        number = version_for(w.job.judge).number  # the world's judge as it stands
        calibration = f"/judges/{judge}/v{number}/calibration"
    if name == "annotation:calibration":
        return [(name, Call("GET", f"{calibration}/"))]
    if name == "annotation:calibration-csv":
        return [(name, Call("GET", f"{calibration}.csv"))]
    if name == "annotation:calibration-campaign":
        return [(name, Call("POST", f"{calibration}/campaign/", {"size": "5"}))]
    # --- end of endpoints and judges ---
    if name == "endpoint-list":
        new = {"name": "added", "base_url": "http://127.0.0.1:9/v1", "model": "m"}
        return [
            ("endpoint-list", Call("GET", "/api/endpoints/")),
            ("endpoint-list POST", Call("POST", "/api/endpoints/", new, json=True)),
        ]
    if name == "benchmarks:import":
        # A POST without files: refused by the service (400, allowed through), nothing queued.
        return [
            ("benchmarks:import", Call("GET", "/benchmarks/import/")),
            ("benchmarks:import POST", Call("POST", "/benchmarks/import/", {"suite": "generic"})),
        ]
    if name in pages:
        return [(name, pages[name])]
    return []


def send(client: Any, call: Call) -> Any:
    if call.method == "GET":
        return client.get(call.path)
    if call.json:
        return client.post(call.path, json.dumps(call.data), content_type="application/json")
    return client.post(call.path, call.data or {})


def outcome(response: Any) -> str:
    status = response.status_code
    if status >= 500:
        return f"server error {status}"
    location = response.get("Location", "") if status in (301, 302, 303) else ""
    if "/accounts/login/" in location or "/admin/login/" in location:
        return "login"
    if status in (401, 403, 404):
        return "refused"
    return "allowed"


@pytest.fixture
def world(tmp_path: Path) -> World:
    return build_world(tmp_path)


# --- the pages and the API ----------------------------------------------------------------------


@pytest.mark.parametrize("role", ROLES)
def test_every_page_and_api_url_answers_each_role_as_the_table_says(
    role: str, world: World
) -> None:
    names = [name for name in access.url_names() if not name.startswith("admin:")]
    names.sort(key=lambda name: name == "logout")  # last: it ends the session
    untested = [name for name in names if not calls_for(name, world)]
    assert not untested, f"URLs with no access expectation in this test: {untested}"
    client = world.client(role)
    wrong = []
    for name in names:
        for key, call in calls_for(name, world):
            response = send(client, call)
            got = outcome(response)
            if key == "logout" and response.status_code == 302:
                got = "allowed"  # logging out ends on the login page, whoever you were
            expected = "allowed" if role in EXPECTED[key] else ("login", "refused")
            if got != expected and got not in expected:
                wrong.append(f"{key} {call.method} {call.path}: {got}, expected {expected}")
            # a role that may not open a page learns nothing, and an anonymous one is asked
            # to sign in first (pages) or refused (the API, which has no login page)
            machine = call.path.startswith(("/api/", "/virtual/"))
            if role == "anonymous" and got == "refused" and not machine:
                wrong.append(f"{key}: an anonymous visitor is refused, not sent to log in")
    assert not wrong, "\n".join(wrong)


def test_the_table_names_every_url_and_manage_check_enforces_it(settings: Any) -> None:
    names = access.url_names()
    assert all(access.rule_for(name) is not None for name in names)
    assert not access.check_every_url_has_a_rule()
    # a URL added without a rule fails the system check and is refused meanwhile
    settings.ROOT_URLCONF = "tests.config.urls_without_rule"
    errors = access.check_every_url_has_a_rule()
    assert [e.id for e in errors] == ["access.E001"]
    assert "unruled" in errors[0].msg
    assert errors[0].level == checks.ERROR
    # and `manage.py check` runs it (registered at start-up, the table imported when it runs)
    assert "access.E001" in [e.id for e in checks.run_checks(tags=[checks.Tags.security])]


def test_a_url_without_a_rule_is_refused(settings: Any, client: Any) -> None:
    settings.ROOT_URLCONF = "tests.config.urls_without_rule"
    from tests.factories import make_superuser

    client.force_login(make_superuser())
    assert client.get("/unruled/").status_code == 403


# --- the admin ----------------------------------------------------------------------------------

ADMIN_OPERATIONS = ("changelist", "add", "change", "delete", "history")


def admin_calls(name: str, w: World) -> list[Call]:
    """Requests for one admin URL name (every model's pages, the site's own pages)."""
    short = name.removeprefix("admin:")
    for key, obj in w.objects.items():
        app, model = key.split(".")
        prefix = f"{app}_{model}_"
        if short.startswith(prefix):
            operation = short[len(prefix) :]
            if operation in ("changelist", "add"):
                return [Call("GET", reverse(name))]
            if operation in ("change", "delete", "history"):
                return [Call("GET", reverse(name, args=[obj.pk]))]
            if operation == "build":
                return [Call("GET", reverse(name, args=[obj.pk]))]
            if operation == "calibrate":
                return [Call("GET", reverse(name))]
            if operation == "password_change":
                return [Call("GET", reverse(name, args=[obj.pk]))]
    fixed = {
        "index": "/admin/",
        "login": "/admin/login/",
        "password_change": "/admin/password_change/",
        "password_change_done": "/admin/password_change/done/",
        "autocomplete": "/admin/autocomplete/?app_label=benchmarks&model_name=sample"
        "&field_name=sample",
        "jsi18n": "/admin/jsi18n/",
        "app_list": "/admin/evaluation/",
        "django.views.generic.base.RedirectView": f"/admin/evaluation/run/{w.run.pk}/",
        "django.contrib.admin.sites.AdminSite.catch_all_view": "/admin/nothing-here/",
    }
    if short == "logout":
        return [Call("POST", "/admin/logout/", {})]
    if short == "view_on_site":
        content_type = ContentType.objects.get_for_model(w.run)
        return [Call("GET", f"/admin/r/{content_type.pk}/{w.run.pk}/")]
    if short in fixed:
        return [Call("GET", fixed[short])]
    return []


def admin_expected(name: str, role: str, w: World) -> str:
    """What Django's admin should answer: non-staff users are sent to log in (the login page and
    logout answer anyone); staff get what the model admin's own permission methods allow."""
    short = name.removeprefix("admin:")
    if short in ("login", "logout"):
        return "allowed"
    user = w.users.get(role)
    if user is None or not user.is_staff:
        return "login"
    if short in (
        "view_on_site",
        "django.contrib.admin.sites.AdminSite.catch_all_view",
        "autocomplete",
    ):
        return "refused"  # no model here has a public URL; nothing lives there; no search field
    request = RequestFactory().get("/admin/")
    request.user = user or AnonymousUser()
    if short in ("index", "password_change", "password_change_done", "jsi18n"):
        return "allowed"
    if short == "django.views.generic.base.RedirectView":  # /admin/<model>/<id>/ -> change page
        return "allowed"
    if short == "app_list":
        return "allowed" if admin.site.get_app_list(request, "evaluation") else "refused"
    for key, obj in w.objects.items():
        app, model = key.split(".")
        prefix = f"{app}_{model}_"
        if not short.startswith(prefix):
            continue
        model_admin = admin.site.registry[type(obj)]
        operation = short[len(prefix) :]
        allowed = {
            "changelist": model_admin.has_view_or_change_permission(request),
            "history": model_admin.has_view_or_change_permission(request, obj),
            "change": model_admin.has_view_or_change_permission(request, obj),
            "add": model_admin.has_add_permission(request),
            "delete": model_admin.has_delete_permission(request, obj),
            "build": model_admin.has_change_permission(request, obj),
            "calibrate": model_admin.has_add_permission(request),
            "password_change": model_admin.has_change_permission(request, obj),
        }[operation]
        return "allowed" if allowed else "refused"
    raise AssertionError(f"no expectation for {name}")


@pytest.mark.parametrize("role", ROLES)
def test_every_admin_url_answers_each_role_as_its_permissions_say(role: str, world: World) -> None:
    names = [name for name in access.url_names() if name.startswith("admin:")]
    names.sort(key=lambda name: name == "admin:logout")  # last: it ends the session
    untested = [name for name in names if not admin_calls(name, world)]
    assert not untested, f"admin URLs this test does not request: {untested}"
    client = world.client(role)
    wrong = []
    for name in names:
        expected = admin_expected(name, role, world)
        for call in admin_calls(name, world):
            response = send(client, call)
            got = outcome(response)
            if name == "admin:logout" and response.status_code in (200, 302):
                got = "allowed"  # logging out ends on a login page, whoever you were
            if got != expected:
                wrong.append(f"{name} {call.path}: {got}, expected {expected}")
    assert not wrong, "\n".join(wrong)


def test_the_researcher_can_do_researcher_work_in_the_admin(world: World) -> None:
    client = world.client("researcher")
    for path in (
        "/admin/evaluation/run/",
        "/admin/evaluation/run/add/",
        "/admin/evaluation/endpoint/",
        "/admin/evaluation/endpoint/add/",
        "/admin/evaluation/judgejob/",
        "/admin/annotation/campaign/",
        "/admin/annotation/campaign/add/",
        f"/admin/annotation/campaign/{world.motivation.pk}/change/",
        f"/admin/annotation/campaign/{world.motivation.pk}/build/",
        "/admin/benchmarks/sample/",
        "/admin/annotation/label/",
    ):
        assert client.get(path).status_code == 200, path
    # never deletes, never manages accounts
    for path in (
        f"/admin/evaluation/run/{world.run.pk}/delete/",
        f"/admin/annotation/campaign/{world.motivation.pk}/delete/",
        "/admin/auth/user/",
        "/admin/auth/group/",
    ):
        assert client.get(path).status_code == 403, path


# --- admin actions: a read permission never writes ----------------------------------------------

# Actions that only lead to a page (and change nothing).
READING_ACTIONS = {"agreement_report"}


def test_a_user_who_may_only_view_a_model_gets_no_action_that_writes() -> None:
    from tests.factories import make_user
    from tests.roles import grant

    for model, model_admin in admin.site.registry.items():
        opts = model._meta
        user = grant(make_user(is_staff=True), f"view_{opts.model_name}")
        request = RequestFactory().get("/admin/")
        request.user = user
        offered = set(model_admin.get_actions(request))
        assert offered <= READING_ACTIONS, f"{opts.label}: a viewer is offered {offered}"
        for name in model_admin.actions or ():
            action = getattr(model_admin, name) if isinstance(name, str) else name
            declared = getattr(action, "allowed_permissions", ())
            assert declared, f"{opts.label}: the action {name} names no permission"


def test_running_an_action_with_only_the_view_permission_changes_nothing(world: World) -> None:
    from tests.factories import make_user
    from tests.roles import grant

    viewer = grant(make_user(is_staff=True), "view_run")
    client = world.client("anonymous")
    client.force_login(viewer)
    response = client.post(
        "/admin/evaluation/run/",
        {"action": "cancel_runs", "_selected_action": [world.run.pk]},
    )
    assert response.status_code in (200, 302)
    world.run.refresh_from_db()
    assert world.run.status == "running"


def test_the_docs_show_the_table_the_code_applies() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "access.md").read_text(encoding="utf-8")
    assert access.access_markdown() in page, "docs/access.md is out of date: manage.py access_table"


@pytest.mark.parametrize("role", ROLES)
def test_a_submit_that_asks_for_the_next_item_gives_it_only_to_the_campaigns_annotator(
    role: str, world: World
) -> None:
    """`"next": true` on the submit (one request per item) reveals an item and takes a lease:
    only the campaign's annotator gets either; every other role is refused and nothing is
    leased for them."""
    campaign, assignment = world.motivation, world.assignment
    before = Assignment.objects.filter(campaign=campaign).count()
    response = world.client(role).post(
        f"/api/campaigns/{campaign.pk}/submit/",
        {
            "assignment": assignment.pk,
            "answers": {"reason": "A"},
            "token": str(uuid.uuid4()),
            "next": True,
        },
        content_type="application/json",
    )
    if role == "annotator":
        assert response.status_code in (200, 201), response.content
        assert set(response.json()) == {"label", "created", "next"}
        given = response.json()["next"]
        assert (
            given["assignment"] is None
            or Assignment.objects.get(pk=given["assignment"]).annotator == world.users["annotator"]
        )
    else:
        assert response.status_code in (401, 403, 404), (role, response.status_code)
        assert "next" not in response.content.decode()
        assert Assignment.objects.filter(campaign=campaign).count() == before
