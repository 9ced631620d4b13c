"""The registry of suites: one line per suite, each package's SUITE, one lookup."""

from __future__ import annotations

import importlib

import pytest

from benchmarks.suites.base import ImportFormatError
from benchmarks.suites.registry import SUITE_MODULES, Suite, all_suites, get_suite, suite_names


@pytest.mark.parametrize("name", list(SUITE_MODULES))
def test_every_registered_package_exposes_its_suite(name):
    package = importlib.import_module(SUITE_MODULES[name])
    suite = get_suite(name)
    assert isinstance(package.SUITE, Suite)
    assert suite is package.SUITE
    assert suite.name == name
    assert suite.tasks and suite.tasks == suite.evaluator.tasks
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
