"""python manage.py add_endpoint NAME --base-url URL --model MODEL [--key-variable VAR] [...]

Registers an OpenAI-compatible endpoint, with the same checks as the admin's form and the API
(evaluation.services.endpoint_create): the key variable must be named like one (ending in
_API_KEY or _TOKEN, or listed in ENDPOINT_KEY_VARIABLES) and never be one of the platform's own
settings, and the base URL must be http(s).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from evaluation.management.commands._common import key_values
from evaluation.models import Endpoint
from evaluation.services import RunError, endpoint_create


class Command(BaseCommand):
    help = "Register an OpenAI-compatible endpoint (the key stays in an environment variable)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("name")
        parser.add_argument("--base-url", required=True, help="e.g. https://api.openai.com/v1")
        parser.add_argument("--model", required=True, help="The model name sent with requests.")
        parser.add_argument(
            "--key-variable",
            default="",
            help="Name of the environment variable holding the key on the workers "
            "(e.g. OPENAI_API_KEY); empty for servers without a key.",
        )
        parser.add_argument("--style", choices=Endpoint.Style.values, default="chat")
        parser.add_argument("--param", action="append", metavar="KEY=VALUE", help="Default.")
        parser.add_argument("--concurrency", type=int, default=8)
        parser.add_argument("--rpm", type=int, default=None, help="Requests per minute.")
        parser.add_argument("--timeout", type=float, default=60.0, help="Seconds.")
        parser.add_argument(
            "--attempts", type=int, default=4, help="HTTP attempts per call (with backoff)."
        )
        parser.add_argument(
            "--claims",
            type=int,
            default=4,
            help="How many times a worker may take an item before it is failed (lost workers).",
        )
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            endpoint = endpoint_create(
                name=options["name"],
                base_url=options["base_url"],
                model=options["model"],
                api_key_env=options["key_variable"],
                style=options["style"],
                default_params=key_values(options["param"], "--param"),
                max_concurrency=options["concurrency"],
                requests_per_minute=options["rpm"],
                timeout_seconds=options["timeout"],
                max_attempts=options["attempts"],
                max_claims=options["claims"],
            )
        except RunError as exc:
            raise CommandError(str(exc)) from None
        if options["json"]:
            self.stdout.write(json.dumps({"endpoint": endpoint.pk, "name": endpoint.name}))
        else:
            self.stdout.write(f"endpoint {endpoint.name!r} added (id {endpoint.pk})")
