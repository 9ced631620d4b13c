"""The login page, with failed attempts counted per account name and per client address
(config.address): after LOGIN_MAX_FAILURES within LOGIN_LOCKOUT_SECONDS, logins for that name or
from that address pause (in the shared cache, so every web worker agrees)."""

from __future__ import annotations

import hashlib
from typing import Any

from django.conf import settings
from django.contrib.auth.forms import UsernameField
from django.contrib.auth.views import LoginView
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse

from config.address import client_address


def login_name(raw: str) -> str:
    """The name a login form's text is looked up by: the form's own field reads it (stripped,
    NFKC-normalised, as AbstractBaseUser.normalize_username stores it), and the lookup is exact,
    so every spelling that reaches one account is one name here, and two accounts are two."""
    return str(UsernameField().to_python(raw))


def _keys(request: HttpRequest) -> list[str]:
    name = login_name(request.POST.get("username") or "")
    # Hashed: a name may be any text (up to the request's size), a cache key may not.
    user = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()
    return [f"login-fail:addr:{client_address(request)}", f"login-fail:user:{user}"]


class ThrottledLoginView(LoginView):
    throttled = False

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        keys = _keys(request)
        if any((cache.get(key) or 0) >= settings.LOGIN_MAX_FAILURES for key in keys):
            self.throttled = True
            form = self.get_form()
            minutes = max(1, settings.LOGIN_LOCKOUT_SECONDS // 60)
            form.add_error(None, f"Too many failed attempts. Try again in {minutes} minute(s).")
            response = self.form_invalid(form)
            response.status_code = 429
            return response
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form: Any) -> HttpResponse:
        if (
            self.request.method == "POST"
            and form.errors
            and not form.has_error("__all__", "throttled")
        ):
            for key in _keys(self.request):
                if cache.add(key, 1, settings.LOGIN_LOCKOUT_SECONDS) is False:
                    try:
                        cache.incr(key)
                    except ValueError:
                        cache.set(key, 1, settings.LOGIN_LOCKOUT_SECONDS)
        return super().form_invalid(form)
