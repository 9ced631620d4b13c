"""make run: the demo logins it repeats once ready, and a stop that always finishes."""

from __future__ import annotations

import signal

import pytest

from config import rundev
from config.rundev import demo_logins


def test_the_logins_are_the_lines_under_seed_demos_heading_only() -> None:
    output = (
        "Demo logins (local use only):\n"
        "  admin       demo-admin-2026        superuser (created)\n"
        "  annotator1  demo-annotator1-2026   annotator (created)\n"
        "Demo MetaTool (demo): 8 tools\n"
        "  an indented line of another command\n"
        "Demo run 1: Demo model A\n"
    )
    assert demo_logins(output) == [
        "  admin       demo-admin-2026        superuser (created)",
        "  annotator1  demo-annotator1-2026   annotator (created)",
    ]
    assert demo_logins("Demo run 1: no accounts\n") == []


def test_a_second_stop_signal_does_not_interrupt_the_cleanup(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rundev, "_stopping", False)
    # the first SIGTERM (say, from the process group) stops make run
    with pytest.raises(rundev.Stop):
        rundev._on_signal(signal.SIGTERM, None)
    # the second (make forwarding it) arrives while it cleans up, and must not raise there
    assert rundev._on_signal(signal.SIGTERM, None) is None
    assert rundev._on_signal(signal.SIGINT, None) is None
