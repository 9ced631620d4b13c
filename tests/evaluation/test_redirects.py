"""The model client follows no redirect (issue 27, finding 7): a 3xx is an error that names its
status and Location, is not retried and sends nothing where it points, whatever calls the
endpoint (a run's chunk, a judge job, a rewriting, an embedding, the simulator, the admin's
connection check). And a base URL carries nothing but an address: no user name or password,
query, fragment or other scheme."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.test import Client

from benchmarks.kit.protocol import CallFailed, Prompt
from evaluation import services
from evaluation.embedders import remote_embed
from evaluation.models import Endpoint, Prediction
from evaluation.virtualapi.server import simulator_caller
from evaluation.work.caller import Caller
from tests.evaluation.conftest import execute_run, make_counting_benchmark, make_endpoint
from tests.factories import make_researcher, make_superuser
from tests.fake_openai import FakeOpenAI

REDIRECTS = ("301", "302", "303", "307", "308")


@pytest.fixture
def elsewhere() -> Iterator[FakeOpenAI]:
    """Where the redirects point: it must never hear a word."""
    with FakeOpenAI(responder="fixed:Answer: from elsewhere") as server:
        yield server


def redirecting(elsewhere: FakeOpenAI, status: str) -> FakeOpenAI:
    return FakeOpenAI(
        responder="fixed:Answer: 1",
        faults={status: 1.0},
        redirect_to=f"{elsewhere.base_url}/chat/completions",
    )


def ask_through_caller(endpoint: Endpoint) -> BaseException:
    """One call through a Caller made the way every async path makes one (endpoint_client)."""

    async def call() -> BaseException:
        caller = simulator_caller(endpoint)
        assert isinstance(caller, Caller)
        caller.rng = random.Random(0)
        try:
            await caller.call(Prompt(messages=[{"role": "user", "content": "hi"}]))
        except CallFailed as exc:
            return exc
        finally:
            await caller.client.close()
        raise AssertionError("the call did not fail")

    return asyncio.run(call())


@pytest.mark.django_db
@pytest.mark.parametrize("status", REDIRECTS)
def test_a_redirect_is_a_final_error_naming_where_it_pointed(
    status: str, elsewhere: FakeOpenAI
) -> None:
    with redirecting(elsewhere, status) as server:
        endpoint = make_endpoint(server.base_url, max_attempts=4)
        error = ask_through_caller(endpoint)
        # then: one request, not retried, nothing sent where it pointed
        assert server.total == 1
    assert elsewhere.total == 0
    assert str(error).startswith(f"HTTP {status}: a redirect to {elsewhere.base_url}")
    assert "redirects are not followed" in str(error)


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("broker")
def test_a_run_against_a_redirecting_server_fails_its_items_and_posts_nothing_elsewhere(
    tmp_path: Path, elsewhere: FakeOpenAI
) -> None:
    benchmark = make_counting_benchmark(tmp_path, 3)
    with redirecting(elsewhere, "307") as server:
        endpoint = make_endpoint(server.base_url, max_attempts=3)
        run = services.run_launch(
            benchmark=benchmark, task="answer", endpoint=endpoint, split="default"
        )
        execute_run(run)
        assert server.total == 3  # one request per item, none retried
    assert elsewhere.total == 0
    failed = list(run.predictions.all())
    assert {p.status for p in failed} == {Prediction.Status.FAILED}
    assert all(
        p.error.startswith(f"HTTP 307: a redirect to {elsewhere.base_url}/chat/completions")
        for p in failed
    )


@pytest.mark.django_db
def test_an_embedding_request_follows_no_redirect(elsewhere: FakeOpenAI) -> None:
    with FakeOpenAI(faults={"307": 1.0}, redirect_to=f"{elsewhere.base_url}/embeddings") as srv:
        endpoint = make_endpoint(srv.base_url, max_attempts=3)
        with pytest.raises(Exception, match="307"):
            remote_embed(endpoint, ["a text"])
        assert srv.total == 1
    assert elsewhere.total == 0


@pytest.mark.django_db
def test_the_connection_check_follows_no_redirect(elsewhere: FakeOpenAI) -> None:
    from tests.evaluation.test_credentials import Listener

    with Listener(status=307, headers={"Location": f"{elsewhere.base_url}/models"}) as moved:
        endpoint = make_endpoint(moved.base_url)
        client = Client()
        client.force_login(make_superuser())
        page = client.post(
            "/admin/evaluation/endpoint/",
            {"action": "check_connection", "_selected_action": [endpoint.pk]},
            follow=True,
        ).content.decode()
        assert len(moved.requests) == 1
    assert elsewhere.total == 0
    assert "HTTP 307" in page
    assert "redirects are not followed" in page


# --- base URLs ----------------------------------------------------------------------------------

REFUSED = {
    "http://localhost@evil.example/v1": "user name or password",
    "http://user:pw@api.example/v1": "user name or password",
    "https://:pw@api.example/v1": "user name or password",
    "http://api.example/v1?key=1": "no query",
    "http://api.example/v1#frag": "no fragment",
    "file:///etc/passwd": "http:// or https://",
    "gopher://127.0.0.1:6379/_FLUSHALL": "http:// or https://",
    "ftp://api.example/v1": "http:// or https://",
    "javascript:alert(1)": "http:// or https://",
    "127.0.0.1": "http:// or https://",
    "http:///v1": "names no host",
    "http://api.example:99999/v1": "not a usable address",
    "http://api .example/v1": "no spaces",
    "http://api.example/v\t1": "no spaces",
}


@pytest.mark.django_db
@pytest.mark.parametrize(("base_url", "why"), REFUSED.items())
def test_a_base_url_is_an_address_and_nothing_else_in_every_way_in(
    base_url: str, why: str, tmp_path: Path
) -> None:
    # the model
    with pytest.raises(ValidationError) as refused:
        Endpoint(name="e", base_url=base_url, model="m").full_clean()
    assert why in " ".join(refused.value.message_dict["base_url"])
    # the admin's form
    client = Client()
    client.force_login(make_researcher())
    form = {
        "name": "odd",
        "base_url": base_url,
        "model": "m",
        "style": "chat",
        "default_params": "{}",
        "max_concurrency": 8,
        "timeout_seconds": 5,
        "max_attempts": 1,
        "max_claims": 1,
    }
    page = client.post("/admin/evaluation/endpoint/add/", form)
    assert page.status_code == 200
    assert "errornote" in page.content.decode()
    # the API
    posted = client.post(
        "/api/endpoints/",
        json.dumps({"name": "odd", "base_url": base_url, "model": "m"}),
        content_type="application/json",
    )
    assert posted.status_code == 400
    assert why in json.dumps(posted.json())
    # the command
    with pytest.raises(CommandError, match=why.replace("?", r"\?")):
        call_command("add_endpoint", "odd", "--base-url", base_url, "--model", "m")
    assert not Endpoint.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "base_url",
    [
        "https://api.openai.com/v1",
        "http://127.0.0.1:8001/v1",
        "http://[::1]:8001/v1/",
        "https://my-resource.openai.azure.com/openai/deployments/gpt-4o",
        "http://localhost:11434/v1",
    ],
)
def test_an_ordinary_base_url_is_taken(base_url: str) -> None:
    Endpoint(name="e", base_url=base_url, model="m").full_clean()
