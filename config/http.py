"""Where requests enter: JSON bodies through one bounded reader (after authentication: DRF parses
a body when a view first reads it, after its authentication and permission checks), query
parameters and form fields without control characters, and domain errors as 400s.

No input, however hostile, may end in a 500: each refusal names what is wrong and where.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from config.untrusted import UntrustedInputError, control_character, json_loads_bounded, unstorable


def max_body_bytes() -> int:
    return int(getattr(settings, "DATA_UPLOAD_MAX_MEMORY_SIZE", None) or 2_621_440)


def read_json_body(stream: Any) -> Any:
    """A request body (a file-like stream) read through json_loads_bounded; reads at most one
    byte over the limit, so a huge body is refused without being held in memory."""
    limit = max_body_bytes()
    return json_loads_bounded(stream.read(limit + 1), max_bytes=limit)


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser with a size and depth limit and storable text (config.untrusted)."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        if stream is None:
            return {}
        try:
            return read_json_body(stream)
        except UntrustedInputError as exc:
            raise ParseError(f"JSON body refused: {exc}") from None


class UntrustedInputMiddleware:
    """Refuses (400) query parameters with control characters, and form fields with a NUL, a
    lone surrogate or a control character other than tab and line breaks, before any view
    (or the database, which would fail on them) sees them."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        for key, values in request.GET.lists():
            for text in (key, *values):
                problem = control_character(text)
                if problem:
                    return _refuse(request, f"the query parameter {key!r} {problem}")
        if request.method == "POST" and request.content_type in (
            "application/x-www-form-urlencoded",
            "multipart/form-data",
        ):
            for key, values in request.POST.lists():
                for text in (key, *values):
                    problem = control_character(text, allow_whitespace=True) or unstorable(text)
                    if problem:
                        return _refuse(request, f"the form field {key!r} {problem}")
        return self.get_response(request)


def _refuse(request: HttpRequest, message: str) -> HttpResponse:
    if request.path.startswith(("/api/", "/virtual/")):
        return JsonResponse({"detail": message}, status=400)
    return HttpResponse(message, status=400, content_type="text/plain; charset=utf-8")
