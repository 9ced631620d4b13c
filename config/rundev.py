"""`make run`: the whole platform on this machine, in one command.

    python -m config.rundev

Starts the embedded PostgreSQL and Redis when DATABASE_URL / REDIS_URL are unset, migrates,
seeds the demo accounts and benchmarks (one Django process for the three steps), then runs the web
server and, once the login page answers, a Celery worker, as child processes (DEBUG on and a
development SECRET_KEY in their environment only). Prints the URL and the demo logins once the
login page answers. Ctrl-C or SIGTERM stops the children and the
servers this command started (servers found running are left alone). If a child dies, everything
is stopped and the exit status is non-zero.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import traceback
import urllib.error
import urllib.request
from pathlib import Path
from types import FrameType

from config import devstack, localmodel

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
QUEUES = "default,inference,judging,reports"
READY_TIMEOUT = 90.0
# The page that must answer 200 before the URL is printed.
READY_PATH = "/accounts/login/"
# How long the children (web, worker, local model) have after SIGTERM before SIGKILL.
CHILD_STOP_TIMEOUT = 15.0
# The longest a stop can take: the children, then the embedded servers one after the other.
STOP_BUDGET = CHILD_STOP_TIMEOUT + devstack.PG_STOP_WAIT + devstack.REDIS_STOP_TIMEOUT


class Stop(Exception):
    """A signal asked us to stop."""


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["DEBUG"] = "1"
    # Only for these children: settings accept the public dev key when DEBUG is on.
    env.setdefault("SECRET_KEY", "dev-insecure-key-never-use-in-production")
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def prepare() -> int:
    """migrate, seed_demo and seed_demo_studio in this one process (each `manage.py` process
    spends seconds starting Django on a 2-core machine; a first `make run` waits for them).
    A failing migrate raises (a traceback, exit status 1: make run stops); a failing seed is
    reported and the platform starts anyway."""
    # Here, not at the top: only the `--prepare` child loads Django; the supervising process
    # that starts the servers does not.
    import django
    from django.core.management import call_command

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    call_command("migrate", interactive=False, verbosity=0)
    for command in ("seed_demo", "seed_demo_studio"):
        try:
            call_command(command)
        except Exception:
            # The platform is still usable without the demo data; say so loudly and go on.
            traceback.print_exc()
            print(f"rundev: {command} reported errors (above); continuing", file=sys.stderr)
            break  # seed_demo_studio needs what seed_demo makes
    sys.stdout.flush()
    return 0


def demo_logins(seed_output: str) -> list[str]:
    """seed_demo's indented account lines, which follow its "Demo logins" line."""
    lines = seed_output.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("Demo logins")), None)
    if start is None:
        return []
    logins = []
    for line in lines[start + 1 :]:
        if not line.startswith("  "):
            break
        logins.append(line)
    return logins


