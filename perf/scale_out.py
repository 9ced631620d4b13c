"""Workers on other hosts: a run, a judge job and an agreement report spread over Celery workers
that each live in a network namespace of their own, pointed at one PostgreSQL and one Redis in
another, as the deployment page describes (more worker machines, the same database and broker).

    python perf/scale_out.py [--workers 4] [--items 1600] [--judge-samples 600]
                             [--latency-ms 200] [--concurrency 8] [--lease-seconds 10]
                             [--recovery-seconds 5] [--repeat 1] [--time-limit 900]
                             [--cpu-load N] [--results FILE] [--max-spread 0.15]
                             [--max-others 0.25]

It needs root and `ip netns` (it says so and exits 2 otherwise). The topology, made by the
script and torn down at its end whatever happens (an error, --time-limit, Ctrl-C, SIGTERM; a run
that was killed outright is swept by the next one, which removes namespaces of its prefix whose
process is gone):

- a switch namespace holding a bridge, and one veth pair per host: one end a port of the bridge,
  the other `eth0` of the host's namespace (10.77.0.0/24; no default route, so the hosts reach
  each other and nothing else; no interface is added to the machine's own namespace);
- the services host (10.77.0.1): a private PostgreSQL 15 cluster (initdb into a temporary
  folder, /usr/lib/postgresql/15/bin, as the devstack's unprivileged user when root), a Redis,
  Celery beat (the sweep of lost work every --recovery-seconds) and the model endpoint: the fake
  OpenAI server (tests/fake_openai.py) answering every request after --latency-ms and at most
  --concurrency requests of one client address at once, so that each worker host is held to
  its own share and the run is bound by the endpoint's latency, not by this machine's cores;
- worker hosts 10.77.0.11, .12, ...: one Celery worker each (one process, every queue).

This script itself runs on the services host (it enters that namespace before it starts
anything), launching work through the platform's services as the pages do.

Measured, each from launch until its last item is answered (items/s: the work spread over the
workers; the seconds until the stored result is complete, a run's metrics and intervals or a
judge job's metrics, a fixed cost after the last item, are printed with it):

1. a run of --items items with 1 worker, then the same run with --workers workers (the
   endpoint's limit --concurrency times the workers, the response cache emptied before each):
   items/s of each and the ratio. Target: at least 3.5x with 4 workers (0.875x per worker).
2. a judge job (generic.pairwise, both orders: 2 x --judge-samples judgments) the same way.
3. a run with --workers workers during which an agreement report is queued, and one worker host
   is lost mid-run: its link cut (the bridge port down), then its processes killed and its
   namespace removed. Checked: every item has exactly one prediction, done; the endpoint's
   request log has every item at least once, and the only items asked twice are items the
   platform took back (claimed more than once), no more of them than the lost worker could have
   had in flight; the items taken back were all done within --lease-seconds +
   --recovery-seconds (+ 2 s to take them and answer) of the cut; the agreement report is done.

Results go to perf/honest.py's table (a verdict is never a pass on a disturbed machine: other
processes took more than --max-others cores, or the baseline's repeats spread). Exit status: 0
pass, 1 missed, a failed check or the time limit ran out (a TIMEOUT result, honest.py's
within_time_limit), 3 disturbed, 2 unusable here (no root, no `ip netns`) or a bad argument.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from perf import honest  # noqa: E402

PG_BIN = Path("/usr/lib/postgresql/15/bin")
PREFIX = "scaleout"
SUBNET = "10.77.0"
SERVICES_ADDRESS = f"{SUBNET}.1"
PG_PORT, REDIS_PORT = 5432, 6379
QUEUES = "default,inference,judging,reports"
TARGET_PER_WORKER = 0.875  # 3.5x with 4 workers
EXIT_UNUSABLE = 2
CLONE_NEWNET = 0x40000000
RUN_BENCHMARK = "scale-out"
JUDGE_ANSWER = '{"better": "1", "reason": "scale-out"}'


class Stopped(Exception):
    """SIGTERM or SIGINT: tear down and leave."""


# --- the namespaces -------------------------------------------------------------------------------


def unusable() -> str:
    """Why namespaces cannot be made here ('' when they can)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "perf/scale_out.py makes network namespaces: it needs root"
    if shutil.which("ip") is None:
        return "perf/scale_out.py needs the `ip` command (iproute2) for its network namespaces"
    done = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return f"`ip netns list` failed here: {done.stderr.strip()}"
    return ""


