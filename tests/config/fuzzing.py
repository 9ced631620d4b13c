"""The crawl behind tests/config/test_fuzz_urls.py: which query parameters and form fields each
view reads, found by watching it read them, and requests that fill them with hostile values.

How a view's parameters are found, without a list kept by hand:
- `RecordingMiddleware` (installed by the test, first in the chain) swaps request.GET and
  request.POST for a `RecordingQueryDict`, which notes every key a view, a form, a filter or a
  serializer asks for (`get`, `[]`, `getlist`, `in`).
- While probing, the values it hands out are `Probe` strings, which note every string they are
  compared with (`== "rows"`, `in ("a", "b")`, a ChoiceField's choices): sending those values
  opens the branches they guard, whose reads are noted in turn.
- The page's own HTML names the rest: the fields of its forms that post back to it, and the
  parameters of its links to itself (the admin's filters, sorting, search).

Pure test code: nothing here is imported by the application.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from django.db import transaction
from django.http import HttpRequest, HttpResponse, QueryDict
from django.test import Client

# --- recording what a view reads ----------------------------------------------------------------


@dataclass
class Recorder:
    reads: set[str] = field(default_factory=set)
    compared: dict[str, set[str]] = field(default_factory=dict)
    probing: bool = False

    def reset(self, *, probing: bool = False) -> None:
        self.reads = set()
        self.compared = {}
        self.probing = probing


RECORDER = Recorder()


class Probe(str):
    """A parameter's value that notes the strings it is compared with."""

    key: str

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str) and not isinstance(other, Probe):
            RECORDER.compared.setdefault(self.key, set()).add(str(other))
        return str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = str.__hash__


def _probe(key: str, value: Any) -> Any:
    if RECORDER.probing and isinstance(value, str) and not isinstance(value, Probe):
        probe = Probe(value)
        probe.key = key
        return probe
    return value


class RecordingQueryDict(QueryDict):
    """A QueryDict that notes every key read from it (copies record too: same class)."""

    def __getitem__(self, key: str) -> Any:
        RECORDER.reads.add(key)
        return _probe(key, super().__getitem__(key))

    def getlist(self, key: str, default: Any = None) -> list[Any]:
        RECORDER.reads.add(key)
        return [_probe(key, v) for v in super().getlist(key, default)]

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            RECORDER.reads.add(key)
        return super().__contains__(key)


def _recording(original: QueryDict) -> QueryDict:
    copy = RecordingQueryDict(mutable=True, encoding=original.encoding)
    for key, values in original.lists():
        copy.setlist(key, values)
    copy._mutable = False
    return copy


FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def RecordingMiddleware(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    def middleware(request: HttpRequest) -> HttpResponse:
        request.GET = _recording(request.GET)
        if request.method == "POST" and request.content_type in FORM_TYPES:
            request.POST = _recording(request.POST)
        return get_response(request)

    return middleware


# --- what a page's HTML offers ------------------------------------------------------------------


class _Forms(HTMLParser):
    """The fields of a page's forms (by method and action, with the values they hold) and its
    links' query parameters."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.forms: list[dict[str, Any]] = []
        self.links: list[str] = []
        self._form: dict[str, Any] | None = None
        self._select: str | None = None
        self._textarea: str | None = None

    def _add(self, name: str, value: str | None, kind: str = "text") -> None:
        if self._form is None:
            return
        self._form["kinds"].setdefault(name, kind)
        values = self._form["fields"].setdefault(name, [])
        if value is not None:
            values.append(value)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        name = a.get("name", "")
        if tag == "form":
            self._form = {
                "method": a.get("method", "get").upper(),
                "action": a.get("action", ""),
                "fields": {},
                "kinds": {},
            }
            self.forms.append(self._form)
        elif tag == "input" and name:
            kind = a.get("type", "text").lower()
            if kind in ("checkbox", "radio"):
                self._add(name, a.get("value", "on") if "checked" in a else None, "choice")
            else:
                value = None if kind in ("submit", "button", "file") else a.get("value", "")
                self._add(name, value, "choice" if kind == "hidden" else kind)
        elif tag == "textarea" and name:
            self._textarea = name
            self._add(name, "", "textarea")  # what a browser sends for an empty one
        elif tag == "select" and name:
            self._select = name
            self._add(name, None, "choice")
        elif tag == "option" and self._select and "selected" in a:
            self._add(self._select, a.get("value", ""), "choice")
        elif tag == "a" and a.get("href", "").startswith("?"):
            self.links.append(a["href"])

    def handle_data(self, data: str) -> None:
        if self._textarea and self._form is not None:
            values = self._form["fields"][self._textarea]
            values[-1] += data if values[-1] else data.removeprefix("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._form = None
        elif tag == "select":
            self._select = None
        elif tag == "textarea":
            self._textarea = None


@dataclass
class Offered:
    """What a page sends back to itself: query parameter names (its GET forms and links) and
    the fields of its POST forms with the values they hold."""

    query: set[str] = field(default_factory=set)
    form: dict[str, list[str]] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)  # text, number, textarea, choice...


def page_parameters(html: str, path: str) -> Offered:
    parser = _Forms()
    try:
        parser.feed(html)
    except Exception:
        return Offered()
    offered = Offered()
    for form in parser.forms:
        if urlsplit(form["action"]).path not in ("", path):
            continue
        if form["method"] == "GET":
            offered.query |= set(form["fields"])
        elif form["method"] == "POST":
            for name, values in form["fields"].items():
                offered.form.setdefault(name, []).extend(values)
            offered.kinds.update(form["kinds"])
    for link in parser.links:
        offered.query |= {key for key, _ in parse_qsl(link[1:], keep_blank_values=True)}
    offered.form.pop("csrfmiddlewaretoken", None)
    return offered


# --- sending ------------------------------------------------------------------------------------

Value = str | bytes


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    params: tuple[tuple[str, Value], ...] = ()  # query (GET) or form fields (POST)
    json: bool = False
    htmx: bool = False

    def with_params(self, changes: dict[str, Value], *, htmx: bool | None = None) -> Request:
        kept = tuple((k, v) for k, v in self.params if k not in changes)
        return Request(
            self.method,
            self.path,
            kept + tuple(changes.items()),
            self.json,
            self.htmx if htmx is None else htmx,
        )

    def describe(self) -> str:
        shown = ", ".join(f"{k}={_short(v)}" for k, v in self.params)
        return f"{self.method} {self.path} [{shown}]{' (htmx)' if self.htmx else ''}"


def _short(value: Value) -> str:
    text = repr(value)
    return text if len(text) <= 24 else f"{text[:16]}...({len(value)} long)"


def from_call(method: str, path: str, data: Any, as_json: bool) -> Request:
    """A Request from one of test_access's calls (its path may carry a query string)."""
    parts = urlsplit(path)
    params: list[tuple[str, Value]] = list(parse_qsl(parts.query, keep_blank_values=True))
    if data:
        for key, value in data.items():
            if as_json:
                params.append((key, json.dumps(value)))
            elif isinstance(value, list | tuple):
                params.extend((key, str(v)) for v in value)
            else:
                params.append((key, str(value)))
    return Request(method, parts.path, tuple(params), as_json)


class _Rollback(Exception):
    def __init__(self, response: Any) -> None:
        self.response = response


def send(client: Client, request: Request) -> Any:
    """The response to `request`, whatever it changed rolled back (each request sees the same
    world). JSON bodies are written by hand, so that 1e999 and NaN go out as literals."""
    headers = {"HTTP_HX_REQUEST": "true"} if request.htmx else {}
    try:
        with transaction.atomic():
            if request.method == "GET":
                query = urlencode(request.params, doseq=False)
                response = client.get(
                    f"{request.path}?{query}" if query else request.path, **headers
                )
            elif request.json:
                body = "{" + ", ".join(f"{json.dumps(k)}: {v!s}" for k, v in request.params) + "}"
                response = client.post(
                    request.path, body, content_type="application/json", **headers
                )
            else:
                response = client.post(
                    request.path,
                    urlencode(request.params),
                    content_type="application/x-www-form-urlencoded",
                    **headers,
                )
            raise _Rollback(response)
    except _Rollback as rolled:
        return rolled.response


def record(client: Client, request: Request, *, probing: bool = False) -> tuple[Any, set[str]]:
    RECORDER.reset(probing=probing)
    response = send(client, request)
    return response, set(RECORDER.reads)


# --- the hostile values -------------------------------------------------------------------------

# (what it is, the value in a query string or a form, the value in a JSON body)
HOSTILE: tuple[tuple[str, Value, str], ...] = (
    ("a Unicode digit ²", "²", '"²"'),
    ("an Arabic-Indic digit ٣", "٣", '"٣"'),
    ("1e999", "1e999", "1e999"),
    ("NaN", "NaN", "NaN"),
    ("-1", "-1", "-1"),
    ("10**12", str(10**12), str(10**12)),
    ("10**30", str(10**30), str(10**30)),
    ("5,000 digits", "9" * 5000, "9" * 5000),
    ("5,000 characters", "x" * 5000, json.dumps("x" * 5000)),
    ("a NUL", "\x00", '"\\u0000"'),
    ("a lone surrogate", b"\xed\xa0\x80", '"\\ud800"'),
    ("empty", "", '""'),
)

# The values that can tell one field of a kind from another, for the admin's forms (Django's own
# fields; the project's part is which columns they fill): every value for a typed box, an
# invalid choice and the extremes for a choice, never the NUL (the same middleware refuses it
# for every field, which the other fields and pages show).
BY_KIND = {
    "choice": ("a Unicode digit ²", "10**30", "5,000 characters", "empty"),
    "text": ("-1", "10**30", "5,000 characters", "a lone surrogate", "empty", "1e999"),
}


def values_for(kind: str) -> list[int]:
    """Indexes into HOSTILE of the values a field of this kind (from its page's HTML) gets."""
    names = BY_KIND.get(kind)
    return [i for i, (name, _, _) in enumerate(HOSTILE) if names is None or name in names]


# Path segments for ids and names the URL's converter lets through.
HOSTILE_SEGMENTS = ("9" * 30, "-1", "%C2%B2", "%D9%A3", "x" * 300)


def hostile_value(index: int, as_json: bool) -> Value:
    _, plain, in_json = HOSTILE[index]
    return in_json if as_json else plain


def text_of(response: Any) -> str:
    if getattr(response, "streaming", False):
        return ""
    return response.content.decode("utf-8", errors="replace")


def names_the_parameter(response: Any, keys: Iterable[str]) -> bool:
    """The body names one of `keys`, as sent or in words ("review_stage", "review stage")."""
    body = text_of(response)
    names = {name for key in keys for name in (key, key.replace("_", " "))}
    return any(re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", body) for name in names)


def problem(response: Any, request: Request, keys: Iterable[str], refused: bool = False) -> str:
    """What is wrong with the answer to a hostile request ("" when nothing is). `refused`: the
    request is refused without the hostile value too, so a 400 need not name it."""
    status = response.status_code
    if status >= 500:
        error = ""
        if getattr(response, "exc_info", None):
            exc = response.exc_info[1]
            error = f": {type(exc).__name__}: {str(exc)[:160]}"
        return f"{status} for {request.describe()}{error}"
    if status == 400 and not refused and not names_the_parameter(response, keys):
        body = text_of(response)[:160]
        return f"a 400 that names no parameter for {request.describe()}: {body!r}"
    return ""
