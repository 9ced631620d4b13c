"""What the model sees of the search service's answers in BFCL's web search tasks
(web_search.observation), and the calls refused before the service is asked: hand-made
answers, each shown as BFCL's WebSearchAPI would return it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.suites.bfcl import web_search

RESULTS = [
    {"title": "A", "href": "https://a.example", "body": "snippet A"},
    {"title": "B", "href": "https://b.example", "body": "snippet B"},
]
SERPAPI = {
    "organic_results": [
        {"title": "A", "link": "https://a.example", "snippet": "snippet A", "position": 1},
        {"title": "B", "link": "https://b.example", "snippet": "snippet B", "position": 2},
    ]
}


def seen(function: str, arguments: dict[str, Any], served: dict[str, Any], show: bool) -> Any:
    return json.loads(web_search.observation(function, arguments, served, show))


def test_results_are_shown_with_snippets_in_base_and_without_in_no_snippet() -> None:
    for response in (RESULTS, SERPAPI, json.dumps(RESULTS)):
        served = {"error": "", "response": response, "source": "cache"}
        assert seen("search_engine_query", {"keywords": "x"}, served, True) == RESULTS
        assert seen("search_engine_query", {"keywords": "x"}, served, False) == [
            {"title": "A", "href": "https://a.example"},
            {"title": "B", "href": "https://b.example"},
        ]


def test_at_most_max_results_are_shown() -> None:
    served = {"error": "", "response": RESULTS, "source": "real"}
    shown = seen("search_engine_query", {"keywords": "x", "max_results": 1}, served, True)
    assert shown == RESULTS[:1]


def test_an_answer_that_is_no_list_of_results_is_an_error_never_a_snippet() -> None:
    served = {"error": "", "response": "A says: snippet A", "source": "simulated"}
    shown = seen("search_engine_query", {"keywords": "x"}, served, False)
    assert list(shown) == ["error"] and "snippet A" not in json.dumps(shown)


def test_pages_errors_and_failures() -> None:
    page = {"error": "", "response": "the text", "source": "simulated"}
    assert seen("fetch_url_content", {"url": "https://a.example"}, page, False) == {
        "content": "the text"
    }
    failed = {"error": "The API is not available.", "response": "", "source": "failed"}
    assert seen("fetch_url_content", {"url": "https://a.example"}, failed, True) == {
        "error": "The API is not available."
    }


def test_calls_bfcl_s_function_would_raise_on_are_refused_before_the_service() -> None:
    docs = {doc["name"]: doc for doc in _docs()}
    refused = web_search._refused
    assert refused("fetch_url_content", {"url": "ftp://a"}, docs["fetch_url_content"]) == (
        "Error during execution: Invalid URL: ftp://a"
    )
    assert "not a function of WebSearchAPI" in refused("open", {}, None)
    assert "missing a required argument: 'keywords'" in refused(
        "search_engine_query", {}, docs["search_engine_query"]
    )
    assert "unexpected keyword argument 'query'" in refused(
        "search_engine_query", {"query": "x"}, docs["search_engine_query"]
    )
    assert refused("search_engine_query", {"keywords": "x"}, docs["search_engine_query"]) == ""


def _docs() -> list[dict[str, Any]]:
    path = Path(web_search.__file__).resolve().parents[2] / "demo/bfcl/multi_turn_func_doc"
    return [json.loads(line) for line in (path / "web_search.json").read_text().splitlines()]
