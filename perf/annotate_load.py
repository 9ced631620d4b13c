"""Annotation under load: next-item and submit over HTTP, against a plain authenticated page
measured in the same run.

    python perf/annotate_load.py [--seconds 60] [--think 1.0] [--annotators 50]
                                 [--items 100000] [--gunicorn 4x2] [--tune 2x4,3x4,4x2]
                                 [--saturation-seconds 0] [--profile] [--drop-db]
                                 [--baseline-seconds S] [--saturation-annotators N]
                                 [--cpu-load N] [--results FILE] [--max-spread 0.15]
                                 [--max-others 0.25] [--protocol two|one]
                                 [--kind turing|step_review]

Setup (not timed): a Turing campaign of --items items (COPY of small payloads),
labels_per_item 3, --annotators annotators as members, active; an Endpoint for the baseline
page; one server-side session per annotator (django.contrib.sessions), each annotator's
csrftoken cookie taken from a GET of the campaign list, as a browser gets it.
--kind step_review measures the step-level review instead: its items are agent traces of
STEPS steps (calls with their arguments and JSON results, a final answer, the tools' schemas)
over 100 samples of a generic benchmark, frozen in the items as the kind freezes them
(annotation.traces.trace_dump), and each submit answers every step, one of them wrong with an
error type and the call it should have made (its arguments read from the call editor's texts
and checked against the tool's schema, as a submit from the page is).

The server: gunicorn (config.wsgi) on a free loopback port, started before the clock, as in
production: DEBUG off, a random SECRET_KEY, ALLOWED_HOSTS=127.0.0.1, SECURE_SSL_REDIRECT=0,
collected static files, no access log, throttle rates raised far above the load so that they do
not shape it (the throttle's Redis round trips still happen). --gunicorn WxT sets workers and
threads per worker; --tune tries several for --tune-seconds each and keeps the one with the
lowest worst p95.

The load: each simulated annotator is a thread with its own session cookie and its own keep-alive
connection (http.client, standard library), looping: POST next, think (--think seconds, +/-50%
jitter: annotators are people, so the default run is NOT a saturation test), POST submit with
{"overall": "left", "format": "tie", "relevance": "right"} and a fresh token; a third of the
iterations also GET /api/endpoints/<id>/ (the baseline: the session, the user and one
primary-key lookup). --protocol one makes each item one request, as the studio page does after
a submit: the first item by POST next, then each POST submit carries "next": true and its
answer holds the next item (a CPU-per-request figure counts such a submit as two: a submit and
a next). The first --warmup seconds are not counted. --think 0 is the saturation
test; --saturation-seconds N runs one more phase with no think time after the main one and
prints it too.

The baseline phase (before the load, same server): the same clients at the same pace and
request rate, each sending only GET /api/endpoints/<id>/ (two per think time, as next and
submit are two). gunicorn's CPU per request there is the baseline of the CPU target: gunicorn's
CPU per next or submit in the load phase (its CPU less the baseline requests mixed in, at the
baseline phase's cost) over it. CPU time per request does not shrink when the server saturates,
as a ratio of latencies does (the baseline queues as much as next does), so an overloaded server
cannot pass more easily.

Reported: per kind, count, req/s, p50/p95/p99 (ms); next p95 / baseline p95 (shown, no longer a
target); the CPU of the client, the server and the rest of the machine (so the client is seen
not to be the bottleneck); then integrity checks straight from the database, and one RESULT per
target with the machine's load while it ran (perf/honest.py). Targets: next and submit p95 <
100 ms (the issue's: with 50 annotators, 1 s think time, and --cpu-load 1 holding a core
busy), CPU per next/submit <= 1.5x the one-query page's, zero double assignments, and with
--saturation-seconds (and --saturation-annotators 10) >= 120 pairs/s. A target is a pass only
when it is met and the measurement was not disturbed: other processes (not this client,
gunicorn, PostgreSQL, Redis or the --cpu-load processes) took more than --max-others cores, or,
for the CPU ratio, the baseline's CPU per request in the thirds of its phase spread more than
--max-spread. Exit status: 1 if an integrity check or a request failed or a target was missed,
3 if disturbed, 0 when every target passed.
--profile adds each request's SQL (count and time per query) and EXPLAIN ANALYZE of the
next-item queries, measured after the load in the state it left.

It never touches the development data: it uses its own database, toolevals_perf_annotate, on the
PostgreSQL of DATABASE_URL (or of the embedded dev stack when DATABASE_URL is unset), created if
missing, migrated, and emptied (TRUNCATE of the annotation tables and sessions) at each start;
and its own Redis database (REDIS_URL with db 13) for the cache, flushed at each start. The
database is left in place after the run for inspection (and a quicker next start); --drop-db
drops it at the end.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import itertools
import json
import math
import os
import random
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from config.devstack import ensure_env  # noqa: E402
from perf import honest  # noqa: E402
from perf.owndb import OwnDatabase  # noqa: E402

PERF_DATABASE = "toolevals_perf_annotate"
PERF_REDIS_DB = 13
HOST = "127.0.0.1"
CAMPAIGN = "perf-annotate-load"
ENDPOINT = "perf-annotate-baseline"
USER_PREFIX = "perf-annotator-"
ANSWERS = {"overall": "left", "format": "tie", "relevance": "right"}
# --kind step_review: traces of this many steps, the fourth answered wrong with a call.
STEPS = 6
STEP_ANSWERS = {
    "verdict": "wrong",
    "steps": [
        *[{"right": True}] * 3,
        {
            "right": False,
            "error": "wrong_argument",
            "call": {"name": "flight_search", "fields": {"origin": "BRU", "days": "3"}},
        },
        *[{"right": True}] * (STEPS - 4),
    ],
}
TARGET_P95_MS = 100.0
TARGET_RATIO = 3.0  # next p95 / baseline p95: shown, no longer a target (it shrinks as the
# server saturates: the baseline queues too); the CPU ratio below is the target
TARGET_CPU_RATIO = 1.5
TARGET_PAIRS_PER_SECOND = 120.0

urls = ensure_env()
OWN = OwnDatabase(urls["DATABASE_URL"], PERF_DATABASE)
PERF_REDIS_URL = urlunsplit(urlsplit(urls["REDIS_URL"])._replace(path=f"/{PERF_REDIS_DB}"))
# The settings of this process and of the server: the same SECRET_KEY, because the sessions
# made here are signed with it and carry the user's auth hash (an HMAC keyed by it).
SERVER_ENV = {
    "DJANGO_SETTINGS_MODULE": "config.settings",
    "DATABASE_URL": OWN.url,
    "REDIS_URL": PERF_REDIS_URL,
    "DEBUG": "0",
    "SECRET_KEY": secrets.token_urlsafe(50),
    "FIELD_ENCRYPTION_KEY": base64.urlsafe_b64encode(os.urandom(32)).decode(),
    "ALLOWED_HOSTS": HOST,
    "SECURE_SSL_REDIRECT": "0",
    "THROTTLE_ANNOTATION": "1000000/s",
    "THROTTLE_ANNOTATION_SUBMIT": "1000000/s",
    "LOG_LEVEL": "WARNING",
}
os.environ.update(SERVER_ENV)


OWN.ensure()

import django  # noqa: E402

django.setup()

import redis  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY  # noqa: E402
from django.contrib.auth.hashers import make_password  # noqa: E402
from django.contrib.auth.models import Permission, User  # noqa: E402
from django.contrib.sessions.backends.db import SessionStore  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection, connections  # noqa: E402

from annotation.models import Item, Member  # noqa: E402
from annotation.services import campaign_activate, campaign_create, members_add  # noqa: E402
from annotation.traces import trace_dump  # noqa: E402
from benchmarks.kit.context import ShownCall  # noqa: E402
from benchmarks.kit.traces import Trace, TraceStep  # noqa: E402
from benchmarks.models import Benchmark  # noqa: E402
from benchmarks.models import Sample as BenchmarkSample  # noqa: E402
from evaluation.models import Endpoint  # noqa: E402

# --- setup (not timed) --------------------------------------------------------------------------


@dataclass
class Fixture:
    campaign_id: int
    endpoint_id: int
    labels_per_item: int
    sessions: list[str]
    # What each submit answers (the kind's).
    answers: dict = field(default_factory=lambda: ANSWERS)


TOOL_SCHEMAS = {
    "flight_search": {
        "type": "object",
        "properties": {
            "origin": {"type": "string", "description": "IATA code"},
            "destination": {"type": "string"},
            "days": {"type": "integer"},
            "cabin": {"type": "string", "enum": ["economy", "business"]},
        },
        "required": ["origin"],
    },
    "hotel_search": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "nights": {"type": "integer"}},
        "required": ["city"],
    },
    "currency": {
        "type": "object",
        "properties": {"amount": {"type": "number"}, "to": {"type": "string"}},
        "required": ["amount", "to"],
    },
}


def trace_payload(i: int) -> dict:
    """An item's frozen trace for --kind step_review: STEPS steps as an agent's run makes
    them, with the suite's own verdicts (kept for the report, never shown)."""
    names = list(TOOL_SCHEMAS)
    steps = []
    for s in range(STEPS - 1):
        name = names[(i + s) % len(names)]
        steps.append(
            TraceStep(
                label=f"step {s + 1}",
                calls=(ShownCall(name, {"origin": "BRU", "destination": f"C{i % 50}"}),),
                results=({"flights": [{"id": f"F{i}-{k}", "price": 100 + k} for k in range(5)]},),
                text=f"Thought {s}: I look for what the user asked about in item {i}.",
                auto_error="" if s != 3 else "wrong_argument",
            )
        )
    steps.append(TraceStep(label=f"step {STEPS} (final answer)", text=f"The answer to {i}."))
    trace = Trace(steps=tuple(steps), final=f"The answer to {i}.", schemas=TOOL_SCHEMAS)
    return {"trace": trace_dump(trace)}


