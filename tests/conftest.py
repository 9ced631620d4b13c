"""Shared fixtures. The database is always a real PostgreSQL: the one named by DATABASE_URL, or
the embedded one that config.devstack starts under .data/ when no URL is set."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db.backends.postgresql.operations import DatabaseOperations

ROOT = Path(__file__).resolve().parent.parent
# The benchmarks' real published files live beside the checkout (never copied into it).
SEEDDATA = ROOT.parent / "shared" / "seeddata"
# Our own files in the benchmarks' formats, shared by the suites' tests (tests/suites/<name>/).
BENCHMARK_FIXTURES = Path(__file__).resolve().parent / "benchmarks" / "fixtures"


# `make test` runs the tests in parallel processes (pytest-xdist, -n 2 --dist loadfile, each process
# with its own test database and Redis database: config/settings_test.py). Each test file is one
# unit of work, as --dist loadfile has it (its module's fixtures, a local model's server say, made
# once), except that the files that start the local model's server are one unit together (that
# server takes both cores: two at once took each other's time), and the longest units (from the
# run's --durations) are handed out first, so that the processes end about together.
TOGETHER = {
    "tests/evaluation/test_local_model.py": "local-model",
    "tests/evaluation/test_local_tool_model.py": "local-model",
    "tests/evaluation/test_rewriting.py": "local-model",
    "tests/config/test_first_run.py": "local-model",
}
LONGEST_FIRST = (
    "local-model",
    "tests/perf/test_scripts_smoke.py",
    "tests/config/test_fuzz_urls.py",
    "tests/perf/test_scale_out.py",
    "tests/test_docs.py",
)


def unit_of(nodeid: str) -> str:
    """The unit of work a test is in: its file, or the group TOGETHER puts its file in."""
    path = nodeid.split("::", 1)[0]
    return TOGETHER.get(path, path)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The units in the order LONGEST_FIRST gives, then as collected (and as pytest-django
    ordered them within)."""

    def rank(item: pytest.Item) -> int:
        unit = unit_of(item.nodeid)
        return LONGEST_FIRST.index(unit) if unit in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """--dist loadfile by unit_of (files, and TOGETHER's groups), the units handed out in the
    order the processes collected them (pytest_collection_modifyitems above)."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByUnit(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

    config.option.loadscopereorder = False
    return ByUnit(config, log)


@pytest.fixture(scope="session", autouse=True)
def flush_by_delete() -> Iterator[None]:
    """A transactional test (a real worker, the live server) ends with Django's flush, which on
    PostgreSQL is one TRUNCATE of every table: ~40 tables' files replaced each time, 0.3-3 s
    however few rows the test wrote (most of a short transactional test's time). DELETE of each
    table in the flush's one transaction leaves the same thing, every table empty and the id
    sequences where they were (the foreign keys are deferrable, checked at the commit), in a
    tenth of the time for the handful of rows a test writes. Kept as Django's TRUNCATE where
    the flush restarts the sequences or cascades to tables it does not name."""
    original = DatabaseOperations.sql_flush

    def sql_flush(
        self: DatabaseOperations,
        style: Any,
        tables: Any,
        *,
        reset_sequences: bool = False,
        allow_cascade: bool = False,
    ) -> list[str]:
        if reset_sequences or allow_cascade:
            return original(
                self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
            )
        # the names are the tables Django lists, quoted
        return [f"DELETE FROM {self.quote_name(table)};" for table in tables]  # noqa: S608

    DatabaseOperations.sql_flush = sql_flush  # type: ignore[method-assign]
    try:
        yield
    finally:
        DatabaseOperations.sql_flush = original  # type: ignore[method-assign]


@pytest.fixture(scope="session")
def django_db_setup(flush_by_delete: None, django_db_setup: None, django_db_blocker: Any) -> None:
    """The test database is kept between runs (--reuse-db: migrating it anew costs most of a
    short run), and a run stopped in the middle of a transactional test leaves that test's rows
    in it, which every later run would count. So it is emptied once as the session starts (what
    a transactional test does after itself; post_migrate gives back the role groups)."""
    with django_db_blocker.unblock():
        call_command("flush", interactive=False, verbosity=0)


@pytest.fixture(scope="session")
def seeddata() -> Path:
    if not SEEDDATA.is_dir():
        pytest.fail(f"shared seed data not found at {SEEDDATA}; it is expected beside the checkout")
    return SEEDDATA


@pytest.fixture(autouse=True)
def fast_password_hasher(settings: Any) -> None:
    # Real hashers take ~100 ms per login on purpose; tests log in hundreds of times.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
