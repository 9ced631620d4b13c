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
