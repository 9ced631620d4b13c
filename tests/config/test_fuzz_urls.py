"""Every URL the resolver knows, with every query parameter and form field its view reads filled
with hostile values, as every role (issue 27, finding 4): no answer is a 5xx, and every refusal
is a 400 that names the parameter (or the view's own 401/403/404/405/409/413/429).

Which parameters a view reads is found by watching it (tests/config/fuzzing.py): a normal
request as the first role the view answers records the keys it reads, probing opens the branches
its values guard, and its page's forms and links name the rest. A URL, a form or a filter added
later is fuzzed without touching this file. The ids in the path are fuzzed too, wherever the
URL's converter lets a hostile one through.

What each parameter gets: every hostile value, one at a time, as the first role the view
answers; every other role sends each parameter at once with one of the values (the access rules
turn most of them away before the view). The admin is Django's own code over the project's
models: its forms' fields get the values that tell one kind of field from another (fuzzing.
BY_KIND), its own parameters (popups, sorting, paging, actions) once for the whole admin, a
model's add form only where it has no change form (the same form), and a formset's rows by row 0.

Deterministic: the values are fixed, every request is rolled back (each sees the same world),
and nothing depends on time.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import resolve

from annotation.services import campaign_create
from config import access
from tests.config import fuzzing
from tests.config.fuzzing import HOSTILE_SEGMENTS, Request, from_call, problem, record
from tests.config.test_access import admin_calls, calls_for, outcome
from tests.roles import ROLES, World, build_world

pytestmark = pytest.mark.django_db

# The order in which roles are tried for a URL: the first the view answers does the full fuzz.
PRIORITY = (
    "superuser",
    "researcher",
    "annotator",
    "reviewer",
    "adjudicator",
    "scattered",
    "outsider",
    "anonymous",
)
# Ending the session would sign every later request out.
SKIPPED = {"logout", "admin:logout"}
# The admin's own parameters (popups, sorting, paging, search, actions, its forms' buttons).
ADMIN_OWN = {"o", "p", "q", "all", "e", "index", "action", "select_across", "post"}
MANAGEMENT_FORM = ("-TOTAL_FORMS", "-INITIAL_FORMS", "-MIN_NUM_FORMS", "-MAX_NUM_FORMS")
ROW = re.compile(r"(?<=[-_])\d+(?=-)")
# A parameter compared with more values than this is a choice list, not a branch.
MAX_COMPARED = 3


@dataclass
class Target:
    request: Request
    role: str
    keys: dict[str, bool] = field(default_factory=dict)  # key -> read only by an htmx request
    kinds: dict[str, str] = field(default_factory=dict)  # key -> its field's kind in the page
    # The request as it is is refused (say, a change to an open campaign): a 400 is then not
    # the parameter's, and only needs to be no 5xx.
    refused: bool = False

    @property
    def admin(self) -> bool:
        return self.request.path.startswith("/admin/")


def admin_own(key: str) -> bool:
    return key in ADMIN_OWN or key.startswith("_") or key.endswith(MANAGEMENT_FORM)


def one_per_row(keys: Iterable[str]) -> list[str]:
    """The keys to fuzz one by one: a field repeated in each row of a formset (q-3-key) is read
    by the same code in every row, so row 0 stands for them; the empty row a page keeps for
    its scripts (__prefix__) and Django's copies of initial values are not read as input."""
    chosen: dict[str, str] = {}
    for key in sorted(keys):
        if "__prefix__" in key or key.startswith("initial-"):
            continue
        chosen.setdefault(ROW.sub("N", key), key)
    return sorted(chosen.values())


def clients(world: World) -> dict[str, Client]:
    made = {}
    for role in ROLES:
        client = Client(raise_request_exception=False)
        if role != "anonymous":
            client.force_login(world.users[role])
        made[role] = client
    return made


