"""A database of a perf script's own, next to the configured one (or the embedded dev stack's),
so that a measurement never touches development data. PERF_DATABASE_SUFFIX, when set, is added
to its name (two checkouts measuring on one PostgreSQL server at once)."""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit


class OwnDatabase:
    """`url` is the perf database's; CREATE and DROP DATABASE go through the server's
    maintenance database, since the configured one need not exist (a fresh machine, CI)."""

    def __init__(self, database_url: str, name: str) -> None:
        self.name = name + os.environ.get("PERF_DATABASE_SUFFIX", "")
        self.url = urlunsplit(urlsplit(database_url)._replace(path=f"/{self.name}"))
        self.admin_url = urlunsplit(urlsplit(database_url)._replace(path="/postgres"))

    def ensure(self) -> None:
        """Create it if it is missing."""
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            found = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", [self.name]
            ).fetchone()
            if found is None:
                conn.execute(f'CREATE DATABASE "{self.name}"')

    def drop(self) -> None:
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


def django_on_own_database(name: str, *, redis_db: int | None = None) -> OwnDatabase:
    """Django set up on a database of the script's own (`name`, made if missing) on the
    configured PostgreSQL or the embedded dev stack's (started if needed), DEBUG on and logs at
    WARNING; the configured Redis, or its database `redis_db`. Call it before importing
    anything of Django's."""
    from config.devstack import ensure_env

    urls = ensure_env()
    own = OwnDatabase(urls["DATABASE_URL"], name)
    redis_url = urls["REDIS_URL"]
    if redis_db is not None:
        redis_url = urlunsplit(urlsplit(redis_url)._replace(path=f"/{redis_db}"))
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": own.url,
            "REDIS_URL": redis_url,
            "DEBUG": "1",
            "LOG_LEVEL": "WARNING",
        }
    )
    own.ensure()
    import django

    django.setup()
    return own
