"""The virtual API server's real-API fetcher refuses SSRF: no real network here, DNS is an
injected resolver and HTTP an httpx MockTransport."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Callable
from typing import Any

import httpx2
import pytest

from evaluation.virtualapi.fetch import FetchFailed, FetchRefused, check_url, fetch

PUBLIC = "93.184.216.34"
API = "api.example.com"


def resolver(*addresses: str) -> Callable[..., list[tuple[Any, ...]]]:
    """A getaddrinfo stand-in answering `addresses` for every host."""

    def resolve(host: str, port: int, *args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        return [
            (socket.AF_INET6, socket.SOCK_STREAM, 6, "", (a, port, 0, 0))
            if ":" in a
            else (socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
            for a in addresses
        ]

    return resolve


class Recorder:
    """A MockTransport handler that keeps every request it saw and answers from a function."""

    def __init__(self, answer: Callable[[httpx2.Request], httpx2.Response]) -> None:
        self.answer = answer
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        return self.answer(request)

    @property
    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self)


def ok(request: httpx2.Request) -> httpx2.Response:
    return httpx2.Response(200, json={"ok": True})


def fetch_via(
    recorder: Recorder, url: str = f"https://{API}/", method: str = "GET", **kwargs: Any
) -> Any:
    """fetch() through the recorder, with DNS answering PUBLIC and [API] allowed unless the
    test says otherwise."""
    kwargs.setdefault("allowed_hosts", [API])
    kwargs.setdefault("resolve", resolver(PUBLIC))
    return fetch(method, url, transport=recorder.transport, **kwargs)


# --- refused: the host resolves to a non-public address ------------------------------------


@pytest.mark.parametrize(
    ("addresses", "reason"),
    [
        (["127.0.0.1"], "loopback"),
        (["::1"], "loopback"),
        (["169.254.169.254"], "link-local"),
        (["10.0.0.1"], "private"),
        (["10.255.255.255"], "private"),
        (["172.16.0.1"], "private"),
        (["192.168.1.1"], "private"),
        (["0.0.0.0"], "unspecified"),  # noqa: S104 -- the address under test, not a bind
        (["100.64.0.1"], "not a globally routable"),
        ([PUBLIC, "10.0.0.1"], "private"),
        (["10.0.0.1", PUBLIC], "private"),
        (["::ffff:169.254.169.254"], "IPv4-mapped"),
        (["2002:7f00:1::"], "6to4"),
        (["fec0::1"], "site-local"),
        (["fd00::1"], "private"),
        (["224.0.0.1"], "multicast"),
        (["ff0e::1"], "multicast"),
    ],
)
def test_host_resolving_to_a_non_public_address_is_refused(
    addresses: list[str], reason: str
) -> None:
    with pytest.raises(FetchRefused, match=re.escape(reason)) as refused:
        check_url(f"http://{API}/x", allowed_hosts=[API], resolve=resolver(*addresses))
    assert f"{API} resolves to" in str(refused.value)


def test_fetch_never_connects_when_the_address_check_fails() -> None:
    recorder = Recorder(ok)
    with pytest.raises(FetchRefused, match="link-local"):
        fetch_via(recorder, f"http://{API}/", resolve=resolver("169.254.169.254"))
    assert recorder.requests == []


# --- refused: IP literals in any spelling, even when allowlisted ----------------------------


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://127.0.0.1/", "loopback"),
        ("http://2130706433/", "loopback"),
        ("http://0x7f000001/", "loopback"),
        ("http://0177.0.0.1/", "loopback"),
        ("http://127.1/", "loopback"),
        ("http://127.0.0.1./", "loopback"),
        ("http://0/", "unspecified"),
        ("http://[::1]/", "loopback"),
        ("http://[::ffff:127.0.0.1]/", "IPv4-mapped form of 127.0.0.1, a loopback"),
        ("http://[::127.0.0.1]/", "IPv4-compatible form of 127.0.0.1, a loopback"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://0xa9fea9fe/latest/meta-data/", "link-local"),
        ("http://[fe80::1%25eth0]/", "link-local"),
        ("http://10.1/", "private"),
        ("http://256.0.0.1/", "not a valid IPv4 address"),
        ("http://08.0.0.1/", "not a valid IPv4 address"),
        ("http://[::1/", "malformed URL"),
    ],
)
def test_ip_literal_host_is_refused_even_if_allowlisted(url: str, reason: str) -> None:
    host = url.split("//", 1)[1].split("/", 1)[0].strip("[]")
    # The resolver says "public" for everything: the literal itself must be what is checked.
    with pytest.raises(FetchRefused, match=re.escape(reason)):
        check_url(url, allowed_hosts=[host, host.lower()], resolve=resolver(PUBLIC))


# --- refused: redirects ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("location", "reason"),
    [
        ("http://127.0.0.1/", "loopback"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://[::1]:8080/", "loopback"),
        ("file:///etc/passwd", "scheme 'file'"),
        ("https://evil.org/", "not in the allowlist"),
        ("//user:pw@api.example.com/", "userinfo"),
    ],
)
def test_redirect_to_a_refused_url_is_not_followed(location: str, reason: str) -> None:
    recorder = Recorder(lambda request: httpx2.Response(302, headers={"Location": location}))
    with pytest.raises(FetchRefused, match=re.escape(reason)):
        fetch_via(
            recorder,
            f"https://{API}/start",
            allowed_hosts=[API, "127.0.0.1", "169.254.169.254", "::1"],
        )
    assert [str(r.url) for r in recorder.requests] == [f"https://{PUBLIC}/start"]


def test_redirect_to_a_host_resolving_privately_is_not_followed() -> None:
    def resolve(host: str, port: int, *args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        return resolver("10.0.0.1" if host == "internal.example.com" else PUBLIC)(host, port)

    recorder = Recorder(
        lambda request: httpx2.Response(302, headers={"Location": "http://internal.example.com/"})
    )
    with pytest.raises(FetchRefused, match=re.escape("internal.example.com resolves to 10.0.0.1")):
        fetch_via(recorder, f"http://{API}/", allowed_hosts=["*.example.com"], resolve=resolve)
    assert len(recorder.requests) == 1


def test_redirect_chain_longer_than_max_redirects_is_refused() -> None:
    def hop(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(302, headers={"Location": f"/hop{len(recorder.requests)}"})

    recorder = Recorder(hop)
    with pytest.raises(FetchRefused, match="more than 3 redirects"):
        fetch_via(recorder, f"http://{API}/", max_redirects=3)
    assert len(recorder.requests) == 4  # the original and three followed redirects


# --- refused: schemes, userinfo, methods, the allowlist -------------------------------------


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("file:///etc/passwd", "scheme 'file'"),
        ("gopher://example.com/", "scheme 'gopher'"),
        ("ftp://example.com/", "scheme 'ftp'"),
        ("data:text/plain,hi", "scheme 'data'"),
        ("javascript:alert(1)", "scheme 'javascript'"),
        ("example.com/path", "scheme '(none)'"),
        ("//example.com/path", "scheme '(none)'"),
        ("http://user:pw@api.example.com/", "userinfo"),
        ("http://api.example.com@evil.org/", "userinfo"),
        ("http:///path", "no host"),
        ("http://api.example.com:99999/", "malformed URL"),
        ("http://api\\example.com/", "not a plain DNS name"),
    ],
)
def test_bad_scheme_or_userinfo_is_refused(url: str, reason: str) -> None:
    with pytest.raises(FetchRefused, match=re.escape(reason)):
        check_url(url, allowed_hosts=["example.com", API, "evil.org"], resolve=resolver(PUBLIC))


def test_host_not_in_the_allowlist_is_refused() -> None:
    with pytest.raises(FetchRefused, match=re.escape("evil.org is not in the allowlist")):
        check_url("https://evil.org/", allowed_hosts=[API], resolve=resolver(PUBLIC))


@pytest.mark.parametrize("url", [f"https://{API}/", f"http://{PUBLIC}/", "http://localhost/"])
def test_empty_allowlist_refuses_everything(url: str) -> None:
    with pytest.raises(FetchRefused, match="real API calls are off"):
        check_url(url, allowed_hosts=[], resolve=resolver(PUBLIC))


def test_wildcard_allows_subdomains_only() -> None:
    assert (
        check_url(
            "https://api.example.com/", allowed_hosts=["*.example.com"], resolve=resolver(PUBLIC)
        )[0]
        == API
    )
    for url in ("https://example.com.evil.org/", "https://example.com/", "https://badexample.com/"):
        with pytest.raises(FetchRefused, match="not in the allowlist"):
            check_url(url, allowed_hosts=["*.example.com"], resolve=resolver(PUBLIC))


def test_allowlist_is_case_insensitive() -> None:
    host, addresses = check_url(
        "https://API.Example.COM/", allowed_hosts=["Api.Example.com"], resolve=resolver(PUBLIC)
    )
    assert (host, [str(a) for a in addresses]) == (API, [PUBLIC])


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH", "CONNECT"])
def test_only_get_and_post(method: str) -> None:
    recorder = Recorder(ok)
    with pytest.raises(FetchRefused, match="only GET and POST"):
        fetch_via(recorder, f"https://{API}/", method=method)
    assert recorder.requests == []


# --- allowed ---------------------------------------------------------------------------------


def test_allowed_get_goes_to_the_checked_ip_with_the_original_host() -> None:
    recorder = Recorder(
        lambda request: httpx2.Response(200, json={"items": [1, 2]}, headers={"X-Test": "yes"})
    )
    result = fetch_via(
        recorder,
        f"https://{API}/v1/items?page=2",
        params={"q": "a b"},
        headers={"X-RapidAPI-Key": "k"},
    )
    assert result.status == 200
    assert json.loads(result.body) == {"items": [1, 2]}
    assert result.headers["x-test"] == "yes"
    assert result.url == f"https://{API}/v1/items?page=2&q=a+b"
    [request] = recorder.requests
    assert request.method == "GET"
    assert request.url.host == PUBLIC
    assert str(request.url) == f"https://{PUBLIC}/v1/items?page=2&q=a+b"
    assert request.headers["host"] == API
    assert request.headers["x-rapidapi-key"] == "k"
    assert request.extensions["sni_hostname"] == API


def test_allowed_post_sends_json_and_keeps_an_explicit_port_in_host() -> None:
    recorder = Recorder(lambda request: httpx2.Response(201, content=request.content))
    result = fetch_via(
        recorder, f"http://{API}:8080/create", method="post", json_body={"name": "x"}
    )
    assert (result.status, json.loads(result.body)) == (201, {"name": "x"})
    [request] = recorder.requests
    assert (request.method, str(request.url)) == ("POST", f"http://{PUBLIC}:8080/create")
    assert request.headers["host"] == f"{API}:8080"
    assert "sni_hostname" not in request.extensions  # plain http: no TLS


def test_ipv6_address_is_used_bracketed() -> None:
    recorder = Recorder(ok)
    fetch_via(recorder, resolve=resolver("2606:4700::6810:85e5"))
    [request] = recorder.requests
    assert str(request.url) == "https://[2606:4700::6810:85e5]/"
    assert request.headers["host"] == API


def test_dns_is_asked_once_per_hop_so_rebinding_cannot_swap_the_address() -> None:
    answers = iter([[PUBLIC], ["127.0.0.1"]])
    calls: list[str] = []

    def rebinding(host: str, port: int, *args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        calls.append(host)
        return resolver(*next(answers))(host, port)

    recorder = Recorder(ok)
    fetch_via(recorder, f"http://{API}/", resolve=rebinding)
    assert calls == [API]
    assert recorder.requests[0].url.host == PUBLIC


def test_allowed_redirect_is_followed_and_rechecked() -> None:
    def answer(request: httpx2.Request) -> httpx2.Response:
        if request.url.path == "/old":
            return httpx2.Response(303, headers={"Location": "https://cdn.example.com/new"})
        return httpx2.Response(200, content=b"moved")

    recorder = Recorder(answer)
    result = fetch_via(
        recorder,
        f"https://{API}/old",
        method="POST",
        json_body={"a": 1},
        headers={"Authorization": "Bearer secret"},
        allowed_hosts=["*.example.com"],
    )
    assert (result.status, result.body, result.url) == (
        200,
        b"moved",
        "https://cdn.example.com/new",
    )
    first, second = recorder.requests
    assert first.headers["authorization"] == "Bearer secret"
    assert (second.method, second.content, second.headers["host"]) == (
        "GET",
        b"",
        "cdn.example.com",
    )
    assert second.extensions["sni_hostname"] == "cdn.example.com"
    assert "authorization" not in second.headers  # another origin does not get the caller's key


def test_non_redirect_error_status_is_returned() -> None:
    recorder = Recorder(lambda request: httpx2.Response(404, content=b"no such item"))
    result = fetch_via(recorder, f"https://{API}/missing")
    assert (result.status, result.body) == (404, b"no such item")


# --- failed ----------------------------------------------------------------------------------


def test_body_over_max_bytes_fails() -> None:
    recorder = Recorder(lambda request: httpx2.Response(200, content=b"x" * 2_001))
    with pytest.raises(FetchFailed, match="larger than 2000 bytes"):
        fetch_via(recorder, f"https://{API}/big", max_bytes=2_000)


def test_body_of_exactly_max_bytes_is_fine() -> None:
    recorder = Recorder(lambda request: httpx2.Response(200, content=b"x" * 2_000))
    result = fetch_via(recorder, max_bytes=2_000)
    assert len(result.body) == 2_000


@pytest.mark.parametrize(
    ("error", "reason"),
    [(httpx2.ReadTimeout, "timed out"), (httpx2.ConnectError, "ConnectError")],
)
def test_network_errors_fail(error: type[httpx2.TransportError], reason: str) -> None:
    def broken(request: httpx2.Request) -> httpx2.Response:
        raise error("boom", request=request)

    with pytest.raises(FetchFailed, match=re.escape(reason)):
        fetch(
            "GET",
            f"https://{API}/",
            allowed_hosts=[API],
            resolve=resolver(PUBLIC),
            transport=httpx2.MockTransport(broken),
        )


def test_unresolvable_host_fails() -> None:
    def nxdomain(*args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    with pytest.raises(FetchFailed, match="could not resolve"):
        check_url(f"https://{API}/", allowed_hosts=[API], resolve=nxdomain)
