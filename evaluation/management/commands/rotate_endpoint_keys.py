"""python manage.py rotate_endpoint_keys

Seals every stored endpoint key again under the first key of FIELD_ENCRYPTION_KEY. To rotate:
put a new key first in FIELD_ENCRYPTION_KEY (comma-separated, the old one after it), restart the
processes, run this command, then drop the old key (evaluation.services.endpoint_rotate_keys).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from evaluation.services import RunError, endpoint_rotate_keys


class Command(BaseCommand):
    help = "Seal every stored endpoint key again under the first FIELD_ENCRYPTION_KEY."

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            count = endpoint_rotate_keys()
        except RunError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"{count} stored key(s) sealed again under the first key")
