"""What one request costs, and where its CPU goes: the studio's submit that brings the next
item, the one-query page, and the floors under them, each in a gunicorn worker as production
runs it (DEBUG off, CONN_MAX_AGE, the settings perf/annotate_load.py gives its server).

    python perf/request_cost.py [--requests 300] [--warmup 30] [--repeat 3] [--items 100000]
                                [--out .artifacts/perf/request_cost] [--top 15]
                                [--results FILE] [--time-limit 600]

The request classes, from the floor up:
- gunicorn: a WSGI callable that answers "ok" without Django (perf/floor_app.py `bare`);
- django: the project's Django with every middleware, one view that reads neither the session
  nor the database, a request without cookies (perf/floor_app.py `application`);
- page: GET /api/endpoints/<id>/ signed in (the session, the user, one primary-key lookup),
  the baseline of perf/annotate_load.py's CPU ratio;
- studio: POST /api/campaigns/<id>/submit/ with "next": true, as the studio page sends it
  (--protocol one of perf/annotate_load.py): stores the answers and answers with the next item.

Each class runs in a server of its own (gunicorn, one gthread worker with one thread,
perf/profiled_gunicorn.py's hooks) with one client on one keep-alive connection, requests one
after the other: --warmup requests (after the setup's: the campaign list for the csrftoken
cookie, the first next), then --requests measured ones. Measured --repeat times without the
profiler: the worker's CPU per request (the median, with the repeats' spread), its PostgreSQL
backend's CPU per request, the SQL statements per request and the time they waited for their
answers. Then once under cProfile (the worker thread's CPU clock, so waiting for PostgreSQL is
not in it), split two ways, per request and as a share of the profiled total:
- by whose code ran (each function's own time; the standard library's and builtins' charged to
  the code that called them, in proportion to its calls);
- by stage (a function's time with what it calls: the session's load and save, the user, CSRF,
  messages, DRF's checks and rendering, the view, the statements).
Each class's stats are written to --out as <class>.prof (python -m pstats FILE) with the top
--top functions by own time printed.

The result: the studio request's CPU (counted as two requests, a submit and a next, as
perf/annotate_load.py counts it) over the one-query page's, against annotate_load's target
(<= 1.5x), disturbed when the page's repeats spread more than --max-spread or other processes
took more than --max-others cores. Uses perf/annotate_load.py's database (toolevals_perf_annotate)
and Redis db 13: do not run both at once.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from perf import annotate_load as load  # noqa: E402  (sets the server's environment, Django)
from perf import honest  # noqa: E402

CLASSES = ("gunicorn", "django", "page", "studio")
APPS = {
    "gunicorn": "perf.floor_app:bare",
    "django": "perf.floor_app:application",
    "page": "config.wsgi:application",
    "studio": "config.wsgi:application",
}
SHOWN = {
    "gunicorn": "gunicorn alone (WSGI callable, no Django)",
    "django": "Django floor (all middleware, no session, no database)",
    "page": "one-query page (GET /api/endpoints/<id>/)",
    "studio": "studio (POST submit with next: true)",
}


# --- the server and the client ------------------------------------------------------------------


@dataclass
class Cost:
    requests: int
    process_cpu: float
    wall: float
    queries: int
    query_seconds: float
    backend_cpu: float
    load: honest.Load | None = None

    def per(self, value: float) -> float:
        return 1000 * value / self.requests


class Worker:
    """gunicorn with one gthread worker of one thread and perf/profiled_gunicorn.py's hooks."""

    def __init__(self, app: str, out: Path, skip: int, count: int, profile: bool) -> None:
        self.out = out
        self.port = load.free_port()
        out.mkdir(parents=True, exist_ok=True)
        self.log = open(out / "gunicorn.log", "wb")  # noqa: SIM115
        env = {
            **os.environ,
            "PERF_COST_OUT": str(out),
            "PERF_COST_SKIP": str(skip),
            "PERF_COST_COUNT": str(count),
            "PERF_COST_PROFILE": "1" if profile else "0",
        }
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                app,
                "-c",
                str(ROOT / "perf" / "profiled_gunicorn.py"),
                "--bind",
                f"{load.HOST}:{self.port}",
                "--workers",
                "1",
                "--threads",
                "1",
                "--worker-class",
                "gthread",
                "--keep-alive",
                "75",
                "--timeout",
                "120",
            ],
            cwd=ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        # One request (counted in `skip`) once it listens: the worker is up.
        load.await_gunicorn(self.proc, self.port, self.log.name, self.stop, timeout=30)

    def cost(self) -> Cost:
        path = self.out / "cost.json"
        deadline = time.monotonic() + 10
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        data = json.loads(path.read_text())
        if data["status"][:1] not in ("2",):
            raise SystemExit(f"the last measured request answered {data['status']}")
        return Cost(**{k: v for k, v in data.items() if k != "status"})

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def requests_for(kind: str, fixture: load.Fixture, browser: load.Browser) -> tuple[int, object]:
    """(setup requests sent, a function sending one request of the class)."""
    if kind in ("gunicorn", "django"):
        browser.cookies = {}
        return 0, lambda: browser.request("GET", "/")
    status, content, _ = browser.request("GET", "/annotate/")
    if status != 200:
        raise SystemExit(f"the campaign list answered {status}: {content[:300]!r}")
    if kind == "page":
        return 1, lambda: browser.request("GET", f"/api/endpoints/{fixture.endpoint_id}/")
    status, content, _ = browser.request("POST", f"/api/campaigns/{fixture.campaign_id}/next/")
    if status != 200:
        raise SystemExit(f"next answered {status}: {content[:300]!r}")
    given = {"next": json.loads(content)}
    path = f"/api/campaigns/{fixture.campaign_id}/submit/"

    def submit() -> tuple[int, bytes, float]:
        body = {
            "assignment": given["next"]["assignment"],
            "answers": fixture.answers,
            "token": str(uuid.uuid4()),
            "next": True,
        }
        status, content, seconds = browser.request("POST", path, body)
        if status not in (200, 201):
            raise SystemExit(f"submit answered {status}: {content[:300]!r}")
        given["next"] = json.loads(content)["next"]
        if given["next"]["assignment"] is None:
            raise SystemExit("the annotator ran out of items: raise --items")
        return status, content, seconds

    return 2, submit


