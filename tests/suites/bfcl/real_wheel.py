"""The real bfcl-eval wheel for the tests that need BFCL's own data or classes: the one in
.data/bfcl/, else downloaded there once per test session (pip download --no-deps; nothing is
installed); the test is skipped, saying why, when neither can be had (no network)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.suites.bfcl.wheel import WheelError, fetch_wheel

ROOT = Path(__file__).resolve().parents[3]
CACHE = ROOT / ".data" / "bfcl"


@pytest.fixture(scope="session")
def real_wheel() -> Path:
    try:
        return fetch_wheel(CACHE)
    except WheelError as exc:
        pytest.skip(f"the bfcl-eval wheel is not in {CACHE} and could not be fetched: {exc}")
