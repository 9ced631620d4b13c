"""The virtual API server over HTTP, as StableToolBench's clients call it: POST a JSON body
{"category", "tool_name", "api_name", "tool_input" (a JSON object or its text), "strip",
"toolbench_key"} and get {"error", "response", "source"} back (source: cache, real, simulated).

Who may call: a client whose toolbench_key (or an `Authorization: Bearer <key>` header) is one
of VIRTUAL_API_KEYS, or a signed-in user with the permission evaluation.call_virtualapi (then
with the CSRF token, as every page post): config.access's rule for this URL."""

from __future__ import annotations

import hmac
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from benchmarks.kit.protocol import CallFailed
from config.access import virtual_call_allowed
from config.untrusted import UntrustedInputError, json_loads_bounded
from evaluation.models import VirtualApi
from evaluation.virtualapi.keys import ApiName
from evaluation.virtualapi.server import Call, ThreadSteps, serve

MAX_BODY = 200_000


def _key_ok(given: str) -> bool:
    keys = [k for k in getattr(settings, "VIRTUAL_API_KEYS", []) if k]
    return bool(given) and any(hmac.compare_digest(given, key) for key in keys)


def _checked_view(request: HttpRequest) -> None:
    """Stands for a view that is not CSRF-exempt."""


def _refuse(status: int, message: str) -> JsonResponse:
    return JsonResponse({"error": message, "response": "", "source": ""}, status=status)


@csrf_exempt  # machine clients authenticate with a key; sessions are CSRF-checked below
@require_POST
async def virtual_call(request: HttpRequest) -> HttpResponse:
    # Who calls is settled before anything else is read: the header's key, else the session.
    # StableToolBench's clients put their key in the body, so a caller with neither has the
    # body read through the one bounded reader (size, depth, storable text), and nothing more
    # before the key is checked.
    bearer = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
    authorised = _key_ok(bearer)
    if not authorised:
        user = await request.auser()
        if await sync_to_async(virtual_call_allowed)(user):
            # The check the middleware skipped for this (exempt) view, as for any other view.
            refused = CsrfViewMiddleware(lambda r: HttpResponse()).process_view(
                request, _checked_view, (), {}
            )
            if refused is not None:
                return refused
            authorised = True
    if len(request.body) > MAX_BODY:
        return _refuse(413, f"the request is over {MAX_BODY} bytes")
    try:
        body = json_loads_bounded(request.body or b"{}", max_bytes=MAX_BODY)
    except UntrustedInputError as exc:
        return _refuse(400, f"the body is refused: {exc}")
    if not isinstance(body, dict):
        return _refuse(400, "the body must be a JSON object")
    if not authorised and not _key_ok(str(body.get("toolbench_key") or "")):
        return _refuse(403, "give a key of VIRTUAL_API_KEYS (toolbench_key) or sign in")
    problems = [
        field
        for field in ("category", "tool_name", "api_name")
        if not isinstance(body.get(field), str) or not body[field].strip()
    ]
    if problems:
        return _refuse(400, f"missing or empty: {', '.join(problems)}")
    arguments: Any = body.get("tool_input", {})
    if isinstance(arguments, str):
        try:
            arguments = json_loads_bounded(arguments or "{}", max_bytes=MAX_BODY)
        except UntrustedInputError:
            return _refuse(400, "tool_input is not a JSON object")
    if not isinstance(arguments, dict):
        return _refuse(400, "tool_input must be a JSON object")
    name = ApiName.from_request(body["category"], body["tool_name"], body["api_name"])
    # the names as the server keeps them (a tool is "<tool>_for_<category>") fit its columns
    for given, column in (("category", "category"), ("tool_name", "tool"), ("api_name", "api")):
        longest = VirtualApi._meta.get_field(column).max_length or 0
        if len(getattr(name, column)) > longest:
            return _refuse(
                400, f"{given}: too long (the name kept is at most {longest} characters)"
            )
    # ThreadSteps reads the simulator's endpoint: the ORM, outside the event loop.
    steps = await sync_to_async(ThreadSteps, thread_sensitive=True)()
    try:
        served = await serve(Call(name, arguments), steps)
    except CallFailed as exc:  # the simulator endpoint failed every attempt
        return _refuse(502, f"the API simulator did not answer: {exc}")
    return JsonResponse(served.as_dict())
