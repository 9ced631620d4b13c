"""Calling a tool's real API without opening the server to SSRF.

The virtual API server may call a tool's real URL (off by default: only hosts on an allowlist).
Those URLs come from benchmark data, so a URL, a redirect or a DNS answer must never make this
server talk to itself, to the cloud metadata service (169.254.169.254) or to anything else on a
non-public network. Hence:

- `check_url` allows only http(s) without userinfo, to an allowlisted host, whose every address
  (IP literals in any spelling included) is globally routable;
- `fetch` connects to the address `check_url` checked (no second DNS lookup, which DNS
  rebinding could answer differently), follows redirects by hand re-checking every hop, and caps
  time and size.

No Django here: the caller hands in the allowlist.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import SplitResult, urlencode, urljoin, urlsplit, urlunsplit

if TYPE_CHECKING:
    # Imported where a request is sent: the HTTP client is a second of start-up for every
    # process that sets Django up (the URLs import this module), most of which never call out.
    import httpx2

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[..., Any]

ALLOWED_SCHEMES = frozenset({"http", "https"})
ALLOWED_METHODS = frozenset({"GET", "POST"})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})

# Hostnames as DNS writes them (IDNs must be given in punycode): anything else is refused rather
# than left to parsers that may disagree about where the host ends.
HOSTNAME = re.compile(r"[a-z0-9_.-]+")
# A part of a host that makes it an IPv4 literal to URL parsers and inet_aton: hex or digits.
NUMERIC_PART = re.compile(r"0x[0-9a-f]*|[0-9]+")

SITE_LOCAL = ipaddress.ip_network("fec0::/10")
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
NAT64 = ipaddress.ip_network("64:ff9b::/96")

# Why an address is not public, most specific first (127.0.0.1 is "loopback", not "private").
NON_PUBLIC: list[tuple[str, Callable[[IPAddress], bool]]] = [
    ("the unspecified address", lambda a: a.is_unspecified),
    ("a loopback address", lambda a: a.is_loopback),
    ("a link-local address", lambda a: a.is_link_local),
    ("a multicast address", lambda a: a.is_multicast),
    ("a site-local address", lambda a: a.version == 6 and a in SITE_LOCAL),
    ("a private address", lambda a: a.is_private),
    ("a reserved address", lambda a: a.is_reserved),
    ("not a globally routable address", lambda a: not a.is_global),
]


class FetchRefused(Exception):
    """The URL, a redirect or an address is not allowed; the message says which and why."""


class FetchFailed(Exception):
    """The call was allowed but did not give a usable answer: network error, timeout, too big."""


@dataclass(frozen=True)
class FetchResult:
    status: int
    headers: dict[str, str]
    body: bytes
    url: str  # the final URL after redirects


def non_public_reason(address: IPAddress) -> str | None:
    """Why `address` must not be reached, or None when it is public.

    IPv6 forms that carry an IPv4 address (mapped, compatible, 6to4, Teredo, NAT64) are judged
    by that IPv4 address too, since traffic to them can end up there."""
    if isinstance(address, ipaddress.IPv6Address):
        for kind, inner in _embedded_ipv4(address):
            reason = non_public_reason(inner)
            if reason:
                return f"{kind} form of {inner}, {reason}"
    for reason, applies in NON_PUBLIC:
        if applies(address):
            return reason
    return None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> list[tuple[str, ipaddress.IPv4Address]]:
    found = []
    if address.ipv4_mapped:
        found.append(("the IPv4-mapped", address.ipv4_mapped))
    if address in IPV4_COMPATIBLE and int(address) > 1:  # :: and ::1 are themselves
        found.append(("the IPv4-compatible", ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)))
    if address in NAT64:
        found.append(("the NAT64", ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)))
    if address.sixtofour:
        found.append(("a 6to4", address.sixtofour))
    if address.teredo:
        server, client = address.teredo
        found += [("a Teredo", server), ("a Teredo", client)]
    return found


def _ipv4_literal(host: str) -> ipaddress.IPv4Address | None:
    """The address a host like 127.0.0.1, 2130706433, 0x7f000001, 0177.0.0.1 or 127.1 stands
    for (the inet_aton spellings, which resolvers and URL parsers accept), else None.

    A host made only of numbers that is no valid address is a ValueError: resolvers disagree on
    what it means."""
    parts = host.removesuffix(".").split(".")
    if not all(NUMERIC_PART.fullmatch(part) for part in parts):
        return None
    invalid = ValueError(f"host {host!r} is not a valid IPv4 address")
    try:
        *leading, last = [_ipv4_number(part) for part in parts]
    except ValueError:
        raise invalid from None
    if len(parts) > 4 or any(n > 255 for n in leading) or last >= 256 ** (5 - len(parts)):
        raise invalid
    value = last
    for index, number in enumerate(leading):
        value += number << (8 * (3 - index))
    return ipaddress.IPv4Address(value)


def _ipv4_number(part: str) -> int:
    """0x-prefixed is hex, 0-prefixed is octal (so 08 is a ValueError), the rest decimal."""
    if part.startswith("0x"):
        return int(part[2:] or "0", 16)
    if len(part) > 1 and part.startswith("0"):
        return int(part, 8)
    return int(part)


def _ip_literal(host: str) -> IPAddress | None:
    """The address an IP-literal host stands for (IPv6 zone id dropped), else None; ValueError
    for a malformed one."""
    if ":" in host:  # only a bracketed IPv6 literal gets a colon into urlsplit's hostname
        try:
            return ipaddress.IPv6Address(host.split("%", 1)[0])
        except ValueError:
            raise ValueError(f"host {host!r} is not a valid IPv6 address") from None
    return _ipv4_literal(host)


def _host_allowed(host: str, allowed_hosts: Collection[str]) -> bool:
    """Exact (case-insensitive) match, or a "*.example.com" entry for its strict subdomains."""
    for entry in allowed_hosts:
        entry = entry.strip().lower()
        if host == entry or (entry.startswith("*.") and host.endswith(entry[1:])):
            return True
    return False


def _split(url: str) -> SplitResult:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- raises ValueError for a bad port
    except ValueError as error:
        raise FetchRefused(f"malformed URL {url!r}: {error}") from None
    return parts


def _resolve(host: str, port: int, resolve: Resolver) -> list[IPAddress]:
    try:
        infos = resolve(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as error:
        raise FetchFailed(f"could not resolve {host}: {error}") from None
    addresses: list[IPAddress] = []
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise FetchFailed(f"could not resolve {host}: no addresses")
    return addresses


def check_url(
    url: str, *, allowed_hosts: Collection[str], resolve: Resolver = socket.getaddrinfo
) -> tuple[str, list[IPAddress]]:
    """The URL's host and its addresses, all public, or FetchRefused saying why not.

    Refused: schemes other than http(s); userinfo; IP literals (in any spelling) that are not
    public, whatever the allowlist says; hosts not on `allowed_hosts` (so an empty allowlist
    refuses everything, which keeps real calls off by default); hosts with ANY non-public
    address, since the connection could go to that one. A host that does not resolve raises
    FetchFailed (a network failure, not a refusal). For an IP literal the returned host is the
    normalised address."""
    parts = _split(url)
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        raise FetchRefused(f"refused {url!r}: scheme {scheme or '(none)'!r} is not http or https")
    if "@" in parts.netloc:
        raise FetchRefused(f"refused {url!r}: userinfo (user:password@) is not allowed in URLs")
    host = parts.hostname or ""
    if not host:
        raise FetchRefused(f"refused {url!r}: no host")
    try:
        literal = _ip_literal(host)
    except ValueError as error:
        raise FetchRefused(f"refused {url!r}: {error}") from None
    if literal is None and not HOSTNAME.fullmatch(host):
        raise FetchRefused(f"refused {url!r}: host {host!r} is not a plain DNS name")
    if literal is not None and (reason := non_public_reason(literal)):
        spelled = "" if host == str(literal) else f" (written {host})"
        raise FetchRefused(f"refused {url!r}: {literal}{spelled} is {reason}")
    if not _host_allowed(host, allowed_hosts):
        if not allowed_hosts:
            raise FetchRefused(f"refused {url!r}: real API calls are off (empty host allowlist)")
        raise FetchRefused(f"refused {url!r}: host {host} is not in the allowlist")
    if literal is not None:
        return str(literal), [literal]
    addresses = _resolve(host, parts.port or (443 if scheme == "https" else 80), resolve)
    for address in addresses:
        if reason := non_public_reason(address):
            raise FetchRefused(f"refused {url!r}: {host} resolves to {address}, {reason}")
    return host, addresses


def _with_params(url: str, params: Mapping[str, Any] | None) -> str:
    if not params:
        return url
    parts = _split(url)
    query = "&".join(q for q in (parts.query, urlencode(params, doseq=True)) if q)
    return urlunsplit(parts._replace(query=query))


def _origin(url: str) -> tuple[str, str | None, int | None]:
    parts = _split(url)
    return parts.scheme.lower(), parts.hostname, parts.port


def _send_once(
    method: str,
    url: str,
    host: str,
    address: IPAddress,
    *,
    headers: Mapping[str, str],
    json_body: Any,
    deadline: float,
    max_bytes: int,
    transport: httpx2.BaseTransport | None,
) -> FetchResult:
    """One request to `address`, presenting `host` in the Host header and (https) as SNI and for
    certificate verification."""
    # On first fetch: only the server's calls to real APIs load the HTTP client.
    import httpx2

    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise FetchFailed(f"timed out before calling {url}")
    parts = _split(url)
    try:
        target = httpx2.URL(url).copy_with(host=str(address), port=parts.port, fragment=None)
    except httpx2.InvalidURL as error:
        raise FetchRefused(f"malformed URL {url!r}: {error}") from None
    request_headers = httpx2.Headers(headers)
    name = f"[{host}]" if ":" in host else host
    request_headers["Host"] = f"{name}:{parts.port}" if parts.port else name
    literal = _ip_literal(host) is not None
    extensions = {"sni_hostname": host} if parts.scheme.lower() == "https" and not literal else {}
    # trust_env=False: no proxy from the environment (it would do its own DNS) and no .netrc.
    with httpx2.Client(
        transport=transport, timeout=remaining, trust_env=False, follow_redirects=False
    ) as client:
        try:
            with client.stream(
                method, target, headers=request_headers, json=json_body, extensions=extensions
            ) as response:
                return _read(response, url, max_bytes=max_bytes, deadline=deadline)
        except httpx2.TimeoutException as error:
            raise FetchFailed(f"timed out calling {url}: {error}") from None
        except httpx2.HTTPError as error:
            raise FetchFailed(f"calling {url} failed: {type(error).__name__}: {error}") from None


def _read(response: httpx2.Response, url: str, *, max_bytes: int, deadline: float) -> FetchResult:
    """The response with its body, read no further than `max_bytes` (decoded, so a gzip bomb is
    cut off too) or `deadline`; a redirect's body is not read at all."""
    headers = dict(response.headers)
    if response.status_code in REDIRECT_STATUSES and "location" in headers:
        return FetchResult(response.status_code, headers, b"", url)
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise FetchFailed(f"response from {url} is larger than {max_bytes} bytes")
        if time.monotonic() > deadline:
            raise FetchFailed(f"timed out reading {url}")
        chunks.append(chunk)
    return FetchResult(response.status_code, headers, b"".join(chunks), url)


