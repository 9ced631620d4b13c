"""An endpoint's key is entered in the platform (issue 27, finding 6): stored encrypted at rest
under FIELD_ENCRYPTION_KEY, never shown again but for its last four characters (no page, API
answer, CSV or log line carries it), sent only to the base URL it was entered for. Every way in
(the admin's form, the API, add_endpoint) saves through one service. An environment variable
holds a key only when the operator lists it in ENDPOINT_KEY_VARIABLES."""

from __future__ import annotations

import base64
import io
import json
import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.test import Client

from evaluation import services
from evaluation.credentials import unseal
from evaluation.models import Endpoint, RealApi
from evaluation.services import RunError, endpoint_save
from evaluation.work.addresses import normalised_base_url
from evaluation.work.engine import ConfigurationError, endpoint_config
from tests.evaluation.conftest import counting_answer, execute_run, make_counting_benchmark
from tests.evaluation.test_credentials import Listener
from tests.factories import make_researcher, make_superuser
from tests.fake_openai import FakeOpenAI, _HttpError

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("broker")]

KEY = "sk-proj-Zq8vT2mLk4Rx9wEy7uB3nC6dF1gH5jK0abcd"


def echoing_the_key(request: dict[str, Any]) -> str:
    """A server that answers, except the first question, which it refuses with the key it was
    sent in its error (as some servers do): the platform must not show it."""
    if "comes after 0?" in json.dumps(request):
        raise _HttpError(401, f"Incorrect API key provided: {KEY}.")
    return counting_answer(request)


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(responder=echoing_the_key) as running:
        yield running


def researcher_client() -> Client:
    client = Client()
    client.force_login(make_researcher())
    return client


def admin_form(base_url: str, **fields: Any) -> dict[str, Any]:
    return {
        "name": "keyed",
        "base_url": base_url,
        "model": "fake-model",
        "style": "chat",
        "default_params": "{}",
        "max_concurrency": 4,
        "timeout_seconds": 5,
        "max_attempts": 1,
        "max_claims": 1,
        **fields,
    }


def by_admin(base_url: str, key: str) -> None:
    page = researcher_client().post(
        "/admin/evaluation/endpoint/add/", admin_form(base_url, api_key=key)
    )
    assert page.status_code == 302, page.content.decode()[-3000:]


def by_api(base_url: str, key: str) -> None:
    posted = researcher_client().post(
        "/api/endpoints/",
        json.dumps({"name": "keyed", "base_url": base_url, "model": "fake-model", "api_key": key}),
        content_type="application/json",
    )
    assert posted.status_code == 201, posted.content
    assert KEY not in posted.content.decode()
    assert posted.json()["api_key_last4"] == "abcd"


def by_command(base_url: str, key: str) -> None:
    call_command(
        "add_endpoint",
        "keyed",
        "--base-url",
        base_url,
        "--model",
        "fake-model",
        "--key-stdin",
        stdin=io.StringIO(key + "\n"),
        stdout=io.StringIO(),
    )


WAYS_IN: dict[str, Callable[[str, str], None]] = {
    "admin": by_admin,
    "api": by_api,
    "command": by_command,
}


@pytest.mark.parametrize("way", WAYS_IN)
def test_a_key_entered_any_way_is_stored_encrypted_and_sent_only_to_its_endpoint(
    way: str, server: FakeOpenAI, tmp_path: Path
) -> None:
    # when a researcher enters the key
    WAYS_IN[way](server.base_url, KEY)
    # then the row holds it encrypted, bound to the base URL, and only its last four characters
    endpoint = Endpoint.objects.get(name="keyed")
    stored = json.dumps(list(Endpoint.objects.filter(pk=endpoint.pk).values()), default=str)
    assert KEY not in stored and KEY[:-4] not in stored
    assert endpoint.api_key_last4 == "abcd" and not endpoint.api_key_env
    assert unseal(endpoint.api_key_sealed, normalised_base_url(server.base_url)) == KEY
    # and a run sends it to the endpoint as its bearer token
    benchmark = make_counting_benchmark(tmp_path, 3)
    run = services.run_launch(
        benchmark=benchmark, task="answer", endpoint=endpoint, split="default"
    )
    execute_run(run)
    assert {r.authorization for r in server.records()} == {f"Bearer {KEY}"}


