"""The Content-Security-Policy every response carries: the app's own files only.

Every script, stylesheet and image the pages use is served from /static/ (htmx is vendored,
charts are inline SVG styled by class), so the policy allows 'self' and nothing else: no inline
script, no event handler attribute, no javascript: URL, no eval (htmx's is off: base.html's
htmx-config), no inline style, no plugin, no framing, no form posting elsewhere, no <base>
pointing elsewhere. A script injected into a page through some text that escaped escaping would
not run. tests/config/test_csp.py walks every URL as every role and reads each page for what the
policy would block; the browser tests fail on any violation a page reports.

Django's admin runs under it too (its scripts are files; tests/config/test_csp.py walks every
admin page). The REST framework's browsable API (the API's pages as a browser asks for them) is
another project's page with <style> elements and style attributes in its templates: its
responses get the same policy with inline styles allowed (style-src 'unsafe-inline'); scripts
stay 'self'.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from django.http import HttpRequest, HttpResponse

POLICY: Mapping[str, str] = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",  # data: for the empty favicon (base.html)
    "font-src": "'self'",
    "connect-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'self'",
    "frame-ancestors": "'none'",
    "form-action": "'self'",
}
# The browsable API's pages (see the module's docstring).
BROWSABLE_API_POLICY: Mapping[str, str] = {**POLICY, "style-src": "'self' 'unsafe-inline'"}
HEADER = "Content-Security-Policy"


def policy_header(policy: Mapping[str, str]) -> str:
    return "; ".join(f"{name} {sources}" for name, sources in policy.items())


_HEADER = policy_header(POLICY)
_BROWSABLE_API_HEADER = policy_header(BROWSABLE_API_POLICY)


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if HEADER not in response:
            renderer = getattr(response, "accepted_renderer", None)
            browsable = getattr(renderer, "format", None) == "api"
            response[HEADER] = _BROWSABLE_API_HEADER if browsable else _HEADER
        return response
