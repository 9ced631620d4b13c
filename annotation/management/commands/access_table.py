"""python manage.py access_table

Prints who may open each URL, from config.access.ACCESS (the one table the pages and the API are
checked against), as the Markdown table docs/access.md shows.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from config.access import access_markdown


class Command(BaseCommand):
    help = "Print the access table (who may open each URL) as Markdown."

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(access_markdown())
