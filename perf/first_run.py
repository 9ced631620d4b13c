"""A new user's first `make run`: from the command to the login page, on a fresh copy of the tree.

    python perf/first_run.py [--repeat 5] [--port 8130] [--check-model] [--competing-load N]
                             [--results FILE] [--max-spread 0.15] [--max-others 0.25]

Each run copies the checkout's files (tracked and new, as `git ls-files` lists them: no .venv, no
.data, nothing ignored) to a temporary folder, runs `make run` there in the background in its
own process group, with PORT set and without DATABASE_URL / REDIS_URL / DEBUG / SECRET_KEY (so
it creates its venv and starts its own embedded PostgreSQL and Redis, as on a fresh clone), and
polls the login page every 0.2 s until it answers 200. The time printed is from starting `make
run` to that answer; rundev's own "Ready in N s" (which leaves out making the venv) is printed
beside it. With --check-model it then waits for the local model and checks that its server
answers /v1/models on its own port while the web server still answers on PORT (`PORT=8001 make
run` used to give the model the web port).

Then `make run` is stopped with SIGTERM to its process group (rundev stops its children, which
lead their own groups, and the servers it started), the script waits until the group is empty,
checks that nothing it started still answers, and deletes the folder. The package caches (uv's,
the local model's wheel in ~/.cache/toolevals/wheels/) are left warm on purpose: the figure is
for a machine that has installed the project once.

With --competing-load N (the same as --cpu-load, perf/honest.py's competing load, as in
perf/annotate_load.py) the runs are made twice: first as they are (the baseline), then while N
processes each keep one core busy. Printed: each run, and a RESULT line with the loaded median,
the baseline median, their ratio and the target, a login page within TARGET_SECONDS (60 s) with
the competing load, judged by perf/honest.py's rule (a baseline whose repeats spread, or other
processes taking cores meanwhile, make it "disturbed", never a pass). The processes counted as
ours are this script's tree and the embedded PostgreSQL and Redis each run starts (they leave
the tree: their pidfiles name them).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from config import rundev  # noqa: E402
from perf import honest  # noqa: E402

LOGIN = "/accounts/login/"
UP_TIMEOUT = 300.0
MODEL_TIMEOUT = 300.0
# rundev's own worst case (its children, then PostgreSQL's and Redis's stops), and make's exit.
STOP_TIMEOUT = rundev.STOP_BUDGET + 15.0
# The target: the login page within 60 s of `make run` while one other process keeps a
# core busy (fresh clone, warm package caches, this 2-core machine).
TARGET_SECONDS = 60.0
# The variables a developer's shell may carry that a new user's does not.
DROPPED = ("DATABASE_URL", "REDIS_URL", "DEBUG", "SECRET_KEY", "VIRTUAL_ENV", "DEVSTACK_DATA_DIR")


@dataclass
class Result:
    seconds: float
    ready_line: float | None
    model_port: int | None = None
    load: honest.Load | None = None


def fresh_tree() -> Path:
    """A copy of the files a clone of this tree would have."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    # Under /tmp with its mode opened to o+x by devstack: the unprivileged postgres user (as
    # root) must traverse it.
    target = Path(tempfile.mkdtemp(prefix="first-run-"))
    for raw in listed:
        if not raw:
            continue
        name = raw.decode()
        source = ROOT / name
        if not source.is_file():
            continue  # deleted in the work tree but still in the index
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, destination)
    return target


def new_user_env(port: int) -> dict[str, str]:
    venv_bin = str(ROOT / ".venv" / "bin")
    env = {k: v for k, v in os.environ.items() if k not in DROPPED}
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if p and p != venv_bin
    )
    env["PORT"] = str(port)
    return env


