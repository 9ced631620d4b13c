"""An endpoint's address: what a base URL may be, and the one spelling of it that the response
cache and a stored key are bound to. Pure Python.

A base URL is http(s), names a host, and carries nothing else than a path: no user name or
password (`http://localhost@evil.example/` goes to evil.example, whatever it looks like to a
reader), no query, no fragment, no spaces or control characters. Two spellings of one address
(`HTTP://Api.Example:443/v1/` and `https://api.example/v1` ... with the scheme's default port, a
trailing slash, capitals in the scheme or host) are one address: `normalised_base_url` gives
the one spelling, so that a cached answer or a key follows the server, not the way it was typed.
"""

from __future__ import annotations

from urllib.parse import SplitResult, urlsplit

SCHEMES = ("http", "https")
DEFAULT_PORTS = {"http": 80, "https": 443}
EXAMPLE = "e.g. https://api.openai.com/v1"


def _split(url: str) -> SplitResult:
    return urlsplit(url.strip())


def base_url_problem(url: str) -> str:
    """Why `url` may not be an endpoint's base URL ("" when it may)."""
    if not url or not url.strip():
        return f"Enter the API's http:// or https:// address, {EXAMPLE}."
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        return "A base URL has no spaces or control characters."
    try:
        parts = _split(url)
        port = parts.port
    except ValueError as exc:
        return f"This is not a usable address ({exc})."
    if parts.scheme.lower() not in SCHEMES:
        return f"Enter the API's http:// or https:// address, {EXAMPLE}."
    if "@" in parts.netloc:
        return (
            "A base URL cannot carry a user name or password (the part before @): the request "
            f"would go to {parts.hostname or 'the part after it'}. Give the server's address "
            "alone and enter its key as the endpoint's key."
        )
    if not parts.hostname:
        return f"The base URL names no host, {EXAMPLE}."
    if parts.query or url.strip().endswith("?"):
        return "A base URL has no query (the part from ?): give the address the API paths follow."
    if parts.fragment or "#" in url:
        return "A base URL has no fragment (the part from #)."
    if port == 0:
        return "The base URL's port cannot be 0."
    return ""


def normalised_base_url(url: str) -> str:
    """The one spelling of a base URL: scheme and host in lower case, the scheme's default port
    left out, no trailing slash. Precondition: none (an address the rule refuses is spelt as
    well as it can be, so that it is never taken for another one)."""
    parts = _split(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"  # an IPv6 literal
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host if port is None or port == DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    return f"{scheme}://{netloc}{parts.path.rstrip('/')}"
