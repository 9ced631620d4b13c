"""Researchers set up endpoints and judges on their own pages (issue 29), never in the admin: the
pages write through the services the admin and the API use (endpoint_save, endpoint_check,
judge_save), show a key only by its last four characters, keep it when the key field is left
empty, check the connection in place (htmx), and name the field of every refusal. Annotators get
the 403 page, anonymous visitors the login page. No page a researcher opens links into /admin/."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.services import campaign_create
from evaluation import judging
from evaluation.credentials import unseal
from evaluation.models import Endpoint, Judge
from evaluation.services import endpoint_save
from evaluation.work.addresses import normalised_base_url
from tests.evaluation.test_credentials import Listener
from tests.factories import make_benchmark, make_researcher, make_superuser, make_user
from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.django_db

KEY = "sk-proj-Zq8vT2mLk4Rx9wEy7uB3nC6dF1gH5jK0wxyz"


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as running:
        yield running


@pytest.fixture
def researcher() -> Client:
    client = Client()
    client.force_login(make_researcher())
    return client


def form(base_url: str, **fields: Any) -> dict[str, Any]:
    return {
        "name": "fake",
        "base_url": base_url,
        "model": "fake-model",
        "style": "chat",
        "default_params": '{"temperature": 0}',
        "max_concurrency": 3,
        "requests_per_minute": "",
        "timeout_seconds": 5,
        "max_attempts": 2,
        "max_claims": 3,
        "price_in": "0.5",
        "price_out": "1.5",
        "price_cached": "",
        **fields,
    }


def saved(base_url: str, **key: Any) -> Endpoint:
    """An endpoint as the form above would save it, through the service."""
    return endpoint_save(
        name="fake",
        base_url=base_url,
        model="fake-model",
        max_concurrency=3,
        timeout_seconds=5,
        max_attempts=2,
        **key,
    )


def text(response: Any) -> str:
    return response.content.decode()


def test_a_researcher_adds_an_endpoint_with_its_key_sealed_and_only_its_last_four_shown(
    researcher: Client, server: FakeOpenAI
) -> None:
    added = researcher.post("/endpoints/new/", form(server.base_url, api_key=KEY))
    assert added.status_code == 302, text(added)[-2000:]
    endpoint = Endpoint.objects.get(name="fake")
    assert added["Location"] == f"/endpoints/{endpoint.pk}/"
    assert (endpoint.model, endpoint.style, endpoint.max_concurrency) == ("fake-model", "chat", 3)
    assert endpoint.default_params == {"temperature": 0}
    assert (str(endpoint.price_in), str(endpoint.price_out)) == ("0.500000", "1.500000")
    assert KEY not in endpoint.api_key_sealed
    assert unseal(endpoint.api_key_sealed, normalised_base_url(server.base_url)) == KEY
    for page in (researcher.get(f"/endpoints/{endpoint.pk}/"), researcher.get("/endpoints/")):
        assert page.status_code == 200
        assert KEY not in text(page)
        assert KEY[:-4] not in text(page)
        assert "ends with …wxyz" in text(page)


def test_an_empty_key_field_keeps_the_key_and_the_box_removes_it(
    researcher: Client, server: FakeOpenAI
) -> None:
    endpoint = saved(server.base_url, api_key=KEY)
    edited = researcher.post(
        f"/endpoints/{endpoint.pk}/", form(server.base_url, api_key="", max_concurrency=5)
    )
    assert edited.status_code == 302, text(edited)[-2000:]
    endpoint.refresh_from_db()
    assert endpoint.max_concurrency == 5
    assert unseal(endpoint.api_key_sealed, normalised_base_url(server.base_url)) == KEY
    assert endpoint.api_key_last4 == "wxyz"
    cleared = researcher.post(
        f"/endpoints/{endpoint.pk}/", form(server.base_url, clear_api_key="on")
    )
    assert cleared.status_code == 302
    endpoint.refresh_from_db()
    assert (endpoint.api_key_sealed, endpoint.api_key_last4) == ("", "")


def test_a_new_base_url_without_the_key_is_refused_beside_the_base_url(
    researcher: Client, server: FakeOpenAI
) -> None:
    endpoint = saved(server.base_url, api_key=KEY)
    moved = researcher.post(f"/endpoints/{endpoint.pk}/", form("http://127.0.0.1:9/v1"))
    assert moved.status_code == 400
    assert 'id="id_base_url-error"' in text(moved)
    assert "enter the key again" in text(moved)
    endpoint.refresh_from_db()
    assert endpoint.base_url == server.base_url


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("base_url", "file:///etc/passwd", "http:// or https://"),
        ("base_url", "http://user:pw@api.example/v1", "user name or password"),
        ("base_url", "http://api.example/v1?key=1", "no query"),
        ("max_concurrency", "0", "greater than or equal to 1"),
        ("default_params", "[1, 2]", "JSON object"),
        ("default_params", "{not json", "JSON"),
        ("price_in", "-1", "greater than or equal to 0"),
        ("api_key", "OPENAI_API_KEY", "environment variable"),
        ("name", "", "required"),
    ],
)
def test_a_refused_value_is_named_beside_its_field_and_nothing_is_saved(
    researcher: Client, field: str, value: str, said: str
) -> None:
    refused = researcher.post("/endpoints/new/", {**form("http://127.0.0.1:9/v1"), field: value})
    assert refused.status_code == 400
    page = text(refused)
    error = re.search(rf'id="id_{field}-error">([^<]*)<', page)
    assert error is not None, page[-3000:]
    assert said in error.group(1)
    assert not Endpoint.objects.filter(name="fake").exists()


def test_the_connection_check_answers_in_place_with_the_stored_key(
    researcher: Client, server: FakeOpenAI
) -> None:
    endpoint = saved(server.base_url, api_key=KEY)
    page = text(researcher.get(f"/endpoints/{endpoint.pk}/"))
    assert f'hx-post="/endpoints/{endpoint.pk}/check/"' in page
    checked = researcher.post(f"/endpoints/{endpoint.pk}/check/", HTTP_HX_REQUEST="true")
    assert checked.status_code == 200
    assert "<html" not in text(checked)
    assert 'class="message message-success"' in text(checked)
    assert "reachable; it offers model &#x27;fake-model&#x27; (1 model(s))" in text(checked)
    # without htmx: the message on the endpoint's page
    followed = researcher.post(f"/endpoints/{endpoint.pk}/check/", follow=True)
    assert "reachable; it offers model" in text(followed)
    # a model the server does not list: a warning
    Endpoint.objects.filter(pk=endpoint.pk).update(model="other")
    warned = researcher.post(f"/endpoints/{endpoint.pk}/check/", HTTP_HX_REQUEST="true")
    assert "message-warning" in text(warned) and "does not list model &#x27;other&#x27;" in text(
        warned
    )


def test_the_connection_check_sends_the_key_only_there_and_shows_no_answer_body(
    researcher: Client,
) -> None:
    with Listener(status=401, body=b"<html>secret internals " + KEY.encode() + b"</html>") as srv:
        endpoint = saved(srv.base_url, api_key=KEY)
        checked = researcher.post(f"/endpoints/{endpoint.pk}/check/", HTTP_HX_REQUEST="true")
    assert [r["headers"].get("authorization") for r in srv.requests] == [f"Bearer {KEY}"]
    assert "message-error" in text(checked)
    assert "HTTP 401" in text(checked)
    assert "secret internals" not in text(checked) and KEY not in text(checked)


def test_a_researcher_defines_a_judge_and_sees_the_versions_of_its_template(
    researcher: Client, server: FakeOpenAI
) -> None:
    endpoint = saved(server.base_url)
    older = judging.judge_create(name="pass-v1", template="stabletoolbench.pass", endpoint=endpoint)
    page = text(researcher.get("/judges/new/"))
    assert "stabletoolbench.pass" in page
    defined = researcher.post(
        "/judges/new/",
        {
            "name": "pass-v2",
            "template": "stabletoolbench.pass",
            "endpoint": endpoint.pk,
            "params": '{"temperature": 0}',
        },
    )
    assert defined.status_code == 302, text(defined)[-2000:]
    judge = Judge.objects.get(name="pass-v2")
    assert (judge.kind, judge.params) == ("pass", {"temperature": 0})
    detail = text(researcher.get(f"/judges/{judge.pk}/"))
    assert f'href="/judges/{older.pk}/"' in detail and "pass-v2 <span" in detail
    assert "pass-v2" in text(researcher.get("/judges/"))


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("template", "nope.nothing", "Select a valid choice"),
        ("params", "[1]", "JSON object"),
        ("name", "taken", "already exists"),
    ],
)
def test_a_refused_judge_names_its_field(
    researcher: Client, field: str, value: str, said: str
) -> None:
    endpoint = saved("http://127.0.0.1:9/v1")
    judging.judge_create(name="taken", template="generic.pairwise", endpoint=endpoint)
    data = {"name": "new", "template": "generic.pairwise", "endpoint": endpoint.pk, "params": ""}
    refused = researcher.post("/judges/new/", {**data, field: value})
    assert refused.status_code == 400
    error = re.search(rf'id="id_{field}-error">([^<]*)<', text(refused))
    assert error is not None and said in error.group(1), text(refused)[-3000:]
    assert not Judge.objects.filter(name="new").exists()


URLS = ("/endpoints/", "/endpoints/new/", "/judges/", "/judges/new/")


def test_an_annotator_gets_the_403_page_and_anonymous_the_login() -> None:
    endpoint = saved("http://127.0.0.1:9/v1")
    judge = judging.judge_create(name="j", template="generic.pairwise", endpoint=endpoint)
    annotator = Client()
    annotator.force_login(make_user())
    anonymous = Client()
    urls = (*URLS, f"/endpoints/{endpoint.pk}/", f"/judges/{judge.pk}/")
    for url in urls:
        refused = annotator.get(url)
        assert refused.status_code == 403, url
        assert "<html" in text(refused)
        assert anonymous.get(url)["Location"].startswith("/accounts/login/")
    for url in (f"/endpoints/{endpoint.pk}/", f"/endpoints/{endpoint.pk}/check/", "/judges/new/"):
        assert annotator.post(url, form("http://127.0.0.1:9/v1")).status_code == 403
    assert Endpoint.objects.get(name="fake").max_concurrency == 3


def test_no_page_a_researcher_opens_links_into_the_admin(researcher: Client) -> None:
    """Every page of the researcher's navigation, and the pages one link from them (same
    site), has no link into /admin/: the admin is the operators'."""
    endpoint = saved("http://127.0.0.1:9/v1")
    judging.judge_create(name="j", template="generic.pairwise", endpoint=endpoint)
    campaign = campaign_create(name="C", kind="motivation", benchmark=make_benchmark())
    start = reverse("annotation:home")
    seen: set[str] = set()
    queue = [
        start,
        reverse("annotation:progress", args=[campaign.pk]),
        reverse("annotation:agreement", args=[campaign.pk]),
        reverse("evaluation:run-new"),
        reverse("evaluation:job-new"),
    ]
    while queue and len(seen) < 60:
        url = queue.pop(0)
        if url in seen:
            continue
        seen.add(url)
        page = researcher.get(url)
        if page.status_code != 200 or "text/html" not in page.get("Content-Type", ""):
            continue
        links = re.findall(r'href="([^"#?]*)', text(page))
        assert not [link for link in links if link.startswith("/admin")], url
        if url == start or url in NAV_PAGES:
            queue += [link for link in links if link.startswith("/") and link not in seen]
    assert {
        "/endpoints/",
        "/judges/",
        "/runs/",
        "/campaigns/",
        f"/endpoints/{endpoint.pk}/",
    } <= seen


