"""A gunicorn configuration for measuring the cost of one request (perf/request_cost.py): one
gthread worker with one thread, whose hooks count the requests and measure a window of them.

The first $PERF_COST_SKIP requests (setup and warmup) are not measured; the next
$PERF_COST_COUNT are: from the pre_request hook of the first (after gunicorn parsed it) to the
post_request hook of the last (after the answer was written). Over that window the worker
writes $PERF_COST_OUT/cost.json: the worker process's CPU seconds (both its threads: the main
one polls the connections, the other parses and answers), its PostgreSQL backend's CPU seconds
(read from /proc when the server is on this machine; the connection persists, CONN_MAX_AGE),
and the SQL statements the requests sent with the seconds each waited for its answer (timed
around Django's execute, psycopg included). With $PERF_COST_PROFILE=1 the window also runs
under cProfile with the thread's CPU clock (time.thread_time: waits for PostgreSQL are not in
it), dumped to $PERF_COST_OUT/profile.prof. The profiler slows the requests several fold, so
the CPU figures come from a run without it; the profile gives the split."""

from __future__ import annotations

import cProfile
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

_SKIP = int(os.environ.get("PERF_COST_SKIP", "0"))
_COUNT = int(os.environ.get("PERF_COST_COUNT", "0"))
_OUT = Path(os.environ.get("PERF_COST_OUT", "."))
_PROFILE = os.environ.get("PERF_COST_PROFILE") == "1"

_state: dict[str, Any] = {"seen": 0, "queries": 0, "query_seconds": 0.0}


def _timed(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
    start = time.perf_counter()
    try:
        return execute(sql, params, many, context)
    finally:
        _state["queries"] += 1
        _state["query_seconds"] += time.perf_counter() - start


def _backend_cpu(pid: int | None) -> float:
    if pid is None:
        return float("nan")
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _backend_pid() -> int | None:
    """This thread's PostgreSQL backend (None when the app has not opened one: the floors)."""
    from django.db import connection

    if connection.connection is None:
        return None
    return int(connection.connection.info.backend_pid)


def pre_request(worker: Any, req: Any) -> None:
    if _state["seen"] != _SKIP:
        return
    backend = _backend_pid() if "django" in sys.modules else None
    _state.update(backend=backend, backend0=_backend_cpu(backend))
    if "django" in sys.modules:
        from django.db import connection

        connection.execute_wrappers.append(_timed)
    _state["wall0"], _state["cpu0"] = time.perf_counter(), time.process_time()
    if _PROFILE:
        _state["profile"] = cProfile.Profile(time.thread_time)
        _state["profile"].enable()


def post_request(worker: Any, req: Any, environ: Any, resp: Any) -> None:
    _state["seen"] += 1
    if _state["seen"] != _SKIP + _COUNT:
        return
    if _PROFILE:
        _state["profile"].disable()
    cpu, wall = time.process_time() - _state["cpu0"], time.perf_counter() - _state["wall0"]
    backend = _state.get("backend")
    if backend is None and "django" in sys.modules:
        # A connection opened during the window (none before it): its CPU from its start.
        backend = _backend_pid()
        _state["backend0"] = 0.0 if backend is not None else float("nan")
    cost = {
        "requests": _COUNT,
        "process_cpu": cpu,
        "wall": wall,
        "queries": _state["queries"],
        "query_seconds": _state["query_seconds"],
        "backend_cpu": _backend_cpu(backend) - _state["backend0"],
        "status": resp.status,
    }
    _OUT.mkdir(parents=True, exist_ok=True)
    if _PROFILE:
        _state["profile"].dump_stats(str(_OUT / "profile.prof"))
    # written whole, then renamed: the script reads the file as soon as it exists, and once
    # read it empty (created, not yet written)
    partial = _OUT / "cost.json.partial"
    partial.write_text(json.dumps(cost))
    os.replace(partial, _OUT / "cost.json")
