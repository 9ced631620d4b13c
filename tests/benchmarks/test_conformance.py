"""Every registered suite keeps what it promises, on the cases it declares: the checks of
tests/benchmarks/conformance.py (metrics declared and returned, analyses, its exporter), and an
import of its round-trip files, exported in its published format and imported back, gives
identical samples and tools. A new suite is covered by its registry line alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.kit.conformance import conformance_of
from benchmarks.kit.registry import all_suites
from tests.benchmarks.conformance import FILES, Check, checks
from tests.benchmarks.test_export_roundtrip import assert_identical, round_trip

CHECKS = [check for suite in all_suites() for check in checks(suite)]


@pytest.mark.parametrize("check", CHECKS, ids=[check.name for check in CHECKS])
def test_every_suite_keeps_its_promises(check: Check) -> None:
    check.run()


def test_the_suites_declare_analyses() -> None:
    named = {
        (suite.name, task, analysis.name)
        for suite in all_suites()
        for task, analyses in suite.analyses.items()
        for analysis in analyses
    }
    assert ("mtubench", "M-S", "by_turn") in named
    assert ("metatool", "scenario", "by_top_n") in named


ROUND_TRIPS = [
    suite.name
    for suite in all_suites()
    if (promised := conformance_of(suite)) is not None and promised.round_trip is not None
]


@pytest.mark.django_db
@pytest.mark.parametrize("name", ROUND_TRIPS)
def test_every_exporter_writes_back_what_was_imported(name: str, tmp_path: Path) -> None:
    promised = conformance_of(next(s for s in all_suites() if s.name == name))
    assert promised is not None and promised.round_trip is not None
    round_trip(name, promised.round_trip(FILES), tmp_path / "out")
    assert_identical(name, "metadata", not_carried=promised.not_carried)
