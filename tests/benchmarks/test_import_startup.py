"""`manage.py import_benchmark` starts lean: what it imports is what an import needs.

Start-up is most of what a user waits for on a ToolE-sized file (issue 19): Python, Django and
every module an app, its admin, its URLs or a system check imports. The platform's other
libraries (the OpenAI client and its pydantic types, the Redis client, numpy and the statistics
packages, the virtual API server's HTTP client, Celery) cost seconds of CPU there, and an import
uses none of them: they are imported where they are used.

The command runs as a user runs it, in a process of its own against the test database, and
reports at its exit which of those libraries it loaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from benchmarks.models import Benchmark, Sample

ROOT = Path(__file__).resolve().parents[2]

# Top-level packages an import never uses (each one costs 0.1-2 s of CPU to import here).
HEAVY = (
    "openai",
    "pydantic",
    "httpx2",
    "redis",
    "numpy",
    "scipy",
    "sklearn",
    "statsmodels",
    "krippendorff",
    "markdown",
    "celery",
    "kombu",
)

# The project's own modules an import never uses: every app's admin (the admin finds them when
# its URLs or its checks are first needed, config/adminsite.py), the forms and services they
# import, the papers' analyses with their inputs (looked up when an analysis is computed), and the
# access table (imported by the first request, or when the system checks run).
UNUSED_MODULES = (
    "annotation.admin",
    "evaluation.admin",
    "benchmarks.admin",
    "evaluation.forms",
    "evaluation.analyses",
    "annotation.analysis_inputs",
    "config.access",
)

# Runs manage.py as `python manage.py ...` does, then prints the heavy packages it loaded.
PROBE = """
import json, runpy, sys
heavy = set(sys.argv[1].split(","))
sys.argv = ["manage.py", *sys.argv[2:]]
try:
    runpy.run_path("manage.py", run_name="__main__")
finally:
    loaded = sorted(
        h for h in heavy if any(m == h or m.startswith(h + ".") for m in list(sys.modules))
    )
    print("\\nLOADED " + json.dumps(loaded))
"""


def _database_url() -> str:
    db = connection.settings_dict
    host = db["HOST"] or "127.0.0.1"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{host}:{db['PORT'] or 5432}/{db['NAME']}"


def _run(*args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    env = {
        **os.environ,
        # The test database (the settings read it once, in the new process).
        "DATABASE_URL": _database_url(),
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE, ",".join(HEAVY + UNUSED_MODULES), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("LOADED ")]
    assert lines, f"no report from the probe:\n{done.stdout}\n{done.stderr}"
    return done, json.loads(lines[-1].removeprefix("LOADED "))


@pytest.mark.django_db(transaction=True)
def test_an_import_loads_none_of_the_heavy_libraries_nor_the_apps_admin(tmp_path: Path) -> None:
    # given a small MetaTool benchmark as published
    (tmp_path / "plugin_des.json").write_text(
        json.dumps({"WeatherTool": "Weather forecasts.", "BookTool": "Find books."}),
        encoding="utf-8",
    )
    (tmp_path / "all_clean_data.csv").write_text(
        "Query,Tool\nWill it rain tomorrow?,WeatherTool\nFind me a novel.,BookTool\n",
        encoding="utf-8",
    )

    # when the command imports it, system checks included
    done, loaded = _run(
        "import_benchmark",
        "metatool",
        str(tmp_path / "plugin_des.json"),
        str(tmp_path / "all_clean_data.csv"),
        "--benchmark",
        "startup-lean",
        "--json",
    )

    # then it stored the benchmark, and loaded none of the libraries it does not use
    assert done.returncode == 0, done.stderr
    benchmark = Benchmark.objects.get(name="startup-lean")
    assert Sample.objects.filter(benchmark=benchmark).count() == 2
    assert loaded == []


def test_the_help_loads_none_of_the_heavy_libraries_nor_the_apps_admin() -> None:
    done, loaded = _run("import_benchmark", "--help")
    assert done.returncode == 0, done.stderr
    assert "--allow-known-tools" in done.stdout
    assert loaded == []