def measure(
    kind: str, fixture: load.Fixture, args: argparse.Namespace, out: Path, *, profile: bool
) -> Cost:
    skip_setup = {"gunicorn": 0, "django": 0, "page": 1, "studio": 2}[kind]
    worker = Worker(APPS[kind], out, 1 + skip_setup + args.warmup, args.requests, profile)
    try:
        browser = load.Browser(worker.port, fixture.sessions[0])
        setup, send = requests_for(kind, fixture, browser)
        assert setup == skip_setup
        for _ in range(args.warmup):
            send()  # type: ignore[operator]
        postmaster = load.postmaster_pid()
        watch = honest.Watch([worker.proc.pid, *([postmaster] if postmaster else [])]).start()
        for _ in range(args.requests):
            send()  # type: ignore[operator]
        found = worker.cost()
        found.load = watch.stop()
        browser.conn.close()
        return found
    finally:
        worker.stop()


# --- the profile's split ------------------------------------------------------------------------

# Whose code a function is, by its file (first match); None: the standard library or a builtin,
# charged to its callers.
OWNERS: list[tuple[str, str]] = [
    ("/gunicorn/", "gunicorn"),
    ("/psycopg", "psycopg (client side of the statements)"),
    ("/django/db/", "Django ORM and database backend"),
    ("config/db/", "Django ORM and database backend"),
    ("/django/contrib/sessions/", "sessions"),
    ("/django/contrib/auth/", "auth (user from the session)"),
    ("config/auth.py", "auth (user from the session)"),
    ("/django/middleware/csrf.py", "CSRF"),
    ("/django/contrib/messages/", "messages"),
    ("/django/middleware/", "other middleware (security, common, clickjacking, ours)"),
    ("/whitenoise/", "other middleware (security, common, clickjacking, ours)"),
    ("/django_htmx/", "other middleware (security, common, clickjacking, ours)"),
    ("config/csp.py", "other middleware (security, common, clickjacking, ours)"),
    ("config/access.py", "access table (config.access)"),
    ("/rest_framework/", "DRF"),
    ("/drf_spectacular/", "DRF"),
    ("/redis/", "throttle and cache (Redis)"),
    ("config/throttle.py", "throttle and cache (Redis)"),
    ("config/cache.py", "throttle and cache (Redis)"),
    ("/django/", "Django core (handler, request, response, URLs, utils)"),
    ("perf/floor_app.py", "the view (ours)"),
    ("perf/profiled_gunicorn.py", "measuring (the hooks)"),
    ("annotation/", "the view (ours)"),
    ("evaluation/", "the view (ours)"),
    ("benchmarks/", "the view (ours)"),
    ("config/", "the view (ours)"),
]
STDLIB = "standard library (unattributed)"


