"""`PORT=8123 make run` on a fresh copy of the tree brings up the web app on 8123 and the local
model beside it on its own port, and stops everything when asked (perf/first_run.py does it; the
README documents it). The model's server used to read $PORT and take the web server's port."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WEB_PORT = 8123


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_make_run_with_port_serves_the_web_app_and_the_local_model_side_by_side() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "perf/first_run.py",
            "--repeat",
            "1",
            "--port",
            str(WEB_PORT),
            "--check-model",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=850,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    found = re.search(r"login page after ([0-9.]+) s .*local model on port (\d+)", done.stdout)
    assert found, done.stdout
    assert int(found[2]) != WEB_PORT