def _wait_ready(url: str, children: dict[str, subprocess.Popen[bytes]]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        for name, child in children.items():
            if child.poll() is not None:
                raise RuntimeError(f"{name} exited with status {child.returncode} while starting")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 - our own URL
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer 200 within {READY_TIMEOUT:.0f}s")


def _stop_children(children: dict[str, subprocess.Popen[bytes]]) -> None:
    for child in children.values():
        if child.poll() is None:
            # Each child leads its own process group: this reaches Celery's pool processes too.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGTERM)
    deadline = time.monotonic() + CHILD_STOP_TIMEOUT
    for child in children.values():
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            child.wait()


_stopping = False


def _on_signal(signum: int, frame: FrameType | None) -> None:
    # Once only: Ctrl-C or a SIGTERM to the process group reaches this process twice (directly,
    # and forwarded by make); a second Stop raised inside the cleanup below killed it halfway,
    # leaving the web server and the embedded servers running.
    global _stopping
    if _stopping:
        return
    _stopping = True
    raise Stop(signal.Signals(signum).name)


def main() -> int:
    started_at = time.monotonic()
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    children: dict[str, subprocess.Popen[bytes]] = {}
    optional: dict[str, subprocess.Popen[bytes]] = {}
    started: list[str] = []
    code = 0
    try:
        urls = devstack.ensure_env(keep=True)
        # keep=True: we stop these ourselves below (only those this call started), after the
        # children, which still use them.
        started = devstack.started_here(include_kept=True)
        print(f"database: {urls['DATABASE_URL']}\nbroker:   {urls['REDIS_URL']}", flush=True)
        prepared = subprocess.run(
            [PYTHON, "-m", "config.rundev", "--prepare"],
            cwd=ROOT,
            env=_child_env(),
            stdout=subprocess.PIPE,
            text=True,
        )
        print(prepared.stdout, end="", flush=True)
        if prepared.returncode != 0:
            print("rundev: preparing the database failed (see above)", file=sys.stderr)
            return 1
        # seed_demo owns the demo accounts; repeat its login lines at the end.
        logins = demo_logins(prepared.stdout)

        port = os.environ.get("PORT", "8000")
        env = _child_env()
        children["web"] = subprocess.Popen(
            # migrate has just run the system checks.
            [PYTHON, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload", "--skip-checks"],
            cwd=ROOT,
            env=env,
            process_group=0,
        )
        base = f"http://127.0.0.1:{port}"
        _wait_ready(f"{base}{READY_PATH}", children)
        # The worker once the page answers: on two cores its start (seconds of imports) would
        # only slow the web server's; tasks queued meanwhile wait for it in Redis.
        children["worker"] = subprocess.Popen(
            [
                PYTHON,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "-Q",
                QUEUES,
                "--concurrency",
                "2",
                "-l",
                "info",
                # Embedded beat: the periodic sweep of lost background work (config.background).
                "-B",
                "--schedule",
                str(devstack.data_dir() / "celerybeat-schedule"),
            ],
            cwd=ROOT,
            env=env,
            process_group=0,
        )
        # The local model last and on the side: its first start builds llama.cpp (minutes), and
        # the platform is usable meanwhile; the admin shows it building / starting / ready. At
        # the lowest CPU and I/O priority (the build's compilers inherit it): on two cores the
        # build must not starve the web app, the worker or the user's other work.
        if os.environ.get("LOCAL_MODEL", "on").lower() not in {"0", "off", "false", "no"}:
            optional["local model"] = subprocess.Popen(
                localmodel.low_priority([PYTHON, "manage.py", "serve_local_model"]),
                cwd=ROOT,
                env=env,
                process_group=0,
            )
        model_note = (
            "The local models (Gemma 3 270M for text mode, SmolLM2 135M for native tool calls; "
            "for trying things offline) start in the background at the lowest priority (the "
            "first build takes minutes); the Endpoints page shows when they are ready, and "
            "launch_run waits for them.\n"
            if optional
            else "The local model is off (LOCAL_MODEL=off).\n"
        )
        print(
            f"\nReady in {time.monotonic() - started_at:.1f}s: {base}/\n"
            f"Demo logins:\n"
            + "\n".join(logins)
            + "\n"
            + model_note
            + "Ctrl-C stops everything.\n",
            flush=True,
        )
        while True:
            for name, child in children.items():
                if child.poll() is not None:
                    print(
                        f"rundev: {name} exited with status {child.returncode}; stopping",
                        file=sys.stderr,
                        flush=True,
                    )
                    return 1
            for name, child in list(optional.items()):
                if child.poll() is not None:
                    print(
                        f"rundev: the {name} exited with status {child.returncode} (see above); "
                        "the platform goes on without it",
                        file=sys.stderr,
                        flush=True,
                    )
                    del optional[name]
            time.sleep(0.5)
    except Stop as stop:
        print(f"\nrundev: {stop}, stopping", flush=True)
    except (RuntimeError, devstack.DevStackError) as exc:
        print(f"rundev: {exc}", file=sys.stderr, flush=True)
        code = 1
    finally:
        # A second Ctrl-C while stopping must not leave servers behind.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        _stop_children({**children, **optional})
        if started:
            devstack.stop(only=started)
            print(f"rundev: stopped {', '.join(started)}", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(prepare() if sys.argv[1:] == ["--prepare"] else main())
