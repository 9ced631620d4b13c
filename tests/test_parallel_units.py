"""The parallel test run's set-up (tests/conftest.py, config/settings_test.py): the files it
names exist (a renamed file would quietly leave its unit), and each process gets a Redis
database of its own that no perf script flushes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import LONGEST_FIRST, ROOT, TOGETHER, unit_of


def test_the_files_the_units_name_exist() -> None:
    named = {*TOGETHER, *(unit for unit in LONGEST_FIRST if unit.endswith(".py"))}
    assert named and all((ROOT / path).is_file() for path in named), sorted(
        path for path in named if not (ROOT / path).is_file()
    )
    assert set(LONGEST_FIRST) - set(TOGETHER.values()) <= named


def test_a_file_is_its_own_unit_unless_put_with_others() -> None:
    assert unit_of("tests/test_docs.py::test_x[a::b]") == "tests/test_docs.py"
    assert unit_of("tests/evaluation/test_rewriting.py::test_y") == "local-model"


def redis_db(worker: str, first: str | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("TEST_REDIS_DB",)}
    env.update(PYTEST_XDIST_WORKER=worker, DJANGO_SETTINGS_MODULE="config.settings_test")
    env.update(DEBUG="1", DATABASE_URL="postgres://u@127.0.0.1/d", REDIS_URL="redis://h:1/0")
    if first is not None:
        env["TEST_REDIS_DB"] = first
    done = subprocess.run(
        [sys.executable, "-c", "from django.conf import settings; print(settings.TEST_REDIS_DB)"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() or done.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("worker", "first", "expected"),
    [
        ("", None, "15"),
        ("gw0", None, "15"),
        ("gw1", None, "11"),  # past 12-14, the perf scripts'
        ("gw2", None, "10"),
        ("gw1", "6", "5"),
        ("gw3", "2", "ValueError: TEST_REDIS_DB=2 leaves no Redis database for gw3"),
    ],
)
def test_each_process_has_a_redis_database_no_perf_script_flushes(
    worker: str, first: str | None, expected: str
) -> None:
    assert redis_db(worker, first) == expected
