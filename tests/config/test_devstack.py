"""The embedded dev stack: started once, found again quickly, stopped by whoever started it.

Each test uses its own data dir (DEVSTACK_DATA_DIR), never the checkout's .data/."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from config import devstack

ROOT = Path(__file__).resolve().parents[2]
# Real servers: initdb and two PostgreSQL starts take a few seconds.
pytestmark = pytest.mark.slow


@pytest.fixture
def data_dir() -> Iterator[Path]:
    # mkdtemp under /tmp, not tmp_path: pytest's base temp dir is 0700, and the unprivileged
    # postgres user must traverse every folder above PGDATA.
    path = Path(tempfile.mkdtemp(prefix="devstack-test-"))
    yield path
    subprocess.run(
        [sys.executable, "-m", "config.devstack", "down"],
        env=_env(path),
        cwd=ROOT,
        capture_output=True,
        check=False,
        timeout=60,
    )
    shutil.rmtree(path, ignore_errors=True)


def _env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env["DEVSTACK_DATA_DIR"] = str(data_dir)
    return env


def _devstack(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "config.devstack", *args],
        env=_env(data_dir),
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def _status_in(data_dir: Path) -> dict[str, dict[str, object]]:
    done = _devstack(data_dir, "status")
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(": ", 1) for line in done.stdout.splitlines() if ": " in line)
    return {
        name: {"running": lines[name].startswith("running"), "line": lines[name]}
        for name in ("postgres", "redis")
    }


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_up_then_ensure_env_reuses_the_running_servers_quickly(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given: `up` in another process (keep=True: the servers outlive it)
    up = _devstack(data_dir, "up")
    assert up.returncode == 0, up.stderr
    urls = dict(line.split("=", 1) for line in up.stdout.split())
    assert urls["DATABASE_URL"].startswith("postgres://postgres@127.0.0.1:")
    assert urls["DATABASE_URL"].endswith("/toolevals")
    assert urls["REDIS_URL"].startswith("redis://127.0.0.1:")
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv("DEVSTACK_DATA_DIR", str(data_dir))
    before = devstack.status()
    assert before["postgres"]["running"] and before["redis"]["running"]
    # This pytest process may itself have started the checkout's stack (no URLs given).
    started_before = devstack.started_here(include_kept=True)

    # when: this process asks for the stack
    started = time.monotonic()
    found = devstack.ensure_env()
    elapsed = time.monotonic() - started

    # then: the same servers, found (not started) well under a second
    assert found == urls
    assert os.environ["DATABASE_URL"] == urls["DATABASE_URL"]
    assert devstack.started_here(include_kept=True) == started_before
    assert devstack.status() == before
    assert elapsed < 0.5, f"warm ensure_env took {elapsed:.2f}s"

    # and `down` stops both
    down = _devstack(data_dir, "down")
    assert down.stdout.strip() == "stopped: postgres, redis"
    pids = [int(before[name]["pid"]) for name in ("postgres", "redis")]  # type: ignore[arg-type]
    deadline = time.monotonic() + 10
    while any(_pid_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_pid_alive(pid) for pid in pids)
    assert not any(info["running"] for info in _status_in(data_dir).values())


def test_a_process_that_started_the_stack_stops_it_at_exit(data_dir: Path) -> None:
    # Importing the config package starts the stack (keep=False) when the URLs are unset.
    script = (
        "import json, os\n"
        "from config import devstack\n"
        "print(json.dumps({'status': devstack.status(), 'started': devstack.started_here(),"
        " 'url': os.environ['DATABASE_URL']}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=_env(data_dir),
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert sorted(report["started"]) == ["postgres", "redis"]
    assert report["status"]["postgres"]["url"] == report["url"]
    pids = [report["status"][name]["pid"] for name in ("postgres", "redis")]
    deadline = time.monotonic() + 10
    while any(_pid_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_pid_alive(pid) for pid in pids)


def test_two_processes_starting_at_once_share_one_server(data_dir: Path) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "config.devstack", "up"],
            env=_env(data_dir),
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [proc.communicate(timeout=120) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], outputs
    assert outputs[0][0] == outputs[1][0]
    status = _status_in(data_dir)
    assert status["postgres"]["running"] and status["redis"]["running"]


def _up_urls(data_dir: Path) -> dict[str, str]:
    up = _devstack(data_dir, "up")
    assert up.returncode == 0, up.stderr
    return dict(line.split("=", 1) for line in up.stdout.split())


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/", 1)[0])


def test_a_restarted_redis_comes_back_on_its_remembered_port(data_dir: Path) -> None:
    # given the stack up, with a client (a web server or worker) connected to Redis
    before = _up_urls(data_dir)
    port = _port(before["REDIS_URL"])
    client = socket.create_connection(("127.0.0.1", port))
    client.sendall(b"PING\r\n")
    assert client.recv(64).startswith(b"+PONG")
    # when Redis is stopped (its connections closed by the server: the port lingers in
    # TIME_WAIT) and `up` brings it back
    pid = int((data_dir / "redis" / "redis.pid").read_text())
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while _pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    client.close()
    after = _up_urls(data_dir)
    # then on the same port, where the running clients reconnect
    assert after == before
    assert json.loads((data_dir / "devstack.json").read_text())["redis_port"] == port


@pytest.mark.parametrize(
    ("service", "key"), [("redis", "redis_port"), ("postgres", "postgres_port")]
)
def test_up_refuses_to_move_when_the_remembered_port_is_taken(
    data_dir: Path, service: str, key: str
) -> None:
    # given ports remembered from an earlier `up`, and the stack down
    urls = _up_urls(data_dir)
    assert _devstack(data_dir, "down").returncode == 0
    port = json.loads((data_dir / "devstack.json").read_text())[key]
    # when another program listens on the service's port
    with socket.socket() as squatter:
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind(("127.0.0.1", port))
        squatter.listen()
        up = _devstack(data_dir, "up")
    # then `up` fails, naming the service and the port, and remembers the port still
    assert up.returncode == 1
    assert f"{service}" in up.stderr and f"port {port}" in up.stderr
    assert "in use" in up.stderr
    assert json.loads((data_dir / "devstack.json").read_text())[key] == port
    assert not _status_in(data_dir)[service]["running"]
    # and once the port is free again, the same URLs come back
    assert _up_urls(data_dir) == urls


def test_env_starts_nothing_and_says_what_is_not_running(data_dir: Path) -> None:
    # given nothing running
    # when
    env = _devstack(data_dir, "env")
    # then no server was started, nothing is exported, and it says so
    assert env.returncode == 1
    assert env.stdout == ""
    assert "postgres is not running" in env.stderr and "redis is not running" in env.stderr
    assert not any(info["running"] for info in _status_in(data_dir).values())
    # given the stack up, `env` exports the running servers' URLs
    urls = _up_urls(data_dir)
    env = _devstack(data_dir, "env")
    assert env.returncode == 0, env.stderr
    assert env.stdout.splitlines() == [f"export {name}={url}" for name, url in urls.items()]


def test_up_says_what_it_started_and_what_it_found(data_dir: Path) -> None:
    first = _devstack(data_dir, "up")
    assert first.returncode == 0, first.stderr
    assert "postgres started at postgres://" in first.stderr
    assert "redis started at redis://" in first.stderr
    again = _devstack(data_dir, "up")
    assert again.stdout == first.stdout
    assert "already running" in again.stderr and "started" not in again.stderr


def _psql(port: int, sql: str) -> list[str]:
    done = subprocess.run(
        [
            *(str(devstack._pg_bin() / "psql"), "-h", "127.0.0.1", "-p", str(port)),
            *("-U", "postgres", "-d", "toolevals", "-XqtA", "-c", sql),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_a_cluster_made_with_the_c_locale_is_refused_and_the_message_says_how_to_recreate_it(
    data_dir: Path,
) -> None:
    # given a cluster as the embedded stack used to create it (the C locale), with data in it
    pgdata = data_dir / "postgres"
    run_as = devstack._pg_run_as()
    pgdata.mkdir(mode=0o700)
    if run_as.uid is not None:
        os.chown(pgdata, run_as.uid, run_as.gid or 0)
    devstack._make_reachable(pgdata, run_as)
    devstack._pg_init(pgdata, run_as, ("--encoding=UTF8", "--locale=C"))

    # when the stack starts on it
    up = _devstack(data_dir, "up")

    # then it stops, saying why and how to recreate the cluster, and that this deletes the data
    assert up.returncode == 1
    message = up.stderr
    assert f"the embedded PostgreSQL in {pgdata} was created with the C locale" in message
    assert "upper('é') is 'é'" in message and "DELETES the embedded database" in message
    assert f"    make stack-down && rm -rf {pgdata}\n" in message
    port = json.loads((data_dir / "devstack.json").read_text())["postgres_port"]
    _psql(port, "CREATE TABLE names (name text); INSERT INTO names VALUES ('Café'), ('北京')")
    assert _psql(port, "SELECT upper(name) FROM names WHERE name ILIKE 'CAFÉ'") == []

    # when its commands to keep the data are followed (`make stack-X` is `python -m
    # config.devstack X` in this checkout's Makefile), in the test's folder
    commands = [line.strip() for line in message.splitlines() if line.startswith("    ")]
    assert len(commands) == 5
    for command in commands[1:]:
        done = subprocess.run(
            [
                "/bin/sh",
                "-c",
                command.replace("make stack-", f"{sys.executable} -m config.devstack "),
            ],
            env={**_env(data_dir), "PYTHONPATH": str(ROOT)},
            cwd=data_dir,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        # the first `up` still stops with the message: it leaves the old server running
        assert done.returncode == (1 if command == "make stack-up" else 0), (command, done)

    # then the new cluster has the data, its locale folds case beyond ASCII, and it is accepted
    assert _psql(port, "SELECT upper(name) FROM names WHERE name ILIKE 'CAFÉ'") == ["CAFÉ"]
    assert _psql(port, "SELECT upper('é'), lower('Ä'), '北京' ILIKE '%京'") == ["É|ä|t"]
    assert _psql(port, "SELECT datlocale FROM pg_database WHERE datname = 'toolevals'") == [
        "C.UTF-8"
    ]
    assert _devstack(data_dir, "up").returncode == 0
