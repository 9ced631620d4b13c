"""Django's PostgreSQL backend with a cheaper health check.

With CONN_HEALTH_CHECKS on, Django checks a reused connection at the start of every request by
sending `SELECT 1` and waiting for the answer: one more round trip on every request, on the
annotators' path as on every page (a tenth of a studio request's statements). A connection
that PostgreSQL closed (a restart, `pg_terminate_backend`, an idle timeout) has told us so:
the server writes its FATAL notice and closes the socket, so the socket of an idle connection
turns readable. An idle connection whose socket has nothing to read has heard nothing from
the server and is used as it is; only one with something waiting (a closed one, or a
notification) gets Django's `SELECT 1` to decide. A connection that is already known closed or
broken is unusable at once.
"""

from __future__ import annotations

import select

from django.db.backends.postgresql import base
from psycopg import pq


class DatabaseWrapper(base.DatabaseWrapper):
    def is_usable(self) -> bool:
        connection = self.connection
        if connection is None or connection.closed or connection.broken:
            return False
        if connection.pgconn.transaction_status != pq.TransactionStatus.IDLE:
            # In a transaction (or unknown): let the server answer.
            return bool(super().is_usable())
        try:
            readable, _, _ = select.select([connection.fileno()], [], [], 0)
        except (OSError, ValueError):
            return False
        if not readable:
            return True
        return bool(super().is_usable())
