"""Shared fixtures. The database is always a real PostgreSQL: the one named by DATABASE_URL, or
the embedded one that config.devstack starts under .data/ when no URL is set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

ROOT = Path(__file__).resolve().parent.parent
# The benchmarks' real published files live beside the checkout (never copied into it).
SEEDDATA = ROOT.parent / "shared" / "seeddata"
# Our own files in the benchmarks' formats, shared by the suites' tests (tests/suites/<name>/).
BENCHMARK_FIXTURES = Path(__file__).resolve().parent / "benchmarks" / "fixtures"


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: Any) -> None:
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