def test_the_key_is_never_shown_in_a_page_an_api_answer_a_csv_or_a_log(
    server: FakeOpenAI, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    endpoint = endpoint_save(
        name="keyed", base_url=server.base_url, model="fake-model", api_key=KEY, max_attempts=1
    )
    benchmark = make_counting_benchmark(tmp_path, 3)
    run = services.run_launch(
        benchmark=benchmark, task="answer", endpoint=endpoint, split="default"
    )
    execute_run(run)
    # the server echoed the key in its refusal of the first item
    refused = run.predictions.get(position=0)
    assert refused.error.startswith("HTTP 401: Incorrect API key provided: [the endpoint's key]")
    researcher = researcher_client()
    admin = Client()
    admin.force_login(make_superuser())
    prediction = run.predictions.first()
    assert prediction is not None
    shown = {
        path: client.get(path)
        for client, paths in (
            (
                researcher,
                [
                    "/api/endpoints/",
                    f"/api/endpoints/{endpoint.pk}/",
                    "/api/runs/",
                    f"/api/runs/{run.pk}/",
                    f"/api/predictions/?run={run.pk}",
                    f"/runs/{run.pk}/",
                    f"/runs/{run.pk}/predictions.csv",
                    "/runs/",
                    "/api/schema/",
                ],
            ),
            (
                admin,
                [
                    "/admin/evaluation/endpoint/",
                    f"/admin/evaluation/endpoint/{endpoint.pk}/change/",
                    f"/admin/evaluation/run/{run.pk}/change/",
                    f"/admin/evaluation/prediction/{prediction.pk}/change/",
                    "/admin/evaluation/responsecache/",
                ],
            ),
        )
        for path in paths
    }
    for path, answer in shown.items():
        assert answer.status_code == 200, path
        body = b"".join(answer.streaming_content) if answer.streaming else answer.content
        text = body.decode()
        for secret in (KEY, KEY[:-4], base64.b64encode(KEY.encode()).decode()):
            assert secret not in text, path
    change_page = shown[f"/admin/evaluation/endpoint/{endpoint.pk}/change/"].content.decode()
    assert "stored, ends with …abcd" in change_page
    assert KEY not in caplog.text


def test_a_new_base_url_needs_the_key_again(server: FakeOpenAI) -> None:
    endpoint = endpoint_save(name="keyed", base_url=server.base_url, model="m", api_key=KEY)
    with Listener() as elsewhere:
        # the service, the admin's form and the command all refuse a new address alone
        with pytest.raises(RunError, match="enter the key again") as refused:
            endpoint_save(endpoint=endpoint, base_url=elsewhere.base_url)
        assert refused.value.field == "base_url"
        page = researcher_client().post(
            f"/admin/evaluation/endpoint/{endpoint.pk}/change/", admin_form(elsewhere.base_url)
        )
        assert page.status_code == 200
        assert "enter the key again" in page.content.decode()
        with pytest.raises(CommandError, match="enter the key again"):
            call_command("add_endpoint", "keyed", "--base-url", elsewhere.base_url, "--model", "m")
        # a spelling of the same address is the same address
        endpoint_save(endpoint=endpoint, base_url=server.base_url.upper().replace("/V1", "/v1/"))
        endpoint.refresh_from_db()
        assert endpoint.api_key_last4 == "abcd"
        # with the key entered again, or removed, the address may change
        call_command(
            "add_endpoint",
            "keyed",
            "--base-url",
            elsewhere.base_url,
            "--model",
            "m",
            "--key-stdin",
            stdin=io.StringIO("sk-another-key-for-the-new-address-wxyz\n"),
            stdout=io.StringIO(),
        )
        endpoint.refresh_from_db()
        assert endpoint_config(endpoint).api_key == "sk-another-key-for-the-new-address-wxyz"
        endpoint_save(endpoint=endpoint, base_url=server.base_url, clear_api_key=True)
        endpoint.refresh_from_db()
        assert (endpoint.api_key_sealed, endpoint.api_key_last4) == ("", "")
        assert not elsewhere.requests


def test_a_row_moved_around_the_service_sends_its_key_nowhere(server: FakeOpenAI) -> None:
    endpoint = endpoint_save(name="keyed", base_url=server.base_url, model="m", api_key=KEY)
    with Listener() as elsewhere:
        Endpoint.objects.filter(pk=endpoint.pk).update(base_url=elsewhere.base_url)
        endpoint.refresh_from_db()
        with pytest.raises(ConfigurationError, match="entered for"):
            endpoint_config(endpoint)
        admin = Client()
        admin.force_login(make_superuser())
        page = admin.post(
            "/admin/evaluation/endpoint/",
            {"action": "check_connection", "_selected_action": [endpoint.pk]},
            follow=True,
        ).content.decode()
        assert "entered for" in page
        assert not elsewhere.requests


def test_a_key_is_stored_or_read_from_a_variable_not_both(settings: Any) -> None:
    settings.ENDPOINT_KEY_VARIABLES = ["CORP_LLM_KEY"]
    with pytest.raises(RunError, match="not both"):
        endpoint_save(
            name="e",
            base_url="https://api.example/v1",
            model="m",
            api_key=KEY,
            api_key_env="CORP_LLM_KEY",
        )
    endpoint = endpoint_save(name="e", base_url="https://api.example/v1", model="m", api_key=KEY)
    with pytest.raises(RunError, match="not both"):
        endpoint_save(endpoint=endpoint, api_key_env="CORP_LLM_KEY")
    endpoint_save(endpoint=endpoint, api_key_env="CORP_LLM_KEY", clear_api_key=True)


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("OPENAI_API_KEY", "name of an environment variable"),
        ("sk-with a space", "without spaces"),
        ("sk-tab\tinside", "without spaces"),
        ("sk-ünïcode-key", "printable ASCII"),
        ("k" * 5000, "at most 4096"),
    ],
)
def test_what_cannot_be_a_key_is_refused(key: str, why: str) -> None:
    with pytest.raises(RunError, match=why) as refused:
        endpoint_save(name="e", base_url="https://api.example/v1", model="m", api_key=key)
    assert refused.value.field == "api_key"
    assert not Endpoint.objects.exists()


