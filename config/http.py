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
from django.views.defaults import page_not_found
from rest_framework import serializers
from rest_framework.exceptions import ParseError
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.parsers import JSONParser

from config.errors import ApplicationError, error_response
from config.numbers import BIGINT_MAX, ParameterError, whole_number
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


class RequestBody(serializers.Serializer):
    """An API request body: a field the operation does not take is refused by name (a typo is
    not silently ignored), as the schema says (config.apischema: additionalProperties false).
    A form-encoded body may name a dict's keys as "field.key" or "field[key]"."""

    def to_internal_value(self, data: Any) -> Any:
        if hasattr(data, "keys"):
            known = set(self.fields)
            unknown = sorted(
                key for key in data if str(key).split(".", 1)[0].split("[", 1)[0] not in known
            )
            if unknown:
                raise serializers.ValidationError(
                    {key: ["not a field of this request"] for key in unknown[:20]}
                )
        return super().to_internal_value(data)


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    """The API's pages: ?limit= (at most MAX_LIMIT; more is cut to it) and ?offset=, read by
    config.numbers (ASCII digits within what SQL's LIMIT and OFFSET take; anything else is a
    400 naming the parameter), and said so in the schema."""

    max_limit = 1000

    def _number(self, request: Any, name: str, least: int) -> int | None:
        # given empty is not absent: "?offset=" is refused like "?offset=x"
        text = request.query_params.get(name)
        if text == "":
            raise ParameterError(f"{name}: a whole number, not empty", field=name)
        return whole_number(text, name=name, least=least, most=BIGINT_MAX)

    def get_limit(self, request: Any) -> int | None:
        limit = self._number(request, self.limit_query_param, 1)
        return self.default_limit if limit is None else min(limit, self.max_limit)

    def get_offset(self, request: Any) -> int:
        return self._number(request, self.offset_query_param, 0) or 0

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.limit_query_param:
                parameter["description"] += f" At most {self.max_limit}: more is cut to it."
                parameter["schema"].update(minimum=1, maximum=BIGINT_MAX)
            elif parameter["name"] == self.offset_query_param:
                parameter["schema"].update(minimum=0, maximum=BIGINT_MAX)
        return parameters


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

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        """A refusal no view caught (say, a ParameterError from config.numbers in a view, a list
        filter or a form's queryset) is a 4xx with its message, not a 500: the API's JSON, a
        page's error page (config.errors)."""
        if not isinstance(exception, ApplicationError):
            return None
        if request.path.startswith(("/api/", "/virtual/")):
            return JsonResponse(exception.as_dict(), status=exception.status)
        return error_response(request, exception)


MACHINE_PATHS = ("/api/", "/virtual/")


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler404: the API answers JSON even for a path no route matches (/api/runs/-1/), as
    its schema says; pages get Django's page."""
    if request.path.startswith(MACHINE_PATHS):
        return JsonResponse({"detail": "not found"}, status=404)
    return page_not_found(request, exception)


def _refuse(request: HttpRequest, message: str) -> HttpResponse:
    if request.path.startswith(("/api/", "/virtual/")):
        return JsonResponse({"detail": message}, status=400)
    return HttpResponse(message, status=400, content_type="text/plain; charset=utf-8")
