"""What a GET may change. A cross-site link can make a signed-in browser GET any URL (a top-level
navigation carries the session cookie under SameSite=Lax; a POST needs the CSRF token), so a GET
writes nothing, except the few that docs/access.md's "What a link may do" lists with the reason a
link may make their write: each writes only what the same GET then finds made, so that a second GET
writes nothing. The walk requests every URL the resolver knows with GET
(tests/config/test_access.py's calls, the admin's), as a page and as htmx asks for it, as every
role, and reads every statement each request sends."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.models import AgreementReport, Assignment
from config import access
from evaluation.models import RunAnalysis
from tests.config.test_access import Call, admin_calls, calls_for
from tests.roles import ROLES, World, build_world

pytestmark = pytest.mark.django_db

# The table each INSERT, UPDATE (not SELECT ... FOR UPDATE, not ON CONFLICT DO UPDATE) or
# DELETE writes, wherever it is in a statement (a CTE's too).
WRITE = re.compile(
    r'\b(?:INSERT\s+INTO|(?<!FOR\s)(?<!DO\s)UPDATE|DELETE\s+FROM)\s+"?(\w+)"?(?:\s+AS\s+\w+)?',
    re.I,
)

# URL name: the tables its GET may write (docs/access.md, "What a link may do").
GET_WRITES: dict[str, set[str]] = {
    # the studio: the annotator's current item, leased to them when they hold none
    "annotation:annotate": {"annotation_assignment", "annotation_item"},
    # reports computed from what is stored, kept until what they read changes
    "annotation:agreement": {"annotation_agreementreport"},
    "annotation:agreement-summary-csv": {"annotation_agreementreport"},
    "agreement-detail": {"annotation_agreementreport"},
    "annotation:calibration": {"annotation_calibrationreport"},
    "annotation:calibration-csv": {"annotation_calibrationreport"},
    "evaluation:run-analyses": {"evaluation_runanalysis"},
    "evaluation:run-analysis-csv": {"evaluation_runanalysis"},
    "evaluation:runs-analyses": {"evaluation_runanalysis"},
    "evaluation:runs-analysis-csv": {"evaluation_runanalysis"},
    "run-analyses": {"evaluation_runanalysis"},
}


def writes(sql: str) -> set[str]:
    return {match[1].lower() for match in WRITE.finditer(sql)}


def test_the_reader_finds_every_write() -> None:
    assert writes('INSERT INTO "annotation_label" ("a") VALUES (1)') == {"annotation_label"}
    assert writes('UPDATE "evaluation_run" SET "status" = 1') == {"evaluation_run"}
    assert writes('DELETE FROM "django_session" WHERE 1') == {"django_session"}
    assert writes("WITH slot AS (UPDATE annotation_item SET active = 1) SELECT 1") == {
        "annotation_item"
    }
    assert writes('SELECT 1 FROM "a" FOR UPDATE') == set()
    assert writes("INSERT INTO t AS x (a) VALUES (1) ON CONFLICT (a) DO UPDATE SET a = 2") == {"t"}


@pytest.fixture
def world(tmp_path: Path) -> World:
    world = build_world(tmp_path)
    # Nothing made yet that a GET may make: no report, no analyses, no live lease.
    AgreementReport.objects.all().delete()
    RunAnalysis.objects.all().delete()
    # (before the test's transaction began: the database's now() is that transaction's start)
    Assignment.objects.filter(status=Assignment.Status.LEASED).update(
        lease_until=timezone.now() - timedelta(days=1)
    )
    return world


def gets(name: str, world: World) -> list[Call]:
    calls = (
        admin_calls(name, world)
        if name.startswith("admin:")
        else [call for _, call in calls_for(name, world)]
    )
    return [call for call in calls if call.method == "GET"]


def written(client: Any, path: str, **headers: Any) -> set[str]:
    with CaptureQueriesContext(connection) as queries:
        client.get(path, **headers)
    return {table for query in queries.captured_queries for table in writes(query["sql"])}


@pytest.mark.parametrize("role", ROLES)
def test_a_get_writes_nothing_but_what_a_link_may_make_once(role: str, world: World) -> None:
    client = world.client(role)
    wrong = []
    made: dict[str, set[str]] = {}
    for name in access.url_names():
        allowed = GET_WRITES.get(name, set())
        for call in gets(name, world):
            for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
                tables = written(client, call.path, **headers)
                made.setdefault(name, set()).update(tables)
                if tables - allowed:
                    wrong.append(f"{name} GET {call.path} {headers}: wrote {sorted(tables)}")
                if not tables:
                    continue  # nothing changed: the same GET again meets the same rows
                # the same GET again finds it made: nothing more is written
                again = written(client, call.path, **headers)
                if again:
                    wrong.append(f"{name} GET {call.path} {headers} twice: wrote {sorted(again)}")
    assert not wrong, "\n".join(wrong)
    # the walk does reach the writes a link may make (this test can see one)
    if role == "researcher":
        assert made["agreement-detail"] and made["run-analyses"], made
    if role == "annotator":
        assert made["annotation:annotate"] == GET_WRITES["annotation:annotate"], made
