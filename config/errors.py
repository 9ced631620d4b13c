"""One domain error for the whole application, and how the API shows it.

A service refuses a request by raising `ApplicationError` (or a subclass named for its area:
`AnnotationError`, `RunError`, `JudgeError`...). The message is written for the person who asked
and says what is wrong; `field` says where (a form field, a JSON path, "file:line"). Views and
API endpoints do not translate errors one by one: DRF's exception handler below turns any
`ApplicationError` into a 400 (or the error's own status) with `{"detail": ..., "code": ...,
"field": ...}`, and pages render it with `templates/partials/error.html`.

It is a `ValueError`, so code written before it (`except ValueError`) still catches it. No Django
import at module level: pure modules (suites, statistics) may raise it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any


class ApplicationError(ValueError):
    """A request the application refuses; the message says why, for the person who asked."""

    status = 400
    code = "invalid"

    def __init__(
        self,
        message: str = "",
        *,
        field: str = "",
        code: str | None = None,
        status: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        if code is not None:
            self.code = code
        if status is not None:
            self.status = status

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"detail": str(self), "code": self.code}
        if self.field:
            body["field"] = self.field
        return body


def model_checked(
    instance: Any, error: type[ApplicationError], *, json_objects: dict[str, str] | None = None
) -> None:
    """A model instance's own checks (`full_clean`) as the service's error: every field's
    problems in one message, the first field named. `json_objects` {field: example}: fields
    that must hold a JSON object, refused first with the example (a form may post a list)."""
    # Here, not at the top: pure modules import this one (see the module's docstring).
    from django.core.exceptions import ValidationError

    for name, example in (json_objects or {}).items():
        if not isinstance(getattr(instance, name), dict):
            raise error(
                f"{name}: the generation parameters are a JSON object, e.g. {example}",
                field=name,
            )
    try:
        instance.full_clean()
    except ValidationError as exc:
        raise error(
            "; ".join(
                f"{field}: {' '.join(problems)}" for field, problems in exc.message_dict.items()
            ),
            field=next(iter(exc.message_dict), ""),
        ) from None


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Any:
    """DRF's handler, plus one answer for every `ApplicationError`."""
    # Here, not at the top: pure modules import this one (see the module's docstring).
    from rest_framework.response import Response
    from rest_framework.views import exception_handler

    if isinstance(exc, ApplicationError):
        return Response(exc.as_dict(), status=exc.status)
    return exception_handler(exc, context)


def shows_errors(redraw: Callable[..., Any] | None = None) -> Callable[[Callable], Callable]:
    """A page view whose services may refuse: the `ApplicationError` it raises is shown to the
    person who asked, so that views do not catch errors one by one.

    `redraw(request, error, *args, **kwargs)` (the view's own arguments) answers with the page
    drawn again in place with the message, what was typed kept; without it, the message is
    `templates/partials/error.html`: its fragment for an htmx request, a page otherwise, with
    the error's status (400 unless it says otherwise)."""

    def decorate(view: Callable) -> Callable:
        @functools.wraps(view)
        def wrapped(request: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return view(request, *args, **kwargs)
            except ApplicationError as error:
                if redraw is not None:
                    return redraw(request, error, *args, **kwargs)
                return error_response(request, error)

        return wrapped

    return decorate


def error_response(request: Any, error: ApplicationError) -> Any:
    """The message of a refused request as a page (or, for htmx, the fragment)."""
    # Here, not at the top: pure modules import this one (see the module's docstring).
    from django.shortcuts import render

    template = "partials/error.html"
    if getattr(request, "htmx", False):
        template += "#error"
    return render(request, template, {"error": error}, status=error.status)