def test_a_key_variable_must_be_listed_by_the_operator(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-a-token-of-another-service")
    settings.ENDPOINT_KEY_VARIABLES = ["OPENAI_API_KEY"]
    # a variable named like a key but not listed is refused, in the model and for real APIs
    for variable in ("GITHUB_TOKEN", "AWS_SESSION_TOKEN", "HF_TOKEN", "OTHER_TEAM_API_KEY"):
        with pytest.raises(ValidationError, match="ENDPOINT_KEY_VARIABLES"):
            Endpoint(
                name="e", base_url="https://api.example/v1", model="m", api_key_env=variable
            ).full_clean()
        with pytest.raises(ValidationError, match="ENDPOINT_KEY_VARIABLES"):
            RealApi(
                category="c", tool="t", url="https://api.example/", key_env=variable
            ).full_clean()
    # a listed one is taken, and read
    endpoint = endpoint_save(
        name="e", base_url="https://api.example/v1", model="m", api_key_env="OPENAI_API_KEY"
    )
    assert endpoint_config(endpoint).api_key == KEY
    # a row naming an unlisted variable (written before the rule) sends nothing
    Endpoint.objects.filter(pk=endpoint.pk).update(api_key_env="GITHUB_TOKEN")
    endpoint.refresh_from_db()
    with pytest.raises(ConfigurationError, match="ENDPOINT_KEY_VARIABLES"):
        endpoint_config(endpoint)
    # and one that was listed stops working when the operator takes it off the list
    Endpoint.objects.filter(pk=endpoint.pk).update(api_key_env="OPENAI_API_KEY")
    endpoint.refresh_from_db()
    settings.ENDPOINT_KEY_VARIABLES = []
    with pytest.raises(ConfigurationError, match="ENDPOINT_KEY_VARIABLES"):
        endpoint_config(endpoint)


def test_keys_survive_a_rotation_of_the_encryption_key(settings: Any) -> None:
    old = settings.FIELD_ENCRYPTION_KEYS[0]
    endpoint = endpoint_save(name="e", base_url="https://api.example/v1", model="m", api_key=KEY)
    sealed_before = endpoint.api_key_sealed
    new = base64.urlsafe_b64encode(os.urandom(32)).decode()
    # a new key first, the old one after it: the stored key still opens, and is sealed again
    settings.FIELD_ENCRYPTION_KEYS = [new, old]
    assert endpoint_config(endpoint).api_key == KEY
    out = io.StringIO()
    call_command("rotate_endpoint_keys", stdout=out)
    assert "1 stored key(s)" in out.getvalue()
    endpoint.refresh_from_db()
    assert endpoint.api_key_sealed != sealed_before
    # then the old key can go
    settings.FIELD_ENCRYPTION_KEYS = [new]
    assert endpoint_config(endpoint).api_key == KEY
    # and a machine without the key that sealed it sends nothing, and says why
    settings.FIELD_ENCRYPTION_KEYS = [old]
    with pytest.raises(ConfigurationError, match="FIELD_ENCRYPTION_KEY"):
        endpoint_config(endpoint)
