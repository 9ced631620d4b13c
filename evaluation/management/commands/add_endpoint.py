"""python manage.py add_endpoint NAME --base-url URL --model MODEL [--key-stdin | --clear-key]
[--key-env VAR] [--style chat|completion|responses] [--concurrency N] [--price-in X --price-out Y]
[...]

Registers an OpenAI-compatible endpoint, or updates the one of that name (only the options
given change), with the same checks as the admin's form and the API
(evaluation.services.endpoint_save). The key is read from standard input with --key-stdin
(prompted for without echo on a terminal; never an argument, which the shell's history and
`ps` would keep), stored encrypted and sent only to the base URL; a new base URL needs it again.
--key-env names instead a variable the operator lists in ENDPOINT_KEY_VARIABLES. The base URL
must be http(s) without a user name, query or fragment; prices (per million tokens) not negative.
"""

from __future__ import annotations

import getpass
import json
import sys
from decimal import Decimal, InvalidOperation
from typing import Any, TextIO

from django.core.management.base import BaseCommand, CommandError

from evaluation.management.commands._common import key_values
from evaluation.models import Endpoint
from evaluation.services import RunError, endpoint_save
from evaluation.work.styles import styles


def price(text: str) -> Decimal:
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise ValueError(text) from None
    if not value.is_finite():
        raise ValueError(text)
    return value


def read_key(stream: TextIO) -> str:
    """The key from `stream`: asked for without echo on a terminal, else its first line."""
    if stream.isatty():
        return getpass.getpass("Key (not shown): ")
    key = stream.readline().strip()
    if not key:
        raise CommandError("--key-stdin: no key on standard input")
    return key


class Command(BaseCommand):
    # call_command(..., stdin=...) gives the key's stream in tests.
    stealth_options = ("stdin",)
    help = (
        "Register an OpenAI-compatible endpoint, or update the one of that name (its key read "
        "from standard input with --key-stdin, stored encrypted)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("name")
        parser.add_argument("--base-url", required=True, help="e.g. https://api.openai.com/v1")
        parser.add_argument("--model", required=True, help="The model name sent with requests.")
        key = parser.add_mutually_exclusive_group()
        key.add_argument(
            "--key-stdin",
            action="store_true",
            help="Read the endpoint's key from standard input (prompted for on a terminal); "
            "stored encrypted, never shown again.",
        )
        key.add_argument("--clear-key", action="store_true", help="Remove the stored key.")
        parser.add_argument(
            "--key-env",
            "--key-variable",
            dest="key_variable",
            default=None,
            help="Instead of a stored key: a variable holding it on the workers, one the "
            "operator lists in ENDPOINT_KEY_VARIABLES; empty for none.",
        )
        parser.add_argument(
            "--style",
            choices=list(styles()),
            default=None,
            help="chat (the default), completion (base models), responses (the OpenAI "
            "Responses API) or another registered style.",
        )
        parser.add_argument("--param", action="append", metavar="KEY=VALUE", help="Default.")
        parser.add_argument("--concurrency", type=int, default=None, help="Default 8.")
        parser.add_argument("--rpm", type=int, default=None, help="Requests per minute.")
        parser.add_argument("--timeout", type=float, default=None, help="Seconds (default 60).")
        parser.add_argument(
            "--attempts", type=int, default=None, help="HTTP attempts per call (default 4)."
        )
        parser.add_argument(
            "--claims",
            type=int,
            default=None,
            help="How many times a worker may take an item before it is failed (default 4).",
        )
        parser.add_argument(
            "--price-in", type=price, default=None, help="Price per million input tokens."
        )
        parser.add_argument(
            "--price-out", type=price, default=None, help="Price per million output tokens."
        )
        parser.add_argument(
            "--price-cached",
            type=price,
            default=None,
            help="Price per million cached input tokens (default: the input price).",
        )
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        given = {
            "base_url": options["base_url"],
            "model": options["model"],
            "api_key_env": options["key_variable"],
            "style": options["style"],
            "default_params": key_values(options["param"], "--param") if options["param"] else None,
            "max_concurrency": options["concurrency"],
            "requests_per_minute": options["rpm"],
            "timeout_seconds": options["timeout"],
            "max_attempts": options["attempts"],
            "max_claims": options["claims"],
            "price_in": options["price_in"],
            "price_out": options["price_out"],
            "price_cached": options["price_cached"],
        }
        fields = {name: value for name, value in given.items() if value is not None}
        existing = Endpoint.objects.filter(name=options["name"]).first()
        api_key = None
        if options["key_stdin"]:
            api_key = read_key(options.get("stdin") or sys.stdin)
        try:
            endpoint = endpoint_save(
                endpoint=existing,
                name=options["name"],
                api_key=api_key,
                clear_api_key=options["clear_key"],
                **fields,
            )
        except RunError as exc:
            raise CommandError(str(exc)) from None
        verb = "updated" if existing is not None else "added"
        if options["json"]:
            self.stdout.write(
                json.dumps({"endpoint": endpoint.pk, "name": endpoint.name, verb: True})
            )
        else:
            self.stdout.write(f"endpoint {endpoint.name!r} {verb} (id {endpoint.pk})")
