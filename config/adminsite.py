"""The admin site, which finds the apps' admin modules when it is first needed.

Django's default admin imports every app's admin module at start-up (AdminConfig.ready calls
admin.autodiscover), and with them the forms, services and selectors they use: about a third of
the start-up of every process, `manage.py import_benchmark` included, which uses none of them
(issue 19: start-up is most of what a user waits for on a ToolE-sized import). Here the modules
are found the first time the site is asked for what they register: its URLs (the URLconf asks
for them when it is loaded, before any request is resolved), its system checks, its app list.
"""

from __future__ import annotations

import threading
from typing import Any

from django.contrib import admin
from django.contrib.admin.apps import SimpleAdminConfig
from django.core.checks import CheckMessage
from django.http import HttpRequest
from django.urls import URLPattern, URLResolver


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
