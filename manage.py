#!/usr/bin/env python
"""Django's command-line utility. Starts the embedded dev stack when no URLs are configured."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    if not os.environ.get("DATABASE_URL") or not os.environ.get("REDIS_URL"):
        from config.devstack import ensure_env

        ensure_env()
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
