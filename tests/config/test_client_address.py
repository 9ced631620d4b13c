"""Who is asking: one reading of the client's address (config.address.client_address) for every
throttle, X-Forwarded-For only behind the configured number of trusted proxies; and the login
throttle counts an account by the name Django looks it up by (NFKC-normalised), whatever
spelling the guesses use."""

from __future__ import annotations

from typing import Any

import pytest
from django.core import checks
from django.core.cache import cache
from django.test import Client, RequestFactory
from rest_framework.request import Request
from rest_framework.throttling import ScopedRateThrottle

from config.address import client_address
from config.throttle import OneTripThrottle
from tests.factories import TEST_PASSWORD, make_user

pytestmark = pytest.mark.django_db

PROXY = "10.0.0.1"  # the TLS proxy: every request reaches the app from it


@pytest.fixture(autouse=True)
def clean_cache() -> None:
    cache.clear()


def request(remote: str, forwarded: str | None = None) -> Any:
    extra = {"REMOTE_ADDR": remote}
    if forwarded is not None:
        extra["HTTP_X_FORWARDED_FOR"] = forwarded
    return RequestFactory().get("/", **extra)


# --- the address ---------------------------------------------------------------------------------


def test_without_a_trusted_proxy_the_forwarded_header_is_ignored(settings: Any) -> None:
    settings.TRUSTED_PROXY_COUNT = 0
    assert client_address(request("198.51.100.9", "203.0.113.5")) == "198.51.100.9"
    assert client_address(request("198.51.100.9")) == "198.51.100.9"


@pytest.mark.parametrize(
    ("count", "forwarded", "expected"),
    [
        # the proxy appends the address it was reached from: the last entry is the client
        (1, "203.0.113.5", "203.0.113.5"),
        # entries a client wrote itself come before it and are not believed
        (1, "6.6.6.6, 203.0.113.5", "203.0.113.5"),
        (1, "6.6.6.6,203.0.113.5", "203.0.113.5"),
        # two proxies: the client is the second entry from the right
        (2, "6.6.6.6, 203.0.113.5, 10.0.0.7", "203.0.113.5"),
        # fewer entries than proxies (the request skipped one): the first entry written
        (2, "203.0.113.5", "203.0.113.5"),
        # IPv6 is read as written, normalised
        (1, "2001:DB8::1", "2001:db8::1"),
    ],
)
def test_behind_trusted_proxies_the_client_is_read_from_the_right(
    settings: Any, count: int, forwarded: str, expected: str
) -> None:
    settings.TRUSTED_PROXY_COUNT = count
    assert client_address(request(PROXY, forwarded)) == expected


@pytest.mark.parametrize("forwarded", [None, "", "not an address", "203.0.113.5, <script>"])
def test_a_missing_or_unreadable_forwarded_entry_falls_back_to_the_peer(
    settings: Any, forwarded: str | None
) -> None:
    settings.TRUSTED_PROXY_COUNT = 1
    assert client_address(request(PROXY, forwarded)) == PROXY


def test_every_throttle_reads_the_same_address(settings: Any) -> None:
    # DRF's own get_ident believes any X-Forwarded-For when NUM_PROXIES is unset: a client
    # would get a fresh budget per made-up header. The API's throttle reads client_address.
    for count, forwarded in ((0, "203.0.113.5"), (1, "6.6.6.6, 203.0.113.5")):
        settings.TRUSTED_PROXY_COUNT = count
        raw = request(PROXY, forwarded)
        assert OneTripThrottle().get_ident(Request(raw)) == client_address(raw)
    assert issubclass(OneTripThrottle, ScopedRateThrottle)


# --- the login throttle --------------------------------------------------------------------------


def login(client: Client, username: str, password: str, remote: str, forwarded: str = "") -> Any:
    extra = {"REMOTE_ADDR": remote}
    if forwarded:
        extra["HTTP_X_FORWARDED_FOR"] = forwarded
    return client.post("/accounts/login/", {"username": username, "password": password}, **extra)


def test_behind_the_proxy_one_clients_failures_do_not_lock_out_everyone(settings: Any) -> None:
    settings.TRUSTED_PROXY_COUNT = 1
    settings.LOGIN_MAX_FAILURES = 3
    make_user(username="alice", password=TEST_PASSWORD)
    # a guesser tries three made-up names (no account's own counter fills up)
    for n in range(3):
        assert login(Client(), f"nobody{n}", "x", PROXY, "203.0.113.66").status_code == 200
    # and is paused, whatever it writes before the proxy's entry
    assert login(Client(), "nobody9", "x", PROXY, "1.2.3.4, 203.0.113.66").status_code == 429
    # while another client behind the same proxy still logs in
    assert login(Client(), "alice", TEST_PASSWORD, PROXY, "198.51.100.20").status_code == 302


def test_without_a_proxy_a_made_up_forwarded_header_buys_no_new_budget(settings: Any) -> None:
    settings.TRUSTED_PROXY_COUNT = 0
    settings.LOGIN_MAX_FAILURES = 3
    for n in range(3):
        login(Client(), f"nobody{n}", "x", "203.0.113.66", f"198.51.100.{n}")
    assert login(Client(), "nobody9", "x", "203.0.113.66", "198.51.100.99").status_code == 429


@pytest.mark.parametrize(
    "spelling",
    [
        "victim",
        " victim ",
        "ｖｉｃｔｉｍ",  # full-width letters  # noqa: RUF001
        "\N{MATHEMATICAL BOLD SMALL V}\N{MATHEMATICAL BOLD SMALL I}ctim",
        "ｖｉｃｔｉｍ\N{IDEOGRAPHIC SPACE}",  # noqa: RUF001
    ],
)
def test_a_locked_account_takes_no_guess_under_any_spelling_django_logs_in_with(
    settings: Any, spelling: str
) -> None:
    settings.LOGIN_MAX_FAILURES = 3
    make_user(username="victim", password=TEST_PASSWORD)
    # the spelling is one Django's login form reads as the account's name: with the right
    # password it would sign in
    assert login(Client(), spelling, TEST_PASSWORD, "198.51.100.1").status_code == 302
    cache.clear()
    for n in range(3):
        login(Client(), "victim", "wrong", f"198.51.100.{10 + n}")
    # the account is paused: no guess is checked from a new address in any spelling
    refused = login(Client(), spelling, TEST_PASSWORD, "198.51.100.50")
    assert refused.status_code == 429
    assert "Too many failed attempts" in refused.content.decode()


def test_names_that_are_other_accounts_are_counted_apart(settings: Any) -> None:
    # Django looks a name up exactly (after NFKC): "Victim" is another account than "victim",
    # so its counter is its own.
    settings.LOGIN_MAX_FAILURES = 3
    make_user(username="victim", password=TEST_PASSWORD)
    make_user(username="Victim", password=TEST_PASSWORD)
    for n in range(3):
        login(Client(), "victim", "wrong", f"198.51.100.{10 + n}")
    assert login(Client(), "Victim", TEST_PASSWORD, "198.51.100.50").status_code == 302
    assert login(Client(), "victim", TEST_PASSWORD, "198.51.100.51").status_code == 429


def test_check_deploy_warns_of_a_tls_proxy_with_no_trusted_proxy_count(settings: Any) -> None:
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

    def found() -> list[str]:
        messages = checks.run_checks(include_deployment_checks=True, tags=[checks.Tags.security])
        return [m.id for m in messages if m.id and m.id.startswith("address.")]

    settings.TRUSTED_PROXY_COUNT = 0
    assert found() == ["address.W001"]
    settings.TRUSTED_PROXY_COUNT = 1
    assert found() == []
