"""The admin finds the apps' admin modules when it is first needed (config/adminsite.py), not at
start-up: its system checks, its URLs and its app list each see every ModelAdmin.

Each case runs in a process of its own, as a command or a web worker starts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

START = """
import os, sys
import django
django.setup()
from django.contrib import admin
from evaluation.models import Run
print("at start-up:", sorted(m._meta.label for m in admin.site._registry))
assert "evaluation.admin" not in sys.modules
"""


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", START + code],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize(
    "first_need",
    [
        # `manage.py check`: the admin's checks of every ModelAdmin
        "from django.core import checks\nchecks.run_checks(tags=[checks.Tags.admin])\n",
        # the first request: the URLconf asks the site for its URLs
        "from django.urls import resolve\nresolve('/admin/evaluation/run/')\n",
        # the admin's index and app pages
        "from django.test import RequestFactory\n"
        "from django.contrib.auth.models import AnonymousUser\n"
        "request = RequestFactory().get('/admin/')\n"
        "request.user = AnonymousUser()\n"
        "admin.site.get_app_list(request)\n",
    ],
    ids=["checks", "urls", "app_list"],
)
def test_the_admin_modules_are_found_when_first_needed(first_need: str) -> None:
    found = "print('then:', Run in admin.site._registry, 'evaluation.admin' in sys.modules)"
    out = _run(first_need + found)
    assert "at start-up: []" in out
    assert "then: True True" in out
