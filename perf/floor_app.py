"""The floors of perf/request_cost.py, served by gunicorn as the app is.

`bare`: a WSGI callable that answers "ok" without Django: what gunicorn itself costs a request.
`application`: the project's Django (config.settings: every middleware of MIDDLEWARE, DEBUG as
the environment says) with one view that answers "ok" and reads neither the session nor the
database, at any path: what Django and its middleware cost a request that needs nothing. The
view is named "login" so that the access table (config.access) lets anyone open it, as it does
the sign-in page, without reading the user."""

from __future__ import annotations

from functools import cache
from typing import Any

BODY = b"ok"


def bare(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(BODY)))])
    return [BODY]


def floor_view(request: Any) -> Any:
    from django.http import HttpResponse

    return HttpResponse(BODY, content_type="text/plain")


def _urlpatterns() -> list[Any]:
    from django.urls import re_path

    return [re_path(r"", floor_view, name="login")]


@cache
def _handler() -> Any:
    import os

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.handlers.wsgi import WSGIHandler, WSGIRequest
    from django.core.wsgi import get_wsgi_application

    get_wsgi_application()  # django.setup()

    class FloorRequest(WSGIRequest):
        def __init__(self, environ: dict[str, Any]) -> None:
            super().__init__(environ)
            self.urlconf = __name__  # this module's urlpatterns, whatever the path

    class FloorHandler(WSGIHandler):
        request_class = FloorRequest

    return FloorHandler()


def application(environ: dict[str, Any], start_response: Any) -> Any:
    return _handler()(environ, start_response)


def __getattr__(name: str) -> Any:
    # `urlpatterns` built on first use (Django's resolver reads it), after django.setup().
    if name == "urlpatterns":
        return _urlpatterns()
    raise AttributeError(name)