def ip(*args: str, check: bool = True) -> str:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, check=False, timeout=30)
    if check and done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def namespaces() -> list[str]:
    """The names of the machine's named network namespaces."""
    return [line.split()[0] for line in ip("netns", "list").splitlines() if line.strip()]


def ours(names: Sequence[str]) -> dict[int, list[str]]:
    """Namespaces of this script, by the pid of the process that made them."""
    found: dict[int, list[str]] = {}
    for name in names:
        match = re.fullmatch(rf"{PREFIX}-(\d+)-\w+", name)
        if match:
            found.setdefault(int(match.group(1)), []).append(name)
    return found


def kill_inside(name: str) -> None:
    """SIGKILL every process in the namespace and wait until they are gone."""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        pids = [int(p) for p in ip("netns", "pids", name, check=False).split()]
        pids = [p for p in pids if p != os.getpid()]
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)


def remove_namespace(name: str) -> None:
    kill_inside(name)
    ip("netns", "del", name, check=False)


def sweep_stale() -> list[str]:
    """Namespaces left by an earlier run of this script that was killed outright."""
    removed = []
    for pid, names in ours(namespaces()).items():
        if pid != os.getpid() and not os.path.exists(f"/proc/{pid}"):
            for name in sorted(names, key=lambda n: n.endswith("-sw")):
                remove_namespace(name)
                removed.append(name)
    return removed


