"""The admin site, which finds the apps' admin modules when it is first needed.

Django's default admin imports every app's admin module at start-up (AdminConfig.ready calls
admin.autodiscover), and with them the forms, services and selectors they use: about a third of
the start-up of every process, `manage.py import_benchmark` included, which uses none of them
(start-up is most of what a user waits for on a ToolE-sized import). Here the modules
are found the first time the site is asked for what they register: its URLs (the URLconf asks
for them when it is loaded, before any request is resolved), its system checks, its app list.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar, cast

from django import forms
from django.conf import settings
from django.contrib import admin
from django.contrib.admin import options
from django.contrib.admin.apps import SimpleAdminConfig
from django.contrib.admin.exceptions import DisallowedModelAdminToField
from django.contrib.admin.widgets import AutocompleteMixin
from django.core.checks import CheckMessage
from django.core.exceptions import ValidationError
from django.db import models
from django.forms.fields import InvalidJSONInput, JSONString
from django.http import HttpRequest, HttpResponse, QueryDict
from django.urls import URLPattern, URLResolver

from config.errors import error_response
from config.numbers import ParameterError
from config.untrusted import UntrustedInputError, json_loads_bounded


class BoundedJSONFormField(forms.JSONField):
    """Django's form JSONField reading its text through the one bounded reader (size, depth,
    storable text, finite numbers). Left empty it is the model field's default when the form
    was given one (a column that holds no NULL), else None."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        initial = kwargs.get("initial")
        self.when_empty = initial if callable(initial) else None

    def _read(self, text: str) -> Any:
        return json_loads_bounded(text, max_bytes=settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 2_621_440)

    def to_python(self, value: Any) -> Any:
        if self.disabled or not isinstance(value, str):
            return super().to_python(value)
        if value.strip() in self.empty_values:
            return self.when_empty() if self.when_empty is not None else None
        try:
            converted = self._read(value)
        except UntrustedInputError as exc:
            raise ValidationError(f"not valid JSON: {exc}", code="invalid") from None
        return JSONString(converted) if isinstance(converted, str) else converted

    def bound_data(self, data: Any, initial: Any) -> Any:
        if self.disabled or data is None or not isinstance(data, str):
            return super().bound_data(data, initial)
        try:
            return self._read(data)
        except UntrustedInputError:
            return InvalidJSONInput(data)


def _optgroups(self: Any, name: str, value: Any, attr: Any = None) -> Any:
    """Django's autocomplete widget looks up what was posted to draw the form again: a value
    that is not an id of the related model (say "²") was a 500 there. It keeps only the values
    the related key can take."""
    remote = self.field.remote_field
    target = remote.model._meta.get_field(
        getattr(remote, "field_name", None) or remote.model._meta.pk.attname
    )
    kept = []
    for one in value:
        try:
            target.get_prep_value(target.to_python(one))
        except (ValidationError, ValueError, TypeError):
            continue
        kept.append(one)
    return _django_optgroups(self, name, kept, attr)


_django_optgroups = AutocompleteMixin.optgroups
AutocompleteMixin.optgroups = _optgroups  # type: ignore[method-assign]

# Every JSON field of every admin form (inlines too) reads its text by the one bounded reader
# (config.untrusted): no NaN or Infinity, nothing jsonb cannot store. Django's admin merges
# these defaults into each ModelAdmin's formfield_overrides.
options.FORMFIELD_FOR_DBFIELD_DEFAULTS[models.JSONField] = {"form_class": BoundedJSONFormField}
TO_FIELD = "_to_field"
View = TypeVar("View", bound=Callable[..., Any])


def _without(data: QueryDict, key: str) -> QueryDict:
    copy = data.copy()
    del copy[key]
    return copy


class AdminSite(admin.AdminSite):
    _discovered = False
    _lock = threading.Lock()

    def discover(self) -> None:
        """Import every installed app's admin module, once (what AdminConfig.ready does)."""
        if AdminSite._discovered:
            return
        with AdminSite._lock:
            if not AdminSite._discovered:
                admin.autodiscover()
                AdminSite._discovered = True

    def admin_view(self, view: View, cacheable: bool = False) -> View:
        """Django's wrapper, and the admin's own `_to_field` parameter read as every request
        parameter is: empty is absent (Django looked up a field named ""), and one that may
        not be referenced is a 400 that names it."""
        inner = super().admin_view(view, cacheable)

        @functools.wraps(inner)
        def checked(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if request.GET.get(TO_FIELD) == "":
                request.GET = _without(request.GET, TO_FIELD)  # type: ignore[assignment]
            if request.POST.get(TO_FIELD) == "":
                request.POST = _without(request.POST, TO_FIELD)  # type: ignore[assignment]
            try:
                return inner(request, *args, **kwargs)
            except DisallowedModelAdminToField as exc:
                return error_response(request, ParameterError(f"{TO_FIELD}: {exc}", field=TO_FIELD))

        return cast(View, checked)

    def get_urls(self) -> list[URLResolver | URLPattern]:
        self.discover()
        return super().get_urls()

    def check(self, app_configs: Any) -> list[CheckMessage]:
        self.discover()
        return super().check(app_configs)

    def get_app_list(self, request: HttpRequest, app_label: str | None = None) -> list[Any]:
        self.discover()
        return super().get_app_list(request, app_label)

    @property
    def registry(self) -> dict[Any, admin.ModelAdmin[Any]]:
        """Every model the admin shows, with its ModelAdmin."""
        self.discover()
        return self._registry


class AdminConfig(SimpleAdminConfig):
    """django.contrib.admin (its checks and templates) with the site above, and no
    autodiscover at start-up."""

    default_site = "config.adminsite.AdminSite"
