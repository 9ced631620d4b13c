"""The registry of suites: one line per suite, each package's SUITE, one lookup."""

from __future__ import annotations

import importlib

import pytest

from benchmarks.kit.base import ImportFormatError
from benchmarks.kit.registry import SUITE_MODULES, Suite, all_suites, get_suite, suite_names


@pytest.mark.parametrize("name", list(SUITE_MODULES))
def test_every_registered_package_exposes_its_suite(name):
    package = importlib.import_module(SUITE_MODULES[name])
    suite = get_suite(name)
    assert isinstance(package.SUITE, Suite)
    assert suite is package.SUITE
    assert suite.name == name
    assert suite.tasks == suite.evaluator.tasks
    # A suite evaluates something, or holds traces to review (imported logs: no tasks).
    assert suite.tasks or suite.trace is not None
    assert suite.default_benchmark


def test_an_unknown_suite_is_refused_naming_the_known_ones():
    with pytest.raises(ImportFormatError, match="unknown suite 'nope'; known suites: metatool"):
        get_suite("nope")


def test_a_protocol_only_module_is_a_suite_without_capabilities(monkeypatch):
    monkeypatch.setitem(SUITE_MODULES, "errors_test", "tests.evaluation.errors_suite")
    suite = get_suite("errors_test")
    assert suite is get_suite("errors_test")
    assert suite.served_tools is None and not suite.judgment_readers and suite.gold is None
    assert "errors_test" in suite_names()
    assert [s.name for s in all_suites()][-1] == suite.name


def test_a_gold_is_recognised_by_the_suite_it_belongs_to():
    from benchmarks.kit.registry import gold_editing

    plan = gold_editing({"plan": [], "tool_usage": []})
    assert plan is not None and plan.shape == "plan" and "tool_usage" in plan.step_keyed
    calls = gold_editing({"calls": [], "answer": {}})
    assert calls is not None and calls.calls_key == "calls" and calls.one_call_per_tool
    generic = gold_editing({"tool_calls": [], "answer": "42"})
    assert generic is not None and generic.calls_key == "tool_calls" and not generic.write_calls
    assert gold_editing({"answer": "42"}) is None and gold_editing(None) is None


def test_served_tools_and_judgment_formats_come_from_their_suites():
    from benchmarks.kit.registry import cache_protocol, judgment_formats, suites_serving_cache

    formats = judgment_formats()
    assert {fmt: suite.name for fmt, (suite, _reader) in formats.items()} == {
        "stabletoolbench-pass": "stabletoolbench",
        "ultratool-planning": "ultratool",
    }
    assert [s.name for s in suites_serving_cache()] == ["stabletoolbench"]
    assert cache_protocol().request_api("Travel", "Ferry Times", "departures") == (
        "Travel",
        "ferry_times_for_Travel",
        "departures",
    )
    served = get_suite("wtueval").served_tools
    assert served is not None and set(served.apis({})) >= {"WikiSearch"}


def test_the_item_context_a_human_sees_shows_the_gold_only_when_asked():
    from benchmarks.kit.protocol import Item

    item = Item(
        split="S-S",
        external_id="7",
        input={"turns": [{"role": "user", "content": "Book it"}]},
        reference={"calls": []},
        candidate_tools=["Book", "Cancel"],
    )
    suite = get_suite("mtubench")
    hidden = suite.context(item)
    assert hidden.turns == item.input["turns"] and hidden.query is None
    assert hidden.candidates == ("Book", "Cancel") and hidden.gold is None
    assert suite.context(item, show_gold=True).gold == {"calls": []}


def test_a_campaign_kind_gets_its_questions_from_the_suite_whose_study_it_is():
    from benchmarks.kit.registry import study_questions

    assert [q["key"] for q in study_questions("turing")] == ["overall", "format", "relevance"]
    assert study_questions("motivation")[0]["key"] == "reason"
    assert study_questions("error_types")[0]["multiple"] is True
    assert study_questions("pairwise") == []