def _setns(path: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns {path}")
    finally:
        os.close(fd)


class Topology:
    """The switch, the services host and the worker hosts (see the module docstring)."""

    def __init__(self, workers: int) -> None:
        self.tag = f"{PREFIX}-{os.getpid()}"
        self.switch = f"{self.tag}-sw"
        self.services = f"{self.tag}-db"
        self.workers = [f"{self.tag}-w{k}" for k in range(1, workers + 1)]
        self.made: list[str] = []
        self.home = os.open("/proc/self/ns/net", os.O_RDONLY)

    def address(self, worker: int) -> str:
        return f"{SUBNET}.{10 + worker}"

    def up(self) -> None:
        ip("netns", "add", self.switch)
        self.made.append(self.switch)
        ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        ip("-n", self.switch, "link", "set", "br0", "up")
        self._host(self.services, "db", SERVICES_ADDRESS)
        for k, name in enumerate(self.workers, start=1):
            self._host(name, f"w{k}", self.address(k))

    def _host(self, name: str, port: str, address: str) -> None:
        ip("netns", "add", name)
        self.made.append(name)
        ip(
            "-n",
            self.switch,
            "link",
            "add",
            port,
            "type",
            "veth",
            "peer",
            "name",
            "eth0",
            "netns",
            name,
        )
        ip("-n", self.switch, "link", "set", port, "master", "br0", "up")
        ip("-n", name, "link", "set", "lo", "up")
        ip("-n", name, "link", "set", "eth0", "up")
        ip("-n", name, "addr", "add", f"{address}/24", "dev", "eth0")

    def enter_services(self) -> None:
        """This process (before it starts any thread) moves to the services host."""
        _setns(f"/run/netns/{self.services}")

    def cut(self, worker: int) -> None:
        """The worker host's link goes down (its bridge port): nothing in or out."""
        ip("-n", self.switch, "link", "set", f"w{worker}", "down")

    def lose(self, worker: int) -> None:
        """Its processes killed, its namespace (and veth pair) removed."""
        name = self.workers[worker - 1]
        remove_namespace(name)
        if name in self.made:
            self.made.remove(name)

    def down(self) -> None:
        """Back to the machine's namespace; every process in ours killed, ours removed (the
        switch last: its ports go with the hosts)."""
        with contextlib.suppress(OSError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.setns(self.home, CLONE_NEWNET)
        for name in sorted(self.made, key=lambda n: n == self.switch):
            remove_namespace(name)
        self.made.clear()
        with contextlib.suppress(OSError):
            os.close(self.home)


# --- the services host ----------------------------------------------------------------------------


class Services:
    """PostgreSQL, Redis, the endpoint and beat on the services host, children of this process
    (started after it entered that namespace)."""

    def __init__(self, base: Path, env: dict[str, str]) -> None:
        self.base = base
        self.env = env
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.server: Any = None

    def _spawn(self, name: str, args: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        log = open(self.base / f"{name}.log", "wb")  # noqa: SIM115 - the child holds it
        proc = subprocess.Popen(
            args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, **kwargs
        )
        log.close()
        self.procs[name] = proc
        return proc

    def postgres(self) -> None:
        from config.devstack import _pg_run_as

        run_as = _pg_run_as()
        pgdata = self.base / "pg"
        pgdata.mkdir(mode=0o700)
        user: dict[str, Any] = {}
        if run_as.uid is not None:
            os.chown(pgdata, run_as.uid, run_as.gid or 0)
            user = {"user": run_as.uid, "group": run_as.gid, "extra_groups": []}
        subprocess.run(
            [
                str(PG_BIN / "initdb"),
                "-D",
                str(pgdata),
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C.UTF-8",
                "--no-instructions",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            check=True,
            timeout=120,
            env={**os.environ, "LC_ALL": "C", "TZ": "UTC"},
            **user,
        )
        with open(pgdata / "postgresql.conf", "a") as conf:
            conf.write(
                f"\nlisten_addresses = '{SERVICES_ADDRESS}'\nport = {PG_PORT}\n"
                "unix_socket_directories = ''\nsynchronous_commit = off\nmax_connections = 200\n"
            )
        with open(pgdata / "pg_hba.conf", "a") as hba:
            hba.write(f"host all all {SUBNET}.0/24 trust\n")  # the hosts of the switch only
        self._spawn("postgres", [str(PG_BIN / "postgres"), "-D", str(pgdata)], **user)
        import psycopg

        deadline = time.monotonic() + 60
        while True:
            try:
                with psycopg.connect(
                    f"postgresql://postgres@{SERVICES_ADDRESS}:{PG_PORT}/postgres", autocommit=True
                ) as conn:
                    conn.execute('CREATE DATABASE "toolevals"')
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline or self.procs["postgres"].poll() is not None:
                    raise RuntimeError(
                        "PostgreSQL did not start: " + (self.base / "postgres.log").read_text()
                    ) from None
                time.sleep(0.2)

    def redis(self) -> None:
        import redis

        server = shutil.which("redis-server") or "/usr/bin/redis-server"
        self._spawn(
            "redis",
            [
                server,
                "--bind",
                SERVICES_ADDRESS,
                "--port",
                str(REDIS_PORT),
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "no",
                "--dir",
                str(self.base),
            ],
        )
        client = redis.Redis(host=SERVICES_ADDRESS, port=REDIS_PORT)
        deadline = time.monotonic() + 30
        while True:
            try:
                client.ping()
                return
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise RuntimeError("redis-server did not answer") from None
                time.sleep(0.1)

    def endpoint(self, latency_ms: int, per_client: int) -> Any:
        from tests.fake_openai import FakeOpenAIProcess

        self.server = FakeOpenAIProcess(
            *("--host", SERVICES_ADDRESS, "--latency-ms", str(latency_ms)),
            *("--per-client-concurrency", str(per_client), "--max-records", "1000000"),
            *("--responder", f"fixed:{JUDGE_ANSWER}"),
        ).start()
        return self.server

    def beat(self) -> None:
        self._spawn(
            "beat",
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "beat",
                "-s",
                str(self.base / "beat-schedule"),
                "-l",
                "warning",
            ],
            cwd=ROOT,
            env=self.env,
        )

    def pids(self) -> list[int]:
        found = [p.pid for p in self.procs.values()]
        if self.server is not None and self.server.process is not None:
            found.append(self.server.process.pid)
        return found

    def stop(self) -> None:
        if self.server is not None:
            with contextlib.suppress(Exception):
                self.server.stop()
        for name, proc in reversed(list(self.procs.items())):
            if proc.poll() is None:
                # PostgreSQL's fast shutdown on SIGINT; the others end on SIGTERM
                proc.send_signal(signal.SIGINT if name == "postgres" else signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


class Workers:
    """One Celery worker per worker host (`ip netns exec`), one process each, every queue."""

    def __init__(self, topology: Topology, base: Path, env: dict[str, str]) -> None:
        self.topology = topology
        self.base = base
        self.env = env
        self.procs: dict[int, subprocess.Popen[bytes]] = {}

    def start(self, hosts: Sequence[int]) -> None:
        for k in hosts:
            log = open(self.base / f"worker-{k}.log", "wb")  # noqa: SIM115 - the child holds it
            self.procs[k] = subprocess.Popen(
                [
                    "ip",
                    "netns",
                    "exec",
                    self.topology.workers[k - 1],
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "config",
                    "worker",
                    "-Q",
                    QUEUES,
                    "--concurrency",
                    "1",
                    "-n",
                    f"scale{k}@%h",
                    "--without-gossip",
                    "--without-mingle",
                    "--without-heartbeat",
                    "-l",
                    "info",
                ],
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            log.close()
        deadline = time.monotonic() + 120
        for k in hosts:
            path = self.base / f"worker-{k}.log"
            while " ready." not in path.read_text(errors="replace"):
                if self.procs[k].poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"worker {k} did not start:\n{path.read_text()[-3000:]}")
                time.sleep(0.1)

    def stop(self, k: int) -> None:
        proc = self.procs.pop(k)
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)

    def lost(self, k: int) -> None:
        """The host's processes were killed with its namespace: reap the worker."""
        proc = self.procs.pop(k)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)

    def stop_all(self) -> None:
        for k in list(self.procs):
            self.stop(k)

    def pids(self) -> list[int]:
        return [p.pid for p in self.procs.values()]


# --- the measurements -----------------------------------------------------------------------------


def wait_for(what: str, done: Any, timeout: float = 900.0) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} not done after {timeout:g} s")
        time.sleep(0.02)


def run_complete(run_id: int) -> bool:
    from evaluation.models import Run

    row = Run.objects.filter(pk=run_id).values("status", "metrics", "intervals").get()
    if row["status"] not in (Run.Status.RUNNING, Run.Status.DONE):
        raise RuntimeError(f"run {run_id} ended {row['status']}")
    return row["status"] == Run.Status.DONE and bool(row["intervals"] or not row["metrics"])


def job_complete(job_id: int) -> bool:
    from evaluation.models import JudgeJob

    status = JudgeJob.objects.filter(pk=job_id).values_list("status", flat=True).get()
    if status not in (JudgeJob.Status.RUNNING, JudgeJob.Status.DONE):
        raise RuntimeError(f"judge job {job_id} ended {status}")
    return status == JudgeJob.Status.DONE


def endpoint_for(name: str, base_url: str, model: str, concurrency: int) -> Any:
    from evaluation.models import Endpoint

    Endpoint.objects.filter(name=name).delete()
    return Endpoint.objects.create(
        name=name,
        base_url=base_url,
        model=model,
        style=Endpoint.Style.CHAT,
        max_concurrency=concurrency,
        timeout_seconds=30,
        status=Endpoint.Status.READY,
    )


def forget_cache() -> None:
    from evaluation.models import ResponseCache

    ResponseCache.objects.all().delete()


@dataclass
class Timed:
    """One launch: seconds until its last item was answered (the throughput's clock) and until
    its stored result was complete (metrics, intervals: a fixed cost after the last item),
    the launch's own call and the moment in it its first chunk was queued (from then on
    workers answer while the launch finishes), the machine meanwhile, and the endpoint's
    requests by worker host."""

    seconds: float
    complete: float
    launch: float
    queued: float
    load: honest.Load
    by_client: dict[str, int]


class FirstPublish:
    """When this process first handed a task to the broker since `reset` (Celery's
    after_task_publish signal, sent in the publishing process)."""

    def __init__(self) -> None:
        self.at: float | None = None

    def reset(self) -> None:
        self.at = None

    def __call__(self, **_kwargs: Any) -> None:
        if self.at is None:
            self.at = time.perf_counter()

    def since(self, start: float) -> float:
        return (self.at if self.at is not None else time.perf_counter()) - start


FIRST_PUBLISH = FirstPublish()


def say(what: str, timed: Timed) -> None:
    print(
        f"{what}: {timed.seconds:.2f} s to the last item ({timed.launch:.2f} s of it the launch,"
        f" its first chunk queued at {timed.queued:.2f} s), {timed.complete:.2f} s complete",
        flush=True,
    )


def until_answered(items: Any, total: int, complete: Any, what: str) -> tuple[float, float]:
    """Seconds from now until every one of `items` (a queryset) is settled, then until
    `complete()` holds."""
    start = time.perf_counter()
    settled = items.exclude(status__in=("pending", "running"))
    wait_for(what, lambda: settled.count() == total)
    answered = time.perf_counter() - start
    wait_for(what, complete)
    return answered, time.perf_counter() - start


def timed_run(
    benchmark: Any, endpoint: Any, server: Any, roots: list[int], burner: list[int]
) -> Timed:
    from evaluation.models import Prediction
    from evaluation.services import run_launch

    forget_cache()
    server.reset()
    items = benchmark.samples.count()
    watch = honest.Watch(roots, burner).start()
    FIRST_PUBLISH.reset()
    start = time.perf_counter()
    run = run_launch(benchmark=benchmark, task="answer", endpoint=endpoint, split="default")
    launched = time.perf_counter() - start
    queued = FIRST_PUBLISH.since(start)
    answered, complete = until_answered(
        Prediction.objects.filter(run=run), items, lambda: run_complete(run.pk), f"run {run.pk}"
    )
    load = watch.stop()
    stats = server.stats()
    done = Prediction.objects.filter(run=run, status=Prediction.Status.DONE).count()
    if done != items or stats["total"] != items or stats["distinct_contents"] != items:
        raise RuntimeError(
            f"the run of {items} items: {done} done, {stats['total']} endpoint calls of "
            f"{stats['distinct_contents']} distinct requests"
        )
    return Timed(
        launched + answered, launched + complete, launched, queued, load, stats["by_client"]
    )


def timed_job(
    judge: Any, runs: tuple[Any, Any], server: Any, roots: list[int], burner: list[int]
) -> Timed:
    from evaluation.judging import judge_launch
    from evaluation.models import Judgment

    forget_cache()
    server.reset()
    watch = honest.Watch(roots, burner).start()
    FIRST_PUBLISH.reset()
    start = time.perf_counter()
    job = judge_launch(judge=judge, run=runs[0], against=runs[1], repeats=1)
    launched = time.perf_counter() - start
    queued = FIRST_PUBLISH.since(start)
    judgments = Judgment.objects.filter(job=job)
    total = judgments.count()
    answered, complete = until_answered(
        judgments, total, lambda: job_complete(job.pk), f"judge job {job.pk}"
    )
    load = watch.stop()
    done = judgments.filter(status=Judgment.Status.DONE).count()
    calls = server.stats()
    # Every judgment asked once: as many requests as judgments, all different.
    if done != total or calls["total"] != total or calls["distinct_contents"] != total:
        raise RuntimeError(
            f"judge job: {done} of {total} done, {calls['total']} endpoint calls of "
            f"{calls['distinct_contents']} distinct requests"
        )
    return Timed(
        launched + answered, launched + complete, launched, queued, load, calls["by_client"]
    )


def times(timed: Sequence[Timed]) -> str:
    return ", ".join(
        f"{t.seconds:.2f} ({t.queued:.2f}, {t.launch:.2f}; {t.complete:.2f})" for t in timed
    )


def spread_text(by_client: dict[str, int]) -> str:
    return ", ".join(f"{host.rsplit('.', 1)[1]}: {n}" for host, n in sorted(by_client.items()))


def scaling_result(
    what: str,
    unit: str,
    count: int,
    one: list[Timed],
    many: list[Timed],
    workers: int,
    args: argparse.Namespace,
) -> honest.Result:
    """items/s with `workers` workers against 1, the target TARGET_PER_WORKER x workers."""
    base_rates = [count / t.seconds for t in one]
    rates = [count / t.seconds for t in many]
    base, rate = statistics.median(base_rates), statistics.median(rates)
    ratio = rate / base
    target = TARGET_PER_WORKER * workers
    load = honest.merge([t.load for t in one + many])
    reasons = honest.disturbed(
        base_rates, load.others, max_spread=args.max_spread, max_others=args.max_others
    )
    result = honest.Result(
        script="scale_out.py",
        measured=f"{what}: {count} {unit}, {workers} worker hosts vs 1 ({args.latency_ms} ms "
        f"latency, at most {args.concurrency} requests per worker host at once; {unit}/s from "
        "launch to the last one answered)",
        value=f"{rate:.1f} {unit}/s",
        baseline=f"{base:.1f} {unit}/s (1 worker host)",
        ratio=f"{ratio:.2f}x",
        target=f">= {target:.2f}x",
        verdict=honest.verdict(ratio >= target, reasons),
        load=load.text(),
        command=honest.command_line(),
        notes=[
            *reasons,
            f"{what}: requests per worker host (last octet: count) with {workers}: "
            f"{spread_text(many[-1].by_client)}; with 1: {spread_text(one[-1].by_client)}",
            f"{what}: seconds from launch to the last item answered (the first chunk queued,"
            f" the launch's call returned; the stored result complete) with 1: {times(one)};"
            f" with {workers}: {times(many)}",
        ],
    )
    result.print()
    return result


def build_benchmark(items: int, folder: Path) -> Any:
    from benchmarks.models import Benchmark
    from benchmarks.services import benchmark_import

    path = folder / "questions.jsonl"
    with path.open("w") as handle:
        for i in range(items):
            line = {"id": i, "query": f"What number comes after {i}?", "answer": i + 1}
            handle.write(json.dumps(line) + "\n")
    benchmark_import(suite="generic", paths=[path], benchmark_name=RUN_BENCHMARK)
    return Benchmark.objects.get(name=RUN_BENCHMARK)


def lose_a_worker(
    topology: Topology,
    workers: Workers,
    benchmark: Any,
    endpoint: Any,
    server: Any,
    campaign: Any,
    args: argparse.Namespace,
    roots: list[int],
    burner: list[int],
) -> honest.Result:
    """A run with every worker; an agreement report queued; one worker host lost mid-run."""
    from django.db import connection

    from annotation.agreement.services import report_params, report_request
    from annotation.models import AgreementReport
    from evaluation.models import Prediction, Run
    from evaluation.services import run_launch

    victim = args.workers  # the last host
    victim_address = topology.address(victim)
    forget_cache()
    server.reset()
    watch = honest.Watch(roots, burner).start()
    start = time.perf_counter()
    run = run_launch(benchmark=benchmark, task="answer", endpoint=endpoint, split="default")
    report = report_request(campaign, report_params(resamples=200), inline=False)

    def victim_busy() -> bool:
        done = Prediction.objects.filter(run=run, status=Prediction.Status.DONE).count()
        asked = server.stats()["by_client"].get(victim_address, 0)
        return done >= args.items * 0.25 and asked > 0

    wait_for("a quarter of the run", victim_busy, timeout=300)
    cut_at = time.time()
    topology.cut(victim)
    time.sleep(1.0)  # the link is down: requests in flight are answered into the void
    topology.lose(victim)
    workers.lost(victim)
    lost_at = time.time()
    print(
        f"worker host {victim} ({victim_address}): link cut, then killed "
        f"{lost_at - cut_at:.1f} s later",
        flush=True,
    )
    wait_for(f"run {run.pk}", lambda: run_complete(run.pk))
    seconds = time.perf_counter() - start

    def report_done() -> bool:
        status = AgreementReport.objects.filter(pk=report.pk).values_list("status", flat=True)
        if status.get() == AgreementReport.Status.FAILED:
            raise RuntimeError("the agreement report failed")
        return status.get() == AgreementReport.Status.DONE

    wait_for("the agreement report", report_done, timeout=300)
    report_seconds = time.perf_counter() - start
    load = watch.stop()

    # Every item: one prediction, done; the endpoint's log per item.
    problems = []
    rows = list(
        Prediction.objects.filter(run=run).values_list(
            "sample__external_id", "status", "attempts", "output", "updated_at"
        )
    )
    if len(rows) != args.items:
        problems.append(f"{len(rows)} predictions for {args.items} items")
    not_done = [r[0] for r in rows if r[1] != Prediction.Status.DONE or not r[3]]
    if not_done:
        problems.append(f"{len(not_done)} items not done: {not_done[:5]}")
    attempts = {r[0]: r[2] for r in rows}
    asked_twice, never = {}, []
    for external_id in attempts:
        count = server.stats(contains=f"after {external_id}?")["matching"]
        if count == 0:
            never.append(external_id)
        elif count > 1:
            asked_twice[external_id] = count
    if never:
        problems.append(f"{len(never)} items never asked: {never[:5]}")
    not_taken_back = [i for i in asked_twice if attempts[i] < 2]
    if not_taken_back:
        problems.append(f"items asked twice but claimed once: {not_taken_back[:5]}")
    extra = sum(n - 1 for n in asked_twice.values())
    in_flight_max = endpoint.max_concurrency
    if extra > in_flight_max:
        problems.append(f"{extra} repeated requests, more than {in_flight_max} in flight")
    taken_back = [r for r in rows if r[2] >= 2]
    if not taken_back:
        problems.append("no item was taken back: the lost worker held none")
    with connection.cursor() as cursor:
        cursor.execute("SELECT extract(epoch FROM now())")
        skew = float(cursor.fetchone()[0]) - time.time()  # one machine: about 0
    recovered = max((r[4].timestamp() - skew for r in taken_back), default=cut_at) - cut_at
    bound = args.lease_seconds + args.recovery_seconds + 2.0
    if recovered > bound:
        problems.append(f"taken-back items done {recovered:.1f} s after the cut (> {bound:g})")
    status = Run.objects.filter(pk=run.pk).values_list("status", flat=True).get()
    print(
        f"lost-worker run: {seconds:.2f} s, {len(taken_back)} items taken back, {extra} "
        f"repeated requests, taken-back items done {recovered:.1f} s after the cut; agreement "
        f"report done {report_seconds:.1f} s after launch; run {status}",
        flush=True,
    )
    reasons = honest.disturbed([], load.others, max_others=args.max_others)
    result = honest.Result(
        script="scale_out.py",
        measured=f"a worker host lost mid-run ({args.items} items, {args.workers} worker hosts; "
        "link cut, then killed) and an agreement report queued during the run",
        value=f"{len(taken_back)} items taken back, done {recovered:.1f} s after the cut; "
        f"{extra} repeated requests; report done",
        baseline=f"lease {args.lease_seconds:g} s + sweep every {args.recovery_seconds:g} s",
        ratio="-",
        target=f"every item done exactly once; taken-back items done within {bound:g} s",
        verdict=honest.verdict(not problems, reasons),
        load=load.text(),
        command=honest.command_line(),
        notes=[*reasons, *problems, f"run {seconds:.2f} s, report {report_seconds:.1f} s"],
    )
    result.print()
    return result


def measure(
    args: argparse.Namespace, topology: Topology, base: Path, burner: list[int]
) -> list[honest.Result]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"postgres://postgres@{SERVICES_ADDRESS}:{PG_PORT}/toolevals",
        "REDIS_URL": f"redis://{SERVICES_ADDRESS}:{REDIS_PORT}/0",
        "DEBUG": "1",
        "LOG_LEVEL": "WARNING",
        "PYTHONUNBUFFERED": "1",
        "EVALUATION_LEASE_SECONDS": str(args.lease_seconds),
        "RECOVERY_INTERVAL_SECONDS": str(args.recovery_seconds),
    }
    os.environ.update(env)
    services = Services(base, env)
    workers = Workers(topology, base, env)
    try:
        t0 = time.perf_counter()
        honest.doing("services host: PostgreSQL 15, Redis, migrate, the endpoint, beat")
        services.postgres()
        services.redis()
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0, interactive=False)
        from celery.signals import after_task_publish

        after_task_publish.connect(FIRST_PUBLISH, weak=False)
        server = services.endpoint(args.latency_ms, args.concurrency)
        services.beat()
        print(
            f"services up on {SERVICES_ADDRESS} ({time.perf_counter() - t0:.1f} s: "
            f"PostgreSQL 15, Redis, beat, endpoint {server.base_url})",
            flush=True,
        )

        from annotation.models import Campaign
        from evaluation import judging
        from evaluation.models import Judge, Prediction, Run
        from perf.agreement_fixture import fixture_build

        honest.doing(f"fixtures: {args.items} items, an agreement campaign of {args.judge_samples}")
        campaign_id, _memory = fixture_build(args.judge_samples, 3, 3)
        campaign = Campaign.objects.get(pk=campaign_id)
        judged = tuple(Run.objects.filter(benchmark__name="perf agreement").order_by("pk"))
        # Two answers that differ, so that each judgment's request (a sample, an order) is its
        # own and the endpoint's log tells them apart.
        for run, answer in zip(judged, ("Answer: 1", "Answer: 2"), strict=True):
            Prediction.objects.filter(run=run).update(output=answer)
        benchmark = build_benchmark(args.items, base)
        n = args.workers
        one = endpoint_for("scale-1", server.base_url, "scale", args.concurrency)
        many = endpoint_for(f"scale-{n}", server.base_url, "scale", args.concurrency * n)
        judge_one = judging.judge_create(
            name="scale-1",
            template="generic.pairwise",
            answer_mode=Judge.AnswerMode.TEXT,
            endpoint=endpoint_for("judge-1", server.base_url, "judge", args.concurrency),
        )
        judge_many = judging.judge_create(
            name=f"scale-{n}",
            template="generic.pairwise",
            answer_mode=Judge.AnswerMode.TEXT,
            endpoint=endpoint_for(f"judge-{n}", server.base_url, "judge", args.concurrency * n),
        )

        def roots() -> list[int]:
            return services.pids() + workers.pids()

        honest.doing("1 worker host: the run and the judge job")
        workers.start([1])
        runs_one, jobs_one = [], []
        for _ in range(args.repeat):
            runs_one.append(timed_run(benchmark, one, server, roots(), burner))
            say("run, 1 worker host", runs_one[-1])
            jobs_one.append(timed_job(judge_one, judged, server, roots(), burner))
            say("judge job, 1 worker host", jobs_one[-1])
        honest.doing(f"{n} worker hosts: the run and the judge job")
        workers.start(range(2, n + 1))
        runs_many, jobs_many = [], []
        for _ in range(args.repeat):
            runs_many.append(timed_run(benchmark, many, server, roots(), burner))
            say(f"run, {n} worker hosts", runs_many[-1])
            jobs_many.append(timed_job(judge_many, judged, server, roots(), burner))
            say(f"judge job, {n} worker hosts", jobs_many[-1])
        results = [
            scaling_result("run", "items", args.items, runs_one, runs_many, n, args),
            scaling_result(
                "judge job", "judgments", 2 * args.judge_samples, jobs_one, jobs_many, n, args
            ),
        ]
        honest.doing(f"{n} worker hosts, one lost mid-run; an agreement report queued")
        results.append(
            lose_a_worker(
                topology, workers, benchmark, many, server, campaign, args, roots(), burner
            )
        )
        return results
    finally:
        honest.doing("tearing down")
        workers.stop_all()
        with contextlib.suppress(Exception):
            from django.db import connections

            connections.close_all()
        services.stop()