def owner(filename: str) -> str | None:
    if filename == "~" or filename.startswith("<"):
        return None
    for fragment, name in OWNERS:
        if fragment in filename:
            return name
    if "site-packages" in filename:
        return "other packages"
    if str(ROOT) in filename:
        return "the view (ours)"
    return None


def by_owner(stats: pstats.Stats) -> dict[str, float]:
    """Seconds of own time per owner, the standard library's and builtins' charged to their
    callers (in proportion to the own time each caller's calls took)."""
    table = stats.stats  # type: ignore[attr-defined]
    shares: dict[tuple, dict[str, float]] = {}

    def share(func: tuple, path: frozenset) -> dict[str, float]:
        if func in shares:
            return shares[func]
        found = owner(func[0])
        if found is not None:
            result = {found: 1.0}
        else:
            callers = table[func][4] if func in table else {}
            weights = {c: edge[2] for c, edge in callers.items() if c not in path}
            total = sum(weights.values())
            if not total:
                weights = {c: edge[1] for c, edge in callers.items() if c not in path}
                total = sum(weights.values())
            result = defaultdict(float)
            if total:
                for caller, weight in weights.items():
                    for name, part in share(caller, path | {func}).items():
                        result[name] += part * weight / total
            else:
                result[STDLIB] = 1.0
            result = dict(result)
        if not path:
            shares[func] = result
        return result

    seconds: dict[str, float] = defaultdict(float)
    for func, (_, _, own, _, _) in table.items():
        for name, part in share(func, frozenset()).items():
            seconds[name] += own * part
    return dict(seconds)


# Stages: (shown, [(file fragment, function name)]): the time of those functions with what they
# call (cumulative), summed; they do not nest in one another.
STAGES: list[tuple[str, list[tuple[str, str]]]] = [
    (
        "session: load (its row, through the ORM)",
        [("django/contrib/sessions/backends/db.py", "load")],
    ),
    (
        "session: save (process_response)",
        [("django/contrib/sessions/middleware.py", "process_response")],
    ),
    (
        "auth: the user's row and the session's hash check (after the session's load)",
        [
            ("config/auth.py", "get_user"),
            ("django/contrib/auth/base_user.py", "get_session_auth_hash"),
        ],
    ),
    (
        "CSRF (request, view, response)",
        [
            ("django/middleware/csrf.py", "process_request"),
            ("django/middleware/csrf.py", "process_view"),
            ("django/middleware/csrf.py", "process_response"),
        ],
    ),
    (
        "messages (request, response)",
        [
            ("django/contrib/messages/middleware.py", "process_request"),
            ("django/contrib/messages/middleware.py", "process_response"),
        ],
    ),
    ("throttle (one Redis script)", [("config/throttle.py", "allow_request")]),
    (
        "DRF's checks (initial: the session, user, CSRF, permissions and throttle above)",
        [("rest_framework/views.py", "initial")],
    ),
    (
        "DRF: response, negotiation and rendering",
        [
            ("rest_framework/views.py", "finalize_response"),
            ("rest_framework/response.py", "rendered_content"),
        ],
    ),
    ("DRF: request body parsing", [("rest_framework/request.py", "_parse")]),
    (
        "the view (the action, its services and statements)",
        [
            ("annotation/api.py", "submit"),
            ("rest_framework/mixins.py", "retrieve"),
            ("perf/floor_app.py", "floor_view"),
        ],
    ),
    (
        "SQL statements, all of them (Django's cursor wrapper, psycopg; not the waits)",
        [("django/db/backends/utils.py", "_execute_with_wrappers")],
    ),
    ("URL resolving", [("django/core/handlers/base.py", "resolve_request")]),
    ("all of Django (WSGIHandler.__call__)", [("django/core/handlers/wsgi.py", "__call__")]),
]
# The stages nest (DRF's checks hold the session's load, the view holds statements): each is
# the time of its functions with all they call, not a part of a sum.


