"""Who may do what: the one table of access rules, by URL name, and the two places that enforce
it (a middleware for pages, a DRF permission class for the API).

Roles:
- anonymous: the login and password-reset pages only.
- annotator, reviewer, adjudicator: roles *in a campaign* (annotation.Member). The studio pages
  of a campaign (annotate, review, adjudicate, and their API) need membership with that role,
  whatever model permissions the user has, a superuser's included: a label, a review or an
  adjudication is always somebody's who was asked for it. Another campaign is a 404.
- researcher: the `researchers` group, which holds annotation.roles.RESEARCHER_PERMISSIONS
  (granted by the migration annotation 0004 and kept by every `migrate`). Researcher pages
  (benchmarks, samples with their gold, endpoints, runs, predictions, judging, leaderboards,
  campaign progress and agreement) each need their model permissions, so a staff user given
  scattered permissions gets exactly the pages those permissions name and nothing more; a read
  permission never writes. Labels are read with `annotation.view_label` wherever they are
  shown (READ_LABELS).
- superuser: every permission, but studio pages still need membership.
- the admin (`admin:*`) is Django's: staff status and model permissions, checked per page.

A URL without a rule is refused (403) and fails `manage.py check`, so a new page cannot open
by accident; tests/config/test_access.py walks every URL pattern as every role.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import Any

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core import checks
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils.module_loading import import_string
from rest_framework import permissions as drf_permissions
from rest_framework.exceptions import NotFound

log = logging.getLogger(__name__)


@cache
def campaign_lookup() -> Callable[[Any, int, str | None], Any]:
    """The function that finds a campaign for a user in a role (Http404 when they are not a
    member): settings.ACCESS_CAMPAIGN_LOOKUP, so this module, which every app's views import,
    imports no app itself."""
    return import_string(settings.ACCESS_CAMPAIGN_LOOKUP)


# What a rule fetched to decide, kept for the view for the rest of the request (the studio's
# campaign: the view would otherwise read it again).
Memo = dict[tuple[Any, ...], Any]


class Decision(Enum):
    ALLOW = "allow"
    LOGIN = "login"  # anonymous: sign in first
    DENY = "deny"  # signed in, not allowed: 403
    HIDE = "hide"  # not allowed, and the object's existence is not revealed: 404


class Rule:
    """Decides one request from the user and the URL's arguments. `text` says it in words (the
    table of docs/access.md is generated from it)."""

    text = ""

    def decide(
        self, user: Any, kwargs: Mapping[str, Any], method: str, memo: Memo | None = None
    ) -> Decision:
        raise NotImplementedError


class _Public(Rule):
    text = "anyone"

    def decide(
        self, user: Any, kwargs: Mapping[str, Any], method: str, memo: Memo | None = None
    ) -> Decision:
        return Decision.ALLOW


class _SignedIn(Rule):
    text = "signed in"

    def decide(
        self, user: Any, kwargs: Mapping[str, Any], method: str, memo: Memo | None = None
    ) -> Decision:
        return Decision.ALLOW if user.is_authenticated else Decision.LOGIN


@dataclass(frozen=True)
class Perm(Rule):
    """Every one of these model permissions (the researchers group has them all)."""

    perms: tuple[str, ...]

    def __init__(self, *perms: str) -> None:
        object.__setattr__(self, "perms", perms)

    @property
    def text(self) -> str:  # type: ignore[override]
        return " and ".join(f"`{p}`" for p in self.perms)

    def decide(
        self, user: Any, kwargs: Mapping[str, Any], method: str, memo: Memo | None = None
    ) -> Decision:
        if not user.is_authenticated:
            return Decision.LOGIN
        return Decision.ALLOW if user.has_perms(self.perms) else Decision.DENY


@dataclass(frozen=True)
class Member(Rule):
    """Membership of the campaign named by the URL (`kwarg`) in `role` (any role: None)."""

    role: str | None
    kwarg: str = "campaign_id"

    @property
    def text(self) -> str:  # type: ignore[override]
        return f"{self.role or 'member'} of the campaign"

    def decide(
        self, user: Any, kwargs: Mapping[str, Any], method: str, memo: Memo | None = None
    ) -> Decision:
        if not user.is_authenticated:
            return Decision.LOGIN
        raw = str(kwargs.get(self.kwarg, ""))
        if not raw.isdigit():
            return Decision.HIDE
        try:
            campaign = campaign_lookup()(user, int(raw), self.role)
        except Http404:
            return Decision.HIDE
        if memo is not None:
            memo[("campaign", int(raw), self.role)] = campaign
        return Decision.ALLOW


@dataclass(frozen=True)
class AnyOf(Rule):
    """The first rule that allows; otherwise what the first one decided."""

    rules: tuple[Rule, ...]

    def __init__(self, *rules: Rule) -> None:
        object.__setattr__(self, "rules", rules)

    @property
    def text(self) -> str:  # type: ignore[override]
        return " or ".join(rule.text for rule in self.rules)

    def decide(
        self, user: Any, kwargs: Mapping[str, Any], method: str, memo: Memo | None = None
    ) -> Decision:
        decisions = [rule.decide(user, kwargs, method, memo) for rule in self.rules]
        return Decision.ALLOW if Decision.ALLOW in decisions else decisions[0]


@dataclass(frozen=True)
class ByMethod(Rule):
    """One rule for reading (GET, HEAD, OPTIONS) and one for writing (POST, PUT, PATCH,
    DELETE)."""

    read: Rule
    write: Rule

    @property
    def text(self) -> str:  # type: ignore[override]
        return f"read: {self.read.text}; write: {self.write.text}"

    def decide(
        self, user: Any, kwargs: Mapping[str, Any], method: str, memo: Memo | None = None
    ) -> Decision:
        rule = self.read if method in drf_permissions.SAFE_METHODS else self.write
        return rule.decide(user, kwargs, method, memo)


class _Key(Rule):
    """`POST /virtual/`: a client key of VIRTUAL_API_KEYS, which StableToolBench's clients send
    inside the JSON body, or a signed-in user with the permission. The view decides (it has to
    read the body, with the same bounded reader as every JSON body) through `virtual_call_allowed`
    below; this layer lets the request through to it."""

    text = "a key of `VIRTUAL_API_KEYS`, or `evaluation.call_virtualapi`"
    perm = "evaluation.call_virtualapi"

    def decide(
        self, user: Any, kwargs: Mapping[str, Any], method: str, memo: Memo | None = None
    ) -> Decision:
        return Decision.ALLOW


class _Admin(Rule):
    text = "staff, with the model permission of each admin page (Django's admin)"

    def decide(
        self, user: Any, kwargs: Mapping[str, Any], method: str, memo: Memo | None = None
    ) -> Decision:
        return Decision.ALLOW


PUBLIC = _Public()
SIGNED_IN = _SignedIn()
KEY = _Key()
ADMIN = _Admin()
ANNOTATOR = Member("annotator")
REVIEWER = Member("reviewer")
ADJUDICATOR = Member("adjudicator")
API_ANNOTATOR = Member("annotator", kwarg="pk")
VIEW_CAMPAIGN = Perm("annotation.view_campaign")
# Labels (what each annotator answered, and how long they took) are read with view_label
# wherever they are shown: one by one (the labels CSV; the admin's label list, by Django's own
# check of the same permission) or per annotator (the agreement report, its summary CSV and
# API, a campaign's progress). Reading a campaign alone shows none.
READ_LABELS = Perm("annotation.view_campaign", "annotation.view_label")
VIEW_RUN = Perm("evaluation.view_run")
# A judge's calibration: its verdicts (the judge page's and the job page's) next to the labels
# they are compared with (READ_LABELS).
CALIBRATION_PERMISSIONS = (
    "evaluation.view_judge",
    "evaluation.view_judgment",
    "annotation.view_campaign",
    "annotation.view_label",
)
CALIBRATION = Perm(*CALIBRATION_PERMISSIONS)
# Setting a campaign up changes it (its items are built by whoever may change it, as in the admin).
SETUP_CAMPAIGN = Perm("annotation.change_campaign")

# The table. Keys are URL names as Django resolves them (`namespace:name`); a key ending in `*`
# covers every name with that prefix.
ACCESS: dict[str, Rule] = {
    # accounts
    "login": PUBLIC,
    "logout": PUBLIC,
    "password_reset": PUBLIC,
    "password_reset_done": PUBLIC,
    "password_reset_confirm": PUBLIC,
    "password_reset_complete": PUBLIC,
    "password_change": SIGNED_IN,
    "password_change_done": SIGNED_IN,
    "admin:*": ADMIN,
    # pages
    "benchmarks:home": SIGNED_IN,
    # export: every sample's gold and its revisions' authors; a GET, reads only
    "benchmarks:benchmark-export": Perm("benchmarks.view_sample", "benchmarks.view_samplerevision"),
    # --- benchmarks pages: researchers; the gold is on the sample page only ---
    "benchmarks:detail": Perm(
        "benchmarks.view_benchmark", "benchmarks.view_tool", "benchmarks.view_sample"
    ),
    "benchmarks:sample": Perm(
        "benchmarks.view_benchmark", "benchmarks.view_tool", "benchmarks.view_sample"
    ),
    "benchmarks:import": ByMethod(
        read=Perm("benchmarks.view_importjob"),
        write=Perm(
            "benchmarks.add_importjob",
            "benchmarks.add_benchmark",
            "benchmarks.add_tool",
            "benchmarks.add_sample",
            "benchmarks.change_sample",
        ),
    ),
    "benchmarks:import-job": Perm("benchmarks.view_importjob"),
    # --- end of benchmarks pages ---
    "annotation:campaign-list": SIGNED_IN,
    "annotation:annotate": ANNOTATOR,
    "annotation:submit": ANNOTATOR,
    "annotation:skip": ANNOTATOR,
    "annotation:undo": ANNOTATOR,
    "annotation:refine-edit": ANNOTATOR,
    "annotation:guidelines": AnyOf(Member(None), VIEW_CAMPAIGN),
    "annotation:review": REVIEWER,
    "annotation:review-submit": REVIEWER,
    "annotation:adjudicate": ADJUDICATOR,
    "annotation:adjudicate-submit": ADJUDICATOR,
    "annotation:progress": READ_LABELS,
    "annotation:agreement": READ_LABELS,
    "annotation:agreement-summary-csv": READ_LABELS,
    "annotation:agreement-labels-csv": READ_LABELS,
    # the same labels as labels.csv, as a Hugging Face dataset folder
    "annotation:agreement-labels-hf": READ_LABELS,
    # --- a judge version's calibration (annotation.calibration): the judge page's reader who
    # reads the verdicts and the labels they are compared with; the loop creates a campaign ---
    "annotation:calibration": CALIBRATION,
    "annotation:calibration-csv": CALIBRATION,
    "annotation:calibration-campaign": Perm(*CALIBRATION_PERMISSIONS, "annotation.add_campaign"),
    # --- end of calibration ---
    # --- campaign setup (annotation.setup_views): researchers set campaigns up as a flow ---
    "annotation:campaign-overview": VIEW_CAMPAIGN,
    "annotation:setup-new": Perm("annotation.add_campaign"),
    "annotation:setup-guidelines-preview": AnyOf(
        Perm("annotation.add_campaign"), Perm("annotation.change_campaign")
    ),
    "annotation:setup-details": SETUP_CAMPAIGN,
    "annotation:setup-questions": Perm(
        "annotation.change_campaign",
        "annotation.add_question",
        "annotation.change_question",
        "annotation.delete_question",
    ),
    "annotation:setup-items": SETUP_CAMPAIGN,
    "annotation:setup-members": Perm(
        "annotation.change_campaign", "annotation.add_member", "annotation.delete_member"
    ),
    "annotation:setup-preview": SETUP_CAMPAIGN,
    "annotation:setup-open": SETUP_CAMPAIGN,
    # --- end of campaign setup ---
    "evaluation:run-list": VIEW_RUN,
    "evaluation:run-detail": Perm("evaluation.view_run", "evaluation.view_prediction"),
    "evaluation:run-csv": Perm("evaluation.view_run", "evaluation.view_prediction"),
    # the same rows as the CSV, as a Hugging Face dataset folder
    "evaluation:run-hf": Perm("evaluation.view_run", "evaluation.view_prediction"),
    "evaluation:run-control": Perm("evaluation.change_run"),
    "evaluation:leaderboard": VIEW_RUN,
    # a suite's overall score over each model's runs: read from the runs' metrics alone
    "evaluation:overall": VIEW_RUN,
    "evaluation:overall-csv": VIEW_RUN,
    # run analyses: drawn from the predictions, so they need what the predictions' pages need
    "evaluation:run-analyses": Perm("evaluation.view_run", "evaluation.view_prediction"),
    "evaluation:run-analysis-csv": Perm("evaluation.view_run", "evaluation.view_prediction"),
    "evaluation:runs-analyses": Perm("evaluation.view_run", "evaluation.view_prediction"),
    "evaluation:runs-analysis-csv": Perm("evaluation.view_run", "evaluation.view_prediction"),
    # end of run analyses
    # a run under each gold version: its predictions scored again
    "evaluation:run-golds": Perm("evaluation.view_run", "evaluation.view_prediction"),
    "evaluation:job-list": Perm("evaluation.view_judgejob"),
    "evaluation:job-detail": Perm("evaluation.view_judgejob", "evaluation.view_judgment"),
    "evaluation:job-control": Perm("evaluation.change_judgejob"),
    "evaluation:virtual": KEY,
    # --- home: what it shows depends on the user's permissions ---
    "annotation:home": SIGNED_IN,
    # --- runs: launching from pages, comparing two runs ---
    "evaluation:run-new": Perm("evaluation.add_run"),
    "evaluation:run-compare": Perm("evaluation.view_run", "evaluation.view_prediction"),
    "evaluation:run-compare-counts": Perm("evaluation.view_run", "evaluation.view_prediction"),
    "evaluation:job-new": Perm("evaluation.add_judgejob"),
    # --- end runs ---
    # --- endpoints and judges: the pages write what the admin and the API write ---
    "evaluation:endpoint-list": Perm("evaluation.view_endpoint"),
    "evaluation:endpoint-new": Perm("evaluation.view_endpoint", "evaluation.add_endpoint"),
    "evaluation:endpoint-edit": ByMethod(
        read=Perm("evaluation.view_endpoint"),
        write=Perm("evaluation.view_endpoint", "evaluation.change_endpoint"),
    ),
    # the admin's action asks the change permission too
    "evaluation:endpoint-check": Perm("evaluation.view_endpoint", "evaluation.change_endpoint"),
    "evaluation:judge-list": Perm("evaluation.view_judge"),
    "evaluation:judge-new": Perm("evaluation.view_judge", "evaluation.add_judge"),
    "evaluation:judge-detail": Perm("evaluation.view_judge"),
    # --- end of endpoints and judges ---
    # the API
    "api-root": SIGNED_IN,
    "api-schema": SIGNED_IN,
    "benchmark-list": Perm("benchmarks.view_benchmark"),
    "benchmark-detail": Perm("benchmarks.view_benchmark"),
    "tool-list": Perm("benchmarks.view_tool"),
    "tool-detail": Perm("benchmarks.view_tool"),
    "sample-list": Perm("benchmarks.view_sample"),
    "sample-detail": Perm("benchmarks.view_sample"),
    "endpoint-list": ByMethod(
        read=Perm("evaluation.view_endpoint"), write=Perm("evaluation.add_endpoint")
    ),
    "endpoint-detail": Perm("evaluation.view_endpoint"),
    "run-list": ByMethod(read=VIEW_RUN, write=Perm("evaluation.add_run")),
    "run-detail": VIEW_RUN,
    "run-analyses": Perm("evaluation.view_run", "evaluation.view_prediction"),
    "prediction-list": Perm("evaluation.view_prediction"),
    "prediction-detail": Perm("evaluation.view_prediction"),
    "campaign-list": SIGNED_IN,
    "campaign-next": API_ANNOTATOR,
    "campaign-submit": API_ANNOTATOR,
    "campaign-skip": API_ANNOTATOR,
    "agreement-list": READ_LABELS,
    "agreement-detail": READ_LABELS,
}


def rule_for(view_name: str) -> Rule | None:
    rule = ACCESS.get(view_name)
    if rule is not None:
        return rule
    for key, prefixed in ACCESS.items():
        if key.endswith("*") and view_name.startswith(key[:-1]):
            return prefixed
    return None


def allows(user: Any, view_name: str, *, method: str = "GET", **kwargs: Any) -> bool:
    """Whether the table lets `user` open this URL (for links and buttons: a page shows only
    what its user may follow)."""
    rule = rule_for(view_name)
    return rule is not None and rule.decide(user, kwargs, method) is Decision.ALLOW


class Can:
    """`can` in every template: `can.runs` is whether the user may open the run list, and so
    on (NAV), asked of the table only when a template looks."""

    NAV = {
        "benchmarks": "benchmark-list",
        "runs": "evaluation:run-list",
        "judging": "evaluation:job-list",
        "endpoints": "evaluation:endpoint-list",
        "judges": "evaluation:judge-list",
        "studio": "annotation:campaign-list",
        "campaigns": "annotation:campaign-overview",
        "api": "api-schema",
    }

    def __init__(self, user: Any) -> None:
        self.user = user

    def __getattr__(self, name: str) -> bool:
        if name not in self.NAV:
            raise AttributeError(name)
        allowed = allows(self.user, self.NAV[name])
        setattr(self, name, allowed)
        return allowed

    @property
    def admin(self) -> bool:
        # The admin is the operators' (superusers'): researchers' pages never link into it.
        return bool(self.user.is_active and self.user.is_superuser)


def context(request: HttpRequest) -> dict[str, Any]:
    """Template context processor: `can` (see Can)."""
    return {"can": Can(request.user)}


def virtual_call_allowed(user: Any) -> bool:
    """The signed-in half of the /virtual/ rule (the key half is the view's)."""
    return bool(user.is_authenticated and user.has_perm(KEY.perm))


# --- enforcement --------------------------------------------------------------------------------


def request_memo(request: HttpRequest) -> Memo:
    """The request's memo of what the access rules fetched."""
    memo: Memo | None = getattr(request, "_access_memo", None)
    if memo is None:
        memo = {}
        request._access_memo = memo  # type: ignore[attr-defined]
    return memo


def checked_campaign(request: Any, campaign_id: int, role: str | None) -> Any:
    """The campaign a Member rule fetched for this request (None if none did)."""
    django_request = getattr(request, "_request", request)
    return request_memo(django_request).get(("campaign", campaign_id, role))


def _is_api_view(view_func: Callable[..., Any]) -> bool:
    # Imported here: DRF's APIView reads DEFAULT_PERMISSION_CLASSES, which names this module.
    from rest_framework.views import APIView

    view_class = getattr(view_func, "cls", None)
    return isinstance(view_class, type) and issubclass(view_class, APIView)


class AccessMiddleware:
    """Applies the table to every page before its view runs. API views are left to
    `TableAccess`, which sees the user DRF authenticated (basic auth included)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(
        self,
        request: HttpRequest,
        view_func: Callable[..., Any],
        view_args: tuple[Any, ...],
        view_kwargs: dict[str, Any],
    ) -> HttpResponse | None:
        if _is_api_view(view_func):
            return None
        match = request.resolver_match
        view_name = match.view_name if match is not None else ""
        rule = rule_for(view_name)
        if rule is None:
            log.error("no access rule for %r: refused", view_name)
            raise PermissionDenied("this page has no access rule")
        decision = rule.decide(
            request.user, view_kwargs, request.method or "GET", request_memo(request)
        )
        if decision is Decision.ALLOW:
            return None
        if decision is Decision.LOGIN:
            return redirect_to_login(request.get_full_path())
        if decision is Decision.HIDE:
            raise Http404("not found")
        raise PermissionDenied(f"this page needs {rule.text}")


class TableAccess(drf_permissions.BasePermission):
    """The table for API views (DEFAULT_PERMISSION_CLASSES)."""

    message = "not allowed"

    def has_permission(self, request: Any, view: Any) -> bool:
        match = request.resolver_match
        rule = rule_for(match.view_name if match is not None else "")
        if rule is None:
            return False
        decision = rule.decide(
            request.user, view.kwargs, request.method or "GET", request_memo(request._request)
        )
        if decision is Decision.HIDE:
            raise NotFound("not found")
        if decision is Decision.DENY:
            self.message = f"this needs {rule.text}"
        return decision is Decision.ALLOW


# --- the table's own checks ---------------------------------------------------------------------


def url_routes() -> dict[str, str]:
    """Every view name the URL configuration can resolve to, with its (first) route."""

    routes: dict[str, str] = {}

    def walk(patterns: list[Any], namespace: str, prefix: str) -> None:
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                inner = namespace
                if pattern.namespace:
                    inner = f"{namespace}{pattern.namespace}:"
                walk(pattern.url_patterns, inner, route)
            elif isinstance(pattern, URLPattern):
                name = f"{namespace}{pattern.name or pattern.lookup_str}"
                # DRF's regex routes read like Django's: (?P<pk>[^/.]+) as <pk>.
                readable = re.sub(r"\(\?P<(\w+)>[^)]*\)", r"<\1>", route)
                routes.setdefault(name, "/" + readable.replace("^", "").replace("$", ""))

    walk(get_resolver().url_patterns, "", "")
    return routes


def url_names() -> list[str]:
    return list(url_routes())


def check_every_url_has_a_rule(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    missing = [name for name in url_names() if rule_for(name) is None]
    return [
        checks.Error(
            f"the URL {name!r} has no access rule",
            hint="add it to config.access.ACCESS (who may open it)",
            id="access.E001",
        )
        for name in missing
    ]


def access_markdown() -> str:
    """The table as docs/access.md shows it (`manage.py access_table`)."""
    routes = url_routes()
    lines = ["| URL name | path | who may open it |", "|---|---|---|"]
    for name, rule in ACCESS.items():
        path = "/admin/..." if name == "admin:*" else routes.get(name, "")
        lines.append(f"| `{name}` | `{path}` | {rule.text} |")
    return "\n".join(lines)