def failed_result(args: argparse.Namespace, reason: str, load: honest.Load) -> honest.Result:
    result = honest.Result(
        script="scale_out.py",
        measured=f"workers on other hosts ({args.workers} worker hosts vs 1): stopped",
        value="-",
        baseline="-",
        ratio="-",
        target="every part runs to its end",
        verdict="MISSED",
        load=load.text(),
        command=honest.command_line(),
        notes=[reason],
    )
    result.print()
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=4, help="worker hosts (at least 2)")
    parser.add_argument("--items", type=int, default=1600, help="items of each run")
    parser.add_argument(
        "--judge-samples", type=int, default=600, help="samples judged (two orders each)"
    )
    parser.add_argument("--latency-ms", type=int, default=200)
    parser.add_argument(
        "--concurrency", type=int, default=8, help="requests at once per worker host"
    )
    parser.add_argument("--lease-seconds", type=float, default=10.0)
    parser.add_argument("--recovery-seconds", type=float, default=5.0)
    parser.add_argument("--repeat", type=int, default=1)
    honest.add_arguments(parser, time_limit=900)
    args = parser.parse_args(argv)
    if args.workers < 2 or args.items < 10 or args.judge_samples < 5 or args.repeat < 1:
        parser.error("--workers at least 2, --items at least 10, --judge-samples at least 5")
    if reason := unusable():
        print(reason, file=sys.stderr)
        return EXIT_UNUSABLE
    if not (PG_BIN / "postgres").exists():
        print(f"no PostgreSQL 15 at {PG_BIN}", file=sys.stderr)
        return EXIT_UNUSABLE
    for name in sweep_stale():
        print(f"removed a namespace left by an earlier run: {name}")
    return honest.within_time_limit(args, "scale_out.py", lambda: measure_all(args))


