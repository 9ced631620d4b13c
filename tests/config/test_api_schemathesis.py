"""Schemathesis over the API's own OpenAPI schema (/api/schema/, drf-spectacular), as a
researcher and as an annotator (issue 27): every operation, data that fits the schema and data
that does not, every check schemathesis has (no 5xx, status codes, content types, headers and
bodies as the schema says them, valid requests accepted, invalid ones refused, authentication
not ignored...). A bounded number of examples per operation, derandomized, each request in a
savepoint that is rolled back: the same examples and the same world every run.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, transaction
from django.test import Client
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from schemathesis import GenerationMode
from schemathesis.core.failures import FailureGroup

from tests.roles import World, build_world

pytestmark = pytest.mark.django_db

# Examples per operation and generation mode: enough to try each parameter's edges, few enough
# for a 2-core machine (about 20 operations x 2 modes x 2 roles).
EXAMPLES = 12


class App(WSGIHandler):
    """Django as the WSGI app schemathesis calls, inside the test's transaction: CSRF is not
    asked of a session, and the connection is not closed at the end of a request (both as
    Django's test client does; the fixture connects close_old_connections again)."""

    def __call__(self, environ: Any, start_response: Any) -> Any:
        request_started.disconnect(close_old_connections)
        request_finished.disconnect(close_old_connections)
        return super().__call__(environ, start_response)

    def get_response(self, request: Any) -> Any:
        request._dont_enforce_csrf_checks = True
        return super().get_response(request)


@pytest.fixture
def app() -> Iterator[App]:
    try:
        yield App()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def world(tmp_path: Path) -> World:
    return build_world(tmp_path)


# A launch is valid only for a benchmark and an endpoint that exist, a task of the benchmark's
# suite and the options that task declares (registry.Suite.options): what no static schema can
# say. Such data fits the schema and is refused with a 400 naming the field, which the
# launch's own tests check for every suite and option (tests/evaluation/test_launch_options.py).
LAUNCH = {
    "include-path": "/api/runs/",
    "include-method": "POST",
    "checks": {
        "positive_data_acceptance": {"expected-statuses": ["2xx", "400", "401", "403", "404"]}
    },
}


class _Rollback(Exception):
    pass


def session_key(world: World, role: str) -> str:
    client = Client()
    client.force_login(world.users[role])
    return client.cookies["sessionid"].value


def failures_of(world: World, app: App, role: str) -> list[str]:
    client = Client()
    client.force_login(world.users[role])
    raw = json.loads(client.get("/api/schema/", {"format": "json"}).content)
    # The role's session as the schema's cookieAuth: schemathesis knows it is the credential
    # (ignored_auth sends the request without it, and with one that is not valid).
    config = schemathesis.Config.from_dict(
        {
            "auth": {"openapi": {"cookieAuth": {"api_key": session_key(world, role)}}},
            "operations": [LAUNCH],
        }
    )
    schema = schemathesis.openapi.from_dict(raw, config=config)
    schema.app = app  # every request, the checks' own too, goes to this app (as from_wsgi)
    found: dict[str, str] = {}
    for result in schema.get_all_operations():
        operation = result.ok()
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            run_examples(operation, mode, found)
    return sorted(found.values())


def run_examples(operation: Any, mode: GenerationMode, found: dict[str, str]) -> None:
    @hypothesis_settings(
        max_examples=EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(generation_mode=mode))
    def check(case: Any) -> None:
        failed: list[Any] = []
        answer = ""
        try:
            with transaction.atomic():
                response = case.call()
                try:
                    case.validate_response(response)
                except FailureGroup as group:
                    failed = list(group.exceptions)
                    answer = f"{response.status_code} {response.text[:300]}"
                raise _Rollback
        except _Rollback:
            pass
        for failure in failed:
            key = f"{operation.label} [{mode.value}] {failure.title}"
            found.setdefault(
                key, f"{key}: {failure.message}"[:800] + f"\n{case.as_curl_command()}\n{answer}"
            )

    check()


@pytest.mark.parametrize("role", ["researcher", "annotator"])
def test_the_api_keeps_to_its_schema_for_every_operation(role: str, world: World, app: App) -> None:
    failures = failures_of(world, app, role)
    assert not failures, f"{len(failures)} schema failures as {role}:\n" + "\n\n".join(failures)