def cumulative(stats: pstats.Stats, wanted: list[tuple[str, str]]) -> float:
    table = stats.stats  # type: ignore[attr-defined]
    return sum(
        entry[3]
        for (filename, _, name), entry in table.items()
        if any(name == fn and filename.endswith(fragment) for fragment, fn in wanted)
    )


def profile_print(kind: str, stats: pstats.Stats, requests: int, top: int) -> float:
    """Prints the class's split; returns the profiled CPU milliseconds per request."""
    total = stats.total_tt  # type: ignore[attr-defined]
    per = 1000 / requests
    print(
        f"\n{SHOWN[kind]}: profiled, {total * per:.2f} ms of worker-thread CPU per request "
        "under cProfile (its overhead included; the shares are what to read)"
    )
    print("  by whose code ran (own time; the standard library charged to its callers):")
    for name, seconds in sorted(by_owner(stats).items(), key=lambda kv: -kv[1]):
        print(f"    {seconds * per:>7.3f} ms {100 * seconds / total:>5.1f}%  {name}")
    print("  by stage (each with all it calls: they nest, they do not add up):")
    for shown, wanted in STAGES:
        seconds = cumulative(stats, wanted)
        if seconds:
            print(f"    {seconds * per:>7.3f} ms {100 * seconds / total:>5.1f}%  {shown}")
    django = cumulative(stats, [("django/core/handlers/wsgi.py", "__call__")])
    app = django or cumulative(stats, [("perf/floor_app.py", "bare")])
    print(
        f"    {(total - app) * per:>7.3f} ms {100 * (total - app) / total:>5.1f}%  "
        "gunicorn around the app (parsing, writing, the hooks)"
    )
    print(f"  top {top} functions by own time (ms per request):")
    rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])  # type: ignore[attr-defined]
    for (filename, line, name), (_, calls, own, cum, _) in rows[:top]:
        where = filename.split("site-packages/")[-1].replace(str(ROOT) + "/", "")
        print(
            f"    {own * per:>7.3f} own {cum * per:>7.3f} cum {calls / requests:>6.1f} calls"
            f"  {where}:{line}({name})"
        )
    return total * per


# --- main ---------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=300, help="measured requests a class")
    parser.add_argument("--warmup", type=int, default=30, help="requests before, not measured")
    parser.add_argument("--repeat", type=int, default=3, help="measurements without profiler")
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--out", default=str(ROOT / ".artifacts" / "perf" / "request_cost"))
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument(
        "--classes", default=",".join(CLASSES), help=f"a subset of {','.join(CLASSES)}"
    )
    honest.add_arguments(parser, time_limit=600)
    args = parser.parse_args()
    sys.exit(honest.within_time_limit(args, "request_cost.py", lambda: measure_all(args)))


