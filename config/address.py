"""The address of the client that made a request, read one way for every throttle (the login's,
the API's and the pages' scopes).

REMOTE_ADDR is the peer that opened the connection. Behind a proxy that is the proxy, for every
client alike, so with TRUSTED_PROXY_COUNT proxies in front of the app (each appending the
address it was reached from to X-Forwarded-For) the client is the entry that many places from
the right: the entries before it are whatever the client wrote and are never believed. Without
a trusted proxy configured the header is ignored, so no client can pick its own address.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from django.conf import settings
from django.core import checks


def client_address(request: Any) -> str:
    peer = str(request.META.get("REMOTE_ADDR", ""))
    proxies = int(getattr(settings, "TRUSTED_PROXY_COUNT", 0) or 0)
    if proxies <= 0:
        return peer
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    forwarded = [part for part in forwarded if part]
    if not forwarded:
        return peer
    # Fewer entries than proxies: the request skipped the outer ones, and the first entry is
    # the one the proxy nearest the app wrote.
    entry = forwarded[-min(proxies, len(forwarded))]
    try:
        return str(ipaddress.ip_address(entry))
    except ValueError:
        # Not written by a proxy that works as configured: count it under the peer's address.
        return peer


def check_trusted_proxies(**_: Any) -> list[checks.CheckMessage]:
    """`check --deploy`: a TLS proxy without TRUSTED_PROXY_COUNT makes every client one address
    (ten failed logins by anyone would pause everyone's)."""
    if getattr(settings, "SECURE_PROXY_SSL_HEADER", None) and not getattr(
        settings, "TRUSTED_PROXY_COUNT", 0
    ):
        return [
            checks.Warning(
                "BEHIND_TLS_PROXY is set but TRUSTED_PROXY_COUNT is 0: every client reaches the "
                "app from the proxy's address, so the login and API throttles count all of them "
                "as one client.",
                hint="Set TRUSTED_PROXY_COUNT to the number of proxies in front of the app "
                "(1 for one TLS proxy) that append to X-Forwarded-For.",
                id="address.W001",
            )
        ]
    return []