NAV_PAGES = {"/endpoints/", "/judges/", "/runs/", "/judging/", "/campaigns/", "/benchmarks/"}


def test_the_superuser_still_has_the_admin_in_the_navigation() -> None:
    client = Client()
    client.force_login(make_superuser())
    assert 'href="/admin/"' in text(client.get("/endpoints/"))


def test_the_key_variable_is_offered_only_where_the_operator_lists_some(
    researcher: Client, settings: Any
) -> None:
    settings.ENDPOINT_KEY_VARIABLES = []
    assert 'name="api_key_env"' not in text(researcher.get("/endpoints/new/"))
    # not offered: not read either
    added = researcher.post("/endpoints/new/", form("http://127.0.0.1:9/v1", api_key_env="²"))
    assert added.status_code == 302
    assert Endpoint.objects.get(name="fake").api_key_env == ""
    settings.ENDPOINT_KEY_VARIABLES = ["GROQ_KEY"]
    assert 'name="api_key_env"' in text(researcher.get("/endpoints/new/"))
    refused = researcher.post(
        "/endpoints/new/", form("http://127.0.0.1:9/v1", name="other", api_key_env="OTHER_KEY")
    )
    assert refused.status_code == 400
    error = re.search(r'id="id_api_key_env-error">([^<]*)<', text(refused))
    assert error is not None and "ENDPOINT_KEY_VARIABLES" in error.group(1)
    listed = researcher.post(
        "/endpoints/new/", form("http://127.0.0.1:9/v1", name="other", api_key_env="GROQ_KEY")
    )
    assert listed.status_code == 302
    assert Endpoint.objects.get(name="other").key_display == "read from GROQ_KEY"


def test_the_admin_changes_a_judge_through_the_same_service() -> None:
    endpoint = saved("http://127.0.0.1:9/v1")
    judge = judging.judge_create(name="j", template="generic.pairwise", endpoint=endpoint)
    client = Client()
    client.force_login(make_superuser())
    changed = client.post(
        f"/admin/evaluation/judge/{judge.pk}/change/",
        {
            "name": "j2",
            "template": "stabletoolbench.pass",
            "endpoint": endpoint.pk,
            "params": "{}",
        },
    )
    assert changed.status_code == 302, text(changed)[-2000:]
    judge.refresh_from_db()
    assert (judge.name, judge.kind) == ("j2", "pass")