def measure_all(args: argparse.Namespace) -> int | None:
    kinds = [k for k in CLASSES if k in args.classes.split(",")]
    honest.doing(f"setup: {args.items:,} items, migrations")
    load.call_command("migrate", verbosity=0, interactive=False)
    load.redis.from_url(load.PERF_REDIS_URL).flushdb()
    fixture = load.fixture_build(items=args.items, annotators=1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    costs: dict[str, list[Cost]] = {k: [] for k in kinds}
    profiled: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="perf-cost-") as tmp:
        static_root = Path(tmp) / "static"
        load.static_collect(static_root)
        os.environ["STATIC_ROOT"] = str(static_root)
        for repeat in range(args.repeat):
            for kind in kinds:
                honest.doing(f"repeat {repeat + 1} of {args.repeat}: {kind}")
                costs[kind].append(
                    measure(kind, fixture, args, Path(tmp) / f"{kind}-{repeat}", profile=False)
                )
        for kind in kinds:
            honest.doing(f"profile: {kind}")
            measure(kind, fixture, args, Path(tmp) / f"{kind}-profile", profile=True)
            target = out / f"{kind}.prof"
            target.write_bytes((Path(tmp) / f"{kind}-profile" / "profile.prof").read_bytes())
            profiled[kind] = profile_print(kind, pstats.Stats(str(target)), args.requests, args.top)
    print(f"\n(profiles in {out}: python -m pstats {out}/studio.prof)")

    print(
        f"\nwithout the profiler: {args.requests} requests a class, one client, one keep-alive "
        f"connection, median of {args.repeat} (spread = (max - min) / median); ms per request"
    )
    print(
        f"{'class':<58} {'CPU':>6} {'spread':>6} {'pg CPU':>7} {'stmts':>5}"
        f" {'SQL wait':>8} {'wall':>6}"
    )
    median: dict[str, float] = {}
    for kind in kinds:
        runs = costs[kind]
        cpu = [r.per(r.process_cpu) for r in runs]
        median[kind] = statistics.median(cpu)
        print(
            f"{SHOWN[kind]:<58} {median[kind]:>6.3f} {honest.spread(cpu):>6.0%}"
            f" {statistics.median(r.per(r.backend_cpu) for r in runs):>7.3f}"
            f" {statistics.median(r.queries / r.requests for r in runs):>5.1f}"
            f" {statistics.median(r.per(r.query_seconds) for r in runs):>8.3f}"
            f" {statistics.median(r.per(r.wall) for r in runs):>6.3f}"
        )
    print("\nCPU per request over each floor (the worker's, without the profiler):")
    for kind in kinds:
        ratios = [
            f"{median[kind] / median[base]:.2f}x {base}"
            for base in ("gunicorn", "django", "page")
            if base in median and base != kind
        ]
        print(f"  {kind:<9} {', '.join(ratios)}")
    if "studio" in median:
        print(
            f"  studio counted as two requests (a submit and a next, as annotate_load counts"
            f" it): {median['studio'] / 2:.3f} ms each"
        )
    if not ("studio" in median and "page" in median):
        return 0
    loads = [r.load for k in kinds for r in costs[k] if r.load is not None]
    merged = honest.merge(loads)
    page_cpu = [r.per(r.process_cpu) for r in costs["page"]]
    reasons = honest.disturbed(
        page_cpu,
        merged.others,
        max_spread=args.max_spread,
        max_others=args.max_others,
    )
    ratio = median["studio"] / 2 / median["page"]
    result = honest.Result(
        script="request_cost.py",
        measured="worker CPU per studio request (submit with next: two) / one-query page",
        value=f"{median['studio'] / 2:.3f} ms",
        baseline=f"{median['page']:.3f} ms",
        ratio=f"{ratio:.2f}x",
        target=f"<= {load.TARGET_CPU_RATIO:g}x",
        verdict=honest.verdict(ratio <= load.TARGET_CPU_RATIO, reasons),
        load=merged.text(),
        command=honest.command_line(),
        notes=[
            f"floors: gunicorn {median.get('gunicorn', math.nan):.3f} ms, "
            f"Django without session {median.get('django', math.nan):.3f} ms",
            *reasons,
        ],
    )
    print()
    result.print()
    honest.results_append(args.results, [result])
    return honest.exit_status([result.verdict])


if __name__ == "__main__":
    main()
