"""Case-insensitive search of text beyond ASCII: the benchmark page's sample search (ids and
inputs) and the API's tool search, for accented Latin, Greek, Cyrillic and Chinese text (UltraTool
asks in Chinese, with Latin words among the characters).

These depend on the database's locale: under the C locale upper('é') is 'é' and none of the
searches that differ in case below finds anything. `make test-collation` runs them against the
embedded PostgreSQL a fresh clone gets (`.ci/run` does), not only against CI's server."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.factories import make_benchmark, make_researcher, make_sample, make_tool

pytestmark = [pytest.mark.django_db, pytest.mark.collation]

# Our own questions, written for this test (demo/test data, not any benchmark's).
QUESTIONS = {
    "fr-1": "Où est le café le plus proche de l'École normale ?",
    "el-1": "Τι καιρό κάνει στην Αθήνα αύριο;",  # noqa: RUF001 (Greek)
    "ru-1": "Какая погода в Москве?",
    "zh-1": "请帮我预订明天从北京到上海的机票",
    "zh-2": "我想买一部 iPhone，预算六千元，帮我比较一下价格",  # noqa: RUF001 (Chinese punctuation)
    "ÉTÉ-3": "A summer sample whose id is accented.",
}


@pytest.fixture
def researcher(client: Client) -> Client:
    client.force_login(make_researcher())
    return client


def _found(client: Client, url: str, q: str) -> list[str]:
    html = client.get(url, {"q": q}).content.decode()
    return sorted(key for key in QUESTIONS if f">{key}</a>" in html)


def test_the_sample_search_ignores_case_in_every_script(researcher: Client) -> None:
    bench = make_benchmark(name="Beyond ASCII")
    for key, question in QUESTIONS.items():
        make_sample(benchmark=bench, split="test", external_id=key, input={"query": question})
    url = f"/benchmarks/{bench.pk}/"
    cases: dict[str, list[str]] = {
        "CAFÉ": ["fr-1"],  # the input has "café"
        "école": ["fr-1"],  # ... and "École"
        "ΑΘΉΝΑ": ["el-1"],  # "Αθήνα"
        "москве": ["ru-1"],  # "Москве"
        "北京到上海": ["zh-1"],  # no case in Chinese: found as written
        # a Latin word among Chinese characters, in capitals
        "IPHONE，预算": ["zh-2"],  # noqa: RUF001 (Chinese punctuation)
        "été-3": ["ÉTÉ-3"],  # the id itself
    }
    found = {q: _found(researcher, url, q) for q in cases}
    assert found == cases


def test_the_tool_search_ignores_case_in_every_script(researcher: Client) -> None:
    bench = make_benchmark(name="Outils")
    make_tool(benchmark=bench, name="réserver_billet", description="Réserve un billet de TRAIN.")
    make_tool(benchmark=bench, name="天气查询", description="查询城市的 Weather 预报")
    make_tool(benchmark=bench, name="погода", description="Прогноз ПОГОДЫ по городу.")

    def names(q: str) -> list[str]:
        response: Any = researcher.get("/api/tools/", {"q": q, "benchmark": bench.pk})
        assert response.status_code == 200, response.content
        return sorted(row["name"] for row in response.json()["results"])

    assert names("RÉSERVER") == ["réserver_billet"]
    assert names("réserve un billet de train") == ["réserver_billet"]
    assert names("城市的 WEATHER") == ["天气查询"]
    assert names("ПОГОДА") == ["погода"]
    assert names("погоды") == ["погода"]
