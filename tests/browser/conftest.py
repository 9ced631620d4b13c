"""Browser fixtures: Playwright's sync API driving Debian's Chromium (Playwright's own browser
download is not used) against pytest-django's live server, which serves /static/ too.

One browser per session, a fresh context (cookies, storage) per test; a user is logged in by
putting a session made with the test client's force_login into the context's cookies.
Screenshots go to .artifacts/browser/ at the project root (ignored by git; CI keeps them).
"""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright

from annotation.models import Campaign

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / ".artifacts" / "browser"
INSTALL_HINT = "apt-get install -y chromium"
# Every wait on the page gives up after this; the pages answer in milliseconds.
TIMEOUT_MS = 10_000


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


# Package scope: Playwright's sync API keeps an asyncio event loop running in the main thread
# while it is open, which the rest of the test session (asyncio.run in the run engine) must not
# inherit.
@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    chromium = shutil.which("chromium")
    if chromium is None:
        message = f"Chromium is not on PATH; the browser tests need it: {INSTALL_HINT}"
        if _in_ci():
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    # With that loop running, Django takes every ORM call of the test's (building data,
    # checking what the pages stored) for one made from async code and refuses it
    # (SynchronousOnlyOperation). Nothing here is async: the calls run one after another in
    # the test's thread, which is what the check exists to protect. Lifted only meanwhile.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=chromium,
                headless=True,
                args=["--no-sandbox", "--headless=new", "--disable-gpu", "--disable-dev-shm-usage"],
            )
            yield browser
            browser.close()


# Counts the trusted pointer events of every page: a test that only types sees none.
POINTER_WATCH = """
for (const type of ["pointerdown", "mousedown", "wheel", "touchstart"]) {
  addEventListener(type, (event) => { if (event.isTrusted) window.reportPointer(type); }, true);
}
"""


# Reports every Content-Security-Policy violation of every page (config.csp): what the policy
# blocked (an inline script or style, an eval, a file from elsewhere), as the browser saw it.
CSP_WATCH = """
addEventListener("securitypolicyviolation", (event) => {
  window.reportViolation(
    `${event.violatedDirective} blocked ${event.blockedURI || "inline"} ` +
    `at ${event.sourceFile || location.href}:${event.lineNumber} ${event.sample || ""}`
  );
}, true);
"""


@pytest.fixture
def login(browser: Browser, live_server: Any) -> Iterator[Any]:
    """login(user) -> a page, in a browser context of its own, in which `user` is logged in.
    At the end the test fails if a page had a script error, broke the Content-Security-Policy
    (login.violations, which a test that breaks it on purpose empties) or saw the mouse."""
    contexts: list[BrowserContext] = []
    script_errors: list[str] = []
    pointer: list[str] = []
    violations: list[str] = []

    def log_in(user: Any) -> Page:
        client = Client()
        client.force_login(user)
        context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-GB")
        context.set_default_timeout(TIMEOUT_MS)
        context.add_cookies(
            [
                {
                    "name": settings.SESSION_COOKIE_NAME,
                    "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                    "url": live_server.url,
                }
            ]
        )
        context.expose_function("reportPointer", lambda kind: pointer.append(kind))
        context.add_init_script(POINTER_WATCH)
        context.expose_function("reportViolation", lambda text: violations.append(text))
        context.add_init_script(CSP_WATCH)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda exc: script_errors.append(f"{page.url}: {exc}"))
        page.on(
            "console",
            lambda message: (
                violations.append(f"{page.url}: {message.text}")
                if message.type == "error" and "Content Security Policy" in message.text
                else None
            ),
        )
        return page

    log_in.violations = violations  # type: ignore[attr-defined]
    expect.set_options(timeout=TIMEOUT_MS)
    yield log_in
    for context in contexts:
        context.close()
    assert not script_errors, script_errors
    assert not violations, f"Content-Security-Policy violations: {violations}"
    assert not pointer, f"the pages saw the mouse: {pointer}"


def tab_to(page: Page, selector: str, *, backwards: bool = False, limit: int = 120) -> None:
    """Press Tab (Shift+Tab) until the element matching `selector` has the focus."""
    key = "Shift+Tab" if backwards else "Tab"
    for _ in range(limit):
        if page.evaluate("s => document.activeElement.matches(s)", selector):
            return
        page.keyboard.press(key)
    raise AssertionError(f"{limit} presses of {key} never reached {selector}")


@contextmanager
def posting(page: Page, path: str) -> Iterator[None]:
    """Waits for the POST to `path` that a key pressed inside the block sends, and for htmx to
    settle its answer: new content takes keys (its hx- attributes work) only once settled."""
    page.evaluate(
        "window.htmxSettled = false; document.addEventListener("
        "'htmx:afterSettle', () => { window.htmxSettled = true; }, {once: true})"
    )
    with page.expect_response(lambda r: path in r.url and r.request.method == "POST") as info:
        yield
    assert info.value.ok, f"{info.value.status} from {info.value.url}"
    # wait_for_function gives up after the context's timeout; awaiting a promise would not. A
    # function, not an expression: Playwright polls an expression with eval, which the pages'
    # Content-Security-Policy refuses.
    page.wait_for_function("() => window.htmxSettled === true")


def focused(page: Page) -> Any:
    """The focused element, as a locator's assertions see it."""
    return page.locator("*:focus")


@pytest.fixture(scope="session")
def screenshot() -> Callable[[Page, str], Path]:
    """screenshot(page, name) saves the whole page as .artifacts/browser/<name>.png."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    def take(page: Page, name: str) -> Path:
        path = ARTIFACTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True, animations="disabled", caret="hide")
        return path

    return take


@dataclass
class Studio:
    campaigns: dict[str, Campaign]
    users: dict[str, Any]


@pytest.fixture
def studio(transactional_db: None) -> Studio:
    """The demo studio: the demo benchmarks and accounts (seed_demo), then one demo campaign
    of each kind (seed_demo_studio), open to annotator1 and annotator2, with the researcher
    as reviewer and adjudicator. The live server sees it: the test's writes are committed."""
    call_command("seed_demo", stdout=io.StringIO())
    call_command("seed_demo_studio", stdout=io.StringIO())
    users = {
        u.username: u
        for u in get_user_model().objects.filter(
            username__in=["researcher", "annotator1", "annotator2"]
        )
    }
    return Studio(campaigns={c.kind: c for c in Campaign.objects.all()}, users=users)