def measure_all(args: argparse.Namespace) -> int:
    """The topology up, the measurements, everything torn down (also on an error, the time
    limit, SIGTERM or Ctrl-C); the results appended."""

    def stop(signum: int, _frame: object) -> None:
        raise Stopped(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    topology = Topology(args.workers)
    base = Path(tempfile.mkdtemp(prefix="scale-out-"))
    base.chmod(0o711)  # PostgreSQL's user reaches its folder inside
    results: list[honest.Result] = []
    watch = honest.Watch().start()
    try:
        with honest.CpuLoad(args.cpu_load) as burner:
            honest.doing(f"namespaces: a switch, the services host, {args.workers} worker hosts")
            topology.up()
            topology.enter_services()
            results = measure(args, topology, base, burner.pids)
        status = honest.exit_status(r.verdict for r in results)
    except Stopped as exc:
        print(f"stopped by {exc}: tearing down", file=sys.stderr)
        return 128 + signal.SIGTERM
    except Exception as exc:  # reported as a result, never as silence
        traceback.print_exc()
        results = [failed_result(args, f"{type(exc).__name__}: {exc}", watch.stop())]
        status = honest.EXIT_MISSED
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        topology.down()
        shutil.rmtree(base, ignore_errors=True)
        left = [n for n in namespaces() if n.startswith(topology.tag + "-")]
        print(f"torn down: namespaces of {topology.tag} left: {left or 'none'}", flush=True)
    honest.results_append(args.results, results)
    return status


if __name__ == "__main__":
    sys.exit(main())