def fixture_build(*, items: int, annotators: int, kind: str = "turing") -> Fixture:
    with connection.cursor() as cursor:
        # Our own database: empty it of an earlier run (CASCADE: items, assignments, labels...).
        cursor.execute("TRUNCATE annotation_campaign, django_session CASCADE")
    User.objects.filter(username__startswith=USER_PREFIX).delete()
    users = User.objects.bulk_create(
        # An unusable password (no hashing): they sign in by the sessions made below.
        [
            User(username=f"{USER_PREFIX}{i:03d}", password=make_password(None))
            for i in range(annotators)
        ]
    )
    # The baseline page (an endpoint's detail in the API) needs evaluation.view_endpoint since
    # roles became a table (config/access.py); without it every baseline request is a 403.
    view_endpoint = Permission.objects.get(
        content_type__app_label="evaluation", codename="view_endpoint"
    )
    User.user_permissions.through.objects.bulk_create(
        [User.user_permissions.through(user=user, permission=view_endpoint) for user in users]
    )
    samples: list[int] = []
    if kind == "step_review":
        Benchmark.objects.filter(name=CAMPAIGN).delete()
        benchmark = Benchmark.objects.create(name=CAMPAIGN, suite="generic")
        samples = [
            sample.pk
            for sample in BenchmarkSample.objects.bulk_create(
                BenchmarkSample(
                    benchmark=benchmark,
                    split="test",
                    external_id=f"q{n}",
                    input={"query": f"Find me a flight and a hotel, case {n}."},
                    reference={"tool_calls": []},
                )
                for n in range(100)
            )
        ]
        campaign = campaign_create(name=CAMPAIGN, kind=kind, labels_per_item=3, benchmark=benchmark)
    else:
        campaign = campaign_create(name=CAMPAIGN, kind="turing", labels_per_item=3)
    started = time.perf_counter()
    with connection.cursor() as cursor:
        columns = "campaign_id, position, payload, active, submitted, is_open, sample_id"
        with cursor.cursor.copy(f"COPY annotation_item ({columns}) FROM STDIN") as copy:
            for i in range(items):
                if kind == "step_review":
                    payload = trace_payload(i)
                    sample = samples[i % len(samples)]
                else:
                    payload = {
                        "api": f"perf/api{i % 97}",
                        "documentation": {"name": f"api{i % 97}", "description": "Looks it up."},
                        "arguments": {"q": f"query {i}"},
                        "real": {"ok": True, "value": i},
                        "simulated": {"ok": True, "value": i + 1},
                    }
                    sample = None
                copy.write_row((campaign.pk, i, json.dumps(payload), 0, 0, True, sample))
        # What autovacuum would have done a minute after such an import: statistics for the
        # planner and a visibility map.
        cursor.execute("VACUUM ANALYZE annotation_item")
    print(f"setup: {items:,} items in {time.perf_counter() - started:.1f} s", flush=True)
    members_add(campaign=campaign, users=users, role=Member.Role.ANNOTATOR)
    campaign_activate(campaign=campaign)
    endpoint, _ = Endpoint.objects.update_or_create(
        name=ENDPOINT, defaults={"base_url": "http://127.0.0.1:9/v1", "model": "perf"}
    )
    sessions = []
    for user in users:
        store = SessionStore()
        store[SESSION_KEY] = user._meta.pk.value_to_string(user)
        store[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
        store[HASH_SESSION_KEY] = user.get_session_auth_hash()
        store.create()
        sessions.append(store.session_key)
    answers = STEP_ANSWERS if kind == "step_review" else ANSWERS
    return Fixture(campaign.pk, endpoint.pk, campaign.labels_per_item, sessions, answers)


# --- the server ---------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def static_collect(folder: Path) -> None:
    """What the release phase does: DEBUG off serves the hashed names of a manifest."""
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"],
        cwd=ROOT,
        env={**os.environ, "STATIC_ROOT": str(folder)},
        check=True,
    )