def base_requests(world: World) -> list[Request]:
    """Every URL's requests as test_access makes them; a campaign's pages again for a draft
    campaign, whose setup steps take changes (the world's campaigns are open)."""
    draft = campaign_create(name="Fuzzed draft", kind="motivation", benchmark=world.benchmark)
    found = []
    for name in access.url_names():
        if name in SKIPPED:
            continue
        if name.startswith("admin:"):
            calls = [(name, call) for call in admin_calls(name, world)]
        else:
            calls = calls_for(name, world)
        for _, call in calls:
            found.append(from_call(call.method, call.path, call.data, call.json))
            opened = f"/campaigns/{world.motivation.pk}/"
            if call.path.startswith(opened):
                path = call.path.replace(opened, f"/campaigns/{draft.pk}/", 1)
                found.append(from_call(call.method, path, call.data, call.json))
    return found


def discover(base: Request, roles: dict[str, Client]) -> list[Target]:
    """The target for `base`, and one for the POST form its page offers back to itself."""
    role, reads, response = PRIORITY[0], set(), None
    for candidate in PRIORITY:
        response, reads = record(roles[candidate], base)
        if outcome(response) == "allowed":
            role = candidate
            break
    client = roles[role]
    page = fuzzing.text_of(response) if response is not None else ""
    offered = fuzzing.page_parameters(page, base.path)
    given = {k for k, _ in base.params}
    keys = dict.fromkeys(reads | given | (offered.query if base.method == "GET" else set()), False)
    # a page that swaps its parts with htmx reads some parameters only when htmx asks
    htmx = "hx-" in page
    if htmx:
        _, htmx_reads = record(client, base.with_params({}, htmx=True))
        keys.update(dict.fromkeys(htmx_reads - set(keys), True))
    if base.method == "POST":
        keys.update(dict.fromkeys(set(offered.form) - set(keys), False))
    kinds = {k: "choice" for k in offered.query} if base.path.startswith("/admin/") else {}
    target = Target(
        base, role, keys, kinds, refused=response is not None and response.status_code == 400
    )
    explore(target, client, htmx)
    targets = [target]
    if base.method == "GET" and offered.form:
        params = tuple((k, v) for k, values in offered.form.items() for v in values)
        posted = Target(Request("POST", base.path, params), role, kinds=offered.kinds)
        posted.keys = dict.fromkeys(offered.form, False)
        posted.refused = record(client, posted.request)[0].status_code == 400
        explore(posted, client, htmx)
        targets.append(posted)
    return targets


def explore(target: Target, client: Client, htmx: bool) -> None:
    """Probe: every key known so far set, noting what else is read and which values the view
    compares them with (a few: more are a choice list, not branches); then each compared
    value sent, noting what it opens. (Not in the admin: Django's code, whose parameters its
    pages name.)"""
    if target.admin:
        return
    given = {k for k, _ in target.request.params}
    for as_htmx in (False, True) if htmx else (False,):
        filled = {k: "1" for k in target.keys if k not in given}
        probe = target.request.with_params(filled, htmx=as_htmx or target.request.htmx)
        _, reads = record(client, probe, probing=True)
        compared = {
            k: sorted(v) for k, v in fuzzing.RECORDER.compared.items() if len(v) <= MAX_COMPARED
        }
        for key in reads - set(target.keys):
            target.keys[key] = as_htmx
        for key, values in sorted(compared.items()):
            for value in values:
                _, reads = record(client, probe.with_params({key: value}))
                for new in reads - set(target.keys):
                    target.keys[new] = as_htmx


def fuzz_parameters(target: Target, client: Client, keys: Iterable[str]) -> list[str]:
    wrong = []
    for key in keys:
        kind = target.kinds.get(key, "text") if target.admin else "any"
        for index in fuzzing.values_for(kind):
            value = fuzzing.hostile_value(index, target.request.json)
            request = target.request.with_params(
                {key: value}, htmx=target.keys[key] or target.request.htmx
            )
            found = problem(fuzzing.send(client, request), request, [key], target.refused)
            if found:
                wrong.append(found)
    return wrong