def fetch(
    method: str,
    url: str,
    *,
    params: Mapping[str, Any] | None = None,
    json_body: Any = None,
    headers: Mapping[str, str] | None = None,
    allowed_hosts: Collection[str],
    timeout: float = 10.0,
    max_bytes: int = 1_000_000,
    max_redirects: int = 3,
    resolve: Resolver = socket.getaddrinfo,
    transport: httpx2.BaseTransport | None = None,
) -> FetchResult:
    """Call a real API, checking the URL and every redirect with `check_url`.

    Connects to the first checked address. Redirects are followed by hand (httpx's own
    following would skip the checks); more than `max_redirects` is refused. 303, and 301/302
    after a POST, continue as GET without a body, as browsers do. A redirect to another origin
    does not carry the caller's headers, which may hold API keys. `timeout` bounds the whole
    call, redirects and a slowly trickled body included. Any status that is not a followed
    redirect is returned as is: a 404 is still an answer for the agent."""
    method = method.upper()
    if method not in ALLOWED_METHODS:
        raise FetchRefused(f"refused {method} {url!r}: only GET and POST are allowed")
    deadline = time.monotonic() + timeout
    current = _with_params(url, params)
    send_headers: Mapping[str, str] = headers or {}
    redirects = 0
    while True:
        host, addresses = check_url(current, allowed_hosts=allowed_hosts, resolve=resolve)
        result = _send_once(
            method,
            current,
            host,
            addresses[0],
            headers=send_headers,
            json_body=json_body,
            deadline=deadline,
            max_bytes=max_bytes,
            transport=transport,
        )
        if result.status not in REDIRECT_STATUSES or "location" not in result.headers:
            return result
        if redirects >= max_redirects:
            raise FetchRefused(f"refused {url!r}: more than {max_redirects} redirects")
        redirects += 1
        target = urljoin(current, result.headers["location"])
        if result.status == 303 or (result.status in (301, 302) and method == "POST"):
            method, json_body = "GET", None
        if _origin(target) != _origin(current):
            send_headers = {}
        current = target
