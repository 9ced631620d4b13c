"""The benchmark page (splits, tools, samples filtered and paginated) and the sample page (input,
gold, candidate tools, revision history with the diff), as a researcher."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from benchmarks.models import Sample
from tests.factories import make_benchmark, make_researcher, make_revision, make_sample, make_tool

pytestmark = pytest.mark.django_db


@pytest.fixture
def researcher(client: Client) -> Client:
    client.force_login(make_researcher())
    return client


def test_the_list_links_each_benchmark_and_counts_revisions(researcher: Client) -> None:
    bench = make_benchmark(name="Calls")
    sample = make_sample(benchmark=bench, revision=2)
    make_sample(benchmark=bench)
    for number in (0, 1, 2):
        make_revision(sample=sample, number=number)
    html = researcher.get("/benchmarks/").content.decode()
    assert f'href="/benchmarks/{bench.pk}/"' in html
    # one revised sample, two revisions (revision 0, as imported, is not one)
    assert '<td class="num">1</td>\n        <td class="num">2</td>' in html
    assert 'href="/benchmarks/import/"' in html


def test_the_benchmark_page_shows_splits_tools_and_filters_samples(
    researcher: Client, django_assert_max_num_queries: Any
) -> None:
    bench = make_benchmark(name="Filters")
    make_tool(benchmark=bench, name="weather", description="Forecasts <b>rain</b>", category="Data")
    for i in range(3):
        make_sample(benchmark=bench, split="dev", external_id=f"d{i}", input={"query": f"snow {i}"})
    for i in range(60):
        make_sample(benchmark=bench, split="test", external_id=f"t{i}", input={"query": "rain"})
    Sample.objects.filter(external_id="t7").update(revision=1)
    url = f"/benchmarks/{bench.pk}/"

    with django_assert_max_num_queries(10):
        html = researcher.get(url).content.decode()
    assert "63 samples" in html
    assert "Forecasts &lt;b&gt;rain&lt;/b&gt;" in html and "<b>rain</b>" not in html
    assert "Page 1 of 2" in html
    assert '<a href="?page=2">Next' in html

    html = researcher.get(url, {"split": "dev"}).content.decode()
    assert "3 samples in dev" in html and ">d2</a>" in html and ">t1</a>" not in html

    html = researcher.get(url, {"q": "SNOW 1"}).content.decode()
    assert "1 sample matching" in html and ">d1</a>" in html and ">d0</a>" not in html

    html = researcher.get(url, {"revised": "1"}).content.decode()
    assert "1 sample, revised only" in html and ">t7</a>" in html

    # an unknown split is no filter; a page past the end is the last page
    assert "63 samples" in researcher.get(url, {"split": "nope"}).content.decode()
    html = researcher.get(url, {"split": "test", "page": "99"}).content.decode()
    assert "Page 2 of 2" in html and '?split=test&amp;page=1">' in html

    # htmx gets the list alone
    part = researcher.get(url, {"q": "snow", "part": "samples"}, HTTP_HX_REQUEST="true")
    assert part.content.decode().lstrip().startswith('<div id="samples">')


def test_the_sample_page_shows_turns_gold_tools_and_the_diff_of_each_revision(
    researcher: Client, django_assert_max_num_queries: Any
) -> None:
    bench = make_benchmark(name="Dialogues")
    make_tool(benchmark=bench, name="clock", description="Tells the time.")
    turns = [
        {"role": "user", "content": "Weather in <Oban>?"},
        {"role": "assistant", "tool_calls": [{"name": "weather", "arguments": {"city": "Oban"}}]},
    ]
    gold_1 = {"tool_calls": [{"name": "weather", "arguments": {"city": "Oban"}}]}
    gold_2 = {
        "tool_calls": [
            {"name": "clock", "arguments": {}},
            {"name": "weather", "arguments": {"city": "Oban", "days": 2}},
        ]
    }
    sample = make_sample(
        benchmark=bench,
        kind="dialogue",
        input={
            "turns": turns,
            "tools": [{"name": "weather", "description": "Forecasts <i>rain</i>"}],
        },
        reference=gold_2,
        candidate_tools=["clock"],
        revision=1,
    )
    make_revision(sample=sample, number=0, reference=gold_1, note="as imported")
    make_revision(sample=sample, number=1, reference=gold_2, note="a clock first")

    # session, user, permissions (own and groups'), benchmark with counts, sample, its tools,
    # its revisions with authors and reviewers
    with django_assert_max_num_queries(8):
        response = researcher.get(f"/benchmarks/{bench.pk}/samples/{sample.pk}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'class="turn turn-user"' in html and "Weather in &lt;Oban&gt;?" in html
    assert '<code class="call-text">weather(' in html
    assert "Forecasts &lt;i&gt;rain&lt;/i&gt;" in html and "Tells the time." in html
    assert "Revision 1" in html and "a clock first" in html and "The sample as imported." in html
    # the diff: one call added in front, one argument added to the call that was first
    assert html.count('class="change change-inserted"') == 1
    assert html.count('class="change change-argument_added"') == 1
    assert "<code>days</code>" in html

    # another benchmark's sample under this benchmark's URL is not found
    other = make_sample(benchmark=make_benchmark(name="Other"))
    assert researcher.get(f"/benchmarks/{bench.pk}/samples/{other.pk}/").status_code == 404
    assert researcher.get(f"/benchmarks/{bench.pk + 999}/").status_code == 404


def _listed_ids(html: str) -> list[str]:
    return re.findall(r'<th scope="row" class="nowrap"><a href="[^"]+">([^<]*)</a></th>', html)


@pytest.mark.collation
def test_samples_are_listed_in_the_natural_order_of_their_ids_page_after_page(
    researcher: Client,
) -> None:
    # MTU-Bench's M-S split imported as published: M-S_0_2, M-S_0_0, M-S_0_3, M-S_0_1, ...
    bench = make_benchmark(name="Natural")
    imported = [f"M-S_{d}_{t}" for d in (1, 0) for t in (2, 0, 10, 3, 1, 9, 11)]
    imported += [f"M-S_{d}_0" for d in range(2, 45)]  # 57 samples: two pages
    imported += ["M-S_007_0"]  # equal to M-S_7_0 as numbers; the text decides: 0 before 7
    for external_id in imported:
        make_sample(benchmark=bench, split="M-S", external_id=external_id)
    make_sample(benchmark=bench, split="A", external_id="z_1")  # an earlier split comes first
    url = f"/benchmarks/{bench.pk}/"

    listed = _listed_ids(researcher.get(url).content.decode())
    listed += _listed_ids(researcher.get(url, {"page": 2}).content.decode())

    expected = ["z_1"] + [f"M-S_0_{t}" for t in (0, 1, 2, 3, 9, 10, 11)]
    expected += [f"M-S_1_{t}" for t in (0, 1, 2, 3, 9, 10, 11)]
    expected += [f"M-S_{d}_0" for d in range(2, 7)] + ["M-S_007_0"]
    expected += [f"M-S_{d}_0" for d in range(7, 45)]
    assert listed == expected
    # a filter keeps that order
    html = researcher.get(url, {"split": "M-S", "q": "M-S_0_"}).content.decode()
    assert _listed_ids(html) == [f"M-S_0_{t}" for t in (0, 1, 2, 3, 9, 10, 11)]


@pytest.mark.collation
def test_hostile_filters_are_no_server_error(researcher: Client) -> None:
    bench = make_benchmark(name="Hostile")
    make_sample(benchmark=bench, external_id="a\u00e9", input={"query": "caf\u00e9"})
    url = f"/benchmarks/{bench.pk}/"
    for params in (
        {"q": "caf\x00\u00e9"},
        {"q": "%_\\"},
        {"split": "\x00"},
        {"page": "-1"},
        {"page": "x" * 50},
        {"revised": "yes"},
        {"q": "y" * 5000},
    ):
        # 400 for what the HTTP boundary refuses (NUL, lone surrogates), never a 5xx
        assert researcher.get(url, params).status_code in (200, 400), params
    assert researcher.get(url + "?q=%ED%A0%80&split=%FF").status_code in (200, 400)
    assert "0 samples matching" in researcher.get(url, {"q": "%_"}).content.decode()
    assert "1 sample matching" in researcher.get(url, {"q": "CAF\u00c9"}).content.decode()
    assert researcher.get(f"/benchmarks/{10**30}/").status_code == 404


def test_the_text_search_filters_on_what_the_trigram_indexes_hold() -> None:
    """The search's filter (icontains on the id and the input's text) is the expression each
    trigram index holds, so that PostgreSQL can find a word among a million samples from the
    indexes (a filter written otherwise would read every sample). On a table this small the
    planner rightly reads the rows; the plan's filter and the indexes' expressions are compared."""
    from django.db import connection

    from benchmarks.selectors import sample_page

    bench = make_benchmark(name="Trigrams")
    for n in range(3):
        make_sample(benchmark=bench, split="test", external_id=f"q{n}", input={"query": "zebra"})
    page = sample_page(benchmark=bench, text="ZEBRA")
    assert [s.external_id for s in page.object_list] == ["q0", "q1", "q2"]
    plan = page.paginator.object_list.explain()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'benchmarks_sample'"
            " AND indexdef LIKE '%%gin_trgm_ops%%'"
        )
        indexes = dict(cursor.fetchall())
    assert set(indexes) == {"sample_input_trgm", "sample_id_trgm"}
    for definition in indexes.values():
        # "... USING gin (upper((input)::text) gin_trgm_ops)" -> "upper((input)::text)"
        expression = definition.split("USING gin (", 1)[1].rsplit(" gin_trgm_ops", 1)[0]
        assert f"{expression} ~~ '%ZEBRA%'" in plan, (expression, plan)
