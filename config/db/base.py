"""Django's PostgreSQL backend with a cheaper health check, without JIT, and with a lost client
found by the server within seconds.

JIT is off for every connection (a startup option, no round trip). PostgreSQL compiles a
plan whose estimated cost passes jit_above_cost; the estimates for a function in FROM
(jsonb_object_keys: 100 rows a call) or for CASE-heavy cells pass it on a few thousand rows,
and the compilation then takes longer than the query: 363 ms of the 455 ms the agreement
report's metric catalogue took on 20,000 predictions, 4 s of the 5 s of a labels CSV. The
platform's queries are index lookups and scans of one campaign or run, which JIT never pays
back.

A client lost with its link (a worker host cut off, a machine gone) is found by PostgreSQL
within about 11 s, its session ended and its transaction rolled back: TCP keepalives after 5 s
idle, every 2 s, 3 unanswered (tcp_keepalives_*), and at most 10 s of sent data unacknowledged
(tcp_user_timeout), both startup options of our connections. PostgreSQL's defaults are the
kernel's, two hours: a worker host cut inside a write transaction (its UPDATE sent, its COMMIT
never) held that transaction's row locks that long, and every other worker's sweep waited on
them (perf/scale_out.py's lost host). The sweep skips locked rows too
(evaluation.work.locks.take_back_lost). On a Unix socket these options do nothing.

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
from typing import Any

from django.db.backends.postgresql import base
from psycopg import pq

# Server settings of each session, sent with the connection (no round trip); see above.
STARTUP_OPTIONS = (
    "-c jit=off",
    "-c tcp_keepalives_idle=5",
    "-c tcp_keepalives_interval=2",
    "-c tcp_keepalives_count=3",
    "-c tcp_user_timeout=10000",
)


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self) -> dict[str, Any]:
        params: dict[str, Any] = super().get_connection_params()
        params["options"] = " ".join(filter(None, [params.get("options"), *STARTUP_OPTIONS]))
        return params

    def is_usable(self) -> bool:
        connection = self.connection
        if connection is None or connection.closed or connection.broken:
            return False
        if connection.pgconn.transaction_status != pq.TransactionStatus.IDLE:
            # In a transaction (or unknown): let the server answer.
            return bool(super().is_usable())
        try:
            # poll, not select: select() cannot watch a descriptor numbered 1024 or more (a
            # process with many files open would find every connection unusable).
            poller = select.poll()
            poller.register(connection.fileno(), select.POLLIN)
            readable = poller.poll(0)
        except (OSError, ValueError):
            return False
        if not readable:
            return True
        return bool(super().is_usable())
