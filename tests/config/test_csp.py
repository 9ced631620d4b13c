"""The Content-Security-Policy: every response carries it, and no page breaks it. The walk
requests every URL the resolver knows (tests/config/test_access.py's calls, the admin's too) as
every role, and reads every HTML answer for what the policy it was sent with would block: an
inline script, an event handler attribute, a javascript: URL, a style attribute or element
(unless that page's policy allows inline styles), htmx that would need eval. The templates'
own source is read the same way, for branches no walk renders."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from config import access
from config.csp import POLICY, policy_header
from tests.config.test_access import admin_calls, calls_for, send
from tests.roles import ROLES, World, build_world

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
# <script type=...> that browsers never run (data blocks): no policy applies to them.
DATA_SCRIPTS = {"application/json", "application/ld+json", "text/template"}
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "xlink:href", "data", "poster"}


def directives(header: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for part in header.split(";"):
        words = part.split()
        if words:
            found[words[0]] = set(words[1:])
    return found


def allows_inline_styles(policy: dict[str, set[str]]) -> bool:
    sources = policy.get("style-src", policy.get("default-src", set()))
    return "'unsafe-inline'" in sources


def trigger_filter(spec: str) -> bool:
    """Whether one hx-trigger spec has a filter ("keyup[ctrlKey]", "every 1s [ready()]"): htmx
    evaluates it as JavaScript. A bracket inside a `from:` selector is CSS."""
    words = spec.split()
    if not words:
        return False
    if words[0] == "every":
        return len(words) > 2 and words[2].startswith("[")
    return "[" in words[0] or (len(words) > 1 and words[1].startswith("["))


class Breaches(HTMLParser):
    """What in a page a policy would block (or, with htmx's eval off, what would not work)."""

    def __init__(self, *, inline_styles: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.inline_styles = inline_styles
        self.found: list[str] = []
        self._script: str | None = None  # the type of the inline <script> being read
        self._body: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = {name.lower(): value or "" for name, value in attrs}
        shown = f"<{tag} {' '.join(f'{n}={v!r}' for n, v in named.items())}>"[:160]
        for name, value in named.items():
            if name.startswith("on"):
                self.found.append(f"event handler attribute {name}: {shown}")
            if name.startswith("hx-on") or name.startswith("data-hx-on"):
                self.found.append(f"htmx handler (eval) {name}: {shown}")
            if name in URL_ATTRIBUTES and value.strip().lower().startswith("javascript:"):
                self.found.append(f"javascript: URL in {name}: {shown}")
            if name in ("hx-vals", "hx-headers") and value.strip().lower().startswith(
                ("js:", "javascript:")
            ):
                self.found.append(f"htmx expression (eval) in {name}: {shown}")
            if name == "hx-trigger" and any(map(trigger_filter, value.split(","))):
                self.found.append(f"htmx trigger filter (eval): {shown}")
            if name == "style" and not self.inline_styles:
                self.found.append(f"style attribute: {shown}")
        if tag == "style" and not self.inline_styles:
            self.found.append(f"<style> element: {shown}")
        if tag == "script" and "src" not in named:
            kind = named.get("type", "").strip().lower()
            if kind not in DATA_SCRIPTS:
                self._script = kind or "text/javascript"
                self._body = []

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            self._body.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._script is not None:
            body = "".join(self._body).strip()
            if body:
                self.found.append(f"inline <script>: {body[:120]!r}")
            self._script = None


def breaches(html: str, *, inline_styles: bool) -> list[str]:
    reader = Breaches(inline_styles=inline_styles)
    reader.feed(html)
    reader.close()
    return reader.found


def test_the_reader_finds_what_the_policy_blocks() -> None:
    # the checks below can fail: each kind of breach is found
    page = """
      <script>alert(1)</script><script src="/static/x.js"></script>
      <script type="application/json" id="data">{"a": 1}</script>
      <a href=" JavaScript:alert(2)">x</a><button onclick="go()">b</button>
      <p style="color: red">s</p><style>p {}</style>
      <div hx-on:click="x()"></div><div hx-vals='js:{a: 1}'></div>
      <div hx-trigger="keyup[ctrlKey]"></div>
    """
    found = breaches(page, inline_styles=False)
    assert len(found) == 8, found
    assert len(breaches(page, inline_styles=True)) == 6


def test_the_policy_allows_only_the_apps_own_files() -> None:
    policy = directives(policy_header(POLICY))
    assert policy["default-src"] == {"'self'"}
    assert policy["script-src"] == {"'self'"}
    assert policy["style-src"] == {"'self'"}
    assert policy["object-src"] == {"'none'"}
    assert policy["frame-ancestors"] == {"'none'"}
    assert policy["base-uri"] == {"'self'"}
    assert policy["form-action"] == {"'self'"}
    for sources in policy.values():
        assert "'unsafe-eval'" not in sources and "*" not in sources
        assert not any(s.startswith(("http:", "https:")) for s in sources)


@pytest.fixture
def world(tmp_path: Path) -> World:
    return build_world(tmp_path)


def check(response: Any, where: str) -> list[str]:
    header = response.get("Content-Security-Policy", "")
    if not header:
        return [f"{where}: no Content-Security-Policy header"]
    policy = directives(header)
    wrong = []
    if policy.get("script-src") != {"'self'"}:
        wrong.append(f"{where}: script-src is {policy.get('script-src')}")
    # inline styles for the REST framework's browsable API only (config.csp)
    browsable = getattr(getattr(response, "accepted_renderer", None), "format", None) == "api"
    if allows_inline_styles(policy) != browsable:
        wrong.append(f"{where}: style-src is {policy.get('style-src')}")
    if response.get("Content-Type", "").startswith("text/html") and not getattr(
        response, "streaming", False
    ):
        html = response.content.decode("utf-8", "replace")
        for found in breaches(html, inline_styles=allows_inline_styles(policy)):
            wrong.append(f"{where}: {found}")
    return wrong


@pytest.mark.parametrize("role", ROLES)
def test_every_page_sends_the_policy_and_nothing_on_it_breaks_it(role: str, world: World) -> None:
    client: Client = world.client(role)
    names = sorted(access.url_names(), key=lambda name: name in ("logout", "admin:logout"))
    wrong: list[str] = []
    seen = 0
    for name in names:
        calls = (
            [c for c in admin_calls(name, world)]
            if name.startswith("admin:")
            else [c for _, c in calls_for(name, world)]
        )
        for call in calls:
            wrong += check(send(client, call), f"{role} {call.method} {call.path}")
            seen += 1
            if call.method != "GET" or name.startswith("admin:"):
                continue
            # the same page as htmx asks for it (a fragment), and as a browser asks for it
            # (text/html first: the API's browsable pages; only the API answers by Accept)
            variants = [("htmx", {"HTTP_HX_REQUEST": "true"})]
            if call.path.startswith("/api/"):
                variants.append(
                    ("browser", {"HTTP_ACCEPT": "text/html,application/xhtml+xml,*/*;q=0.8"})
                )
            for how, headers in variants:
                response = client.get(call.path, **headers)
                wrong += check(response, f"{role} GET {call.path} ({how})")
                seen += 1
    assert seen > 100
    assert not wrong, "\n".join(wrong)


def test_no_template_holds_what_the_policy_blocks() -> None:
    # Branches the walk does not render are read in the source (template tags and all).
    wrong = []
    for path in sorted((ROOT / "templates").rglob("*.html")):
        for found in breaches(path.read_text(), inline_styles=False):
            wrong.append(f"{path.relative_to(ROOT)}: {found}")
    assert not wrong, "\n".join(wrong)
