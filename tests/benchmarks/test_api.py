"""The read-only REST API: authentication, list/filter/detail, and the OpenAPI schema."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from benchmarks.models import Benchmark
from tests.factories import (
    make_benchmark,
    make_researcher,
    make_revision,
    make_sample,
    make_tool,
    make_user,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(client: Client) -> Client:
    client.force_login(make_researcher())
    return client


@pytest.fixture
def data() -> dict[str, Any]:
    wtu = make_benchmark(name="WTU-Eval", suite="wtueval", is_demo=True)
    mtu = make_benchmark(name="MTU-Bench", suite="mtubench")
    tools = {
        "calc": make_tool(
            benchmark=wtu, name="calculator", category="math", description="Evaluates arithmetic."
        ),
        "search": make_tool(
            benchmark=wtu, name="web_search", category="web", description="Searches the web."
        ),
        "weather": make_tool(
            benchmark=mtu,
            name="get_weather",
            category="web",
            description="Weather for a city, via an arithmetic-free API.",
        ),
    }
    samples = {
        "a": make_sample(benchmark=wtu, split="R1", external_id="a", kind="query"),
        "b": make_sample(benchmark=wtu, split="R1", external_id="b", kind="query"),
        "c": make_sample(benchmark=wtu, split="R3", external_id="c", kind="query"),
        "d": make_sample(
            benchmark=mtu,
            split="S-S",
            external_id="d",
            kind="dialogue",
            input={"turns": [{"role": "user", "content": "hi"}]},
        ),
    }
    return {"wtu": wtu, "mtu": mtu, "tools": tools, "samples": samples}


@pytest.mark.parametrize(
    "url",
    ["/api/benchmarks/", "/api/tools/", "/api/samples/", "/api/schema/", "/api/benchmarks/1/"],
)
def test_anonymous_requests_are_refused(client: Client, url: str) -> None:
    response = client.get(url)
    assert response.status_code in (401, 403)


def test_basic_auth_is_accepted(client: Client) -> None:
    make_researcher(username="ada", password="secret-pw")
    response = client.get("/api/benchmarks/", HTTP_AUTHORIZATION="Basic YWRhOnNlY3JldC1wdw==")
    assert response.status_code == 200


def test_benchmark_list_has_tool_count_and_samples_per_split(
    api: Client, data: dict[str, Any], django_assert_max_num_queries: Any
) -> None:
    # (two of them: the user's permissions, its own and its groups', for the access check)
    with django_assert_max_num_queries(7):
        response = api.get("/api/benchmarks/")
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 2
    by_name = {row["name"]: row for row in body["results"]}
    assert by_name["WTU-Eval"]["tool_count"] == 2
    assert by_name["WTU-Eval"]["sample_count"] == 3
    assert by_name["WTU-Eval"]["samples_by_split"] == {"R1": 2, "R3": 1}
    assert by_name["WTU-Eval"]["is_demo"] is True
    assert by_name["MTU-Bench"]["tool_count"] == 1
    assert by_name["MTU-Bench"]["samples_by_split"] == {"S-S": 1}
    assert by_name["MTU-Bench"]["is_demo"] is False


def test_benchmark_without_samples_has_empty_split_counts(api: Client) -> None:
    empty = make_benchmark(name="empty")
    body = api.get(f"/api/benchmarks/{empty.pk}/").json()
    assert body["tool_count"] == 0
    assert body["sample_count"] == 0
    assert body["samples_by_split"] == {}


def test_benchmark_detail(api: Client, data: dict[str, Any]) -> None:
    body = api.get(f"/api/benchmarks/{data['wtu'].pk}/").json()
    assert body["name"] == "WTU-Eval"
    assert body["samples_by_split"] == {"R1": 2, "R3": 1}


def test_benchmark_list_is_paginated(api: Client) -> None:
    for i in range(3):
        make_benchmark(name=f"b{i}")
    body = api.get("/api/benchmarks/?limit=2&offset=1").json()
    assert body["count"] == 3
    assert [row["name"] for row in body["results"]] == ["b1", "b2"]


def test_api_is_read_only(api: Client, data: dict[str, Any]) -> None:
    assert api.post("/api/benchmarks/", {"name": "x", "suite": "generic"}).status_code == 405
    assert api.delete(f"/api/tools/{data['tools']['calc'].pk}/").status_code == 405
    assert Benchmark.objects.count() == 2


def names(response: Any) -> list[str]:
    assert response.status_code == 200, response.content
    return sorted(row["name"] for row in response.json()["results"])


def test_tools_list_and_filters(api: Client, data: dict[str, Any]) -> None:
    wtu = data["wtu"]
    assert names(api.get("/api/tools/")) == ["calculator", "get_weather", "web_search"]
    assert names(api.get(f"/api/tools/?benchmark={wtu.pk}")) == ["calculator", "web_search"]
    assert names(api.get("/api/tools/?benchmark=MTU-Bench")) == ["get_weather"]
    assert names(api.get("/api/tools/?benchmark=no-such")) == []
    assert names(api.get("/api/tools/?category=web")) == ["get_weather", "web_search"]
    # q searches name and description, case-insensitively.
    assert names(api.get("/api/tools/?q=ARITHMETIC")) == ["calculator", "get_weather"]
    assert names(api.get("/api/tools/?q=search&benchmark=WTU-Eval")) == ["web_search"]


def test_tool_detail(api: Client, data: dict[str, Any]) -> None:
    tool = data["tools"]["calc"]
    body = api.get(f"/api/tools/{tool.pk}/").json()
    assert body["name"] == "calculator"
    assert body["benchmark"] == data["wtu"].pk
    assert body["benchmark_name"] == "WTU-Eval"
    assert body["parameters"] == {"type": "object", "properties": {"x": {"type": "string"}}}


def ids(response: Any) -> list[str]:
    assert response.status_code == 200, response.content
    return [row["external_id"] for row in response.json()["results"]]


def test_samples_list_and_filters(api: Client, data: dict[str, Any]) -> None:
    wtu, mtu = data["wtu"], data["mtu"]
    assert sorted(ids(api.get("/api/samples/"))) == ["a", "b", "c", "d"]
    assert ids(api.get(f"/api/samples/?benchmark={wtu.pk}")) == ["a", "b", "c"]
    assert ids(api.get("/api/samples/?benchmark=WTU-Eval&split=R1")) == ["a", "b"]
    assert ids(api.get(f"/api/samples/?benchmark={mtu.pk}&split=R1")) == []
    assert ids(api.get("/api/samples/?kind=dialogue")) == ["d"]
    assert ids(api.get("/api/samples/?split=R3")) == ["c"]


def test_samples_unknown_kind_is_a_400(api: Client, data: dict[str, Any]) -> None:
    response = api.get("/api/samples/?kind=poem")
    assert response.status_code == 400
    assert "kind" in response.json()


def test_samples_list_query_count(
    api: Client, data: dict[str, Any], django_assert_max_num_queries: Any
) -> None:
    wtu = data["wtu"]
    for i in range(30):
        make_sample(benchmark=wtu, split="R2", external_id=f"bulk-{i}")
    # (two of them: the user's permissions, its own and its groups', for the access check)
    with django_assert_max_num_queries(6):
        response = api.get("/api/samples/?limit=50")
    assert response.json()["count"] == 34


def test_sample_detail_lists_revisions(api: Client, data: dict[str, Any]) -> None:
    sample = data["samples"]["a"]
    author = make_user(username="expert")
    make_revision(sample=sample, number=0, note="as imported")
    make_revision(
        sample=sample, number=1, author=author, note="fixed the answer", reference={"answer": 42}
    )
    body = api.get(f"/api/samples/{sample.pk}/").json()
    assert body["external_id"] == "a"
    assert body["split"] == "R1"
    assert body["input"] == sample.input
    assert [(r["number"], r["author"], r["note"]) for r in body["revisions"]] == [
        (0, None, "as imported"),
        (1, "expert", "fixed the answer"),
    ]
    assert body["revisions"][1]["reference"] == {"answer": 42}


def test_sample_list_has_no_revisions(api: Client, data: dict[str, Any]) -> None:
    make_revision(sample=data["samples"]["a"])
    row = api.get("/api/samples/?split=R1").json()["results"][0]
    assert "revisions" not in row


def test_schema_lists_our_paths(api: Client) -> None:
    response = api.get(reverse("api-schema"))
    assert response.status_code == 200
    text = response.content.decode()
    for path in (
        "/api/benchmarks/:",
        "/api/benchmarks/{id}/:",
        "/api/tools/:",
        "/api/tools/{id}/:",
        "/api/samples/:",
        "/api/samples/{id}/:",
    ):
        assert path in text
    assert "name: category" in text
    assert "SampleDetail" in text