def status(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 - loopback
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except OSError:
        return None


def port_answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to make's process group (make and rundev), then wait until it is empty: rundev
    leaves only after stopping its children and the servers it started."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT
    proc.wait(timeout=STOP_TIMEOUT)
    while group_alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if group_alive(proc.pid):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        raise RuntimeError(f"make run did not stop within {STOP_TIMEOUT:.0f} s (killed)")


class Watch:
    """honest.Watch for one `make run`: ours are this script's process tree (make, rundev, the
    web server, the worker, the local model) and the embedded PostgreSQL and Redis the run
    starts, which daemonize out of that tree; their whole CPU counts, as they start after it."""

    def __init__(self, tree: Path, burner: Sequence[int]) -> None:
        self.tree = tree
        self.inner = honest.Watch(burner=burner)

    def start(self) -> Watch:
        self.inner.start()
        return self

    def servers(self) -> list[int]:
        data = self.tree / ".data"
        pids = []
        for pidfile in (data / "postgres" / "postmaster.pid", data / "redis" / "redis.pid"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                pids.append(int(pidfile.read_text().split()[0]))
        return pids

    def stop(self) -> honest.Load:
        load = self.inner.stop()
        load.ours += sum(honest.process_cpu(pid) for pid in self.servers())
        return load


def one_run(port: int, check_model: bool, log_dir: Path, burner: Sequence[int] = ()) -> Result:
    if port_answers(port):
        raise RuntimeError(f"port {port} is in use already; choose another with --port")
    tree = fresh_tree()
    log_path = log_dir / f"make-run-{int(time.time())}.log"
    ports: dict[str, int] = {}
    try:
        with open(log_path, "wb") as log:
            watch = Watch(tree, burner).start()
            started = time.monotonic()
            proc = subprocess.Popen(
                ["make", "run"],
                cwd=tree,
                env=new_user_env(port),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            url = f"http://127.0.0.1:{port}{LOGIN}"
            while status(url) != 200:
                if proc.poll() is not None:
                    raise RuntimeError(f"make run exited with {proc.returncode}; see {log_path}")
                if time.monotonic() - started > UP_TIMEOUT:
                    raise RuntimeError(f"no login page within {UP_TIMEOUT:.0f}s; see {log_path}")
                time.sleep(0.2)
            seconds = time.monotonic() - started
            load = watch.stop()
            model_port = None
            if check_model:
                model_port = wait_for_model(tree, port, proc, log_path)
            # rundev prints its line after the page answered: give it a moment.
            ready = None
            deadline = time.monotonic() + 10
            while ready is None and time.monotonic() < deadline:
                found = re.search(rb"Ready in ([0-9.]+)s", log_path.read_bytes())
                ready = float(found[1]) if found else None
                if ready is None:
                    time.sleep(0.1)
            ports = json.loads((tree / ".data" / "devstack.json").read_text())
        finally:
            stop(proc)
        left = [name for name, number in ports.items() if port_answers(number)]
        if port_answers(port):
            left.append("web")
        if left:
            raise RuntimeError(f"still answering after make run stopped: {left}; see {log_path}")
        return Result(seconds, ready, model_port, load)
    finally:
        shutil.rmtree(tree, ignore_errors=True)


def wait_for_model(tree: Path, port: int, proc: subprocess.Popen[bytes], log_path: Path) -> int:
    """The local model's port, once its server answers /v1/models there; the web server must
    still answer on `port` and must not be the one answering /v1/models."""
    deadline = time.monotonic() + MODEL_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"make run exited with {proc.returncode}; see {log_path}")
        with contextlib.suppress(OSError, ValueError, KeyError):
            model_port = int(
                json.loads((tree / ".data" / "devstack.json").read_text())["local_model_port"]
            )
            if model_port != port and status(f"http://127.0.0.1:{model_port}/v1/models") == 200:
                if status(f"http://127.0.0.1:{port}{LOGIN}") != 200:
                    raise RuntimeError(f"the web server stopped answering on {port}")
                if status(f"http://127.0.0.1:{port}/v1/models") == 200:
                    raise RuntimeError(f"the model answers on the web port {port}")
                return model_port
        time.sleep(0.5)
    raise RuntimeError(f"the local model did not answer within {MODEL_TIMEOUT:.0f}s; {log_path}")


def series(args: argparse.Namespace, label: str, burner: Sequence[int] = ()) -> list[Result]:
    """`--repeat` runs, each printed; RuntimeError from the first that fails."""
    results = []
    for number in range(1, args.repeat + 1):
        try:
            result = one_run(args.port, args.check_model, args.logs, burner)
        except RuntimeError as exc:
            raise RuntimeError(f"{label}run {number}: {exc}") from None
        results.append(result)
        ready = f"{result.ready_line:.1f} s" if result.ready_line is not None else "not printed"
        model = f", local model on port {result.model_port}" if result.model_port else ""
        print(
            f"{label}run {number}: login page after {result.seconds:.1f} s "
            f"(rundev: Ready in {ready}){model}",
            flush=True,
        )
    seconds = [r.seconds for r in results]
    print(
        f"{label}median {statistics.median(seconds):.1f} s over {len(seconds)} runs "
        f"(min {min(seconds):.1f} s, max {max(seconds):.1f} s)",
        flush=True,
    )
    return results


def loaded_result(
    args: argparse.Namespace, baseline: list[Result], loaded: list[Result]
) -> honest.Result:
    """The target's row: the loaded median against the baseline's, judged by honest's rule."""
    base = [r.seconds for r in baseline]
    under = [r.seconds for r in loaded]
    value, reference = statistics.median(under), statistics.median(base)
    load = honest.merge([r.load for r in loaded if r.load is not None])
    reasons = honest.disturbed(
        base, load.others, max_spread=args.max_spread, max_others=args.max_others
    )
    return honest.Result(
        script="first_run.py",
        measured=f"login page after make run (fresh copy, warm caches, "
        f"{args.cpu_load:g} core(s) held busy)",
        value=f"{value:.1f} s (median of {len(under)})",
        baseline=f"{reference:.1f} s without the competing load (median of {len(base)})",
        ratio=f"{value / reference:.2f}x",
        target=f"<= {TARGET_SECONDS:g} s",
        verdict=honest.verdict(value <= TARGET_SECONDS, reasons),
        load=load.text(),
        command=honest.command_line(),
        notes=reasons,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--port", type=int, default=8130)
    parser.add_argument(
        "--check-model",
        action="store_true",
        help="also wait for the local model and check it has its own port",
    )
    parser.add_argument("--logs", type=Path, default=ROOT / "perf" / "out")
    honest.add_arguments(parser, time_limit=900)
    parser.add_argument(
        "--competing-load",
        dest="cpu_load",
        type=float,
        default=argparse.SUPPRESS,
        metavar="N",
        help="the same as --cpu-load: runs without, then with N busy processes, and the ratio",
    )
    args = parser.parse_args()
    return honest.within_time_limit(args, "first_run.py", lambda: measure_all(args))


def measure_all(args: argparse.Namespace) -> int:
    args.logs.mkdir(parents=True, exist_ok=True)
    try:
        baseline = series(args, "")
        if not args.cpu_load:
            return 0
        with honest.CpuLoad(args.cpu_load) as burner:
            print(f"competing load: {len(burner.pids)} busy process(es)", flush=True)
            loaded = series(args, "loaded ", burner.pids)
    except RuntimeError as exc:
        print(exc, file=sys.stderr, flush=True)
        return 1
    result = loaded_result(args, baseline, loaded)
    result.print()
    honest.results_append(args.results, [result])
    return honest.exit_status([result.verdict])


if __name__ == "__main__":
    sys.exit(main())
