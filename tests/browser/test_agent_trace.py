"""A researcher reads an agent's steps on the run page: the call, its arguments and the
observation with where the virtual API server got it."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.browser.conftest import tab_to
from tests.evaluation.conftest import execute_run, make_simulator
from tests.evaluation.test_agent_runs import (
    import_stabletoolbench,
    launch_g1,
    stabletoolbench_model,
)
from tests.factories import make_superuser
from tests.fake_openai import FakeOpenAI


def test_the_steps_of_an_agent_run_open_on_the_run_page(
    transactional_db: None,
    login: Any,
    live_server: Any,
    screenshot: Any,
    seeddata: Path,
    settings: Any,
) -> None:
    benchmark = import_stabletoolbench(seeddata)
    with FakeOpenAI(responder=stabletoolbench_model) as server:
        endpoint = make_simulator(settings, server.base_url, name="agent-and-simulator")
        run = launch_g1(benchmark, endpoint, item_limit=2)
        # Playwright's loop runs in this thread; the engine runs its own in another.
        worker = threading.Thread(target=execute_run, args=(run,))
        worker.start()
        worker.join(60)
    page = login(make_superuser())
    page.goto(f"{live_server.url}/runs/{run.pk}/")
    summary = page.locator("summary", has_text="2 steps").first
    tab_to(page, "details:has(.trace) > summary")
    page.keyboard.press("Enter")
    trace = page.locator(".trace").first
    expect(trace).to_be_visible()
    expect(trace.locator(".badge.source-simulated")).to_have_count(1)
    expect(trace).to_contain_text("42 things found")
    expect(summary).to_be_visible()
    screenshot(page, "agent-trace")