def await_gunicorn(
    proc: subprocess.Popen[bytes],
    port: int,
    log_name: str,
    stop: Callable[[], None],
    *,
    timeout: float,
) -> None:
    """Return once the gunicorn started as `proc` answers `GET /api/` on `port` (`timeout` s a
    request); `stop` it and exit saying why (its log is `log_name`) when it dies or has not
    answered within 60 s."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"gunicorn died at start; see {log_name}")
        try:
            conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
            conn.request("GET", "/api/")
            conn.getresponse().read()
            conn.close()
            return
        except OSError:
            time.sleep(0.1)
    stop()
    raise SystemExit(f"gunicorn did not answer within 60 s; see {log_name}")


class Server:
    def __init__(self, workers: int, threads: int, static_root: Path, log_dir: Path) -> None:
        self.workers, self.threads = workers, threads
        self.port = free_port()
        self.log = open(log_dir / f"gunicorn-{workers}x{threads}.log", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "config.wsgi:application",
                "--bind",
                f"{HOST}:{self.port}",
                "--workers",
                str(workers),
                "--threads",
                str(threads),
                "--worker-class",
                "gthread" if threads > 1 else "sync",
                # Idle connections are kept, as behind a proxy; people think between requests.
                "--keep-alive",
                "75",
                "--timeout",
                "60",
                "--graceful-timeout",
                "10",
            ],
            cwd=ROOT,
            env={**os.environ, "STATIC_ROOT": str(static_root)},
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        await_gunicorn(self.proc, self.port, self.log.name, self.stop, timeout=5)

    def cpu_seconds(self) -> float:
        return sum(process_cpu(pid) for pid in [self.proc.pid, *children_of(self.proc.pid)])

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        # A query the workers left running (a client that gave up) would load the next phase.
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )


TICK = os.sysconf("SC_CLK_TCK")


def process_cpu(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def children_of(parent: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
                found.append(int(entry.name))
    return found


def postmaster_pid() -> int | None:
    """The PostgreSQL server's pid when it runs on this machine (None for a remote one)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    try:
        fields = Path(f"/proc/{backend}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[1]) if "postgres" in Path(f"/proc/{backend}/cmdline").read_text() else None


def postgres_cpu(postmaster: int | None) -> float:
    """CPU seconds of the whole server: the postmaster, its live processes, and (cutime,
    cstime) those it has reaped, such as backends closed when CONN_MAX_AGE ran out."""
    if postmaster is None:
        return math.nan
    try:
        fields = Path(f"/proc/{postmaster}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return math.nan
    own = sum(int(v) for v in fields[11:15]) / TICK
    return own + sum(process_cpu(pid) for pid in children_of(postmaster))


def machine_cpu() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]
    return (sum(values[:8]) - idle) / TICK, sum(values[:8]) / TICK


# --- the client ---------------------------------------------------------------------------------


class Browser:
    """One annotator's browser: its cookies and one keep-alive connection."""

    def __init__(self, port: int, session_key: str) -> None:
        self.port = port
        self.origin = f"http://{HOST}:{port}"
        self.cookies = {settings.SESSION_COOKIE_NAME: session_key}
        self.conn = http.client.HTTPConnection(HOST, port, timeout=60)
        self.reconnects = 0

    def request(self, method: str, path: str, body: object = None) -> tuple[int, bytes, float]:
        """(status, body, seconds): from sending the request to the last byte of the answer."""
        headers = {
            "Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items()),
            "Accept": "application/json",
        }
        data = None
        if method != "GET":
            headers["X-CSRFToken"] = self.cookies.get(settings.CSRF_COOKIE_NAME, "")
            headers["Origin"] = self.origin
            headers["Content-Type"] = "application/json"
            data = b"" if body is None else json.dumps(body).encode()
        start = time.perf_counter()
        for attempt in (0, 1):
            try:
                self.conn.request(method, path, body=data, headers=headers)
                response = self.conn.getresponse()
                content = response.read()
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # The server closed an idle keep-alive connection: a browser opens another.
                self.conn.close()
                self.reconnects += 1
                if attempt:
                    raise
        elapsed = time.perf_counter() - start
        for header in response.headers.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(header).items():
                self.cookies[name] = morsel.value
        return response.status, content, elapsed


@dataclass
class Sample:
    kind: str
    start: float
    seconds: float
    status: int


@dataclass
class Annotator:
    index: int
    browser: Browser
    samples: list[Sample] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # item id -> assignment id, as the client saw them: another assignment of an item it had
    # already been given would be a double assignment.
    seen: dict[int, int] = field(default_factory=dict)
    doubles: int = 0
    exhausted: bool = False


def annotator_run(
    who: Annotator,
    fixture: Fixture,
    think: float,
    window: tuple[float, float, float],
    only_baseline: bool = False,
    protocol: str = "two",
) -> None:
    begin, counted_from, end = window
    rng = random.Random(who.index)
    next_path = f"/api/campaigns/{fixture.campaign_id}/next/"
    submit_path = f"/api/campaigns/{fixture.campaign_id}/submit/"
    baseline_path = f"/api/endpoints/{fixture.endpoint_id}/"
    # People do not all click at the same instant.
    time.sleep(max(0.0, begin - time.perf_counter()) + rng.uniform(0, max(think, 0.2)))
    iteration = rng.randrange(3)

    def call(kind: str, method: str, path: str, body: object = None) -> tuple[int, bytes]:
        start = time.perf_counter()
        status, content, seconds = who.browser.request(method, path, body)
        if start >= counted_from:
            who.samples.append(Sample(kind, start, seconds, status))
        if status >= 400 and len(who.errors) < 5:
            who.errors.append(f"{kind} {status}: {content[:200]!r}")
        return status, content

    if only_baseline:
        # The baseline phase: the same clients at the same pace and request rate (two requests
        # per think time, as next and submit), each the one-query page.
        while time.perf_counter() < end:
            call("baseline", "GET", baseline_path)
            if think:
                time.sleep(think * rng.uniform(0.5, 1.5))
                if time.perf_counter() >= end:
                    return
            call("baseline", "GET", baseline_path)
        return

    given = None
    while time.perf_counter() < end:
        iteration += 1
        if given is None:
            # --protocol two: every item; one: the first item, or after a failed submit.
            status, content = call("next", "POST", next_path)
            if status != 200:
                time.sleep(0.1)
                continue
            given = json.loads(content)
        if given["assignment"] is None:
            who.exhausted = True
            return
        item_id = given["item"]["id"]
        if who.seen.setdefault(item_id, given["assignment"]) != given["assignment"]:
            who.doubles += 1
        if think:
            time.sleep(think * rng.uniform(0.5, 1.5))
            if time.perf_counter() >= end:
                return
        body = {
            "assignment": given["assignment"],
            "answers": fixture.answers,
            "token": str(uuid.uuid4()),
        }
        if protocol == "one":
            # The studio page's way: the submit answers with the next item.
            status, content = call("submit", "POST", submit_path, {**body, "next": True})
            given = json.loads(content)["next"] if status in (200, 201) else None
        else:
            call("submit", "POST", submit_path, body)
            given = None
        if iteration % 3 == 0:
            call("baseline", "GET", baseline_path)


# How a client gets its items: `two` requests per item (next, then submit), or `one` (a submit
# with "next": true answers with the next item, as the studio page's submit does).
PROTOCOL_SHOWN = {"two": "", "one": "; one request per item: submit brings the next"}


@dataclass
class Phase:
    label: str
    seconds: float
    think: float
    server: str
    samples: list[Sample]
    errors: list[str]
    doubles: int
    exhausted: int
    reconnects: int
    client_cpu: float
    server_cpu: float
    postgres_cpu: float  # the whole server: other databases' work too
    machine_busy: float
    machine_total: float
    idle_busy: float  # cores busy just before the load (not ours)
    # gunicorn's CPU seconds at the counted window's start, each third, and its end (--cpu ratio)
    server_marks: list[tuple[float, float]] = field(default_factory=list)
    load: honest.Load | None = None
    protocol: str = "two"


def browsers_open(port: int, fixture: Fixture) -> list[Annotator]:
    """Each annotator's browser, its csrftoken cookie from a first page (not timed)."""
    annotators = []
    for index, session_key in enumerate(fixture.sessions):
        browser = Browser(port, session_key)
        # The campaign list, the annotator's first page, sets the cookie.
        status, content, _ = browser.request("GET", "/annotate/")
        if status != 200 or settings.CSRF_COOKIE_NAME not in browser.cookies:
            raise SystemExit(f"the campaign list answered {status}: {content[:300]!r}")
        annotators.append(Annotator(index, browser))
    return annotators


def phase_run(
    label: str,
    server: Server,
    fixture: Fixture,
    seconds: float,
    think: float,
    warmup: float,
    *,
    only_baseline: bool = False,
    clients: int = 0,
    protocol: str = "two",
    burner: Sequence[int] = (),
) -> Phase:
    annotators = browsers_open(server.port, fixture)
    if clients:
        annotators = annotators[:clients]
    # What the machine does without us (another `make run`, PostgreSQL's background work).
    idle0 = machine_cpu()
    time.sleep(2)
    idle1 = machine_cpu()
    begin = time.perf_counter() + 0.5
    window = (begin, begin + warmup, begin + warmup + seconds)
    threads = [
        threading.Thread(
            target=annotator_run,
            args=(a, fixture, think, window, only_baseline, protocol),
            daemon=True,
        )
        for a in annotators
    ]
    for thread in threads:
        thread.start()
    time.sleep(max(0.0, window[1] - time.perf_counter()))
    postmaster = postmaster_pid()
    watch = honest.Watch(
        [
            server.proc.pid,
            *([postmaster] if postmaster else []),
            *honest.pids_named("redis-server"),
        ],
        burner,
    ).start()
    cpu0, server0, pg0 = time.process_time(), server.cpu_seconds(), postgres_cpu(postmaster)
    busy0, total0 = machine_cpu()
    marks = [(time.perf_counter(), server0)]
    for third in (1, 2, 3):
        time.sleep(max(0.0, window[1] + seconds * third / 3 - time.perf_counter()))
        marks.append((time.perf_counter(), server.cpu_seconds()))
    cpu1, server1, pg1 = time.process_time(), marks[-1][1], postgres_cpu(postmaster)
    busy1, total1 = machine_cpu()
    load = watch.stop()
    for thread in threads:
        thread.join(timeout=120)
    for a in annotators:
        a.browser.conn.close()
    return Phase(
        label=label,
        seconds=seconds,
        think=think,
        server=f"{server.workers}x{server.threads}",
        samples=[s for a in annotators for s in a.samples],
        errors=[e for a in annotators for e in a.errors],
        doubles=sum(a.doubles for a in annotators),
        exhausted=sum(a.exhausted for a in annotators),
        reconnects=sum(a.browser.reconnects for a in annotators),
        client_cpu=cpu1 - cpu0,
        server_cpu=server1 - server0,
        postgres_cpu=pg1 - pg0,
        machine_busy=busy1 - busy0,
        machine_total=total1 - total0,
        idle_busy=(idle1[0] - idle0[0]) / 2,
        server_marks=marks,
        load=load,
        protocol=protocol,
    )


def cpu_per_request(phase: Phase) -> list[float]:
    """gunicorn's CPU milliseconds per request in each third of the counted window (requests
    counted by when they started)."""
    found = []
    for (t0, c0), (t1, c1) in itertools.pairwise(phase.server_marks):
        count = sum(t0 <= s.start < t1 for s in phase.samples)
        found.append(1000 * (c1 - c0) / count if count else math.nan)
    return found


def studio_cpu(phase: Phase, baseline_ms: float) -> float:
    """gunicorn's CPU milliseconds per next or submit in the load phase: its CPU, less the
    baseline requests mixed in (at the baseline phase's cost), over the next and submit
    requests (with --protocol one, a submit that brings the next item is both: two)."""
    studio = sum(
        2 if s.kind == "submit" and phase.protocol == "one" else 1
        for s in phase.samples
        if s.kind in ("next", "submit")
    )
    mixed = sum(s.kind == "baseline" for s in phase.samples)
    if not studio:
        return math.nan
    return (1000 * phase.server_cpu - mixed * baseline_ms) / studio


# --- the report ---------------------------------------------------------------------------------


def percentile(values: list[float], p: float) -> float:
    """Nearest rank."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def p95(phase: Phase, kind: str) -> float:
    return percentile([s.seconds * 1000 for s in phase.samples if s.kind == kind], 95)


def phase_print(phase: Phase, annotators: int) -> None:
    think = (
        f"think time {phase.think:g} s +/-50% between an item's arrival and its submit "
        "(people annotating; not a saturation test)"
        if phase.think
        else "no think time: SATURATION (each annotator sends its next request at once)"
    )
    print(
        f"\n== {phase.label}: {annotators} annotators, {phase.seconds:g} s counted, "
        f"gunicorn {phase.server} (workers x threads) ==\n{think}"
    )
    print(
        f"{'kind':<9} {'count':>7} {'req/s':>8} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}"
        f" {'max ms':>8} {'errors':>6}"
    )
    for kind in ("next", "submit", "baseline"):
        rows = [s for s in phase.samples if s.kind == kind]
        ms = [s.seconds * 1000 for s in rows]
        failed = sum(s.status >= 400 for s in rows)
        print(
            f"{kind:<9} {len(rows):>7} {len(rows) / phase.seconds:>8.1f}"
            f" {percentile(ms, 50):>8.1f} {percentile(ms, 95):>8.1f} {percentile(ms, 99):>8.1f}"
            f" {max(ms, default=math.nan):>8.1f} {failed:>6}"
        )
    total = len(phase.samples)
    print(f"{'all':<9} {total:>7} {total / phase.seconds:>8.1f}")
    cores = phase.machine_total / phase.seconds
    rest = phase.machine_busy - phase.client_cpu - phase.server_cpu - phase.postgres_cpu
    print(
        f"CPU, in cores of {cores:.0f}: machine {phase.machine_busy / phase.seconds:.2f} busy "
        f"(before the load: {phase.idle_busy:.2f}); client {phase.client_cpu / phase.seconds:.2f}, "
        f"gunicorn {phase.server_cpu / phase.seconds:.2f}, "
        f"PostgreSQL {phase.postgres_cpu / phase.seconds:.2f}, "
        f"rest (Redis, kernel, other processes) {rest / phase.seconds:.2f}"
    )
    if phase.reconnects:
        print(f"client reconnects (idle keep-alive closed): {phase.reconnects}")
    for error in phase.errors[:5]:
        print(f"  error: {error}")


def targets_print(
    phase: Phase,
    checks_ok: bool,
    baseline: Phase,
    args: argparse.Namespace,
) -> tuple[bool, list[honest.Result]]:
    """The load phase's targets; (no request failed, the results). The CPU ratio compares
    gunicorn's CPU per next/submit with its CPU per one-query page measured in the baseline
    phase at the same pace, so an overloaded server cannot pass more easily (the p95 ratio,
    shown for comparison, shrinks as the baseline queues too)."""
    nxt, sub, base = p95(phase, "next"), p95(phase, "submit"), p95(phase, "baseline")
    if phase.protocol == "one":
        # Each submit brings the next item: the wait for the next item is the submit's.
        nxt = percentile(
            [s.seconds * 1000 for s in phase.samples if s.kind in ("next", "submit")], 95
        )
    ratio = nxt / base
    failed = sum(s.status >= 400 for s in phase.samples)
    windows = cpu_per_request(baseline)
    base_ms = statistics.median(windows)
    studio_ms = studio_cpu(phase, base_ms)
    cpu_ratio = studio_ms / base_ms
    rows = [
        ("next-item p95", f"{nxt:.1f} ms", f"< {TARGET_P95_MS:g} ms", nxt < TARGET_P95_MS),
        ("submit p95", f"{sub:.1f} ms", f"< {TARGET_P95_MS:g} ms", sub < TARGET_P95_MS),
        (
            "CPU per request: studio / page",
            f"{studio_ms:.2f} / {base_ms:.2f} ms = {cpu_ratio:.2f}",
            f"<= {TARGET_CPU_RATIO:g}",
            cpu_ratio <= TARGET_CPU_RATIO,
        ),
        ("double assignments", "see checks" if checks_ok else "FOUND", "0", checks_ok),
        ("failed requests", str(failed), "0", failed == 0),
    ]
    print(f"\ntargets ({phase.label}):")
    for name, value, target, met in rows:
        print(f"  {name:<31} {value:<26} target {target:<9} {'met' if met else 'MISSED'}")
    print(
        f"  (shown, not a target: next p95 / baseline p95 {nxt:.1f} / {base:.1f} = {ratio:.2f};"
        f" baseline CPU per request in each third of its phase: "
        f"{', '.join(f'{w:.2f}' for w in windows)} ms)"
    )
    assert phase.load is not None and baseline.load is not None
    load_reasons = honest.disturbed(
        [], phase.load.others, max_spread=args.max_spread, max_others=args.max_others
    )
    cpu_reasons = honest.disturbed(
        windows,
        max(phase.load.others, baseline.load.others),
        max_spread=args.max_spread,
        max_others=args.max_others,
    )
    competing = f", {args.cpu_load:g} core(s) held busy by --cpu-load" if args.cpu_load else ""
    setting = (
        f"{args.annotators} annotators, think {phase.think:g} s, gunicorn {phase.server}{competing}"
        f"{PROTOCOL_SHOWN[phase.protocol]}"
    )
    integrity = checks_ok and failed == 0
    results = [
        honest.Result(
            script="annotate_load.py",
            measured=f"next item and submit p95 ({setting})",
            value=f"next {nxt:.1f} ms, submit {sub:.1f} ms",
            baseline=f"one-query page {base:.1f} ms (p95, same run)",
            ratio=f"{ratio:.2f}x (next / page p95)",
            target=f"< {TARGET_P95_MS:g} ms each, 0 double assignments, 0 failed",
            verdict=honest.verdict(
                nxt < TARGET_P95_MS and sub < TARGET_P95_MS and integrity, load_reasons
            ),
            load=phase.load.text(),
            command=honest.command_line(),
            notes=list(load_reasons),
        ),
        honest.Result(
            script="annotate_load.py",
            measured=f"gunicorn CPU per next/submit request ({setting})",
            value=f"{studio_ms:.2f} ms",
            baseline=f"{base_ms:.2f} ms per one-query page (its own phase, same pace)",
            ratio=f"{cpu_ratio:.2f}x",
            target=f"<= {TARGET_CPU_RATIO:g}x",
            verdict=honest.verdict(cpu_ratio <= TARGET_CPU_RATIO and integrity, cpu_reasons),
            load=honest.merge([baseline.load, phase.load]).text(),
            command=honest.command_line(),
            notes=list(cpu_reasons),
        ),
    ]
    return failed == 0, results


def capacity_print(
    phase: Phase, annotators: int, args: argparse.Namespace
) -> tuple[bool, honest.Result]:
    """The saturation phase measures capacity, not the latency people see: with every client
    sending its next request at once, latency is the queue (Little's law), so the p95 targets
    apply to the load phase only."""
    rate = len(phase.samples) / phase.seconds
    pairs = sum(s.kind == "submit" for s in phase.samples) / phase.seconds
    failed = sum(s.status >= 400 for s in phase.samples)
    print(
        f"\ncapacity ({phase.label}): {rate:.1f} requests/s, {pairs:.1f} next+submit pairs/s"
        f" with {annotators} clients and no think time; mean latency there is about"
        f" {annotators} / {rate:.0f} = {1000 * annotators / rate:.0f} ms (queueing);"
        f" failed requests {failed}"
    )
    assert phase.load is not None
    reasons = honest.disturbed(
        [], phase.load.others, max_spread=args.max_spread, max_others=args.max_others
    )
    result = honest.Result(
        script="annotate_load.py",
        measured=f"capacity: next+submit pairs/s, {annotators} annotators, no think time, "
        f"gunicorn {phase.server}{PROTOCOL_SHOWN[phase.protocol]}",
        value=f"{pairs:.1f} pairs/s ({rate:.1f} requests/s)",
        baseline="-",
        ratio="-",
        target=f">= {TARGET_PAIRS_PER_SECOND:g} pairs/s, 0 failed",
        verdict=honest.verdict(pairs >= TARGET_PAIRS_PER_SECOND and failed == 0, reasons),
        load=phase.load.text(),
        command=honest.command_line(),
        notes=list(reasons),
    )
    return failed == 0, result


INTEGRITY = [
    (
        "(item, annotator) pairs with two current labels",
        """SELECT count(*) FROM (SELECT 1 FROM annotation_label
           WHERE campaign_id = %(c)s AND is_current
           GROUP BY item_id, annotator_id HAVING count(*) > 1) x""",
    ),
    (
        "items with more current labels than labels_per_item",
        """SELECT count(*) FROM (SELECT 1 FROM annotation_label
           WHERE campaign_id = %(c)s AND is_current
           GROUP BY item_id HAVING count(*) > %(n)s) x""",
    ),
    (
        "(item, annotator) pairs with two assignments leased or submitted",
        """SELECT count(*) FROM (SELECT 1 FROM annotation_assignment
           WHERE campaign_id = %(c)s AND status IN ('leased', 'submitted')
           GROUP BY item_id, annotator_id HAVING count(*) > 1) x""",
    ),
    (
        "items held (leased or submitted) by more than labels_per_item annotators",
        """SELECT count(*) FROM (SELECT 1 FROM annotation_assignment
           WHERE campaign_id = %(c)s AND status IN ('leased', 'submitted')
           GROUP BY item_id HAVING count(*) > %(n)s) x""",
    ),
    (
        "items whose active / submitted / is_open differ from their assignment rows",
        """WITH a AS (
             SELECT item_id,
                    count(*) FILTER (WHERE status IN ('leased', 'submitted')) AS active,
                    count(*) FILTER (WHERE status = 'submitted') AS submitted
             FROM annotation_assignment WHERE campaign_id = %(c)s GROUP BY item_id)
           SELECT count(*) FROM annotation_item i LEFT JOIN a ON a.item_id = i.id
           WHERE i.campaign_id = %(c)s
             AND (i.active <> coalesce(a.active, 0) OR i.submitted <> coalesce(a.submitted, 0)
                  OR i.is_open <> (i.active < %(n)s))""",
    ),
    (
        "submitted assignments without exactly one current label",
        """SELECT count(*) FROM annotation_assignment a
           WHERE a.campaign_id = %(c)s AND a.status = 'submitted'
             AND (SELECT count(*) FROM annotation_label l
                  WHERE l.assignment_id = a.id AND l.is_current) <> 1""",
    ),
    (
        "current labels without a submitted assignment",
        """SELECT count(*) FROM annotation_label l JOIN annotation_assignment a
             ON a.id = l.assignment_id
           WHERE l.campaign_id = %(c)s AND l.is_current AND a.status <> 'submitted'""",
    ),
]


def integrity_check(fixture: Fixture, phases: list[Phase]) -> bool:
    params = {"c": fixture.campaign_id, "n": fixture.labels_per_item}
    ok = True
    print("\nintegrity (from the database, after every phase):")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FILTER (WHERE status = 'submitted'),"
            " count(*) FILTER (WHERE status = 'leased'), count(DISTINCT item_id)"
            " FROM annotation_assignment WHERE campaign_id = %s",
            [fixture.campaign_id],
        )
        submitted, leased, items = cursor.fetchone()
        cursor.execute(
            "SELECT count(*) FROM annotation_item WHERE campaign_id = %s AND submitted = %s",
            [fixture.campaign_id, fixture.labels_per_item],
        )
        complete = cursor.fetchone()[0]
        print(
            f"  {submitted} submitted and {leased} leased assignments over {items} items; "
            f"{complete} items complete ({fixture.labels_per_item} labels)"
        )
        for name, sql in INTEGRITY:
            cursor.execute(sql, params)
            count = cursor.fetchone()[0]
            ok = ok and count == 0
            print(f"  {'ok  ' if count == 0 else 'FAIL'} {count:>6}  {name}")
    doubles = sum(p.doubles for p in phases)
    ok = ok and doubles == 0
    print(
        f"  {'ok  ' if doubles == 0 else 'FAIL'} {doubles:>6}  "
        "items a client was given twice under different assignments"
    )
    return ok


# --- diagnosis (--profile) ----------------------------------------------------------------------


def profile(fixture: Fixture, rounds: int = 30) -> None:
    """Each request's SQL, in this process (no load), for an annotator of the run; then the
    plans of the next-item queries in the state the load left."""
    import warnings

    from django.test import Client

    # This process has no collected static files (the server has); nothing here serves them.
    warnings.filterwarnings("ignore", message="No directory at", category=UserWarning)
    from annotation.assign import NEXT_SQL

    user = User.objects.get(username=f"{USER_PREFIX}000")
    client = Client(HTTP_HOST=HOST)
    client.force_login(user)
    per_kind: dict[str, list[list[tuple[str, float]]]] = {"next": [], "submit": [], "baseline": []}
    walls: dict[str, list[float]] = {k: [] for k in per_kind}
    captured: list[tuple[str, float]] = []

    def timed(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            captured.append((sql, time.perf_counter() - start))

    assignment = None
    with connection.execute_wrapper(timed):
        for _ in range(rounds):
            for kind in per_kind:
                captured.clear()
                start = time.perf_counter()
                if kind == "next":
                    response = client.post(f"/api/campaigns/{fixture.campaign_id}/next/")
                    assignment = response.json()["assignment"]
                elif kind == "submit":
                    response = client.post(
                        f"/api/campaigns/{fixture.campaign_id}/submit/",
                        {
                            "assignment": assignment,
                            "answers": fixture.answers,
                            "token": str(uuid.uuid4()),
                        },
                        content_type="application/json",
                    )
                else:
                    response = client.get(f"/api/endpoints/{fixture.endpoint_id}/")
                walls[kind].append(time.perf_counter() - start)
                assert response.status_code < 400, response.content
                per_kind[kind].append(list(captured))
    print(f"\nprofile: {rounds} requests of each kind in this process, one annotator, no load")
    for kind, runs in per_kind.items():
        wall = percentile([w * 1000 for w in walls[kind]], 50)
        sql_ms = percentile([sum(t for _, t in run) * 1000 for run in runs], 50)
        print(
            f"\n{kind}: {len(runs[-1])} queries, median request {wall:.1f} ms "
            f"of which SQL {sql_ms:.1f} ms (the rest, Python and Redis: {wall - sql_ms:.1f} ms)"
        )
        for position, query in enumerate(runs[-1]):
            times = [run[position][1] * 1000 for run in runs if len(run) > position]
            text = " ".join(query[0].split())
            print(f"  {percentile(times, 50):>6.2f} ms  {text[:150]}")
    with connection.cursor() as cursor:
        plans = [
            ("NEXT_SQL (annotation.assign)", NEXT_SQL, [fixture.campaign_id, user.pk]),
            (
                "annotator_progress: campaign.items.count()",
                "SELECT count(*) FROM annotation_item WHERE campaign_id = %s",
                [fixture.campaign_id],
            ),
            (
                "annotator_progress: the annotator's current labels",
                "SELECT count(*) FROM annotation_label WHERE campaign_id = %s"
                " AND annotator_id = %s AND is_current",
                [fixture.campaign_id, user.pk],
            ),
        ]
        for title, sql, params in plans:
            cursor.execute("BEGIN")
            cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {sql}", params)
            plan = [row[0] for row in cursor.fetchall()]
            cursor.execute("ROLLBACK")
            print(f"\nEXPLAIN ANALYZE {title}:")
            for line in plan:
                print(f"  {line}")
    print(f"\n({Item.objects.filter(campaign_id=fixture.campaign_id).count():,} items)")


# --- main ---------------------------------------------------------------------------------------


def parse_server(text: str) -> tuple[int, int]:
    workers, _, threads = text.lower().partition("x")
    return int(workers), int(threads or 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60, help="counted seconds of load")
    parser.add_argument("--warmup", type=float, default=5, help="seconds of load not counted")
    parser.add_argument(
        "--think", type=float, default=1.0, help="seconds an annotator takes per item (+/-50%%)"
    )
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument(
        "--gunicorn", default="4x2", help="WORKERSxTHREADS (default 4x2, as the Procfile)"
    )
    parser.add_argument(
        "--tune", default="", help="comma-separated WxT to try first, e.g. 2x4,3x4,4x2"
    )
    parser.add_argument("--tune-seconds", type=float, default=20)
    parser.add_argument(
        "--saturation-seconds",
        type=float,
        default=0,
        help="then a phase with no think time, this long",
    )
    parser.add_argument(
        "--profile", action="store_true", help="SQL per request and EXPLAIN ANALYZE"
    )
    parser.add_argument("--drop-db", action="store_true", help="drop the perf database at the end")
    parser.add_argument(
        "--baseline-seconds",
        type=float,
        default=0,
        help="counted seconds of the baseline phase (only the one-query page, same clients and "
        "pace) that the CPU ratio compares with (default: half of --seconds, at least 10)",
    )
    parser.add_argument(
        "--saturation-annotators",
        type=int,
        default=0,
        help="clients in the saturation phase (default: all; the capacity target is with 10)",
    )
    parser.add_argument(
        "--protocol",
        choices=sorted(PROTOCOL_SHOWN),
        default="two",
        help="two requests per item (POST next, POST submit: default), or one (POST submit with "
        '"next": true answers with the next item, as the studio page does after a submit)',
    )
    parser.add_argument(
        "--kind",
        choices=["turing", "step_review"],
        default="turing",
        help="the campaign measured: a Turing test, or a step-level review of agent traces",
    )
    honest.add_arguments(parser, time_limit=600)
    args = parser.parse_args()
    sys.exit(honest.within_time_limit(args, "annotate_load.py", lambda: measure_all(args)))


def measure_all(args: argparse.Namespace) -> int | None:
    sys.setswitchinterval(0.001)  # 50 client threads: hand the GIL over promptly

    print(f"database {OWN.name} (migrating), cache {PERF_REDIS_URL}", flush=True)
    call_command("migrate", verbosity=0, interactive=False)
    redis.from_url(PERF_REDIS_URL).flushdb()
    with connection.cursor() as cursor:
        cursor.execute("SELECT version(), current_setting('autovacuum')")
        version, autovacuum = cursor.fetchone()
    # With autovacuum off (as on some CI machines) nothing vacuums the tables during the run:
    # the figures are then those of a server that has fallen behind on its maintenance.
    print(f"{version.split(' on ')[0]}, autovacuum {autovacuum}", flush=True)
    print(f"campaign kind: {args.kind}", flush=True)
    fixture = fixture_build(items=args.items, annotators=args.annotators, kind=args.kind)
    phases: list[Phase] = []
    results: list[honest.Result] = []
    ok = True
    baseline_seconds = args.baseline_seconds or max(10.0, args.seconds / 2)
    with (
        tempfile.TemporaryDirectory(prefix="perf-annotate-") as tmp,
        honest.CpuLoad(args.cpu_load) as burner,
    ):
        if args.cpu_load:
            print(f"competing load: {len(burner.pids)} busy process(es) (--cpu-load)")
        static_root = Path(tmp) / "static"
        static_collect(static_root)
        chosen = parse_server(args.gunicorn)
        if args.tune:
            print(
                f"\ntuning: {args.tune_seconds:g} s per configuration, think {args.think:g} s;"
                " p95 in ms, CPU in cores (idle: busy before the load)"
            )
            print(
                f"{'WxT':>5} {'next p95':>9} {'submit p95':>11} {'base p95':>9} {'req/s':>7}"
                f" {'idle':>5} {'busy':>5} {'gunicorn':>8} {'pg':>5} {'client':>6}"
            )
            best = None
            for text in args.tune.split(","):
                workers, threads = parse_server(text)
                server = Server(workers, threads, static_root, Path(tmp))
                try:
                    trial = phase_run(
                        "tune",
                        server,
                        fixture,
                        args.tune_seconds,
                        args.think,
                        args.warmup,
                        burner=burner.pids,
                    )
                finally:
                    server.stop()
                phases.append(trial)
                worst = max(p95(trial, "next"), p95(trial, "submit"))
                print(
                    f"{workers}x{threads:<3} {p95(trial, 'next'):>9.1f}"
                    f" {p95(trial, 'submit'):>11.1f} {p95(trial, 'baseline'):>9.1f}"
                    f" {len(trial.samples) / trial.seconds:>7.1f}"
                    f" {trial.idle_busy:>5.2f} {trial.machine_busy / trial.seconds:>5.2f}"
                    f" {trial.server_cpu / trial.seconds:>8.2f}"
                    f" {trial.postgres_cpu / trial.seconds:>5.2f}"
                    f" {trial.client_cpu / trial.seconds:>6.2f}",
                    flush=True,
                )
                if best is None or worst < best[0]:
                    best = (worst, (workers, threads))
            assert best is not None
            chosen = best[1]
            print(f"kept {chosen[0]}x{chosen[1]} (lowest worst p95)")
        server = Server(*chosen, static_root, Path(tmp))
        try:
            baseline = phase_run(
                "baseline",
                server,
                fixture,
                baseline_seconds,
                args.think,
                args.warmup,
                only_baseline=True,
                burner=burner.pids,
            )
            main_phase = phase_run(
                "load",
                server,
                fixture,
                args.seconds,
                args.think,
                args.warmup,
                protocol=args.protocol,
                burner=burner.pids,
            )
            phases.append(main_phase)
            saturation = None
            if args.saturation_seconds and args.think:
                saturation = phase_run(
                    "saturation",
                    server,
                    fixture,
                    args.saturation_seconds,
                    0,
                    args.warmup,
                    clients=args.saturation_annotators,
                    protocol=args.protocol,
                    burner=burner.pids,
                )
                phases.append(saturation)
        finally:
            server.stop()
        phase_print(baseline, args.annotators)
        phase_print(main_phase, args.annotators)
        if saturation is not None:
            phase_print(saturation, args.saturation_annotators or args.annotators)
        checks_ok = integrity_check(fixture, phases)
        requests_ok, found = targets_print(main_phase, checks_ok, baseline, args)
        results += found
        ok = requests_ok and checks_ok
        if saturation is not None:
            capacity_ok, capacity = capacity_print(
                saturation, args.saturation_annotators or args.annotators, args
            )
            results.append(capacity)
            ok = capacity_ok and ok
        if any(p.exhausted for p in phases):
            print("note: some annotators ran out of items")
    print()
    for result in results:
        result.print()
    honest.results_append(args.results, results)
    if args.profile:
        profile(fixture)
    connections.close_all()
    if args.drop_db:
        OWN.drop()
        print(f"\ndropped database {OWN.name}")
    else:
        print(f"\ndatabase {OWN.name} left in place (--drop-db drops it)")
    # An integrity check or a request that failed is a failure whatever the figures say.
    return honest.exit_status(r.verdict for r in results) if ok else 1


if __name__ == "__main__":
    main()