def fuzz_path(target: Target, client: Client) -> list[str]:
    """Each id or name in the path replaced by hostile segments (those the converter takes)."""
    wrong = []
    match = resolve(target.request.path)
    segments = target.request.path.split("/")
    for value in match.kwargs.values():
        text = str(value)
        if text not in segments:
            continue
        at = segments.index(text)
        for hostile in HOSTILE_SEGMENTS:
            path = "/".join([*segments[:at], hostile, *segments[at + 1 :]])
            request = Request(
                target.request.method, path, target.request.params, target.request.json
            )
            found = problem(fuzzing.send(client, request), request, list(match.kwargs))
            if found:
                wrong.append(found)
    return wrong


def fuzz_other_roles(
    target: Target, roles: dict[str, Client], turn: int, others: Iterable[str]
) -> list[str]:
    """Every other role: one request with every key hostile at once (a value per role, in
    turn), which the access rules refuse or the view answers without a 5xx."""
    wrong = []
    for number, role in enumerate(others):
        if role == target.role:
            continue
        value = fuzzing.hostile_value((turn + number) % len(fuzzing.HOSTILE), target.request.json)
        request = target.request.with_params(dict.fromkeys(target.keys, value))
        found = problem(fuzzing.send(roles[role], request), request, target.keys, True)
        if found:
            wrong.append(f"as {role}: {found}")
    return wrong


def admin_forms_with_a_change_page(targets: list[Target]) -> set[str]:
    """The admin add pages whose model also has a change page here (the same form)."""
    changed = {
        re.sub(r"/[^/]+/change/$", "/add/", t.request.path)
        for t in targets
        if t.admin and t.request.method == "POST" and t.request.path.endswith("/change/")
    }
    return {t.request.path for t in targets if t.request.path in changed}


@pytest.fixture
def world(tmp_path: Path, settings: Any) -> World:
    settings.MIDDLEWARE = ["tests.config.fuzzing.RecordingMiddleware", *settings.MIDDLEWARE]
    return build_world(tmp_path)


def test_every_url_parameter_and_form_field_takes_hostile_values_without_a_5xx(
    world: World,
) -> None:
    roles = clients(world)
    targets = [t for base in base_requests(world) for t in discover(base, roles)]
    # the crawl finds what the views read, not a list kept here
    found = {(t.request.method, t.request.path, k) for t in targets for k in t.keys}
    run, m = world.run.pk, world.motivation.pk
    assert ("GET", "/runs/compare/", "a") in found
    assert ("GET", f"/campaigns/{m}/agreement/", "resamples") in found
    assert ("GET", "/api/samples/", "benchmark") in found
    assert ("POST", "/runs/new/", "seed") in found
    assert ("GET", f"/runs/{run}/", "page") in found  # read only when htmx asks for the rows
    assert ("GET", "/admin/benchmarks/sample/", "benchmark__id__exact") in found
    assert ("POST", f"/admin/evaluation/run/{run}/change/", "name") in found
    same_form = admin_forms_with_a_change_page(targets)
    wrong = []
    admin_seen: set[tuple[str, str]] = set()
    for turn, target in enumerate(targets):
        keys = one_per_row(target.keys)
        others: Iterable[str] = ROLES
        if target.admin:
            method = target.request.method
            if method == "POST" and target.request.path in same_form:
                keys = []
            keys = [k for k in keys if not admin_own(k) or (method, k) not in admin_seen]
            # the admin turns away whoever is not staff before any of its views
            others = ROLES if not admin_seen else ("researcher", "superuser", "scattered")
            admin_seen |= {(method, k) for k in keys if admin_own(k)} | {("", "")}
        wrong += fuzz_parameters(target, roles[target.role], keys)
        wrong += fuzz_path(target, roles[target.role])
        wrong += fuzz_other_roles(target, roles, turn, others)
    assert not wrong, f"{len(wrong)} wrong answers:\n" + "\n".join(wrong[:400])
