"""perf/scale_out.py's hosts are network namespaces it makes itself: they reach each other and
nothing else, a cut link stops a host's traffic, and whatever happens (the end, an error, SIGTERM,
an earlier run killed outright) no namespace, interface or process of theirs is left behind. The
short settings of `make perf` run to a result. Needs root and `ip netns` (this machine and CI
have both); skipped with the reason otherwise."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from perf import honest, scale_out

ROOT = Path(__file__).resolve().parents[2]
WHY = scale_out.unusable() or (
    "" if (scale_out.PG_BIN / "postgres").exists() else f"no PostgreSQL 15 at {scale_out.PG_BIN}"
)
pytestmark = pytest.mark.skipif(bool(WHY), reason=WHY or "usable")

# Runs within a second when the link is up; a cut link leaves the connection hanging.
CONNECT = (
    "import socket, sys\n"
    "try:\n"
    "    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=2).close()\n"
    "    print('connected')\n"
    "except OSError as exc:\n"
    "    print('failed', type(exc).__name__)\n"
)
LISTEN = (
    "import socket, sys, time\n"
    "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
    "s.bind((sys.argv[1], 5999)); s.listen(8); print('listening', flush=True)\n"
    "while True:\n"
    "    c, _ = s.accept(); c.close()\n"
)


def machine_links() -> set[str]:
    """The interface names of the machine's own namespace."""
    out = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=True).stdout
    return {line.split(":")[1].strip().split("@")[0] for line in out.splitlines()}


def left_behind(tag: str) -> list[str]:
    return [name for name in scale_out.namespaces() if name.startswith(tag + "-")]


def connect(namespace: str, address: str) -> str:
    done = subprocess.run(
        ["ip", "netns", "exec", namespace, sys.executable, "-c", CONNECT, address, "5999"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    return done.stdout.strip()


def test_the_hosts_reach_each_other_only_and_leave_nothing_behind() -> None:
    before = machine_links()
    topology = scale_out.Topology(2)
    listener = None
    try:
        topology.up()
        assert set(left_behind(topology.tag)) == {
            topology.switch,
            topology.services,
            *topology.workers,
        }
        address = scale_out.SERVICES_ADDRESS
        listener = subprocess.Popen(
            ["ip", "netns", "exec", topology.services, sys.executable, "-c", LISTEN, address],
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        assert listener.stdout is not None and listener.stdout.readline().strip() == "listening"
        # a worker host reaches the services host; the machine's namespace has no way in
        assert connect(topology.workers[0], scale_out.SERVICES_ADDRESS) == "connected"
        assert machine_links() == before
        # the worker host's link cut: its traffic goes nowhere, the other host's still flows
        topology.cut(1)
        assert connect(topology.workers[0], scale_out.SERVICES_ADDRESS).startswith("failed")
        assert connect(topology.workers[1], scale_out.SERVICES_ADDRESS) == "connected"
        # a lost host: its processes killed with its namespace
        sleeper = subprocess.Popen(
            ["ip", "netns", "exec", topology.workers[0], "sleep", "300"], start_new_session=True
        )
        time.sleep(0.3)
        topology.lose(1)
        assert sleeper.wait(timeout=10) == -signal.SIGKILL
        assert topology.workers[0] not in scale_out.namespaces()
    finally:
        topology.down()
    # the listener in the services host went with it
    assert listener is not None and listener.wait(timeout=10) == -signal.SIGKILL
    assert left_behind(topology.tag) == []
    assert machine_links() == before


def test_namespaces_of_a_run_killed_outright_are_swept() -> None:
    # a pid that is no process (pid_max is at most 2**22)
    dead = f"{scale_out.PREFIX}-{2**22 + 7}"
    subprocess.run(["ip", "netns", "add", f"{dead}-sw"], check=True)
    sleeper = subprocess.Popen(
        ["ip", "netns", "exec", f"{dead}-sw", "sleep", "300"], start_new_session=True
    )
    time.sleep(0.3)
    try:
        assert f"{dead}-sw" in scale_out.sweep_stale()
        assert sleeper.wait(timeout=10) == -signal.SIGKILL
    finally:
        scale_out.remove_namespace(f"{dead}-sw")
    assert left_behind(dead) == []


def script(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "perf/scale_out.py", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def tag_of(output: str) -> str:
    match = re.search(r"torn down: namespaces of (\S+) left: none", output)
    assert match, output[-3000:]
    return match.group(1)


def processes_in(tag: str) -> list[int]:
    """Processes whose network namespace is one of the tag's (none: the namespaces are gone,
    and with them every process the script started inside)."""
    found = []
    for name in left_behind(tag):
        found += [int(p) for p in scale_out.ip("netns", "pids", name, check=False).split()]
    return found


@pytest.mark.timeout(300)
def test_sigterm_mid_run_tears_everything_down() -> None:
    before = machine_links()
    proc = script("--workers", "2", "--items", "60", "--judge-samples", "10", "--latency-ms", "50")
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if "1 worker host: the run" in line:  # services and a worker up, measuring
            break
    proc.send_signal(signal.SIGTERM)
    output = "".join(seen) + proc.stdout.read()
    assert proc.wait(timeout=120) == 128 + signal.SIGTERM, output[-3000:]
    tag = tag_of(output)
    assert left_behind(tag) == [] and processes_in(tag) == []
    assert machine_links() == before
    # no process of the script's is left: PostgreSQL, Redis, beat, the endpoint, the workers
    children = honest.descendants(proc.pid, honest.parents()) - {proc.pid}
    assert children == set()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_short_settings_run_to_a_result(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    proc = script(
        *("--workers", "2", "--items", "120", "--judge-samples", "30", "--latency-ms", "100"),
        *("--lease-seconds", "4", "--recovery-seconds", "2", "--results", str(results)),
    )
    output, _ = proc.communicate(timeout=540)
    assert proc.returncode in (0, 1, 3), output[-3000:]
    found = honest.results_read(results)
    assert [r.measured.split(":")[0] for r in found] == [
        "run",
        "judge job",
        "a worker host lost mid-run (120 items, 2 worker hosts; link cut, then killed) and an "
        "agreement report queued during the run",
    ], output[-3000:]
    for result in found:
        assert "cores busy" in result.load and result.verdict in {
            "pass",
            "MISSED",
            "disturbed",
            "MISSED (disturbed)",
        }
    # the lost worker's items were taken back, none lost, none answered twice
    lost = found[2]
    assert "items taken back" in lost.value and "report done" in lost.value
    assert not [n for n in lost.notes if "not done" in n or "never asked" in n], lost.notes
    tag = tag_of(output)
    assert left_behind(tag) == [] and processes_in(tag) == []


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_time_limit_leaves_a_timeout_result_and_nothing_behind(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    proc = script(
        *("--workers", "2", "--items", "400", "--judge-samples", "20", "--latency-ms", "100"),
        *("--time-limit", "20", "--results", str(results)),
    )
    output, _ = proc.communicate(timeout=200)
    assert proc.returncode == honest.EXIT_MISSED, output[-3000:]
    (result,) = honest.results_read(results)
    assert result.verdict == honest.TIMEOUT and "20 s" in result.target, result
    tag = tag_of(output)
    assert left_behind(tag) == [] and processes_in(tag) == []
