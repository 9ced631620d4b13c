"""Secrets stay on the machine (issue 13, finding 1): an endpoint's key variable is never one of
the platform's own settings (and, since issue 27, only one the operator lists), in the model, the
admin's form, the API and the command alike; a row that got around the rule sends nothing; and
what a failing server says is never shown back. Keys entered in the platform:
test_endpoint_keys.py."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.test import Client

from evaluation.models import Endpoint, RealApi
from evaluation.work.engine import ConfigurationError, endpoint_config
from tests.factories import make_researcher, make_superuser

pytestmark = pytest.mark.django_db

PLATFORM_SECRETS = ("SECRET_KEY", "DATABASE_URL", "REDIS_URL")
SECRET = "the-platform-secret-6f1d"


class Listener:
    """A server on loopback that records every request (headers and body) and answers with a
    fixed status and body: what an endpoint's owner would run to collect keys."""

    def __init__(
        self,
        status: int = 200,
        body: bytes = b'{"object": "list", "data": []}',
        headers: dict[str, str] | None = None,
    ):
        self.requests: list[dict[str, Any]] = []
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                listener.requests.append(
                    {
                        "path": self.path,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": self.rfile.read(length).decode("utf-8", "replace"),
                    }
                )
                self.send_response(status)
                self.send_header(
                    "Content-Type", "text/html" if status >= 400 else "application/json"
                )
                self.send_header("Content-Length", str(len(body)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def heard(self, text: str) -> bool:
        return any(text in json.dumps(request) for request in self.requests)

    def __enter__(self) -> Listener:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    with Listener() as running:
        yield running


@pytest.fixture
def platform_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """The platform's secrets, all set to one recognisable value on this machine."""
    for name in PLATFORM_SECRETS:
        monkeypatch.setenv(name, SECRET)


def endpoint_form(base_url: str, key_variable: str) -> dict[str, Any]:
    return {
        "name": "collector",
        "base_url": base_url,
        "model": "m",
        "api_key_env": key_variable,
        "style": "chat",
        "default_params": "{}",
        "max_concurrency": 8,
        "timeout_seconds": 5,
        "max_attempts": 1,
    }


def check_connection(endpoint: Endpoint) -> str:
    """The admin action "Check the connection", run by a superuser; the page it ends on."""
    client = Client()
    client.force_login(make_superuser())
    return client.post(
        "/admin/evaluation/endpoint/",
        {"action": "check_connection", "_selected_action": [endpoint.pk]},
        follow=True,
    ).content.decode()


@pytest.mark.parametrize("variable", PLATFORM_SECRETS)
def test_a_platform_secret_is_refused_as_a_key_variable_everywhere(
    variable: str, listener: Listener, platform_secrets: None
) -> None:
    # the model
    with pytest.raises(ValidationError) as refused:
        Endpoint(name="e", base_url=listener.base_url, model="m", api_key_env=variable).full_clean()
    assert "one of the platform's own settings" in str(refused.value.message_dict["api_key_env"])
    with pytest.raises(ValidationError):
        RealApi(category="c", tool="t", url="https://api.example/", key_env=variable).full_clean()
    # the admin's form, as a researcher would fill it
    client = Client()
    client.force_login(make_researcher())
    page = client.post(
        "/admin/evaluation/endpoint/add/", endpoint_form(listener.base_url, variable)
    )
    assert page.status_code == 200
    assert "one of the platform&#x27;s own settings" in page.content.decode()
    # the API
    posted = client.post(
        "/api/endpoints/",
        json.dumps(
            {
                "name": "collector",
                "base_url": listener.base_url,
                "model": "m",
                "api_key_env": variable,
            }
        ),
        content_type="application/json",
    )
    assert posted.status_code == 400
    assert "one of the platform's own settings" in posted.json()["detail"]
    # the command
    with pytest.raises(CommandError, match="one of the platform's own settings"):
        call_command(
            "add_endpoint",
            "collector",
            "--base-url",
            listener.base_url,
            "--model",
            "m",
            "--key-variable",
            variable,
        )
    assert not Endpoint.objects.exists()
    assert not listener.requests


def test_a_row_that_got_around_the_rule_sends_nothing(
    listener: Listener, platform_secrets: None
) -> None:
    # given an endpoint written straight into the table, naming SECRET_KEY
    endpoint = Endpoint.objects.create(
        name="collector", base_url=listener.base_url, model="m", api_key_env="SECRET_KEY"
    )
    # when the connection is checked from the admin
    page = check_connection(endpoint)
    # then the check refuses, and a run cannot even be configured with it
    assert "one of the platform&#x27;s own settings" in page
    with pytest.raises(ConfigurationError, match="one of the platform's own settings"):
        endpoint_config(endpoint)
    assert not listener.requests
    assert not listener.heard(SECRET)


def test_a_named_key_variable_travels_only_to_its_endpoint(
    listener: Listener, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    settings.ENDPOINT_KEY_VARIABLES = ["COLLECTOR_API_KEY"]
    monkeypatch.setenv("COLLECTOR_API_KEY", "the-endpoint-key")
    endpoint = Endpoint(
        name="collector", base_url=listener.base_url, model="m", api_key_env="COLLECTOR_API_KEY"
    )
    endpoint.full_clean()
    endpoint.save()
    check_connection(endpoint)
    assert [r["headers"].get("authorization") for r in listener.requests] == [
        "Bearer the-endpoint-key"
    ]


def test_the_settings_list_admits_a_variable_but_never_a_platform_one(settings: Any) -> None:
    settings.ENDPOINT_KEY_VARIABLES = ["CORP_LLM_SECRET", "SECRET_KEY"]
    Endpoint(
        name="a", base_url="https://x.example/v1", model="m", api_key_env="CORP_LLM_SECRET"
    ).full_clean()
    with pytest.raises(ValidationError, match="platform's own settings"):
        Endpoint(
            name="b", base_url="https://x.example/v1", model="m", api_key_env="SECRET_KEY"
        ).full_clean()
    with pytest.raises(ValidationError, match="not a variable the operator lists"):
        Endpoint(
            name="c", base_url="https://x.example/v1", model="m", api_key_env="HOME"
        ).full_clean()


@pytest.mark.parametrize(
    "base_url",
    ["file:///etc/passwd", "gopher://127.0.0.1:6379/_FLUSHALL", "javascript:alert(1)", "127.0.0.1"],
)
def test_only_http_and_https_base_urls(base_url: str) -> None:
    with pytest.raises(ValidationError) as refused:
        Endpoint(name="e", base_url=base_url, model="m").full_clean()
    assert "http:// or https://" in str(refused.value.message_dict["base_url"])


def test_the_connection_check_shows_no_word_of_what_the_server_sent() -> None:
    body = b"<html><script>alert(1)</script>internal: db password=hunter2</html>"
    with Listener(status=500, body=body) as failing:
        endpoint = Endpoint.objects.create(name="internal", base_url=failing.base_url, model="m")
        page = check_connection(endpoint)
    assert "the server answered HTTP 500 (Internal Server Error)" in page
    assert "hunter2" not in page and "alert(1)" not in page


def test_the_command_adds_an_endpoint_the_api_then_lists(tmp_path: Path, settings: Any) -> None:
    settings.ENDPOINT_KEY_VARIABLES = ["OPENAI_API_KEY"]
    call_command(
        "add_endpoint",
        "openai",
        "--base-url",
        "https://api.openai.com/v1",
        "--model",
        "gpt-4o",
        "--key-variable",
        "OPENAI_API_KEY",
        "--param",
        "temperature=0",
        "--concurrency",
        "4",
    )
    endpoint = Endpoint.objects.get(name="openai")
    assert (endpoint.api_key_env, endpoint.default_params, endpoint.max_concurrency) == (
        "OPENAI_API_KEY",
        {"temperature": 0},
        4,
    )
    client = Client()
    client.force_login(make_researcher())
    assert [e["name"] for e in client.get("/api/endpoints/").json()["results"]] == ["openai"]
